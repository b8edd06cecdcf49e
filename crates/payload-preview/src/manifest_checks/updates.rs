//! `manifest-update-refused`: what the admission webhooks refuse when an object of the previous
//! revision (the one the cluster runs) is updated to the current one. An object of both
//! revisions (same API group, kind, namespace and name) is an update; the rules are those that
//! compare the old object with the new one:
//!
//! - Cluster API v1.14.0 `core/webhooks/admission`: `spec.clusterName` is immutable on a
//!   MachineDeployment (`machinedeployment.go:205-213`), MachineSet (`machineset.go:179-187`),
//!   MachinePool (`machinepool.go:142-148`), Machine (`machine.go:111-115`) and
//!   MachineHealthCheck (`machinehealthcheck.go:123-127`); a Cluster's `infrastructureRef` and
//!   `controlPlaneRef` cannot be removed (`cluster.go:173-201`), nor its `topology`
//!   (`cluster.go:220-227`); a Cluster that had no ClusterClass gets none
//!   (`cluster.go:343-356`, unless annotated
//!   `unsafe.topology.cluster.x-k8s.io/disable-update-class-name-check`); its topology version
//!   never goes down, nor up by two minors when its class lists no Kubernetes versions and has
//!   no upgrade-plan extension (`cluster.go:437-460`, unless annotated
//!   `unsafe.topology.cluster.x-k8s.io/disable-update-version-check`).
//! - CAPRKE2 v0.25.0: `registrationMethod` is immutable once set, on an RKE2ControlPlane
//!   (`controlplane/api/v1beta2/rke2controlplane_webhook.go:142-147`) and an
//!   RKE2ControlPlaneTemplate (`rke2controlplanetemplate_webhook.go:117-126`).
//! - The infrastructure machine templates: `spec.template.spec` is immutable for CAPD's
//!   DockerMachineTemplate (cluster-api v1.14.0
//!   `test/infrastructure/docker/internal/webhooks/dockermachinetemplate.go:65-74`), CAPA's
//!   AWSMachineTemplate (cluster-api-provider-aws 2cf09d78
//!   `webhooks/awsmachinetemplate_webhook.go:271-281`) and CAPZ's AzureMachineTemplate
//!   (cluster-api-provider-azure 69ec3a40 `internal/webhooks/azuremachinetemplate_webhook.go:111-136`).
//!   The providers default the old object before comparing, so only a value set on both sides
//!   that differs is reported (a field one side leaves to its default is not).
//!
//! Objects a ClusterClass expansion made are not compared: the topology controller updates
//! them itself.

use payload_kube_schema::PathSeg;
use rke2_payload::{Check, Finding, terminal_safe};
use serde_json::Value;

use crate::manifests::{Manifests, Object, at};

/// The Cluster annotation that lets a Cluster take a ClusterClass it did not have.
const UNSAFE_CLASS: &str = "unsafe.topology.cluster.x-k8s.io/disable-update-class-name-check";
/// The Cluster annotation that skips the topology version checks.
const UNSAFE_VERSION: &str = "unsafe.topology.cluster.x-k8s.io/disable-update-version-check";

/// The infrastructure machine templates whose `spec.template.spec` is immutable.
const IMMUTABLE_TEMPLATES: &[&str] = &[
    "DockerMachineTemplate",
    "AWSMachineTemplate",
    "AzureMachineTemplate",
];

/// Every update of the previous revision's objects to `current`'s that a webhook refuses,
/// located at the field of the current object. The previous revision is `applied` (manifests,
/// or what `kubectl apply` last applied) and `live` (objects read from a cluster without that
/// record): of a live object only values that change are judged, never a field the current
/// revision leaves out (`kubectl apply` keeps a field it did not set, and a controller may
/// have set it).
pub(crate) fn check(applied: &Manifests, live: &Manifests, current: &Manifests) -> Vec<Finding> {
    let mut out = Vec::new();
    for new in current.objects.iter().filter(|o| o.made_for.is_none()) {
        // An object written twice in one revision is ambiguous (which one is applied last
        // depends on the order of the files): not judged.
        let mut olds = applied
            .objects
            .iter()
            .map(|o| (o, false))
            .chain(live.objects.iter().map(|o| (o, true)))
            .filter(|(o, _)| o.made_for.is_none() && same_object(o, new));
        let (Some((old, is_live)), None) = (olds.next(), olds.next()) else {
            continue;
        };
        // What the current revision leaves out of a live object stays as it is.
        let judged = |path: &[&str]| !(is_live && unset(at(&new.value, path)));
        if current
            .objects
            .iter()
            .filter(|o| o.made_for.is_none() && same_object(o, new))
            .count()
            > 1
        {
            continue;
        }
        let group = group(new);
        match (group, new.kind()) {
            (
                "cluster.x-k8s.io",
                "MachineDeployment" | "MachineSet" | "MachinePool" | "Machine"
                | "MachineHealthCheck",
            ) => {
                let path = ["spec", "clusterName"];
                if judged(&path) {
                    changed(old, new, &path, "it is immutable", &mut out);
                }
            }
            ("cluster.x-k8s.io", "Cluster") => cluster(current, old, new, is_live, &mut out),
            ("controlplane.cluster.x-k8s.io", "RKE2ControlPlane") => {
                let path = ["spec", "registrationMethod"];
                if judged(&path) {
                    once_set(old, new, &path, &mut out);
                }
            }
            ("controlplane.cluster.x-k8s.io", "RKE2ControlPlaneTemplate") => {
                let path = ["spec", "template", "spec", "registrationMethod"];
                if judged(&path) {
                    once_set(old, new, &path, &mut out);
                }
            }
            (g, kind)
                if g.starts_with("infrastructure.") && IMMUTABLE_TEMPLATES.contains(&kind) =>
            {
                template(old, new, &mut out);
            }
            _ => {}
        }
    }
    out
}

/// The API group of an object's `apiVersion`.
fn group(o: &Object) -> &str {
    at(&o.value, &["apiVersion"])
        .and_then(Value::as_str)
        .and_then(|a| a.rsplit_once('/'))
        .map_or("", |(g, _)| g)
}

fn same_object(a: &Object, b: &Object) -> bool {
    a.kind() == b.kind()
        && a.name() == b.name()
        && a.namespace() == b.namespace()
        && group(a) == group(b)
}

fn steps(path: &[&str]) -> Vec<PathSeg> {
    path.iter().map(|k| PathSeg::Key((*k).to_owned())).collect()
}

/// A short, terminal-safe rendering of a scalar value for a message.
fn shown(value: Option<&Value>) -> String {
    match value {
        None | Some(Value::Null) => "nothing".to_owned(),
        Some(Value::String(s)) => format!("\"{}\"", terminal_safe(s)),
        Some(other) => {
            let text = other.to_string();
            let text = if text.len() > 80 {
                format!("{}…", text.chars().take(80).collect::<String>())
            } else {
                text
            };
            terminal_safe(&text).into_owned()
        }
    }
}

fn refused(new: &Object, path: &[&str], what: String, out: &mut Vec<Finding>) {
    out.push(
        Finding::new(
            Check::ManifestUpdateRefused,
            format!(
                "{}: {}: {what}, so the API server refuses this revision as an update of the previous one (kubectl apply fails and the cluster keeps the old revision)",
                new.title(),
                path.join(".")
            ),
        )
        .in_manifest(new.field_site(&steps(path))),
    );
}

/// A value the webhook keeps as it was.
fn changed(old: &Object, new: &Object, path: &[&str], why: &str, out: &mut Vec<Finding>) {
    let (before, after) = (at(&old.value, path), at(&new.value, path));
    if unset(before) && unset(after) || before == after {
        return;
    }
    refused(
        new,
        path,
        format!(
            "changes from {} to {}, but {why}",
            shown(before),
            shown(after)
        ),
        out,
    );
}

/// A value the webhook keeps once it is set (an empty one is not set).
fn once_set(old: &Object, new: &Object, path: &[&str], out: &mut Vec<Finding>) {
    let before = at(&old.value, path);
    if unset(before) {
        return;
    }
    changed(old, new, path, "it is immutable once set", out);
}

/// Null, absent, `""`, `{}` or `[]`: what Go reads as the zero value.
fn unset(value: Option<&Value>) -> bool {
    match value {
        None | Some(Value::Null) => true,
        Some(Value::String(s)) => s.is_empty(),
        Some(Value::Object(m)) => m.is_empty(),
        Some(Value::Array(a)) => a.is_empty(),
        Some(_) => false,
    }
}

/// The Cluster's update rules.
fn cluster(current: &Manifests, old: &Object, new: &Object, live: bool, out: &mut Vec<Finding>) {
    // Left out of the current revision, a field of a live object `kubectl apply` did not set
    // stays: a removal is judged against what was applied only.
    for key in ["infrastructureRef", "controlPlaneRef", "topology"]
        .into_iter()
        .filter(|_| !live)
    {
        let path = ["spec", key];
        if !unset(at(&old.value, &path)) && unset(at(&new.value, &path)) {
            refused(
                new,
                &path,
                "is removed, and it cannot be once set".to_owned(),
                out,
            );
        }
    }
    let annotated = |key: &str| at(&new.value, &["metadata", "annotations", key]).is_some();
    let (old_class, new_class) = (class(old), class(new));
    if new_class.is_some() && old_class.is_none() && !annotated(UNSAFE_CLASS) {
        let path: &[&str] = if at(&new.value, &["spec", "topology", "classRef"]).is_some() {
            &["spec", "topology", "classRef"]
        } else {
            &["spec", "topology", "class"]
        };
        refused(
            new,
            path,
            format!(
                "names ClusterClass {} on a Cluster that had none, and a class cannot be set on an existing Cluster",
                terminal_safe(new_class.unwrap_or_default())
            ),
            out,
        );
    }
    if old_class.is_none() || new_class.is_none() || annotated(UNSAFE_VERSION) {
        return;
    }
    let path = ["spec", "topology", "version"];
    let text = |o: &Object| {
        at(&o.value, &path)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned()
    };
    let (before, after) = (text(old), text(new));
    let (Some(was), Some(is)) = (core_version(&before), core_version(&after)) else {
        return;
    };
    if is < was {
        refused(
            new,
            &path,
            format!(
                "goes down from {} to {}, and a topology version never decreases",
                terminal_safe(&before),
                terminal_safe(&after)
            ),
            out,
        );
        return;
    }
    // The ceiling holds when the class lists no Kubernetes versions and names no upgrade-plan
    // extension (then the chained upgrade takes several minors at once); the class is looked
    // up where the Cluster names it (`GetClassKey`), and without it nothing is said.
    let class_namespace = class_namespace(new);
    let Some(class_object) = new_class.and_then(|name| {
        current.objects.iter().find(|o| {
            o.kind() == "ClusterClass" && o.name() == name && o.namespace() == class_namespace
        })
    }) else {
        return;
    };
    let chained = !unset(at(&class_object.value, &["spec", "kubernetesVersions"]))
        || !unset(at(
            &class_object.value,
            &[
                "spec",
                "upgrade",
                "external",
                "generateUpgradePlanExtension",
            ],
        ));
    if !chained && is >= (was.0, was.1 + 2, 0) {
        refused(
            new,
            &path,
            format!(
                "goes up from {} to {}, two minor versions or more at once (upgrade one minor at a time)",
                terminal_safe(&before),
                terminal_safe(&after)
            ),
            out,
        );
    }
}

/// The ClusterClass a Cluster's topology names (v1beta2 `classRef.name`, v1beta1 `class`).
fn class(o: &Object) -> Option<&str> {
    let topology = at(&o.value, &["spec", "topology"])?;
    at(topology, &["classRef", "name"])
        .or_else(|| at(topology, &["class"]))
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
}

/// The namespace of the ClusterClass a Cluster names: v1beta2 `classRef.namespace`, v1beta1
/// `classNamespace`, else the Cluster's own.
fn class_namespace(o: &Object) -> &str {
    at(&o.value, &["spec", "topology", "classRef", "namespace"])
        .or_else(|| at(&o.value, &["spec", "topology", "classNamespace"]))
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| o.namespace())
}

/// MAJOR.MINOR.PATCH of a version as blang/semver's `ParseTolerant` reads it (a leading `v`,
/// prerelease and build left out: Cluster API compares without prereleases).
fn core_version(v: &str) -> Option<(u64, u64, u64)> {
    let v = v.trim().strip_prefix('v').unwrap_or(v.trim());
    let core = v.split(['-', '+']).next()?;
    let mut parts = core.split('.');
    let major = parts.next()?.parse().ok()?;
    let minor = parts.next().map_or(Some(0), |p| p.parse().ok())?;
    let patch = parts.next().map_or(Some(0), |p| p.parse().ok())?;
    parts.next().is_none().then_some((major, minor, patch))
}

/// The infrastructure template's `spec.template.spec`: each value set on both sides that
/// differs (defaults can fill what one side leaves out; they never change a value set).
fn template(old: &Object, new: &Object, out: &mut Vec<Finding>) {
    let base = ["spec", "template", "spec"];
    let (Some(before), Some(after)) = (at(&old.value, &base), at(&new.value, &base)) else {
        return;
    };
    let mut differ = Vec::new();
    leaves_that_differ(before, after, &mut Vec::new(), &mut differ);
    let Some(first) = differ.first() else {
        return;
    };
    let mut path: Vec<&str> = base.to_vec();
    path.extend(first.iter().map(String::as_str));
    let fields: Vec<String> = differ.iter().map(|p| p.join(".")).collect();
    refused(
        new,
        &path,
        format!(
            "changes ({}), but {}'s spec.template.spec is immutable: create a template under a new name and point the MachineDeployment or control plane at it",
            terminal_safe(&fields.join(", ")),
            new.kind()
        ),
        out,
    );
}

/// The paths (keys; an index as its number) below which both values are set and differ.
fn leaves_that_differ(a: &Value, b: &Value, at: &mut Vec<String>, out: &mut Vec<Vec<String>>) {
    if out.len() >= 8 || unset(Some(a)) || unset(Some(b)) {
        return;
    }
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            for (key, value) in x {
                if let Some(other) = y.get(key) {
                    at.push(key.clone());
                    leaves_that_differ(value, other, at, out);
                    at.pop();
                }
            }
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => {
            for (i, (value, other)) in x.iter().zip(y).enumerate() {
                at.push(i.to_string());
                leaves_that_differ(value, other, at, out);
                at.pop();
            }
        }
        _ if a != b => out.push(at.clone()),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(previous: &str, current: &str) -> Vec<String> {
        check(
            &Manifests::of_text(previous),
            &Manifests::default(),
            &Manifests::of_text(current),
        )
        .into_iter()
        .map(|f| f.message)
        .collect()
    }

    /// As `ids`, the previous revision read from a cluster without `kubectl apply`'s record.
    fn live_ids(previous: &str, current: &str) -> Vec<String> {
        check(
            &Manifests::default(),
            &Manifests::of_text(previous),
            &Manifests::of_text(current),
        )
        .into_iter()
        .map(|f| f.message)
        .collect()
    }

    #[test]
    fn a_live_object_s_changed_values_are_judged_not_what_the_manifest_leaves_out() {
        let moved = MD.replace("clusterName: demo", "clusterName: other");
        assert_eq!(live_ids(MD, &moved).len(), 1);
        let no_name = MD.replace("  clusterName: demo\n", "  replicas: 1\n");
        assert!(live_ids(MD, &no_name).is_empty());
        assert_eq!(ids(MD, &no_name).len(), 1);
        let cluster = "apiVersion: cluster.x-k8s.io/v1beta2\nkind: Cluster\nmetadata: {name: demo, namespace: ns}\nspec:\n  controlPlaneRef: {apiGroup: controlplane.cluster.x-k8s.io, kind: RKE2ControlPlane, name: cp}\n  infrastructureRef: {apiGroup: infrastructure.cluster.x-k8s.io, kind: DockerCluster, name: d}\n";
        let without_infra = "apiVersion: cluster.x-k8s.io/v1beta2\nkind: Cluster\nmetadata: {name: demo, namespace: ns}\nspec:\n  controlPlaneRef: {apiGroup: controlplane.cluster.x-k8s.io, kind: RKE2ControlPlane, name: cp}\n";
        assert_eq!(ids(cluster, without_infra).len(), 1);
        assert!(live_ids(cluster, without_infra).is_empty());
    }

    const MD: &str = "apiVersion: cluster.x-k8s.io/v1beta2
kind: MachineDeployment
metadata: {name: md, namespace: ns}
spec:
  clusterName: demo
";

    #[test]
    fn a_machine_deployment_keeps_its_cluster() {
        assert!(ids(MD, MD).is_empty());
        let moved = ids(MD, &MD.replace("clusterName: demo", "clusterName: other"));
        assert_eq!(moved.len(), 1, "{moved:?}");
        assert!(
            moved[0].contains("spec.clusterName: changes from \"demo\" to \"other\""),
            "{moved:?}"
        );
        // An object written twice in a revision is ambiguous: not judged.
        let twice = format!(
            "{MD}---\n{}",
            MD.replace("clusterName: demo", "clusterName: other")
        );
        assert!(ids(&twice, &twice).is_empty());
        assert!(ids(MD, &twice).is_empty());
        // Another object of the same name is not an update.
        assert!(
            ids(
                MD,
                &MD.replace("name: md", "name: md2").replace("demo", "other")
            )
            .is_empty()
        );
    }

    #[test]
    fn registration_method_is_immutable_once_set() {
        let rcp = |method: &str| {
            format!(
                "apiVersion: controlplane.cluster.x-k8s.io/v1beta2\nkind: RKE2ControlPlane\nmetadata: {{name: cp, namespace: ns}}\nspec:\n  version: v1.32.5+rke2r1\n{method}"
            )
        };
        let set = rcp("  registrationMethod: internal-first\n");
        let other = rcp("  registrationMethod: address\n");
        assert!(ids(&rcp(""), &set).is_empty(), "setting it is allowed");
        assert_eq!(ids(&set, &other).len(), 1);
        assert_eq!(
            ids(&set, &rcp("")).len(),
            1,
            "removing it changes it to \"\""
        );
        assert!(ids(&set, &set).is_empty());
    }

    #[test]
    fn a_cluster_keeps_its_references_class_and_version_steps() {
        let cluster = |topology: &str, annotations: &str| {
            format!(
                "apiVersion: cluster.x-k8s.io/v1beta2\nkind: Cluster\nmetadata: {{name: demo, namespace: ns{annotations}}}\nspec:\n  controlPlaneRef: {{apiGroup: controlplane.cluster.x-k8s.io, kind: RKE2ControlPlane, name: cp}}\n{topology}"
            )
        };
        let topology =
            |v: &str| format!("  topology:\n    classRef: {{name: cc}}\n    version: {v}\n");
        let classic = cluster("", "");
        let v131 = cluster(&topology("v1.31.4+rke2r1"), "");
        assert_eq!(
            ids(&classic, &v131).len(),
            1,
            "a class on an existing Cluster"
        );
        assert!(
            ids(
                &classic,
                &cluster(
                    &topology("v1.31.4"),
                    ", annotations: {unsafe.topology.cluster.x-k8s.io/disable-update-class-name-check: ''}"
                )
            )
            .is_empty()
        );
        assert!(ids(&v131, &cluster(&topology("v1.32.5+rke2r1"), "")).is_empty());
        let down = ids(&v131, &cluster(&topology("v1.30.9+rke2r1"), ""));
        assert!(down.len() == 1 && down[0].contains("goes down"), "{down:?}");
        // The ceiling needs the class: without it in the input, nothing is said.
        assert!(ids(&v131, &cluster(&topology("v1.33.0+rke2r1"), "")).is_empty());
        let class = |namespace: &str, versions: &str| {
            format!(
                "---\napiVersion: cluster.x-k8s.io/v1beta2\nkind: ClusterClass\nmetadata: {{name: cc, namespace: {namespace}}}\nspec:\n{versions}  infrastructure: {{}}\n"
            )
        };
        let skip = ids(
            &v131,
            &format!(
                "{}{}",
                cluster(&topology("v1.33.0+rke2r1"), ""),
                class("ns", "")
            ),
        );
        assert!(skip.len() == 1 && skip[0].contains("two minor"), "{skip:?}");
        // A class that lists its Kubernetes versions takes chained upgrades.
        let chained = class("ns", "  kubernetesVersions: [v1.31.4, v1.32.5, v1.33.0]\n");
        assert!(
            ids(
                &v131,
                &format!("{}{chained}", cluster(&topology("v1.33.0+rke2r1"), ""))
            )
            .is_empty()
        );
        // The class is looked up in the namespace the Cluster names.
        let elsewhere = |v: &str| {
            format!(
                "  topology:\n    classRef: {{name: cc, namespace: classes}}\n    version: {v}\n"
            )
        };
        let skip_elsewhere = class("classes", "");
        let up = ids(
            &cluster(&elsewhere("v1.31.4+rke2r1"), ""),
            &format!(
                "{}{skip_elsewhere}",
                cluster(&elsewhere("v1.33.0+rke2r1"), "")
            ),
        );
        assert_eq!(up.len(), 1, "{up:?}");
        let chained_elsewhere = class(
            "classes",
            "  kubernetesVersions: [v1.31.4, v1.32.5, v1.33.0]\n",
        );
        assert!(
            ids(
                &cluster(&elsewhere("v1.31.4+rke2r1"), ""),
                &format!(
                    "{}{chained_elsewhere}",
                    cluster(&elsewhere("v1.33.0+rke2r1"), "")
                )
            )
            .is_empty()
        );
        // Removing the topology or a reference.
        assert_eq!(ids(&v131, &classic).len(), 1);
        let no_cp = "apiVersion: cluster.x-k8s.io/v1beta2\nkind: Cluster\nmetadata: {name: demo, namespace: ns}\nspec:\n  infrastructureRef: {apiGroup: infrastructure.cluster.x-k8s.io, kind: DockerCluster, name: d}\n";
        assert_eq!(ids(&classic, no_cp).len(), 1);
    }

    #[test]
    fn an_infrastructure_template_s_set_values_do_not_change() {
        let t = |size: &str, extra: &str| {
            format!(
                "apiVersion: infrastructure.cluster.x-k8s.io/v1beta2\nkind: AWSMachineTemplate\nmetadata: {{name: t, namespace: ns}}\nspec:\n  template:\n    spec:\n      instanceType: {size}\n{extra}"
            )
        };
        assert!(ids(&t("m6i.large", ""), &t("m6i.large", "")).is_empty());
        let grown = ids(&t("m6i.large", ""), &t("m6i.xlarge", ""));
        assert!(
            grown.len() == 1 && grown[0].contains("instanceType") && grown[0].contains("immutable"),
            "{grown:?}"
        );
        // A field one side leaves out may be a default: not judged.
        assert!(
            ids(
                &t("m6i.large", ""),
                &t("m6i.large", "      sshKeyName: k\n")
            )
            .is_empty()
        );
        // Another provider's template is not judged.
        assert!(
            ids(
                &t("a", "").replace("AWSMachineTemplate", "FooMachineTemplate"),
                &t("b", "").replace("AWSMachineTemplate", "FooMachineTemplate")
            )
            .is_empty()
        );
    }

    #[test]
    fn versions_are_read_as_parse_tolerant_reads_them() {
        assert_eq!(core_version("v1.32.5+rke2r1"), Some((1, 32, 5)));
        assert_eq!(core_version("1.33.0-rc.1"), Some((1, 33, 0)));
        assert_eq!(core_version("v1.32"), Some((1, 32, 0)));
        assert_eq!(core_version("latest"), None);
    }
}
