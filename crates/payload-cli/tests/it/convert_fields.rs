//! Field coverage of `encode --to`: every field of the cloud-init modules that convert to
//! Ignition (as cloud-init's own schema lists them), and every field of the Ignition 3.3 spec
//! converted to cloud-config, carries over or is refused by name. Which of the two is stated for
//! each field, so a conversion that starts dropping one fails here.

use crate::common::*;

/// cloud-init's schema, when the package installed it.
fn cloud_init_schema() -> Option<serde_json::Value> {
    let path = rke2_payload::CLOUD_INIT_SCHEMA_PATHS
        .iter()
        .map(std::path::Path::new)
        .find(|p| p.is_file())?;
    serde_json::from_str(&std::fs::read_to_string(path).expect("schema")).ok()
}

/// The fields cloud-init's schema lists for the modules that convert to Ignition.
fn converted_module_fields(schema: &serde_json::Value) -> Vec<String> {
    let defs = &schema["$defs"];
    let fields = |module: &str, at: &serde_json::Value| -> Vec<String> {
        at["properties"]
            .as_object()
            .map(|p| p.keys().map(|k| format!("{module}.{k}")).collect())
            .unwrap_or_default()
    };
    let mut listed = fields("users", &defs["users_groups.user"]);
    listed.extend(fields(
        "write_files",
        &defs["cc_write_files"]["properties"]["write_files"]["items"],
    ));
    listed.extend(fields(
        "disk_setup",
        &defs["cc_disk_setup"]["properties"]["disk_setup"]["patternProperties"]["^.+$"],
    ));
    listed.extend(fields(
        "fs_setup",
        &defs["cc_disk_setup"]["properties"]["fs_setup"]["items"],
    ));
    let ntp = &defs["cc_ntp"]["properties"]["ntp"];
    let ntp = ntp["oneOf"]
        .as_array()
        .and_then(|o| o.iter().find(|x| x.get("properties").is_some()))
        .unwrap_or(ntp);
    listed.extend(fields("ntp", ntp));
    assert!(listed.len() > 40, "{listed:?}");
    listed
}

/// What converting a cloud-init field to Ignition does.
enum Want {
    /// The Ignition config changes, and shows this.
    Changes(&'static str),
    /// Refused, naming this.
    Refused(&'static str),
    /// Nothing to carry, and why.
    Nothing(&'static str),
}
use Want::*;

/// A cloud-init field: its name, a config without it, the config with it, and what it does.
type CloudInitCase = (&'static str, String, String, Want);

fn ci_user(f: &str) -> String {
    format!("users: [{{name: ops, {f}}}]")
}

fn ci_file(f: &str) -> String {
    format!("write_files: [{{path: /etc/f, content: \"x\\n\", {f}}}]")
}

fn ci_disk(f: &str) -> String {
    format!("disk_setup: {{/dev/vdb: {{table_type: gpt, layout: true, {f}}}}}")
}

fn ci_fs(f: &str) -> String {
    format!("fs_setup: [{{device: /dev/vdc1, filesystem: xfs, {f}}}]")
}

fn ci_ntp(f: &str) -> String {
    format!("ntp: {{servers: [a.example.com], {f}}}")
}

/// The `users` fields that say who the user is.
fn user_identity_cases() -> Vec<CloudInitCase> {
    vec![
        (
            "users.name",
            String::new(),
            ci_user("shell: /bin/sh"),
            Changes("\"name\":\"ops\""),
        ),
        (
            "users.expiredate",
            ci_user(""),
            ci_user("expiredate: '2030-01-01'"),
            Refused("expiredate"),
        ),
        (
            "users.gecos",
            ci_user(""),
            ci_user("gecos: Ops"),
            Changes("\"gecos\":\"Ops\""),
        ),
        (
            "users.groups",
            ci_user(""),
            ci_user("groups: [wheel]"),
            Changes("\"groups\":[\"wheel\"]"),
        ),
        (
            "users.homedir",
            ci_user(""),
            ci_user("homedir: /home/o"),
            Changes("\"homeDir\":\"/home/o\""),
        ),
        (
            "users.inactive",
            ci_user(""),
            ci_user("inactive: '5'"),
            Refused("inactive"),
        ),
        (
            "users.lock-passwd",
            ci_user(""),
            ci_user("lock-passwd: false"),
            Refused("lock-passwd"),
        ),
        (
            "users.lock_passwd",
            ci_user(""),
            ci_user("lock_passwd: true"),
            Nothing("a locked password is no password to Ignition"),
        ),
        (
            "users.no_create_home",
            ci_user(""),
            ci_user("no_create_home: true"),
            Changes("\"noCreateHome\":true"),
        ),
        (
            "users.no_log_init",
            ci_user(""),
            ci_user("no_log_init: true"),
            Changes("\"noLogInit\":true"),
        ),
        (
            "users.no_user_group",
            ci_user(""),
            ci_user("no_user_group: true"),
            Changes("\"noUserGroup\":true"),
        ),
    ]
}

/// The `users` fields that say how the user logs in and what it may do.
fn user_login_cases() -> Vec<CloudInitCase> {
    vec![
        (
            "users.passwd",
            ci_user(""),
            ci_user("passwd: $6$s$h, lock_passwd: false"),
            Changes("\"passwordHash\":\"$6$s$h\""),
        ),
        (
            "users.hashed_passwd",
            ci_user(""),
            ci_user("hashed_passwd: $6$s$h, lock_passwd: false"),
            Changes("\"passwordHash\":\"$6$s$h\""),
        ),
        (
            "users.plain_text_passwd",
            ci_user(""),
            ci_user("plain_text_passwd: pw"),
            Refused("plain_text_passwd"),
        ),
        (
            "users.create_groups",
            ci_user(""),
            ci_user("create_groups: false"),
            Refused("create_groups"),
        ),
        (
            "users.primary_group",
            ci_user(""),
            ci_user("primary_group: ops"),
            Changes("\"primaryGroup\":\"ops\""),
        ),
        (
            "users.selinux_user",
            ci_user(""),
            ci_user("selinux_user: staff_u"),
            Refused("selinux_user"),
        ),
        (
            "users.shell",
            ci_user(""),
            ci_user("shell: /bin/bash"),
            Changes("\"shell\":\"/bin/bash\""),
        ),
        (
            "users.snapuser",
            ci_user(""),
            ci_user("snapuser: a@example.com"),
            Refused("snapuser"),
        ),
        (
            "users.ssh_authorized_keys",
            ci_user(""),
            ci_user("ssh_authorized_keys: [ssh-ed25519 AAAA k]"),
            Changes("\"sshAuthorizedKeys\":[\"ssh-ed25519 AAAA k\"]"),
        ),
        (
            "users.ssh_import_id",
            ci_user(""),
            ci_user("ssh_import_id: ['gh:ops']"),
            Refused("ssh_import_id"),
        ),
        (
            "users.ssh_redirect_user",
            ci_user(""),
            ci_user("ssh_redirect_user: true"),
            Refused("ssh_redirect_user"),
        ),
        (
            "users.system",
            ci_user(""),
            ci_user("system: true"),
            Changes("\"system\":true"),
        ),
        (
            "users.sudo",
            ci_user(""),
            ci_user("sudo: 'ALL=(ALL) ALL'"),
            Changes("/etc/sudoers.d/90-cloud-init-users"),
        ),
        (
            "users.uid",
            ci_user(""),
            ci_user("uid: 1500"),
            Changes("\"uid\":1500"),
        ),
    ]
}

/// The `write_files` fields.
fn write_file_cases() -> Vec<CloudInitCase> {
    vec![
        (
            "write_files.path",
            String::new(),
            ci_file(""),
            Changes("\"path\":\"/etc/f\""),
        ),
        (
            "write_files.content",
            ci_file(""),
            "write_files: [{path: /etc/f, content: \"y\\n\"}]".to_owned(),
            Changes("data:,y%0A"),
        ),
        (
            "write_files.owner",
            ci_file(""),
            ci_file("owner: 'ops:ops'"),
            Changes("\"user\":{\"name\":\"ops\"}"),
        ),
        (
            "write_files.permissions",
            ci_file(""),
            ci_file("permissions: '0600'"),
            Changes("\"mode\":384"),
        ),
        (
            "write_files.encoding",
            ci_file(""),
            "write_files: [{path: /etc/f, content: eQo=, encoding: b64}]".to_owned(),
            Changes("data:,y%0A"),
        ),
        (
            "write_files.append",
            ci_file(""),
            ci_file("append: true"),
            Changes("\"append\":["),
        ),
        (
            "write_files.defer",
            ci_file(""),
            ci_file("defer: true"),
            Nothing(
                "deferred so users cloud-init creates can own it: Ignition creates users before files",
            ),
        ),
    ]
}

/// The `disk_setup` and `fs_setup` fields.
fn disk_cases() -> Vec<CloudInitCase> {
    vec![
        (
            "disk_setup.table_type",
            ci_disk(""),
            "disk_setup: {/dev/vdb: {table_type: mbr, layout: true}}".to_owned(),
            Refused("table_type mbr"),
        ),
        (
            "disk_setup.layout",
            ci_disk(""),
            "disk_setup: {/dev/vdb: {table_type: gpt, layout: [50, 50]}}".to_owned(),
            Refused("layout"),
        ),
        (
            "disk_setup.overwrite",
            ci_disk(""),
            ci_disk("overwrite: true"),
            Changes("\"wipeTable\":true"),
        ),
        (
            "fs_setup.label",
            ci_fs(""),
            ci_fs("label: data"),
            Changes("\"label\":\"data\""),
        ),
        (
            "fs_setup.filesystem",
            ci_fs(""),
            "fs_setup: [{device: /dev/vdc1, filesystem: ext4}]".to_owned(),
            Changes("\"format\":\"ext4\""),
        ),
        (
            "fs_setup.device",
            ci_fs(""),
            "fs_setup: [{device: /dev/vdd1, filesystem: xfs}]".to_owned(),
            Changes("\"device\":\"/dev/vdd1\""),
        ),
        (
            "fs_setup.partition",
            ci_fs(""),
            "fs_setup: [{device: /dev/vdc, filesystem: xfs, partition: 2}]".to_owned(),
            Changes("\"device\":\"/dev/vdc2\""),
        ),
        (
            "fs_setup.partition",
            ci_fs(""),
            ci_fs("partition: none, overwrite: true"),
            Changes("\"wipeFilesystem\":true"),
        ),
        (
            "fs_setup.partition",
            ci_fs(""),
            "fs_setup: [{device: /dev/vdc, filesystem: xfs, partition: auto}]".to_owned(),
            Refused("partition auto on /dev/vdc"),
        ),
        (
            "fs_setup.partition",
            String::new(),
            "device_aliases: {data: /dev/vdc}\nfs_setup: [{device: data.1, filesystem: xfs}]"
                .to_owned(),
            Changes("\"device\":\"/dev/vdc1\""),
        ),
        (
            "fs_setup.overwrite",
            "fs_setup: [{device: /dev/vdc, filesystem: xfs, partition: 1}]".to_owned(),
            "fs_setup: [{device: /dev/vdc, filesystem: xfs, partition: 1, overwrite: true}]"
                .to_owned(),
            Changes("\"wipeFilesystem\":true"),
        ),
        (
            "fs_setup.overwrite",
            ci_fs(""),
            ci_fs("overwrite: true"),
            Nothing(
                "with partition any, cloud-init keeps a matching filesystem and only forces mkfs when it makes one",
            ),
        ),
        (
            "fs_setup.replace_fs",
            ci_fs(""),
            ci_fs("replace_fs: ntfs"),
            Refused("replace_fs"),
        ),
        (
            "fs_setup.extra_opts",
            ci_fs(""),
            ci_fs("extra_opts: [-m, crc=1]"),
            Changes("\"options\":[\"-m\",\"crc=1\"]"),
        ),
        (
            "fs_setup.cmd",
            ci_fs(""),
            ci_fs("cmd: mkfs -t xfs /dev/vdc"),
            Refused("cmd"),
        ),
    ]
}

/// The `ntp` fields.
fn ntp_cases() -> Vec<CloudInitCase> {
    vec![
        (
            "ntp.pools",
            ci_ntp(""),
            ci_ntp("pools: [pool.example.com]"),
            Changes("/etc/chrony.conf"),
        ),
        (
            "ntp.servers",
            String::new(),
            ci_ntp(""),
            Changes("chronyd.service"),
        ),
        (
            "ntp.ntp_client",
            ci_ntp(""),
            ci_ntp("ntp_client: ntpd"),
            Refused("ntp_client"),
        ),
        (
            "ntp.enabled",
            ci_ntp(""),
            ci_ntp("enabled: false"),
            Changes("\"units\":[]"),
        ),
        (
            "ntp.config",
            ci_ntp(""),
            ci_ntp("config: {confpath: /etc/chrony/chrony.conf}"),
            Refused("ntp.config"),
        ),
    ]
}

/// A cloud-config body converted to Ignition.
fn to_ignition(body: &str) -> std::process::Output {
    cmd()
        .args(["encode", "--to", "ignition", "--emit", "value"])
        .write_stdin(format!("#cloud-config\n{body}\n"))
        .output()
        .expect("run")
}

/// Converts one cloud-init case and checks it does what it says.
fn check_to_ignition((field, base, with, want): &CloudInitCase) {
    let out = to_ignition(with);
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr);
    match want {
        Changes(evidence) | Nothing(evidence) => {
            assert_eq!(out.status.code(), Some(0), "{field}: {stderr}");
            assert_valid("ignition", &out.stdout, field);
            let before = to_ignition(base);
            assert!(before.status.success(), "{field}: the base converts");
            let changed = before.stdout != out.stdout;
            if let Changes(evidence) = want {
                assert!(changed, "{field} changed nothing: {stdout}");
                assert!(
                    stdout.contains(evidence),
                    "{field}: {evidence:?} not in {stdout}"
                );
            } else {
                assert!(!changed, "{field} changes the config, although {evidence}");
            }
        }
        Refused(name) => {
            assert_eq!(
                out.status.code(),
                Some(2),
                "{field} should be refused: {stdout}"
            );
            assert!(out.stdout.is_empty());
            assert!(
                stderr.contains(name),
                "{field}: the refusal does not name it: {stderr}"
            );
        }
    }
}

/// Every field of the cloud-init modules that convert to Ignition (as cloud-init's own schema
/// lists them): it changes the Ignition config (which `ignition-validate` accepts), or the
/// refusal names it, or it is stated why it needs nothing. A field the schema gains fails here
/// until it is given a case.
#[test]
fn every_field_of_the_converted_cloud_init_modules_converts_or_is_named() {
    let Some(schema) = cloud_init_schema() else {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "cloud-init's schema is missing"
        );
        return;
    };
    let listed = converted_module_fields(&schema);
    let cases: Vec<CloudInitCase> = [
        user_identity_cases(),
        user_login_cases(),
        write_file_cases(),
        disk_cases(),
        ntp_cases(),
    ]
    .into_iter()
    .flatten()
    .collect();
    for field in &listed {
        assert!(cases.iter().any(|c| c.0 == field), "no case for {field}");
    }
    for case in &cases {
        check_to_ignition(case);
    }
}

/// The version every Ignition case declares.
const VERSION: &str = r#""version":"3.3.0""#;

/// An Ignition field: its name, a config with it, and what the cloud-config shows (`None`:
/// refused by name).
type IgnitionCase = (&'static str, String, Option<&'static str>);

fn ign_storage(s: &str) -> String {
    format!(r#"{{"ignition":{{{VERSION}}},"storage":{{{s}}}}}"#)
}

fn ign_passwd(s: &str) -> String {
    format!(r#"{{"ignition":{{{VERSION}}},"passwd":{{{s}}}}}"#)
}

fn ign_units(s: &str) -> String {
    format!(r#"{{"ignition":{{{VERSION}}},"systemd":{{"units":[{s}]}}}}"#)
}

fn ign_ignition(s: &str) -> String {
    format!(r#"{{"ignition":{{{VERSION},{s}}}}}"#)
}

fn ign_file(extra: &str) -> String {
    ign_storage(&format!(
        r#""files":[{{"path":"/etc/f","contents":{{"source":"data:,x%0A"}}{extra}}}]"#
    ))
}

fn ign_disk(partition: &str) -> String {
    ign_storage(&format!(
        r#""disks":[{{"device":"/dev/vdb","wipeTable":true,"partitions":[{{"number":1{partition}}}]}}]"#
    ))
}

fn ign_fs(extra: &str) -> String {
    ign_storage(&format!(
        r#""filesystems":[{{"device":"/dev/vdc1","format":"xfs","path":"/data"{extra}}}]"#
    ))
}

fn ign_user(extra: &str) -> String {
    ign_passwd(&format!(r#""users":[{{"name":"ops"{extra}}}]"#))
}

fn ign_group(extra: &str) -> String {
    ign_passwd(&format!(r#""groups":[{{"name":"admins"{extra}}}]"#))
}

/// The `ignition` section: config merging, timeouts, TLS, proxy.
fn ignition_config_cases() -> Vec<IgnitionCase> {
    vec![
        (
            "ignition.config.merge",
            ign_ignition(r#""config":{"merge":[{"source":"https://example.com/a.ign"}]}"#),
            None,
        ),
        (
            "ignition.config.replace",
            ign_ignition(r#""config":{"replace":{"source":"https://example.com/a.ign"}}"#),
            None,
        ),
        (
            "ignition.config.replace.source",
            ign_ignition(
                r#""config":{"replace":{"source":"data:,%7B%22ignition%22%3A%7B%22version%22%3A%223.3.0%22%7D%2C%22storage%22%3A%7B%22files%22%3A%5B%7B%22path%22%3A%22%2Fetc%2Finner%22%2C%22mode%22%3A420%7D%5D%7D%7D"}}"#,
            ),
            Some("/etc/inner"),
        ),
        (
            "ignition.timeouts.httpResponseHeaders",
            ign_ignition(r#""timeouts":{"httpResponseHeaders":5}"#),
            None,
        ),
        (
            "ignition.timeouts.httpTotal",
            ign_ignition(r#""timeouts":{"httpTotal":30}"#),
            None,
        ),
        (
            "ignition.security.tls.certificateAuthorities",
            ign_ignition(r#""security":{"tls":{"certificateAuthorities":[{"source":"data:,x"}]}}"#),
            None,
        ),
        (
            "ignition.proxy.httpProxy",
            ign_ignition(r#""proxy":{"httpProxy":"http://proxy:3128"}"#),
            None,
        ),
        (
            "ignition.proxy.httpsProxy",
            ign_ignition(r#""proxy":{"httpsProxy":"http://proxy:3128"}"#),
            None,
        ),
        (
            "ignition.proxy.noProxy",
            ign_ignition(r#""proxy":{"noProxy":["example.com"]}"#),
            None,
        ),
    ]
}

/// Disks, partitions, RAID, LUKS and filesystems.
fn ignition_disk_cases() -> Vec<IgnitionCase> {
    vec![
        (
            "storage.disks.wipeTable",
            ign_storage(r#""disks":[{"device":"/dev/vdb","wipeTable":true}]"#),
            Some("layout: remove"),
        ),
        (
            "storage.disks.partitions.number",
            ign_disk(""),
            Some("layout: true"),
        ),
        (
            "storage.disks.partitions.typeGuid",
            ign_disk(r#","typeGuid":"0657FD6D-A4AB-43C4-84E5-0933C84B4F4F""#),
            Some("layout: [[100, 8200]]"),
        ),
        (
            "storage.disks.partitions.label",
            ign_disk(r#","label":"data""#),
            None,
        ),
        (
            "storage.disks.partitions.sizeMiB",
            ign_disk(r#","sizeMiB":1024"#),
            None,
        ),
        (
            "storage.disks.partitions.startMiB",
            ign_disk(r#","startMiB":1"#),
            None,
        ),
        (
            "storage.disks.partitions.guid",
            ign_disk(r#","guid":"8A7B4A6C-1F4E-4A3C-9A1B-0C2D3E4F5A6B""#),
            None,
        ),
        (
            "storage.disks.partitions.wipePartitionEntry",
            ign_disk(r#","wipePartitionEntry":true"#),
            None,
        ),
        (
            "storage.disks.partitions.shouldExist",
            ign_disk(r#","shouldExist":false"#),
            None,
        ),
        (
            "storage.disks.partitions.resize",
            ign_disk(r#","resize":true"#),
            None,
        ),
        (
            "storage.raid",
            ign_storage(
                r#""raid":[{"name":"md0","level":"raid1","devices":["/dev/vdb","/dev/vdc"]}]"#,
            ),
            None,
        ),
        (
            "storage.luks",
            ign_storage(r#""luks":[{"name":"data","device":"/dev/vdb"}]"#),
            None,
        ),
        (
            "storage.filesystems.path",
            ign_fs(""),
            Some("- [/dev/vdc1, /data, xfs, defaults, '0', '0']"),
        ),
        (
            "storage.filesystems.mountOptions",
            ign_fs(r#","mountOptions":["noatime"]"#),
            Some("/data, xfs, noatime,"),
        ),
        (
            "storage.filesystems.wipeFilesystem",
            ign_fs(r#","wipeFilesystem":true"#),
            Some("overwrite: true"),
        ),
        (
            "storage.filesystems.label",
            ign_fs(r#","label":"data""#),
            Some("label: data"),
        ),
        (
            "storage.filesystems.options",
            ign_fs(r#","options":["-m","crc=1"]"#),
            Some("extra_opts: ['-m', 'crc=1']"),
        ),
        (
            "storage.filesystems.uuid",
            ign_fs(r#","uuid":"8A7B4A6C-1F4E-4A3C-9A1B-0C2D3E4F5A6B""#),
            None,
        ),
    ]
}

/// Files, directories and links.
fn ignition_file_cases() -> Vec<IgnitionCase> {
    vec![
        (
            "storage.files.contents.source",
            ign_file(""),
            Some("content: |\n      x\n"),
        ),
        (
            "storage.files.contents.compression",
            ign_storage(
                r#""files":[{"path":"/etc/f","contents":{"compression":"gzip","source":"data:;base64,H4sIAAAAAAACA6vgAgAfCOpGAgAAAA=="}}]"#,
            ),
            Some("/etc/f"),
        ),
        (
            "storage.files.contents.httpHeaders",
            ign_storage(
                r#""files":[{"path":"/etc/f","contents":{"source":"https://example.com/x","httpHeaders":[{"name":"A","value":"b"}]}}]"#,
            ),
            None,
        ),
        (
            "storage.files.contents.verification",
            ign_storage(
                r#""files":[{"path":"/etc/f","contents":{"source":"https://example.com/x","verification":{"hash":"sha512-a4abd4448c49562d828115d13a1fccea927f52b4d5459297f8b43e42da89238bc13626e43dcb38ddb082488927ec904fb42057443983e88585179d50551afe62"}}}]"#,
            ),
            None,
        ),
        (
            "storage.files.append",
            ign_storage(
                r#""files":[{"path":"/etc/f","mode":420,"append":[{"source":"data:,x%0A"}]}]"#,
            ),
            Some("append: true"),
        ),
        (
            "storage.files.append",
            ign_storage(r#""files":[{"path":"/etc/f","append":[{"source":"data:,x%0A"}]}]"#),
            None,
        ),
        (
            "storage.files.mode",
            ign_file(r#","mode":416"#),
            Some("permissions: '0640'"),
        ),
        (
            "storage.files.user.name",
            ign_file(r#","user":{"name":"ops"}"#),
            Some("owner: ops"),
        ),
        (
            "storage.files.user.id",
            ign_file(r#","user":{"id":1000}"#),
            None,
        ),
        (
            "storage.files.group.id",
            ign_file(r#","user":{"id":0},"group":{"id":0}"#),
            Some("owner: 'root:root'"),
        ),
        (
            "storage.files.group.name",
            ign_file(r#","group":{"name":"ops"}"#),
            Some("owner: ':ops'"),
        ),
        (
            "storage.files.overwrite",
            ign_file(r#","overwrite":true"#),
            Some("/etc/f"),
        ),
        (
            "storage.directories.path",
            ign_storage(r#""directories":[{"path":"/var/d"}]"#),
            Some("install -d -- /var/d"),
        ),
        (
            "storage.directories.mode",
            ign_storage(r#""directories":[{"path":"/var/d","mode":448}]"#),
            Some("install -d -m 0700 -- /var/d"),
        ),
        (
            "storage.directories.user",
            ign_storage(
                r#""directories":[{"path":"/var/d","user":{"name":"ops"},"group":{"id":10}}]"#,
            ),
            Some("install -d -o ops -g 10 -- /var/d"),
        ),
        (
            "storage.directories.overwrite",
            ign_storage(r#""directories":[{"path":"/var/d","overwrite":true}]"#),
            None,
        ),
        (
            "storage.links.target",
            ign_storage(r#""links":[{"path":"/etc/l","target":"/etc/t"}]"#),
            Some("ln -sn -- /etc/t /etc/l"),
        ),
        (
            "storage.links.hard",
            ign_storage(r#""links":[{"path":"/etc/l","target":"/etc/t","hard":true}]"#),
            Some("ln -- /etc/t /etc/l"),
        ),
        (
            "storage.links.overwrite",
            ign_storage(r#""links":[{"path":"/etc/l","target":"/etc/t","overwrite":true}]"#),
            Some("ln -snf -- /etc/t /etc/l"),
        ),
        (
            "storage.links.user",
            ign_storage(r#""links":[{"path":"/etc/l","target":"/etc/t","user":{"name":"ops"}}]"#),
            Some("chown -h ops -- /etc/l"),
        ),
    ]
}

/// Units, users, groups and kernel arguments.
fn ignition_unit_and_user_cases() -> Vec<IgnitionCase> {
    vec![
        (
            "systemd.units.enabled",
            ign_units(r#"{"name":"x.service","enabled":true}"#),
            Some("systemctl enable --now x.service"),
        ),
        (
            "systemd.units.mask",
            ign_units(r#"{"name":"x.service","mask":true}"#),
            Some("systemctl mask --now x.service"),
        ),
        (
            "systemd.units.contents",
            ign_units(
                r#"{"name":"x.service","enabled":false,"contents":"[Service]\nExecStart=/bin/true\n"}"#,
            ),
            Some("path: /etc/systemd/system/x.service"),
        ),
        (
            "systemd.units.dropins",
            ign_units(
                r#"{"name":"x.service","dropins":[{"name":"10-a.conf","contents":"[Service]\nNice=5\n"}]}"#,
            ),
            Some("path: /etc/systemd/system/x.service.d/10-a.conf"),
        ),
        (
            "systemd.units.dropins.contents",
            ign_units(r#"{"name":"x.service","dropins":[{"name":"10-a.conf"}]}"#),
            None,
        ),
        ("passwd.users.name", ign_user(""), Some("- name: ops")),
        (
            "passwd.users.passwordHash",
            ign_user(r#","passwordHash":"$6$salt$hash""#),
            Some("lock_passwd: false"),
        ),
        (
            "passwd.users.sshAuthorizedKeys",
            ign_user(r#","sshAuthorizedKeys":["ssh-ed25519 AAAA k"]"#),
            Some("ssh-ed25519 AAAA k"),
        ),
        (
            "passwd.users.uid",
            ign_user(r#","uid":1500"#),
            Some("uid: 1500"),
        ),
        (
            "passwd.users.gecos",
            ign_user(r#","gecos":"Ops""#),
            Some("gecos: Ops"),
        ),
        (
            "passwd.users.homeDir",
            ign_user(r#","homeDir":"/home/o""#),
            Some("homedir: /home/o"),
        ),
        (
            "passwd.users.noCreateHome",
            ign_user(r#","noCreateHome":true"#),
            Some("no_create_home: true"),
        ),
        (
            "passwd.users.primaryGroup",
            ign_user(r#","primaryGroup":"ops""#),
            Some("primary_group: ops"),
        ),
        (
            "passwd.users.groups",
            ign_user(r#","groups":["wheel"]"#),
            Some("groups: [wheel]"),
        ),
        (
            "passwd.users.noUserGroup",
            ign_user(r#","noUserGroup":true"#),
            Some("no_user_group: true"),
        ),
        (
            "passwd.users.noLogInit",
            ign_user(r#","noLogInit":true"#),
            Some("no_log_init: true"),
        ),
        (
            "passwd.users.shell",
            ign_user(r#","shell":"/bin/bash""#),
            Some("shell: /bin/bash"),
        ),
        (
            "passwd.users.system",
            ign_user(r#","system":true"#),
            Some("system: true"),
        ),
        (
            "passwd.users.shouldExist",
            ign_user(r#","shouldExist":false"#),
            None,
        ),
        (
            "passwd.groups.name",
            ign_group(""),
            Some("groups:\n  - admins"),
        ),
        ("passwd.groups.gid", ign_group(r#","gid":1500"#), None),
        (
            "passwd.groups.passwordHash",
            ign_group(r#","passwordHash":"$6$x""#),
            None,
        ),
        ("passwd.groups.system", ign_group(r#","system":true"#), None),
        (
            "passwd.groups.shouldExist",
            ign_group(r#","shouldExist":false"#),
            None,
        ),
        (
            "kernelArguments.shouldExist",
            format!(
                r#"{{"ignition":{{{VERSION}}},"kernelArguments":{{"shouldExist":["quiet"]}}}}"#
            ),
            None,
        ),
        (
            "kernelArguments.shouldNotExist",
            format!(
                r#"{{"ignition":{{{VERSION}}},"kernelArguments":{{"shouldNotExist":["quiet"]}}}}"#
            ),
            None,
        ),
    ]
}

/// Converts one Ignition case and checks it does what it says.
fn check_to_cloud_config((field, config, shows): &IgnitionCase) {
    // The case is valid Ignition, so a refusal is about cloud-config, not the input.
    assert_valid("ignition", config.as_bytes(), field);
    let out = cmd()
        .args(["encode", "--to", "cloud-config", "--emit", "value"])
        .write_stdin(config.clone())
        .output()
        .expect("run");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    match shows {
        Some(evidence) => {
            assert_eq!(out.status.code(), Some(0), "{field}: {stderr}");
            assert_valid("cloud-config", &out.stdout, field);
            assert!(
                stdout.contains(evidence),
                "{field}: {evidence:?} not in\n{stdout}"
            );
        }
        None => {
            assert_eq!(
                out.status.code(),
                Some(2),
                "{field} should be refused: {stdout}"
            );
            assert!(out.stdout.is_empty(), "{field}");
            // The field itself, or a section it is in refused whole (`ignition.proxy`,
            // `kernelArguments`; never just `storage`).
            let parts: Vec<&str> = field.split('.').collect();
            let last = parts[parts.len() - 1];
            let top = !matches!(parts[0], "ignition" | "storage" | "passwd" | "systemd");
            let named = stderr.contains(last)
                || (top && stderr.contains(parts[0]))
                || (2..parts.len()).any(|n| stderr.contains(&parts[..n].join(".")));
            assert!(named, "{field}: the refusal does not name it: {stderr}");
        }
    }
}

/// Every field of the Ignition 3.3 spec, converted to cloud-config: it carries over (the result
/// passes `cloud-init schema` and shows what it carried), or the refusal names it. Which of the
/// two is stated for each field, so a conversion that starts dropping one fails here.
#[test]
fn every_ignition_field_converts_to_cloud_config_or_is_named() {
    let mut checked = 0;
    for case in [
        ignition_config_cases(),
        ignition_disk_cases(),
        ignition_file_cases(),
        ignition_unit_and_user_cases(),
    ]
    .iter()
    .flatten()
    {
        check_to_cloud_config(case);
        checked += 1;
    }
    // Every field of the spec has its case (a table that lost some would check less).
    assert!(checked >= 40, "only {checked} fields checked");
}
