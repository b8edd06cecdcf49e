//! Structural defaulting and the pruning of nulls that comes before it for a custom resource.

use serde_json::Value;

use super::{Additional, InvalidDefault, MAX_DEPTH, Node};

/// See [`Schema::default_value`](super::Schema::default_value).
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

/// See [`Schema::invalid_defaults`](super::Schema::invalid_defaults).
pub(crate) fn invalid_defaults(root: &Node) -> Vec<InvalidDefault> {
    let mut out = Vec::new();
    let mut at = Vec::new();
    walk_defaults(root, &mut at, &mut out, 0);
    out
}

/// Every `default` of the structural part under `node`, each checked against its own schema
/// once defaulted further.
fn walk_defaults(node: &Node, at: &mut Vec<String>, out: &mut Vec<InvalidDefault>, depth: usize) {
    if depth > MAX_DEPTH {
        return;
    }
    if let Some(default) = &node.default {
        let value = default_value(node, Some(default.clone())).unwrap_or(Value::Null);
        out.extend(
            super::validate(node, &value)
                .into_iter()
                .map(|violation| InvalidDefault {
                    at: at.clone(),
                    violation,
                }),
        );
    }
    for (name, child) in &node.properties {
        at.extend(["properties".to_owned(), name.clone()]);
        walk_defaults(child, at, out, depth + 1);
        at.truncate(at.len() - 2);
    }
    if let Some(items) = &node.items {
        at.push("items".to_owned());
        walk_defaults(items, at, out, depth + 1);
        at.pop();
    }
    if let Additional::Schema(additional) = &node.additional {
        at.push("additionalProperties".to_owned());
        walk_defaults(additional, at, out, depth + 1);
        at.pop();
    }
}
