//! Tests of the engine on schemas written here: compiling, defaulting, validation, unknown
//! fields, bounds, suggestions.

use serde_json::{Value, json};

use super::*;

/// A variable schema from a JSON literal.
fn variable(schema: Value) -> VariableSchema {
    VariableSchema::compile(&schema).expect("compiles")
}

#[test]
fn variable_top_level_and_nested_defaults() {
    let schema = variable(json!({
        "type": "object",
        "default": {"registry": {}},
        "properties": {
            "registry": {"type": "object", "properties": {
                "host": {"type": "string", "default": "docker.io"},
                "tls": {"type": "object", "properties": {"insecure": {"type": "boolean", "default": false}}}
            }},
            "mirrors": {"type": "array", "items": {"type": "object", "properties": {
                "endpoint": {"type": "string"}, "port": {"type": "integer", "default": 443}}}},
            "labels": {"type": "object", "additionalProperties": {"type": "object",
                "properties": {"value": {"type": "string", "default": "x"}}}}
        }
    }));
    // No value: the top-level default, defaulted further.
    assert_eq!(
        schema.default_value(None),
        Some(json!({"registry": {"host": "docker.io"}}))
    );
    assert_eq!(
        schema.default_value(Some(Value::Null)),
        Some(json!({"registry": {"host": "docker.io"}}))
    );
    // Nested defaults only where the parent object exists.
    assert_eq!(schema.default_value(Some(json!({}))), Some(json!({})));
    assert_eq!(
        schema.default_value(Some(json!({"registry": {"tls": {}}}))),
        Some(json!({"registry": {"tls": {"insecure": false}, "host": "docker.io"}}))
    );
    // Array items and additionalProperties.
    assert_eq!(
        schema.default_value(Some(
            json!({"mirrors": [{"endpoint": "a"}, {"port": 80}], "labels": {"k": {}}})
        )),
        Some(
            json!({"mirrors": [{"endpoint": "a", "port": 443}, {"port": 80}], "labels": {"k": {"value": "x"}}})
        )
    );
    // A null property is replaced by its default (variables are never nullable).
    assert_eq!(
        schema.default_value(Some(json!({"registry": {"host": null}}))),
        Some(json!({"registry": {"host": "docker.io"}}))
    );
    // No default and no value: no variable.
    assert_eq!(
        variable(json!({"type": "string"})).default_value(None),
        None
    );
}

#[test]
fn invalid_defaults_are_found_where_they_are_written() {
    // Each default checked against its own schema, defaulted further; a valid one is not
    // reported, nor is a default inside a junctor (not structural).
    let schema = variable(json!({
        "type": "object",
        "default": {"replicas": 0},
        "properties": {
            "replicas": {"type": "integer", "minimum": 1},
            "cni": {"type": "string", "enum": ["calico", "cilium"], "default": "calico"},
            "sans": {"type": "array", "items": {"type": "string", "default": 7}},
            "labels": {"type": "object", "additionalProperties": {
                "type": "object",
                "properties": {"v": {"type": "string", "maxLength": 2}},
                "default": {"v": "long"},
            }},
            "nested": {"type": "object", "default": {}, "properties": {
                "port": {"type": "integer", "default": "6443"},
            }},
        },
        "anyOf": [{"properties": {"cni": {"default": 1}}}],
    }));
    let found: Vec<(String, String)> = schema
        .invalid_defaults()
        .into_iter()
        .map(|d| (d.at.join("."), d.violation.message()))
        .collect();
    // The root's default is defaulted further (its `nested` gets `{}`, then the wrong port),
    // as the API server does before it checks it.
    let expected = [
        ("", "replicas: must be at least 1"),
        ("", "nested.port: must be of type integer, not a string"),
        (
            "properties.sans.items",
            "(root): must be of type string, not an integer",
        ),
        (
            "properties.labels.additionalProperties",
            "v: must be at most 2 characters (found 4)",
        ),
        (
            "properties.nested",
            "port: must be of type integer, not a string",
        ),
        (
            "properties.nested.properties.port",
            "(root): must be of type integer, not a string",
        ),
    ];
    let expected: Vec<(String, String)> = expected
        .iter()
        .map(|(a, m)| ((*a).to_owned(), (*m).to_owned()))
        .collect();
    assert_eq!(found, expected);
    let clean = variable(json!({"type": "string", "default": "calico", "enum": ["calico"]}));
    assert!(clean.invalid_defaults().is_empty());
}

#[test]
fn variable_value_checks() {
    let schema = variable(json!({
        "type": "object",
        "required": ["name"],
        "properties": {
            "name": {"type": "string", "pattern": "^[a-z]+$", "maxLength": 5},
            "mode": {"type": "string", "enum": ["fast", "slow"]},
            "count": {"type": "integer", "minimum": 1, "maximum": 10},
            "ratio": {"type": "number", "minimum": 0, "exclusiveMinimum": true},
            "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 2},
            "extra": {"type": "object", "x-kubernetes-preserve-unknown-fields": true},
            "when": {"type": "string", "format": "date-time"},
            "opt": {"type": "string", "nullable": true}
        }
    }));
    assert!(
        schema
            .validate(
                &json!({"name": "abc", "mode": "fast", "count": 3, "ratio": 0.5, "tags": ["a"],
        "extra": {"anything": {"x": 1}}, "when": "2024-05-01T10:00:00Z"})
            )
            .is_empty()
    );
    let problems = schema.validate(
        &json!({"name": "ABCDEFG", "mode": "medium", "count": 11, "ratio": 0,
        "tags": ["a", "b", 3], "when": "yesterday", "unknown": 1, "opt": null}),
    );
    let messages: Vec<String> = problems.iter().map(Violation::message).collect();
    assert_eq!(
        messages,
        [
            "name: must be at most 5 characters (found 7)",
            "name: must match the pattern ^[a-z]+$",
            "mode: must be one of: fast, slow",
            "count: must be at most 10",
            "ratio: must be greater than 0",
            "tags: must be at most 2 items (found 3)",
            "tags[2]: must be of type string, not an integer",
            "when: must be in the format date-time",
            "unknown: is not a field of the schema (fields: name, mode, count, ratio, tags, extra, when, opt)",
            // Cluster API's schemas have no `nullable`: null is not a string.
            "opt: must be of type string, not null",
        ]
    );
    let messages: Vec<String> = schema
        .validate(&json!({"count": 0}))
        .iter()
        .map(Violation::message)
        .collect();
    assert_eq!(messages, ["name: is required", "count: must be at least 1"]);
    // The top level.
    assert_eq!(
        schema.validate(&json!("x"))[0].problem,
        Problem::Type {
            expected: "object".to_owned(),
            found: "a string"
        }
    );
    assert_eq!(schema.validate(&Value::Null)[0].pointer(), "(root)");
}

#[test]
fn variable_unknown_fields_unless_preserved() {
    let strict = variable(json!({"type": "object", "properties": {"a": {"type": "object"}}}));
    let messages: Vec<String> = strict
        .validate(&json!({"a": {"b": 1}}))
        .iter()
        .map(Violation::message)
        .collect();
    assert_eq!(
        messages,
        ["a.b: is not a field of the schema (it declares no fields here)"]
    );
    let preserved = variable(
        json!({"type": "object", "properties": {"a": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}),
    );
    assert!(preserved.validate(&json!({"a": {"b": 1}})).is_empty());
    let map = variable(json!({"type": "object", "additionalProperties": {"type": "integer"}}));
    assert!(map.validate(&json!({"x": 1, "y": 2})).is_empty());
    assert_eq!(map.validate(&json!({"x": "1"}))[0].pointer(), "x");
    // Inside anyOf, properties validate but do not declare fields.
    let any = variable(
        json!({"type": "object", "x-kubernetes-preserve-unknown-fields": true,
        "anyOf": [{"required": ["a"]}, {"required": ["b"]}]}),
    );
    assert!(any.validate(&json!({"b": 1})).is_empty());
    let problems = any.validate(&json!({"c": 1}));
    assert_eq!(problems.len(), 1);
    assert!(
        problems[0]
            .problem
            .describe()
            .starts_with("must match one of the schemas of anyOf"),
        "{problems:?}"
    );
    // A required field with a default is not missing: defaulting fills it first.
    let defaulted = variable(
        json!({"type": "object", "required": ["a"], "properties": {"a": {"type": "string", "default": "x"}}}),
    );
    assert!(defaulted.validate(&json!({})).is_empty());
}

#[test]
fn variable_schema_errors_and_bounds() {
    assert!(matches!(
        VariableSchema::compile(&json!("string")),
        Err(SchemaCompileError::NotAnObject { .. })
    ));
    assert!(matches!(
        VariableSchema::compile(&json!({"type": "text"})),
        Err(SchemaCompileError::UnknownType { .. })
    ));
    assert!(matches!(
        VariableSchema::compile(&json!({"minLength": -1})),
        Err(SchemaCompileError::Keyword { .. })
    ));
    let error = VariableSchema::compile(&json!({"properties": {"a": {"pattern": "(unclosed"}}}))
        .unwrap_err();
    assert!(
        error
            .to_string()
            .starts_with("properties.a: pattern (unclosed cannot be compiled"),
        "{error}"
    );
    // A schema nested deeper than the bound is refused, not overflowed.
    let nest = |levels: usize| {
        let (mut schema, mut value) = (json!({"type": "string", "default": "x"}), json!(1));
        for _ in 0..levels {
            schema = json!({"type": "array", "items": schema});
            value = json!([value]);
        }
        (schema, value)
    };
    let (deep, _) = nest(200);
    assert!(matches!(
        VariableSchema::compile(&deep),
        Err(SchemaCompileError::TooLarge { .. })
    ));
    let (deep, value) = nest(schema::MAX_DEPTH - 1);
    let deep = variable(deep);
    assert_eq!(deep.validate(&value).len(), 1);
    assert_eq!(deep.default_value(Some(value.clone())), Some(value));
    // Many problems are capped.
    let schema = variable(json!({"type": "array", "items": {"type": "string"}}));
    let problems = schema.validate(&Value::Array(vec![json!(1); 1000]));
    assert_eq!(problems.len(), schema::MAX_VIOLATIONS + 1);
    assert_eq!(
        problems.last().unwrap().problem.describe(),
        "has 800 more problems, not listed"
    );
    // Lists: set and map uniqueness (CRD dialect only), uniqueItems in both.
    let unique = variable(json!({"type": "array", "uniqueItems": true}));
    let problems = unique.validate(&json!([1, {"a": 1, "b": 2}, 1.0, {"b": 2, "a": 1}]));
    let messages: Vec<String> = problems.iter().map(Violation::message).collect();
    assert_eq!(
        messages,
        [
            "[2]: must not repeat item [0] (the items are a set)",
            "[3]: must not repeat item [1] (the items are a set)"
        ]
    );
}

#[test]
fn suggestions() {
    let names = ["registrationMethod", "tlsSan", "nodeName", "version"];
    assert_eq!(
        schema::nearest("registrationMehod", names).as_deref(),
        Some("registrationMethod")
    );
    assert_eq!(schema::nearest("tlsSAN", names).as_deref(), Some("tlsSan"));
    assert_eq!(
        schema::nearest("nodname", names).as_deref(),
        Some("nodeName")
    );
    assert_eq!(schema::nearest("kubelet", names), None);
}
