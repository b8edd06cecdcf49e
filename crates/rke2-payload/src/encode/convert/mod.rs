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

mod emit;
mod files;
mod scripts;
mod shell;
mod storage;
mod users;

use emit::{write_file_entry, yaml_quote};
pub(crate) use files::data_url;
use files::{file_fields, ignition_file, ntp_keys};
use scripts::{
    BOOT_SCRIPT_PATH, BOOT_UNIT, BOOT_UNIT_NAME, RUN_SCRIPT, SCRIPT_PATH, UNIT, UNIT_NAME,
    oneshot_script, script_file, script_text, split_runcmd, storage_entries, systemctl_line,
    unit_file,
};
use users::{
    default_user_keys, groups_to_cloud_config, groups_to_ignition, mentions_default, passwd,
    users_to_cloud_config, users_to_ignition,
};

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
}
