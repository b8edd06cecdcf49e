//! A ClusterClass checked on its own, as Cluster API checks it before any Cluster uses it:
//! what its webhook refuses at admission, the templates its controller looks up, and, for a
//! class no Cluster of the input uses, the expansion of a Cluster that sets none of its
//! variables, so that its patches meet its templates as they would for a real Cluster.
//!
//! What Cluster API v1.14.0 checks where:
//! - at admission, the ClusterClass webhook (`core/webhooks/admission/clusterclass.go:90-131`):
//!   the variables' schemas and their defaults (`ValidateClusterClassVariables`,
//!   `internal/topology/variables/clusterclass_variable_validation.go:257-260`, the API
//!   server's `ValidateDefaults`), and the patches (`core/webhooks/admission/patch_validation.go`:
//!   a path under `/spec` at 334-341 (the op, `add`/`replace`/`remove`, at 325-332, is the
//!   CRD's enum too, and reported as `manifest-schema`), array indexes at
//!   529-558, `value`/`valueFrom` at 356-410, a `valueFrom.variable` the class defines at
//!   425-451); it does not look the templates up, nor apply a patch;
//! - at reconcile, the ClusterClass controller gets each referenced template
//!   (`core/reconcilers/clusterclass/clusterclass_controller.go:207-251`, `reconcileExternal`
//!   at 448-455: a missing one is an error the controller retries on);
//! - at reconcile, per Cluster, the topology controller applies each patch's JSON patches to the
//!   templates (`core/reconcilers/topology/cluster/patches/engine.go:93-127`, the apply at
//!   541): `replace` or `remove` of a path the template does not have, or `add` under a parent
//!   it does not have, fails there, and the Cluster is not reconciled.

use rke2_payload::{Check, Finding};
use serde_json::{Value, json};

use super::{Expander, Expansion, shown};
use crate::crds::{PathSeg, VariableSchema};
use crate::manifests::{Manifests, Object, str_at};

/// The version a class expanded on its own gives its Cluster when the class lists none
/// (`spec.kubernetesVersions`): only what a patch reads of it (`builtin.*.version`) depends on
/// it.
const SYNTHETIC_VERSION: &str = "v1.34.1+rke2r1";

/// Where a ClusterClass names its templates, v1beta2 (`templateRef`) then v1beta1 (`ref`),
/// under the class's `spec` (the worker classes' are under each item of their list).
const CLASS_REFS: [(&[&str], &[&str]); 3] = [
    (
        &["infrastructure", "templateRef"],
        &["infrastructure", "ref"],
    ),
    (&["controlPlane", "templateRef"], &["controlPlane", "ref"]),
    (
        &["controlPlane", "machineInfrastructure", "templateRef"],
        &["controlPlane", "machineInfrastructure", "ref"],
    ),
];
const WORKER_REFS: [(&[&str], &[&str]); 2] = [
    (
        &["bootstrap", "templateRef"],
        &["template", "bootstrap", "ref"],
    ),
    (
        &["infrastructure", "templateRef"],
        &["template", "infrastructure", "ref"],
    ),
];

fn key(k: &str) -> PathSeg {
    PathSeg::Key(k.to_owned())
}

/// What a ClusterClass on its own is found to have wrong.
pub(crate) struct ClassCheck {
    /// The findings, each placed where the class or its template writes what is wrong.
    pub(crate) findings: Vec<Finding>,
    /// Whether Cluster API admits the class and finds its templates: only then is it expanded.
    pub(crate) sound: bool,
}

/// The checks of `class` that need no Cluster: its templates are in the input, its variables'
/// schemas compile and allow their defaults, its JSON patches are what the webhook admits.
pub(crate) fn check_class(m: &Manifests, class: &Object) -> ClassCheck {
    let mut findings = Vec::new();
    references(m, class, &mut findings);
    variables(class, &mut findings);
    patches(class, &mut findings);
    let sound = findings.is_empty();
    ClassCheck { findings, sound }
}

/// `manifest-missing-reference`: a template the class names that the input does not hold, at
/// the class's reference.
fn references(m: &Manifests, class: &Object, out: &mut Vec<Finding>) {
    let mut refs: Vec<Vec<PathSeg>> = Vec::new();
    let spec = class.get(&["spec"]).unwrap_or(&Value::Null);
    for (v2, v1) in CLASS_REFS {
        refs.extend(ref_path(spec, &[], v2, v1));
    }
    for list in ["machineDeployments", "machinePools"] {
        let workers = spec.pointer(&format!("/workers/{list}"));
        for (i, w) in workers
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .enumerate()
        {
            let at = [key("workers"), key(list), PathSeg::Index(i)];
            for (v2, v1) in WORKER_REFS {
                refs.extend(ref_path(w, &at, v2, v1));
            }
        }
    }
    for path in refs {
        let mut full = vec![key("spec")];
        full.extend(path);
        let Some(r) = value_at(&class.value, &full) else {
            continue;
        };
        let s = |k: &str| str_at(r, &[k]).unwrap_or("");
        let (kind, name) = (s("kind"), s("name"));
        if name.is_empty() {
            continue;
        }
        let namespace = Some(s("namespace"))
            .filter(|n| !n.is_empty())
            .unwrap_or(class.namespace());
        let found = m
            .objects
            .iter()
            .any(|o| o.kind() == kind && o.name() == name && o.namespace() == namespace);
        if !found {
            out.push(
                Finding::new(
                    Check::ManifestMissingReference,
                    format!(
                        "{}: {} names {} {}/{}, which is not in the input: the ClusterClass controller cannot find it, and no Cluster of the class is expanded until it exists",
                        class.title(),
                        safe(&payload_kube_schema::pointer(&full)),
                        shown(kind, 60),
                        shown(namespace, 60),
                        shown(name, 60)
                    ),
                )
                .in_manifest(class.field_site(&full)),
            );
        }
    }
}

/// The path of the reference under `value` (v1beta2's, else v1beta1's), after `prefix`.
fn ref_path(value: &Value, prefix: &[PathSeg], v2: &[&str], v1: &[&str]) -> Option<Vec<PathSeg>> {
    let path = [v2, v1]
        .into_iter()
        .find(|p| crate::manifests::at(value, p).is_some())?;
    let mut out = prefix.to_vec();
    out.extend(path.iter().map(|k| key(k)));
    Some(out)
}

/// The value at `path` under `value`.
fn value_at<'v>(value: &'v Value, path: &[PathSeg]) -> Option<&'v Value> {
    path.iter().try_fold(value, |v, seg| match seg {
        PathSeg::Key(k) => v.get(k),
        PathSeg::Index(i) => v.get(i),
    })
}

/// `topology-class-refused` for the variables: a schema that does not compile, a default its
/// schema refuses (at the `default`).
fn variables(class: &Object, out: &mut Vec<Finding>) {
    let list = class.get(&["spec", "variables"]).and_then(Value::as_array);
    for (i, v) in list.into_iter().flatten().enumerate() {
        let name = shown(str_at(v, &["name"]).unwrap_or(""), 60);
        let Some(openapi) = v.pointer("/schema/openAPIV3Schema") else {
            continue;
        };
        let at = [
            key("spec"),
            key("variables"),
            PathSeg::Index(i),
            key("schema"),
            key("openAPIV3Schema"),
        ];
        let refused = |what: String, path: &[PathSeg]| {
            Finding::new(
                Check::TopologyClassRefused,
                format!(
                    "{}: variable {name}: {what}: the ClusterClass webhook refuses the class",
                    class.title()
                ),
            )
            .in_manifest(class.field_site(path))
        };
        match VariableSchema::compile(openapi) {
            Err(e) => {
                // The error says where in the schema, nothing at its root.
                let e = e.to_string();
                let e = e.strip_prefix(": ").unwrap_or(&e);
                out.push(refused(
                    format!("its schema does not compile ({})", safe(e)),
                    &at,
                ));
            }
            Ok(schema) => {
                for d in schema.invalid_defaults() {
                    let mut path = at.to_vec();
                    path.extend(d.at.iter().map(|k| key(k)));
                    path.push(key("default"));
                    let within = if d.violation.path.is_empty() {
                        String::new()
                    } else {
                        format!(" at {}", safe(&d.violation.pointer()))
                    };
                    let schema_at = if d.at.is_empty() {
                        "openAPIV3Schema".to_owned()
                    } else {
                        format!("openAPIV3Schema.{}", safe(&d.at.join(".")))
                    };
                    out.push(refused(
                        format!(
                            "the default of {schema_at}{within} {}",
                            d.violation.problem.describe()
                        ),
                        &path,
                    ));
                }
            }
        }
    }
}

fn safe(s: &str) -> String {
    rke2_payload::terminal_safe(s).into_owned()
}

/// `topology-class-refused` for the JSON patches the webhook refuses, each at its JSON patch.
fn patches(class: &Object, out: &mut Vec<Finding>) {
    let defined: Vec<&str> = class
        .get(&["spec", "variables"])
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|v| str_at(v, &["name"]))
        .collect();
    let patches = class.get(&["spec", "patches"]).and_then(Value::as_array);
    for (i, p) in patches.into_iter().flatten().enumerate() {
        let name = shown(str_at(p, &["name"]).unwrap_or(""), 60);
        let defs = p.get("definitions").and_then(Value::as_array);
        for (j, d) in defs.into_iter().flatten().enumerate() {
            let jps = d.get("jsonPatches").and_then(Value::as_array);
            for (k, jp) in jps.into_iter().flatten().enumerate() {
                let at = [
                    key("spec"),
                    key("patches"),
                    PathSeg::Index(i),
                    key("definitions"),
                    PathSeg::Index(j),
                    key("jsonPatches"),
                    PathSeg::Index(k),
                ];
                for what in json_patch_refusals(jp, &defined) {
                    out.push(
                        Finding::new(
                            Check::TopologyClassRefused,
                            format!(
                                "{}: patch {name}, definitions[{j}].jsonPatches[{k}]: {what}: the ClusterClass webhook refuses the class",
                                class.title()
                            ),
                        )
                        .in_manifest(class.field_site(&at)),
                    );
                }
            }
        }
    }
}

/// What the webhook refuses of one JSON patch (`validateJSONPatches`), one clause each.
fn json_patch_refusals(jp: &Value, defined: &[&str]) -> Vec<String> {
    let mut out = Vec::new();
    let op = str_at(jp, &["op"]).unwrap_or("");
    let path = str_at(jp, &["path"]).unwrap_or("");
    // An op other than add, replace or remove: the CRD's enum refuses it first
    // (`manifest-schema`).
    if !path.starts_with("/spec") {
        out.push(format!("path {} is not under /spec", shown(path, 80)));
    }
    // Only `0` (prepend) or `-` (append) to add; no index to replace or remove.
    for part in path.split('/') {
        let Ok(index) = part.parse::<i64>() else {
            continue;
        };
        if op == "add" && index != 0 {
            out.push(format!(
                "path {} adds at an array index other than 0 (prepend) or - (append)",
                shown(path, 80)
            ));
        }
        if op == "replace" || op == "remove" {
            out.push(format!(
                "path {} indexes an array, which {op} may not",
                shown(path, 80)
            ));
        }
    }
    if op == "add" || op == "replace" {
        let value = jp.get("value");
        let from = jp.get("valueFrom");
        match (value, from) {
            (None, None) => out.push("it sets neither value nor valueFrom".to_owned()),
            (Some(_), Some(_)) => out.push("it sets both value and valueFrom".to_owned()),
            _ => {}
        }
        if let Some(from) = from {
            let variable = str_at(from, &["variable"]).unwrap_or("");
            let template = str_at(from, &["template"]).unwrap_or("");
            match (variable.is_empty(), template.is_empty()) {
                (true, true) => out.push("valueFrom sets neither variable nor template".to_owned()),
                (false, false) => out.push("valueFrom sets both variable and template".to_owned()),
                _ => {}
            }
            let root = variable.split(['.', '[']).next().unwrap_or("");
            if !variable.is_empty() && root != "builtin" && !defined.contains(&root) {
                out.push(format!(
                    "valueFrom.variable {} names a variable the class does not define",
                    shown(variable, 60)
                ));
            }
        }
    }
    out
}

/// Whether a topology Cluster of the input uses `class`.
pub(crate) fn used(m: &Manifests, class: &Object) -> bool {
    m.objects
        .iter()
        .filter(|o| super::is_topology_cluster(o))
        .any(|c| {
            let (ns, name) = super::naming::class_of(c);
            name == class.name() && ns == class.namespace()
        })
}

/// Whether every required variable of the class has a default: then a Cluster that sets
/// none is admitted, and the class can be expanded for it.
fn defaults_suffice(class: &Object) -> bool {
    let list = class.get(&["spec", "variables"]).and_then(Value::as_array);
    list.into_iter().flatten().all(|v| {
        let required = v.get("required").and_then(Value::as_bool).unwrap_or(false);
        !required || v.pointer("/schema/openAPIV3Schema/default").is_some()
    })
}

/// `class` expanded for a Cluster of the class's name and namespace that sets no variable
/// (their defaults apply), with one MachineDeployment and MachinePool topology per worker
/// class, so that every patch meets every template it selects. Only the objects made of the
/// class's templates are kept; a finding the expansion places nowhere is placed at the class.
/// `None` when a required variable has no default, or a patch is external.
pub(crate) fn expand_class(
    m: &Manifests,
    class: &Object,
    rng: &mut rand::rngs::StdRng,
) -> Option<Expansion> {
    if !defaults_suffice(class) {
        return None;
    }
    let spec = class.get(&["spec"]).unwrap_or(&Value::Null);
    let version = spec
        .pointer("/kubernetesVersions/0")
        .and_then(Value::as_str)
        .unwrap_or(SYNTHETIC_VERSION);
    let workers = |list: &str| -> Vec<Value> {
        spec.pointer(&format!("/workers/{list}"))
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|w| str_at(w, &["class"]))
            .map(|c| json!({"class": c, "name": c, "replicas": 1}))
            .collect()
    };
    let value = json!({
        "apiVersion": "cluster.x-k8s.io/v1beta2",
        "kind": "Cluster",
        "metadata": {"name": class.name(), "namespace": class.namespace()},
        "spec": {"topology": {
            "classRef": {"name": class.name(), "namespace": class.namespace()},
            "version": version,
            "controlPlane": {"replicas": 1},
            "workers": {
                "machineDeployments": workers("machineDeployments"),
                "machinePools": workers("machinePools"),
            },
        }},
    });
    // Placed where the class is: what the controller sets from this Cluster has no other place.
    let cluster = Object {
        source: class.source.clone(),
        value,
        line: class.line,
        places: None,
        made_for: None,
        patched: Vec::new(),
        derived: None,
    };
    let mut e = Expander {
        m,
        cluster: &cluster,
        subject: format!(
            "{} (expanded for a Cluster that sets none of its variables)",
            class.title()
        ),
        rng,
        findings: Vec::new(),
    };
    let made = e.run().ok()?;
    let objects = made
        .map(|(_, objects)| {
            objects
                .into_iter()
                .filter(|o| o.derived.is_some())
                .collect()
        })
        .unwrap_or_default();
    let findings = e
        .findings
        .into_iter()
        .map(|f| match f.manifest {
            Some(_) => f,
            None => f.in_manifest(class.site()),
        })
        .collect();
    Some(Expansion {
        clusters: Vec::new(),
        objects,
        findings,
    })
}
