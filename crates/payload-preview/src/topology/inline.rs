//! The inline patches (`patches/engine.go`, `patches/inline/json_patch_generator.go`): which
//! templates a patch selects, `enabledIf`, the values of its JSON patches (`value`,
//! `valueFrom.variable`, `valueFrom.template`), and what of a patched template is kept.

use rke2_payload::Check;
use serde_json::{Map, Value};

use super::variables::merge;
use super::{Expander, Item, Plan, Role, Unexpandable, patch, shown};
use crate::crds::PathSeg;
use crate::manifests::{Patched, str_at};

impl<'a> Expander<'a> {
    /// One patch (the `index`th of the class) on every item; `false` (with a finding placed at
    /// the patch) when it fails.
    pub(super) fn apply_patch(
        &mut self,
        p: &Value,
        index: usize,
        plan: &Plan,
        globals: &Map<String, Value>,
        items: &mut [Item],
    ) -> bool {
        let class_title = plan.class_title.as_str();
        let patch_name = str_at(p, &["name"]).unwrap_or("").to_owned();
        let enabled_if = str_at(p, &["enabledIf"]).unwrap_or("");
        let defs: Vec<&Value> = p
            .get("definitions")
            .and_then(Value::as_array)
            .map(|d| d.iter().collect())
            .unwrap_or_default();
        // Where the patch, one of its definitions or one of their JSON patches is written.
        let site = |at: &[PathSeg]| {
            let mut path = vec![
                PathSeg::Key("spec".into()),
                PathSeg::Key("patches".into()),
                PathSeg::Index(index),
            ];
            path.extend_from_slice(at);
            plan.class
                .places
                .is_some()
                .then(|| plan.class.field_site(&path))
        };
        let json_patch = |j: usize, k: usize| {
            [
                PathSeg::Key("definitions".into()),
                PathSeg::Index(j),
                PathSeg::Key("jsonPatches".into()),
                PathSeg::Index(k),
            ]
        };
        for item in items.iter_mut() {
            let matching: Vec<(usize, &&Value)> = defs
                .iter()
                .enumerate()
                .filter(|(_, d)| selects(d.get("selector").unwrap_or(&Value::Null), item))
                .collect();
            if matching.is_empty() {
                continue;
            }
            let vars = merge(globals, &item.vars);
            let fail = |this: &mut Self, what: String, at: &[PathSeg]| {
                this.fail_at(
                    Check::TopologyExpansionFails,
                    format!(
                        "patch {} of {class_title} on {}: {what}; the cluster is not expanded",
                        shown(&patch_name, 60),
                        item.title
                    ),
                    site(at),
                );
                false
            };
            if !enabled_if.is_empty() {
                match template_value(enabled_if, &vars) {
                    Ok(Value::Bool(true)) => {}
                    Ok(_) => continue,
                    Err(e) => {
                        let at = [PathSeg::Key("enabledIf".into())];
                        return fail(self, format!("enabledIf fails: {e}"), &at);
                    }
                }
            }
            for (j, d) in matching {
                let ops = match json_patches(d, &vars) {
                    Ok(ops) => ops,
                    Err((k, what)) => return fail(self, what, &json_patch(j, k)),
                };
                let before = item.template.clone();
                if let Err(e) = patch::apply(&mut item.template, &ops) {
                    return fail(self, e.what, &json_patch(j, e.op));
                }
                item.patched
                    .extend(ops.iter().enumerate().map(|(k, op)| Patched {
                        path: patch::tokens(&op.path).unwrap_or_default(),
                        patch: patch_name.clone(),
                        class: class_title.to_owned(),
                        site: site(&json_patch(j, k)),
                    }));
                item.template = kept(before, &item.template);
            }
        }
        true
    }
}

/// The operations of a patch definition's `jsonPatches`, with the values of `add` and
/// `replace`; the index and failure of the first whose value cannot be had.
fn json_patches(definition: &Value, vars: &Value) -> Result<Vec<patch::Op>, (usize, String)> {
    let mut ops = Vec::new();
    for (j, jp) in definition
        .get("jsonPatches")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
    {
        let op = str_at(jp, &["op"]).unwrap_or("").to_owned();
        let path = str_at(jp, &["path"]).unwrap_or("").to_owned();
        let value = if op == "add" || op == "replace" {
            match patch_value(jp, vars) {
                Ok(v) => Some(v),
                Err(e) => {
                    return Err((
                        j,
                        format!("jsonPatches[{j}] ({op} {}): {e}", shown(&path, 80)),
                    ));
                }
            }
        } else {
            None
        };
        ops.push(patch::Op { op, path, value });
    }
    Ok(ops)
}

/// The template as it was `before` a patch with what is kept of the `patched` one: only its
/// spec, labels and annotations.
fn kept(before: Value, patched: &Value) -> Value {
    let mut kept = before;
    if let (Value::Object(k), Value::Object(patched)) = (&mut kept, patched) {
        match patched.get("spec") {
            Some(s) => {
                k.insert("spec".into(), s.clone());
            }
            None => {
                k.shift_remove("spec");
            }
        }
        for key in ["labels", "annotations"] {
            let new = patched.get("metadata").and_then(|m| m.get(key)).cloned();
            if let Some(Value::Object(meta)) = k.get_mut("metadata") {
                match new {
                    Some(v) => {
                        meta.insert(key.into(), v);
                    }
                    None => {
                        meta.shift_remove(key);
                    }
                }
            }
        }
    }
    kept
}

/// The patches of a class, or the refusal of the first `external` one (served by a runtime
/// extension, which cannot run offline).
pub(super) fn refuse_external(plan: &Plan) -> Result<Vec<Value>, Unexpandable> {
    let patches: Vec<Value> = plan
        .spec
        .get("patches")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    for p in &patches {
        let has_definitions = p
            .get("definitions")
            .and_then(Value::as_array)
            .is_some_and(|d| !d.is_empty());
        if !has_definitions && p.get("external").is_some() {
            return Err(Unexpandable {
                patch: shown(str_at(p, &["name"]).unwrap_or(""), 80),
                class: plan.class_title.clone(),
            });
        }
    }
    Ok(patches)
}

/// Whether a patch definition's selector picks `item` (`matchesSelector`).
fn selects(selector: &Value, item: &Item) -> bool {
    let s = |k: &str| str_at(selector, &[k]).unwrap_or("");
    if s("apiVersion") != str_at(&item.template, &["apiVersion"]).unwrap_or("")
        || s("kind") != str_at(&item.template, &["kind"]).unwrap_or("")
    {
        return false;
    }
    let r = selector.get("matchResources").unwrap_or(&Value::Null);
    let flag = |k: &str| r.get(k).and_then(Value::as_bool).unwrap_or(false);
    let names_match = |key: &str, class: &str| {
        r.pointer(&format!("/{key}/names"))
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .any(|n| {
                n == "*"
                    || n == class
                    || n.strip_prefix('*').is_some_and(|s| class.ends_with(s))
                    || n.strip_suffix('*').is_some_and(|p| class.starts_with(p))
            })
    };
    let class = || {
        item.vars
            .get("builtin")
            .and_then(|b| b.get("machineDeployment").or_else(|| b.get("machinePool")))
            .and_then(|m| m.get("class"))
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned()
    };
    match item.role {
        Role::InfrastructureCluster => flag("infrastructureCluster"),
        Role::ControlPlane | Role::ControlPlaneMachine => flag("controlPlane"),
        Role::Deployment(..) => names_match("machineDeploymentClass", &class()),
        Role::Pool(..) => names_match("machinePoolClass", &class()),
    }
}

/// A template's output read as YAML (sigs.k8s.io/yaml), as `renderValueTemplate` does.
///
/// A template's error may quote what it was given (`fail`'s message, a value it cannot range
/// over): every string of the variables is hidden in it, as a variable may hold a secret.
fn template_value(template: &str, vars: &Value) -> Result<Value, String> {
    let text =
        payload_gotmpl::render(template, vars).map_err(|e| without_values(&e.to_string(), vars))?;
    rke2_payload::codec::yaml11_document(&text)
        .map(|v| v.unwrap_or(Value::Null))
        .map_err(|e| without_values(&format!("its output is not YAML ({e})"), vars))
}

/// `text` with every string of `vars` (of 4 characters or more) replaced by `<value>`, the
/// longest first (a value holding another is hidden whole).
pub(super) fn without_values(text: &str, vars: &Value) -> String {
    fn collect<'v>(v: &'v Value, out: &mut Vec<&'v str>, depth: usize) {
        match v {
            // Kept longest first: inserted after every value at least as long.
            Value::String(s) if s.len() >= 4 && !out.contains(&s.as_str()) => {
                let at = out.partition_point(|known| known.len() >= s.len());
                out.insert(at, s);
            }
            Value::Array(items) if depth < 64 => {
                items.iter().for_each(|i| collect(i, out, depth + 1));
            }
            Value::Object(map) if depth < 64 => {
                map.values().for_each(|i| collect(i, out, depth + 1));
            }
            _ => {}
        }
    }
    let mut known = Vec::new();
    collect(vars, &mut known, 0);
    let mut out = text.to_owned();
    for value in known {
        if out.contains(value) {
            out = out.replace(value, "<value>");
        }
    }
    out
}

/// The value of one JSON patch (`calculateValue`).
fn patch_value(jp: &Value, vars: &Value) -> Result<Value, String> {
    let value = jp.get("value");
    let from = jp.get("valueFrom");
    match (value, from) {
        (Some(v), None) => Ok(v.clone()),
        (None, None) => Err("neither value nor valueFrom is set".into()),
        (Some(_), Some(_)) => Err("both value and valueFrom are set".into()),
        (None, Some(f)) => {
            let variable = str_at(f, &["variable"]).unwrap_or("");
            let template = str_at(f, &["template"]).unwrap_or("");
            match (variable.is_empty(), template.is_empty()) {
                (false, true) => variable_value(vars, variable),
                (true, false) => template_value(template, vars),
                (true, true) => Err("valueFrom sets neither variable nor template".into()),
                (false, false) => Err("valueFrom sets both variable and template".into()),
            }
        }
    }
}

/// A dotted variable path (`a.b[0].c`) in the variables (`GetVariableValue`).
fn variable_value(vars: &Value, path: &str) -> Result<Value, String> {
    let mut here = vars;
    for (i, segment) in path.split('.').enumerate() {
        let (key, index) = match (segment.find('['), segment.find(']')) {
            (None, None) => (segment, None),
            (Some(l), Some(r)) if l < r => {
                let n: usize = segment[l + 1..r].parse().map_err(|_| {
                    format!("variable {} has an invalid array index", shown(path, 80))
                })?;
                (&segment[..l], Some(n))
            }
            _ => return Err(format!("variable {} has invalid syntax", shown(path, 80))),
        };
        here = here.get(key).ok_or_else(|| {
            if i == 0 {
                format!("variable {} does not exist", shown(key, 60))
            } else {
                format!(
                    "variable {} does not exist: it has no {}",
                    shown(path, 80),
                    shown(key, 60)
                )
            }
        })?;
        if let Some(n) = index {
            let items = here.as_array().ok_or_else(|| {
                format!(
                    "variable {}: {} is not an array",
                    shown(path, 80),
                    shown(key, 60)
                )
            })?;
            here = items.get(n).ok_or_else(|| {
                format!("variable {}: the array has no index {n}", shown(path, 80))
            })?;
        }
    }
    Ok(here.clone())
}
