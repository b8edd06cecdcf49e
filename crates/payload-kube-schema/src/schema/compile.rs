//! Reading a schema: the JSON of an OpenAPI v3 schema compiled into a tree of [`Node`]s, its
//! keywords checked for shape, its patterns compiled, its size bounded.

use regex::{Regex, RegexBuilder};
use serde_json::{Map, Value};

use super::{
    Additional, Dialect, ListType, MAX_DEPTH, MAX_NODES, Node, Rule, SchemaCompileError, Ty,
};

/// The compiled size limit of one pattern.
const REGEX_SIZE_LIMIT: usize = 1 << 21;

/// Compiles one schema tree, counting nodes.
struct Compiler {
    /// The dialect.
    dialect: Dialect,
    /// Nodes compiled so far.
    nodes: usize,
    /// `x-kubernetes-validations` rules met (compiled in a CRD, counted in a variable).
    cel_rules: usize,
}

/// Reads a keyword with `read`: absent or null is `None`; a value `read` refuses is the error
/// that the keyword must be `expected`.
fn keyword<'a, T>(
    schema: &'a Map<String, Value>,
    keyword: &'static str,
    at: &str,
    expected: &'static str,
    read: impl FnOnce(&'a Value) -> Option<T>,
) -> Result<Option<T>, SchemaCompileError> {
    match schema.get(keyword) {
        None | Some(Value::Null) => Ok(None),
        Some(value) => read(value)
            .map(Some)
            .ok_or_else(|| SchemaCompileError::Keyword {
                at: at.to_owned(),
                keyword,
                expected,
            }),
    }
}

/// Reads a non-negative integer keyword.
fn keyword_u64(
    schema: &Map<String, Value>,
    name: &'static str,
    at: &str,
) -> Result<Option<u64>, SchemaCompileError> {
    keyword(schema, name, at, "a non-negative integer", Value::as_u64)
}

/// Reads a number keyword.
fn keyword_f64(
    schema: &Map<String, Value>,
    name: &'static str,
    at: &str,
) -> Result<Option<f64>, SchemaCompileError> {
    keyword(schema, name, at, "a number", Value::as_f64)
}

/// Reads a boolean keyword (absent is false).
fn keyword_bool(
    schema: &Map<String, Value>,
    name: &'static str,
    at: &str,
) -> Result<bool, SchemaCompileError> {
    keyword(schema, name, at, "a boolean", Value::as_bool).map(Option::unwrap_or_default)
}

/// Reads a string keyword.
fn keyword_str<'a>(
    schema: &'a Map<String, Value>,
    name: &'static str,
    at: &str,
) -> Result<Option<&'a str>, SchemaCompileError> {
    keyword(schema, name, at, "a string", Value::as_str)
}

/// Reads a list-of-strings keyword (absent is empty).
fn keyword_strings(
    schema: &Map<String, Value>,
    name: &'static str,
    at: &str,
) -> Result<Vec<String>, SchemaCompileError> {
    keyword(schema, name, at, "a list of strings", |value| {
        value
            .as_array()?
            .iter()
            .map(|item| item.as_str().map(str::to_owned))
            .collect::<Option<Vec<_>>>()
    })
    .map(Option::unwrap_or_default)
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

/// `type`.
fn read_type(schema: &Map<String, Value>, at: &str) -> Result<Option<Ty>, SchemaCompileError> {
    Ok(match keyword_str(schema, "type", at)? {
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
    })
}

/// `nullable` and the `x-kubernetes-` flags (`nullable` and embedded resources in a CRD only).
fn read_flags(
    node: &mut Node,
    schema: &Map<String, Value>,
    at: &str,
    crd: bool,
) -> Result<(), SchemaCompileError> {
    node.nullable = crd && keyword_bool(schema, "nullable", at)?;
    node.int_or_string = keyword_bool(schema, "x-kubernetes-int-or-string", at)?;
    node.preserve_unknown = keyword_bool(schema, "x-kubernetes-preserve-unknown-fields", at)?;
    node.embedded = crd && keyword_bool(schema, "x-kubernetes-embedded-resource", at)?;
    Ok(())
}

/// `required`, `enum`, `pattern` (compiled) and `format`.
fn read_values(
    node: &mut Node,
    schema: &Map<String, Value>,
    at: &str,
) -> Result<(), SchemaCompileError> {
    node.required = keyword_strings(schema, "required", at)?;
    node.enumeration =
        keyword(schema, "enum", at, "a list", |v| v.as_array().cloned())?.unwrap_or_default();
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
    Ok(())
}

/// The bounds: of numbers, of lengths, of item and field counts, and `uniqueItems`.
fn read_bounds(
    node: &mut Node,
    schema: &Map<String, Value>,
    at: &str,
) -> Result<(), SchemaCompileError> {
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
    Ok(())
}

/// `x-kubernetes-list-type` and its `x-kubernetes-list-map-keys`.
fn read_list_type(schema: &Map<String, Value>, at: &str) -> Result<ListType, SchemaCompileError> {
    Ok(match keyword_str(schema, "x-kubernetes-list-type", at)? {
        Some("set") => ListType::Set,
        Some("map") => ListType::Map(keyword_strings(schema, "x-kubernetes-list-map-keys", at)?),
        _ => ListType::Atomic,
    })
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
        node.ty = read_type(schema, at)?;
        read_flags(&mut node, schema, at, crd)?;
        read_values(&mut node, schema, at)?;
        read_bounds(&mut node, schema, at)?;
        if crd {
            node.list_type = read_list_type(schema, at)?;
        }
        node.default = schema.get("default").filter(|d| !d.is_null()).cloned();
        if let Some(Value::Array(rules)) = schema.get("x-kubernetes-validations") {
            self.cel_rules += rules.len();
            if crd {
                node.rules = rules
                    .iter()
                    .enumerate()
                    .map(|(i, rule)| {
                        Rule::compile(
                            rule,
                            &child_at(at, &format!("x-kubernetes-validations[{i}]")),
                        )
                    })
                    .collect::<Result<_, _>>()?;
            }
        }
        self.read_properties(&mut node, schema, at, depth, structural)?;
        node.additional = match schema.get("additionalProperties") {
            Some(Value::Bool(false)) => Additional::Unset,
            Some(Value::Bool(true)) => Additional::Any,
            _ => self
                .sub(schema, "additionalProperties", at, depth, structural)?
                .map_or(Additional::Unset, Additional::Schema),
        };
        node.items = self.sub(schema, "items", at, depth, structural)?;
        self.read_junctors(&mut node, schema, at, depth)?;
        Ok(node)
    }

    /// The schema under `name` (`items`, `additionalProperties`, `not`), if set.
    fn sub(
        &mut self,
        schema: &Map<String, Value>,
        name: &str,
        at: &str,
        depth: usize,
        structural: bool,
    ) -> Result<Option<Box<Node>>, SchemaCompileError> {
        match schema.get(name) {
            None | Some(Value::Null) => Ok(None),
            Some(sub) => {
                let node = self.node(sub, &child_at(at, name), depth + 1, structural)?;
                Ok(Some(Box::new(node)))
            }
        }
    }

    /// `properties`, in the schema's order, and their index.
    fn read_properties(
        &mut self,
        node: &mut Node,
        schema: &Map<String, Value>,
        at: &str,
        depth: usize,
        structural: bool,
    ) -> Result<(), SchemaCompileError> {
        let properties = keyword(schema, "properties", at, "an object", Value::as_object)?;
        for (name, sub) in properties.into_iter().flatten() {
            let child = self.node(
                sub,
                &child_at(at, &format!("properties.{name}")),
                depth + 1,
                structural,
            )?;
            node.index.insert(name.clone(), node.properties.len());
            node.properties.push((name.clone(), child));
        }
        Ok(())
    }

    /// `allOf`, `anyOf`, `oneOf` and `not`: schemas that declare no fields.
    fn read_junctors(
        &mut self,
        node: &mut Node,
        schema: &Map<String, Value>,
        at: &str,
        depth: usize,
    ) -> Result<(), SchemaCompileError> {
        for (name, list) in [
            ("allOf", &mut node.all_of),
            ("anyOf", &mut node.any_of),
            ("oneOf", &mut node.one_of),
        ] {
            let subs = keyword(schema, name, at, "a list of schemas", Value::as_array)?;
            for (i, sub) in subs.into_iter().flatten().enumerate() {
                list.push(self.node(
                    sub,
                    &child_at(at, &format!("{name}[{i}]")),
                    depth + 1,
                    false,
                )?);
            }
        }
        node.not = self.sub(schema, "not", at, depth, false)?;
        Ok(())
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
