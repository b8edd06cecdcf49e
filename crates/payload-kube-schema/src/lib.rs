//! Kubernetes structural OpenAPI v3 schemas: the `openAPIV3Schema` of a CustomResourceDefinition,
//! or the schema of a Cluster API ClusterClass variable, compiled once into a tree ([`Schema`],
//! [`VariableSchema`]), then values checked against it ([`Violation`]s) and defaulted as the API
//! server does it. The crate knows schemas and JSON values, nothing of any particular resource:
//! the caller brings the schema.
//!
//! ```
//! use payload_kube_schema::{Dialect, Problem, Schema};
//! use serde_json::json;
//!
//! let schema = Schema::compile(
//!     &json!({
//!         "type": "object",
//!         "required": ["name"],
//!         "properties": {
//!             "name": {"type": "string", "maxLength": 5},
//!             "replicas": {"type": "integer", "minimum": 1, "default": 1},
//!         },
//!     }),
//!     Dialect::Crd,
//! )?;
//! let value = schema.default_value(Some(json!({"name": "web"})));
//! assert_eq!(value, Some(json!({"name": "web", "replicas": 1})));
//!
//! let problems = schema.validate(&json!({"name": "frontend", "replica": 2}));
//! let messages: Vec<String> = problems.iter().map(|v| v.message()).collect();
//! assert_eq!(
//!     messages,
//!     [
//!         "name: must be at most 5 characters (found 8)",
//!         "replica: is not a field of the schema (did you mean replicas?)",
//!     ]
//! );
//! assert!(matches!(problems[1].problem, Problem::UnknownField { .. }));
//! # Ok::<(), payload_kube_schema::SchemaCompileError>(())
//! ```
//!
//! Semantics, and where they come from:
//!
//! - **Validation** follows the API server's custom resource validation
//!   (`apiextensions-apiserver/pkg/apiserver/validation`, kube-openapi's validators): `type`
//!   (an integer-valued number is an integer, as Go's JSON does; `1.5` is not), `nullable`,
//!   `x-kubernetes-int-or-string`, `enum`, `pattern` (an unanchored search, RE2 syntax),
//!   `minLength`/`maxLength` in characters, `minimum`/`maximum` with the OpenAPI 3.0 boolean
//!   `exclusiveMinimum`/`exclusiveMaximum`, `minItems`/`maxItems`, `minProperties`/
//!   `maxProperties`, `required`, `uniqueItems`, `allOf`/`anyOf`/`oneOf`/`not`, and the
//!   uniqueness of `x-kubernetes-list-type: set` items and `map` keys. `format` is checked for
//!   `date-time`, `date`, `byte`, `ipv4`, `ipv6`, `cidr` and `uuid` on strings (other formats are
//!   not checked, as the API server ignores formats it does not know), and for `int32`/`int64`
//!   on integers (the API server does not, but the controller's typed decoding fails on them).
//! - **Unknown fields** follow structural pruning (`.../schema/pruning`): only the structural
//!   part of a schema (not the insides of `allOf`/`anyOf`/`oneOf`/`not`) declares fields; a field
//!   of an object is kept when it is in `properties`, when `additionalProperties` is a schema or
//!   `true`, when the object has `x-kubernetes-preserve-unknown-fields: true`, and for
//!   `apiVersion`, `kind` and `metadata` of an `x-kubernetes-embedded-resource`. Every other
//!   field is reported, as Cluster API's `validateUnknownFields` rejects it in a variable value
//!   and kubectl's strict field validation rejects it in a manifest (the API server itself drops
//!   such a field from a custom resource silently).
//! - **Defaulting** follows structural defaulting (`.../schema/defaulting`, `Default`): for an
//!   object, each property with a `default` that is absent, or null and not nullable, gets a copy
//!   of the default; then every field is defaulted by its property's schema (or by
//!   `additionalProperties`), defaulted ones included; every item of an array by `items`.
//!   Nothing is created for an absent parent object. Validation judges a value as the API
//!   server does after defaulting: a missing `required` field with a `default` is not missing.
//! - **Variable schemas** are read as Cluster API reads `spec.variables[].schema.openAPIV3Schema`
//!   (its `JSONSchemaProps` converted by `convertToAPIExtensionsJSONSchemaProps`): only the
//!   fields that type has. It has no `nullable`, list types or embedded resources, so those keys
//!   are ignored (the API server drops them from a ClusterClass), and null is not a valid value
//!   where a type is set ([`VariableSchema`], [`Dialect::ClusterApiVariable`]).
//! - **Custom resources** ([`Schema::custom_resource`]): the root's `metadata` is checked
//!   loosely as ObjectMeta; before defaulting, the API server drops null fields that are not
//!   nullable and have no default ([`Schema::prune_nulls`]).
//!
//! - **CEL rules** (`x-kubernetes-validations`) of a CRD schema are compiled with it and run on
//!   the value at their node after the other checks, unless those found a problem of type,
//!   enum, bounds or a missing field (the API server's CEL validator skips them then: its
//!   `hasBlockingErr`). A rule fails when it evaluates to `false` ([`Problem::Rule`]); one the
//!   `cel` crate cannot evaluate (a Kubernetes CEL library function it lacks) is passed over, a
//!   transition rule (`oldSelf`) is not run on a create, `messageExpression` is not evaluated.
//!   The rules of a ClusterClass variable's schema are counted, not run.
//!
//! Not checked: validating webhooks, immutability and cross-object rules.
//!
//! No message quotes a value of the input: a problem says the type found or a length, and the
//! schema's own facts. A field name that is not in the schema is part of the path (it is the
//! input's key), so a caller that prints paths to a terminal must make them safe as it does for
//! any text of the input.
//!
//! Bounded work: a schema of at most [`MAX_NODES`] nodes and [`MAX_DEPTH`] levels (Cluster API's
//! CRDs go 15 deep); patterns compiled by the `regex` crate (linear-time matching) under a size
//! limit; a validation does at most [`MAX_STEPS`] steps and keeps at most [`MAX_VIOLATIONS`]
//! violations. No input makes it panic.

#![deny(missing_docs)]

mod schema;
#[cfg(test)]
mod tests;

use std::fmt::Write as _;

pub use schema::{
    Dialect, InvalidDefault, MAX_DEPTH, MAX_NODES, MAX_RULE_BYTES, MAX_STEPS, MAX_VIOLATIONS,
    Schema, SchemaCompileError, VariableSchema,
};

/// One step of a path into a JSON value: a field of an object or an item of an array.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PathSeg {
    /// A field of an object.
    Key(String),
    /// An item of an array.
    Index(usize),
}

/// One problem: where, and what is allowed.
///
/// The message never quotes the value found (manifests may carry secrets): it says the type
/// found, e.g. "a string", or its length, and only schema facts (type, enum list, pattern,
/// bounds, field names).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    /// Where in the value, from its root.
    pub path: Vec<PathSeg>,
    /// What is wrong there.
    pub problem: Problem,
}

/// What is wrong at one place.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Problem {
    /// A field the schema does not declare (and does not keep as an unknown field).
    UnknownField {
        /// The fields the schema declares at that place, in the schema's order.
        allowed: Vec<String>,
        /// The nearest declared field, when one is close ("did you mean").
        suggestion: Option<String>,
    },
    /// A value of the wrong JSON type.
    Type {
        /// The schema's type ("string", "integer", "integer or string", …).
        expected: String,
        /// The type found: "a string", "an integer", "a number", "a boolean", "an object",
        /// "an array" or "null".
        found: &'static str,
    },
    /// A value outside the schema's `enum`.
    Enum {
        /// The allowed values, strings as they are, others as JSON.
        allowed: Vec<String>,
    },
    /// A string that does not match the schema's `pattern`.
    Pattern {
        /// The pattern.
        pattern: String,
    },
    /// A missing field listed in `required` (and without a `default`).
    Required {
        /// The missing field (also the last segment of the path).
        field: String,
    },
    /// A bound: length, number of items or fields, numeric range.
    Bounds {
        /// The bound broken, e.g. "at least 1", "at most 63 characters (found 70)".
        what: String,
    },
    /// A string (or an integer for `int32`) that is not of the schema's `format`.
    Format {
        /// The format: "date-time", "int32", …
        format: String,
    },
    /// A CEL rule of the schema (`x-kubernetes-validations`) that evaluates to `false` here.
    Rule {
        /// The rule, as the schema writes it.
        rule: String,
        /// The schema's message for it, when it has one.
        message: Option<String>,
    },
    /// Anything else (`anyOf` with no match, duplicates in a set, budgets).
    Other {
        /// One clause saying what is wrong.
        what: String,
    },
}

/// How many sibling field names an unknown-field message lists before it stops.
const LISTED_FIELDS: usize = 24;

impl Problem {
    /// One clause that follows the path, e.g. "is not a field of the schema (did you mean
    /// registrationMethod?)" or "must be one of: internal-first, internal-only-ips, …".
    pub fn describe(&self) -> String {
        match self {
            Self::UnknownField {
                suggestion: Some(near),
                ..
            } => {
                format!("is not a field of the schema (did you mean {near}?)")
            }
            Self::UnknownField {
                allowed,
                suggestion: None,
            } if allowed.is_empty() => {
                "is not a field of the schema (it declares no fields here)".to_owned()
            }
            Self::UnknownField {
                allowed,
                suggestion: None,
            } => {
                let mut text = String::from("is not a field of the schema (fields: ");
                text.push_str(
                    &allowed
                        .iter()
                        .take(LISTED_FIELDS)
                        .cloned()
                        .collect::<Vec<_>>()
                        .join(", "),
                );
                if allowed.len() > LISTED_FIELDS {
                    let _ = write!(text, ", and {} more", allowed.len() - LISTED_FIELDS);
                }
                text.push(')');
                text
            }
            Self::Type { expected, found } => format!("must be of type {expected}, not {found}"),
            Self::Enum { allowed } => format!("must be one of: {}", allowed.join(", ")),
            Self::Pattern { pattern } => format!("must match the pattern {pattern}"),
            Self::Required { .. } => "is required".to_owned(),
            Self::Bounds { what } => format!("must be {what}"),
            Self::Format { format } => format!("must be in the format {format}"),
            Self::Rule {
                rule,
                message: Some(message),
            } => format!("{message} (rule: {rule})"),
            Self::Rule {
                rule,
                message: None,
            } => format!("fails the rule {rule}"),
            Self::Other { what } => what.clone(),
        }
    }
}

impl Violation {
    /// The path as `spec.agentConfig.version` or `spec.files[0].path`: dotted keys, `[n]` for
    /// indices, a key that is not a plain name (`a-z`, `A-Z`, `0-9`, `_`, `-`) as `["key"]` in
    /// JSON quoting; `(root)` for the value itself.
    pub fn pointer(&self) -> String {
        pointer(&self.path)
    }

    /// `pointer()` and `describe()` in one line: "spec.replicas: must be of type integer, not
    /// a string".
    pub fn message(&self) -> String {
        format!("{}: {}", self.pointer(), self.problem.describe())
    }
}

/// A path as [`Violation::pointer`] writes it.
///
/// ```
/// use payload_kube_schema::{PathSeg, pointer};
///
/// let path = [
///     PathSeg::Key("spec".into()),
///     PathSeg::Key("files".into()),
///     PathSeg::Index(0),
///     PathSeg::Key("a.b".into()),
/// ];
/// assert_eq!(pointer(&path), r#"spec.files[0]["a.b"]"#);
/// assert_eq!(pointer(&[]), "(root)");
/// ```
pub fn pointer(path: &[PathSeg]) -> String {
    if path.is_empty() {
        return "(root)".to_owned();
    }
    let mut out = String::new();
    for seg in path {
        match seg {
            PathSeg::Index(index) => {
                let _ = write!(out, "[{index}]");
            }
            PathSeg::Key(key)
                if !key.is_empty()
                    && key
                        .bytes()
                        .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-') =>
            {
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(key);
            }
            PathSeg::Key(key) => {
                out.push('[');
                out.push_str(&serde_json::Value::String(key.clone()).to_string());
                out.push(']');
            }
        }
    }
    out
}

/// The README's example runs.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
