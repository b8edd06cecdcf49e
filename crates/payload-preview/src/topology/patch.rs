//! JSON patches (RFC 6902) as Cluster API applies a ClusterClass patch's `jsonPatches`: with
//! `github.com/evanphx/json-patch/v5`'s default options, so `add` needs the parent to exist
//! (it does not create missing objects), `replace` and `remove` need the target to exist, a
//! negative array index counts from the end, and `-` appends.

use serde_json::Value;

/// Why one operation does not apply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PatchError {
    /// What went wrong, one clause (no value of the document is quoted).
    pub(crate) what: String,
    /// The index of the operation that failed, in the list [`apply`] was given.
    pub(crate) op: usize,
}

impl std::fmt::Display for PatchError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.what)
    }
}

/// One operation: `add`, `replace` or `remove` (the ops the ClusterClass webhook allows).
#[derive(Debug, Clone)]
pub(crate) struct Op {
    pub(crate) op: String,
    pub(crate) path: String,
    pub(crate) value: Option<Value>,
}

/// The reference tokens of a JSON pointer (`~1` is `/`, `~0` is `~`).
pub(crate) fn tokens(pointer: &str) -> Result<Vec<String>, PatchError> {
    if pointer.is_empty() {
        return Ok(Vec::new());
    }
    let Some(rest) = pointer.strip_prefix('/') else {
        return Err(PatchError {
            what: format!("path {} does not start with /", super::shown(pointer, 60)),
            op: 0,
        });
    };
    Ok(rest
        .split('/')
        .map(|t| t.replace("~1", "/").replace("~0", "~"))
        .collect())
}

fn missing(path: &str) -> PatchError {
    PatchError {
        what: format!(
            "path {} does not exist in the template",
            super::shown(path, 80)
        ),
        op: 0,
    }
}

/// The array index `token` names in an array of `len` items (`-` is `len` when `append`).
fn index(token: &str, len: usize, append: bool, path: &str) -> Result<usize, PatchError> {
    if token == "-" && append {
        return Ok(len);
    }
    let n: i64 = token.parse().map_err(|_| missing(path))?;
    let len_i = i64::try_from(len).unwrap_or(i64::MAX);
    let max = if append { len_i } else { len_i - 1 };
    let n = if n < 0 { n + len_i } else { n };
    if n < 0 || n > max {
        return Err(PatchError {
            what: format!(
                "index {} of path {} is out of the array's bounds ({len} items)",
                super::shown(token, 20),
                super::shown(path, 80)
            ),
            op: 0,
        });
    }
    usize::try_from(n).map_err(|_| missing(path))
}

/// Applies `ops` to `doc` in order; on an error `doc` is left as it was (a definition's
/// patch applies whole or not at all).
pub(crate) fn apply(doc: &mut Value, ops: &[Op]) -> Result<(), PatchError> {
    let mut work = doc.clone();
    for (i, op) in ops.iter().enumerate() {
        apply_one(&mut work, op).map_err(|e| PatchError { op: i, ..e })?;
    }
    *doc = work;
    Ok(())
}

fn apply_one(doc: &mut Value, op: &Op) -> Result<(), PatchError> {
    let toks = tokens(&op.path)?;
    let Some((last, parents)) = toks.split_last() else {
        return match op.op.as_str() {
            "add" | "replace" => {
                *doc = op.value.clone().unwrap_or(Value::Null);
                Ok(())
            }
            _ => Err(missing(&op.path)),
        };
    };
    let mut parent = &mut *doc;
    for t in parents {
        parent = match parent {
            Value::Object(map) => map.get_mut(t.as_str()).ok_or_else(|| missing(&op.path))?,
            Value::Array(items) => {
                let i = index(t, items.len(), false, &op.path)?;
                items.get_mut(i).ok_or_else(|| missing(&op.path))?
            }
            _ => return Err(missing(&op.path)),
        };
    }
    let value = || op.value.clone().unwrap_or(Value::Null);
    match (op.op.as_str(), parent) {
        ("add", Value::Object(map)) => {
            map.insert(last.clone(), value());
        }
        ("add", Value::Array(items)) => {
            let i = index(last, items.len(), true, &op.path)?;
            items.insert(i, value());
        }
        ("replace", Value::Object(map)) => {
            let slot = map
                .get_mut(last.as_str())
                .ok_or_else(|| missing(&op.path))?;
            *slot = value();
        }
        ("replace", Value::Array(items)) => {
            let i = index(last, items.len(), false, &op.path)?;
            items[i] = value();
        }
        ("remove", Value::Object(map)) => {
            map.shift_remove(last.as_str())
                .ok_or_else(|| missing(&op.path))?;
        }
        ("remove", Value::Array(items)) => {
            let i = index(last, items.len(), false, &op.path)?;
            items.remove(i);
        }
        ("add" | "replace" | "remove", _) => return Err(missing(&op.path)),
        (other, _) => {
            return Err(PatchError {
                what: format!(
                    "op {} is not add, replace or remove",
                    super::shown(other, 20)
                ),
                op: 0,
            });
        }
    }
    Ok(())
}

#[cfg(test)]
mod go_differential;

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn op(op: &str, path: &str, value: Option<Value>) -> Op {
        Op {
            op: op.into(),
            path: path.into(),
            value,
        }
    }

    #[test]
    fn add_replace_remove_follow_rfc_6902_with_evanphx_defaults() {
        let mut doc = json!({"spec": {"a": [1, 2], "b": {"x": 1}}});
        apply(
            &mut doc,
            &[
                op("add", "/spec/a/-", Some(json!(3))),
                op("add", "/spec/a/0", Some(json!(0))),
                op("replace", "/spec/b/x", Some(json!("y"))),
                op("remove", "/spec/a/-1", None),
                op("add", "/spec/c~1d", Some(json!(true))),
            ],
        )
        .unwrap();
        assert_eq!(
            doc,
            json!({"spec": {"a": [0, 1, 2], "b": {"x": "y"}, "c/d": true}})
        );
    }

    #[test]
    fn missing_targets_fail_and_leave_the_document_alone() {
        let mut doc = json!({"spec": {}});
        for bad in [
            op("replace", "/spec/x", Some(json!(1))),
            op("remove", "/spec/x", None),
            op("add", "/spec/x/y", Some(json!(1))),
            op("add", "spec/x", Some(json!(1))),
            op("move", "/spec/x", None),
        ] {
            assert!(apply(&mut doc, &[op("add", "/spec/ok", None), bad]).is_err());
            assert_eq!(doc, json!({"spec": {}}));
        }
    }
}
