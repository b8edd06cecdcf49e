//! `encode` and `redact`: round trips on every fixture, deterministic output, the validators
//! accept what is written, and redacted Secrets keep every non-secret fact and no secret.

use crate::common::*;

use serde_json::Value;

fn stdout(args: &[&str], input: Option<Vec<u8>>) -> Vec<u8> {
    let mut c = cmd();
    c.args(args);
    if let Some(input) = input {
        c.write_stdin(input);
    }
    let out = c.output().expect("run");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

fn inspect(input: Vec<u8>) -> Value {
    serde_json::from_slice(&stdout(&["inspect", "-", "--output", "json"], Some(input)))
        .expect("json")
}

#[test]
fn encode_without_changes_gives_back_the_stored_value() {
    for entry in fixtures() {
        let file = testdata()
            .join("secrets")
            .join(entry["file"].as_str().expect("file"));
        let file = file.to_str().expect("path");
        let value = stdout(&["encode", file, "--emit", "value"], None);
        assert_eq!(sha256_hex(&value), entry["value_sha256"], "{file}");
        let b64 = stdout(&["encode", file, "--emit", "base64"], None);
        let b64 = String::from_utf8(b64).expect("text");
        if !entry["base64_bytes"].is_null() {
            assert_eq!(
                b64.trim_end().len() as u64,
                entry["base64_bytes"].as_u64().expect("n"),
                "{file}"
            );
        }
        // The Secret written back decodes to the same user data and keeps its metadata.
        let secret = stdout(&["encode", file], None);
        let text = String::from_utf8(secret.clone()).expect("yaml");
        assert!(
            text.contains("cluster.x-k8s.io/cluster-name"),
            "{file}: labels kept"
        );
        let decoded = stdout(&["decode", "-"], Some(secret));
        assert_eq!(sha256_hex(&decoded), entry["userdata_sha256"], "{file}");
    }
}

#[test]
fn gzip_on_and_off_round_trip_deterministically() {
    for entry in fixtures() {
        let file = testdata()
            .join("secrets")
            .join(entry["file"].as_str().expect("file"));
        let file = file.to_str().expect("path");
        for flag in ["--gzip", "--no-gzip"] {
            let a = stdout(&["encode", file, flag], None);
            let b = stdout(&["encode", file, flag], None);
            assert_eq!(a, b, "{file} {flag}: deterministic");
            let decoded = stdout(&["decode", "-"], Some(a.clone()));
            assert_eq!(
                sha256_hex(&decoded),
                entry["userdata_sha256"],
                "{file} {flag}"
            );
            let report = inspect(a);
            let s = &report["secrets"][0];
            assert_eq!(s["gzip"], flag == "--gzip", "{file} {flag}");
            assert_eq!(s["format"], entry["format"], "{file} {flag}");
            assert_eq!(s["rke2"]["server"], entry["server"], "{file} {flag}");
            assert_eq!(s["rke2"]["tls_san"], entry["tls_san"], "{file} {flag}");
        }
    }
    // JSON Secret output.
    let file = testdata().join("secrets/worker-ignition-online.yaml");
    let json = stdout(
        &[
            "encode",
            file.to_str().expect("path"),
            "--gzip",
            "--output",
            "json",
        ],
        None,
    );
    let doc: Value = serde_json::from_slice(&json).expect("json secret");
    assert_eq!(doc["kind"], "Secret");
    assert!(doc["metadata"]["ownerReferences"].is_array());
}

#[test]
fn what_encode_writes_passes_the_validators() {
    for name in [
        "worker-ignition-online.yaml",
        "init-ignition-gzip-airgapped.yaml",
        "init-ignition-extras.yaml",
        "worker-cloud-config-online.yaml",
        "init-cloud-config-gzip-online.yaml",
    ] {
        let file = testdata().join("secrets").join(name);
        let file = file.to_str().expect("path");
        for flag in ["--gzip", "--no-gzip"] {
            let what = format!("{name} {flag}");
            if name.contains("ignition") {
                // The stored value itself (the wrapper, or the config) is what Ignition reads.
                let value = stdout(&["encode", file, flag, "--emit", "value"], None);
                assert_valid("ignition", &value, &what);
            } else {
                let userdata = stdout(
                    &["decode", "-"],
                    Some(stdout(&["encode", file, flag], None)),
                );
                assert_valid("cloud-config", &userdata, &what);
            }
        }
    }
}

/// Every secret value a fixture holds.
fn secrets_of(entry: &Value, userdata: &str) -> Vec<String> {
    let mut out = vec![entry["token"].as_str().expect("token").to_owned()];
    for line in entry["config_yaml"].as_str().unwrap_or("").lines() {
        for key in ["etcd-s3-access-key: ", "etcd-s3-secret-key: "] {
            if let Some(v) = line.strip_prefix(key) {
                out.push(v.trim().to_owned());
            }
        }
    }
    for line in userdata.lines() {
        if let Some(p) = line.trim().strip_prefix("password: ") {
            out.push(p.to_owned());
        }
    }
    // Private key bodies: a full line of base64 inside a key block.
    let mut in_key = false;
    for line in userdata.lines() {
        let t = line.trim();
        if t.contains("PRIVATE KEY-----") {
            in_key = t.starts_with("-----BEGIN");
        } else if in_key && t.len() > 40 {
            out.push(t.to_owned());
        }
    }
    out
}

#[test]
fn redact_hides_every_secret_and_keeps_every_fact() {
    for entry in fixtures() {
        let name = entry["file"].as_str().expect("file");
        let file = testdata().join("secrets").join(name);
        let userdata = std::fs::read_to_string(
            testdata()
                .join("secrets")
                .join(entry["userdata_file"].as_str().expect("ud")),
        )
        .expect("userdata");
        let redacted = stdout(&["redact", file.to_str().expect("path")], None);
        let decoded = stdout(&["decode", "-"], Some(redacted.clone()));
        let decoded = String::from_utf8(decoded).expect("text");
        let inspected = inspect(redacted.clone());
        let all = format!(
            "{}{}{}",
            String::from_utf8_lossy(&redacted),
            decoded,
            stdout(
                &["inspect", "-", "--show-secrets", "--output", "json"],
                Some(redacted.clone())
            )
            .iter()
            .map(|&b| b as char)
            .collect::<String>()
        );
        for secret in secrets_of(&entry, &userdata) {
            assert!(
                !all.contains(&secret),
                "{name}: a secret survived redaction"
            );
        }
        let before = inspect(std::fs::read(&file).expect("read"));
        let (a, b) = (&before["secrets"][0], &inspected["secrets"][0]);
        for field in ["format", "gzip", "role", "name", "namespace"] {
            assert_eq!(a[field], b[field], "{name}: {field}");
        }
        for field in [
            "server",
            "tls_san",
            "version",
            "airgapped",
            "cni",
            "cluster_cidr",
            "provider_id",
        ] {
            assert_eq!(a["rke2"][field], b["rke2"][field], "{name}: rke2.{field}");
        }
        let paths = |s: &Value| -> Vec<Value> {
            s["files"]
                .as_array()
                .expect("files")
                .iter()
                .map(|f| f["path"].clone())
                .collect()
        };
        assert_eq!(paths(a), paths(b), "{name}: files");
        assert_eq!(
            a["certificates"], b["certificates"],
            "{name}: certificates unchanged"
        );
        assert_eq!(a["commands"], b["commands"], "{name}: commands");
        assert_eq!(
            b["rke2"]["token_sha256"].as_str(),
            Some(sha256_hex(b"REDACTED").as_str()),
            "{name}: the token is the visible placeholder"
        );
        if entry["role"] == "init" {
            let keys = b["keys"].as_array().expect("keys");
            assert!(
                !keys.is_empty() && keys.iter().all(|k| k["algorithm"] == "redacted"),
                "{name}"
            );
        }
    }
}

#[test]
fn redact_a_whole_list_including_ca_and_token_secrets() {
    let list = std::fs::read(testdata().join("secrets/list-all.yaml")).expect("list");
    let redacted = stdout(&["redact", "-"], Some(list.clone()));
    let text = String::from_utf8_lossy(&redacted);
    let original = String::from_utf8_lossy(&list);
    // The demo-ca Secret's tls.key and the demo-token value are gone; the certificate stays.
    let ca_key = original
        .lines()
        .find_map(|l| l.trim().strip_prefix("tls.key: "))
        .expect("a CA key in the list");
    assert!(!text.contains(ca_key));
    let ca_cert = original
        .lines()
        .find_map(|l| l.trim().strip_prefix("tls.crt: "))
        .expect("a CA cert in the list");
    assert!(text.contains(ca_cert));
    let token = fixtures()[0]["token"].as_str().expect("token").to_owned();
    let token_b64 = rke2_payload::to_base64(token.as_bytes());
    assert!(
        original.contains(&token_b64),
        "the demo-token Secret holds the token"
    );
    assert!(
        !text.contains(&token_b64),
        "the demo-token Secret is redacted"
    );
    let report = inspect(redacted);
    assert_eq!(
        report["secrets"].as_array().map(Vec::len),
        Some(bootstrap_in_list())
    );
    assert_eq!(report["skipped_secrets"], 3);
}

/// Files and commands that a conversion adds by design: the install script and its unit, the
/// chrony configuration, and enabling chronyd.
fn carried(report: &Value) -> (Vec<(Value, Value)>, Vec<Value>) {
    let s = &report["secrets"][0];
    let files = s["files"]
        .as_array()
        .expect("files")
        .iter()
        .filter(|f| f["path"] != "/etc/rke2-install.sh" && f["path"] != "/etc/chrony.conf")
        .map(|f| (f["path"].clone(), f["sha256"].clone()))
        .collect();
    let commands = s["commands"]
        .as_array()
        .expect("commands")
        .iter()
        .map(|c| c["line"].clone())
        .filter(|l| l != "systemctl enable --now chronyd.service")
        .collect();
    (files, commands)
}

#[test]
fn conversions_keep_the_facts_and_pass_the_validators() {
    let mut converted = 0;
    for entry in fixtures() {
        let name = entry["file"].as_str().expect("file");
        let file = testdata().join("secrets").join(name);
        let file = file.to_str().expect("path");
        let to = if entry["format"] == "ignition" {
            "cloud-config"
        } else {
            "ignition"
        };
        let out = cmd()
            .args(["encode", file, "--to", to])
            .output()
            .expect("run");
        let stderr = String::from_utf8_lossy(&out.stderr);
        if let Some((_, refused)) = stderr.split_once("cannot be carried over to Ignition: ") {
            // additionalUserData keys without an Ignition equivalent, or with a value Ignition
            // cannot say: named, not dropped; each named key is one the user data has.
            assert_eq!(out.status.code(), Some(2));
            assert!(out.stdout.is_empty(), "{name}");
            let userdata = std::fs::read_to_string(
                testdata()
                    .join("secrets")
                    .join(entry["userdata_file"].as_str().expect("userdata")),
            )
            .expect("userdata");
            for what in refused.trim().split("; ") {
                let keys: Vec<&str> = match what.strip_prefix("top-level keys ") {
                    Some(keys) => keys.split(", ").collect(),
                    // The whole document: not valid YAML, or not a cloud-config.
                    None if what.starts_with("all of it: ") => continue,
                    None => vec![what.split(['[', '.', ' ', ':']).next().unwrap_or(what)],
                };
                for key in keys {
                    assert!(
                        userdata.contains(&format!("\n{key}:")),
                        "{name}: {key} is not in the user data ({what})"
                    );
                }
            }
            continue;
        }
        assert_eq!(
            out.status.code(),
            Some(0),
            "{name}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let before = inspect(std::fs::read(file).expect("read"));
        let after = inspect(out.stdout.clone());
        let (a, b) = (&before["secrets"][0], &after["secrets"][0]);
        assert_eq!(b["format"], to, "{name}");
        assert_eq!(a["gzip"], b["gzip"], "{name}: compression kept");
        for field in ["server", "token_sha256", "tls_san", "version", "airgapped"] {
            assert_eq!(a["rke2"][field], b["rke2"][field], "{name}: rke2.{field}");
        }
        assert_eq!(a["role"], b["role"], "{name}");
        assert_eq!(
            carried(&before),
            carried(&after),
            "{name}: files and commands"
        );
        // Back again: the same facts once more.
        let back = stdout(
            &[
                "encode",
                "-",
                "--to",
                entry["format"].as_str().expect("format"),
            ],
            Some(out.stdout.clone()),
        );
        assert_eq!(
            carried(&before),
            carried(&inspect(back)),
            "{name}: round trip"
        );
        // The validators accept what was written.
        let written = if to == "ignition" {
            stdout(&["encode", "-", "--emit", "value"], Some(out.stdout))
        } else {
            stdout(&["decode", "-"], Some(out.stdout))
        };
        assert_valid(to, &written, name);
        converted += 1;
    }
    assert!(converted >= 29, "{converted}");
}

#[test]
fn users_and_groups_carry_over_to_ignition_and_what_cannot_is_named() {
    let cloud_config = "#cloud-config\nusers:\n  - name: ops\n    groups: wheel, docker, admins\n    shell: /bin/bash\n    sudo: ALL=(ALL) NOPASSWD:ALL\n    ssh_authorized_keys:\n      - ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGxyz ops@example\ngroups:\n  - admins\nruncmd: [echo hi]\n";
    // Members of a group: cloud-init makes the group first and skips users it creates later.
    let out = cmd()
        .args(["encode", "--to", "ignition", "--emit", "value"])
        .write_stdin(cloud_config.replace("  - admins\n", "  - admins: [ops]\n"))
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr)
            .contains("groups.admins: member ops is created by this config after the group")
    );
    let out = cmd()
        .args(["encode", "--to", "ignition", "--emit", "value"])
        .write_stdin(cloud_config)
        .output()
        .expect("run");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: Value = serde_json::from_slice(&out.stdout).expect("Ignition JSON");
    let ops = &doc["passwd"]["users"][0];
    assert_eq!(ops["name"], "ops");
    assert_eq!(
        ops["groups"],
        serde_json::json!(["wheel", "docker", "admins"])
    );
    assert_eq!(ops["shell"], "/bin/bash");
    assert_eq!(
        ops["sshAuthorizedKeys"][0],
        "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGxyz ops@example"
    );
    assert!(
        ops.get("passwordHash").is_none(),
        "no password given, none written"
    );
    assert_eq!(doc["passwd"]["groups"][0]["name"], "admins");
    let sudoers = doc["storage"]["files"]
        .as_array()
        .expect("files")
        .iter()
        .find(|f| f["path"] == "/etc/sudoers.d/90-cloud-init-users")
        .expect("a sudoers drop-in");
    assert_eq!(sudoers["mode"], 0o440);
    assert_valid("ignition", &out.stdout, "users converted");
    // And back: Ignition passwd becomes cloud-config users and groups, which convert to the
    // same passwd again.
    let back = cmd()
        .args(["encode", "--to", "cloud-config", "--emit", "value"])
        .write_stdin(out.stdout.clone())
        .output()
        .expect("run");
    assert!(
        back.status.success(),
        "{}",
        String::from_utf8_lossy(&back.stderr)
    );
    let text = String::from_utf8(back.stdout.clone()).expect("text");
    assert!(
        text.contains("users:\n  - name: ops\n") && text.contains("groups:\n  - admins\n"),
        "{text}"
    );
    assert_valid("cloud-config", &back.stdout, "users converted back");
    let again = cmd()
        .args(["encode", "--to", "ignition", "--emit", "value"])
        .write_stdin(back.stdout)
        .output()
        .expect("run");
    assert!(
        again.status.success(),
        "{}",
        String::from_utf8_lossy(&again.stderr)
    );
    let again: Value = serde_json::from_slice(&again.stdout).expect("json");
    assert_eq!(
        again["passwd"], doc["passwd"],
        "passwd survives the round trip"
    );
    // What Ignition cannot hold is named, and nothing is written.
    for (input, names) in [
        (
            "#cloud-config\nmounts: [[ephemeral0, /mnt, auto, defaults]]\n",
            "mounts[0]: device ephemeral0 (cloud-init finds it at boot",
        ),
        (
            "#cloud-config\ndisk_setup: {/dev/vdb: {layout: [50, 50], table_type: gpt}}\n",
            "disk_setup./dev/vdb.layout (partitions as percentages",
        ),
        (
            "#cloud-config\nfs_setup: [{device: /dev/vdb, partition: auto, filesystem: ext4}]\n",
            "fs_setup[0].partition auto",
        ),
    ] {
        let out = cmd()
            .args(["encode", "--to", "ignition", "--emit", "value"])
            .write_stdin(input)
            .output()
            .expect("run");
        assert_eq!(out.status.code(), Some(2), "{input}");
        assert!(out.stdout.is_empty());
        assert!(
            String::from_utf8_lossy(&out.stderr).contains(names),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

#[test]
fn ignition_sections_cloud_config_cannot_hold_are_named_not_dropped() {
    for (section, ignition) in [
        (
            "kernelArguments",
            r#"{"ignition":{"version":"3.3.0"},"kernelArguments":{"shouldExist":["quiet"]}}"#,
        ),
        (
            "storage.disks[/dev/vdb].partitions",
            r#"{"ignition":{"version":"3.3.0"},"storage":{"disks":[{"device":"/dev/vdb","partitions":[{"label":"a","sizeMiB":512},{"label":"b"}]}]}}"#,
        ),
        (
            "storage.raid",
            r#"{"ignition":{"version":"3.3.0"},"storage":{"raid":[{"name":"md0","level":"raid1","devices":["/dev/vdb","/dev/vdc"]}]}}"#,
        ),
        (
            "passwd.groups[admins].gid",
            r#"{"ignition":{"version":"3.3.0"},"passwd":{"groups":[{"name":"admins","gid":1500}]}}"#,
        ),
        (
            "ignition.timeouts",
            r#"{"ignition":{"version":"3.3.0","timeouts":{"httpTotal":30}}}"#,
        ),
    ] {
        let out = cmd()
            .args(["encode", "--to", "cloud-config", "--emit", "value"])
            .write_stdin(ignition)
            .output()
            .expect("run");
        assert_eq!(
            out.status.code(),
            Some(2),
            "{section}: {}",
            String::from_utf8_lossy(&out.stdout)
        );
        assert!(out.stdout.is_empty(), "{section}");
        assert!(
            String::from_utf8_lossy(&out.stderr).contains(section),
            "{section}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    // CAPRKE2's empty sections are nothing to carry.
    let out = cmd()
        .args(["encode", "--to", "cloud-config", "--emit", "value"])
        .arg(testdata().join("secrets/worker-ignition-online.yaml"))
        .output()
        .expect("run");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Normalised for comparison: files and units by name.
fn sorted_ignition(bytes: &[u8]) -> Value {
    let mut doc: Value = serde_json::from_slice(bytes).expect("json");
    for (section, list, key) in [("storage", "files", "path"), ("systemd", "units", "name")] {
        if let Some(items) = doc[section][list].as_array_mut() {
            items.sort_by(|a, b| a[key].as_str().cmp(&b[key].as_str()));
        }
    }
    doc
}

#[test]
fn storage_boot_commands_and_units_round_trip_through_both_validators() {
    let cloud_config = "#cloud-config\n\
device_aliases: {data: /dev/vdb}\n\
disk_setup:\n  data: {table_type: gpt, layout: [[100, 8300]], overwrite: false}\n\
fs_setup:\n  - {label: rancher, filesystem: ext4, device: /dev/vdb1, extra_opts: [-E, lazy_itable_init=0]}\n\
mounts:\n  - [LABEL=rancher, /var/lib/rancher, auto, 'defaults,noatime', '0', '2']\n\
ssh_authorized_keys: [ssh-ed25519 AAAAC3Nza ops@example]\n\
users:\n  - default\n  - name: ops\n    groups: [wheel]\n    sudo: ALL=(ALL) NOPASSWD:ALL\n\
bootcmd:\n  - [sysctl, -w, net.ipv4.ip_forward=1]\n  - echo booted > /run/booted\n\
write_files:\n  - path: /etc/systemd/system/hello.service\n    content: |\n      [Service]\n      ExecStart=/bin/echo hello\n\
runcmd:\n  - echo hi\n  - systemctl enable --now hello.service\n";
    assert_valid("cloud-config", cloud_config.as_bytes(), "input");
    let to_ignition = |text: &[u8]| {
        stdout(
            &["encode", "-", "--to", "ignition", "--emit", "value"],
            Some(text.to_vec()),
        )
    };
    let to_cloud_config = |text: &[u8]| {
        stdout(
            &["encode", "-", "--to", "cloud-config", "--emit", "value"],
            Some(text.to_vec()),
        )
    };
    let ignition = to_ignition(cloud_config.as_bytes());
    assert_valid("ignition", &ignition, "cloud-config → Ignition");
    let doc = sorted_ignition(&ignition);
    assert_eq!(
        doc["storage"]["disks"][0]["partitions"][0]["typeGuid"],
        "0FC63DAF-8483-4772-8E79-3D69D8477DE4"
    );
    assert_eq!(doc["storage"]["filesystems"][0]["label"], "rancher");
    // Mounted by its unit after Ignition, as cloud-init mounts after it writes files.
    assert!(doc["storage"]["filesystems"][0].get("path").is_none());
    assert_eq!(doc["passwd"]["users"][0]["name"], "core");
    let names: Vec<&str> = doc["systemd"]["units"]
        .as_array()
        .expect("units")
        .iter()
        .filter_map(|u| u["name"].as_str())
        .collect();
    assert_eq!(
        names,
        // `systemctl enable --now hello.service`, last, enables a unit whose file the config
        // writes, after `echo hi`: it stays in the script (a unit enabled at boot would start
        // beside the commands, not after them).
        [
            "rke2-bootcmd.service",
            "rke2-install.service",
            "var-lib-rancher.mount"
        ]
    );
    // The unit name is systemd's own escaping of the mount point.
    if let Ok(out) = std::process::Command::new("systemd-escape")
        .args(["--path", "--suffix=mount", "/var/lib/rancher"])
        .output()
    {
        assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), names[2]);
    }
    let back = to_cloud_config(&ignition);
    assert_valid("cloud-config", &back, "Ignition → cloud-config");
    let text = String::from_utf8_lossy(&back);
    for shown in [
        "layout: [[100, 8300]]",
        "label: rancher",
        "- [/dev/disk/by-label/rancher, /var/lib/rancher, auto, noatime, '0', '2']",
        "bootcmd:\n- 'sysctl -w net.ipv4.ip_forward=1'",
        "ssh-ed25519 AAAAC3Nza ops@example",
    ] {
        assert!(text.contains(shown), "{shown:?} not in\n{text}");
    }
    // The script the unit runs holds the line, after `echo hi`.
    let report: Value = serde_json::from_slice(&stdout(
        &["inspect", "-o", "json", "-"],
        Some(ignition.clone()),
    ))
    .expect("json");
    let lines: Vec<&str> = report["secrets"][0]["commands"]
        .as_array()
        .expect("commands")
        .iter()
        .filter_map(|c| c["line"].as_str())
        .collect();
    let at = |line: &str| lines.iter().position(|l| *l == line);
    assert!(
        at("echo hi").is_some() && at("echo hi") < at("systemctl enable --now hello.service"),
        "{lines:?}"
    );
    // Once converted, the two forms convert into each other unchanged.
    let again = to_ignition(&back);
    assert_eq!(sorted_ignition(&again), doc);
    assert_eq!(to_cloud_config(&again), back);
}

#[test]
fn what_ignition_would_not_do_as_cloud_init_does_is_refused_or_made_explicit() {
    let refused = |cloud_config: &str, named: &[&str]| {
        let out = cmd()
            .args(["encode", "-", "--to", "ignition", "--emit", "value"])
            .write_stdin(cloud_config.to_owned())
            .output()
            .expect("run");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{cloud_config}: {stderr}");
        assert!(out.stdout.is_empty());
        for name in named {
            assert!(stderr.contains(name), "{name} not in {stderr}");
        }
    };
    // A tmpfs is mounted over /run and /tmp after Ignition wrote there.
    refused(
        "#cloud-config\nwrite_files:\n- path: /run/app/env\n  content: x\n",
        &["write_files[/run/app/env]", "tmpfs"],
    );
    // Ignition 3.3 sets no setuid, setgid or sticky bit.
    refused(
        "#cloud-config\nwrite_files:\n- path: /usr/local/bin/t\n  permissions: '4755'\n  content: x\n",
        &["write_files[/usr/local/bin/t].permissions 4755"],
    );
    // Options systemd reads from /etc/fstab only.
    refused(
        "#cloud-config\nmounts:\n- [/dev/vdb1, /data, ext4, 'defaults,x-systemd.device-timeout=5s', '0', '2']\n",
        &["x-systemd.device-timeout=5s", "/etc/fstab"],
    );
    // cloud-init sets 0644 and root:root on a file it appends to; Ignition would keep them.
    let ignition = stdout(
        &["encode", "-", "--to", "ignition", "--emit", "value"],
        Some(b"#cloud-config\nwrite_files:\n- path: /etc/hosts\n  append: true\n  content: \"10.0.0.1 a\\n\"\n".to_vec()),
    );
    let doc: Value = serde_json::from_slice(&ignition).expect("json");
    let file = &doc["storage"]["files"][0];
    assert_eq!(file["mode"], 0o644, "{file}");
    assert_eq!(
        (
            file["user"]["name"].as_str(),
            file["group"]["name"].as_str()
        ),
        (Some("root"), Some("root"))
    );
    assert_valid("ignition", &ignition, "append");
    // A directory made in /run stays a command of the script.
    let ignition = stdout(
        &["encode", "-", "--to", "ignition", "--emit", "value"],
        Some(b"#cloud-config\nruncmd:\n- install -d -- /run/cluster-api\n- echo done\n".to_vec()),
    );
    let doc: Value = serde_json::from_slice(&ignition).expect("json");
    assert!(doc["storage"].get("directories").is_none(), "{doc}");
    // So does one with a sticky bit (Ignition 3.3 sets none).
    let ignition = stdout(
        &["encode", "-", "--to", "ignition", "--emit", "value"],
        Some(
            b"#cloud-config\nruncmd:\n- install -d -m 1777 -- /var/shared\n- echo done\n".to_vec(),
        ),
    );
    let doc: Value = serde_json::from_slice(&ignition).expect("json");
    assert!(doc["storage"].get("directories").is_none(), "{doc}");
}

#[test]
fn redact_masks_a_credential_inside_escaped_quotes() {
    use base64::Engine as _;
    let userdata = "#cloud-config\nruncmd:\n  - \"curl -H \\\"Authorization: Bearer Pw5BearerTok\\\" https://x\"\n  - \"export DB_PASSWORD=\\\"hunter2xyz\\\" && run\"\n  - reboot\n";
    let secret = |data: bool| {
        let value = if data {
            serde_json::json!({"data": {
                "format": base64::engine::general_purpose::STANDARD.encode("cloud-config"),
                "value": base64::engine::general_purpose::STANDARD.encode(userdata)}})
        } else {
            serde_json::json!({"stringData": {"format": "cloud-config", "value": userdata}})
        };
        let mut s =
            serde_json::json!({"kind": "Secret", "metadata": {"name": "w", "namespace": "capi"}});
        for (k, v) in value.as_object().expect("object") {
            s[k] = v.clone();
        }
        s.to_string()
    };
    let redacted = stdout(&["redact", "-"], Some(secret(true).into_bytes()));
    let back = stdout(&["decode", "-"], Some(redacted));
    let text = String::from_utf8_lossy(&back);
    assert!(
        !text.contains("Pw5BearerTok") && !text.contains("hunter2xyz"),
        "{text}"
    );
    // Every command is still there, its escapes whole.
    assert!(
        text.contains(r#"Authorization: Bearer REDACTED\" https://x""#)
            && text.contains(r#"DB_PASSWORD=\"REDACTED\" && run""#)
            && text.contains("- reboot\n"),
        "{text}"
    );
    // In stringData the value is text inside the Secret's own quoting: masked there too, on
    // the parsed value, and written back as a string of the same value otherwise.
    let redacted = stdout(&["redact", "-"], Some(secret(false).into_bytes()));
    let back = stdout(&["decode", "-"], Some(redacted));
    let text = String::from_utf8_lossy(&back);
    assert!(
        !text.contains("Pw5BearerTok") && !text.contains("hunter2xyz"),
        "{text}"
    );
    assert!(
        text.contains(r#"Authorization: Bearer REDACTED\" https://x""#)
            && text.contains(r#"DB_PASSWORD=\"REDACTED\" && run""#)
            && text.contains("- reboot\n"),
        "{text}"
    );
}

/// cloud-init's own example cloud-configs (Debian's `cloud-init` ships them), written elsewhere:
/// every one but the archives (parts redact does not read) is redacted, not refused, keeps its
/// comments, and a password repeated in a comment is masked there too.
#[test]
fn redact_handles_every_cloud_init_example() {
    let Some(_) = validator("cloud-init") else {
        return;
    };
    let dir = std::path::Path::new("/usr/share/doc/cloud-init/examples");
    let mut seen = 0;
    for entry in std::fs::read_dir(dir).expect("examples") {
        let path = entry.expect("entry").path();
        let name = path
            .file_name()
            .expect("name")
            .to_string_lossy()
            .into_owned();
        if !name.starts_with("cloud-config") {
            continue;
        }
        let bytes = std::fs::read(&path).expect("read");
        let text = if name.ends_with(".gz") {
            let mut out = Vec::new();
            std::io::Read::read_to_end(&mut flate2::read::GzDecoder::new(&bytes[..]), &mut out)
                .expect("gunzip");
            out
        } else {
            bytes
        };
        let out = cmd()
            .args(["redact", "-"])
            .write_stdin(text.clone())
            .output()
            .expect("run");
        // An archive holds parts redact does not read: refused, nothing written.
        if text.starts_with(b"#cloud-config-archive") {
            assert_eq!(out.status.code(), Some(2), "{name}");
            assert!(out.stdout.is_empty(), "{name}");
            continue;
        }
        assert!(
            out.status.success(),
            "{name}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let (before, after) = (
            String::from_utf8_lossy(&text),
            String::from_utf8_lossy(&out.stdout),
        );
        let comments = |t: &str| {
            t.lines()
                .filter(|l| l.trim_start().starts_with('#'))
                .count()
        };
        assert_eq!(comments(&before), comments(&after), "{name}: comments lost");
        if name == "cloud-config.txt.gz" {
            assert!(!after.contains("passw0rd") && after.contains("# password: REDACTED"));
        }
        seen += 1;
    }
    assert!(seen >= 20, "{seen} examples");
}

/// Every field the conversion cannot carry over is named in one message, users' fields too.
#[test]
fn encode_names_every_refused_field_at_once() {
    let userdata = "#cloud-config\nusers:\n- name: ops\n  uid: abc\n  shell: 5\n  homedir_mode: x\nruncmd: [echo hi]\nwrite_files:\n- path: /run/x\n  content: hi\n";
    let out = cmd()
        .args(["encode", "-", "--to", "ignition"])
        .write_stdin(userdata)
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
    let stderr = String::from_utf8_lossy(&out.stderr);
    for field in [
        "users[ops].uid",
        "users[ops].shell",
        "users[ops].homedir_mode",
        "write_files[/run/x]",
    ] {
        assert!(stderr.contains(field), "{field} not named: {stderr}");
    }
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
}
