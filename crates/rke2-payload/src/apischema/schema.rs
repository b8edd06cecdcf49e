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

use std::collections::HashMap;
use std::fmt::Write as _;

use regex::{Regex, RegexBuilder};
use serde_json::{Map, Value};

use super::{PathSeg, Problem, Violation};

/// The most schema nodes one schema may compile to.
pub(crate) const MAX_NODES: usize = 100_000;
/// The deepest nesting of a schema (a value is only followed as deep as its schema goes).
pub(crate) const MAX_DEPTH: usize = 64;
/// The most nodes (schema × value) one validation visits.
pub(crate) const MAX_STEPS: u64 = 4_000_000;
/// The most violations one validation keeps; the rest are counted in a last one.
pub(crate) const MAX_VIOLATIONS: usize = 200;
/// The compiled size limit of one pattern.
const REGEX_SIZE_LIMIT: usize = 1 << 21;

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

/// Compiles one schema tree, counting nodes.
struct Compiler {
    /// The dialect.
    dialect: Dialect,
    /// Nodes compiled so far.
    nodes: usize,
    /// `x-kubernetes-validations` rules met (not checked).
    cel_rules: usize,
}

/// Reads a non-negative integer keyword.
fn keyword_u64(
    schema: &Map<String, Value>,
    keyword: &'static str,
    at: &str,
) -> Result<Option<u64>, SchemaCompileError> {
    match schema.get(keyword) {
        None | Some(Value::Null) => Ok(None),
        Some(value) => value
            .as_u64()
            .map(Some)
            .ok_or_else(|| SchemaCompileError::Keyword {
                at: at.to_owned(),
                keyword,
                expected: "a non-negative integer",
            }),
    }
}

/// Reads a number keyword.
fn keyword_f64(
    schema: &Map<String, Value>,
    keyword: &'static str,
    at: &str,
) -> Result<Option<f64>, SchemaCompileError> {
    match schema.get(keyword) {
        None | Some(Value::Null) => Ok(None),
        Some(value) => value
            .as_f64()
            .map(Some)
            .ok_or_else(|| SchemaCompileError::Keyword {
                at: at.to_owned(),
                keyword,
                expected: "a number",
            }),
    }
}

/// Reads a boolean keyword (absent is false).
fn keyword_bool(
    schema: &Map<String, Value>,
    keyword: &'static str,
    at: &str,
) -> Result<bool, SchemaCompileError> {
    match schema.get(keyword) {
        None | Some(Value::Null) => Ok(false),
        Some(Value::Bool(b)) => Ok(*b),
        Some(_) => Err(SchemaCompileError::Keyword {
            at: at.to_owned(),
            keyword,
            expected: "a boolean",
        }),
    }
}

/// Reads a string keyword.
fn keyword_str<'a>(
    schema: &'a Map<String, Value>,
    keyword: &'static str,
    at: &str,
) -> Result<Option<&'a str>, SchemaCompileError> {
    match schema.get(keyword) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(_) => Err(SchemaCompileError::Keyword {
            at: at.to_owned(),
            keyword,
            expected: "a string",
        }),
    }
}

/// Reads a list-of-strings keyword.
fn keyword_strings(
    schema: &Map<String, Value>,
    keyword: &'static str,
    at: &str,
) -> Result<Vec<String>, SchemaCompileError> {
    match schema.get(keyword) {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Array(items)) => items
            .iter()
            .map(|item| item.as_str().map(str::to_owned))
            .collect::<Option<Vec<_>>>()
            .ok_or_else(|| SchemaCompileError::Keyword {
                at: at.to_owned(),
                keyword,
                expected: "a list of strings",
            }),
        Some(_) => Err(SchemaCompileError::Keyword {
            at: at.to_owned(),
            keyword,
            expected: "a list of strings",
        }),
    }
}

/// Compiles a pattern as Go's `regexp` would read it: ASCII classes (`\d`, `\w`, `\s`) first,
/// Unicode when the pattern needs it (e.g. `.` on a string must match whole characters).
fn compile_pattern(pattern: &str) -> Result<Regex, regex::Error> {
    let build = |unicode: bool| {
        RegexBuilder::new(pattern)
            .unicode(unicode)
            .size_limit(REGEX_SIZE_LIMIT)
            .dfa_size_limit(REGEX_SIZE_LIMIT)
            .nest_limit(64)
            .build()
    };
    build(false).or_else(|_| build(true))
}

/// A child's place in the schema, for compile errors.
fn child_at(at: &str, step: &str) -> String {
    if at.is_empty() {
        step.to_owned()
    } else {
        format!("{at}.{step}")
    }
}

impl Compiler {
    /// Compiles `value` (a schema) found at `at`.
    fn node(
        &mut self,
        value: &Value,
        at: &str,
        depth: usize,
        structural: bool,
    ) -> Result<Node, SchemaCompileError> {
        self.nodes += 1;
        if self.nodes > MAX_NODES || depth > MAX_DEPTH {
            return Err(SchemaCompileError::TooLarge { at: at.to_owned() });
        }
        let Value::Object(schema) = value else {
            return Err(SchemaCompileError::NotAnObject { at: at.to_owned() });
        };
        let crd = self.dialect == Dialect::Crd;
        let mut node = Node::any(structural);
        node.ty = match keyword_str(schema, "type", at)? {
            None | Some("") => None,
            Some("string") => Some(Ty::String),
            Some("integer") => Some(Ty::Integer),
            Some("number") => Some(Ty::Number),
            Some("boolean") => Some(Ty::Boolean),
            Some("object") => Some(Ty::Object),
            Some("array") => Some(Ty::Array),
            Some(other) => {
                return Err(SchemaCompileError::UnknownType {
                    at: at.to_owned(),
                    ty: other.to_owned(),
                });
            }
        };
        node.nullable = crd && keyword_bool(schema, "nullable", at)?;
        node.int_or_string = keyword_bool(schema, "x-kubernetes-int-or-string", at)?;
        node.preserve_unknown = keyword_bool(schema, "x-kubernetes-preserve-unknown-fields", at)?;
        node.embedded = crd && keyword_bool(schema, "x-kubernetes-embedded-resource", at)?;
        node.required = keyword_strings(schema, "required", at)?;
        node.enumeration = match schema.get("enum") {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::Array(values)) => values.clone(),
            Some(_) => {
                return Err(SchemaCompileError::Keyword {
                    at: at.to_owned(),
                    keyword: "enum",
                    expected: "a list",
                });
            }
        };
        if let Some(pattern) = keyword_str(schema, "pattern", at)? {
            let regex = compile_pattern(pattern).map_err(|error| SchemaCompileError::Pattern {
                at: at.to_owned(),
                pattern: pattern.to_owned(),
                reason: error
                    .to_string()
                    .lines()
                    .last()
                    .unwrap_or_default()
                    .trim()
                    .to_owned(),
            })?;
            node.pattern = Some((pattern.to_owned(), regex));
        }
        node.format = keyword_str(schema, "format", at)?.map(str::to_owned);
        let exclusive_min = keyword_bool(schema, "exclusiveMinimum", at)?;
        let exclusive_max = keyword_bool(schema, "exclusiveMaximum", at)?;
        node.minimum = keyword_f64(schema, "minimum", at)?.map(|m| (m, exclusive_min));
        node.maximum = keyword_f64(schema, "maximum", at)?.map(|m| (m, exclusive_max));
        node.min_length = keyword_u64(schema, "minLength", at)?;
        node.max_length = keyword_u64(schema, "maxLength", at)?;
        node.min_items = keyword_u64(schema, "minItems", at)?;
        node.max_items = keyword_u64(schema, "maxItems", at)?;
        node.min_properties = keyword_u64(schema, "minProperties", at)?;
        node.max_properties = keyword_u64(schema, "maxProperties", at)?;
        node.unique_items = keyword_bool(schema, "uniqueItems", at)?;
        if crd {
            node.list_type = match keyword_str(schema, "x-kubernetes-list-type", at)? {
                Some("set") => ListType::Set,
                Some("map") => {
                    ListType::Map(keyword_strings(schema, "x-kubernetes-list-map-keys", at)?)
                }
                _ => ListType::Atomic,
            };
        }
        node.default = schema.get("default").filter(|d| !d.is_null()).cloned();
        if let Some(Value::Array(rules)) = schema.get("x-kubernetes-validations") {
            self.cel_rules += rules.len();
        }

        match schema.get("properties") {
            None | Some(Value::Null) => {}
            Some(Value::Object(properties)) => {
                for (name, sub) in properties {
                    let child = self.node(
                        sub,
                        &child_at(at, &format!("properties.{name}")),
                        depth + 1,
                        structural,
                    )?;
                    node.index.insert(name.clone(), node.properties.len());
                    node.properties.push((name.clone(), child));
                }
            }
            Some(_) => {
                return Err(SchemaCompileError::Keyword {
                    at: at.to_owned(),
                    keyword: "properties",
                    expected: "an object",
                });
            }
        }
        node.additional = match schema.get("additionalProperties") {
            None | Some(Value::Null) | Some(Value::Bool(false)) => Additional::Unset,
            Some(Value::Bool(true)) => Additional::Any,
            Some(sub) => Additional::Schema(Box::new(self.node(
                sub,
                &child_at(at, "additionalProperties"),
                depth + 1,
                structural,
            )?)),
        };
        node.items = match schema.get("items") {
            None | Some(Value::Null) => None,
            Some(sub) => Some(Box::new(self.node(
                sub,
                &child_at(at, "items"),
                depth + 1,
                structural,
            )?)),
        };
        for (keyword, list) in [
            ("allOf", &mut node.all_of),
            ("anyOf", &mut node.any_of),
            ("oneOf", &mut node.one_of),
        ] {
            match schema.get(keyword) {
                None | Some(Value::Null) => {}
                Some(Value::Array(subs)) => {
                    for (i, sub) in subs.iter().enumerate() {
                        list.push(self.node(
                            sub,
                            &child_at(at, &format!("{keyword}[{i}]")),
                            depth + 1,
                            false,
                        )?);
                    }
                }
                Some(_) => {
                    return Err(SchemaCompileError::Keyword {
                        at: at.to_owned(),
                        keyword: match keyword {
                            "allOf" => "allOf",
                            "anyOf" => "anyOf",
                            _ => "oneOf",
                        },
                        expected: "a list of schemas",
                    });
                }
            }
        }
        node.not = match schema.get("not") {
            None | Some(Value::Null) => None,
            Some(sub) => Some(Box::new(self.node(
                sub,
                &child_at(at, "not"),
                depth + 1,
                false,
            )?)),
        };
        Ok(node)
    }
}

/// Compiles a schema in a dialect: the root node and the number of CEL rules it carries.
pub(crate) fn compile(
    schema: &Value,
    dialect: Dialect,
) -> Result<(Node, usize), SchemaCompileError> {
    let mut compiler = Compiler {
        dialect,
        nodes: 0,
        cel_rules: 0,
    };
    let root = compiler.node(schema, "", 0, true)?;
    Ok((root, compiler.cel_rules))
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

/// See [`VariableSchema::default_value`].
pub(crate) fn default_value(root: &Node, value: Option<Value>) -> Option<Value> {
    let mut value = match value {
        None => root.default.clone()?,
        Some(Value::Null) if !root.nullable => match &root.default {
            Some(default) => default.clone(),
            None => Value::Null,
        },
        Some(value) => value,
    };
    apply_defaults(root, &mut value, 0);
    Some(value)
}

/// Removes the null fields of `value` whose schema is not nullable and has no default, as the
/// API server does before it defaults a custom resource
/// (`defaulting.PruneNonNullableNullsWithoutDefaults`): such a null is dropped, not rejected.
/// Those with a default are defaulted after ([`default_value`]).
pub(crate) fn prune_nulls(node: &Node, value: &mut Value, depth: usize) {
    if depth > MAX_DEPTH {
        return;
    }
    match value {
        Value::Object(map) => {
            map.retain(|name, child| {
                let schema = node.property(name).or(match &node.additional {
                    Additional::Schema(additional) => Some(&**additional),
                    _ => None,
                });
                !(child.is_null() && schema.is_some_and(|s| !s.nullable && s.default.is_none()))
            });
            for (name, child) in map.iter_mut() {
                if let Some(property) = node.property(name) {
                    prune_nulls(property, child, depth + 1);
                } else if let Additional::Schema(additional) = &node.additional {
                    prune_nulls(additional, child, depth + 1);
                }
            }
        }
        Value::Array(items) => {
            if let Some(item_schema) = &node.items {
                for item in items {
                    prune_nulls(item_schema, item, depth + 1);
                }
            }
        }
        _ => {}
    }
}

/// Structural defaulting of `value` in place (`defaulting.Default`).
fn apply_defaults(node: &Node, value: &mut Value, depth: usize) {
    if depth > MAX_DEPTH {
        return;
    }
    match value {
        Value::Object(map) => {
            for (name, property) in &node.properties {
                let Some(default) = &property.default else {
                    continue;
                };
                let missing = match map.get(name) {
                    None => true,
                    Some(Value::Null) => !property.nullable,
                    Some(_) => false,
                };
                if missing {
                    map.insert(name.clone(), default.clone());
                }
            }
            for (name, child) in map.iter_mut() {
                if let Some(property) = node.property(name) {
                    apply_defaults(property, child, depth + 1);
                } else if let Additional::Schema(additional) = &node.additional {
                    apply_defaults(additional, child, depth + 1);
                }
            }
        }
        Value::Array(items) => {
            if let Some(item_schema) = &node.items {
                for item in items {
                    apply_defaults(item_schema, item, depth + 1);
                }
            }
        }
        _ => {}
    }
}

/// Validates `value` against the schema rooted at `root`.
pub(crate) fn validate(root: &Node, value: &Value) -> Vec<Violation> {
    let mut run = Run {
        out: Vec::new(),
        errors: 0,
        path: Vec::new(),
        steps: 0,
        exhausted: false,
    };
    run.check(root, value, 0);
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
}

/// What a JSON value is, for messages.
fn found(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(n) if is_integer(n) => "an integer",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// An integer as Go's JSON sees one: any number without a fractional part.
fn is_integer(number: &serde_json::Number) -> bool {
    number.is_i64()
        || number.is_u64()
        || number
            .as_f64()
            .is_some_and(|f| f.is_finite() && f.fract() == 0.0)
}

/// A number of the schema, without a trailing `.0`.
fn show_number(value: f64) -> String {
    if value.fract() == 0.0 && value.abs() < 1e15 {
        format!("{value:.0}")
    } else {
        value.to_string()
    }
}

/// "1 character", "3 items".
fn count(n: u64, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// JSON equality as the API server compares (numbers by value, objects regardless of order).
fn json_eq(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => match (x.as_i64(), y.as_i64()) {
            (Some(x), Some(y)) => x == y,
            _ => x.as_f64() == y.as_f64(),
        },
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(x, y)| json_eq(x, y))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| json_eq(v, w)))
        }
        _ => a == b,
    }
}

/// A text equal for values [`json_eq`] calls equal (for finding duplicates in linear time).
fn canonical(value: &Value, out: &mut String, depth: usize) {
    if depth > MAX_DEPTH {
        out.push('…');
        return;
    }
    match value {
        Value::Null => out.push('n'),
        Value::Bool(b) => out.push(if *b { 't' } else { 'f' }),
        Value::Number(n) => {
            let as_integer = n.as_f64().filter(|f| f.fract() == 0.0 && f.abs() < 9.0e15);
            let _ = match (n.as_i64(), as_integer) {
                (Some(i), _) => write!(out, "#{i}"),
                #[expect(
                    clippy::cast_possible_truncation,
                    reason = "an integral value below 2^53"
                )]
                (None, Some(f)) => write!(out, "#{}", f as i64),
                (None, None) => write!(out, "#{:?}", n.as_f64().unwrap_or(f64::NAN)),
            };
        }
        Value::String(s) => {
            out.push('"');
            out.push_str(&s.replace('\\', "\\\\").replace('"', "\\\""));
            out.push('"');
        }
        Value::Array(items) => {
            out.push('[');
            for item in items {
                canonical(item, out, depth + 1);
                out.push(',');
            }
            out.push(']');
        }
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            out.push('{');
            for key in keys {
                canonical(&Value::String(key.clone()), out, depth + 1);
                out.push(':');
                if let Some(v) = map.get(key) {
                    canonical(v, out, depth + 1);
                }
                out.push(',');
            }
            out.push('}');
        }
    }
}

/// The declared name nearest to an unknown one, when it is close enough to be a typo.
pub(crate) fn nearest<'a>(
    unknown: &str,
    names: impl IntoIterator<Item = &'a str>,
) -> Option<String> {
    if unknown.len() > 64 {
        return None;
    }
    let wanted: Vec<char> = unknown.to_lowercase().chars().collect();
    let mut best: Option<(usize, &str)> = None;
    for name in names {
        let candidate: Vec<char> = name.to_lowercase().chars().collect();
        let distance = edit_distance(&wanted, &candidate);
        let limit = (wanted.len().max(candidate.len()) / 4).clamp(1, 3);
        if distance <= limit && best.is_none_or(|(d, _)| distance < d) {
            best = Some((distance, name));
        }
    }
    best.map(|(_, name)| name.to_owned())
}

/// Optimal string alignment distance (Levenshtein with adjacent transpositions).
fn edit_distance(a: &[char], b: &[char]) -> usize {
    let width = b.len() + 1;
    let mut rows = vec![0usize; (a.len() + 1) * width];
    for (j, cell) in rows.iter_mut().take(width).enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        rows[i * width] = i;
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut best = (rows[(i - 1) * width + j] + 1)
                .min(rows[i * width + j - 1] + 1)
                .min(rows[(i - 1) * width + j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                best = best.min(rows[(i - 2) * width + j - 2] + 1);
            }
            rows[i * width + j] = best;
        }
    }
    rows[a.len() * width + b.len()]
}

/// Whether a string is in a format (formats not listed here are not checked).
fn format_ok(format: &str, s: &str) -> bool {
    match format {
        "date-time" | "datetime" => is_date_time(s),
        "date" => is_date(s.as_bytes()),
        "byte" => {
            use base64::Engine as _;
            base64::engine::general_purpose::STANDARD.decode(s).is_ok()
        }
        "ipv4" => s.parse::<std::net::Ipv4Addr>().is_ok(),
        "ipv6" => s.contains(':') && s.parse::<std::net::IpAddr>().is_ok(),
        "cidr" => is_cidr(s),
        "uuid" => is_uuid(s),
        _ => true,
    }
}

/// `YYYY-MM-DD` with a plausible month and day.
fn is_date(b: &[u8]) -> bool {
    let digits =
        |r: std::ops::Range<usize>| b.get(r).is_some_and(|d| d.iter().all(u8::is_ascii_digit));
    if b.len() != 10
        || !digits(0..4)
        || b[4] != b'-'
        || !digits(5..7)
        || b[7] != b'-'
        || !digits(8..10)
    {
        return false;
    }
    let two = |i: usize| u32::from(b[i] - b'0') * 10 + u32::from(b[i + 1] - b'0');
    (1..=12).contains(&two(5)) && (1..=31).contains(&two(8))
}

/// RFC 3339 `date-time`: `YYYY-MM-DDTHH:MM:SS[.frac](Z|±HH:MM)`.
fn is_date_time(s: &str) -> bool {
    let b = s.as_bytes();
    if b.len() < 20 || !is_date(&b[..10]) || !matches!(b[10], b'T' | b't' | b' ') {
        return false;
    }
    let digit2 = |i: usize, max: u32| {
        b.get(i..i + 2)
            .is_some_and(|d| d.iter().all(u8::is_ascii_digit))
            && u32::from(b[i] - b'0') * 10 + u32::from(b[i + 1] - b'0') <= max
    };
    if !digit2(11, 23) || b[13] != b':' || !digit2(14, 59) || b[16] != b':' || !digit2(17, 60) {
        return false;
    }
    let mut i = 19;
    if b.get(i) == Some(&b'.') {
        i += 1;
        let start = i;
        while b.get(i).is_some_and(u8::is_ascii_digit) {
            i += 1;
        }
        if i == start {
            return false;
        }
    }
    match b.get(i) {
        Some(b'Z' | b'z') => i + 1 == b.len(),
        Some(b'+' | b'-') => {
            i + 6 == b.len() && digit2(i + 1, 23) && b[i + 3] == b':' && digit2(i + 4, 59)
        }
        _ => false,
    }
}

/// `address/prefix` with the prefix within the address's bits.
fn is_cidr(s: &str) -> bool {
    let Some((address, prefix)) = s.split_once('/') else {
        return false;
    };
    let Ok(prefix) = prefix.parse::<u8>() else {
        return false;
    };
    match address.parse::<std::net::IpAddr>() {
        Ok(std::net::IpAddr::V4(_)) => prefix <= 32,
        Ok(std::net::IpAddr::V6(_)) => prefix <= 128,
        Err(_) => false,
    }
}

/// `8-4-4-4-12` hexadecimal digits.
fn is_uuid(s: &str) -> bool {
    let groups: Vec<&str> = s.split('-').collect();
    groups.len() == 5
        && groups
            .iter()
            .zip([8, 4, 4, 4, 12])
            .all(|(g, n)| g.len() == n && g.bytes().all(|c| c.is_ascii_hexdigit()))
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
                self.report(
                    None,
                    Problem::Type {
                        expected: "integer or string".to_owned(),
                        found: "null",
                    },
                );
            } else if let Some(ty) = node.ty {
                self.report(
                    None,
                    Problem::Type {
                        expected: ty.name().to_owned(),
                        found: "null",
                    },
                );
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
            format!("{} {}", super::pointer(below), violation.problem.describe())
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
            self.report(
                None,
                Problem::Type {
                    expected: expected.to_owned(),
                    found: found(value),
                },
            );
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
                    self.report(
                        None,
                        Problem::Type {
                            expected: "string".to_owned(),
                            found: found(child),
                        },
                    );
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
                self.report(
                    None,
                    Problem::Type {
                        expected: "object".to_owned(),
                        found: found(other),
                    },
                );
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
                        self.report(
                            None,
                            Problem::Type {
                                expected: "string".to_owned(),
                                found: found(child),
                            },
                        );
                    }
                }
                "labels" | "annotations" => match child {
                    Value::Object(entries) => {
                        for (name, entry) in entries {
                            if !entry.is_string() && !entry.is_null() {
                                self.report(
                                    Some(PathSeg::Key(name.clone())),
                                    Problem::Type {
                                        expected: "string".to_owned(),
                                        found: found(entry),
                                    },
                                );
                            }
                        }
                    }
                    other => self.report(
                        None,
                        Problem::Type {
                            expected: "object".to_owned(),
                            found: found(other),
                        },
                    ),
                },
                "finalizers" => match child {
                    Value::Array(entries) => {
                        for (i, entry) in entries.iter().enumerate() {
                            if !entry.is_string() {
                                self.report(
                                    Some(PathSeg::Index(i)),
                                    Problem::Type {
                                        expected: "string".to_owned(),
                                        found: found(entry),
                                    },
                                );
                            }
                        }
                    }
                    other => self.report(
                        None,
                        Problem::Type {
                            expected: "array".to_owned(),
                            found: found(other),
                        },
                    ),
                },
                "generation" | "deletionGracePeriodSeconds" => {
                    if !matches!(child, Value::Number(n) if is_integer(n)) {
                        self.report(
                            None,
                            Problem::Type {
                                expected: "integer".to_owned(),
                                found: found(child),
                            },
                        );
                    }
                }
                "ownerReferences" | "managedFields" => {
                    if !child.is_array() {
                        self.report(
                            None,
                            Problem::Type {
                                expected: "array".to_owned(),
                                found: found(child),
                            },
                        );
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
