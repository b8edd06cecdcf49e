//! CEL rules (`x-kubernetes-validations`) of a CRD schema: compiled once with the schema, run on
//! the value at their node as the API server's CEL validator runs them on a create.
//!
//! What is run, and what is not:
//!
//! - A rule is compiled by the `cel` crate (the CEL standard environment and its macros:
//!   `has`, `all`, `exists`, `exists_one`, `map`, `filter`). A rule that does not parse is a
//!   [`SchemaCompileError::Rule`], as the API server refuses such a CRD.
//! - A transition rule (one that names `oldSelf`) is not run: on a create there is no old
//!   object, and the API server does not run it either.
//! - A rule fails only when it evaluates to `false`. A rule the `cel` crate cannot evaluate (a
//!   function of the Kubernetes CEL libraries it lacks, such as `isURL` or `quantity`, a type
//!   it compares differently) is passed over rather than guessed: a false alarm would refuse an
//!   object the API server admits. The CRDs this crate is used with evaluate every rule.
//! - `messageExpression` is not evaluated; the rule's `message` is said, or the rule itself.
//! - Only rules of the structural part of a schema run (not inside `allOf`/`anyOf`/`oneOf`/
//!   `not`, where the API server does not allow them).

use std::sync::Arc;

use serde_json::{Map, Value};

use super::SchemaCompileError;
use crate::PathSeg;

/// The longest rule compiled, in bytes (a bound on the parser's work; the API server bounds a
/// rule by its estimated cost instead, which no rule of a real CRD comes near).
pub const MAX_RULE_BYTES: usize = 4096;

/// The deepest nesting of brackets a rule may have before it is compiled (the parser recurses
/// on each level).
const MAX_RULE_NESTING: usize = 32;

/// One compiled rule.
#[derive(Debug)]
pub(crate) struct Rule {
    /// The rule as the schema writes it.
    pub(crate) source: String,
    /// The schema's `message`, when it has one.
    pub(crate) message: Option<String>,
    /// The schema's `fieldPath`, when it has one that reads as a path below the node.
    pub(crate) field_path: Vec<PathSeg>,
    /// The program; `None` for a transition rule, which a create does not run.
    program: Option<Arc<cel::Program>>,
}

/// What a run of one rule says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Outcome {
    /// The rule holds (or is a transition rule, not run on a create).
    Holds,
    /// The rule evaluates to `false`.
    Fails,
    /// The rule could not be evaluated here; nothing is said.
    NotEvaluated,
}

/// The deepest nesting of `(`, `[` and `{` in a rule (outside its string literals, roughly: a
/// bracket inside a quoted string counts too, which only makes the bound stricter).
fn nesting(rule: &str) -> usize {
    let (mut depth, mut deepest) = (0usize, 0usize);
    for b in rule.bytes() {
        match b {
            b'(' | b'[' | b'{' => {
                depth += 1;
                deepest = deepest.max(depth);
            }
            b')' | b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    deepest
}

/// A `fieldPath` (`.spec.replicas`, `.items[0]`, `['a.b']`) as path steps; `None` when it is
/// not one this reader follows (the violation is then said at the rule's node).
fn field_path(text: &str) -> Option<Vec<PathSeg>> {
    let mut out = Vec::new();
    let mut rest = text;
    while !rest.is_empty() {
        if let Some(after) = rest.strip_prefix('.') {
            let end = after.find(['.', '[']).unwrap_or(after.len());
            let (name, tail) = after.split_at(end);
            if name.is_empty() {
                return None;
            }
            out.push(PathSeg::Key(name.to_owned()));
            rest = tail;
        } else if let Some(after) = rest.strip_prefix("['") {
            let end = after.find("']")?;
            out.push(PathSeg::Key(after[..end].to_owned()));
            rest = &after[end + 2..];
        } else if let Some(after) = rest.strip_prefix('[') {
            let end = after.find(']')?;
            out.push(PathSeg::Index(after[..end].parse().ok()?));
            rest = &after[end + 1..];
        } else {
            return None;
        }
    }
    Some(out)
}

impl Rule {
    /// Compiles one item of `x-kubernetes-validations` found at `at`.
    pub(crate) fn compile(item: &Value, at: &str) -> Result<Rule, SchemaCompileError> {
        let shape = || SchemaCompileError::Keyword {
            at: at.to_owned(),
            keyword: "x-kubernetes-validations",
            expected: "a list of objects with a string `rule`",
        };
        let Value::Object(item) = item else {
            return Err(shape());
        };
        let Some(Value::String(source)) = item.get("rule") else {
            return Err(shape());
        };
        let refuse = |reason: String| SchemaCompileError::Rule {
            at: at.to_owned(),
            rule: source.clone(),
            reason,
        };
        if source.len() > MAX_RULE_BYTES {
            return Err(refuse(format!("longer than {MAX_RULE_BYTES} bytes")));
        }
        if nesting(source) > MAX_RULE_NESTING {
            return Err(refuse(format!(
                "nested more than {MAX_RULE_NESTING} brackets deep"
            )));
        }
        let program = cel::Program::compile(source)
            .map_err(|_| refuse("does not parse as a CEL expression".to_owned()))?;
        let transition = program.references().has_variable("oldSelf");
        let text = |key: &str| match item.get(key) {
            Some(Value::String(s)) if !s.is_empty() => Some(s.clone()),
            _ => None,
        };
        Ok(Rule {
            message: text("message"),
            field_path: text("fieldPath")
                .and_then(|p| field_path(&p))
                .unwrap_or_default(),
            program: (!transition).then(|| Arc::new(program)),
            source: source.clone(),
        })
    }

    /// Runs the rule with `self` bound to `value`.
    pub(crate) fn run(&self, value: &Value) -> Outcome {
        let Some(program) = &self.program else {
            return Outcome::Holds;
        };
        let mut context = cel::Context::default();
        context.add_variable_from_value("self", to_cel(value, 0));
        match program.execute(&context) {
            Ok(cel::Value::Bool(true)) => Outcome::Holds,
            Ok(cel::Value::Bool(false)) => Outcome::Fails,
            _ => Outcome::NotEvaluated,
        }
    }
}

/// How deep below a rule's node a value is handed to CEL; deeper values are null (no rule
/// of a real CRD looks that far, and the conversion recurses).
const MAX_VALUE_DEPTH: usize = 64;

/// A JSON value as the API server hands it to CEL: integers as `int`, other numbers as
/// `double`, objects as maps with string keys; `depth` levels below the rule's node.
fn to_cel(value: &Value, depth: usize) -> cel::Value {
    if depth > MAX_VALUE_DEPTH {
        return cel::Value::Null;
    }
    match value {
        Value::Null => cel::Value::Null,
        Value::Bool(b) => cel::Value::Bool(*b),
        Value::Number(n) => match n.as_i64() {
            Some(i) => cel::Value::Int(i),
            None => cel::Value::Float(n.as_f64().unwrap_or(f64::NAN)),
        },
        Value::String(s) => cel::Value::String(Arc::new(s.clone())),
        Value::Array(items) => cel::Value::List(Arc::new(
            items.iter().map(|v| to_cel(v, depth + 1)).collect(),
        )),
        Value::Object(map) => object(map, depth),
    }
}

/// An object as a CEL map.
fn object(map: &Map<String, Value>, depth: usize) -> cel::Value {
    let entries: std::collections::HashMap<String, cel::Value> = map
        .iter()
        .map(|(key, value)| (key.clone(), to_cel(value, depth + 1)))
        .collect();
    cel::Value::from(entries)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::{Outcome, Rule, field_path};
    use crate::PathSeg;

    fn rule(source: &str) -> Rule {
        Rule::compile(&json!({"rule": source, "message": "m"}), "x").expect("compiles")
    }

    #[test]
    fn the_crds_rules_evaluate_on_values() {
        let either = rule("!has(self.data) || !has(self.config)");
        assert_eq!(either.run(&json!({"data": "x"})), Outcome::Holds);
        assert_eq!(either.run(&json!({})), Outcome::Holds);
        assert_eq!(
            either.run(&json!({"data": "x", "config": {"name": "c"}})),
            Outcome::Fails
        );
        let reserved = rule("!(self in ['Ready','Available'])");
        assert_eq!(reserved.run(&json!("Ready")), Outcome::Fails);
        assert_eq!(reserved.run(&json!("NodeReady")), Outcome::Holds);
        let count = rule("self.replicas <= 3 && size(self.name) < 10");
        assert_eq!(
            count.run(&json!({"replicas": 5, "name": "a"})),
            Outcome::Fails
        );
        assert_eq!(
            count.run(&json!({"replicas": 2, "name": "a"})),
            Outcome::Holds
        );
    }

    #[test]
    fn what_cannot_be_evaluated_is_not_a_failure() {
        // A function of the Kubernetes libraries the cel crate lacks.
        assert_eq!(rule("isURL(self)").run(&json!("x")), Outcome::NotEvaluated);
        // A missing key without has(): an evaluation error, not false.
        assert_eq!(rule("self.a == 1").run(&json!({})), Outcome::NotEvaluated);
        // A transition rule is not run on a create.
        assert_eq!(rule("self == oldSelf").run(&json!(1)), Outcome::Holds);
    }

    #[test]
    fn bad_rules_are_compile_errors_that_quote_the_schema_only() {
        let error = Rule::compile(&json!({"rule": "self.a ==="}), "p").unwrap_err();
        assert_eq!(
            error.to_string(),
            "p: the CEL rule `self.a ===` does not parse as a CEL expression"
        );
        let deep = format!("{}1{}", "(".repeat(40), ")".repeat(40));
        assert!(Rule::compile(&json!({ "rule": deep }), "p").is_err());
        assert!(Rule::compile(&json!({"message": "no rule"}), "p").is_err());
        assert!(Rule::compile(&json!("self"), "p").is_err());
    }

    #[test]
    fn a_deep_value_is_cut_not_followed() {
        let mut deep = json!(1);
        for _ in 0..200 {
            deep = json!([deep]);
        }
        // Followed to MAX_VALUE_DEPTH levels, then null.
        let mut here = super::to_cel(&deep, 0);
        let mut levels = 0;
        while let cel::Value::List(items) = here {
            levels += 1;
            here = items[0].clone();
        }
        assert_eq!(levels, super::MAX_VALUE_DEPTH + 1);
        assert_eq!(here, cel::Value::Null);
        let value = json!({"data": "x", "extra": deep});
        assert_eq!(
            rule("!has(self.data) || !has(self.config)").run(&value),
            Outcome::Holds
        );
    }

    #[test]
    fn field_paths_read_as_steps() {
        assert_eq!(
            field_path(".spec.items[2]['a.b']"),
            Some(vec![
                PathSeg::Key("spec".into()),
                PathSeg::Key("items".into()),
                PathSeg::Index(2),
                PathSeg::Key("a.b".into()),
            ])
        );
        assert_eq!(field_path("spec"), None);
        assert_eq!(field_path(".a[x]"), None);
    }
}
