//! `additionalUserData.config` of an Ignition RKE2Config: a Butane (fcos 1.4) document that
//! CAPRKE2 translates to Ignition 3.3 and merges into its own config (child fields win; list
//! entries with the same key, a file's path or a unit's name, are merged field by field; others
//! are appended).
//!
//! The common part is translated here: `storage.files` (inline or remote contents, mode,
//! overwrite, user, group), `storage.directories`, `storage.links`, `systemd.units` (contents,
//! enabled, mask, drop-ins), `passwd.users` and `passwd.groups`, `kernel_arguments`. Anything
//! else is returned by name, so the caller can say it is left out.

use serde_json::{Map, Value, json};

/// The top-level keys of a Butane fcos 1.4 (and flatcar 1.0) config.
const SECTIONS: &[&str] = &[
    "variant",
    "version",
    "ignition",
    "storage",
    "systemd",
    "passwd",
    "kernel_arguments",
    "boot_device",
    "grub",
];

/// The lists of each section Butane reads (a value of another type fails its translation).
const LISTS: &[(&str, &[&str])] = &[
    (
        "storage",
        &[
            "files",
            "directories",
            "links",
            "filesystems",
            "disks",
            "raid",
            "luks",
            "trees",
        ],
    ),
    ("systemd", &["units"]),
    ("passwd", &["users", "groups"]),
    ("kernel_arguments", &["should_exist", "should_not_exist"]),
];

/// What Butane's translation (as CAPRKE2 calls it) refuses: a section or list of the wrong
/// type (its YAML does not decode into the spec's types, strict or not), and with `strict`,
/// a key the spec does not have (an unused key is a warning, and strict makes warnings errors).
fn refused(doc: &Map<String, Value>, strict: bool) -> Option<String> {
    for (key, value) in doc {
        let section = key.as_str();
        if !SECTIONS.contains(&section) {
            if strict {
                return Some(format!(
                    "{} is not a key of the Butane spec, and strict is set",
                    rke2_payload::terminal_safe(section)
                ));
            }
            continue;
        }
        let wanted = match section {
            "variant" | "version" => value.is_string(),
            _ => value.is_object() || value.is_null(),
        };
        if !wanted {
            return Some(format!(
                "{section} is {}, not {}",
                kind_of(value),
                if matches!(section, "variant" | "version") {
                    "a string"
                } else {
                    "a mapping"
                }
            ));
        }
        for (list_section, lists) in LISTS {
            if *list_section != section {
                continue;
            }
            for list in *lists {
                if let Some(v) = value.get(*list).filter(|v| !v.is_array() && !v.is_null()) {
                    return Some(format!("{section}.{list} is {}, not a list", kind_of(v)));
                }
            }
        }
    }
    None
}

fn kind_of(v: &Value) -> &'static str {
    match v {
        Value::Array(_) => "a list",
        Value::Object(_) => "a mapping",
        Value::String(_) => "a string",
        Value::Number(_) => "a number",
        Value::Bool(_) => "a boolean",
        Value::Null => "null",
    }
}

/// A file's contents as an Ignition resource: the `data:` URL Butane writes.
pub(crate) fn contents(data: &[u8]) -> Value {
    let url = rke2_payload::codec::file_data_url(data);
    let compression = if url.gzip { "gzip" } else { "" };
    json!({"compression": compression, "source": url.url, "verification": {}})
}

/// The Ignition fields of `butane` merged into `base`; the names of the Butane sections left
/// out. `Err` when the text is not a YAML mapping, or Butane's translation refuses it
/// (`strict`: `additionalUserData.strict`): CAPRKE2 fails to render then.
pub(crate) fn merge(base: &mut Value, butane: &str, strict: bool) -> Result<Vec<String>, String> {
    let mut options = serde_saphyr::Options::default();
    options.with_snippet = false;
    options.legacy_octal_numbers = true;
    let doc: Value = serde_saphyr::from_str_with_options::<Option<Value>>(butane, options)
        .map_err(|e| rke2_payload::codec::parser_message(&e.to_string()))?
        .unwrap_or(Value::Null);
    let Value::Object(doc) = doc else {
        return Err("it is not a mapping".to_owned());
    };
    if let Some(why) = refused(&doc, strict) {
        return Err(why);
    }
    let mut left_out = Vec::new();
    for (key, value) in &doc {
        match key.as_str() {
            "variant" | "version" => {}
            "storage" => storage(base, value, &mut left_out),
            "systemd" => systemd(base, value, &mut left_out),
            "passwd" => passwd(base, value, &mut left_out),
            "kernel_arguments" => {
                let mut args = Map::new();
                for (k, field) in [
                    ("should_exist", "shouldExist"),
                    ("should_not_exist", "shouldNotExist"),
                ] {
                    if let Some(list) = value.get(k).filter(|v| v.is_array()) {
                        args.insert(field.to_owned(), list.clone());
                    }
                }
                merge_object(&mut base["kernelArguments"], Value::Object(args));
            }
            other => left_out.push(other.to_owned()),
        }
    }
    Ok(left_out)
}

/// Child fields win; objects merge recursively.
fn merge_object(target: &mut Value, child: Value) {
    match (target, child) {
        (Value::Object(t), Value::Object(c)) => {
            for (k, v) in c {
                match t.get_mut(&k) {
                    Some(existing) if existing.is_object() && v.is_object() => {
                        merge_object(existing, v)
                    }
                    _ => {
                        t.insert(k, v);
                    }
                }
            }
        }
        (t, c) => *t = c,
    }
}

/// Appends `entries` to the list at `base[section][list]`, merging those whose `key` matches.
fn merge_list(base: &mut Value, section: &str, list: &str, key: &str, entries: Vec<Value>) {
    if entries.is_empty() {
        return;
    }
    if !base[section].is_object() {
        base[section] = json!({});
    }
    let target = &mut base[section][list];
    if !target.is_array() {
        *target = json!([]);
    }
    let Value::Array(items) = target else { return };
    for entry in entries {
        match items
            .iter_mut()
            .find(|i| i.get(key).is_some() && i.get(key) == entry.get(key))
        {
            Some(existing) => merge_object(existing, entry),
            None => items.push(entry),
        }
    }
}

fn node(v: Option<&Value>) -> Value {
    match v.and_then(|n| n.get("name")).and_then(Value::as_str) {
        Some(name) => json!({"name": name}),
        None => match v.and_then(|n| n.get("id")).and_then(Value::as_i64) {
            Some(id) => json!({"id": id}),
            None => json!({}),
        },
    }
}

fn storage(base: &mut Value, value: &Value, left_out: &mut Vec<String>) {
    let Value::Object(storage) = value else {
        return;
    };
    for (key, v) in storage {
        let items: Vec<&Value> = v.as_array().map(|a| a.iter().collect()).unwrap_or_default();
        match key.as_str() {
            "files" => {
                let mut out = Vec::new();
                for f in items {
                    let Some(path) = f.get("path").and_then(Value::as_str) else {
                        continue;
                    };
                    let mut e = Map::new();
                    e.insert("group".to_owned(), node(f.get("group")));
                    if let Some(o) = f.get("overwrite").and_then(Value::as_bool) {
                        e.insert("overwrite".to_owned(), json!(o));
                    }
                    e.insert("path".to_owned(), json!(path));
                    e.insert("user".to_owned(), node(f.get("user")));
                    if let Some(c) = f.get("contents") {
                        let contents = if let Some(inline) = c.get("inline").and_then(Value::as_str)
                        {
                            contents(inline.as_bytes())
                        } else if let Some(source) = c.get("source").and_then(Value::as_str) {
                            json!({"compression": c.get("compression").and_then(Value::as_str).unwrap_or(""), "source": source, "verification": {}})
                        } else {
                            left_out
                                .push(format!("storage.files[{path}].contents (local or other)"));
                            continue;
                        };
                        e.insert("contents".to_owned(), contents);
                    }
                    if let Some(mode) = f.get("mode").and_then(Value::as_i64) {
                        e.insert("mode".to_owned(), json!(mode));
                    }
                    out.push(Value::Object(e));
                }
                merge_list(base, "storage", "files", "path", out);
            }
            "directories" => {
                let out = items
                    .into_iter()
                    .filter_map(|d| {
                        let path = d.get("path")?.as_str()?;
                        let mut e = Map::new();
                        e.insert("group".to_owned(), node(d.get("group")));
                        if let Some(o) = d.get("overwrite").and_then(Value::as_bool) {
                            e.insert("overwrite".to_owned(), json!(o));
                        }
                        e.insert("path".to_owned(), json!(path));
                        e.insert("user".to_owned(), node(d.get("user")));
                        if let Some(mode) = d.get("mode").and_then(Value::as_i64) {
                            e.insert("mode".to_owned(), json!(mode));
                        }
                        Some(Value::Object(e))
                    })
                    .collect();
                merge_list(base, "storage", "directories", "path", out);
            }
            "links" => {
                let out = items
                    .into_iter()
                    .filter_map(|l| {
                        let path = l.get("path")?.as_str()?;
                        let mut e = Map::new();
                        e.insert("group".to_owned(), node(l.get("group")));
                        if let Some(o) = l.get("overwrite").and_then(Value::as_bool) {
                            e.insert("overwrite".to_owned(), json!(o));
                        }
                        e.insert("path".to_owned(), json!(path));
                        e.insert("user".to_owned(), node(l.get("user")));
                        if let Some(h) = l.get("hard").and_then(Value::as_bool) {
                            e.insert("hard".to_owned(), json!(h));
                        }
                        e.insert(
                            "target".to_owned(),
                            l.get("target").cloned().unwrap_or(Value::Null),
                        );
                        Some(Value::Object(e))
                    })
                    .collect();
                merge_list(base, "storage", "links", "path", out);
            }
            other => left_out.push(format!("storage.{other}")),
        }
    }
}

fn systemd(base: &mut Value, value: &Value, left_out: &mut Vec<String>) {
    let Some(units) = value.get("units").and_then(Value::as_array) else {
        return;
    };
    let mut out = Vec::new();
    for u in units {
        let Some(name) = u.get("name").and_then(Value::as_str) else {
            continue;
        };
        let mut e = Map::new();
        if let Some(c) = u.get("contents").and_then(Value::as_str) {
            e.insert("contents".to_owned(), json!(c));
        }
        if let Some(dropins) = u.get("dropins").and_then(Value::as_array) {
            let d: Vec<Value> = dropins
                .iter()
                .filter_map(|d| {
                    let name = d.get("name")?.as_str()?;
                    let mut m = Map::new();
                    if let Some(c) = d.get("contents").and_then(Value::as_str) {
                        m.insert("contents".to_owned(), json!(c));
                    }
                    m.insert("name".to_owned(), json!(name));
                    Some(Value::Object(m))
                })
                .collect();
            e.insert("dropins".to_owned(), Value::Array(d));
        }
        if let Some(en) = u.get("enabled").and_then(Value::as_bool) {
            e.insert("enabled".to_owned(), json!(en));
        }
        if let Some(mask) = u.get("mask").and_then(Value::as_bool) {
            e.insert("mask".to_owned(), json!(mask));
        }
        e.insert("name".to_owned(), json!(name));
        out.push(Value::Object(e));
    }
    if value
        .as_object()
        .is_some_and(|m| m.keys().any(|k| k != "units"))
    {
        left_out.push("systemd (other than units)".to_owned());
    }
    merge_list(base, "systemd", "units", "name", out);
}

/// Butane's snake_case user fields and their Ignition names, in Ignition's field order.
const USER_FIELDS: &[(&str, &str)] = &[
    ("gecos", "gecos"),
    ("groups", "groups"),
    ("home_dir", "homeDir"),
    ("name", "name"),
    ("no_create_home", "noCreateHome"),
    ("no_log_init", "noLogInit"),
    ("no_user_group", "noUserGroup"),
    ("password_hash", "passwordHash"),
    ("primary_group", "primaryGroup"),
    ("shell", "shell"),
    ("ssh_authorized_keys", "sshAuthorizedKeys"),
    ("system", "system"),
    ("uid", "uid"),
];

fn passwd(base: &mut Value, value: &Value, left_out: &mut Vec<String>) {
    let users: Vec<Value> = value
        .get("users")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|u| {
            let mut e = Map::new();
            for (from, to) in USER_FIELDS {
                if let Some(v) = u.get(*from) {
                    e.insert((*to).to_owned(), v.clone());
                }
            }
            Value::Object(e)
        })
        .collect();
    let groups: Vec<Value> = value
        .get("groups")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|g| {
            let mut e = Map::new();
            for (from, to) in [
                ("gid", "gid"),
                ("name", "name"),
                ("password_hash", "passwordHash"),
                ("system", "system"),
            ] {
                if let Some(v) = g.get(from) {
                    e.insert(to.to_owned(), v.clone());
                }
            }
            Value::Object(e)
        })
        .collect();
    if value
        .as_object()
        .is_some_and(|m| m.keys().any(|k| k != "users" && k != "groups"))
    {
        left_out.push("passwd (other than users and groups)".to_owned());
    }
    merge_list(base, "passwd", "groups", "name", groups);
    merge_list(base, "passwd", "users", "name", users);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_unit_a_file_and_a_user_are_merged_as_ignition_merges() {
        let mut base = json!({
            "passwd": {},
            "storage": {"files": [{"group": {}, "overwrite": true, "path": "/etc/a", "user": {}, "contents": {"compression": "", "source": "data:,a", "verification": {}}, "mode": 420}]},
            "systemd": {"units": [{"contents": "x", "enabled": true, "name": "rke2-install.service"}]},
        });
        let butane = "variant: fcos\nversion: 1.4.0\nstorage:\n  files:\n  - path: /etc/a\n    mode: 0600\n  - path: /etc/b\n    contents:\n      inline: hi\nsystemd:\n  units:\n  - name: test.service\n    enabled: true\n    contents: |\n      [Service]\n      ExecStart=/bin/true\npasswd:\n  users:\n  - name: ops\n    ssh_authorized_keys: [ssh-ed25519 AAAA]\nignition:\n  timeouts: {}\n";
        let left = merge(&mut base, butane, false).unwrap();
        assert_eq!(left, ["ignition"]);
        let files = base["storage"]["files"].as_array().unwrap();
        assert_eq!(files.len(), 2);
        assert_eq!(
            files[0]["mode"], 0o600,
            "merged field by field: the child's mode"
        );
        assert_eq!(
            files[0]["contents"]["source"], "data:,a",
            "the parent's contents stay"
        );
        assert_eq!(files[1]["path"], "/etc/b");
        assert_eq!(base["systemd"]["units"][1]["name"], "test.service");
        assert_eq!(
            base["passwd"]["users"][0]["sshAuthorizedKeys"][0],
            "ssh-ed25519 AAAA"
        );
        assert!(merge(&mut base, "a: [", false).is_err());
        // Butane's translation refuses a section of the wrong type, strict or not (CAPRKE2's
        // own test: storage as a list), and with strict a key the spec does not have.
        let list = "variant: fcos\nversion: 1.4.0\nstorage:\n  - files: []\n";
        let why = merge(&mut base, list, true).unwrap_err();
        assert!(why.contains("storage is a list, not a mapping"), "{why}");
        assert!(merge(&mut base, list, false).is_err());
        let files = "variant: fcos\nversion: 1.4.0\nstorage: {files: {path: /x}}\n";
        assert!(
            merge(&mut base, files, false)
                .unwrap_err()
                .contains("storage.files")
        );
        let unknown = "variant: fcos\nversion: 1.4.0\nstorag: {}\n";
        assert!(
            merge(&mut base, unknown, true)
                .unwrap_err()
                .contains("strict")
        );
        assert!(merge(&mut base, unknown, false).is_ok());
    }
}
