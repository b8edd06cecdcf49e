//! The validator and defaulter: a compiled tree of schema nodes for the subset of OpenAPI v3 that
//! Kubernetes structural schemas (CRDs) and Cluster API variable schemas allow.
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
//!   and kubectl's strict field validation rejects it in a manifest.
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
//!   where a type is set.
//!
//! Bounded work: a schema of at most [`MAX_NODES`] nodes and [`MAX_DEPTH`] levels (Cluster API's
//! and CAPRKE2's CRDs go 15 deep); patterns
//! compiled by the `regex` crate (linear-time matching) under a size limit; a validation does at
//! most [`MAX_STEPS`] steps and keeps at most [`MAX_VIOLATIONS`] violations.
//!
//! The parts: the tree and its bounds here; reading a schema into it (`compile.rs`); checking a
//! value against it (`validate.rs`, with `values.rs` for what values are and `formats.rs` for
//! the string formats); defaults and the pruning of nulls (`defaults.rs`).

mod compile;
mod defaults;
mod formats;
mod validate;
mod values;

use std::collections::HashMap;

use regex::Regex;
use serde_json::Value;

pub(crate) use compile::compile;
pub(crate) use defaults::{default_value, prune_nulls};
pub(crate) use validate::validate;
#[cfg(test)]
pub(crate) use values::nearest;

use super::Violation;

/// The most schema nodes one schema may compile to.
pub(crate) const MAX_NODES: usize = 100_000;
/// The deepest nesting of a schema (a value is only followed as deep as its schema goes).
pub(crate) const MAX_DEPTH: usize = 64;
/// The most nodes (schema × value) one validation visits.
pub(crate) const MAX_STEPS: u64 = 4_000_000;
/// The most violations one validation keeps; the rest are counted in a last one.
pub(crate) const MAX_VIOLATIONS: usize = 200;

/// Why a variable's schema cannot be used. Messages quote the schema (never a value).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum SchemaCompileError {
    /// A schema or subschema that is not a JSON object.
    #[error("{at}: a schema must be an object")]
    NotAnObject {
        /// Where in the schema (`properties.a.items`; empty for the root).
        at: String,
    },
    /// A keyword whose value has the wrong shape.
    #[error("{at}: `{keyword}` must be {expected}")]
    Keyword {
        /// Where in the schema.
        at: String,
        /// The keyword.
        keyword: &'static str,
        /// What it must be.
        expected: &'static str,
    },
    /// A `type` the schema language does not have.
    #[error("{at}: unknown type `{ty}`")]
    UnknownType {
        /// Where in the schema.
        at: String,
        /// The type named.
        ty: String,
    },
    /// A `pattern` the regex engine cannot compile.
    #[error("{at}: pattern {pattern} cannot be compiled: {reason}")]
    Pattern {
        /// Where in the schema.
        at: String,
        /// The pattern.
        pattern: String,
        /// The engine's reason.
        reason: String,
    },
    /// A schema larger or deeper than the bounds.
    #[error("{at}: the schema is larger or deeper than this validator handles")]
    TooLarge {
        /// Where in the schema the bound was reached.
        at: String,
    },
}

/// The JSON types a schema names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ty {
    /// `string`.
    String,
    /// `integer`.
    Integer,
    /// `number`.
    Number,
    /// `boolean`.
    Boolean,
    /// `object`.
    Object,
    /// `array`.
    Array,
}

impl Ty {
    /// The schema's name of the type.
    fn name(self) -> &'static str {
        match self {
            Self::String => "string",
            Self::Integer => "integer",
            Self::Number => "number",
            Self::Boolean => "boolean",
            Self::Object => "object",
            Self::Array => "array",
        }
    }
}

/// What `additionalProperties` says.
#[derive(Debug)]
enum Additional {
    /// Not set (or `false`): only declared properties are fields.
    Unset,
    /// `true`: any field, any value.
    Any,
    /// A schema every undeclared field's value must match.
    Schema(Box<Node>),
}

/// `x-kubernetes-list-type`.
#[derive(Debug, PartialEq, Eq)]
enum ListType {
    /// `atomic` or not set.
    Atomic,
    /// `set`: no item twice.
    Set,
    /// `map`: no two items with the same `x-kubernetes-list-map-keys`.
    Map(Vec<String>),
}

/// One compiled schema.
#[derive(Debug)]
pub(crate) struct Node {
    /// `type`, if set.
    ty: Option<Ty>,
    /// `nullable: true` (CRDs only).
    nullable: bool,
    /// `x-kubernetes-int-or-string: true`.
    int_or_string: bool,
    /// `x-kubernetes-preserve-unknown-fields: true`.
    preserve_unknown: bool,
    /// `x-kubernetes-embedded-resource: true`.
    embedded: bool,
    /// Part of the structural schema (declares fields), not inside a logical junctor.
    structural: bool,
    /// The loose ObjectMeta check of a CRD's root `metadata`.
    object_meta: bool,
    /// `properties`, in the schema's order.
    properties: Vec<(String, Node)>,
    /// Index of `properties` by name.
    index: HashMap<String, usize>,
    /// `additionalProperties`.
    additional: Additional,
    /// `required`.
    required: Vec<String>,
    /// `enum`.
    enumeration: Vec<Value>,
    /// `pattern`, as written and compiled.
    pattern: Option<(String, Regex)>,
    /// `format`.
    format: Option<String>,
    /// `minimum` and whether it is exclusive.
    minimum: Option<(f64, bool)>,
    /// `maximum` and whether it is exclusive.
    maximum: Option<(f64, bool)>,
    /// `minLength`.
    min_length: Option<u64>,
    /// `maxLength`.
    max_length: Option<u64>,
    /// `minItems`.
    min_items: Option<u64>,
    /// `maxItems`.
    max_items: Option<u64>,
    /// `minProperties`.
    min_properties: Option<u64>,
    /// `maxProperties`.
    max_properties: Option<u64>,
    /// `uniqueItems: true`.
    unique_items: bool,
    /// `x-kubernetes-list-type` (CRDs only).
    list_type: ListType,
    /// `items`.
    items: Option<Box<Node>>,
    /// `allOf`.
    all_of: Vec<Node>,
    /// `anyOf`.
    any_of: Vec<Node>,
    /// `oneOf`.
    one_of: Vec<Node>,
    /// `not`.
    not: Option<Box<Node>>,
    /// `default`.
    default: Option<Value>,
}

impl Node {
    /// A node that checks nothing.
    fn any(structural: bool) -> Self {
        Self {
            ty: None,
            nullable: false,
            int_or_string: false,
            preserve_unknown: false,
            embedded: false,
            structural,
            object_meta: false,
            properties: Vec::new(),
            index: HashMap::new(),
            additional: Additional::Unset,
            required: Vec::new(),
            enumeration: Vec::new(),
            pattern: None,
            format: None,
            minimum: None,
            maximum: None,
            min_length: None,
            max_length: None,
            min_items: None,
            max_items: None,
            min_properties: None,
            max_properties: None,
            unique_items: false,
            list_type: ListType::Atomic,
            items: None,
            all_of: Vec::new(),
            any_of: Vec::new(),
            one_of: Vec::new(),
            not: None,
            default: None,
        }
    }

    /// The schema of a declared property.
    fn property(&self, name: &str) -> Option<&Node> {
        self.index
            .get(name)
            .and_then(|&i| self.properties.get(i))
            .map(|(_, node)| node)
    }

    /// Makes the root's `metadata` property the loose ObjectMeta check the API server applies
    /// to a custom resource's metadata (a CRD's schema says only `type: object` there).
    pub(crate) fn mark_root_metadata(&mut self) {
        if let Some(&i) = self.index.get("metadata")
            && let Some((_, node)) = self.properties.get_mut(i)
        {
            let mut meta = Node::any(true);
            meta.object_meta = true;
            *node = meta;
        }
    }
}

/// Which dialect a schema is read in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Dialect {
    /// A CRD's `openAPIV3Schema` (apiextensions.k8s.io/v1 JSONSchemaProps).
    Crd,
    /// A Cluster API variable schema (Cluster API's own JSONSchemaProps).
    ClusterApiVariable,
}

/// A ClusterClass variable's schema (the `openAPIV3Schema` of `spec.variables[].schema` in
/// v1beta1, of `spec.variables[].schema` / `status.variables[].definitions[].schema` in
/// v1beta2), read as Cluster API reads it.
#[derive(Debug)]
pub(crate) struct VariableSchema {
    /// The compiled schema (its CEL rules, `x-kubernetes-validations`, are not checked).
    root: Node,
}

impl VariableSchema {
    /// Compiles a variable's `openAPIV3Schema`. Keys Cluster API's `JSONSchemaProps` does not
    /// have (`nullable`, `x-kubernetes-list-type`, …) are ignored, as the API server drops them.
    pub(crate) fn compile(openapi: &Value) -> Result<VariableSchema, SchemaCompileError> {
        let (root, _) = compile(openapi, Dialect::ClusterApiVariable)?;
        Ok(Self { root })
    }

    /// The problems of a variable's value, as Cluster API's `ValidateClusterVariable` finds
    /// them after defaulting: schema validation, then unknown fields (those not declared in the
    /// schema where `x-kubernetes-preserve-unknown-fields` is not set). CEL rules are not
    /// checked. Null (a variable set to `null`) is invalid wherever the schema sets a type.
    pub(crate) fn validate(&self, value: &Value) -> Vec<Violation> {
        validate(&self.root, value)
    }

    /// Structural defaulting as the API server and Cluster API's `DefaultClusterVariables` do
    /// it: with no value (or null), the schema's top-level `default` (itself defaulted further),
    /// or `None` when it has none; with a value, the `default`s of absent (or null) properties
    /// of objects that exist, recursively, through `additionalProperties` and array items.
    pub(crate) fn default_value(&self, value: Option<Value>) -> Option<Value> {
        default_value(&self.root, value)
    }
}
