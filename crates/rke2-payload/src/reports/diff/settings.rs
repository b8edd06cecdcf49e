//! Everything else the user data says: every key of a cloud-config and every field of an
//! Ignition config that the other areas do not compare (`ntp`, `users`, `mounts`, a file's
//! `append` or `defer`, a unit's contents, a filesystem), compared as a tree.
//!
//! Lists of named things are paired by name (`users` by `name`, files by `path`, units by
//! `name`, filesystems by `device`); other lists are compared as a whole. Values that may hold a
//! secret (under a key that says so, a private key, a `data:` URL) are compared by fingerprint;
//! other text is shown with every known secret and every credential found by its shape masked.

use std::collections::HashMap;

use serde_json::Value;

use super::{Area, Change, ChangeKind, Mask, change, fingerprint};
use crate::payload::{Format, Payload, UserDataKind};

/// The lists of files, whose entries the files area compares.
const FILE_LISTS: &[&str] = &["write_files", "storage.files"];

/// The longest value shown whole; a longer one shows its start and its fingerprint.
const SHOWN: usize = 200;

/// The tree of the user data, less what the other areas compare: `None` when it is not a
/// cloud-config or an Ignition config that reads.
pub(super) fn tree(payload: &Payload<'_>) -> Option<Value> {
    let text = std::str::from_utf8(payload.userdata()).ok()?;
    match payload.format() {
        Format::CloudConfig if matches!(payload.content(), UserDataKind::CloudConfig { .. }) => {
            let mut value = crate::codec::yaml11::first_document(text).ok()??;
            let map = value.as_object_mut()?;
            // Commands and files are their own areas; what else a file entry says stays.
            map.remove("runcmd");
            map.remove("bootcmd");
            if let Some(Value::Array(files)) = map.get_mut("write_files") {
                for file in files.iter_mut().filter_map(Value::as_object_mut) {
                    for key in ["content", "encoding", "permissions", "owner", "source"] {
                        file.remove(key);
                    }
                }
            }
            Some(value)
        }
        Format::Ignition => {
            let mut value: Value = serde_json::from_str(text).ok()?;
            if let Some(Value::Array(files)) = value.pointer_mut("/storage/files") {
                for file in files.iter_mut().filter_map(Value::as_object_mut) {
                    for key in ["contents", "mode", "user", "group"] {
                        file.remove(key);
                    }
                }
            }
            value.is_object().then_some(value)
        }
        _ => None,
    }
}

/// The settings that differ between two trees of the same format. `same` pairs each text of
/// the first with the one of the second it stands for (the join tokens, under `--ignore token`):
/// replaced in the first before comparing.
pub(super) fn settings(
    a: &Value,
    b: &Value,
    same: &[(String, String)],
    mask: &Mask,
    out: &mut Vec<Change>,
) {
    if same.is_empty() {
        walk(&mut String::new(), Some(a), Some(b), false, mask, out);
        return;
    }
    let mut a = a.clone();
    replace_texts(&mut a, same);
    walk(&mut String::new(), Some(&a), Some(b), false, mask, out);
}

fn replace_texts(value: &mut Value, same: &[(String, String)]) {
    match value {
        Value::String(s) => {
            for (from, to) in same {
                if s.contains(from.as_str()) {
                    *s = s.replace(from.as_str(), to);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|v| replace_texts(v, same)),
        Value::Object(map) => map.values_mut().for_each(|v| replace_texts(v, same)),
        _ => {}
    }
}

/// The field of a list's entries that names them, if every entry on both sides has a distinct
/// one.
fn identity(a: &[Value], b: &[Value]) -> Option<&'static str> {
    ["name", "path", "device", "label"].into_iter().find(|key| {
        [a, b].iter().all(|list| {
            let names: Vec<&str> = list
                .iter()
                .filter_map(|v| v.get(*key).and_then(Value::as_str))
                .collect();
            names.len() == list.len() && {
                let mut sorted = names.clone();
                sorted.sort_unstable();
                sorted.dedup();
                sorted.len() == names.len()
            }
        })
    })
}

/// Whether the value under `key` is secret: a value (or list of values) under a key that says
/// so (`passwd`, `hashed_passwd`, `passwordHash`), or anything under the keys whose every value
/// is (cloud-init's `chpasswd` list, `ssh_keys` host keys). A mapping under a secret-sounding key
/// (Ignition's `passwd` section) is read key by key.
fn secret_under(key: &str, value: Option<&Value>) -> bool {
    let lower = key.to_ascii_lowercase();
    // Whole subtrees: passwords, host keys, HTTP headers (`Authorization`), in cloud-init's and
    // Ignition's own keys.
    matches!(key, "chpasswd" | "ssh_keys" | "httpHeaders" | "headers")
        // A key or pre-shared key a module takes (`activation-key`, `registration_key`, `psk`).
        || ((lower.ends_with("key") || lower == "psk")
            && !matches!(lower.as_str(), "public_key" | "pubkey" | "publickey"))
        || ((crate::sensitive::secret_key_name(key) || crate::sensitive::secret_name(key))
            && value.is_some_and(|v| !v.is_object()))
}

fn walk<'a>(
    path: &mut String,
    a: Option<&'a Value>,
    b: Option<&'a Value>,
    secret: bool,
    mask: &Mask,
    out: &mut Vec<Change>,
) {
    if a == b {
        return;
    }
    match (a, b) {
        (Some(Value::Object(x)), Some(Value::Object(y))) => {
            let keys = x.keys().chain(y.keys().filter(|k| !x.contains_key(*k)));
            for key in keys {
                let len = path.len();
                if !path.is_empty() {
                    path.push('.');
                }
                path.push_str(key);
                let (p, q) = (x.get(key), y.get(key));
                // Either side's value decides (a mapping on one, a password on the other).
                let secret = secret || secret_under(key, p) || secret_under(key, q);
                walk(path, p, q, secret, mask, out);
                path.truncate(len);
            }
        }
        (Some(Value::Array(x)), Some(Value::Array(y))) => {
            if let Some(id) = identity(x, y) {
                // Entries by name, borrowed (the name compares equal in a pair, so it is no
                // change of its own).
                let name = |v: &'a Value| entry_name(v, id);
                let (xs, ys) = (by_name(x, id), by_name(y, id));
                let order = x
                    .iter()
                    .map(name)
                    .chain(y.iter().map(name).filter(|n| !xs.contains_key(n)));
                for entry in order {
                    let len = path.len();
                    path.push('[');
                    path.push_str(entry);
                    path.push(']');
                    let (p, q) = (xs.get(entry).copied(), ys.get(entry).copied());
                    match (&p, &q) {
                        // A file added or removed: the files area says so.
                        (Some(_), None) | (None, Some(_))
                            if FILE_LISTS.contains(&path.split('[').next().unwrap_or_default()) => {
                        }
                        // A named entry added or removed is one change, not one per field.
                        (Some(_), None) | (None, Some(_)) => leaf(path, p, q, secret, mask, out),
                        _ => walk(path, p, q, secret, mask, out),
                    }
                    path.truncate(len);
                }
            } else if x.len() == y.len() && x.iter().chain(y).all(Value::is_object) {
                for (i, (p, q)) in x.iter().zip(y).enumerate() {
                    let len = path.len();
                    path.push_str(&format!("[{i}]"));
                    walk(path, Some(p), Some(q), secret, mask, out);
                    path.truncate(len);
                }
            } else {
                leaf(path, a, b, secret, mask, out);
            }
        }
        _ => leaf(path, a, b, secret, mask, out),
    }
}

/// The name of a list entry (its `id` field).
fn entry_name<'a>(v: &'a Value, id: &str) -> &'a str {
    v.get(id).and_then(Value::as_str).unwrap_or_default()
}

/// A list's entries by name, borrowed.
fn by_name<'a>(list: &'a [Value], id: &str) -> HashMap<&'a str, &'a Value> {
    list.iter().map(|v| (entry_name(v, id), v)).collect()
}

fn leaf(
    path: &str,
    a: Option<&Value>,
    b: Option<&Value>,
    secret: bool,
    mask: &Mask,
    out: &mut Vec<Change>,
) {
    let kind = match (a, b) {
        (None, Some(_)) => ChangeKind::Added,
        (Some(_), None) => ChangeKind::Removed,
        _ => ChangeKind::Changed,
    };
    let show = |v: &Value| shown(v, secret, mask);
    let mut c = change(
        Area::Setting,
        path.to_owned(),
        kind,
        a.map(show),
        b.map(show),
    );
    // Text of several lines (a unit's contents): a unified diff, masked.
    if let (Some(Value::String(x)), Some(Value::String(y))) = (a, b)
        && !secret
        && !hidden(x)
        && !hidden(y)
        && (x.contains('\n') || y.contains('\n'))
    {
        let (x, y) = (mask.text(x), mask.text(y));
        c.detail = Some(
            similar::TextDiff::from_lines(&x, &y)
                .unified_diff()
                .context_radius(2)
                .header("before", "after")
                .to_string(),
        );
        c.before = Some(lines(&x));
        c.after = Some(lines(&y));
    }
    out.push(c);
}

fn lines(text: &str) -> String {
    format!("{} line(s)", text.lines().count())
}

/// Text that is shown only by its fingerprint whatever its key: a private key, a `data:` URL
/// (its content is encoded, so no mask can see into it).
fn hidden(text: &str) -> bool {
    text.contains("PRIVATE KEY") || text.trim_start().starts_with("data:")
}

/// A value as the report shows it: text masked, a collection as compact JSON with each of its
/// secret or [`hidden`] values replaced by its fingerprint.
fn shown(v: &Value, secret: bool, mask: &Mask) -> String {
    let masked = masked(v, secret, mask);
    let text = match &masked {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    if text.chars().count() > SHOWN {
        let start: String = text.chars().take(SHOWN).collect();
        let whole = v.to_string();
        return format!(
            "{start}… ({} B, {})",
            whole.len(),
            fingerprint(whole.as_bytes())
        );
    }
    text
}

fn masked(v: &Value, secret: bool, mask: &Mask) -> Value {
    match v {
        Value::String(s) if secret || hidden(s) || mask.knows(s) => {
            Value::String(fingerprint(s.as_bytes()))
        }
        Value::String(s) => Value::String(mask.text(s)),
        Value::Array(items) => Value::Array(
            items
                .iter()
                .map(|item| masked(item, secret, mask))
                .collect(),
        ),
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, item)| {
                    let secret = secret || secret_under(k, Some(item));
                    (k.clone(), masked(item, secret, mask))
                })
                .collect(),
        ),
        other if secret => Value::String(fingerprint(other.to_string().as_bytes())),
        other => other.clone(),
    }
}
