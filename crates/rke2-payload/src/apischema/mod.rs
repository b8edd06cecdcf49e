//! Kubernetes API schemas: Cluster API and CAPRKE2 objects checked against their CRD's OpenAPI v3
//! schema, and ClusterClass variable values checked and defaulted against the variable's
//! `openAPIV3Schema`.
//!
//! The CRD schemas are structural facts (types, fields, bounds, enums, patterns, defaults; no
//! descriptions) extracted from the CRDs of Cluster API and CAPRKE2 by `scripts/crd-schemas.py`
//! into `crds/<group>.json`, embedded in the library, parsed and compiled once per kind on first
//! use.
//!
//! The validator is this module's own (see `schema/`): the subset of OpenAPI v3 that Kubernetes
//! structural schemas allow. What follows whom:
//!
//! - value checks (type, enum, pattern, format, bounds, `required`, `anyOf`/`allOf`/`oneOf`/`not`,
//!   `nullable`, `x-kubernetes-int-or-string`, list types) follow the API server's custom resource
//!   validation (`k8s.io/apiextensions-apiserver/pkg/apiserver/validation`, built on kube-openapi);
//! - unknown fields follow structural pruning (`.../apiserver/schema/pruning`): a field not
//!   declared in `properties` of the structural part of the schema (not inside `anyOf` and the
//!   like) is unknown unless `additionalProperties` or `x-kubernetes-preserve-unknown-fields`
//!   keeps it. The API server drops such fields silently from a custom resource (kubectl's strict
//!   field validation rejects them); Cluster API rejects them in a variable value
//!   (`validateUnknownFields` in `internal/topology/variables`). Both are reported here;
//! - defaults follow structural defaulting (`.../apiserver/schema/defaulting`), as Cluster API's
//!   `DefaultClusterVariables` uses it;
//! - an object is checked as it is admitted (`CrdSchema::admit`): the CRD's defaults, then
//!   what the mutating webhooks of Cluster API and CAPRKE2 set (`admission.rs`), then the
//!   schema.
//!
//! Not checked: CEL rules (`x-kubernetes-validations`; counted by the extractor), validating
//! webhooks, immutability and cross-object rules.
//!
//! No message quotes a value of the input: a problem says the type found or a length, and the
//! schema's own facts. A field name that is not in the schema is part of the path (it is the
//! input's key), so a caller that prints paths to a terminal must make them safe as it does for
//! any text of the input.

mod admission;
mod crds;
mod schema;
#[cfg(test)]
mod tests;

use std::fmt::Write as _;

pub(crate) use crds::crd_schema;
pub(crate) use schema::VariableSchema;

pub(crate) use crate::codec::tree::PathSeg;

/// One problem: where, and what is allowed.
///
/// The message never quotes the value found (manifests may carry secrets): it says the type
/// found, e.g. "a string", or its length, and only schema facts (type, enum list, pattern,
/// bounds, field names).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Violation {
    /// Where in the value, from its root.
    pub(crate) path: Vec<PathSeg>,
    /// What is wrong there.
    pub(crate) problem: Problem,
}

/// What is wrong at one place.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Problem {
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
    pub(crate) fn describe(&self) -> String {
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
            Self::Other { what } => what.clone(),
        }
    }
}

impl Violation {
    /// The path as `spec.agentConfig.version` or `spec.files[0].path`: dotted keys, `[n]` for
    /// indices, a key that is not a plain name (`a-z`, `A-Z`, `0-9`, `_`, `-`) as `["key"]` in
    /// JSON quoting; `(root)` for the value itself.
    pub(crate) fn pointer(&self) -> String {
        pointer(&self.path)
    }

    /// `pointer()` and `describe()` in one line: "spec.replicas: must be of type integer, not
    /// a string".
    pub(crate) fn message(&self) -> String {
        format!("{}: {}", self.pointer(), self.problem.describe())
    }
}

/// See [`Violation::pointer`].
fn pointer(path: &[PathSeg]) -> String {
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
