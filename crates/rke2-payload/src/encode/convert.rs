//! Converting user data between cloud-config and Ignition 3.3.
//!
//! cloud-config → Ignition: `write_files` become `storage.files` (the smallest of a
//! percent-encoded, base64 or gzip+base64 `data:` URL, as Butane picks), `runcmd` becomes
//! `/etc/rke2-install.sh` run once by a oneshot `rke2-install.service` guarded the way CAPRKE2's
//! is, `ntp` becomes `/etc/chrony.conf` and `chronyd.service`, `users` and `groups` become
//! `passwd` (a user's `sudo` a sudoers drop-in).
//!
//! Ignition → cloud-config: files become `write_files`, the commands of the script a oneshot unit
//! runs become `runcmd`, enabled units without contents become `systemctl enable --now`, a
//! mounted filesystem that is not wiped becomes a `mounts` entry, and `passwd` users and groups
//! become `users` and `groups`.
//!
//! Anything else cannot be carried over and is an error that names it; nothing is dropped.

use serde_json::{Map, Value, json};

use crate::codec::{b64, dataurl, gzip};
use crate::document::{CloudConfig, Content, Document, DocumentError, File, Ignition};
use crate::payload::{Format, Payload};

/// Where the install script goes.
pub(crate) const SCRIPT_PATH: &str = "/etc/rke2-install.sh";

/// The oneshot unit that runs the script once.
pub(crate) const UNIT_NAME: &str = "rke2-install.service";

const UNIT: &str = "[Unit]\nDescription=rke2-install\nWants=network-online.target\nAfter=network-online.target network.target\nConditionPathExists=!/etc/cluster-api/bootstrap-success.complete\n[Service]\nUser=root\n# To not restart the unit when it exits, as it is expected.\nType=oneshot\nExecStart=/etc/rke2-install.sh\n[Install]\nWantedBy=multi-user.target\n";

/// Why a payload could not be converted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ConvertError {
    /// The user data cannot be read as its format.
    #[error(transparent)]
    Unreadable(#[from] DocumentError),
    /// Something the target format cannot express.
    #[error("cannot be carried over to {to}: {what}")]
    Inexpressible {
        /// The target format.
        to: &'static str,
        /// What cannot be carried over.
        what: String,
    },
}

fn refuse(to: &'static str, what: impl Into<String>) -> ConvertError {
    ConvertError::Inexpressible {
        to,
        what: what.into(),
    }
}

/// The user data of `payload` converted to `to` (uncompressed), or `None` when it already is
/// in that format.
///
/// ```
/// use rke2_payload::{Envelope, DecodeOptions, Format, Selector, convert};
///
/// let secret = br##"{"kind": "Secret", "metadata": {"name": "w"},
///   "stringData": {"format": "cloud-config", "value": "#cloud-config\nruncmd: [reboot]\n"}}"##;
/// let options = DecodeOptions::default();
/// let payload = Envelope::parse(secret, &options)?.select(&Selector::default())?.decode(&options)?;
/// let ignition = convert(&payload, Format::Ignition).expect("convertible").expect("converted");
/// assert!(ignition.starts_with(b"{\"ignition\":{"));
/// # Ok::<(), rke2_payload::Error>(())
/// ```
///
/// # Errors
/// [`ConvertError::Unreadable`] when the user data cannot be read, and
/// [`ConvertError::Inexpressible`] naming what the target format cannot hold.
pub fn convert(payload: &Payload<'_>, to: Format) -> Result<Option<Vec<u8>>, ConvertError> {
    if to == payload.format() {
        return Ok(None);
    }
    // The document has the payload's format, so its kind says where it goes.
    match Document::parse(payload)? {
        Document::CloudConfig(c) => to_ignition(&c).map(Some),
        Document::Ignition(i) => {
            let groups = i.unmodelled.contains(&"passwd.groups");
            if (i.users.is_empty() && !groups) || i.nested {
                if i.nested && (!i.users.is_empty() || groups) {
                    return Err(refuse(
                        "cloud-config",
                        "passwd of a nested config (merge or replace)",
                    ));
                }
                return to_cloud_config_with_users(&i, "", false).map(Some);
            }
            let doc: Value = serde_json::from_slice(payload.userdata())
                .map_err(|e| refuse("cloud-config", format!("passwd ({e})")))?;
            let mut block = String::new();
            if groups {
                block.push_str(&groups_to_cloud_config(&doc["passwd"]["groups"])?);
            }
            if !i.users.is_empty() {
                block.push_str(&users_to_cloud_config(&doc["passwd"]["users"])?);
            }
            to_cloud_config_with_users(&i, &block, groups).map(Some)
        }
    }
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
        let map = u.as_object().into_iter().flatten();
        for (key, value) in map {
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
            match key.as_str() {
                "name" => {}
                "groups" => out.push_str(&format!("    groups: [{}]\n", list(value)?.join(", "))),
                "sshAuthorizedKeys" => {
                    out.push_str("    ssh_authorized_keys:\n");
                    for k in list(value)? {
                        out.push_str(&format!("      - {k}\n"));
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
        }
    }
    Ok(out)
}

/// cloud-config → Ignition 3.3 JSON.
pub(crate) fn to_ignition(config: &CloudConfig) -> Result<Vec<u8>, ConvertError> {
    const TO: &str = "Ignition";
    let mut leftovers: Vec<&str> = config
        .other
        .iter()
        .map(|(k, _)| k.as_str())
        .filter(|k| !matches!(*k, "ntp" | "mounts" | "users" | "groups"))
        .collect();
    leftovers.sort_unstable();
    if !leftovers.is_empty() {
        let explain = |k: &&str| -> String {
            match *k {
                "ssh_authorized_keys" => "ssh_authorized_keys (keys of the distribution's default user, which Ignition does not know: give them to a named user)".to_owned(),
                "device_aliases" | "disk_setup" | "fs_setup" => format!(
                    "{k} (cloud-init partitions and formats by its own disk names; write Ignition storage.disks and storage.filesystems by device path)"
                ),
                other => other.to_owned(),
            }
        };
        return Err(refuse(
            TO,
            format!(
                "top-level keys {}",
                leftovers.iter().map(explain).collect::<Vec<_>>().join(", ")
            ),
        ));
    }
    let other = |key: &str| {
        config
            .other
            .iter()
            .rev()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v)
    };
    let (mut passwd_users, sudoers) = match other("users") {
        Some(users) => users_to_ignition(users)?,
        None => (Vec::new(), Vec::new()),
    };
    let passwd_groups = match other("groups") {
        Some(groups) => groups_to_ignition(groups, &mut passwd_users)?,
        None => Vec::new(),
    };
    if config.commands.iter().any(|c| c.origin == "bootcmd") {
        return Err(refuse(
            TO,
            "bootcmd (runs at every boot, before the network)",
        ));
    }
    let mut files = Vec::new();
    for file in &config.files {
        files.push(ignition_file(file)?);
    }
    let mut units = Vec::new();
    let all: Vec<&str> = config.commands.iter().map(|c| c.line.as_str()).collect();
    let existing = config.files.iter().rev().find(|f| f.path == SCRIPT_PATH);
    match existing {
        // Converted from Ignition before: the script is already a file. Its lines come first;
        // `systemctl enable --now X` after them came from units without contents.
        Some(file) => {
            let script: Vec<String> = file
                .text()
                .map(|t| crate::document::ignition::script_lines(&t).collect())
                .unwrap_or_default();
            let rest = all
                .strip_prefix(
                    script
                        .iter()
                        .map(String::as_str)
                        .collect::<Vec<_>>()
                        .as_slice(),
                )
                .ok_or_else(|| {
                    refuse(
                        TO,
                        format!("runcmd, because {SCRIPT_PATH} already holds another script"),
                    )
                })?;
            let mut extra = Vec::new();
            for line in rest {
                match line.strip_prefix("systemctl enable --now ") {
                    Some(unit) if !unit.contains(char::is_whitespace) => extra.push(unit),
                    _ => {
                        return Err(refuse(
                            TO,
                            format!("runcmd, because {SCRIPT_PATH} already holds another script"),
                        ));
                    }
                }
            }
            units.push(json!({"contents": UNIT, "enabled": true, "name": UNIT_NAME}));
            for unit in extra {
                units.push(json!({"enabled": true, "name": unit}));
            }
        }
        None if !all.is_empty() => {
            let mut script = String::from("#!/bin/bash\nset -euo pipefail\n\n");
            for line in &all {
                script.push_str(line);
                script.push('\n');
            }
            files.push(ignition_file(&File {
                path: SCRIPT_PATH.to_owned(),
                mode: Some(0o700),
                owner: None,
                encoding: None,
                content: Content::Inline(script.into_bytes()),
                append: false,
            })?);
            units.push(json!({"contents": UNIT, "enabled": true, "name": UNIT_NAME}));
        }
        None => {}
    }
    if let Some(ntp) = &config.ntp
        && (!ntp.servers.is_empty() || !ntp.pools.is_empty())
    {
        let mut chrony = String::from("# Configured by rke2-payload from cloud-config ntp\n");
        for s in &ntp.servers {
            chrony.push_str(&format!("server {s} iburst\n"));
        }
        for p in &ntp.pools {
            chrony.push_str(&format!("pool {p} iburst\n"));
        }
        chrony.push_str("driftfile /var/lib/chrony/drift\nmakestep 1.0 3\nrtcsync\n");
        files.push(ignition_file(&File {
            path: "/etc/chrony.conf".to_owned(),
            mode: Some(0o644),
            owner: None,
            encoding: None,
            content: Content::Inline(chrony.into_bytes()),
            append: false,
        })?);
        if !units.iter().any(|u| u["name"] == "chronyd.service") {
            units.push(json!({"enabled": true, "name": "chronyd.service"}));
        }
    }
    if !sudoers.is_empty() {
        let mut text = String::from("# Created by rke2-payload from cloud-config users[].sudo\n");
        for line in &sudoers {
            text.push_str(line);
            text.push('\n');
        }
        files.push(ignition_file(&File {
            path: "/etc/sudoers.d/90-cloud-init-users".to_owned(),
            mode: Some(0o440),
            owner: Some("root:root".to_owned()),
            encoding: None,
            content: Content::Inline(text.into_bytes()),
            append: false,
        })?);
    }
    let filesystems = mounts(config)?;
    let mut paths = std::collections::HashSet::new();
    for f in &files {
        let path = f["path"].as_str().unwrap_or("");
        if !paths.insert(path.to_owned()) {
            return Err(refuse(
                TO,
                format!("{path} is written twice (Ignition rejects duplicates)"),
            ));
        }
    }
    let doc = json!({
        "ignition": {"config": {"replace": {"verification": {}}}, "proxy": {}, "security": {"tls": {}}, "timeouts": {}, "version": "3.3.0"},
        "kernelArguments": {},
        "passwd": passwd(passwd_users, passwd_groups),
        "storage": if filesystems.is_empty() {
            json!({"files": files})
        } else {
            json!({"files": files, "filesystems": filesystems})
        },
        "systemd": {"units": units},
    });
    Ok(doc.to_string().into_bytes())
}

/// `passwd` with its users and groups (`{}` with neither).
fn passwd(users: Vec<Value>, groups: Vec<Value>) -> Value {
    let mut p = Map::new();
    if !groups.is_empty() {
        p.insert("groups".to_owned(), Value::Array(groups));
    }
    if !users.is_empty() {
        p.insert("users".to_owned(), Value::Array(users));
    }
    Value::Object(p)
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

/// cloud-config `users` as Ignition `passwd.users`, and the sudoers lines their `sudo` asks for.
fn users_to_ignition(users: &Value) -> Result<(Vec<Value>, Vec<String>), ConvertError> {
    const TO: &str = "Ignition";
    let list: Vec<&Value> = match users {
        Value::Array(items) => items.iter().collect(),
        Value::String(_) | Value::Object(_) => vec![users],
        _ => return Err(refuse(TO, "users (not a list of users)")),
    };
    let mut out = Vec::new();
    let mut sudoers = Vec::new();
    for u in list {
        let Value::Object(u) = u else {
            return Err(refuse(
                TO,
                "users: \"default\" or a bare name (the distribution's default user, which Ignition does not know)",
            ));
        };
        let name = u
            .get("name")
            .and_then(Value::as_str)
            .ok_or_else(|| refuse(TO, "users: an entry without a name"))?;
        let mut user = Map::new();
        user.insert("name".to_owned(), json!(name));
        for (key, value) in u {
            let field = |k: &str| format!("users[{}].{k}", crate::codec::text::terminal_safe(name));
            match key.as_str() {
                "name" => {}
                "groups" => {
                    let groups = names(value).ok_or_else(|| refuse(TO, field("groups")))?;
                    user.insert("groups".to_owned(), json!(groups));
                }
                "primary_group" => {
                    user.insert("primaryGroup".to_owned(), value.clone());
                }
                "shell" => {
                    user.insert("shell".to_owned(), value.clone());
                }
                "gecos" => {
                    user.insert("gecos".to_owned(), value.clone());
                }
                "homedir" => {
                    user.insert("homeDir".to_owned(), value.clone());
                }
                "no_create_home" => {
                    user.insert("noCreateHome".to_owned(), value.clone());
                }
                "no_user_group" => {
                    user.insert("noUserGroup".to_owned(), value.clone());
                }
                "no_log_init" => {
                    user.insert("noLogInit".to_owned(), value.clone());
                }
                "system" => {
                    user.insert("system".to_owned(), value.clone());
                }
                "uid" => {
                    let uid = value
                        .as_i64()
                        .or_else(|| value.as_str().and_then(|s| s.parse().ok()))
                        .ok_or_else(|| refuse(TO, field("uid")))?;
                    user.insert("uid".to_owned(), json!(uid));
                }
                "ssh_authorized_keys" => {
                    let keys = names(value)
                        .filter(|_| value.is_array())
                        .ok_or_else(|| refuse(TO, field("ssh_authorized_keys")))?;
                    user.insert("sshAuthorizedKeys".to_owned(), json!(keys));
                }
                "passwd" | "hashed_passwd" => {
                    // A locked password (cloud-init's default) is no password to Ignition.
                    let locked = u
                        .get("lock_passwd")
                        .and_then(Value::as_bool)
                        .unwrap_or(true);
                    if !locked {
                        user.insert("passwordHash".to_owned(), value.clone());
                    }
                }
                "lock_passwd" => {}
                "sudo" => match value {
                    Value::Bool(false) | Value::Null => {}
                    Value::String(rule) => sudoers.push(format!("{name} {rule}")),
                    Value::Array(rules) => {
                        for rule in rules {
                            let rule = rule.as_str().ok_or_else(|| refuse(TO, field("sudo")))?;
                            sudoers.push(format!("{name} {rule}"));
                        }
                    }
                    _ => return Err(refuse(TO, field("sudo"))),
                },
                other => return Err(refuse(TO, field(other))),
            }
        }
        out.push(Value::Object(user));
    }
    Ok((out, sudoers))
}

/// cloud-config `groups` as Ignition `passwd.groups`; members become groups of users the config
/// also creates.
fn groups_to_ignition(groups: &Value, users: &mut [Value]) -> Result<Vec<Value>, ConvertError> {
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
    let mut out = Vec::new();
    for (group, members) in entries {
        for member in members {
            let user = users
                .iter_mut()
                .find(|u| u["name"] == member.as_str())
                .ok_or_else(|| {
                    refuse(
                        TO,
                        format!(
                            "groups.{group}: member {} is not a user this config creates",
                            crate::codec::text::terminal_safe(&member)
                        ),
                    )
                })?;
            if let Some(user) = user.as_object_mut()
                && let Value::Array(list) = user.entry("groups").or_insert_with(|| json!([]))
                && !list.iter().any(|g| g == group.as_str())
            {
                list.push(json!(group));
            }
        }
        out.push(json!({"name": group}));
    }
    Ok(out)
}

/// cloud-config `mounts` entries as Ignition filesystems that are mounted, never formatted.
fn mounts(config: &CloudConfig) -> Result<Vec<Value>, ConvertError> {
    let Some((_, Value::Array(entries))) = config.other.iter().find(|(k, _)| k == "mounts") else {
        return Ok(Vec::new());
    };
    let mut out = Vec::new();
    for entry in entries {
        let fields: Vec<&str> = entry
            .as_array()
            .map(|a| a.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let [device, path, format, options, ..] = fields.as_slice() else {
            return Err(refuse(
                "Ignition",
                "a mounts entry without device, path, type and options",
            ));
        };
        let options: Vec<&str> = options.split(',').filter(|o| *o != "defaults").collect();
        let mut fs = Map::new();
        fs.insert("device".to_owned(), json!(device));
        fs.insert("format".to_owned(), json!(format));
        if !options.is_empty() {
            fs.insert("mountOptions".to_owned(), json!(options));
        }
        fs.insert("path".to_owned(), json!(path));
        fs.insert("wipeFilesystem".to_owned(), json!(false));
        out.push(Value::Object(fs));
    }
    Ok(out)
}

fn ignition_file(file: &File) -> Result<Value, ConvertError> {
    if !file.path.starts_with('/') {
        return Err(refuse("Ignition", format!("{}: relative path", file.path)));
    }
    let (user, group) = match file.owner.as_deref() {
        Some(owner) => match owner.split_once(':') {
            Some((u, g)) => (node(u.trim()), node(g.trim())),
            None => (node(owner.trim()), json!({})),
        },
        None => (json!({}), json!({})),
    };
    let contents = match &file.content {
        Content::Inline(bytes) => data_url(bytes),
        Content::Remote(url) => json!({"compression": "", "source": url, "verification": {}}),
        Content::Undecodable(why) => {
            return Err(refuse(
                "Ignition",
                format!("{}: content cannot be decoded ({why})", file.path),
            ));
        }
    };
    let mut entry = Map::new();
    entry.insert("group".to_owned(), group);
    entry.insert("overwrite".to_owned(), Value::Bool(!file.append));
    entry.insert("path".to_owned(), Value::String(file.path.clone()));
    entry.insert("user".to_owned(), user);
    if file.append {
        entry.insert("append".to_owned(), Value::Array(vec![contents]));
    } else {
        entry.insert("contents".to_owned(), contents);
    }
    if let Some(mode) = file.mode {
        entry.insert("mode".to_owned(), json!(mode));
    }
    Ok(Value::Object(entry))
}

fn node(name: &str) -> Value {
    if name.is_empty() {
        json!({})
    } else if let Ok(id) = name.parse::<u32>() {
        json!({"id": id})
    } else {
        json!({"name": name})
    }
}

/// The smallest of a percent-encoded, base64, or gzip+base64 data URL (Butane's rule).
pub(crate) fn data_url(bytes: &[u8]) -> Value {
    let percent = format!("data:,{}", dataurl::percent_encode(bytes));
    let base64 = format!("data:;base64,{}", b64::encode(bytes));
    let (mut best, mut compression) = if base64.len() < percent.len() {
        (base64, "")
    } else {
        (percent, "")
    };
    let gz = format!("data:;base64,{}", b64::encode(&gzip::deflate(bytes, 9)));
    if gz.len() + 4 < best.len() {
        best = gz;
        compression = "gzip";
    }
    json!({"compression": compression, "source": best, "verification": {}})
}

/// Ignition → cloud-config text.
#[cfg(test)]
pub(crate) fn to_cloud_config(ignition: &Ignition) -> Result<Vec<u8>, ConvertError> {
    to_cloud_config_with_users(ignition, "", false)
}

/// Ignition → cloud-config text, with the `users:` block of its `passwd.users` (empty when it
/// has none; users are refused when the block is missing).
fn to_cloud_config_with_users(
    ignition: &Ignition,
    users: &str,
    groups_carried: bool,
) -> Result<Vec<u8>, ConvertError> {
    const TO: &str = "cloud-config";
    let unmodelled: Vec<&str> = ignition
        .unmodelled
        .iter()
        .copied()
        .filter(|u| !(groups_carried && *u == "passwd.groups"))
        .collect();
    if !unmodelled.is_empty() {
        return Err(refuse(TO, unmodelled.join(", ")));
    }
    if !ignition.directories.is_empty() {
        return Err(refuse(TO, "storage.directories"));
    }
    if !ignition.links.is_empty() {
        return Err(refuse(TO, "storage.links"));
    }
    if !ignition.users.is_empty() && users.is_empty() {
        return Err(refuse(TO, "passwd.users"));
    }
    if ignition.config_sources.iter().any(|s| !s.is_empty()) {
        return Err(refuse(TO, "ignition.config merge/replace sources"));
    }
    let mut mounts = Vec::new();
    for fs in &ignition.filesystems {
        match (&fs.path, fs.wipe) {
            (Some(path), false) => mounts.push((
                fs.device.clone(),
                path.clone(),
                fs.format.clone().unwrap_or_else(|| "auto".to_owned()),
                if fs.mount_options.is_empty() {
                    "defaults".to_owned()
                } else {
                    fs.mount_options.join(",")
                },
            )),
            _ => {
                return Err(refuse(
                    TO,
                    format!("filesystem on {} (formatting a device)", fs.device),
                ));
            }
        }
    }
    let mut commands = Vec::new();
    for unit in &ignition.units {
        if !unit.dropins.is_empty() {
            return Err(refuse(TO, format!("systemd drop-ins of {}", unit.name)));
        }
        match (&unit.contents, unit.enabled) {
            (None, Some(true)) if unit.mask != Some(true) => {
                commands.push(format!("systemctl enable --now {}", unit.name));
            }
            (None, _) if unit.mask == Some(true) => {
                commands.push(format!("systemctl mask {}", unit.name));
            }
            (Some(text), Some(true)) => match oneshot_script(text, &ignition.files) {
                Some(script) => commands.extend(crate::document::ignition::script_lines(&script)),
                None => return Err(refuse(TO, format!("systemd unit {}", unit.name))),
            },
            _ => return Err(refuse(TO, format!("systemd unit {}", unit.name))),
        }
    }
    let mut out = String::from("#cloud-config\n");
    out.push_str(users);
    if !ignition.files.is_empty() {
        out.push_str("write_files:\n");
        for file in &ignition.files {
            write_file_entry(&mut out, file)?;
        }
    }
    if !mounts.is_empty() {
        out.push_str("mounts:\n");
        for (device, path, format, options) in &mounts {
            out.push_str(&format!(
                "- [{}, {}, {}, {}, '0', '0']\n",
                yaml_quote(device),
                yaml_quote(path),
                yaml_quote(format),
                yaml_quote(options)
            ));
        }
    }
    if !commands.is_empty() {
        out.push_str("runcmd:\n");
        for c in &commands {
            out.push_str(&format!("- {}\n", yaml_quote(c)));
        }
    }
    Ok(out.into_bytes())
}

/// The script a oneshot unit runs, when it is a file of the config.
fn oneshot_script(unit: &str, files: &[File]) -> Option<String> {
    if !unit.lines().any(|l| l.trim() == "Type=oneshot") {
        return None;
    }
    let exec = unit
        .lines()
        .find_map(|l| l.trim().strip_prefix("ExecStart="))?;
    let program = exec.split_whitespace().next()?;
    files
        .iter()
        .rev()
        .find(|f| f.path == program)
        .and_then(|f| f.text().map(|t| t.into_owned()))
}

fn write_file_entry(out: &mut String, file: &File) -> Result<(), ConvertError> {
    out.push_str(&format!("-   path: {}\n", yaml_quote(&file.path)));
    if let Some(owner) = &file.owner {
        out.push_str(&format!("    owner: {}\n", yaml_quote(owner)));
    }
    if let Some(mode) = file.mode {
        out.push_str(&format!("    permissions: '{mode:04o}'\n"));
    }
    if file.append {
        out.push_str("    append: true\n");
    }
    match &file.content {
        Content::Inline(bytes) => match std::str::from_utf8(bytes) {
            Ok(text) if block_safe(text) => {
                if text.is_empty() {
                    out.push_str("    content: ''\n");
                } else {
                    out.push_str("    content: |\n");
                    for line in text.lines() {
                        out.push_str("      ");
                        out.push_str(line);
                        out.push('\n');
                    }
                }
            }
            _ => {
                out.push_str("    encoding: b64\n");
                out.push_str(&format!("    content: {}\n", b64::encode(bytes)));
            }
        },
        Content::Remote(url) => {
            out.push_str(&format!("    source:\n      uri: {}\n", yaml_quote(url)));
        }
        Content::Undecodable(why) => {
            return Err(refuse(
                "cloud-config",
                format!("{}: content cannot be decoded ({why})", file.path),
            ));
        }
    }
    Ok(())
}

/// Whether text survives a `|` block scalar unchanged: ends with exactly one newline, no
/// carriage returns or control characters, the first line not indented.
fn block_safe(text: &str) -> bool {
    if text.is_empty() {
        return true;
    }
    text.ends_with('\n')
        && !text.ends_with("\n\n")
        && !text.starts_with([' ', '\t', '\n'])
        && !text
            .chars()
            .any(|c| (c.is_control() && c != '\n' && c != '\t') || c == '\u{feff}')
}

/// A YAML scalar: single-quoted unless it is plainly safe.
fn yaml_quote(s: &str) -> String {
    let plain = !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-".contains(c))
        && !s.starts_with(['-', '.'])
        && s.parse::<f64>().is_err()
        && !matches!(
            s.to_ascii_lowercase().as_str(),
            "yes" | "no" | "on" | "off" | "true" | "false" | "null" | "y" | "n"
        );
    if plain {
        return s.to_owned();
    }
    // A single-quoted scalar cannot hold a line break as it is, nor a character YAML does not
    // print (C0, DEL, C1, U+FEFF, U+FFFE–U+FFFF): those are written double-quoted, escaped.
    let needs_escape = |c: char| matches!(c, '\u{0}'..='\u{1f}' | '\u{7f}'..='\u{84}' | '\u{86}'..='\u{9f}' | '\u{feff}' | '\u{fffe}' | '\u{ffff}');
    if !s.chars().any(needs_escape) {
        return format!("'{}'", s.replace('\'', "''"));
    }
    let mut out = String::with_capacity(s.len() + 8);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if needs_escape(c) && (c as u32) < 0x100 => {
                out.push_str(&format!("\\x{:02x}", c as u32));
            }
            c if needs_escape(c) => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const CC: &str = "#cloud-config\nwrite_files:\n- path: /etc/a\n  owner: root:root\n  permissions: '0640'\n  content: |\n    x: 1\nruncmd:\n  - echo 'hi'\nntp:\n  servers: [a.example]\n";

    #[test]
    fn scalars_yaml_does_not_print_are_escaped() {
        for text in [
            "/etc/a\u{7f}b",
            "a\nb",
            "x\u{1b}[2J",
            "q\"uo\\te\u{85}",
            "bom\u{feff}",
            "it's",
        ] {
            let yaml = format!("k: {}\n", yaml_quote(text));
            let value: serde_json::Value = serde_saphyr::from_str(&yaml).unwrap();
            assert_eq!(value["k"], text, "{yaml}");
        }
    }

    #[test]
    fn cloud_config_to_ignition_and_back() {
        let cc = CloudConfig::parse(CC).unwrap();
        let ign = to_ignition(&cc).unwrap();
        let parsed = Ignition::parse(std::str::from_utf8(&ign).unwrap()).unwrap();
        assert!(parsed.problems.is_empty(), "{:?}", parsed.problems);
        let a = parsed.files.iter().find(|f| f.path == "/etc/a").unwrap();
        assert_eq!(a.bytes(), Some(&b"x: 1\n"[..]));
        assert_eq!(a.mode, Some(0o640));
        assert_eq!(a.owner.as_deref(), Some("root:root"));
        assert_eq!(
            parsed
                .commands
                .iter()
                .map(|c| c.line.as_str())
                .collect::<Vec<_>>(),
            ["echo 'hi'"]
        );
        let back = to_cloud_config(&parsed).unwrap();
        let again = CloudConfig::parse(std::str::from_utf8(&back).unwrap()).unwrap();
        assert!(again.problems.is_empty(), "{:?}", again.problems);
        let lines: Vec<_> = again.commands.iter().map(|c| c.line.as_str()).collect();
        assert_eq!(
            lines,
            ["echo 'hi'", "systemctl enable --now chronyd.service"]
        );
        assert_eq!(
            again
                .files
                .iter()
                .find(|f| f.path == "/etc/a")
                .unwrap()
                .bytes(),
            Some(&b"x: 1\n"[..])
        );
    }

    #[test]
    fn what_cannot_be_carried_over_is_named() {
        let cc = CloudConfig::parse("#cloud-config\nusers: [a]\npackages: [b]\n").unwrap();
        let what = |e: ConvertError| match e {
            ConvertError::Inexpressible { what, .. } => what,
            other => panic!("{other}"),
        };
        let e = to_ignition(&cc).unwrap_err();
        // `packages` has no Ignition equivalent; `users` would convert, but `a` is the bare
        // name of the distribution's default user.
        assert_eq!(what(e), "top-level keys packages");
        let cc = CloudConfig::parse("#cloud-config\nusers: [a]\n").unwrap();
        assert!(what(to_ignition(&cc).unwrap_err()).contains("default user"));
        let cc = CloudConfig::parse("#cloud-config\nbootcmd: [a]\n").unwrap();
        assert!(what(to_ignition(&cc).unwrap_err()).contains("bootcmd"));
        let ign = Ignition::parse(r#"{"ignition":{"version":"3.3.0"},"systemd":{"units":[{"name":"x.service","enabled":true,"contents":"[Service]\nExecStart=/bin/true\n"}]}}"#).unwrap();
        assert_eq!(
            what(to_cloud_config(&ign).unwrap_err()),
            "systemd unit x.service"
        );
    }

    #[test]
    fn binary_and_awkward_text_become_base64() {
        assert!(block_safe("a\nb\n"));
        assert!(!block_safe("a"));
        assert!(!block_safe("a\n\n"));
        assert!(!block_safe("  indented\n"));
        assert!(!block_safe("a\r\n"));
        assert_eq!(yaml_quote("/etc/x.conf"), "/etc/x.conf");
        assert_eq!(yaml_quote("it's"), "'it''s'");
        assert_eq!(yaml_quote("yes"), "'yes'");
    }
}
