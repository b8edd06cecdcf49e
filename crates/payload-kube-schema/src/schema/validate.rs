//! Validation: one run of a value against a compiled schema, with its step and violation
//! budgets.

use std::collections::HashMap;

use serde_json::{Map, Value};

use super::formats::format_ok;
use super::values::{canonical, count, found, is_integer, json_eq, nearest, show_number};
use super::{Additional, ListType, MAX_DEPTH, MAX_STEPS, MAX_VIOLATIONS, Node, Outcome, Ty};
use crate::{PathSeg, Problem, Violation};

/// Validates `value` against the schema rooted at `root`.
pub(crate) fn validate(root: &Node, value: &Value) -> Vec<Violation> {
    let mut run = Run {
        out: Vec::new(),
        errors: 0,
        path: Vec::new(),
        steps: 0,
        exhausted: false,
        rules: Vec::new(),
    };
    run.check(root, value, 0);
    // The API server runs the CEL rules only when no problem of type, enum, bounds or a
    // missing field was found (apiextensions-apiserver's `hasBlockingErr`).
    let blocked = run.out.iter().any(|v| {
        matches!(
            v.problem,
            Problem::Type { .. }
                | Problem::Enum { .. }
                | Problem::Bounds { .. }
                | Problem::Required { .. }
        )
    });
    if !blocked {
        for violation in std::mem::take(&mut run.rules) {
            run.errors += 1;
            if run.out.len() < MAX_VIOLATIONS {
                run.out.push(violation);
            }
        }
    }
    let dropped = run.errors.saturating_sub(run.out.len());
    if run.exhausted {
        run.out.push(Violation {
            path: Vec::new(),
            problem: Problem::Other {
                what: "is too large to check completely (validation stopped)".to_owned(),
            },
        });
    } else if dropped > 0 {
        run.out.push(Violation {
            path: Vec::new(),
            problem: Problem::Other {
                what: format!("has {dropped} more problems, not listed"),
            },
        });
    }
    run.out
}

/// The fields of ObjectMeta a manifest may set (the loose check of a root `metadata`).
const OBJECT_META_FIELDS: &[&str] = &[
    "name",
    "generateName",
    "namespace",
    "labels",
    "annotations",
    "finalizers",
    "ownerReferences",
    "uid",
    "resourceVersion",
    "generation",
    "creationTimestamp",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "managedFields",
    "selfLink",
];

/// The state of one validation.
struct Run {
    /// Violations kept.
    out: Vec<Violation>,
    /// Violations found (kept or not).
    errors: usize,
    /// The current place.
    path: Vec<PathSeg>,
    /// Steps taken.
    steps: u64,
    /// The step budget ran out.
    exhausted: bool,
    /// The CEL rules that failed, said after the other checks (if no problem blocks them).
    rules: Vec<Violation>,
}

impl Run {
    /// Records a problem at the current place (plus `extra`).
    fn report(&mut self, extra: Option<PathSeg>, problem: Problem) {
        self.errors += 1;
        if self.out.len() < MAX_VIOLATIONS {
            let mut path = self.path.clone();
            path.extend(extra);
            self.out.push(Violation { path, problem });
        }
    }

    /// Records that the value here (plus `extra`) is not of the `expected` type.
    fn wrong_type(&mut self, extra: Option<PathSeg>, expected: &str, value: &Value) {
        self.report(
            extra,
            Problem::Type {
                expected: expected.to_owned(),
                found: found(value),
            },
        );
    }

    /// Checks `value` against `node` and says whether it passed, keeping nothing it found.
    fn trial(&mut self, node: &Node, value: &Value, depth: usize) -> (bool, Option<Violation>) {
        let (kept, errors) = (self.out.len(), self.errors);
        self.check(node, value, depth);
        let passed = self.errors == errors;
        let first = self.out.get(kept).cloned();
        self.out.truncate(kept);
        self.errors = errors;
        (passed, first)
    }

    /// Checks `value` against `node` at the current place.
    fn check(&mut self, node: &Node, value: &Value, depth: usize) {
        self.steps += 1;
        if self.steps > MAX_STEPS {
            self.exhausted = true;
        }
        if self.exhausted {
            return;
        }
        if depth > MAX_DEPTH {
            self.report(
                None,
                Problem::Other {
                    what: "is nested too deeply to check".to_owned(),
                },
            );
            return;
        }
        if node.object_meta {
            self.check_object_meta(value);
            return;
        }
        if value.is_null() {
            if node.nullable {
                return;
            }
            if node.int_or_string {
                self.wrong_type(None, "integer or string", value);
            } else if let Some(ty) = node.ty {
                self.wrong_type(None, ty.name(), value);
            } else {
                self.check_enum(node, value);
            }
            return;
        }
        if !self.check_type(node, value) {
            return;
        }
        self.check_enum(node, value);
        match value {
            Value::String(s) => self.check_string(node, s),
            Value::Number(n) => self.check_number(node, n),
            Value::Object(map) => self.check_object(node, map, depth),
            Value::Array(items) => self.check_array(node, items, depth),
            Value::Bool(_) | Value::Null => {}
        }
        self.check_junctors(node, value, depth);
        self.check_rules(node, value);
    }

    /// The CEL rules of a structural node (a node inside a junctor declares none the API
    /// server runs). Each run is one step.
    fn check_rules(&mut self, node: &Node, value: &Value) {
        if !node.structural {
            return;
        }
        for rule in &node.rules {
            self.steps += 1;
            if self.steps > MAX_STEPS {
                self.exhausted = true;
                return;
            }
            if rule.run(value) == Outcome::Fails && self.rules.len() < MAX_VIOLATIONS {
                let mut path = self.path.clone();
                path.extend(rule.field_path.iter().cloned());
                self.rules.push(Violation {
                    path,
                    problem: Problem::Rule {
                        rule: rule.source.clone(),
                        message: rule.message.clone(),
                    },
                });
            }
        }
    }

    /// `allOf`, `anyOf`, `oneOf` and `not`.
    fn check_junctors(&mut self, node: &Node, value: &Value, depth: usize) {
        for sub in &node.all_of {
            self.check(sub, value, depth + 1);
        }
        if !node.any_of.is_empty() {
            let mut reasons = Vec::new();
            let mut passed = false;
            for sub in &node.any_of {
                let (ok, first) = self.trial(sub, value, depth + 1);
                if ok {
                    passed = true;
                    break;
                }
                reasons.extend(first.map(|v| self.relative(&v)));
            }
            if !passed && !self.exhausted {
                let what = if reasons.is_empty() {
                    "must match one of the schemas of anyOf".to_owned()
                } else {
                    format!(
                        "must match one of the schemas of anyOf: {}",
                        reasons.join("; or ")
                    )
                };
                self.report(None, Problem::Other { what });
            }
        }
        if !node.one_of.is_empty() {
            let mut matched = 0usize;
            for sub in &node.one_of {
                matched += usize::from(self.trial(sub, value, depth + 1).0);
            }
            if matched != 1 && !self.exhausted {
                self.report(
                    None,
                    Problem::Other {
                        what: format!(
                            "must match exactly one of the schemas of oneOf (matches {matched})"
                        ),
                    },
                );
            }
        }
        if let Some(sub) = &node.not
            && self.trial(sub, value, depth + 1).0
            && !self.exhausted
        {
            self.report(
                None,
                Problem::Other {
                    what: "must not match the schema under not".to_owned(),
                },
            );
        }
    }

    /// A violation found in a trial, said relative to the current place.
    fn relative(&self, violation: &Violation) -> String {
        let below = violation.path.get(self.path.len()..).unwrap_or_default();
        if below.is_empty() {
            violation.problem.describe()
        } else {
            format!("{} {}", crate::pointer(below), violation.problem.describe())
        }
    }

    /// The type check; false when the value is of the wrong type (nothing more is checked).
    fn check_type(&mut self, node: &Node, value: &Value) -> bool {
        let ok = if node.int_or_string {
            matches!(value, Value::String(_)) || matches!(value, Value::Number(n) if is_integer(n))
        } else {
            match node.ty {
                None => true,
                Some(Ty::String) => value.is_string(),
                Some(Ty::Integer) => matches!(value, Value::Number(n) if is_integer(n)),
                Some(Ty::Number) => value.is_number(),
                Some(Ty::Boolean) => value.is_boolean(),
                Some(Ty::Object) => value.is_object(),
                Some(Ty::Array) => value.is_array(),
            }
        };
        if !ok {
            let expected = if node.int_or_string {
                "integer or string"
            } else {
                node.ty.map_or("", Ty::name)
            };
            self.wrong_type(None, expected, value);
        }
        ok
    }

    /// `enum`.
    fn check_enum(&mut self, node: &Node, value: &Value) {
        if !node.enumeration.is_empty()
            && !node
                .enumeration
                .iter()
                .any(|allowed| json_eq(allowed, value))
        {
            let allowed = node
                .enumeration
                .iter()
                .map(|v| match v {
                    Value::String(s) if s.is_empty() => "\"\"".to_owned(),
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                })
                .collect();
            self.report(None, Problem::Enum { allowed });
        }
    }

    /// Lengths, pattern and format of a string.
    fn check_string(&mut self, node: &Node, s: &str) {
        if node.min_length.is_some() || node.max_length.is_some() {
            let length = s.chars().count() as u64;
            if let Some(min) = node.min_length.filter(|&min| length < min) {
                self.report(
                    None,
                    Problem::Bounds {
                        what: format!(
                            "at least {} (found {length})",
                            count(min, "character", "characters")
                        ),
                    },
                );
            }
            if let Some(max) = node.max_length.filter(|&max| length > max) {
                self.report(
                    None,
                    Problem::Bounds {
                        what: format!(
                            "at most {} (found {length})",
                            count(max, "character", "characters")
                        ),
                    },
                );
            }
        }
        if let Some((pattern, regex)) = &node.pattern
            && !regex.is_match(s)
        {
            self.report(
                None,
                Problem::Pattern {
                    pattern: pattern.clone(),
                },
            );
        }
        if let Some(format) = &node.format
            && !format_ok(format, s)
        {
            self.report(
                None,
                Problem::Format {
                    format: format.clone(),
                },
            );
        }
    }

    /// Range and integer format of a number.
    fn check_number(&mut self, node: &Node, n: &serde_json::Number) {
        let value = n.as_f64().unwrap_or(f64::NAN);
        if let Some((min, exclusive)) = node.minimum
            && ((exclusive && value <= min) || value < min)
        {
            let word = if exclusive {
                "greater than"
            } else {
                "at least"
            };
            self.report(
                None,
                Problem::Bounds {
                    what: format!("{word} {}", show_number(min)),
                },
            );
        }
        if let Some((max, exclusive)) = node.maximum
            && ((exclusive && value >= max) || value > max)
        {
            let word = if exclusive { "less than" } else { "at most" };
            self.report(
                None,
                Problem::Bounds {
                    what: format!("{word} {}", show_number(max)),
                },
            );
        }
        if is_integer(n) {
            let (fits, format) = match node.format.as_deref() {
                Some("int32") => (
                    value >= f64::from(i32::MIN) && value <= f64::from(i32::MAX),
                    "int32",
                ),
                Some("int64") => (n.as_i64().is_some() || value.abs() < 9.2e18, "int64"),
                _ => (true, ""),
            };
            if !fits {
                self.report(
                    None,
                    Problem::Format {
                        format: format.to_owned(),
                    },
                );
            }
        }
    }

    /// Field count, `required`, declared and unknown fields of an object.
    fn check_object(&mut self, node: &Node, map: &Map<String, Value>, depth: usize) {
        let fields = map.len() as u64;
        if let Some(min) = node.min_properties.filter(|&min| fields < min) {
            self.report(
                None,
                Problem::Bounds {
                    what: format!(
                        "at least {} (found {fields})",
                        count(min, "field", "fields")
                    ),
                },
            );
        }
        if let Some(max) = node.max_properties.filter(|&max| fields > max) {
            self.report(
                None,
                Problem::Bounds {
                    what: format!("at most {} (found {fields})", count(max, "field", "fields")),
                },
            );
        }
        for field in &node.required {
            let defaulted = node.property(field).is_some_and(|p| p.default.is_some());
            if !map.contains_key(field) && !defaulted {
                self.report(
                    Some(PathSeg::Key(field.clone())),
                    Problem::Required {
                        field: field.clone(),
                    },
                );
            }
        }
        for (key, child) in map {
            if self.exhausted {
                return;
            }
            self.path.push(PathSeg::Key(key.clone()));
            if let Some(property) = node.property(key) {
                // A null the defaulter replaces is not checked.
                if !(child.is_null() && !property.nullable && property.default.is_some()) {
                    self.check(property, child, depth + 1);
                }
            } else if let Additional::Schema(additional) = &node.additional {
                self.check(additional, child, depth + 1);
            } else if matches!(node.additional, Additional::Any)
                || node.preserve_unknown
                || !node.structural
            {
                // Kept as it is.
            } else if node.embedded && matches!(key.as_str(), "apiVersion" | "kind") {
                if !child.is_string() && !child.is_null() {
                    self.wrong_type(None, "string", child);
                }
            } else if node.embedded && key == "metadata" {
                self.check_object_meta(child);
            } else {
                let allowed: Vec<String> = node
                    .properties
                    .iter()
                    .map(|(name, _)| name.clone())
                    .collect();
                let suggestion = nearest(key, allowed.iter().map(String::as_str));
                self.report(
                    None,
                    Problem::UnknownField {
                        allowed,
                        suggestion,
                    },
                );
            }
            self.path.pop();
        }
    }

    /// Item count, items, and uniqueness of an array.
    fn check_array(&mut self, node: &Node, items: &[Value], depth: usize) {
        let length = items.len() as u64;
        if let Some(min) = node.min_items.filter(|&min| length < min) {
            self.report(
                None,
                Problem::Bounds {
                    what: format!("at least {} (found {length})", count(min, "item", "items")),
                },
            );
        }
        if let Some(max) = node.max_items.filter(|&max| length > max) {
            self.report(
                None,
                Problem::Bounds {
                    what: format!("at most {} (found {length})", count(max, "item", "items")),
                },
            );
        }
        if let Some(item_schema) = &node.items {
            for (i, item) in items.iter().enumerate() {
                if self.exhausted {
                    return;
                }
                self.path.push(PathSeg::Index(i));
                self.check(item_schema, item, depth + 1);
                self.path.pop();
            }
        }
        let keys: Option<&[String]> = match &node.list_type {
            ListType::Map(keys) => Some(keys),
            _ => None,
        };
        if !(node.unique_items || node.list_type == ListType::Set || keys.is_some()) {
            return;
        }
        let mut seen: HashMap<String, usize> = HashMap::new();
        for (i, item) in items.iter().enumerate() {
            self.steps += 1;
            let mut text = String::new();
            match keys {
                Some(keys) => {
                    let Value::Object(map) = item else { continue };
                    for key in keys {
                        canonical(map.get(key).unwrap_or(&Value::Null), &mut text, depth);
                        text.push(';');
                    }
                }
                None => canonical(item, &mut text, depth),
            }
            if let Some(&first) = seen.get(&text) {
                let what = match keys {
                    Some(keys) => format!(
                        "must not have the same {} as item [{first}]",
                        keys.join(", ")
                    ),
                    None => format!("must not repeat item [{first}] (the items are a set)"),
                };
                self.report(Some(PathSeg::Index(i)), Problem::Other { what });
            } else {
                seen.insert(text, i);
            }
        }
    }

    /// The loose ObjectMeta check of a custom resource's `metadata`: its known fields and their
    /// types (strings, string maps, string lists, integers), nothing deeper.
    fn check_object_meta(&mut self, value: &Value) {
        let map = match value {
            Value::Null => return,
            Value::Object(map) => map,
            other => {
                self.wrong_type(None, "object", other);
                return;
            }
        };
        for (key, child) in map {
            if child.is_null() {
                continue;
            }
            self.path.push(PathSeg::Key(key.clone()));
            match key.as_str() {
                "name" | "generateName" | "namespace" | "uid" | "resourceVersion" | "selfLink"
                | "creationTimestamp" | "deletionTimestamp" => {
                    if !child.is_string() {
                        self.wrong_type(None, "string", child);
                    }
                }
                "labels" | "annotations" => match child {
                    Value::Object(entries) => {
                        for (name, entry) in entries {
                            if !entry.is_string() && !entry.is_null() {
                                self.wrong_type(Some(PathSeg::Key(name.clone())), "string", entry);
                            }
                        }
                    }
                    other => self.wrong_type(None, "object", other),
                },
                "finalizers" => match child {
                    Value::Array(entries) => {
                        for (i, entry) in entries.iter().enumerate() {
                            if !entry.is_string() {
                                self.wrong_type(Some(PathSeg::Index(i)), "string", entry);
                            }
                        }
                    }
                    other => self.wrong_type(None, "array", other),
                },
                "generation" | "deletionGracePeriodSeconds" => {
                    if !matches!(child, Value::Number(n) if is_integer(n)) {
                        self.wrong_type(None, "integer", child);
                    }
                }
                "ownerReferences" | "managedFields" => {
                    if !child.is_array() {
                        self.wrong_type(None, "array", child);
                    }
                }
                _ => {
                    let allowed: Vec<String> =
                        OBJECT_META_FIELDS.iter().map(|&f| f.to_owned()).collect();
                    let suggestion = nearest(key, OBJECT_META_FIELDS.iter().copied());
                    self.report(
                        None,
                        Problem::UnknownField {
                            allowed,
                            suggestion,
                        },
                    );
                }
            }
            self.path.pop();
        }
    }
}
