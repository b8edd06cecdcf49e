//! The objects of the input, by kind, namespace and name, and the lookups CAPRKE2's controller
//! makes against the API server, answered from them.

use std::sync::Arc;

use payload_kube_schema::PathSeg;
use rke2_payload::{FieldStep, ObjectPlaces};
use serde_json::Value;

/// One Kubernetes object of the input and the file it came from. Its `Debug` output names it,
/// never its content (a Secret's data).
#[derive(Clone)]
pub(crate) struct Object {
    pub(crate) source: String,
    pub(crate) value: Value,
    /// The 1-based line of its first key in `source`, when the text could be read for places.
    pub(crate) line: Option<u64>,
    /// Where its fields are written, when the text could be read for places.
    pub(crate) places: Option<Arc<ObjectPlaces>>,
    /// `Cluster ns/name` when the topology expansion made it for that Cluster.
    pub(crate) made_for: Option<String>,
    /// For an object the expansion made: the values ClusterClass patches wrote, in order.
    pub(crate) patched: Vec<Patched>,
    /// For an object the expansion made of a class's template: that template as the input
    /// writes it, and what the controller set from the Cluster.
    pub(crate) derived: Option<Arc<Derived>>,
}

/// Where the fields of an object the topology expansion made of a ClusterClass's template are
/// written in the input: in the template, unless a patch wrote them ([`Patched::site`]) or the
/// controller set them from the Cluster's topology.
#[derive(Debug, Clone)]
pub(crate) struct Derived {
    /// The class's template, as the input writes it.
    pub(crate) template: Object,
    /// Whether the object is a copy of the template (its fields at the same paths: a
    /// MachineDeployment's templates), or the object the template stands for (its `spec` is
    /// the template's `spec.template.spec`, its labels and annotations the template's
    /// `spec.template.metadata`).
    pub(crate) copy: bool,
    /// The fields the controller sets from the Cluster (the object's path, unescaped), and
    /// where the Cluster writes what they are set from.
    pub(crate) from_cluster: Vec<(Vec<String>, rke2_payload::ManifestSite)>,
}

impl Derived {
    /// The path in the template of the object's field at `path`; `None` when the field is not
    /// the template's (the object's name, the controller's labels).
    fn template_path(&self, path: &[PathSeg]) -> Option<Vec<PathSeg>> {
        if self.copy {
            return Some(path.to_vec());
        }
        let key = |k: &str| PathSeg::Key(k.to_owned());
        match path {
            [PathSeg::Key(spec), rest @ ..] if spec == "spec" => Some(
                [key("spec"), key("template"), key("spec")]
                    .into_iter()
                    .chain(rest.iter().cloned())
                    .collect(),
            ),
            [PathSeg::Key(meta), PathSeg::Key(field), rest @ ..]
                if meta == "metadata" && (field == "labels" || field == "annotations") =>
            {
                Some(
                    [key("spec"), key("template"), key("metadata"), key(field)]
                        .into_iter()
                        .chain(rest.iter().cloned())
                        .collect(),
                )
            }
            _ => None,
        }
    }
}

/// A value a ClusterClass patch wrote (added, replaced or removed) into an object the
/// topology expansion made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Patched {
    /// Where, in the object: the steps of the patch's JSON pointer, unescaped (`-` for an
    /// item appended).
    pub(crate) path: Vec<String>,
    /// The patch's name.
    pub(crate) patch: String,
    /// `ClusterClass namespace/name`.
    pub(crate) class: String,
    /// Where the JSON patch that wrote it is written in the ClusterClass (its item of
    /// `spec.patches[].definitions[].jsonPatches`), when the class was read with places.
    pub(crate) site: Option<rke2_payload::ManifestSite>,
}

impl Patched {
    /// Whether the value at `path` was written by this patch: the patch wrote it or a value
    /// that holds it, or wrote into it.
    pub(crate) fn covers(&self, path: &[PathSeg]) -> bool {
        covers(&self.path, path)
    }
}

/// Whether `steps` (unescaped keys, indexes, `-`) and `path` agree as far as both go.
fn covers(steps: &[String], path: &[PathSeg]) -> bool {
    steps.iter().zip(path).all(|(step, seg)| match seg {
        PathSeg::Key(key) => step == key,
        PathSeg::Index(i) => step == "-" || step.parse::<usize>().is_ok_and(|n| n == *i),
    })
}

impl std::fmt::Debug for Object {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Object")
            .field("object", &self.title())
            .field("source", &self.source)
            .finish_non_exhaustive()
    }
}

impl Object {
    /// An object read from `source` whose place in it is not known.
    pub(crate) fn unplaced(source: &str, value: Value) -> Object {
        Object {
            source: source.to_owned(),
            value,
            line: None,
            places: None,
            made_for: None,
            patched: Vec::new(),
            derived: None,
        }
    }

    /// An object of file `t.yaml`, with no places (for the unit tests).
    #[cfg(test)]
    pub(crate) fn of_value(value: Value) -> Object {
        Object::unplaced("t.yaml", value)
    }

    pub(crate) fn kind(&self) -> &str {
        str_at(&self.value, &["kind"]).unwrap_or("")
    }

    pub(crate) fn name(&self) -> &str {
        str_at(&self.value, &["metadata", "name"]).unwrap_or("")
    }

    /// The namespace, `default` when none is written (as `kubectl apply` would place it).
    pub(crate) fn namespace(&self) -> &str {
        str_at(&self.value, &["metadata", "namespace"])
            .filter(|n| !n.is_empty())
            .unwrap_or("default")
    }

    /// `Kind namespace/name`, for messages.
    pub(crate) fn title(&self) -> String {
        format!(
            "{} {}/{}",
            rke2_payload::terminal_safe(self.kind()),
            rke2_payload::terminal_safe(self.namespace()),
            rke2_payload::terminal_safe(self.name())
        )
    }

    pub(crate) fn get(&self, path: &[&str]) -> Option<&Value> {
        at(&self.value, path)
    }

    /// Where it is written, for a finding about it: for an object the topology expansion made
    /// of a class's template, that template.
    pub(crate) fn site(&self) -> rke2_payload::ManifestSite {
        if let Some(d) = &self.derived {
            return d.template.site();
        }
        rke2_payload::ManifestSite::new(
            rke2_payload::terminal_safe(&self.source),
            self.title(),
            self.line,
        )
        .with_ignores(self.ignores())
    }

    /// What its `ignore-check.rke2-payload.io/…` annotations say, read from the parsed
    /// `metadata.annotations` (a `null` value is an empty reason; a value of another type
    /// is not an annotation the API server would store, and is passed over); `None` when it
    /// has none.
    pub(crate) fn ignores(&self) -> Option<rke2_payload::Ignores> {
        let annotations = self.get(&["metadata", "annotations"])?.as_object()?;
        let pairs = annotations.iter().filter_map(|(k, v)| match v {
            Value::String(s) => Some((k.as_str(), s.as_str())),
            Value::Null => Some((k.as_str(), "")),
            _ => None,
        });
        let ignores = rke2_payload::Ignores::from_annotations(pairs, &self.title());
        (!ignores.is_empty()).then_some(ignores)
    }

    /// Where one of its fields is written, for a finding about that field: the field's line
    /// when the object has places, the object's otherwise. For an object the topology
    /// expansion made, where its author wrote the value: the patch that wrote it last, the
    /// Cluster's field the controller set it from, or the class's template.
    pub(crate) fn field_site(&self, path: &[PathSeg]) -> rke2_payload::ManifestSite {
        if self.made_for.is_some() {
            let patch = self.patched.iter().rev().find(|p| p.covers(path));
            if let Some(site) = patch.and_then(|p| p.site.clone()) {
                return site;
            }
            if let Some(d) = &self.derived {
                if let Some((_, site)) = d
                    .from_cluster
                    .iter()
                    .find(|(prefix, _)| prefix.len() <= path.len() && covers(prefix, path))
                {
                    return site.clone();
                }
                return match d.template_path(path) {
                    Some(in_template) => d.template.field_site(&in_template),
                    None => d.template.site(),
                };
            }
        }
        let mut site = self.site();
        if let Some(places) = &self.places {
            let steps: Vec<FieldStep<'_>> = path
                .iter()
                .map(|seg| match seg {
                    PathSeg::Key(key) => FieldStep::Key(key),
                    PathSeg::Index(i) => FieldStep::Index(*i),
                })
                .collect();
            site.line = Some(places.line_of(&steps));
        }
        site
    }
}

/// Where an object names the infrastructure (template) its machines are made from: an
/// RKE2ControlPlane (`machineTemplate`, v1beta2 then v1beta1, then the oldest field), a
/// MachineDeployment or MachinePool template, a Machine.
pub(crate) const INFRASTRUCTURE_REFS: [&[&str]; 4] = [
    &["spec", "machineTemplate", "spec", "infrastructureRef"],
    &["spec", "machineTemplate", "infrastructureRef"],
    &["spec", "template", "spec", "infrastructureRef"],
    &["spec", "infrastructureRef"],
];

/// The value at `path` (object keys) under `value`.
pub(crate) fn at<'v>(value: &'v Value, path: &[&str]) -> Option<&'v Value> {
    let mut here = value;
    for key in path {
        here = here.get(*key)?;
    }
    Some(here)
}

/// The string at `path`, if it is one.
pub(crate) fn str_at<'v>(value: &'v Value, path: &[&str]) -> Option<&'v str> {
    at(value, path).and_then(Value::as_str)
}

/// The string at `path`, or `""`.
pub(crate) fn string(value: &Value, path: &[&str]) -> String {
    match at(value, path) {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Number(n)) => n.to_string(),
        Some(Value::Bool(b)) => b.to_string(),
        _ => String::new(),
    }
}

/// The strings of the list at `path` (numbers and bools as YAML would give them to Go's
/// `[]string`, as their text).
pub(crate) fn strings(value: &Value, path: &[&str]) -> Vec<String> {
    match at(value, path) {
        Some(Value::Array(items)) => items
            .iter()
            .filter_map(|v| match v {
                Value::String(s) => Some(s.clone()),
                Value::Number(n) => Some(n.to_string()),
                Value::Bool(b) => Some(b.to_string()),
                _ => None,
            })
            .collect(),
        _ => Vec::new(),
    }
}

/// `true` when the value at `path` is `true`.
pub(crate) fn flag(value: &Value, path: &[&str]) -> bool {
    at(value, path).and_then(Value::as_bool).unwrap_or(false)
}

/// The `key=value` pairs of a string map at `path`, sorted by key (Go iterates maps in random
/// order; a preview picks one, the sorted one).
pub(crate) fn sorted_map(value: &Value, path: &[&str]) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = match at(value, path) {
        Some(Value::Object(map)) => map
            .iter()
            .map(|(k, v)| {
                let v = match v {
                    Value::String(s) => s.clone(),
                    Value::Null => String::new(),
                    other => other.to_string(),
                };
                (k.clone(), v)
            })
            .collect(),
        _ => Vec::new(),
    };
    out.sort();
    out
}

/// A reference to another object (`name`, `namespace`), as CAPRKE2's specs hold them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Ref {
    pub(crate) name: String,
    pub(crate) namespace: String,
}

impl Ref {
    /// The reference at `path`, the namespace defaulting to `namespace`; `None` when there is
    /// none or it names nothing.
    pub(crate) fn at(value: &Value, path: &[&str], namespace: &str) -> Option<Ref> {
        let r = at(value, path)?;
        let name = str_at(r, &["name"]).unwrap_or("");
        if name.is_empty() {
            return None;
        }
        let ns = str_at(r, &["namespace"]).filter(|n| !n.is_empty());
        Some(Ref {
            name: name.to_owned(),
            namespace: ns.unwrap_or(namespace).to_owned(),
        })
    }
}

impl std::fmt::Display for Ref {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}/{}",
            rke2_payload::terminal_safe(&self.namespace),
            rke2_payload::terminal_safe(&self.name)
        )
    }
}

/// Every object of the input.
#[derive(Debug, Default)]
pub(crate) struct Manifests {
    pub(crate) objects: Vec<Object>,
}

impl Manifests {
    /// The objects of a YAML text, each as written in file `t.yaml` without places (for the
    /// unit tests of the checks).
    #[cfg(test)]
    pub(crate) fn of_text(text: &str) -> Manifests {
        let objects = rke2_payload::objects(text.as_bytes()).expect("YAML");
        Manifests {
            objects: objects.into_iter().map(Object::of_value).collect(),
        }
    }

    pub(crate) fn of_kind<'m>(&'m self, kind: &'m str) -> impl Iterator<Item = &'m Object> + 'm {
        self.objects.iter().filter(move |o| o.kind() == kind)
    }

    pub(crate) fn find(&self, kind: &str, r: &Ref) -> Option<&Object> {
        self.objects
            .iter()
            .find(|o| o.kind() == kind && o.name() == r.name && o.namespace() == r.namespace)
    }

    /// The bytes of `key` of a Secret (`data` is base64, `stringData` is text; `stringData`
    /// wins, as the API server merges it). `Err` when the Secret is not in the input;
    /// `Ok(None)` when it is but has no such key.
    pub(crate) fn secret_key(&self, r: &Ref, key: &str) -> Result<Option<Vec<u8>>, Missing> {
        let secret = self.find("Secret", r).ok_or(Missing)?;
        if let Some(text) = secret.get(&["stringData", key]).and_then(Value::as_str) {
            return Ok(Some(text.as_bytes().to_vec()));
        }
        match secret.get(&["data", key]) {
            Some(Value::String(encoded)) => Ok(rke2_payload::codec::decode_base64(encoded)),
            _ => Ok(None),
        }
    }

    /// The text of `key` of a ConfigMap (`data`).
    pub(crate) fn config_map_key(&self, r: &Ref, key: &str) -> Result<Option<String>, Missing> {
        let cm = self.find("ConfigMap", r).ok_or(Missing)?;
        Ok(cm
            .get(&["data", key])
            .and_then(Value::as_str)
            .map(str::to_owned))
    }

    /// Every key and text of a ConfigMap's `data`, sorted by key.
    pub(crate) fn config_map_data(&self, r: &Ref) -> Result<Vec<(String, String)>, Missing> {
        let cm = self.find("ConfigMap", r).ok_or(Missing)?;
        Ok(sorted_map(&cm.value, &["data"]))
    }
}

/// A referenced object is not in the input.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Missing;

/// Every `${VAR}` left in the string values under `value` (the names, each once, in order).
pub(crate) fn unsubstituted(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::String(s) => {
            let mut rest = s.as_str();
            while let Some(at) = rest.find("${") {
                rest = &rest[at + 2..];
                let Some(end) = rest.find('}') else { break };
                let name = &rest[..end];
                let valid = !name.is_empty()
                    && name.chars().all(|c| {
                        c.is_ascii_alphanumeric() || c == '_' || c == ':' || c == '=' || c == '-'
                    });
                if valid && !out.iter().any(|n| n == name) {
                    out.push(name.to_owned());
                }
                rest = &rest[end + 1..];
            }
        }
        Value::Array(items) => items.iter().for_each(|v| unsubstituted(v, out)),
        Value::Object(map) => map.values().for_each(|v| unsubstituted(v, out)),
        _ => {}
    }
}
