//! Converting user data between cloud-config and Ignition 3.3.
//!
//! cloud-config → Ignition: `write_files` become `storage.files` (the smallest of a
//! percent-encoded, base64 or gzip+base64 `data:` URL, as Butane picks), `runcmd` becomes
//! `/etc/rke2-install.sh` run once by a oneshot `rke2-install.service` guarded the way CAPRKE2's
//! is, `bootcmd` becomes `/etc/rke2-bootcmd.sh` run at every boot by `rke2-bootcmd.service`,
//! `ntp` becomes `/etc/chrony.conf` and `chronyd.service`, `users` and `groups` become `passwd`
//! (a user's `sudo` a sudoers drop-in; the default user's keys go to `core`), and
//! `device_aliases`, `disk_setup`, `fs_setup` and `mounts` become `storage.disks`,
//! `storage.filesystems` and `.mount` units ([`storage`]).
//!
//! Ignition → cloud-config: files become `write_files`, the script `rke2-install.service` runs
//! becomes `runcmd` and the one `rke2-bootcmd.service` runs `bootcmd`, other units become unit
//! files (and drop-ins) with `systemctl enable --now`, `disable --now` or `mask`, directories
//! and links become the first `runcmd` lines (`install -d`, `ln`), disks and filesystems become
//! `disk_setup`, `fs_setup` and `mounts`, and `passwd` users and groups become `users` and
//! `groups`. What a conversion wrote reads back as what it came from, so a second round trip
//! changes nothing (the `convert` fuzz target checks it).
//!
//! Anything else cannot be carried over and is an error that names it; nothing is dropped.

use serde_json::{Map, Value, json};

use crate::codec::{b64, dataurl, gzip};
use crate::document::{CloudConfig, Content, Document, DocumentError, File, Ignition};
use crate::payload::{Format, Payload};

/// The value of a step that may not carry something over, or `None` with what it could not
/// carry added to `$refused` (a conversion names everything it cannot carry at once); other
/// errors return.
macro_rules! keep {
    ($refused:ident, $result:expr) => {
        match $result {
            Ok(value) => Some(value),
            Err(ConvertError::Inexpressible { what, .. }) => {
                $refused.push(what);
                None
            }
            Err(other) => return Err(other),
        }
    };
}

mod shell;
mod storage;

/// Where the install script goes.
pub(crate) const SCRIPT_PATH: &str = "/etc/rke2-install.sh";

/// The oneshot unit that runs the script once.
pub(crate) const UNIT_NAME: &str = "rke2-install.service";

/// CAPRKE2's install unit, run on the first boot only (cloud-init runs runcmd once per
/// instance).
const UNIT: &str = "[Unit]\nDescription=rke2-install\nWants=network-online.target\nAfter=network-online.target network.target\nConditionPathExists=!/etc/cluster-api/bootstrap-success.complete\nConditionFirstBoot=yes\n[Service]\nUser=root\n# To not restart the unit when it exits, as it is expected.\nType=oneshot\nExecStart=/etc/rke2-install.sh\n[Install]\nWantedBy=multi-user.target\n";

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
        Document::CloudConfig(c) => {
            if c.problems
                .iter()
                .any(|p| p.check == crate::checks::Check::UserdataNotCloudConfig)
            {
                // A script, an archive, MIME parts: none of it is a cloud-config's modules.
                // Named by its header's first word only: the rest of the line (a script's
                // arguments, an include's URL) may hold a credential.
                let text = String::from_utf8_lossy(payload.userdata());
                let header = text.split_whitespace().next().unwrap_or("");
                let kind = if header.starts_with("#!") {
                    "a script".to_owned()
                } else if header.starts_with('#') {
                    format!(
                        "a cloud-init `{}` part",
                        crate::codec::text::terminal_safe(&crate::codec::text::shorten(header, 30))
                    )
                } else if text
                    .trim_start()
                    .to_ascii_lowercase()
                    .starts_with("content-type:")
                    || text
                        .trim_start()
                        .to_ascii_lowercase()
                        .starts_with("mime-version:")
                {
                    "MIME multipart".to_owned()
                } else {
                    "not cloud-init user data".to_owned()
                };
                return Err(refuse(
                    "Ignition",
                    format!(
                        "all of it: the user data is {kind}, not a cloud-config, and only cloud-config modules convert"
                    ),
                ));
            }
            if let Some(line) = c.repaired_lines.first() {
                // Read by the tolerant pass only: cloud-init rejects the whole document.
                return Err(refuse(
                    "Ignition",
                    format!(
                        "all of it: the cloud-config is not valid YAML (line {line}), so cloud-init runs none of it"
                    ),
                ));
            }
            let text = String::from_utf8_lossy(payload.userdata());
            if c.jinja && (text.contains("{{") || text.contains("{%")) {
                return Err(refuse(
                    "Ignition",
                    "the Jinja expressions of a `## template: jinja` cloud-config (cloud-init fills them in at boot from instance data, Ignition has no templates)",
                ));
            }
            to_ignition(&c).map(Some)
        }
        Document::Ignition(i) => {
            let (doc, merged) = in_effect(payload.userdata())?;
            to_cloud_config(&i, &doc, merged).map(Some)
        }
    }
}

/// The config in effect, as JSON: a `config.replace` data URL stands for the config that
/// carries it (CAPRKE2's gzip wrapper is one); and whether configs are merged into it.
fn in_effect(text: &[u8]) -> Result<(Value, bool), ConvertError> {
    let unreadable = |why: String| {
        ConvertError::Unreadable(DocumentError::Ignition {
            message: format!("the config cannot be read again: {why}"),
        })
    };
    let mut doc: Value = serde_json::from_slice(text).map_err(|e| unreadable(e.to_string()))?;
    for _ in 0..crate::document::ignition::MAX_NESTING {
        let replace = &doc["ignition"]["config"]["replace"];
        let Some(source) = replace["source"]
            .as_str()
            .filter(|s| s.starts_with("data:"))
        else {
            break;
        };
        let inner =
            crate::document::ignition::nested_config(source, replace["compression"].as_str())
                .unwrap_or_else(|| Err("not a data URL".to_owned()))
                .map_err(unreadable)?;
        doc = serde_json::from_str(&inner).map_err(|e| unreadable(e.to_string()))?;
    }
    let merged = doc["ignition"]["config"]["merge"]
        .as_array()
        .is_some_and(|m| {
            m.iter()
                .any(|r| r["source"].as_str().is_some_and(|s| !s.is_empty()))
        });
    Ok((doc, merged))
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
        }
    }
    Ok(out)
}

/// cloud-config → Ignition 3.3 JSON.
pub(crate) fn to_ignition(config: &CloudConfig) -> Result<Vec<u8>, ConvertError> {
    const TO: &str = "Ignition";
    // Everything that cannot be carried over, named together: the user fixes it in one go.
    let mut refused: Vec<String> = Vec::new();
    let mut leftovers: Vec<&str> = config
        .other
        .iter()
        .map(|(k, _)| k.as_str())
        .filter(|k| {
            !matches!(
                *k,
                "ntp"
                    | "mounts"
                    | "users"
                    | "groups"
                    | "ssh_authorized_keys"
                    | "device_aliases"
                    | "disk_setup"
                    | "fs_setup"
            )
        })
        .collect();
    leftovers.sort_unstable();
    leftovers.dedup();
    if !leftovers.is_empty() {
        refused.push(format!("top-level keys {}", leftovers.join(", ")));
    }
    let other = |key: &str| storage::key(config, key);
    let users = match other("users") {
        Some(users) => keep!(refused, users_to_ignition(users)),
        None => Some((Vec::new(), Vec::new())),
    };
    // Groups name members among the users: not checked against users that could not be read.
    let users_read = users.is_some();
    let (mut passwd_users, sudoers) = users.unwrap_or_default();
    if let Some(keys) = other("ssh_authorized_keys").filter(|k| !k.is_null()) {
        // cloud-init gives them to the default user, which exists when `users` is not given
        // or lists `default`; else only to root, behind a command that refuses the login.
        let default = match other("users") {
            None => true,
            Some(users) => mentions_default(users),
        };
        if default {
            keep!(refused, default_user_keys(keys, &mut passwd_users));
        } else {
            refused.push(
                "ssh_authorized_keys (users has no default user: cloud-init gives the keys to root, whose login it refuses)"
                    .to_owned(),
            );
        }
    }
    let passwd_groups = match other("groups") {
        Some(groups) if users_read => {
            keep!(refused, groups_to_ignition(groups, &passwd_users)).unwrap_or_default()
        }
        _ => Vec::new(),
    };
    for (path, field) in &config.file_fields {
        refused.push(format!(
            "write_files[{}].{field}",
            crate::codec::text::terminal_safe(path)
        ));
    }
    let storage = keep!(refused, storage::to_ignition(config)).unwrap_or_default();
    let mut files = Vec::new();
    for file in &config.files {
        files.extend(keep!(refused, ignition_file(file)));
    }
    let mut units = Vec::new();
    let boot: Vec<&str> = config
        .commands
        .iter()
        .filter(|c| c.origin == "bootcmd")
        .map(|c| c.line.as_str())
        .collect();
    for c in &config.commands {
        if c.line.contains("cloud-init-per")
            || (c.origin == "bootcmd" && c.line.contains("INSTANCE_ID"))
        {
            refused.push(format!(
                "{}: a command that uses cloud-init itself (cloud-init-per, $INSTANCE_ID), which Ignition's systems do not have",
                c.origin
            ));
            break;
        }
    }
    if !boot.is_empty() {
        files.extend(
            keep!(
                refused,
                script_file(config, BOOT_SCRIPT_PATH, &boot, "bootcmd")
            )
            .flatten(),
        );
        units.push(json!({"contents": BOOT_UNIT, "enabled": true, "name": BOOT_UNIT_NAME}));
    }
    // The lines of the install script a runcmd entry runs (`bash /etc/rke2-install.sh`) stand
    // for that entry: the script is the file, run by the unit.
    let mut run: Vec<&str> = Vec::new();
    for c in config.commands.iter().filter(|c| c.origin != "bootcmd") {
        if c.origin == SCRIPT_PATH {
            if run.last() != Some(&RUN_SCRIPT) {
                run.push(RUN_SCRIPT);
            }
        } else {
            run.push(c.line.as_str());
        }
    }
    let split = split_runcmd(&run, &storage.mount_points);
    let (directories, links) = storage_entries(&run[..split.lead.start]);
    let systemctl_lines: Vec<&str> = run[split.lead.clone()]
        .iter()
        .chain(&run[split.script.end..])
        .copied()
        .collect();
    let middle = &run[split.script.clone()];
    if middle == [RUN_SCRIPT] {
        units.push(json!({"contents": UNIT, "enabled": true, "name": UNIT_NAME}));
    } else if middle.contains(&RUN_SCRIPT) {
        refused.push(format!(
            "runcmd: commands besides `{RUN_SCRIPT}`, which runs the install script a conversion from Ignition keeps as a file"
        ));
    } else if !middle.is_empty() {
        files.extend(keep!(refused, script_file(config, SCRIPT_PATH, middle, "runcmd")).flatten());
        units.push(json!({"contents": UNIT, "enabled": true, "name": UNIT_NAME}));
    }
    // A unit named twice ends as the last line leaves it, as it would under cloud-init.
    let mut named: Vec<Value> = Vec::new();
    for unit in systemctl_lines
        .iter()
        .filter_map(|line| systemctl_line(line))
    {
        let Some(name) = unit["name"].as_str() else {
            continue;
        };
        match named.iter_mut().find(|u| u["name"] == name) {
            Some(entry) => {
                for (k, v) in unit.as_object().into_iter().flatten() {
                    entry[k.as_str()] = v.clone();
                }
            }
            None => named.push(unit.clone()),
        }
    }
    for unit in &named {
        // systemctl refuses to enable a masked unit.
        if unit["mask"] == true && unit["enabled"] == true {
            refused.push(format!(
                "runcmd: systemctl enables the masked unit {}",
                crate::codec::text::terminal_safe(unit["name"].as_str().unwrap_or(""))
            ));
        }
    }
    units.extend(named);
    if let Some(ntp) = &config.ntp {
        keep!(refused, ntp_keys(other("ntp")));
        if ntp.enabled != Some(false) && ntp.servers.is_empty() && ntp.pools.is_empty() {
            // cloud-init configures the distribution's own pools: the OS's chrony.conf.
            if !units.iter().any(|u| u["name"] == "chronyd.service") {
                units.push(json!({"enabled": true, "name": "chronyd.service"}));
            }
        }
        if ntp.enabled != Some(false) && (!ntp.servers.is_empty() || !ntp.pools.is_empty()) {
            let mut chrony = String::from("# Configured by rke2-payload from cloud-config ntp\n");
            for s in &ntp.servers {
                chrony.push_str(&format!("server {s} iburst\n"));
            }
            for p in &ntp.pools {
                chrony.push_str(&format!("pool {p} iburst\n"));
            }
            chrony.push_str("driftfile /var/lib/chrony/drift\nmakestep 1.0 3\nrtcsync\n");
            files.extend(keep!(
                refused,
                ignition_file(&File {
                    path: "/etc/chrony.conf".to_owned(),
                    mode: Some(0o644),
                    owner: None,
                    encoding: None,
                    content: Content::Inline(chrony.into_bytes()),
                    append: false,
                })
            ));
            if !units.iter().any(|u| u["name"] == "chronyd.service") {
                units.push(json!({"enabled": true, "name": "chronyd.service"}));
            }
        }
    }
    if !sudoers.is_empty() {
        let mut text = String::from("# Created by rke2-payload from cloud-config users[].sudo\n");
        for line in &sudoers {
            text.push_str(line);
            text.push('\n');
        }
        files.extend(keep!(
            refused,
            ignition_file(&File {
                path: "/etc/sudoers.d/90-cloud-init-users".to_owned(),
                mode: Some(0o440),
                owner: Some("root:root".to_owned()),
                encoding: None,
                content: Content::Inline(text.into_bytes()),
                append: false,
            })
        ));
    }
    for unit in storage.units {
        if units.iter().any(|u| u["name"] == unit["name"]) {
            refused.push(format!(
                "mounts: the unit {} of a mount is also named by a systemctl command of runcmd",
                crate::codec::text::terminal_safe(unit["name"].as_str().unwrap_or(""))
            ));
            continue;
        }
        units.push(unit);
    }
    let mut paths = std::collections::HashSet::new();
    // Ignition writes units after files: a file at a unit's path would be replaced.
    let unit_paths: Vec<Value> = units
        .iter()
        .filter(|u| u.get("contents").is_some())
        .filter_map(|u| u["name"].as_str())
        .map(|n| json!({"path": format!("/etc/systemd/system/{n}")}))
        .collect();
    let all_paths = files
        .iter()
        .chain(&directories)
        .chain(&links)
        .chain(&unit_paths)
        .map(|f| f["path"].as_str().unwrap_or(""));
    for path in all_paths {
        if !paths.insert(path.to_owned()) {
            refused.push(format!(
                "{} is written twice (Ignition rejects duplicates)",
                crate::codec::text::terminal_safe(path)
            ));
        }
    }
    if !refused.is_empty() {
        return Err(refuse(TO, refused.join("; ")));
    }
    let mut storage_out = Map::new();
    for (name, list) in [
        ("directories", directories),
        ("disks", storage.disks),
        ("files", files),
        ("filesystems", storage.filesystems),
        ("links", links),
    ] {
        if !list.is_empty() || name == "files" {
            storage_out.insert(name.to_owned(), Value::Array(list));
        }
    }
    let doc = json!({
        "ignition": {"config": {"replace": {"verification": {}}}, "proxy": {}, "security": {"tls": {}}, "timeouts": {}, "version": "3.3.0"},
        "kernelArguments": {},
        "passwd": passwd(passwd_users, passwd_groups),
        "storage": Value::Object(storage_out),
        "systemd": {"units": units},
    });
    Ok(doc.to_string().into_bytes())
}

/// The runcmd entry that runs the install script a conversion from Ignition keeps as a file.
pub(crate) const RUN_SCRIPT: &str = "bash /etc/rke2-install.sh";

/// Where bootcmd's commands go, and the unit that runs them at every boot.
pub(crate) const BOOT_SCRIPT_PATH: &str = "/etc/rke2-bootcmd.sh";
const BOOT_UNIT_NAME: &str = "rke2-bootcmd.service";
const BOOT_UNIT: &str = "[Unit]\nDescription=cloud-config bootcmd: run at every boot, before the network is online\nDefaultDependencies=no\nAfter=local-fs.target\nBefore=network-online.target rke2-install.service\n[Service]\nType=oneshot\nRemainAfterExit=yes\nExecStart=/etc/rke2-bootcmd.sh\n[Install]\nWantedBy=multi-user.target\n";

/// The script file that runs `lines` at `path`, or nothing when the config already writes it
/// with those lines (a conversion from Ignition keeps the script as a file too).
fn script_file(
    config: &CloudConfig,
    path: &str,
    lines: &[&str],
    what: &str,
) -> Result<Option<Value>, ConvertError> {
    if let Some(script) = script_lines(&config.files, path) {
        return if script.iter().map(String::as_str).eq(lines.iter().copied()) {
            Ok(None)
        } else {
            Err(refuse(
                "Ignition",
                format!("{what}, because {path} already holds another script"),
            ))
        };
    }
    // cloud-init runs runcmd and bootcmd with sh, carrying on past a failing command.
    let shell = "#!/bin/sh\n";
    let mut script = String::from(shell);
    for line in lines {
        script.push_str(line);
        script.push('\n');
    }
    ignition_file(&File {
        path: path.to_owned(),
        mode: Some(0o700),
        owner: None,
        encoding: None,
        content: Content::Inline(script.into_bytes()),
        append: false,
    })
    .map(Some)
}

/// A `systemctl` line a conversion from Ignition writes, as the unit entry it stands for
/// (`daemon-reload` as an entry without a name).
fn systemctl_line(line: &str) -> Option<Value> {
    let words = shell::split(line)?;
    let words: Vec<&str> = words.iter().map(String::as_str).collect();
    let unit = |name: &str| name.contains('.') && !name.starts_with('-') && !name.contains('/');
    match words.as_slice() {
        ["systemctl", "daemon-reload"] => Some(json!({})),
        ["systemctl", "enable", "--now", name] if unit(name) => {
            Some(json!({"enabled": true, "name": name}))
        }
        ["systemctl", "disable", "--now", name] if unit(name) => {
            Some(json!({"enabled": false, "name": name}))
        }
        ["systemctl", "mask", name] | ["systemctl", "mask", "--now", name] if unit(name) => {
            Some(json!({"mask": true, "name": name}))
        }
        _ => None,
    }
}

/// How runcmd's lines divide: the directory and link commands first (`..lead.start`), then
/// `systemctl` lines that are units (`lead`), the commands (`script`), and `systemctl` lines
/// after them that are units (`script.end..`).
struct RuncmdSplit {
    lead: std::ops::Range<usize>,
    script: std::ops::Range<usize>,
}

/// The parts of runcmd a conversion from Ignition writes.
///
/// `systemctl` lines are units when that cannot change what happens: before every other
/// command (the unit exists already), or after them when they are only the install script a
/// conversion keeps as a file. Enabling, at first boot, a unit a command installs only later
/// would do nothing, and one whose file the config writes would start beside the commands, not
/// after them.
fn split_runcmd(run: &[&str], mount_points: &[String]) -> RuncmdSplit {
    let storage = leading_storage_commands(run, mount_points);
    let units = |lines: &[&str]| {
        let parsed: Vec<Value> = lines.iter().filter_map(|l| systemctl_line(l)).collect();
        parsed.len() == lines.len()
            && parsed.iter().any(|u| u.get("name").is_some())
            && !parsed
                .iter()
                .any(|u| u["name"] == UNIT_NAME || u["name"] == BOOT_UNIT_NAME)
    };
    let lead_len = run[storage..]
        .iter()
        .take_while(|line| systemctl_line(line).is_some())
        .count();
    let lead_len = if units(&run[storage..storage + lead_len]) {
        lead_len
    } else {
        0
    };
    let start = storage + lead_len;
    let end = run.len();
    let block = run[start..]
        .iter()
        .rev()
        .take_while(|line| systemctl_line(line).is_some())
        .count();
    let tail = &run[end - block..];
    let middle = &run[start..end - block];
    // Not when other commands come first, even for units the config writes: a unit enabled at
    // boot starts beside the install step, not after the commands it may need (a binary they
    // fetch).
    let trailing = block > 0 && units(tail) && (middle.is_empty() || middle == [RUN_SCRIPT]);
    RuncmdSplit {
        lead: storage..start,
        script: start..if trailing { end - block } else { end },
    }
}

/// How many of the first commands are the directory and link commands a conversion from
/// Ignition writes (`mkdir -p` only before the link it makes a parent for).
fn leading_storage_commands(run: &[&str], mount_points: &[String]) -> usize {
    // runcmd runs after cloud-init mounts: a directory or link under a mount point is made in
    // the mounted filesystem, where Ignition would not make it.
    let under_mount = |entry: &Value| {
        ["directory", "link", "owner"].iter().any(|k| {
            entry[*k]["path"]
                .as_str()
                .is_some_and(|p| mount_points.iter().any(|m| storage::under(p, m)))
        })
    };
    // Nor one in /run or /tmp, where the booted system mounts a tmpfs over what Ignition makes.
    let in_volatile = |entry: &Value| {
        ["directory", "link", "owner"]
            .iter()
            .any(|k| entry[*k]["path"].as_str().is_some_and(volatile))
    };
    let read: Vec<Value> = run
        .iter()
        .map_while(|line| storage::read_command(line))
        .take_while(|entry| !under_mount(entry) && !in_volatile(entry))
        .collect();
    let mut taken = 0;
    for (at, entry) in read.iter().enumerate() {
        let fits = if entry.get("owner").is_some() {
            // `chown -h` right after the link it owns.
            at > 0 && read[at - 1]["link"]["path"] == entry["owner"]["path"]
        } else if let Some(parent) = entry.get("parent") {
            read.get(at + 1)
                .and_then(|n| n["link"]["path"].as_str())
                .and_then(|p| p.rsplit_once('/'))
                .is_some_and(|(dir, _)| dir == parent)
        } else {
            true
        };
        if !fits {
            break;
        }
        taken += 1;
    }
    taken
}

/// The Ignition directories and links of the commands [`leading_storage_commands`] counted.
fn storage_entries(lines: &[&str]) -> (Vec<Value>, Vec<Value>) {
    let mut directories = Vec::new();
    let mut links: Vec<Value> = Vec::new();
    for entry in lines.iter().filter_map(|line| storage::read_command(line)) {
        if let Some(d) = entry.get("directory") {
            directories.push(d.clone());
        } else if let Some(l) = entry.get("link") {
            links.push(l.clone());
        } else if let (Some(o), Some(link)) = (entry.get("owner"), links.last_mut()) {
            for k in ["user", "group"] {
                if let Some(v) = o.get(k) {
                    link[k] = v.clone();
                }
            }
        }
    }
    (directories, links)
}

/// The command lines of the script a config writes at `path`, if it writes one.
fn script_lines(files: &[File], path: &str) -> Option<Vec<String>> {
    files
        .iter()
        .rev()
        .find(|f| f.path == path)
        .map(|f| f.text().map(|t| command_lines(&t)).unwrap_or_default())
}

/// A script's lines as runcmd or bootcmd entries, as they are: without the interpreter line,
/// the `set` options before the first command (CAPRKE2's Ignition script sets `-euo pipefail`
/// where its cloud-config runs the same commands as runcmd), and, outside here-documents,
/// blank lines.
fn command_lines(script: &str) -> Vec<String> {
    let heredoc = script.contains("<<");
    let mut started = false;
    let mut out = Vec::new();
    for (n, line) in script.lines().enumerate() {
        if n == 0 && line.starts_with("#!") {
            continue;
        }
        let blank = line.trim().is_empty();
        if !started && (blank || line.trim_start().starts_with("set -")) {
            continue;
        }
        if blank && !heredoc {
            continue;
        }
        started = true;
        out.push(line.to_owned());
    }
    // Blank lines after the last command are the file's end, not the script's.
    while out.last().is_some_and(|l| l.trim().is_empty()) {
        out.pop();
    }
    out
}

/// The text of the file a config writes at `path`.
fn script_text(files: &[File], path: &str) -> Option<String> {
    files
        .iter()
        .rev()
        .find(|f| f.path == path)
        .and_then(|f| f.text().map(|t| t.into_owned()))
}

/// Whether a script is for sh or bash (what runcmd's lines run under).
fn shell_script(script: &str) -> bool {
    match script.lines().next() {
        Some(first) if first.starts_with("#!") => {
            let interpreter = first[2..].trim();
            let mut words = interpreter.split_whitespace();
            let program = words.next().unwrap_or("");
            let program = if program.ends_with("/env") {
                words.next().unwrap_or("")
            } else {
                program
            };
            matches!(program.rsplit('/').next(), Some("sh" | "bash" | "dash"))
        }
        _ => true,
    }
}

/// `ntp` keys other than the servers and pools chrony is given.
fn ntp_keys(ntp: Option<&Value>) -> Result<(), ConvertError> {
    if let Some(Value::Object(m)) = ntp {
        for (k, v) in m {
            let carried = match k.as_str() {
                "enabled" | "servers" | "pools" => true,
                "ntp_client" => matches!(v.as_str(), Some("chrony" | "auto")),
                _ => v.is_null(),
            };
            if !carried {
                return Err(refuse(
                    "Ignition",
                    format!(
                        "ntp.{} (only servers and pools become /etc/chrony.conf)",
                        crate::codec::text::terminal_safe(k)
                    ),
                ));
            }
        }
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
            // `default` is the distribution's default user: `core` on Ignition's systems. A
            // bare name is a user with cloud-init's defaults.
            Value::String(names) => {
                for name in names.split(',').map(str::trim).filter(|n| !n.is_empty()) {
                    if name == "default" {
                        default_user(&mut out);
                    } else if !out.iter().any(|u| u["name"] == name) {
                        out.push(json!({"name": name}));
                    }
                }
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
                "passwd" | "hashed_passwd" => {
                    // A locked password (cloud-init's default) is no password to Ignition.
                    let locked = u
                        .get("lock_passwd")
                        .and_then(Value::as_bool)
                        .unwrap_or(true);
                    // cloud-init sets `hashed_passwd` after `passwd`: it wins.
                    let shadowed =
                        key == "passwd" && u.get("hashed_passwd").is_some_and(|h| !h.is_null());
                    if !locked && !shadowed && value.is_string() {
                        user.insert("passwordHash".to_owned(), value.clone());
                    }
                }
                "lock_passwd" => {}
                "sudo" => match value {
                    Value::Bool(false) | Value::Null => {}
                    Value::String(rule) => sudoers.push(format!("{name} {rule}")),
                    Value::Array(rules) => {
                        for rule in rules {
                            match rule.as_str() {
                                Some(rule) => sudoers.push(format!("{name} {rule}")),
                                None => {
                                    bad.push(field("sudo"));
                                    break;
                                }
                            }
                        }
                    }
                    _ => bad.push(field("sudo")),
                },
                other => bad.push(field(other)),
            }
        }
        match out.iter_mut().find(|u| u["name"] == name) {
            // `default` (core) named again: the entry says more.
            Some(existing) if existing.as_object().is_some_and(|e| e.len() == 1) => {
                *existing = Value::Object(user);
            }
            Some(_) => {
                return Err(refuse(
                    TO,
                    format!(
                        "users: {} is listed twice (Ignition takes a user once)",
                        crate::codec::text::terminal_safe(name)
                    ),
                ));
            }
            None => out.push(Value::Object(user)),
        }
    }
    if !bad.is_empty() {
        return Err(refuse(TO, bad.join(", ")));
    }
    Ok((out, sudoers))
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

/// Whether a path is in `/run` or `/tmp`, which the booted system mounts a tmpfs over: what
/// Ignition writes there is hidden (cloud-init writes them in the running system).
pub(super) fn volatile(path: &str) -> bool {
    ["/run", "/tmp", "/var/run"]
        .iter()
        .any(|dir| path == *dir || path.strip_prefix(dir).is_some_and(|r| r.starts_with('/')))
}

fn ignition_file(file: &File) -> Result<Value, ConvertError> {
    let path = crate::codec::text::terminal_safe(&file.path);
    if !file.path.starts_with('/') {
        return Err(refuse("Ignition", format!("{path}: relative path")));
    }
    if volatile(&file.path) {
        return Err(refuse(
            "Ignition",
            format!(
                "write_files[{path}]: in /run or /tmp (a tmpfs is mounted over what Ignition writes there)"
            ),
        ));
    }
    if let Some(mode) = file.mode.filter(|m| m & !0o777 != 0) {
        return Err(refuse(
            "Ignition",
            format!(
                "write_files[{path}].permissions {mode:04o} (Ignition 3.3 sets no setuid, setgid or sticky bit)"
            ),
        ));
    }
    let (user, group) = match file.owner.as_deref() {
        Some(owner) => match owner.split_once(':') {
            Some((u, g)) => (node(u.trim()), node(g.trim())),
            None => (node(owner.trim()), json!({})),
        },
        // cloud-init sets root:root on a file it appends to; Ignition would keep the owner.
        None if file.append => (json!({"name": "root"}), json!({"name": "root"})),
        None => (json!({}), json!({})),
    };
    let contents = match &file.content {
        Content::Inline(bytes) => data_url(bytes),
        Content::Remote(url) => {
            // Ignition fetches http, https, tftp, s3, gs and arn sources.
            let scheme = url.split(':').next().unwrap_or("").to_ascii_lowercase();
            if !matches!(
                scheme.as_str(),
                "http" | "https" | "tftp" | "s3" | "gs" | "arn"
            ) {
                return Err(refuse(
                    "Ignition",
                    format!(
                        "write_files[{}].source.uri {}: (Ignition cannot fetch it)",
                        crate::codec::text::terminal_safe(&file.path),
                        crate::codec::text::terminal_safe(&crate::codec::text::shorten(
                            &scheme, 20
                        ))
                    ),
                ));
            }
            json!({"compression": "", "source": url, "verification": {}})
        }
        Content::Undecodable(why) => {
            return Err(refuse(
                "Ignition",
                format!("{}: content cannot be decoded ({why})", file.path),
            ));
        }
    };
    // Appending nothing makes the file if it is missing and keeps it otherwise: no contents.
    let touch = file.append && matches!(&file.content, Content::Inline(b) if b.is_empty());
    let mut entry = Map::new();
    entry.insert("group".to_owned(), group);
    entry.insert("overwrite".to_owned(), Value::Bool(!file.append));
    entry.insert("path".to_owned(), Value::String(file.path.clone()));
    entry.insert("user".to_owned(), user);
    match (touch, file.append) {
        (true, _) => {}
        (false, true) => {
            entry.insert("append".to_owned(), Value::Array(vec![contents]));
        }
        (false, false) => {
            entry.insert("contents".to_owned(), contents);
        }
    }
    // cloud-init sets 0644 on a file it appends to unless told otherwise; Ignition would keep
    // the mode.
    let mode = file.mode.or(file.append.then_some(0o644));
    if let Some(mode) = mode {
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

/// Ignition → cloud-config text; `doc` is the config in effect as JSON (see [`in_effect`]),
/// `merged` whether others are merged into it.
fn to_cloud_config(
    ignition: &Ignition,
    doc: &Value,
    merged: bool,
) -> Result<Vec<u8>, ConvertError> {
    const TO: &str = "cloud-config";
    let groups = ignition.unmodelled.contains(&"passwd.groups");
    if merged {
        // Each field is checked in the config that says it; merged ones are not read here.
        return Err(refuse(
            TO,
            "ignition.config.merge (the configs merged in: merge them into one config first)",
        ));
    }
    let unmodelled: Vec<&str> = ignition
        .unmodelled
        .iter()
        .copied()
        .filter(|u| !matches!(*u, "passwd.groups" | "storage.disks"))
        .collect();
    // Everything that cannot be carried over, named together.
    let mut refused: Vec<String> = Vec::new();
    if !unmodelled.is_empty() {
        refused.push(unmodelled.join(", "));
    }
    if ignition.config_sources.iter().any(|s| !s.is_empty()) {
        refused.push("ignition.config merge/replace sources".to_owned());
    }
    for e in file_fields(doc) {
        keep!(refused, Err::<(), _>(e));
    }
    let mut out = String::from("#cloud-config\n");
    if groups {
        out.push_str(
            &keep!(refused, groups_to_cloud_config(&doc["passwd"]["groups"])).unwrap_or_default(),
        );
    }
    if !ignition.users.is_empty() {
        out.push_str(
            &keep!(refused, users_to_cloud_config(&doc["passwd"]["users"])).unwrap_or_default(),
        );
    }
    let storage =
        keep!(refused, storage::to_cloud_config(doc, &ignition.units)).unwrap_or_default();
    out.push_str(&storage.blocks);
    let mut boot = Vec::new();
    let mut script = Vec::new();
    let mut systemctl = Vec::new();
    let mut unit_files = Vec::new();
    for unit in &ignition.units {
        if storage.mount_units.contains(&unit.name) {
            continue;
        }
        // A unit's name is a file name in /etc/systemd/system, and so is a drop-in's.
        let file_name = |n: &str| {
            !n.is_empty()
                && n != "."
                && n != ".."
                && !n.contains('/')
                && !n.chars().any(char::is_control)
        };
        if !file_name(&unit.name) || unit.dropins.iter().any(|(d, _)| !file_name(d)) {
            refused.push(format!(
                "systemd.units[{}] (a unit or drop-in name that is not a file name)",
                crate::codec::text::terminal_safe(&unit.name)
            ));
            continue;
        }
        let dir = format!("/etc/systemd/system/{}", unit.name);
        for (name, contents) in &unit.dropins {
            let Some(contents) = contents else {
                refused.push(format!(
                    "systemd.units[{}].dropins[{}] without contents",
                    crate::codec::text::terminal_safe(&unit.name),
                    crate::codec::text::terminal_safe(name)
                ));
                continue;
            };
            unit_files.push(unit_file(format!("{dir}.d/{name}"), contents));
        }
        // The install unit runs once (a condition stops it later), the bootcmd one every boot.
        let once = unit.name == UNIT_NAME;
        let ran = |path: &str| {
            unit.contents
                .as_deref()
                .filter(|_| {
                    unit.enabled == Some(true) && unit.mask != Some(true) && unit.dropins.is_empty()
                })
                .filter(|text| text.contains("\nCondition") == once)
                .and_then(|text| oneshot_script(text, &ignition.files))
                .filter(|(program, _)| program == path)
                .map(|(_, lines)| lines)
        };
        if unit.name == UNIT_NAME && ran(SCRIPT_PATH).is_some() {
            // The script stays the file it is and runcmd runs it with its shell, so its
            // interpreter and `set` options hold.
            let bash = script_text(&ignition.files, SCRIPT_PATH).is_some_and(|t| {
                t.lines()
                    .next()
                    .is_some_and(|l| l.starts_with("#!") && l.contains("bash"))
            });
            script.push(if bash {
                RUN_SCRIPT.to_owned()
            } else {
                format!("sh {SCRIPT_PATH}")
            });
            continue;
        }
        // bootcmd's lines run under sh.
        let sh = !script_text(&ignition.files, BOOT_SCRIPT_PATH)
            .is_some_and(|t| t.lines().next().is_some_and(|l| l.contains("bash")));
        if unit.name == BOOT_UNIT_NAME
            && sh
            && let Some(lines) = ran(BOOT_SCRIPT_PATH)
        {
            boot.extend(lines);
            continue;
        }
        if unit.name == UNIT_NAME || unit.name == BOOT_UNIT_NAME {
            // These names are the conversion's: back, runcmd and bootcmd become them again.
            refused.push(format!(
                "systemd.units[{}] (not the oneshot that runs {} alone, with no drop-ins: this conversion reads runcmd and bootcmd into units of these names)",
                crate::codec::text::terminal_safe(&unit.name),
                if unit.name == UNIT_NAME { SCRIPT_PATH } else { BOOT_SCRIPT_PATH }
            ));
            continue;
        }
        if let Some(text) = &unit.contents {
            unit_files.push(unit_file(dir, text));
        }
        if unit.mask == Some(true) {
            // `--now`: runcmd runs after the unit may have started; under Ignition it never ran.
            systemctl.push(format!("systemctl mask --now {}", shell::quote(&unit.name)));
        } else if unit.enabled == Some(true) {
            systemctl.push(format!(
                "systemctl enable --now {}",
                shell::quote(&unit.name)
            ));
        } else if unit.enabled == Some(false) {
            systemctl.push(format!(
                "systemctl disable --now {}",
                shell::quote(&unit.name)
            ));
        }
    }
    // `daemon-reload` before enabling units whose files were just written.
    if !unit_files.is_empty() && !systemctl.is_empty() {
        systemctl.insert(0, "systemctl daemon-reload".to_owned());
    }
    if !ignition.files.is_empty() || !unit_files.is_empty() {
        // cloud-init writes files before it mounts filesystems and creates users: a file
        // under a mount point, or owned by a user or group the config creates, is deferred to
        // its final stage (Ignition mounts, and creates users, before it writes files).
        let names = |section: &str| -> Vec<&str> {
            doc["passwd"][section]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|u| u["name"].as_str())
                .collect()
        };
        let (users, groups) = (names("users"), names("groups"));
        let defer = |file: &File| {
            let owned = file.owner.as_deref().is_some_and(|o| {
                let (u, g) = o.split_once(':').unwrap_or((o, ""));
                users.contains(&u) || groups.contains(&g)
            });
            owned
                || storage
                    .mount_points
                    .iter()
                    .any(|m| storage::under(&file.path, m))
        };
        // A file without contents is made if missing and otherwise kept as it is, with its
        // mode and owner: cloud-init's append of nothing.
        let kept: Vec<&str> = doc["storage"]["files"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|f| {
                f["contents"]["source"].as_str().is_none()
                    && f["append"].as_array().is_none_or(Vec::is_empty)
            })
            .filter_map(|f| f["path"].as_str())
            .collect();
        out.push_str("write_files:\n");
        for file in ignition.files.iter().chain(&unit_files) {
            if (file.append || kept.contains(&file.path.as_str())) && file.mode.is_none() {
                // Ignition leaves the mode of a file it appends to or keeps; cloud-init would
                // set 0644.
                refused.push(format!(
                    "storage.files[{}].mode (missing: Ignition keeps the file's mode, cloud-init would set 0644)",
                    crate::codec::text::terminal_safe(&file.path)
                ));
                continue;
            }
            if kept.contains(&file.path.as_str()) {
                let touch = File {
                    append: true,
                    ..file.clone()
                };
                keep!(refused, write_file_entry(&mut out, &touch, defer(file)));
            } else {
                keep!(refused, write_file_entry(&mut out, file, defer(file)));
            }
        }
    }
    if !storage.mounts.is_empty() {
        out.push_str("mounts:\n");
        for fields in &storage.mounts {
            let words: Vec<String> = fields.iter().map(|f| yaml_quote(f)).collect();
            out.push_str(&format!("- [{}]\n", words.join(", ")));
        }
    }
    if !boot.is_empty() {
        out.push_str("bootcmd:\n");
        for c in &boot {
            out.push_str(&format!("- {}\n", yaml_quote(c)));
        }
    }
    // Units start at boot under Ignition: their lines come before the install script.
    let commands: Vec<&String> = storage
        .commands
        .iter()
        .chain(&systemctl)
        .chain(&script)
        .collect();
    if !commands.is_empty() {
        out.push_str("runcmd:\n");
        for c in commands {
            out.push_str(&format!("- {}\n", yaml_quote(c)));
        }
    }
    if !refused.is_empty() {
        return Err(refuse(TO, refused.join("; ")));
    }
    Ok(out.into_bytes())
}

/// A unit file or drop-in as a file cloud-init writes.
fn unit_file(path: String, contents: &str) -> File {
    File {
        path,
        mode: Some(0o644),
        owner: None,
        encoding: None,
        content: Content::Inline(contents.as_bytes().to_vec()),
        append: false,
    }
}

/// Fields of `storage.files` that cloud-config's `write_files` cannot say.
fn file_fields(doc: &Value) -> Vec<ConvertError> {
    doc["storage"]["files"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|f| file_field(f).err())
        .collect()
}

/// The first field of one `storage.files` entry that `write_files` cannot say.
fn file_field(f: &Value) -> Result<(), ConvertError> {
    let path = crate::codec::text::terminal_safe(f["path"].as_str().unwrap_or(""));
    let field = |k: &str| refuse("cloud-config", format!("storage.files[{path}].{k}"));
    let appends = f["append"].as_array().map_or(0, Vec::len);
    let has_contents = f["contents"]["source"].as_str().is_some();
    if appends > 1 || (appends == 1 && has_contents) {
        return Err(refuse(
            "cloud-config",
            format!("storage.files[{path}]: several contents (write_files gives a file one)"),
        ));
    }
    for node in ["user", "group"] {
        let n = &f[node];
        let named = n["name"].as_str().is_some_and(|s| !s.is_empty());
        if !named && n["id"].as_u64().is_some_and(|id| id != 0) {
            // cloud-init looks owners up by name (0 is root).
            return Err(field(&format!("{node}.id (write_files takes owner names)")));
        }
    }
    let resources =
        std::iter::once(&f["contents"]).chain(f["append"].as_array().into_iter().flatten());
    for r in resources {
        if let Some(source) = r["source"].as_str().filter(|s| !s.starts_with("data:")) {
            let scheme = source.split(':').next().unwrap_or("").to_ascii_lowercase();
            if !matches!(scheme.as_str(), "http" | "https") {
                return Err(field(&format!(
                    "contents.source {}: (cloud-init's write_files fetches http and https)",
                    crate::codec::text::terminal_safe(&crate::codec::text::shorten(&scheme, 20))
                )));
            }
            if r["compression"].as_str().is_some_and(|c| !c.is_empty()) {
                return Err(field(
                    "contents.compression of a remote source (cloud-init writes what it fetches as it is)",
                ));
            }
        }
        if r["verification"]["hash"]
            .as_str()
            .is_some_and(|h| !h.is_empty())
        {
            return Err(field(
                "contents.verification.hash (cloud-init checks no hash)",
            ));
        }
        if r["httpHeaders"].as_array().is_some_and(|h| !h.is_empty()) {
            return Err(field("contents.httpHeaders"));
        }
    }
    Ok(())
}

/// The program a oneshot unit runs and its command lines, when the unit says no more than
/// "run this sh or bash script once as root" (CAPRKE2's install unit, or this conversion's) and
/// the script is a file of the config.
fn oneshot_script(unit: &str, files: &[File]) -> Option<(String, Vec<String>)> {
    let mut program = None;
    let mut oneshot = false;
    let mut section = "";
    for line in unit.lines().map(str::trim) {
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if line.starts_with('[') {
            section = line;
            continue;
        }
        let (k, v) = line.split_once('=')?;
        match (section, k.trim(), v.trim()) {
            ("[Unit]", "Description", _)
            | ("[Unit]", "Wants" | "After", _)
            | ("[Unit]", "Before", "network-online.target rke2-install.service")
            | ("[Unit]", "DefaultDependencies", "no")
            | ("[Unit]", "ConditionPathExists", "!/etc/cluster-api/bootstrap-success.complete")
            | ("[Unit]", "ConditionFirstBoot", "yes")
            | ("[Service]", "User", "root")
            | ("[Service]", "RemainAfterExit", "yes")
            | ("[Install]", "WantedBy", "multi-user.target") => {}
            ("[Service]", "Type", "oneshot") => oneshot = true,
            ("[Service]", "ExecStart", v)
                if program.is_none() && !v.contains(char::is_whitespace) =>
            {
                program = Some(v.to_owned());
            }
            _ => return None,
        }
    }
    let program = program.filter(|_| oneshot)?;
    let text = script_text(files, &program)?;
    shell_script(&text).then(|| (program, command_lines(&text)))
}

fn write_file_entry(out: &mut String, file: &File, defer: bool) -> Result<(), ConvertError> {
    out.push_str(&format!("-   path: {}\n", yaml_quote(&file.path)));
    if defer {
        out.push_str("    defer: true\n");
    }
    if let Some(owner) = &file.owner {
        // Ignition's id 0 (the only id that reaches here) is root by name.
        let owner = match owner.split_once(':') {
            Some((u, g)) => format!("{}:{}", root(u), root(g)),
            None => root(owner).to_owned(),
        };
        out.push_str(&format!("    owner: {}\n", yaml_quote(&owner)));
    }
    if let Some(mode) = file.mode {
        out.push_str(&format!("    permissions: '{mode:04o}'\n"));
    }
    if file.append {
        out.push_str("    append: true\n");
    }
    match &file.content {
        Content::Inline(bytes) => match std::str::from_utf8(bytes) {
            // Text without its last line break (common in Ignition units) is a `|-` block.
            Ok(text)
                if block_safe(text)
                    || (!text.ends_with('\n') && block_safe(&format!("{text}\n"))) =>
            {
                if text.is_empty() {
                    out.push_str("    content: ''\n");
                } else {
                    let chomp = if text.ends_with('\n') { "" } else { "-" };
                    out.push_str(&format!("    content: |{chomp}\n"));
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

fn root(name: &str) -> &str {
    if name == "0" { "root" } else { name }
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

    /// Ignition text → cloud-config, as [`convert`] does it.
    fn back(text: &str) -> Result<Vec<u8>, ConvertError> {
        let (doc, merged) = in_effect(text.as_bytes())?;
        to_cloud_config(&Ignition::parse(text)?, &doc, merged)
    }

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
        let text = std::str::from_utf8(&ign).unwrap();
        let parsed = Ignition::parse(text).unwrap();
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
        let back = back(text).unwrap();
        let again = CloudConfig::parse(std::str::from_utf8(&back).unwrap()).unwrap();
        assert!(again.problems.is_empty(), "{:?}", again.problems);
        let lines: Vec<_> = again.commands.iter().map(|c| c.line.as_str()).collect();
        // Units start at boot: their lines come first; the script runs as the file it is.
        assert_eq!(
            lines,
            ["systemctl enable --now chronyd.service", "echo 'hi'"]
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
        assert_eq!(what(e), "top-level keys packages");
        let cc =
            CloudConfig::parse("#cloud-config\ndisk_setup:\n  /dev/vdb: {layout: true}\n").unwrap();
        assert!(what(to_ignition(&cc).unwrap_err()).contains("table_type mbr"));
        let cc = CloudConfig::parse("#cloud-config\nntp: {servers: [a], peers: [b]}\n").unwrap();
        assert!(what(to_ignition(&cc).unwrap_err()).contains("ntp.peers"));
        let e = back(r#"{"ignition":{"version":"3.3.0"},"storage":{"files":[{"path":"/f","contents":{"source":"https://x/f","verification":{"hash":"sha512-00"}}}]}}"#).unwrap_err();
        assert!(what(e).contains("storage.files[/f].contents.verification.hash"));
        let e = back(r#"{"ignition":{"version":"3.3.0"},"storage":{"disks":[{"device":"/dev/vdb","partitions":[{"label":"a","sizeMiB":100},{"label":"b"}]}]}}"#).unwrap_err();
        assert!(what(e).contains("storage.disks[/dev/vdb].partitions"));
    }

    #[test]
    fn units_bootcmd_directories_and_links_go_both_ways() {
        let ign = r#"{"ignition":{"version":"3.3.0"},"storage":{"directories":[{"path":"/var/d","mode":448,"user":{"name":"core"}}],"links":[{"path":"/etc/l","target":"/etc/f","hard":false,"overwrite":true}],"files":[{"path":"/etc/f","contents":{"source":"data:,x"}}]},"systemd":{"units":[{"name":"x.service","enabled":true,"contents":"[Service]\nExecStart=/bin/true\n","dropins":[{"name":"10-env.conf","contents":"[Service]\nEnvironment=A=1\n"}]},{"name":"y.service","enabled":false}]}}"#;
        let cc = String::from_utf8(back(ign).unwrap()).unwrap();
        assert!(
            cc.contains("- 'install -d -m 0700 -o core -- /var/d'\n"),
            "{cc}"
        );
        assert!(cc.contains("- 'ln -snf -- /etc/f /etc/l'\n"), "{cc}");
        assert!(
            cc.contains("path: /etc/systemd/system/x.service.d/10-env.conf"),
            "{cc}"
        );
        assert!(
            cc.contains(
                "- 'systemctl enable --now x.service'\n- 'systemctl disable --now y.service'\n"
            ),
            "{cc}"
        );
        let again = to_ignition(&CloudConfig::parse(&cc).unwrap()).unwrap();
        let again: Value = serde_json::from_slice(&again).unwrap();
        assert_eq!(
            again["storage"]["directories"],
            json!([{"mode": 448, "path": "/var/d", "user": {"name": "core"}}])
        );
        assert_eq!(
            again["storage"]["links"],
            json!([{"hard": false, "overwrite": true, "path": "/etc/l", "target": "/etc/f"}])
        );
        let units = again["systemd"]["units"].to_string();
        assert!(
            units.contains(r#"{"enabled":true,"name":"x.service"}"#),
            "{units}"
        );
        assert!(
            units.contains(r#"{"enabled":false,"name":"y.service"}"#),
            "{units}"
        );
        assert!(!units.contains("rke2-install"), "no script: {units}");

        let cc = CloudConfig::parse(
            "#cloud-config\nbootcmd:\n  - [sh, -c, 'echo at boot']\n  - modprobe br_netfilter\n",
        )
        .unwrap();
        let ign = to_ignition(&cc).unwrap();
        let text = std::str::from_utf8(&ign).unwrap();
        assert!(text.contains(BOOT_UNIT_NAME), "{text}");
        let cc = String::from_utf8(back(text).unwrap()).unwrap();
        assert!(
            cc.contains("bootcmd:\n- 'sh -c ''echo at boot'''\n- 'modprobe br_netfilter'\n"),
            "{cc}"
        );
        // The script stays a file, and converting again does not write it twice.
        let twice = to_ignition(&CloudConfig::parse(&cc).unwrap()).unwrap();
        assert_eq!(twice, ign);
    }

    #[test]
    fn disks_filesystems_and_mounts_go_both_ways() {
        let cc = "#cloud-config\ndevice_aliases: {data: /dev/vdb}\ndisk_setup:\n  data: {table_type: gpt, layout: true, overwrite: true}\nfs_setup:\n  - {label: data, filesystem: xfs, device: data, partition: 1, overwrite: true}\nmounts:\n  - [LABEL=data, /var/lib/rancher, auto, 'defaults,noatime', '0', '2']\nssh_authorized_keys: [ssh-ed25519 AAAA k]\n";
        let ign = to_ignition(&CloudConfig::parse(cc).unwrap()).unwrap();
        let doc: Value = serde_json::from_slice(&ign).unwrap();
        assert_eq!(
            doc["storage"]["disks"],
            json!([{"device": "/dev/vdb", "partitions": [{"number": 1}], "wipeTable": true}])
        );
        assert_eq!(
            doc["storage"]["filesystems"],
            json!([{"device": "/dev/vdb1", "format": "xfs", "label": "data", "wipeFilesystem": true}])
        );
        assert_eq!(
            doc["passwd"]["users"],
            json!([{"name": "core", "sshAuthorizedKeys": ["ssh-ed25519 AAAA k"]}])
        );
        let unit = &doc["systemd"]["units"][0];
        assert_eq!(unit["name"], "var-lib-rancher.mount");
        assert!(
            unit["contents"].as_str().unwrap().contains(
                "What=/dev/disk/by-label/data\nWhere=/var/lib/rancher\nOptions=noatime\n"
            )
        );
        let back = String::from_utf8(back(std::str::from_utf8(&ign).unwrap()).unwrap()).unwrap();
        assert!(back.contains("disk_setup:\n  /dev/vdb:\n    table_type: gpt\n    layout: true\n    overwrite: true\n"), "{back}");
        assert!(back.contains("fs_setup:\n  - device: /dev/vdb1\n    filesystem: xfs\n    partition: none\n    overwrite: true\n    label: data\n"), "{back}");
        assert!(
            back.contains(
                "mounts:\n- [/dev/disk/by-label/data, /var/lib/rancher, auto, noatime, '0', '2']\n"
            ),
            "{back}"
        );
        assert!(
            !back.contains("var-lib-rancher.mount"),
            "the unit is the mounts entry: {back}"
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
