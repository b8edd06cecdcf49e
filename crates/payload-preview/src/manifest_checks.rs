//! The manifest checks of the requirements guide: what a template can get wrong that CAPRKE2
//! accepts silently, found on the objects before anything is rendered.

use rke2_payload::{Check, Finding};
use serde_json::Value;

mod classes;
mod semver;
pub(crate) mod updates;
pub(crate) mod webhooks;

pub(crate) use classes::{Classes, classes};

use crate::crds::PathSeg;
use crate::manifests::{
    INFRASTRUCTURE_REFS, Manifests, Object, Ref, at, flag, str_at, string, strings,
};

/// The keys CAPRKE2 removes from additional cloud-config (it writes them itself): the render
/// drops them, the checks say so.
pub(crate) const IGNORED_KEYS: [&str; 3] = ["write_files", "ntp", "runcmd"];

/// Every finding of the manifest checks on `m`.
pub(crate) fn findings(m: &Manifests) -> Vec<Finding> {
    let mut out = Vec::new();
    for rcp in m.of_kind("RKE2ControlPlane") {
        control_plane(m, rcp, &mut out);
        config_spec(m, rcp, rcp.get(&["spec"]), "spec", &mut out);
    }
    for t in m.of_kind("RKE2ControlPlaneTemplate") {
        config_spec(
            m,
            t,
            t.get(&["spec", "template", "spec"]),
            "spec.template.spec",
            &mut out,
        );
    }
    for t in m.of_kind("RKE2ConfigTemplate") {
        config_spec(
            m,
            t,
            t.get(&["spec", "template", "spec"]),
            "spec.template.spec",
            &mut out,
        );
    }
    for c in m.of_kind("RKE2Config") {
        config_spec(m, c, c.get(&["spec"]), "spec", &mut out);
    }
    for c in m.of_kind("Cluster") {
        cluster(m, c, &mut out);
        semantic_version(c, &["spec", "topology", "version"], &mut out);
    }
    for o in m
        .of_kind("MachineDeployment")
        .chain(m.of_kind("MachinePool"))
    {
        semantic_version(o, &["spec", "template", "spec", "version"], &mut out);
    }
    for o in m.of_kind("Machine") {
        semantic_version(o, &["spec", "version"], &mut out);
    }
    failure_domains(m, &mut out);
    schemas(m, &mut out);
    webhooks::check(m, &mut out);
    for o in m.objects.iter().filter(|o| {
        matches!(
            o.kind(),
            "RKE2ControlPlane" | "MachineDeployment" | "MachinePool" | "Machine"
        )
    }) {
        infrastructure_ref(m, o, &mut out);
        flatcar_cloud_config(m, o, &mut out);
    }
    ignore_check_unknown(m, &mut out);
    out
}

/// `ignore-check-unknown`: an `ignore-check.rke2-payload.io/…` annotation of an object as the
/// input writes it (not one the topology expansion made) whose id names no check. A Secret's
/// is the linter's, which reads the Secret's own annotations.
fn ignore_check_unknown(m: &Manifests, out: &mut Vec<Finding>) {
    for o in m
        .objects
        .iter()
        .filter(|o| o.derived.is_none() && o.made_for.is_none() && o.kind() != "Secret")
    {
        if let Some(ignores) = o.ignores() {
            out.extend(
                ignores
                    .unknown_findings()
                    .into_iter()
                    .map(|f| f.in_manifest(o.site())),
            );
        }
    }
}

/// `manifest-schema`: every object of a kind whose CRD this crate carries, checked as the API
/// server admits it (`crds`). On an object the topology expansion made, only what a patch
/// wrote is reported, naming the patch: the rest comes from the class's templates and the
/// Cluster, which are checked as they are written.
fn schemas(m: &Manifests, out: &mut Vec<Finding>) {
    for o in &m.objects {
        let api_version = str_at(&o.value, &["apiVersion"]).unwrap_or("");
        let Some(schema) = crate::crds::crd_schema(api_version, o.kind()) else {
            not_served(o, api_version, out);
            continue;
        };
        for v in schema.admit(&o.value) {
            if reported_elsewhere(o, &v) {
                continue;
            }
            let by = if o.made_for.is_some() {
                match o.patched.iter().rev().find(|p| p.covers(&v.path)) {
                    Some(p) => format!(
                        " (written by patch {} of {})",
                        crate::topology::shown(&p.patch, 60),
                        p.class
                    ),
                    None => continue,
                }
            } else {
                String::new()
            };
            out.push(
                Finding::new(
                    Check::ManifestSchema,
                    format!(
                        "{}: {}{by} (CRD schema of {})",
                        o.title(),
                        safe(&v.message()),
                        schema.source()
                    ),
                )
                .in_manifest(o.field_site(&v.path)),
            );
        }
    }
}

/// Whether a schema problem is one another check reports in its own words: a `${VAR}` left in
/// the value (`manifest-unsubstituted-variable`), the RKE2ControlPlane version's pattern
/// (`manifest-version-pattern`) or its absence (`manifest-render-fails`, which says that no
/// bootstrap data is written).
/// `manifest-api-version-not-served`: an object of a kind the CRDs carry, in a version they do
/// not serve: `kubectl apply` says "no matches for kind" and nothing is created.
fn not_served(o: &Object, api_version: &str, out: &mut Vec<Finding>) {
    let Some((group, version)) = api_version.split_once('/') else {
        return;
    };
    let Some(served) = crate::crds::served_versions(group, o.kind()) else {
        return;
    };
    finding(
        out,
        Check::ManifestApiVersionNotServed,
        o,
        format!(
            "apiVersion {} is not served: the CRD of {} serves {} only, so the API server has no kind {} in {}",
            safe(api_version),
            o.kind(),
            served.join(" and "),
            o.kind(),
            safe(version)
        ),
    );
}

fn reported_elsewhere(o: &Object, v: &crate::crds::Violation) -> bool {
    use crate::crds::{PathSeg, Problem};
    let mut value = Some(&o.value);
    for seg in &v.path {
        value = value.and_then(|x| match seg {
            PathSeg::Key(k) => x.get(k),
            PathSeg::Index(i) => x.get(i),
        });
    }
    let placeholder = value
        .and_then(Value::as_str)
        .is_some_and(|s| s.contains("${"))
        || v.path
            .iter()
            .any(|seg| matches!(seg, PathSeg::Key(k) if k.contains("${")));
    let version = matches!(
        v.problem,
        Problem::Pattern { .. } | Problem::Required { .. }
    ) && o.kind() == "RKE2ControlPlane"
        && v.pointer() == "spec.version";
    placeholder || version
}

/// Whether any string of `v` names Flatcar (an image lookup OS, an image or AMI name).
fn names_flatcar(v: &Value) -> bool {
    match v {
        Value::String(s) => s.to_ascii_lowercase().contains("flatcar"),
        Value::Array(items) => items.iter().any(names_flatcar),
        Value::Object(map) => map.values().any(names_flatcar),
        _ => false,
    }
}

/// `manifest-flatcar-cloud-config`: a machine whose infrastructure template boots a Flatcar
/// image while its RKE2 config writes cloud-config (Flatcar runs Ignition, not cloud-init).
fn flatcar_cloud_config(m: &Manifests, o: &Object, out: &mut Vec<Finding>) {
    let format = match o.kind() {
        "RKE2ControlPlane" => string(&o.value, &["spec", "agentConfig", "format"]),
        "MachineDeployment" | "MachinePool" => {
            let Some(r) = Ref::at(
                &o.value,
                &["spec", "template", "spec", "bootstrap", "configRef"],
                o.namespace(),
            ) else {
                return;
            };
            if let Some(t) = m.find("RKE2ConfigTemplate", &r) {
                string(
                    &t.value,
                    &["spec", "template", "spec", "agentConfig", "format"],
                )
            } else if let Some(c) = m.find("RKE2Config", &r) {
                string(&c.value, &["spec", "agentConfig", "format"])
            } else {
                return;
            }
        }
        _ => return,
    };
    if format == "ignition" {
        return;
    }
    let found = INFRASTRUCTURE_REFS.iter().find_map(|path| {
        let r = Ref::at(&o.value, path, o.namespace())?;
        let kind = str_at(&o.value, &[*path, &["kind"]].concat())?.to_owned();
        m.objects
            .iter()
            .find(|t| t.kind() == kind && t.name() == r.name && t.namespace() == r.namespace)
    });
    if let Some(template) = found
        && template.get(&["spec"]).is_some_and(names_flatcar)
    {
        finding(
            out,
            Check::ManifestFlatcarCloudConfig,
            o,
            format!(
                "{} boots a Flatcar image, but the RKE2 config's agentConfig.format is cloud-config (the default): Flatcar runs Ignition, not cloud-init, so RKE2 is never installed; set agentConfig.format: ignition",
                template.title()
            ),
        );
    }
}

/// The infrastructure template an RKE2ControlPlane or a MachineDeployment names, when the input
/// does not hold it but holds infrastructure of that namespace.
pub(crate) struct MissingTemplate {
    /// The reference's field (`spec.machineTemplate.spec.infrastructureRef`, …).
    pub(crate) path: &'static [&'static str],
    /// The kind it names.
    kind: String,
    /// The template it names.
    r: Ref,
    /// The names of the templates of that kind the namespace holds (a typo's candidates).
    same_kind: Vec<String>,
}

/// Whether `o` (an RKE2ControlPlane or a MachineDeployment) names an infrastructure template
/// the input does not hold. The machines are cloned from it before anything else: CAPRKE2
/// clones the control plane's before it creates the RKE2Config (v0.25.0
/// `controlplane/internal/controllers/scale.go:360-377`, then `generateRKE2Config` at :380), and
/// Cluster API's MachineSet deletes the RKE2Config it made when the clone fails (v1.14.0
/// `core/reconcilers/machineset/machineset_controller.go:970-998`), so no Machine and no
/// bootstrap Secret is made. Judged only when the input holds infrastructure of the namespace
/// (an object of the `infrastructure.cluster.x-k8s.io` group, or of the kind named): a fragment
/// without any (a control plane linted alone) is rendered as if its template exists.
pub(crate) fn missing_infrastructure_template(
    m: &Manifests,
    o: &Object,
) -> Option<MissingTemplate> {
    if !matches!(o.kind(), "RKE2ControlPlane" | "MachineDeployment") {
        return None;
    }
    let (path, r) = INFRASTRUCTURE_REFS
        .iter()
        .find_map(|path| Ref::at(&o.value, path, o.namespace()).map(|r| (*path, r)))?;
    let kind = str_at(&o.value, &[path, &["kind"]].concat()).unwrap_or("");
    if kind.is_empty() || kind.contains("${") || r.name.contains("${") {
        return None;
    }
    let in_namespace = |t: &&Object| t.namespace() == r.namespace;
    if m.of_kind(kind)
        .filter(in_namespace)
        .any(|t| t.name() == r.name)
    {
        return None;
    }
    let infrastructure = m.objects.iter().filter(in_namespace).any(|t| {
        t.kind() == kind
            || str_at(&t.value, &["apiVersion"])
                .and_then(|v| v.split_once('/'))
                .is_some_and(|(group, _)| group == INFRASTRUCTURE_GROUP)
    });
    if !infrastructure {
        return None;
    }
    let same_kind = m
        .of_kind(kind)
        .filter(in_namespace)
        .map(|t| safe(t.name()).into_owned())
        .collect();
    Some(MissingTemplate {
        path,
        kind: kind.to_owned(),
        r,
        same_kind,
    })
}

/// The API group of the infrastructure providers' kinds.
const INFRASTRUCTURE_GROUP: &str = "infrastructure.cluster.x-k8s.io";

/// `manifest-infrastructure-template-missing` on an RKE2ControlPlane or a MachineDeployment
/// ([`missing_infrastructure_template`]), located at the reference; on a MachinePool or a
/// Machine, `manifest-missing-reference` when the input holds other objects of the kind named
/// (a typo in the name).
fn infrastructure_ref(m: &Manifests, o: &Object, out: &mut Vec<Finding>) {
    if let Some(missing) = missing_infrastructure_template(m, o) {
        let MissingTemplate {
            path,
            kind,
            r,
            same_kind,
        } = missing;
        let held = if same_kind.is_empty() {
            format!("the input holds no {}", safe(&kind))
        } else {
            format!(
                "the input holds {} of that kind: {}",
                same_kind.len(),
                same_kind.join(", ")
            )
        };
        let consequence = if o.kind() == "RKE2ControlPlane" {
            "CAPRKE2 clones it before it creates a control plane's RKE2Config, so no control-plane Machine and no control-plane bootstrap Secret is ever made, and the workers wait for a control plane that never initializes: no node boots"
        } else {
            "Cluster API's MachineSet clones it for every Machine and deletes the RKE2Config it made when the clone fails, so no worker Machine and no worker bootstrap Secret is ever made"
        };
        let segments: Vec<crate::crds::PathSeg> = path
            .iter()
            .map(|k| crate::crds::PathSeg::Key((*k).to_owned()))
            .collect();
        out.push(
            Finding::new(
                Check::ManifestInfrastructureTemplateMissing,
                format!(
                    "{}: {} names {} {r}, which is not in the input ({held}); {consequence}",
                    o.title(),
                    path.join("."),
                    safe(&kind),
                ),
            )
            .in_manifest(o.field_site(&segments)),
        );
        return;
    }
    if !matches!(o.kind(), "MachinePool" | "Machine") {
        return;
    }
    for path in INFRASTRUCTURE_REFS {
        let Some(r) = Ref::at(&o.value, path, o.namespace()) else {
            continue;
        };
        let kind = str_at(&o.value, &[path, &["kind"]].concat()).unwrap_or("");
        let of_kind: Vec<&Object> = m
            .of_kind(kind)
            .filter(|t| t.namespace() == r.namespace)
            .collect();
        if !kind.is_empty() && !of_kind.is_empty() && !of_kind.iter().any(|t| t.name() == r.name) {
            finding(
                out,
                Check::ManifestMissingReference,
                o,
                format!(
                    "{} names {} {r}, which is not in the input though {} of that kind are ({}); Cluster API creates no Machine from it",
                    path.join("."),
                    safe(kind),
                    of_kind.len(),
                    of_kind
                        .iter()
                        .map(|t| safe(t.name()).into_owned())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            );
        }
        return;
    }
}

fn finding(out: &mut Vec<Finding>, check: Check, object: &Object, message: String) {
    out.push(Finding::new(
        check,
        format!("{}: {message}", object.title()),
    ));
}

/// The steps of a dotted path of keys (`spec.agentConfig.nodeName`).
fn dotted(path: &str) -> Vec<PathSeg> {
    path.split('.')
        .map(|k| PathSeg::Key(k.to_owned()))
        .collect()
}

/// A finding about the field at `path` (dotted keys) of `object`: on an object the topology
/// expansion made, placed where its author wrote the value (the patch, the Cluster's topology
/// or the class's template, [`Object::field_site`]); on others, at the object.
fn placed_finding(
    out: &mut Vec<Finding>,
    check: Check,
    object: &Object,
    path: &str,
    message: String,
) {
    if object.made_for.is_none() {
        return finding(out, check, object, message);
    }
    out.push(
        Finding::new(check, format!("{}: {message}", object.title()))
            .in_manifest(object.field_site(&dotted(path))),
    );
}

/// A finding about a value at `path` (dotted keys) of a config spec: on an object the
/// topology expansion made of a class's template, only when a patch wrote it, naming the patch
/// and placed at it (the template itself is checked as it is written); on others, as
/// [`finding`].
fn value_finding(
    out: &mut Vec<Finding>,
    check: Check,
    object: &Object,
    path: &str,
    message: String,
) {
    if object.derived.is_none() {
        return finding(out, check, object, message);
    }
    let steps = dotted(path);
    let Some(p) = object.patched.iter().rev().find(|p| p.covers(&steps)) else {
        return;
    };
    out.push(
        Finding::new(
            check,
            format!(
                "{}: {message} (written by patch {} of {})",
                object.title(),
                crate::topology::shown(&p.patch, 60),
                p.class
            ),
        )
        .in_manifest(object.field_site(&steps)),
    );
}

fn safe(s: &str) -> std::borrow::Cow<'_, str> {
    rke2_payload::terminal_safe(s)
}

/// `(v\d\.\d{2}\.\d+\+rke2r\d)|^$`, unanchored in its first branch as the CRD's pattern is.
pub(crate) fn version_matches_crd(v: &str) -> bool {
    if v.is_empty() {
        return true;
    }
    let b = v.as_bytes();
    (0..b.len()).any(|start| {
        let s = &b[start..];
        let digit = |i: usize| s.get(i).is_some_and(u8::is_ascii_digit);
        if s.first() != Some(&b'v')
            || !digit(1)
            || s.get(2) != Some(&b'.')
            || !digit(3)
            || !digit(4)
            || s.get(5) != Some(&b'.')
        {
            return false;
        }
        let mut i = 6;
        if !digit(i) {
            return false;
        }
        while digit(i) {
            i += 1;
        }
        s.get(i..i + 6) == Some(b"+rke2r".as_slice()) && digit(i + 6)
    })
}

/// `manifest-version-not-semver`: a version Cluster API's webhooks refuse (`semver`), at
/// `path` of `object`; an RKE2ControlPlane's is copied into every Machine's `spec.version`.
fn semantic_version(object: &Object, path: &[&str], out: &mut Vec<Finding>) {
    let version = string(&object.value, path);
    if version.is_empty() || version.contains("${") {
        return;
    }
    if let Some(why) = semver::refusal(&version) {
        placed_finding(
            out,
            Check::ManifestVersionNotSemver,
            object,
            &path.join("."),
            format!(
                "{} {} is not a version Cluster API accepts ({why}): its webhooks refuse {}",
                path.join("."),
                safe(&version),
                match object.kind() {
                    "RKE2ControlPlane" => "every Machine it copies the version into",
                    "Cluster" => "the Cluster",
                    _ => "the object",
                }
            ),
        );
    }
}

fn control_plane(m: &Manifests, rcp: &Object, out: &mut Vec<Finding>) {
    let v = &rcp.value;
    let version = string(v, &["spec", "version"]);
    if version_matches_crd(&version) {
        semantic_version(rcp, &["spec", "version"], out);
    }
    if !version.contains("${") && !version_matches_crd(&version) {
        placed_finding(
            out,
            Check::ManifestVersionPattern,
            rcp,
            "spec.version",
            format!(
                "spec.version {} does not match the CRD's pattern (v\\d\\.\\d{{2}}\\.\\d+\\+rke2r\\d), so the API server rejects the object",
                safe(&version)
            ),
        );
    }
    let method = string(v, &["spec", "registrationMethod"]);
    let address = string(v, &["spec", "registrationAddress"]);
    if method == "address" && address.is_empty() {
        placed_finding(
            out,
            Check::ManifestRegistrationAddressMissing,
            rcp,
            "spec.registrationMethod",
            "spec.registrationMethod is address but spec.registrationAddress is empty, so CAPRKE2's admission webhook refuses the object (rke2controlplane_webhook.go validateRegistrationMethod): no control plane, no node".to_owned(),
        );
    }
    if method == "address" && !address.is_empty() && !address.contains("${") {
        let sans = strings(v, &["spec", "serverConfig", "tlsSan"]);
        let endpoint = clusters_of(m, rcp)
            .map(|c| string(&c.value, &["spec", "controlPlaneEndpoint", "host"]))
            .collect::<Vec<_>>();
        if !sans.contains(&address) && !endpoint.contains(&address) {
            placed_finding(
                out,
                Check::ManifestRegistrationAddressNotInTlsSan,
                rcp,
                "spec.registrationAddress",
                format!(
                    "spec.registrationAddress {} is not in spec.serverConfig.tlsSan (CAPRKE2 adds only the endpoint host), so joining nodes reject the supervisor's certificate",
                    safe(&address)
                ),
            );
        }
    }
    // gzipUserData on a platform that gzips the user data itself.
    let gzip = flag(v, &["spec", "gzipUserData"]);
    if gzip {
        for path in INFRASTRUCTURE_REFS {
            if let Some(r) = Ref::at(v, path, rcp.namespace()) {
                double_gzip(m, rcp, &r, out);
            }
        }
    }
}

fn clusters_of<'m>(m: &'m Manifests, rcp: &'m Object) -> impl Iterator<Item = &'m Object> + 'm {
    m.of_kind("Cluster").filter(move |c| {
        c.namespace() == rcp.namespace()
            && (str_at(&c.value, &["spec", "controlPlaneRef", "name"]) == Some(rcp.name())
                || rcp
                    .get(&["metadata", "labels", rke2_payload::CLUSTER_NAME_LABEL])
                    .and_then(Value::as_str)
                    == Some(c.name()))
    })
}

/// `gzipUserData` with an infrastructure template that gzips again (cloud-init unpacks once).
fn double_gzip(m: &Manifests, owner: &Object, r: &Ref, out: &mut Vec<Finding>) {
    let Some(template) = m.objects.iter().find(|o| {
        o.name() == r.name && o.namespace() == r.namespace && o.kind().ends_with("MachineTemplate")
    }) else {
        return;
    };
    let spec = at(&template.value, &["spec", "template", "spec"]).unwrap_or(&Value::Null);
    let uncompressed = spec.get("uncompressedUserData").and_then(Value::as_bool);
    let gzips = match template.kind() {
        "CloudStackMachineTemplate" => uncompressed != Some(true),
        "AWSMachineTemplate" => uncompressed == Some(false),
        _ => false,
    };
    if gzips {
        finding(
            out,
            Check::ManifestGzipTwice,
            owner,
            format!(
                "gzipUserData is set and {} gzips the user data again (uncompressedUserData is not true); cloud-init unpacks one layer only, so the node never runs the payload",
                template.title()
            ),
        );
    }
}

/// `manifest-provider-id-literal`: a kubelet `provider-id` written out in a config every
/// replica shares (an RKE2ControlPlane, its template, an RKE2ConfigTemplate; a rollout makes a
/// second Machine even of one replica): every Node registers the same providerID, so Cluster
/// API matches one Machine at most and every other waits for its Node forever. A value the
/// node fills in at boot (`{{ ds.meta_data.instance_id }}` under `## template: jinja`, `$(…)`,
/// `${…}`) is per machine.
fn literal_provider_id(object: &Object, agent: &Value, at_path: &str, out: &mut Vec<Finding>) {
    if object.kind() == "RKE2Config" {
        return;
    }
    let literal = strings(agent, &["kubelet", "extraArgs"])
        .into_iter()
        .filter_map(|arg| arg.strip_prefix("provider-id=").map(str::to_owned))
        .find(|value| !value.is_empty() && !value.contains("{{") && !value.contains('$'));
    if let Some(value) = literal {
        value_finding(
            out,
            Check::ManifestProviderIdLiteral,
            object,
            &format!("{at_path}.agentConfig.kubelet.extraArgs"),
            format!(
                "{at_path}.agentConfig.kubelet.extraArgs sets provider-id={} for every Machine made from it: each Node registers that one providerID, so at most one Machine ever gets its Node (fill it in at boot, e.g. from the instance metadata under ## template: jinja)",
                safe(&value)
            ),
        );
    }
}

/// Checks of an `RKE2ConfigSpec` (in an RKE2ControlPlane, a template or an RKE2Config).
fn config_spec(
    _m: &Manifests,
    object: &Object,
    spec: Option<&Value>,
    at_path: &str,
    out: &mut Vec<Finding>,
) {
    let Some(spec) = spec else { return };
    let agent = spec.get("agentConfig").unwrap_or(&Value::Null);
    literal_provider_id(object, agent, at_path, out);
    if !string(agent, &["nodeName"]).is_empty() {
        value_finding(
            out,
            Check::ManifestNodeNameIgnored,
            object,
            &format!("{at_path}.agentConfig.nodeName"),
            format!(
                "{at_path}.agentConfig.nodeName is set, but CAPRKE2 never writes it into config.yaml; the node keeps its hostname"
            ),
        );
    }
    let config = string(agent, &["additionalUserData", "config"]);
    let format = string(agent, &["format"]);
    if !config.is_empty() && format != "ignition" {
        let dropped: Vec<&str> = IGNORED_KEYS
            .iter()
            .copied()
            .filter(|k| {
                config.lines().any(|l| {
                    l.strip_prefix(k)
                        .is_some_and(|rest| rest.trim_start().starts_with(':'))
                })
            })
            .collect();
        if !dropped.is_empty() {
            value_finding(
                out,
                Check::ManifestAdditionalUserDataDropped,
                object,
                &format!("{at_path}.agentConfig.additionalUserData.config"),
                format!(
                    "{at_path}.agentConfig.additionalUserData.config sets {}, which CAPRKE2 drops (it writes its own); use {at_path}.files and preRKE2Commands/postRKE2Commands instead",
                    dropped.join(", ")
                ),
            );
        }
    }
    if let Some(Value::Object(data)) = at(agent, &["additionalUserData", "data"]) {
        let mut dropped: Vec<&str> = data
            .keys()
            .map(String::as_str)
            .filter(|k| IGNORED_KEYS.contains(k))
            .collect();
        dropped.sort_unstable();
        if !dropped.is_empty() {
            value_finding(
                out,
                Check::ManifestAdditionalUserDataDropped,
                object,
                &format!("{at_path}.agentConfig.additionalUserData.data"),
                format!(
                    "{at_path}.agentConfig.additionalUserData.data sets {}, which CAPRKE2 drops",
                    dropped.join(", ")
                ),
            );
        }
    }
    if flag(agent, &["airGapped"]) && string(agent, &["airGappedChecksum"]).is_empty() {
        value_finding(
            out,
            Check::ManifestAirGapNoChecksum,
            object,
            &format!("{at_path}.agentConfig.airGapped"),
            format!(
                "{at_path}.agentConfig.airGapped is set without airGappedChecksum, so the node installs whatever artifacts the image holds, unchecked"
            ),
        );
    }
}

fn cluster(m: &Manifests, c: &Object, out: &mut Vec<Finding>) {
    let v = &c.value;
    infrastructure_for_rke2(m, c, out);
    // Cluster API v1.14.0 `core/webhooks/admission/cluster.go:158-159`: the name is a label
    // value on the Cluster's objects.
    if !is_label_value(c.name()) && !c.name().contains("${") {
        finding(
            out,
            Check::ManifestClusterNameInvalid,
            c,
            format!(
                "metadata.name is {} characters and {}: Cluster API's webhook refuses a Cluster whose name is not a valid label value (it is the cluster.x-k8s.io/cluster-name label of every object made for it, the bootstrap Secrets among them)",
                c.name().chars().count(),
                if c.name().len() > 63 {
                    "longer than 63"
                } else {
                    "not alphanumerics with -, _ and . inside"
                }
            ),
        );
    }
    // RKE2's own values (6443, cluster.local) change nothing.
    for (field, default) in [
        ("apiServerPort", "6443"),
        ("serviceDomain", "cluster.local"),
    ] {
        if at(v, &["spec", "clusterNetwork", field]).is_some_and(|x| {
            !x.is_null() && x.as_str().map_or_else(|| x.to_string(), str::to_owned) != default
        }) {
            finding(
                out,
                Check::ManifestClusterNetworkIgnored,
                c,
                format!(
                    "spec.clusterNetwork.{field} is set, but RKE2 does not read it ({})",
                    if field == "apiServerPort" {
                        "the API server listens on 6443 on every control plane"
                    } else {
                        "the cluster domain is serverConfig.clusterDomain"
                    }
                ),
            );
        }
    }
    let host = string(v, &["spec", "controlPlaneEndpoint", "host"]);
    let port = at(v, &["spec", "controlPlaneEndpoint", "port"])
        .and_then(Value::as_i64)
        .unwrap_or(0);
    if host.is_empty() || port == 0 {
        // The infrastructure cluster may set it: only when the input's does not either.
        let infra = Ref::at(v, &["spec", "infrastructureRef"], c.namespace()).and_then(|r| {
            m.objects.iter().find(|o| {
                o.name() == r.name && o.namespace() == r.namespace && o.kind() != "Cluster"
            })
        });
        let infra_sets = infra.is_some_and(|o| {
            !string(&o.value, &["spec", "controlPlaneEndpoint", "host"]).is_empty()
        });
        if !infra_sets {
            finding(
                out,
                Check::ManifestControlPlaneEndpointMissing,
                c,
                "spec.controlPlaneEndpoint has no host and port, and the input's infrastructure cluster sets none: RKE2ControlPlane creates no Machine until the infrastructure provider fills it in".to_owned(),
            );
        }
    }
}

/// `manifest-infrastructure-not-rke2`: the infrastructure object of a Cluster whose control
/// plane is an RKE2ControlPlane, judged by the library's table of what such an object must say
/// for RKE2 (`cluster_requirements`). A fact of the infrastructure, not of any payload.
fn infrastructure_for_rke2(m: &Manifests, c: &Object, out: &mut Vec<Finding>) {
    let v = &c.value;
    if string(v, &["spec", "controlPlaneRef", "kind"]) != "RKE2ControlPlane" {
        return;
    }
    let Some(r) = Ref::at(v, &["spec", "infrastructureRef"], c.namespace()) else {
        return;
    };
    let kind = string(v, &["spec", "infrastructureRef", "kind"]);
    let Some(infra) = m
        .objects
        .iter()
        .find(|o| o.kind() == kind && o.name() == r.name && o.namespace() == r.namespace)
    else {
        return;
    };
    let api_version = str_at(&infra.value, &["apiVersion"]).unwrap_or("");
    let spec = infra.get(&["spec"]).unwrap_or(&Value::Null);
    for broken in rke2_payload::cluster_requirements(&kind, api_version, spec) {
        finding(
            out,
            Check::ManifestInfrastructureNotRke2,
            infra,
            format!(
                "{} ({}: {})",
                broken.message, broken.provider, broken.source
            ),
        );
    }
}

/// Whether `value` is a valid Kubernetes label value (`IsValidLabelValue` of apimachinery's
/// `util/validation`): at most 63 characters, empty or alphanumerics with `-`, `_` and `.`
/// inside.
fn is_label_value(value: &str) -> bool {
    let b = value.as_bytes();
    let edge = |c: &u8| c.is_ascii_alphanumeric();
    b.len() <= 63
        && (b.is_empty()
            || (b.first().is_some_and(edge)
                && b.last().is_some_and(edge)
                && b.iter()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.'))))
}

/// Failure domains where none is for control planes.
fn failure_domains(m: &Manifests, out: &mut Vec<Finding>) {
    for o in &m.objects {
        for path in [
            &["spec", "failureDomains"][..],
            &["status", "failureDomains"][..],
        ] {
            let Some(domains) = at(&o.value, path) else {
                continue;
            };
            let entries: Vec<&Value> = match domains {
                Value::Array(items) => items.iter().collect(),
                Value::Object(map) => map.values().collect(),
                _ => continue,
            };
            if !entries.is_empty()
                && entries
                    .iter()
                    .all(|d| d.get("controlPlane").and_then(Value::as_bool) != Some(true))
            {
                finding(
                    out,
                    Check::ManifestFailureDomainsNoControlPlane,
                    o,
                    format!(
                        "{}: none of its {} failure domains has controlPlane: true, so RKE2ControlPlane places control planes in none of them",
                        path.join("."),
                        entries.len()
                    ),
                );
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn manifests(text: &str) -> Manifests {
        Manifests::of_text(text)
    }

    const CONTROL_PLANE: &str = "kind: RKE2ControlPlane
metadata: {name: cp, namespace: ns}
spec: {machineTemplate: {spec: {infrastructureRef: {kind: DockerMachineTemplate, name: cp-machine}}}}
";

    /// Whether `text`'s control plane is judged to name a missing template, and its candidates.
    fn missing(text: &str) -> Option<(String, Vec<String>)> {
        let m = manifests(text);
        let rcp = m
            .of_kind("RKE2ControlPlane")
            .next()
            .expect("a control plane");
        missing_infrastructure_template(&m, rcp).map(|t| (t.path.join("."), t.same_kind))
    }

    #[test]
    fn a_missing_infrastructure_template_is_judged_only_with_infrastructure_in_the_input() {
        // Alone (a fragment): not judged.
        assert!(missing(CONTROL_PLANE).is_none());
        // With another template of the kind (a typo): missing, the candidate named.
        let typo = format!(
            "{CONTROL_PLANE}---\nkind: DockerMachineTemplate\napiVersion: infrastructure.cluster.x-k8s.io/v1beta2\nmetadata: {{name: cp-machines, namespace: ns}}\n"
        );
        assert_eq!(
            missing(&typo),
            Some((
                "spec.machineTemplate.spec.infrastructureRef".to_owned(),
                vec!["cp-machines".to_owned()]
            ))
        );
        // With the infrastructure cluster only: missing, no candidate.
        let cluster = format!(
            "{CONTROL_PLANE}---\nkind: DockerCluster\napiVersion: infrastructure.cluster.x-k8s.io/v1beta2\nmetadata: {{name: c, namespace: ns}}\n"
        );
        assert_eq!(missing(&cluster).map(|(_, c)| c), Some(Vec::new()));
        // Infrastructure of another namespace says nothing of this one.
        assert!(
            missing(&cluster.replace("name: c, namespace: ns", "name: c, namespace: other"))
                .is_none()
        );
        // The template there: nothing missing.
        assert!(missing(&typo.replace("cp-machines", "cp-machine")).is_none());
        // A ${VAR} is another check's.
        assert!(missing(&typo.replace("name: cp-machine}", "name: \"${CP}\"}")).is_none());
        // v1beta1's field.
        let v1 = typo.replace(
            "{machineTemplate: {spec: {infrastructureRef: {kind: DockerMachineTemplate, name: cp-machine}}}}",
            "{machineTemplate: {infrastructureRef: {kind: DockerMachineTemplate, name: cp-machine}}}",
        );
        assert_eq!(
            missing(&v1).map(|(p, _)| p),
            Some("spec.machineTemplate.infrastructureRef".to_owned())
        );
        // The finding is an error located at the reference.
        let m = manifests(&typo);
        let mut out = Vec::new();
        let rcp = m
            .of_kind("RKE2ControlPlane")
            .next()
            .expect("a control plane");
        infrastructure_ref(&m, rcp, &mut out);
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].check, Check::ManifestInfrastructureTemplateMissing);
        assert!(out[0].is_refusal());
        assert!(out[0].manifest.is_some());
    }

    #[test]
    fn label_values_as_kubernetes_validates_them() {
        for ok in ["", "demo", "a", "a.b_c-d", &"x".repeat(63)] {
            assert!(is_label_value(ok), "{ok}");
        }
        for bad in [&"x".repeat(64), "-a", "a-", "a b", "ä"] {
            assert!(!is_label_value(bad), "{bad}");
        }
    }

    #[test]
    fn the_crd_version_pattern() {
        for ok in ["", "v1.32.5+rke2r1", "v1.32.12+rke2r1", "x v1.32.5+rke2r12"] {
            assert!(version_matches_crd(ok), "{ok}");
        }
        for bad in [
            "1.32.5+rke2r1",
            "v1.32.5",
            "v1.9.5+rke2r1",
            "v1.32.5-rke2r1",
            "v1.32+rke2r1",
        ] {
            assert!(!version_matches_crd(bad), "{bad}");
        }
    }
}
