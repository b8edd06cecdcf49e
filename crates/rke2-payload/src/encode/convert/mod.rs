//! Converting user data between cloud-config and Ignition 3.3.
//!
//! cloud-config → Ignition: `write_files` become `storage.files` (the smallest of a
//! percent-encoded, base64 or gzip+base64 `data:` URL, as Butane picks), `runcmd` becomes
//! `/etc/rke2-install.sh` run once by a oneshot `rke2-install.service` guarded the way CAPRKE2's
//! is, `bootcmd` becomes `/etc/rke2-bootcmd.sh` run at every boot by `rke2-bootcmd.service`,
//! `ntp` becomes `/etc/chrony.conf` and `chronyd.service`, `users` and `groups` become `passwd`
//! (a user's `sudo` a sudoers drop-in; the default user's keys go to `core`), and
//! `device_aliases`, `disk_setup`, `fs_setup` and `mounts` become `storage.disks`,
//! `storage.filesystems` and `.mount` units ([`storage`], [`mounts`]).
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
//!
//! Each way is a short list of steps that fill a draft ([`IgnitionDraft`], [`CloudConfigDraft`]):
//! what is made so far and everything refused. The steps live by concern: [`users`] (users,
//! groups, sudoers), [`scripts`] (runcmd, bootcmd and the units that run them; units and
//! `systemctl` lines), [`files`] (`write_files`, ntp), [`storage`] (disks, filesystems,
//! directories, links) and [`mounts`]; [`emit`] writes the finished document.

use serde_json::Value;

use crate::document::{CloudConfig, Document, DocumentError, File, Ignition};
use crate::payload::{Format, Payload};

/// The value of a step that may not carry something over, or `None` with what it could not
/// carry added to `$refused` (a conversion names everything it cannot carry at once); other
/// errors return.
macro_rules! keep {
    ($refused:expr, $result:expr) => {
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
mod layout;
mod mounts;
mod scripts;
mod shell;
mod storage;
mod users;

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
            convertible(&c, payload.userdata())?;
            to_ignition(&c).map(Some)
        }
        Document::Ignition(i) => {
            let (doc, merged) = in_effect(payload.userdata())?;
            to_cloud_config(&i, &doc, merged).map(Some)
        }
    }
}

/// Refuses a cloud-config whose modules are not what cloud-init runs: user data of another
/// kind, YAML only the tolerant pass reads, Jinja expressions cloud-init fills in at boot.
fn convertible(c: &CloudConfig, userdata: &[u8]) -> Result<(), ConvertError> {
    if c.problems
        .iter()
        .any(|p| p.check == crate::checks::Check::UserdataNotCloudConfig)
    {
        // A script, an archive, MIME parts: none of it is a cloud-config's modules.
        let kind = user_data_kind(userdata);
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
    let text = String::from_utf8_lossy(userdata);
    if c.jinja && (text.contains("{{") || text.contains("{%")) {
        return Err(refuse(
            "Ignition",
            "the Jinja expressions of a `## template: jinja` cloud-config (cloud-init fills them in at boot from instance data, Ignition has no templates)",
        ));
    }
    Ok(())
}

/// What user data that is not a cloud-config is. Named by its header's first word only: the
/// rest of the line (a script's arguments, an include's URL) may hold a credential.
fn user_data_kind(userdata: &[u8]) -> String {
    let text = String::from_utf8_lossy(userdata);
    let header = text.split_whitespace().next().unwrap_or("");
    if header.starts_with("#!") {
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

/// An Ignition config made from a cloud-config, step by step (see [`to_ignition`]).
struct IgnitionDraft<'c> {
    config: &'c CloudConfig,
    /// Everything that cannot be carried over, named together: the user fixes it in one go.
    refused: Vec<String>,
    /// `passwd.users`, and the sudoers lines their `sudo` asks for.
    users: Vec<Value>,
    sudoers: Vec<String>,
    /// `passwd.groups`.
    groups: Vec<Value>,
    /// Disks, filesystems and mounts.
    storage: layout::ToIgnition,
    /// `storage.files`, `storage.directories` and `storage.links`.
    files: Vec<Value>,
    directories: Vec<Value>,
    links: Vec<Value>,
    /// `systemd.units`.
    units: Vec<Value>,
}

impl<'c> IgnitionDraft<'c> {
    fn new(config: &'c CloudConfig) -> Self {
        IgnitionDraft {
            config,
            refused: Vec::new(),
            users: Vec::new(),
            sudoers: Vec::new(),
            groups: Vec::new(),
            storage: layout::ToIgnition::default(),
            files: Vec::new(),
            directories: Vec::new(),
            links: Vec::new(),
            units: Vec::new(),
        }
    }

    /// The last value of a top-level key the config's model leaves as it is.
    fn other(&self, key: &str) -> Option<&'c Value> {
        storage::key(self.config, key)
    }
}

/// cloud-config → Ignition 3.3 JSON.
pub(crate) fn to_ignition(config: &CloudConfig) -> Result<Vec<u8>, ConvertError> {
    let mut d = IgnitionDraft::new(config);
    refuse_other_keys(&mut d);
    users::to_ignition(&mut d)?;
    files::refuse_fields(&mut d);
    d.storage = keep!(d.refused, storage::to_ignition(config)).unwrap_or_default();
    files::to_ignition(&mut d)?;
    scripts::refuse_cloud_init(&mut d);
    scripts::bootcmd_to_ignition(&mut d)?;
    scripts::runcmd_to_ignition(&mut d)?;
    files::ntp_to_ignition(&mut d)?;
    users::sudoers_to_ignition(&mut d)?;
    mounts::units_to_ignition(&mut d);
    files::refuse_duplicates(&mut d);
    if !d.refused.is_empty() {
        return Err(refuse("Ignition", d.refused.join("; ")));
    }
    Ok(emit::ignition(d))
}

/// Top-level keys no step of [`to_ignition`] reads.
fn refuse_other_keys(d: &mut IgnitionDraft<'_>) {
    let mut leftovers: Vec<&str> = d
        .config
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
        d.refused
            .push(format!("top-level keys {}", leftovers.join(", ")));
    }
}

/// A cloud-config made from an Ignition config, step by step (see [`to_cloud_config`]).
struct CloudConfigDraft<'i> {
    ignition: &'i Ignition,
    /// The config in effect, as JSON.
    doc: &'i Value,
    /// Everything that cannot be carried over, named together.
    refused: Vec<String>,
    /// The cloud-config text so far.
    out: String,
    /// Disks, filesystems, mounts, directories and links.
    storage: layout::ToCloudConfig,
    /// `bootcmd`, the runcmd line that runs the install script, and the `systemctl` lines.
    boot: Vec<String>,
    script: Vec<String>,
    systemctl: Vec<String>,
    /// The files of units and drop-ins.
    unit_files: Vec<File>,
}

/// Ignition → cloud-config text; `doc` is the config in effect as JSON (see [`in_effect`]),
/// `merged` whether others are merged into it.
fn to_cloud_config(
    ignition: &Ignition,
    doc: &Value,
    merged: bool,
) -> Result<Vec<u8>, ConvertError> {
    const TO: &str = "cloud-config";
    if merged {
        // Each field is checked in the config that says it; merged ones are not read here.
        return Err(refuse(
            TO,
            "ignition.config.merge (the configs merged in: merge them into one config first)",
        ));
    }
    let mut d = CloudConfigDraft {
        ignition,
        doc,
        refused: Vec::new(),
        out: String::from("#cloud-config\n"),
        storage: layout::ToCloudConfig::default(),
        boot: Vec::new(),
        script: Vec::new(),
        systemctl: Vec::new(),
        unit_files: Vec::new(),
    };
    refuse_unread(&mut d)?;
    users::to_cloud_config(&mut d)?;
    d.storage =
        keep!(d.refused, storage::to_cloud_config(doc, &ignition.units)).unwrap_or_default();
    d.out.push_str(&d.storage.blocks);
    scripts::units_to_cloud_config(&mut d);
    files::to_cloud_config(&mut d)?;
    emit::commands(&mut d);
    if !d.refused.is_empty() {
        return Err(refuse(TO, d.refused.join("; ")));
    }
    Ok(d.out.into_bytes())
}

/// What the Ignition reader does not model, config sources, and the fields of `storage.files`
/// that `write_files` cannot say.
fn refuse_unread(d: &mut CloudConfigDraft<'_>) -> Result<(), ConvertError> {
    let unmodelled: Vec<&str> = d
        .ignition
        .unmodelled
        .iter()
        .copied()
        .filter(|u| !matches!(*u, "passwd.groups" | "storage.disks"))
        .collect();
    if !unmodelled.is_empty() {
        d.refused.push(unmodelled.join(", "));
    }
    if d.ignition.config_sources.iter().any(|s| !s.is_empty()) {
        d.refused
            .push("ignition.config merge/replace sources".to_owned());
    }
    for e in files::file_fields(d.doc) {
        keep!(d.refused, Err::<(), _>(e));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::scripts::BOOT_UNIT_NAME;
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
