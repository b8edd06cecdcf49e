//! The compiled tree of schema nodes and its bounds, and the two public faces of it: [`Schema`]
//! (any dialect) and [`VariableSchema`] (a ClusterClass variable's). Reading a schema into the
//! tree is `compile.rs`; checking a value against it `validate.rs`, with `values.rs` for what
//! values are and `formats.rs` for the string formats; defaults and the pruning of nulls
//! `defaults.rs`.

mod compile;
mod defaults;
mod formats;
mod rules;
mod validate;
mod values;

use std::collections::HashMap;

use regex::Regex;
use serde_json::Value;

use compile::compile;
use defaults::{default_value, invalid_defaults, prune_nulls};
use validate::validate;

pub use rules::MAX_RULE_BYTES;
pub(crate) use rules::{Outcome, Rule};
#[cfg(test)]
pub(crate) use values::nearest;

use crate::Violation;

/// The most schema nodes one schema may compile to.
pub const MAX_NODES: usize = 100_000;
/// The deepest nesting of a schema (a value is only followed as deep as its schema goes).
pub const MAX_DEPTH: usize = 64;
/// The most nodes (schema × value) one validation visits.
pub const MAX_STEPS: u64 = 4_000_000;
/// The most violations one validation keeps; the rest are counted in a last one.
pub const MAX_VIOLATIONS: usize = 200;

/// Why a schema cannot be used. Messages quote the schema (never a value).
///
/// ```
/// use payload_kube_schema::{Dialect, Schema, SchemaCompileError};
/// use serde_json::json;
///
/// let error = Schema::compile(&json!({"type": "text"}), Dialect::Crd).unwrap_err();
/// assert!(matches!(error, SchemaCompileError::UnknownType { .. }));
/// assert_eq!(error.to_string(), ": unknown type `text`");
/// let error = Schema::compile(&json!({"properties": {"a": {"minLength": -1}}}), Dialect::Crd)
///     .unwrap_err();
/// assert_eq!(error.to_string(), "properties.a: `minLength` must be a non-negative integer");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SchemaCompileError {
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
    /// A CEL rule (`x-kubernetes-validations`) that cannot be compiled: it does not parse, or
    /// it is longer or more deeply nested than the bounds ([`MAX_RULE_BYTES`]).
    #[error("{at}: the CEL rule `{rule}` {reason}")]
    Rule {
        /// Where in the schema.
        at: String,
        /// The rule.
        rule: String,
        /// Why it cannot be compiled.
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
    /// `x-kubernetes-validations`, compiled (CRDs only).
    rules: Vec<Rule>,
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
            rules: Vec::new(),
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
    fn mark_root_metadata(&mut self) {
        if let Some(&i) = self.index.get("metadata")
            && let Some((_, node)) = self.properties.get_mut(i)
        {
            let mut meta = Node::any(true);
            meta.object_meta = true;
            *node = meta;
        }
    }
}

/// Which dialect a schema is read in: which keywords it has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    /// A CRD's `openAPIV3Schema` (apiextensions.k8s.io/v1 JSONSchemaProps).
    Crd,
    /// A Cluster API variable schema (Cluster API's own JSONSchemaProps).
    ClusterApiVariable,
}

/// A compiled schema: checks values ([`Schema::validate`]) and fills in defaults
/// ([`Schema::default_value`]) as the API server does.
///
/// ```
/// use payload_kube_schema::{Dialect, Schema};
/// use serde_json::json;
///
/// let schema = Schema::compile(
///     &json!({"type": "object", "properties": {
///         "replicas": {"type": "integer", "minimum": 1, "default": 1},
///         "mode": {"type": "string", "enum": ["fast", "slow"]},
///     }}),
///     Dialect::Crd,
/// )?;
/// assert_eq!(schema.default_value(Some(json!({}))), Some(json!({"replicas": 1})));
/// let messages: Vec<String> =
///     schema.validate(&json!({"mode": "medium"})).iter().map(|v| v.message()).collect();
/// assert_eq!(messages, ["mode: must be one of: fast, slow"]);
/// # Ok::<(), payload_kube_schema::SchemaCompileError>(())
/// ```
#[derive(Debug)]
pub struct Schema {
    /// The compiled root.
    root: Node,
    /// `x-kubernetes-validations` rules met (not checked).
    cel_rules: usize,
}

impl Schema {
    /// Compiles the JSON of an OpenAPI v3 schema read in `dialect`: its keywords checked for
    /// shape, its patterns compiled, its size bounded ([`MAX_NODES`], [`MAX_DEPTH`]).
    ///
    /// # Errors
    ///
    /// [`SchemaCompileError`] when the schema is not one: a keyword of the wrong shape, an
    /// unknown type, a pattern that does not compile, a schema too large or too deep.
    pub fn compile(openapi: &Value, dialect: Dialect) -> Result<Schema, SchemaCompileError> {
        let (root, cel_rules) = compile(openapi, dialect)?;
        Ok(Self { root, cel_rules })
    }

    /// Compiles a CRD version's `openAPIV3Schema` as the schema of whole objects of that kind:
    /// [`Dialect::Crd`], and the root's `metadata` checked loosely as the API server checks a
    /// custom resource's ObjectMeta (the CRD says only `type: object` there); `status` is
    /// checked as the schema says.
    ///
    /// ```
    /// use payload_kube_schema::Schema;
    /// use serde_json::json;
    ///
    /// let schema = Schema::custom_resource(&json!({"type": "object", "properties": {
    ///     "apiVersion": {"type": "string"}, "kind": {"type": "string"},
    ///     "metadata": {"type": "object"},
    ///     "spec": {"type": "object", "properties": {"size": {"type": "integer"}}},
    /// }}))?;
    /// let object = json!({"apiVersion": "example.com/v1", "kind": "Thing",
    ///     "metadata": {"name": "a", "labels": {"x": "y"}}, "spec": {"size": 3}});
    /// assert!(schema.validate(&object).is_empty());
    /// let bad = json!({"metadata": {"name": 1}, "spec": {"size": "3"}});
    /// let messages: Vec<String> = schema.validate(&bad).iter().map(|v| v.message()).collect();
    /// assert_eq!(messages, [
    ///     "metadata.name: must be of type string, not an integer",
    ///     "spec.size: must be of type integer, not a string",
    /// ]);
    /// # Ok::<(), payload_kube_schema::SchemaCompileError>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As [`Schema::compile`].
    pub fn custom_resource(openapi: &Value) -> Result<Schema, SchemaCompileError> {
        let mut schema = Self::compile(openapi, Dialect::Crd)?;
        schema.root.mark_root_metadata();
        Ok(schema)
    }

    /// How many CEL rules (`x-kubernetes-validations`) the schema has. In [`Dialect::Crd`] they
    /// are compiled and run by [`Schema::validate`]; in [`Dialect::ClusterApiVariable`] they are
    /// counted only (a ClusterClass's rules are the input's, not run).
    pub fn cel_rules(&self) -> usize {
        self.cel_rules
    }

    /// The problems of `value`: schema validation as the API server's custom resource
    /// validation does it, after defaulting (a missing `required` field with a `default` is not
    /// missing), then unknown fields (those the structural part of the schema does not declare
    /// and does not keep). At most [`MAX_VIOLATIONS`] are listed, then one that counts the rest;
    /// past [`MAX_STEPS`] the check stops with one that says so. The CEL rules of a
    /// [`Dialect::Crd`] schema are run on the values at their nodes ([`Problem::Rule`](crate::Problem::Rule)) unless
    /// a problem of type, enum, bounds or a missing field was found, as the API server skips
    /// them then; a rule that evaluates to anything but `false` is not a problem (see the
    /// crate documentation).
    ///
    /// ```
    /// use payload_kube_schema::{Problem, Schema};
    /// use serde_json::json;
    ///
    /// let schema = Schema::custom_resource(&json!({"type": "object", "properties": {
    ///     "spec": {"type": "object", "properties": {
    ///         "data": {"type": "string"}, "config": {"type": "string"}},
    ///         "x-kubernetes-validations": [{
    ///             "rule": "!has(self.data) || !has(self.config)",
    ///             "message": "Only config or data could be populated at once"}]},
    /// }}))?;
    /// assert!(schema.validate(&json!({"spec": {"data": "a"}})).is_empty());
    /// let problems = schema.validate(&json!({"spec": {"data": "a", "config": "b"}}));
    /// assert!(matches!(problems[0].problem, Problem::Rule { .. }));
    /// assert_eq!(problems[0].message(), "spec: Only config or data could be populated at once (rule: !has(self.data) || !has(self.config))");
    /// # Ok::<(), payload_kube_schema::SchemaCompileError>(())
    /// ```
    pub fn validate(&self, value: &Value) -> Vec<Violation> {
        validate(&self.root, value)
    }

    /// Structural defaulting, as the API server does it: with no value (or null where the
    /// schema is not nullable), the schema's top-level `default` (itself defaulted further), or
    /// `None` when it has none; with a value, the `default`s of absent (or null and not
    /// nullable) properties of objects that exist, recursively, through `additionalProperties`
    /// and array items. Nothing is created for an absent parent object.
    ///
    /// ```
    /// use payload_kube_schema::{Dialect, Schema};
    /// use serde_json::json;
    ///
    /// let schema = Schema::compile(&json!({"type": "object", "properties": {
    ///     "tls": {"type": "object", "properties": {"insecure": {"type": "boolean", "default": false}}},
    /// }}), Dialect::Crd)?;
    /// assert_eq!(schema.default_value(Some(json!({}))), Some(json!({})));
    /// assert_eq!(schema.default_value(Some(json!({"tls": {}}))), Some(json!({"tls": {"insecure": false}})));
    /// assert_eq!(schema.default_value(None), None);
    /// # Ok::<(), payload_kube_schema::SchemaCompileError>(())
    /// ```
    pub fn default_value(&self, value: Option<Value>) -> Option<Value> {
        default_value(&self.root, value)
    }

    /// Removes the null fields of `value` whose schema is not nullable and has no default, as
    /// the API server does to a custom resource before defaulting it
    /// (`PruneNonNullableNullsWithoutDefaults`): such a null is dropped, not rejected. Nulls
    /// with a default are left for [`Schema::default_value`].
    ///
    /// ```
    /// use payload_kube_schema::{Dialect, Schema};
    /// use serde_json::json;
    ///
    /// let schema = Schema::compile(&json!({"type": "object", "properties": {
    ///     "a": {"type": "string"}, "b": {"type": "string", "nullable": true},
    ///     "c": {"type": "string", "default": "x"},
    /// }}), Dialect::Crd)?;
    /// let mut value = json!({"a": null, "b": null, "c": null});
    /// schema.prune_nulls(&mut value);
    /// assert_eq!(value, json!({"b": null, "c": null}));
    /// assert_eq!(schema.default_value(Some(value)), Some(json!({"b": null, "c": "x"})));
    /// # Ok::<(), payload_kube_schema::SchemaCompileError>(())
    /// ```
    pub fn prune_nulls(&self, value: &mut Value) {
        prune_nulls(&self.root, value, 0);
    }

    /// Every `default` of the schema's structural part (the root's, its `properties`', `items`'
    /// and `additionalProperties`', not those inside `allOf`, `anyOf`, `oneOf` or `not`) that its
    /// own schema refuses once defaulted further, as the API server's `ValidateDefaults` finds
    /// them: each with where the default is written in the schema.
    ///
    /// ```
    /// use payload_kube_schema::{Dialect, Schema};
    /// use serde_json::json;
    ///
    /// let schema = Schema::compile(&json!({"type": "object", "properties": {
    ///     "cni": {"type": "string", "enum": ["calico", "cilium"], "default": "flannel"},
    ///     "port": {"type": "integer", "default": 6443},
    /// }}), Dialect::Crd)?;
    /// let invalid = schema.invalid_defaults();
    /// assert_eq!(invalid.len(), 1);
    /// assert_eq!(invalid[0].at, ["properties", "cni"]);
    /// assert_eq!(invalid[0].violation.problem.describe(), "must be one of: calico, cilium");
    /// # Ok::<(), payload_kube_schema::SchemaCompileError>(())
    /// ```
    pub fn invalid_defaults(&self) -> Vec<InvalidDefault> {
        invalid_defaults(&self.root)
    }
}

/// A `default` its own schema refuses ([`Schema::invalid_defaults`]).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct InvalidDefault {
    /// Where the default's schema is, as keys of the schema's JSON from the root
    /// (`["properties", "cni"]`; empty for the root's own `default`).
    pub at: Vec<String>,
    /// What is wrong with the default (its path is inside the default's value).
    pub violation: Violation,
}

/// A ClusterClass variable's schema (the `openAPIV3Schema` of `spec.variables[].schema` in
/// v1beta1, of `spec.variables[].schema` / `status.variables[].definitions[].schema` in
/// v1beta2), read as Cluster API reads it: [`Dialect::ClusterApiVariable`], with the checks and
/// the defaulting of Cluster API's `ValidateClusterVariable` and `DefaultClusterVariables`.
///
/// ```
/// use payload_kube_schema::VariableSchema;
/// use serde_json::json;
///
/// let schema = VariableSchema::compile(&json!({
///     "type": "object",
///     "default": {"registry": {}},
///     "properties": {"registry": {"type": "object", "properties": {
///         "host": {"type": "string", "default": "docker.io"},
///     }}},
/// }))?;
/// // Unset: the top-level default, defaulted further.
/// assert_eq!(schema.default_value(None), Some(json!({"registry": {"host": "docker.io"}})));
/// // A field the schema does not declare is rejected, with the nearest declared name.
/// let messages: Vec<String> = schema
///     .validate(&json!({"registry": {"hots": "x"}}))
///     .iter()
///     .map(|v| v.message())
///     .collect();
/// assert_eq!(messages, ["registry.hots: is not a field of the schema (did you mean host?)"]);
/// # Ok::<(), payload_kube_schema::SchemaCompileError>(())
/// ```
#[derive(Debug)]
pub struct VariableSchema {
    /// The compiled schema (its CEL rules, `x-kubernetes-validations`, are not checked).
    schema: Schema,
}

impl VariableSchema {
    /// Compiles a variable's `openAPIV3Schema`. Keys Cluster API's `JSONSchemaProps` does not
    /// have (`nullable`, `x-kubernetes-list-type`, …) are ignored, as the API server drops them.
    ///
    /// # Errors
    ///
    /// As [`Schema::compile`].
    pub fn compile(openapi: &Value) -> Result<VariableSchema, SchemaCompileError> {
        let schema = Schema::compile(openapi, Dialect::ClusterApiVariable)?;
        Ok(Self { schema })
    }

    /// The problems of a variable's value, as Cluster API's `ValidateClusterVariable` finds
    /// them after defaulting: schema validation, then unknown fields (those not declared in the
    /// schema where `x-kubernetes-preserve-unknown-fields` is not set). CEL rules are not
    /// checked. Null (a variable set to `null`) is invalid wherever the schema sets a type.
    pub fn validate(&self, value: &Value) -> Vec<Violation> {
        self.schema.validate(value)
    }

    /// Structural defaulting as the API server and Cluster API's `DefaultClusterVariables` do
    /// it: with no value (or null), the schema's top-level `default` (itself defaulted further),
    /// or `None` when it has none; with a value, the `default`s of absent (or null) properties
    /// of objects that exist, recursively, through `additionalProperties` and array items.
    pub fn default_value(&self, value: Option<Value>) -> Option<Value> {
        self.schema.default_value(value)
    }

    /// The defaults of the schema that it refuses, as the ClusterClass webhook finds them
    /// ([`Schema::invalid_defaults`]).
    pub fn invalid_defaults(&self) -> Vec<InvalidDefault> {
        self.schema.invalid_defaults()
    }
}
