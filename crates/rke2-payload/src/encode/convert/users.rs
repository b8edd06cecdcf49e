//! `users` and `groups` ↔ `passwd`: a user's `sudo` becomes a sudoers drop-in, the default
//! user's `ssh_authorized_keys` go to `core`.

use serde_json::{Map, Value, json};

use super::emit::yaml_quote;
use super::files::ignition_file;
use super::{CloudConfigDraft, ConvertError, IgnitionDraft, refuse};
use crate::document::{Content, File};

/// `users`, the default user's `ssh_authorized_keys` and `groups` as `passwd`.
pub(super) fn to_ignition(d: &mut IgnitionDraft<'_>) -> Result<(), ConvertError> {
    let users = match d.other("users") {
        Some(users) => keep!(d.refused, users_to_ignition(users)),
        None => Some((Vec::new(), Vec::new())),
    };
    // Groups name members among the users: not checked against users that could not be read.
    let users_read = users.is_some();
    (d.users, d.sudoers) = users.unwrap_or_default();
    if let Some(keys) = d.other("ssh_authorized_keys").filter(|k| !k.is_null()) {
        // cloud-init gives them to the default user, which exists when `users` is not given
        // or lists `default`; else only to root, behind a command that refuses the login.
        let default = match d.other("users") {
            None => true,
            Some(users) => mentions_default(users),
        };
        if default {
            keep!(d.refused, default_user_keys(keys, &mut d.users));
        } else {
            d.refused.push(
                "ssh_authorized_keys (users has no default user: cloud-init gives the keys to root, whose login it refuses)"
                    .to_owned(),
            );
        }
    }
    d.groups = match d.other("groups") {
        Some(groups) if users_read => {
            keep!(d.refused, groups_to_ignition(groups, &d.users)).unwrap_or_default()
        }
        _ => Vec::new(),
    };
    Ok(())
}

/// The sudoers drop-in the users' `sudo` asks for.
pub(super) fn sudoers_to_ignition(d: &mut IgnitionDraft<'_>) -> Result<(), ConvertError> {
    if d.sudoers.is_empty() {
        return Ok(());
    }
    let mut text = String::from("# Created by rke2-payload from cloud-config users[].sudo\n");
    for line in &d.sudoers {
        text.push_str(line);
        text.push('\n');
    }
    d.files.extend(keep!(
        d.refused,
        ignition_file(&File {
            path: "/etc/sudoers.d/90-cloud-init-users".to_owned(),
            mode: Some(0o440),
            owner: Some("root:root".to_owned()),
            encoding: None,
            content: Content::Inline(text.into_bytes()),
            append: false,
        })
    ));
    Ok(())
}

/// `passwd.groups` and `passwd.users` as `groups` and `users`.
pub(super) fn to_cloud_config(d: &mut CloudConfigDraft<'_>) -> Result<(), ConvertError> {
    if d.ignition.unmodelled.contains(&"passwd.groups") {
        d.out.push_str(
            &keep!(
                d.refused,
                groups_to_cloud_config(&d.doc["passwd"]["groups"])
            )
            .unwrap_or_default(),
        );
    }
    if !d.ignition.users.is_empty() {
        d.out.push_str(
            &keep!(d.refused, users_to_cloud_config(&d.doc["passwd"]["users"])).unwrap_or_default(),
        );
    }
    Ok(())
}

/// Ignition `passwd.groups` as cloud-config `groups` (a gid or a password cannot be said there).
fn groups_to_cloud_config(groups: &Value) -> Result<String, ConvertError> {
    let mut out = String::from("groups:\n");
    for g in groups.as_array().into_iter().flatten() {
        let name = g["name"]
            .as_str()
            .ok_or_else(|| refuse("cloud-config", "passwd.groups: a group without a name"))?;
        for key in g.as_object().into_iter().flatten().map(|(k, _)| k.as_str()) {
            if key != "name" {
                return Err(refuse(
                    "cloud-config",
                    format!(
                        "passwd.groups[{}].{key}",
                        crate::codec::text::terminal_safe(name)
                    ),
                ));
            }
        }
        out.push_str(&format!("  - {}\n", yaml_quote(name)));
    }
    Ok(out)
}

/// Ignition `passwd.users` as a cloud-config `users:` block (an Ignition password hash is an
/// unlocked password, so `lock_passwd: false` goes with it).
fn users_to_cloud_config(users: &Value) -> Result<String, ConvertError> {
    const TO: &str = "cloud-config";
    let mut out = String::from("users:\n");
    for u in users.as_array().into_iter().flatten() {
        let name = u["name"]
            .as_str()
            .ok_or_else(|| refuse(TO, "passwd.users: a user without a name"))?;
        out.push_str(&format!("  - name: {}\n", yaml_quote(name)));
        for (key, value) in u.as_object().into_iter().flatten() {
            user_field_to_cloud_config(&mut out, name, key, value)?;
        }
    }
    Ok(out)
}

/// One field (`key`) of the Ignition user `name` as a field of its cloud-config entry.
fn user_field_to_cloud_config(
    out: &mut String,
    name: &str,
    key: &str,
    value: &Value,
) -> Result<(), ConvertError> {
    const TO: &str = "cloud-config";
    let field = |k: &str| {
        format!(
            "passwd.users[{}].{k}",
            crate::codec::text::terminal_safe(name)
        )
    };
    let text = |v: &Value| {
        v.as_str()
            .map(yaml_quote)
            .ok_or_else(|| refuse(TO, field(key)))
    };
    let flag = |v: &Value| v.as_bool().ok_or_else(|| refuse(TO, field(key)));
    let list = |v: &Value| -> Result<Vec<String>, ConvertError> {
        v.as_array()
            .ok_or_else(|| refuse(TO, field(key)))?
            .iter()
            .map(|x| {
                x.as_str()
                    .map(yaml_quote)
                    .ok_or_else(|| refuse(TO, field(key)))
            })
            .collect()
    };
    match key {
        "name" => {}
        "groups" => {
            let groups = list(value)?;
            if !groups.is_empty() {
                out.push_str(&format!("    groups: [{}]\n", groups.join(", ")));
            }
        }
        "sshAuthorizedKeys" => {
            // None is no key: cloud-init's schema takes no empty list.
            let keys = list(value)?;
            if !keys.is_empty() {
                out.push_str("    ssh_authorized_keys:\n");
                for k in keys {
                    out.push_str(&format!("      - {k}\n"));
                }
            }
        }
        "passwordHash" => {
            out.push_str(&format!(
                "    passwd: {}\n    lock_passwd: false\n",
                text(value)?
            ));
        }
        "shell" => out.push_str(&format!("    shell: {}\n", text(value)?)),
        "gecos" => out.push_str(&format!("    gecos: {}\n", text(value)?)),
        "homeDir" => out.push_str(&format!("    homedir: {}\n", text(value)?)),
        "primaryGroup" => out.push_str(&format!("    primary_group: {}\n", text(value)?)),
        "noCreateHome" => out.push_str(&format!("    no_create_home: {}\n", flag(value)?)),
        "noUserGroup" => out.push_str(&format!("    no_user_group: {}\n", flag(value)?)),
        "noLogInit" => out.push_str(&format!("    no_log_init: {}\n", flag(value)?)),
        "system" => out.push_str(&format!("    system: {}\n", flag(value)?)),
        "uid" => {
            let uid = value.as_i64().ok_or_else(|| refuse(TO, field("uid")))?;
            out.push_str(&format!("    uid: {uid}\n"));
        }
        other => return Err(refuse(TO, field(other))),
    }
    Ok(())
}

/// The user Ignition's systems (Fedora CoreOS, Flatcar) are given as their default user.
const DEFAULT_USER: &str = "core";

/// Top-level `ssh_authorized_keys` (the default user's) as keys of `core`.
fn default_user_keys(keys: &Value, users: &mut Vec<Value>) -> Result<(), ConvertError> {
    let keys = match keys {
        Value::Null => return Ok(()),
        Value::Array(_) => names(keys)
            .ok_or_else(|| refuse("Ignition", "ssh_authorized_keys (not a list of keys)"))?,
        _ => {
            return Err(refuse(
                "Ignition",
                "ssh_authorized_keys (not a list of keys)",
            ));
        }
    };
    let user = default_user(users);
    let list = user
        .as_object_mut()
        .map(|u| u.entry("sshAuthorizedKeys").or_insert_with(|| json!([])));
    if let Some(Value::Array(list)) = list {
        for key in keys {
            if !list.iter().any(|k| k == key.as_str()) {
                list.push(json!(key));
            }
        }
    }
    Ok(())
}

/// Whether cloud-config `users` lists `default` (as an entry, or in a comma-separated string).
fn mentions_default(users: &Value) -> bool {
    let names = |s: &str| s.split(',').any(|n| n.trim() == "default");
    match users {
        Value::String(s) => names(s),
        Value::Array(items) => items.iter().any(|i| i.as_str().is_some_and(names)),
        _ => false,
    }
}

/// The `core` entry of `users`, added when it is missing.
fn default_user(users: &mut Vec<Value>) -> &mut Value {
    let at = match users.iter().position(|u| u["name"] == DEFAULT_USER) {
        Some(at) => at,
        None => {
            users.insert(0, json!({"name": DEFAULT_USER}));
            0
        }
    };
    &mut users[at]
}

/// A list of names: a YAML list, or a comma-separated string (cloud-init takes both).
fn names(v: &Value) -> Option<Vec<String>> {
    match v {
        Value::String(s) => Some(
            s.split(',')
                .map(|g| g.trim().to_owned())
                .filter(|g| !g.is_empty())
                .collect(),
        ),
        Value::Array(items) => items
            .iter()
            .map(|i| i.as_str().map(str::to_owned))
            .collect(),
        _ => None,
    }
}

/// cloud-config user fields Ignition has under another name: (cloud-config, Ignition, text or
/// a flag).
const USER_FIELDS: [(&str, &str, bool); 8] = [
    ("primary_group", "primaryGroup", true),
    ("shell", "shell", true),
    ("gecos", "gecos", true),
    ("homedir", "homeDir", true),
    ("no_create_home", "noCreateHome", false),
    ("no_user_group", "noUserGroup", false),
    ("no_log_init", "noLogInit", false),
    ("system", "system", false),
];

/// cloud-config `users` as Ignition `passwd.users`, and the sudoers lines their `sudo` asks for.
fn users_to_ignition(users: &Value) -> Result<(Vec<Value>, Vec<String>), ConvertError> {
    const TO: &str = "Ignition";
    let list: Vec<&Value> = match users {
        Value::Array(items) => items.iter().collect(),
        Value::String(_) => vec![users],
        // cloud-init reads a mapping's keys as user names.
        Value::Object(_) => {
            return Err(refuse(
                TO,
                "users (a mapping, whose keys cloud-init reads as user names: write a list)",
            ));
        }
        _ => return Err(refuse(TO, "users (not a list of users)")),
    };
    let mut out = Vec::new();
    let mut sudoers = Vec::new();
    // Every field that cannot be carried over, named together.
    let mut bad: Vec<String> = Vec::new();
    for u in list {
        let u = match u {
            Value::Object(u) => u,
            Value::String(names) => {
                named_users(names, &mut out);
                continue;
            }
            _ => {
                return Err(refuse(
                    TO,
                    "users: an entry that is neither a name nor a mapping",
                ));
            }
        };
        let name = u
            .get("name")
            .and_then(Value::as_str)
            .ok_or_else(|| refuse(TO, "users: an entry without a name"))?;
        let user = user_to_ignition(name, u, &mut sudoers, &mut bad);
        add_user(&mut out, name, user)?;
    }
    if !bad.is_empty() {
        return Err(refuse(TO, bad.join(", ")));
    }
    Ok((out, sudoers))
}

/// The users a `users` entry names (comma-separated). `default` is the distribution's default
/// user: `core` on Ignition's systems. A bare name is a user with cloud-init's defaults.
fn named_users(names: &str, out: &mut Vec<Value>) {
    for name in names.split(',').map(str::trim).filter(|n| !n.is_empty()) {
        if name == "default" {
            default_user(out);
        } else if !out.iter().any(|u| u["name"] == name) {
            out.push(json!({"name": name}));
        }
    }
}

/// The Ignition entry of the user `name` (`u`, a `users` mapping): the sudoers lines its `sudo`
/// asks for go to `sudoers`, the fields that cannot be carried over to `bad`.
fn user_to_ignition(
    name: &str,
    u: &Map<String, Value>,
    sudoers: &mut Vec<String>,
    bad: &mut Vec<String>,
) -> Map<String, Value> {
    let mut user = Map::new();
    user.insert("name".to_owned(), json!(name));
    for (key, value) in u {
        let field = |k: &str| format!("users[{}].{k}", crate::codec::text::terminal_safe(name));
        if let Some((_, ignition, text)) = USER_FIELDS.iter().find(|(cc, _, _)| cc == key) {
            // Ignition takes text for these, true or false for the flags.
            let right = if *text {
                value.is_string()
            } else {
                value.is_boolean()
            };
            if !right {
                bad.push(field(key));
                continue;
            }
            user.insert((*ignition).to_owned(), value.clone());
            continue;
        }
        match key.as_str() {
            "name" => {}
            "groups" => match names(value) {
                Some(groups) => {
                    user.insert("groups".to_owned(), json!(groups));
                }
                None => bad.push(field("groups")),
            },
            "uid" => {
                match value
                    .as_i64()
                    .or_else(|| value.as_str().and_then(|s| s.parse::<i64>().ok()))
                {
                    Some(uid) => {
                        user.insert("uid".to_owned(), json!(uid));
                    }
                    None => bad.push(field("uid")),
                }
            }
            "ssh_authorized_keys" => match names(value).filter(|_| value.is_array()) {
                Some(keys) => {
                    user.insert("sshAuthorizedKeys".to_owned(), json!(keys));
                }
                None => bad.push(field("ssh_authorized_keys")),
            },
            "passwd" | "hashed_passwd" if !value.is_string() && !value.is_null() => {
                bad.push(field(key));
            }
            "passwd" | "hashed_passwd" => password(u, key, value, &mut user),
            "lock_passwd" => {}
            "sudo" => {
                if !sudo_rules(name, value, sudoers) {
                    bad.push(field("sudo"));
                }
            }
            other => bad.push(field(other)),
        }
    }
    user
}

/// A user's `passwd` or `hashed_passwd` (`key`, of the mapping `u`) as its `passwordHash`.
fn password(u: &Map<String, Value>, key: &str, value: &Value, user: &mut Map<String, Value>) {
    // A locked password (cloud-init's default) is no password to Ignition.
    let locked = u
        .get("lock_passwd")
        .and_then(Value::as_bool)
        .unwrap_or(true);
    // cloud-init sets `hashed_passwd` after `passwd`: it wins.
    let shadowed = key == "passwd" && u.get("hashed_passwd").is_some_and(|h| !h.is_null());
    if !locked && !shadowed && value.is_string() {
        user.insert("passwordHash".to_owned(), value.clone());
    }
}

/// The sudoers lines of the user `name`'s `sudo` added to `sudoers`; false when it is not
/// rules (the lines before a rule that is not text are added).
fn sudo_rules(name: &str, value: &Value, sudoers: &mut Vec<String>) -> bool {
    match value {
        Value::Bool(false) | Value::Null => true,
        Value::String(rule) => {
            sudoers.push(format!("{name} {rule}"));
            true
        }
        Value::Array(rules) => {
            for rule in rules {
                match rule.as_str() {
                    Some(rule) => sudoers.push(format!("{name} {rule}")),
                    None => return false,
                }
            }
            true
        }
        _ => false,
    }
}

/// A user's entry added to `out`; `default` (core) named again takes the entry, which says more.
fn add_user(
    out: &mut Vec<Value>,
    name: &str,
    user: Map<String, Value>,
) -> Result<(), ConvertError> {
    match out.iter_mut().find(|u| u["name"] == name) {
        Some(existing) if existing.as_object().is_some_and(|e| e.len() == 1) => {
            *existing = Value::Object(user);
        }
        Some(_) => {
            return Err(refuse(
                "Ignition",
                format!(
                    "users: {} is listed twice (Ignition takes a user once)",
                    crate::codec::text::terminal_safe(name)
                ),
            ));
        }
        None => out.push(Value::Object(user)),
    }
    Ok(())
}

/// cloud-config `groups` as Ignition `passwd.groups` (names; a group with members is refused).
fn groups_to_ignition(groups: &Value, users: &[Value]) -> Result<Vec<Value>, ConvertError> {
    const TO: &str = "Ignition";
    let mut entries: Vec<(String, Vec<String>)> = Vec::new();
    let items: Vec<&Value> = match groups {
        Value::Array(items) => items.iter().collect(),
        other => vec![other],
    };
    for item in items {
        match item {
            Value::String(s) => {
                entries.extend(s.split(',').map(|g| (g.trim().to_owned(), Vec::new())))
            }
            Value::Object(m) => {
                for (group, members) in m {
                    let members = match members {
                        Value::Null => Vec::new(),
                        other => {
                            names(other).ok_or_else(|| refuse(TO, format!("groups.{group}")))?
                        }
                    };
                    entries.push((group.clone(), members));
                }
            }
            _ => return Err(refuse(TO, "groups (not names or a mapping of members)")),
        }
    }
    let mut out: Vec<Value> = Vec::new();
    for (group, members) in entries {
        if out.iter().any(|g| g["name"] == group.as_str()) {
            continue;
        }
        // cloud-init makes groups before users and adds only members that already exist, so a
        // user this config creates is skipped; an existing one Ignition cannot add to a group
        // without taking the user over.
        if let Some(member) = members.first() {
            let created = users.iter().any(|u| u["name"] == member.as_str());
            let why = if created {
                "is created by this config after the group, so cloud-init skips her: list the group in the user's entry"
            } else {
                "is not a user this config creates"
            };
            return Err(refuse(
                TO,
                format!(
                    "groups.{}: member {} {why}",
                    crate::codec::text::terminal_safe(&group),
                    crate::codec::text::terminal_safe(member)
                ),
            ));
        }
        out.push(json!({"name": group}));
    }
    Ok(out)
}
