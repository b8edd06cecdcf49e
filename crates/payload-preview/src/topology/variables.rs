//! The variables: the Cluster's values defaulted and validated against the class's
//! definitions, the overrides of the control plane and of each worker, `builtin.cluster`, and
//! the merge of global and per-template variables a patch sees.

use rke2_payload::Check;
use serde_json::{Map, Value, json};

use super::{Expander, Plan, shown};
use crate::crds::VariableSchema;
use crate::manifests::{at, str_at};

/// One variable definition of a class.
pub(super) struct Definition {
    name: String,
    required: bool,
    schema: Option<VariableSchema>,
}

pub(super) fn definitions(spec: &Value) -> Vec<Definition> {
    spec.get("variables")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|v| Definition {
            name: str_at(v, &["name"]).unwrap_or("").to_owned(),
            required: v.get("required").and_then(Value::as_bool).unwrap_or(false),
            schema: v
                .pointer("/schema/openAPIV3Schema")
                .and_then(|s| VariableSchema::compile(s).ok()),
        })
        .collect()
}

impl<'a> Expander<'a> {
    /// The Cluster's variable values, defaulted and validated against the class's
    /// definitions; `None` (with findings) when one is wrong.
    pub(super) fn variables(
        &mut self,
        spec: &Value,
        topo: &Value,
        class_title: &str,
    ) -> Option<Map<String, Value>> {
        let defs = definitions(spec);
        let mut values: Map<String, Value> = Map::new();
        let mut ok = true;
        for v in topo
            .get("variables")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let name = str_at(v, &["name"]).unwrap_or("");
            if name == "builtin" {
                continue;
            }
            if !defs.iter().any(|d| d.name == name) {
                self.fail(
                    Check::TopologyVariableInvalid,
                    format!(
                        "spec.topology.variables sets {}, which {class_title} does not define",
                        shown(name, 60)
                    ),
                );
                ok = false;
                continue;
            }
            values.insert(
                name.to_owned(),
                v.get("value").cloned().unwrap_or(Value::Null),
            );
        }
        for d in &defs {
            let given = values.remove(&d.name);
            let value = d
                .schema
                .as_ref()
                .and_then(|s| s.default_value(given.clone()))
                .or(given);
            match value {
                None if d.required => {
                    self.fail(
                        Check::TopologyVariableInvalid,
                        format!(
                            "the required variable {} of {class_title} is not set and has no default",
                            shown(&d.name, 60)
                        ),
                    );
                    ok = false;
                }
                None => {}
                Some(value) => {
                    if let Some(schema) = &d.schema {
                        for violation in schema.validate(&value) {
                            self.fail(
                                Check::TopologyVariableInvalid,
                                format!(
                                    "variable {}{}: {}",
                                    shown(&d.name, 60),
                                    field_of(&violation),
                                    violation.problem.describe()
                                ),
                            );
                            ok = false;
                        }
                    }
                    values.insert(d.name.clone(), value);
                }
            }
        }
        ok.then_some(values)
    }

    /// A control plane's or worker's `variables.overrides`, defaulted and validated.
    pub(super) fn overrides(
        &mut self,
        topo: &Value,
        defs: &[Definition],
        what: &str,
    ) -> Map<String, Value> {
        let mut out = Map::new();
        for v in topo
            .pointer("/variables/overrides")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let name = str_at(v, &["name"]).unwrap_or("");
            let Some(d) = defs.iter().find(|d| d.name == name) else {
                self.fail(
                    Check::TopologyVariableInvalid,
                    format!(
                        "the {what} overrides variable {}, which the ClusterClass does not define",
                        shown(name, 60)
                    ),
                );
                continue;
            };
            let given = v.get("value").cloned().unwrap_or(Value::Null);
            let value = d
                .schema
                .as_ref()
                .and_then(|s| s.default_value(Some(given.clone())))
                .unwrap_or(given);
            if let Some(schema) = &d.schema {
                for violation in schema.validate(&value) {
                    self.fail(
                        Check::TopologyVariableInvalid,
                        format!(
                            "the {what} override of variable {}{}: {}",
                            shown(name, 60),
                            field_of(&violation),
                            violation.problem.describe()
                        ),
                    );
                }
            }
            out.insert(name.to_owned(), value);
        }
        out
    }

    /// `builtin.cluster`.
    pub(super) fn cluster_builtin(&self, plan: &Plan, uid: &str) -> Value {
        let cv = &self.cluster.value;
        let mut bc = json!({
            "name": self.cluster.name(),
            "namespace": plan.ns,
            "uid": uid,
            "topology": {
                "version": plan.version,
                "class": plan.class_name,
                "classNamespace": plan.class_ns,
                "classRef": {"name": plan.class_name, "namespace": plan.class_ns},
            },
        });
        if let Some(meta) = metadata_of(cv, &["metadata"]) {
            bc["metadata"] = meta;
        }
        let mut network = Map::new();
        if let Some(d) =
            str_at(cv, &["spec", "clusterNetwork", "serviceDomain"]).filter(|d| !d.is_empty())
        {
            network.insert("serviceDomain".into(), json!(d));
        }
        for (key, path) in [("services", "services"), ("pods", "pods")] {
            if let Some(blocks) = at(cv, &["spec", "clusterNetwork", path, "cidrBlocks"]) {
                network.insert(key.into(), blocks.clone());
            }
        }
        if !network.is_empty() {
            bc["network"] = Value::Object(network);
        }
        bc
    }
}

/// Global and item variables as `MergeVariableMaps` merges them: `builtin` key by key, the
/// item's value of any other variable over the global one.
pub(super) fn merge(globals: &Map<String, Value>, item: &Map<String, Value>) -> Value {
    let mut out = globals.clone();
    for (k, v) in item {
        if k == "builtin" {
            let b = out.entry("builtin").or_insert_with(|| json!({}));
            if let (Value::Object(b), Value::Object(v)) = (b, v) {
                for (k2, v2) in v {
                    b.insert(k2.clone(), v2.clone());
                }
            }
        } else {
            out.insert(k.clone(), v.clone());
        }
    }
    Value::Object(out)
}

/// `metadata.labels`/`annotations` at `path`, when either is set.
fn metadata_of(value: &Value, path: &[&str]) -> Option<Value> {
    let m = at(value, path)?;
    let labels = m.get("labels").cloned();
    let annotations = m.get("annotations").cloned();
    if labels.is_none() && annotations.is_none() {
        return None;
    }
    let mut out = json!({});
    if let Some(l) = labels {
        out["labels"] = l;
    }
    if let Some(a) = annotations {
        out["annotations"] = a;
    }
    Some(out)
}

/// `.field.path` of a violation inside a variable's value, `""` at the value itself.
fn field_of(v: &crate::crds::Violation) -> String {
    if v.path.is_empty() {
        String::new()
    } else {
        format!(".{}", v.pointer())
    }
}
