//! The user data text: CAPRKE2 v0.25's cloud-config templates (whitespace and quoting as Go's
//! `text/template` writes them) and its Ignition config (Butane fcos 1.4 → Ignition 3.3,
//! `json.Marshal` field order and escaping).

use serde_json::{Map, Value, json};

use payload_gotmpl::go_quote;

use super::rke2::File;
use super::yaml::{Node, Style, to_string};
use crate::manifest_checks::IGNORED_KEYS;

/// What both formats are made from (CAPRKE2's `BaseUserData`).
pub(crate) struct BaseUserData {
    pub(crate) control_plane: bool,
    pub(crate) files: Vec<File>,
    pub(crate) ntp_servers: Vec<String>,
    /// `additionalUserData.data` after the webhook's correction, sorted by key.
    pub(crate) arbitrary: Vec<(String, String)>,
    /// `additionalUserData.config` after CAPRKE2's cleanup (cloud-config only).
    pub(crate) additional: String,
    pub(crate) pre: Vec<String>,
    pub(crate) post: Vec<String>,
    pub(crate) version: String,
    pub(crate) air_gapped: bool,
    pub(crate) checksum: String,
    pub(crate) cis: bool,
}

const ARTIFACTS_CHECK: (&str, &str) = (
    "[[ $(sha256sum /opt/rke2-artifacts/sha256sum*.txt | awk '{print $1}') == ",
    " ]] || exit 1",
);

/// Every line of `text` indented by `n` spaces (Go's `Indent`: a text ending in `\n` leaves a
/// last line of just the spaces).
fn indent(n: usize, text: &str) -> String {
    let pad = " ".repeat(n);
    format!("{pad}{}", text.replace('\n', &format!("\n{pad}")))
}

/// The cloud-config document.
pub(crate) fn cloud_config(base: &BaseUserData) -> String {
    let mut out = String::from("## template: jinja\n#cloud-config\n\nwrite_files:");
    for f in &base.files {
        out.push_str(&format!("\n-   path: {}\n    ", f.path));
        if !f.encoding.is_empty() {
            out.push_str(&format!("encoding: \"{}\"\n    ", f.encoding));
        }
        if !f.owner.is_empty() {
            out.push_str(&format!("owner: {}\n    ", f.owner));
        }
        if !f.permissions.is_empty() {
            out.push_str(&format!("permissions: '{}'\n    ", f.permissions));
        }
        out.push_str("content: |\n");
        out.push_str(&indent(6, &f.content));
    }
    out.push('\n');
    if !base.ntp_servers.is_empty() {
        out.push_str("ntp:\n  enabled: true\n  servers:");
        for s in &base.ntp_servers {
            out.push_str("\n  - ");
            out.push_str(&go_quote(s));
        }
    }
    out.push('\n');
    for (key, value) in &base.arbitrary {
        out.push_str(&format!("\n{key}: {value}"));
    }
    out.push_str(if base.control_plane {
        "\n\nruncmd:"
    } else {
        "\nruncmd:"
    });
    for c in &base.pre {
        out.push_str("\n  - ");
        out.push_str(&go_quote(c));
    }
    if !base.checksum.is_empty() {
        out.push_str(&format!(
            "\n  - {}{}{}",
            ARTIFACTS_CHECK.0, base.checksum, ARTIFACTS_CHECK.1
        ));
    }
    let v = &base.version;
    let install = match (base.control_plane, base.air_gapped) {
        (true, true) => "INSTALL_RKE2_ARTIFACT_PATH=/opt/rke2-artifacts sh /opt/install.sh".to_owned(),
        (true, false) => format!("'curl -sfL https://get.rke2.io | INSTALL_RKE2_VERSION={v} sh -s - server'"),
        (false, true) => {
            "'INSTALL_RKE2_ARTIFACT_PATH=/opt/rke2-artifacts INSTALL_RKE2_TYPE=\"agent\" sh /opt/install.sh'".to_owned()
        }
        (false, false) => {
            format!("'curl -sfL https://get.rke2.io | INSTALL_RKE2_VERSION={v} INSTALL_RKE2_TYPE=\"agent\" sh -s -'")
        }
    };
    out.push_str("\n  - ");
    out.push_str(&install);
    if base.cis {
        out.push_str("\n  - '/opt/rke2-cis-script.sh'");
    }
    let (this, other) = if base.control_plane {
        ("server", "agent")
    } else {
        ("agent", "server")
    };
    out.push_str(&format!(
        "\n  - 'systemctl mask rke2-{other}.service || true'"
    ));
    out.push_str(&format!("\n  - 'systemctl enable rke2-{this}.service'"));
    out.push_str(&format!("\n  - 'systemctl start rke2-{this}.service'"));
    out.push_str("\n  - 'mkdir -p /run/cluster-api'");
    out.push_str("\n  - 'echo success > /run/cluster-api/bootstrap-success.complete'");
    for c in &base.post {
        out.push_str("\n  - ");
        out.push_str(&go_quote(c));
    }
    out.push('\n');
    out.push_str(&base.additional);
    out
}

/// `additionalUserData.config` as CAPRKE2 appends it: parsed, `write_files`/`ntp`/`runcmd`
/// removed, written again by yaml.v3 (sorted keys, indent 2); `""` when nothing is left.
///
/// `Err` carries the parser's message: CAPRKE2 fails to render on it.
pub(crate) fn cleanup_additional_cloud_config(text: &str) -> Result<String, String> {
    let value = parse_yaml(text)?;
    let map = match value {
        Value::Object(map) => map,
        Value::Null => Map::new(),
        _ => return Err("it is not a mapping".to_owned()),
    };
    let mut map = map;
    for key in IGNORED_KEYS {
        map.remove(key);
    }
    let text = to_string(&Node::from_json_sorted(&Value::Object(map)), Style::V3);
    Ok(if text == "{}\n" { String::new() } else { text })
}

/// One `additionalUserData.data` value as CAPRKE2's defaulting webhook rewrites it: a mapping
/// becomes `"\n  k: v\n  "` (yaml.v3, indented by two), a list `"\n- a\n"`, anything else stays.
pub(crate) fn correct_arbitrary(value: &str) -> String {
    match parse_yaml(value) {
        Ok(Value::Object(map)) => {
            let text = to_string(&Node::from_json_sorted(&Value::Object(map)), Style::V3);
            format!("\n  {}", text.replace('\n', "\n  "))
        }
        Ok(Value::Array(items)) => {
            let text = to_string(&Node::from_json_sorted(&Value::Array(items)), Style::V3);
            format!("\n{text}")
        }
        _ => value.to_owned(),
    }
}

fn parse_yaml(text: &str) -> Result<Value, String> {
    let mut options = serde_saphyr::Options::default();
    options.with_snippet = false;
    let docs: Vec<Option<Value>> = serde_saphyr::from_str_multiple_with_options(text, options)
        .map_err(|e| rke2_payload::codec::parser_message(&e.to_string()))?;
    Ok(docs.into_iter().flatten().next().unwrap_or(Value::Null))
}

const SSHD_SNIPPET: &str = "# Use most defaults for sshd configuration.\nSubsystem sftp internal-sftp\nClientAliveInterval 180\nUseDNS no\nUsePAM yes\nPrintLastLog no # handled by PAM\nPrintMotd no # handled by PAM\n";

const INSTALL_UNIT: &str = "[Unit]\nDescription=rke2-install\nWants=network-online.target\nAfter=network-online.target network.target\nConditionPathExists=!/etc/cluster-api/bootstrap-success.complete\n[Service]\nUser=root\n# To not restart the unit when it exits, as it is expected.\nType=oneshot\nExecStart=/etc/rke2-install.sh\n[Install]\nWantedBy=multi-user.target\n";

const CHRONY_TAIL: &str = "driftfile /var/lib/chrony/drift\nmakestep 1.0 3\nrtcsync\nntsdumpdir /var/lib/chrony\nlogdir /var/log/chrony\ninclude /etc/chrony.d/*.conf\nsourcedir /run/chrony-dhcp\n";

/// YAML clip chomping of a literal block: a non-empty text ends in exactly one `\n`.
fn clip(text: &str) -> String {
    let stripped = text.trim_end_matches('\n');
    if stripped.is_empty() {
        String::new()
    } else {
        format!("{stripped}\n")
    }
}

/// The commands of the Ignition install script.
fn deploy_commands(base: &BaseUserData) -> Vec<String> {
    let mut cmds = Vec::new();
    if base.air_gapped && !base.checksum.is_empty() {
        cmds.push(format!(
            "{}{}{}",
            ARTIFACTS_CHECK.0, base.checksum, ARTIFACTS_CHECK.1
        ));
    }
    let v = &base.version;
    cmds.push(match (base.control_plane, base.air_gapped) {
        (true, true) => "INSTALL_RKE2_ARTIFACT_PATH=/opt/rke2-artifacts sh /opt/install.sh".to_owned(),
        (true, false) => format!("curl -sfL https://get.rke2.io | INSTALL_RKE2_VERSION={v} sh -s - server"),
        (false, true) => {
            "INSTALL_RKE2_ARTIFACT_PATH=/opt/rke2-artifacts INSTALL_RKE2_TYPE=\"agent\" sh /opt/install.sh".to_owned()
        }
        (false, false) => {
            format!("curl -sfL https://get.rke2.io | INSTALL_RKE2_VERSION={v} INSTALL_RKE2_TYPE=\"agent\" sh -s -")
        }
    });
    if base.cis {
        cmds.push("/opt/rke2-cis-script.sh".to_owned());
    }
    let svc = if base.control_plane {
        "rke2-server"
    } else {
        "rke2-agent"
    };
    cmds.extend([
        "setenforce 0".to_owned(),
        format!("restorecon /etc/systemd/system/{svc}.service"),
        format!("systemctl enable --now {svc}.service"),
        "mkdir -p /run/cluster-api /etc/cluster-api".to_owned(),
        "echo success | tee /run/cluster-api/bootstrap-success.complete /etc/cluster-api/bootstrap-success.complete > /dev/null".to_owned(),
        "setenforce 1".to_owned(),
    ]);
    cmds
}

/// What makes CAPRKE2's Ignition rendering fail.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct IgnitionRefusal(pub(crate) String);

/// A `permissions` string as Butane reads `mode: 0640` (YAML integer: `0` prefix octal, `0x`
/// hex, `0o` octal, else decimal).
fn mode(permissions: &str) -> Result<u32, IgnitionRefusal> {
    let p = permissions.replace('_', "");
    let parsed = if let Some(hex) = p.strip_prefix("0x") {
        u32::from_str_radix(hex, 16)
    } else if let Some(oct) = p.strip_prefix("0o") {
        u32::from_str_radix(oct, 8)
    } else if p.len() > 1 && p.starts_with('0') {
        u32::from_str_radix(&p[1..], 8)
    } else {
        p.parse()
    };
    parsed.map_err(|_| {
        IgnitionRefusal(format!(
            "permissions {} is not a number Butane reads as a mode",
            rke2_payload::terminal_safe(permissions)
        ))
    })
}

fn ignition_file(
    path: &str,
    data: &[u8],
    owner: &str,
    permissions: &str,
) -> Result<Value, IgnitionRefusal> {
    let (mut user, mut group) = (json!({}), json!({}));
    if !owner.is_empty() {
        let mut parts = owner.split(':');
        if let Some(u) = parts.next().filter(|u| !u.is_empty()) {
            user = json!({"name": u.trim()});
        }
        if let Some(g) = parts.next().filter(|g| !g.is_empty()) {
            group = json!({"name": g.trim()});
        }
    }
    let mut entry = Map::new();
    entry.insert("group".to_owned(), group);
    entry.insert("overwrite".to_owned(), Value::Bool(true));
    entry.insert("path".to_owned(), Value::String(path.to_owned()));
    entry.insert("user".to_owned(), user);
    entry.insert("contents".to_owned(), super::butane::contents(data));
    if !permissions.is_empty() {
        entry.insert("mode".to_owned(), json!(mode(permissions)?));
    }
    Ok(Value::Object(entry))
}

/// The Ignition config, compact, with Go's escaping of `<`, `>`, `&`; `additional` is the Butane
/// `additionalUserData.config`, merged in. Returns the Butane sections left out too.
pub(crate) fn ignition(
    base: &BaseUserData,
    flatcar: bool,
    additional: Option<(&str, bool)>,
) -> Result<(Vec<u8>, Vec<String>), IgnitionRefusal> {
    let mut script = String::from("#!/bin/bash\nset -euo pipefail\n\n");
    for c in &base.pre {
        script.push_str(c);
        script.push('\n');
    }
    script.push_str("\n\n");
    for c in deploy_commands(base) {
        script.push_str(&c);
        script.push('\n');
    }
    script.push_str("\n\n");
    for c in &base.post {
        script.push_str(c);
        script.push('\n');
    }
    let script = clip(&script);

    let mut files = vec![ignition_file(
        "/etc/ssh/sshd_config.d/010-rke2.conf",
        SSHD_SNIPPET.as_bytes(),
        "",
        "0600",
    )?];
    let mut seen = std::collections::HashSet::new();
    for f in &base.files {
        if !seen.insert(f.path.as_str()) {
            return Err(IgnitionRefusal(format!(
                "{} is written twice, which Butane rejects",
                rke2_payload::terminal_safe(&f.path)
            )));
        }
        let text = clip(&f.content);
        let data = match f.encoding.as_str() {
            "" => text.into_bytes(),
            "base64" => rke2_payload::codec::decode_base64(text.trim_end()).ok_or_else(|| {
                IgnitionRefusal(format!(
                    "{} says encoding base64 but its content is not base64",
                    rke2_payload::terminal_safe(&f.path)
                ))
            })?,
            other => {
                return Err(IgnitionRefusal(format!(
                    "{} has encoding {}, which CAPRKE2 refuses for Ignition",
                    rke2_payload::terminal_safe(&f.path),
                    rke2_payload::terminal_safe(other)
                )));
            }
        };
        files.push(ignition_file(&f.path, &data, &f.owner, &f.permissions)?);
    }
    files.push(ignition_file(
        "/etc/rke2-install.sh",
        script.as_bytes(),
        "",
        "0700",
    )?);
    let mut units =
        vec![json!({"contents": INSTALL_UNIT, "enabled": true, "name": "rke2-install.service"})];
    if !base.ntp_servers.is_empty() {
        let mut chrony = String::from("# Configured by RKE2 CAPI bootstrap provider\n");
        for s in &base.ntp_servers {
            chrony.push_str(&format!("server {s}\n"));
        }
        chrony.push_str(CHRONY_TAIL);
        files.push(ignition_file(
            "/etc/chrony.conf",
            chrony.as_bytes(),
            "",
            "0644",
        )?);
        units.push(json!({"enabled": true, "name": "chronyd.service"}));
    }
    let mut storage = Map::new();
    storage.insert("files".to_owned(), Value::Array(files));
    if !flatcar {
        storage.insert(
            "filesystems".to_owned(),
            json!([{"device": "/dev/disk/by-partlabel/p.lxroot", "format": "btrfs", "mountOptions": ["subvol=/@/opt"], "path": "/opt", "wipeFilesystem": false}]),
        );
    }
    let mut doc = json!({
        "ignition": {"config": {"replace": {"verification": {}}}, "proxy": {}, "security": {"tls": {}}, "timeouts": {}, "version": "3.3.0"},
        "kernelArguments": {},
        "passwd": {},
        "storage": Value::Object(storage),
        "systemd": {"units": units},
    });
    let left_out = match additional {
        Some((text, strict)) => super::butane::merge(&mut doc, text, strict).map_err(|why| {
            IgnitionRefusal(format!(
                "spec.agentConfig.additionalUserData.config is not a Butane document ({why})"
            ))
        })?,
        None => Vec::new(),
    };
    Ok((go_json(&doc).into_bytes(), left_out))
}

/// `encoding/json` output: compact, `<`, `>`, `&`, U+2028 and U+2029 escaped.
pub(crate) fn go_json(value: &Value) -> String {
    let text = value.to_string();
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '<' => out.push_str("\\u003c"),
            '>' => out.push_str("\\u003e"),
            '&' => out.push_str("\\u0026"),
            '\u{2028}' => out.push_str("\\u2028"),
            '\u{2029}' => out.push_str("\\u2029"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn go_quote_is_strconv_quote() {
        assert_eq!(go_quote("a\"b\\c\td\u{1}"), "\"a\\\"b\\\\c\\td\\x01\"");
        assert_eq!(go_quote("done \u{2713}"), "\"done \u{2713}\"");
        assert_eq!(go_quote("\u{200b}"), "\"\\u200b\"");
    }

    #[test]
    fn additional_cloud_config_is_cleaned_as_caprke2_cleans_it() {
        let text = "#cloud-config\nusers:\n- name: ops\n  shell: /bin/bash\n  groups: wheel\npackage_update: true\nruncmd: [x]\nntp: {}\n";
        assert_eq!(
            cleanup_additional_cloud_config(text).unwrap(),
            "package_update: true\nusers:\n  - groups: wheel\n    name: ops\n    shell: /bin/bash\n"
        );
        assert_eq!(
            cleanup_additional_cloud_config("runcmd: [a]\n").unwrap(),
            ""
        );
        assert!(cleanup_additional_cloud_config("a: [").is_err());
    }

    #[test]
    fn arbitrary_data_is_corrected_as_the_webhook_corrects_it() {
        assert_eq!(correct_arbitrary("a: b"), "\n  a: b\n  ");
        assert_eq!(correct_arbitrary("- a\n- b"), "\n- a\n- b\n");
        assert_eq!(correct_arbitrary("plain"), "plain");
    }

    #[test]
    fn modes_are_read_as_butane_reads_them() {
        assert_eq!(mode("0640").unwrap(), 0o640);
        assert_eq!(mode("644").unwrap(), 644);
        assert_eq!(mode("0o700").unwrap(), 0o700);
        assert!(mode("rw").is_err());
    }
}
