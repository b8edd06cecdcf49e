#![allow(dead_code)] // The first version builds no path yet.
//! OpenAPI v3 schemas as the API server reads them: a ClusterClass variable's schema, with
//! its defaults.

use serde_json::Value;

/// One place in a value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum PathSeg {
    /// An object's key.
    Key(String),
    /// An array's index.
    Index(usize),
}

/// One problem of a value against its schema.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Violation {
    /// Where.
    pub(crate) path: Vec<PathSeg>,
    /// What is wrong and what is allowed, one clause.
    pub(crate) what: String,
}

impl Violation {
    /// `a.b[0].c`.
    pub(crate) fn pointer(&self) -> String {
        let mut out = String::new();
        for seg in &self.path {
            match seg {
                PathSeg::Key(k) => {
                    if !out.is_empty() {
                        out.push('.');
                    }
                    out.push_str(&crate::codec::text::terminal_safe(k));
                }
                PathSeg::Index(i) => out.push_str(&format!("[{i}]")),
            }
        }
        out
    }
}

/// A ClusterClass variable's `openAPIV3Schema`.
#[derive(Debug, Clone)]
pub(crate) struct VariableSchema {
    schema: Value,
}

impl VariableSchema {
    /// The schema.
    pub(crate) fn compile(openapi: &Value) -> Result<VariableSchema, String> {
        Ok(VariableSchema {
            schema: openapi.clone(),
        })
    }

    /// The problems of `value`: its type against the schema's `type`.
    pub(crate) fn validate(&self, value: &Value) -> Vec<Violation> {
        let ty = self.schema.get("type").and_then(Value::as_str);
        let ok = match (ty, value) {
            (None, _) => true,
            (Some("string"), Value::String(_)) => true,
            (Some("integer"), Value::Number(n)) => n.is_i64() || n.is_u64(),
            (Some("number"), Value::Number(_)) => true,
            (Some("boolean"), Value::Bool(_)) => true,
            (Some("object"), Value::Object(_)) => true,
            (Some("array"), Value::Array(_)) => true,
            _ => false,
        };
        if ok {
            Vec::new()
        } else {
            vec![Violation {
                path: Vec::new(),
                what: format!("must be of type {}", ty.unwrap_or("")),
            }]
        }
    }

    /// The value with the schema's defaults: the top-level default when there is no value.
    pub(crate) fn default_value(&self, value: Option<Value>) -> Option<Value> {
        value.or_else(|| self.schema.get("default").cloned())
    }
}
