//! What the tool writes stays private, input text cannot drive a terminal, and no flag or input
//! size makes it crash or run away.

use std::os::unix::fs::PermissionsExt;
use std::time::{Duration, Instant};

use crate::common::*;

fn mode(path: &std::path::Path) -> u32 {
    std::fs::metadata(path)
        .expect("written")
        .permissions()
        .mode()
        & 0o777
}

fn init() -> String {
    testdata()
        .join("secrets/init-cloud-config-online.yaml")
        .display()
        .to_string()
}

#[test]
fn every_written_file_is_0600_whatever_the_umask_and_with_force() {
    let folder = scratch();
    let dir = folder.path();
    let init = init();
    let runs: [(&str, &[&str]); 3] = [
        ("decode.txt", &["decode", init.as_str(), "--to-file"]),
        (
            "encode.yaml",
            &["encode", init.as_str(), "--gzip", "--to-file"],
        ),
        ("redact.yaml", &["redact", init.as_str(), "--to-file"]),
    ];
    for (name, args) in runs {
        let out = dir.join(name);
        // A permissive umask: the file is 0600 all the same.
        let status = std::process::Command::new("sh")
            .arg("-c")
            .arg(format!(
                "umask 000; exec \"$0\" \"$@\" {}",
                shell_quote(&out.display().to_string())
            ))
            .arg(assert_cmd::cargo::cargo_bin("rke2-payload"))
            .args(args)
            .status()
            .expect("run");
        assert!(status.success(), "{name}");
        assert_eq!(mode(&out), 0o600, "{name}");
        // Replacing a wider file with --force leaves 0600.
        std::fs::set_permissions(&out, std::fs::Permissions::from_mode(0o644)).expect("chmod");
        cmd().args(args).arg(&out).arg("--force").assert().success();
        assert_eq!(mode(&out), 0o600, "{name} --force");
    }
}

fn shell_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''"))
}

#[test]
fn only_regular_files_are_replaced_and_dash_is_standard_output() {
    let folder = scratch();
    let dir = folder.path();
    let init = init();
    let fifo = dir.join("fifo");
    assert!(
        std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .expect("mkfifo")
            .success()
    );
    let subdir = dir.join("sub");
    std::fs::create_dir(&subdir).expect("dir");
    for target in [&fifo, &subdir] {
        let out = cmd()
            .args(["decode", &init, "--to-file"])
            .arg(target)
            .arg("--force")
            .timeout(Duration::from_secs(20))
            .output()
            .expect("run");
        assert_eq!(out.status.code(), Some(2), "{}", target.display());
        assert!(String::from_utf8_lossy(&out.stderr).contains("is not a regular file"));
    }
    assert!(
        std::fs::symlink_metadata(&fifo)
            .expect("still there")
            .file_type()
            .is_fifo_like()
    );
    // `--to-file -` is standard output, not a file named `-`.
    let here = dir.join("cwd");
    std::fs::create_dir(&here).expect("dir");
    let out = cmd()
        .current_dir(&here)
        .args(["decode", &init, "--to-file", "-"])
        .output()
        .expect("run");
    assert!(out.status.success());
    assert!(out.stdout.starts_with(b"## template: jinja\n#cloud-config"));
    assert!(!here.join("-").exists());
    // `-o` is a format, never a file name: an unknown one is a usage error.
    for args in [["--output", "json"], ["-o", "userdata.txt"]] {
        let out = cmd()
            .current_dir(&here)
            .args(["decode", &init])
            .args(args)
            .output()
            .expect("run");
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(out.stdout.is_empty());
        assert!(!here.join(args[1]).exists());
    }
}

trait FifoLike {
    fn is_fifo_like(&self) -> bool;
}

impl FifoLike for std::fs::FileType {
    fn is_fifo_like(&self) -> bool {
        use std::os::unix::fs::FileTypeExt;
        self.is_fifo()
    }
}

/// A Secret whose name, cluster, file path, owner and command carry terminal controls.
fn hostile_secret() -> String {
    let userdata = "#cloud-config\nwrite_files:\n- path: \"/etc/\\e[2Jevil\\u202Ename\"\n  owner: \"ro\\rot\"\n  content: x\nruncmd:\n- \"echo \\e]0;title\\a \\e[1A\\e[2K done\"\n";
    let name = "w\\e[31mred\\u202E";
    format!(
        "{{\"kind\":\"Secret\",\"metadata\":{{\"name\":\"{name}\",\"namespace\":\"ns\\u0007\",\"labels\":{{\"cluster.x-k8s.io/cluster-name\":\"c\\u009b2J\"}}}},\"stringData\":{{\"format\":\"cloud-config\",\"value\":{}}}}}",
        serde_json::to_string(userdata).expect("JSON")
    )
    .replace("\\e", "\\u001b")
}

fn clean(bytes: &[u8]) -> bool {
    let text = String::from_utf8_lossy(bytes);
    !text.chars().any(|c| {
        (c.is_control() && c != '\n')
            || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
    })
}

#[test]
fn no_control_or_bidi_character_from_the_input_reaches_the_terminal() {
    let folder = scratch();
    let dir = folder.path();
    let file = dir.join("hostile.json");
    std::fs::write(&file, hostile_secret()).expect("write");
    let file = file.display().to_string();
    for args in [
        &["inspect", file.as_str()][..],
        &["inspect", "--verbose", file.as_str()],
        &["inspect", "--output", "json", file.as_str()],
        &["size", file.as_str()],
        &["size", "--output", "json", file.as_str()],
        &["size", "--output", "junit", file.as_str()],
        &["lint", file.as_str()],
        &["lint", "--output", "json", file.as_str()],
        &["lint", "--output", "sarif", file.as_str()],
        &["lint", "--output", "github", file.as_str()],
        &["lint", "--output", "gitlab", file.as_str()],
        &["lint", "--output", "junit", file.as_str()],
        &["decode", file.as_str(), "--name", "nope\u{1b}[2J"],
        &["inspect", file.as_str(), "--name", "missing"],
    ] {
        let out = cmd().env("NO_COLOR", "1").args(args).output().expect("run");
        assert!(matches!(out.status.code(), Some(0..=2)), "{args:?}");
        assert!(
            clean(&out.stdout),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stdout)
        );
        assert!(
            clean(&out.stderr),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    // The escapes are visible, and JSON still means the same strings.
    let out = cmd().args(["inspect", &file]).output().expect("run");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("\\x1b[2Jevil\\u{202e}name"), "{text}");
    let out = cmd()
        .args(["inspect", "--output", "json", &file])
        .output()
        .expect("run");
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(doc["secrets"][0]["name"], "w\u{1b}[31mred\u{202e}");
}

#[test]
fn jobs_past_the_cap_is_a_usage_error_not_a_panic() {
    let list = testdata().join("secrets/list-all.json");
    for jobs in ["100000", "4000000000", "99999999999999999999999"] {
        let out = cmd()
            .args(["inspect", "--jobs", jobs])
            .arg(&list)
            .output()
            .expect("run");
        assert_eq!(out.status.code(), Some(2), "--jobs {jobs}");
        assert!(
            String::from_utf8_lossy(&out.stderr).contains("at most 256"),
            "--jobs {jobs}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    cmd()
        .args(["inspect", "--jobs", "256"])
        .arg(&list)
        .assert()
        .success();
}

#[test]
fn a_huge_object_on_standard_input_fails_fast_without_reading_it_all() {
    // 64 MiB of base64 on one line: refused at the 8 MiB cap on one object.
    let mut input = b"apiVersion: v1\nkind: Secret\nmetadata:\n  name: big\ndata:\n  format: Y2xvdWQtY29uZmln\n  value: ".to_vec();
    input.extend(std::iter::repeat_n(b'A', 64 << 20));
    input.push(b'\n');
    for sub in ["inspect", "size", "lint"] {
        let start = Instant::now();
        let out = cmd()
            .args([sub, "-"])
            .write_stdin(input.clone())
            .timeout(Duration::from_secs(60))
            .output()
            .expect("run");
        assert_eq!(out.status.code(), Some(2), "{sub}");
        assert!(out.stdout.is_empty() || sub == "inspect", "{sub}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains("is larger than 8388608 bytes"),
            "{sub}: {stderr}"
        );
        assert!(start.elapsed() < Duration::from_secs(20), "{sub}: too slow");
    }
}

/// Standard base64 decoding, written here so the check does not lean on the code under test.
fn unbase64(text: &str) -> Option<Vec<u8>> {
    let value = |c: u8| match c {
        b'A'..=b'Z' => Some(c - b'A'),
        b'a'..=b'z' => Some(c - b'a' + 26),
        b'0'..=b'9' => Some(c - b'0' + 52),
        b'+' => Some(62),
        b'/' => Some(63),
        _ => None,
    };
    let bytes: Vec<u8> = text.bytes().filter(|b| !b.is_ascii_whitespace()).collect();
    if bytes.is_empty() || !bytes.len().is_multiple_of(4) {
        return None;
    }
    let mut out = Vec::new();
    for group in bytes.chunks(4) {
        let pad = group.iter().rev().take_while(|&&b| b == b'=').count();
        let mut n = 0u32;
        for &c in &group[..4 - pad] {
            n = n << 6 | u32::from(value(c)?);
        }
        n <<= 6 * pad as u32;
        out.extend_from_slice(&n.to_be_bytes()[1..4 - pad]);
    }
    Some(out)
}

/// Every text a document holds: its strings, and what each string that is base64 decodes to.
fn texts(value: &serde_json::Value, out: &mut Vec<String>) {
    match value {
        serde_json::Value::String(s) => {
            out.push(s.clone());
            if let Some(bytes) = unbase64(s) {
                out.push(String::from_utf8_lossy(&bytes).into_owned());
            }
            // An annotation holding a whole object.
            if let Ok(inner) = serde_json::from_str::<serde_json::Value>(s)
                && inner.is_object()
            {
                texts(&inner, out);
            }
        }
        serde_json::Value::Array(items) => items.iter().for_each(|v| texts(v, out)),
        serde_json::Value::Object(map) => map.values().for_each(|v| texts(v, out)),
        _ => {}
    }
}

const PLANTED: &[&str] = &[
    "dXNlcjpodW50ZXIy",
    "hunter2",
    "AKIAsupersecretvalue",
    "pl4inpassw0rd",
    "MIIEsecretkeybody",
    "s3cr3tpassw0rd",
];

/// A List: a bootstrap Secret and the other Secrets of a namespace, each with its own copy in
/// the `last-applied-configuration` annotation.
fn dump_with_other_secrets() -> serde_json::Value {
    let list: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(testdata().join("secrets/list-all.json")).expect("list"),
    )
    .expect("JSON");
    let bootstrap = list["items"][1].clone();
    let mut items = vec![
        serde_json::json!({"apiVersion": "v1", "kind": "Secret", "type": "kubernetes.io/dockerconfigjson",
            "metadata": {"name": "regcred", "namespace": "d"},
            "data": {".dockerconfigjson": b64(r#"{"auths":{"r.io":{"auth":"dXNlcjpodW50ZXIy"}}}"#)}}),
        serde_json::json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "cloud", "namespace": "d"},
            "data": {"credentials": b64("aws_secret_access_key=AKIAsupersecretvalue"), "clouds.yaml": b64("password: hunter2")}}),
        serde_json::json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "sd", "namespace": "d"},
            "stringData": {"password": "pl4inpassw0rd", "apikey": "k"}}),
        serde_json::json!({"apiVersion": "v1", "kind": "Secret", "type": "kubernetes.io/tls", "metadata": {"name": "tls", "namespace": "d"},
            "data": {"tls.crt": b64("-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"),
                     "tls.key": b64("-----BEGIN PRIVATE KEY-----\nMIIEsecretkeybody\n-----END PRIVATE KEY-----\n")}}),
        bootstrap,
    ];
    for item in &mut items {
        let copy = item.to_string();
        item["metadata"]["annotations"] =
            serde_json::json!({"kubectl.kubernetes.io/last-applied-configuration": copy});
    }
    serde_json::json!({"apiVersion": "v1", "kind": "List", "items": items})
}

#[test]
fn redact_replaces_every_value_of_the_other_secrets_and_their_applied_copies() {
    let folder = scratch();
    let dir = folder.path();
    let dump = dump_with_other_secrets();
    let json = dir.join("dump.json");
    std::fs::write(&json, serde_json::to_vec_pretty(&dump).expect("JSON")).expect("write");
    let out = cmd().arg("redact").arg(&json).output().expect("run");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let redacted: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    let mut all = Vec::new();
    texts(&redacted, &mut all);
    for planted in PLANTED {
        assert!(
            !all.iter().any(|t| t.contains(planted)),
            "{planted} survived"
        );
    }
    // Public certificates stay, and the bootstrap Secret still inspects.
    assert_eq!(
        redacted["items"][3]["data"]["tls.crt"],
        dump["items"][3]["data"]["tls.crt"]
    );
    cmd()
        .arg("inspect")
        .write_stdin(out.stdout)
        .assert()
        .success();
}

#[test]
fn redact_refuses_what_it_cannot_read_and_follows_every_layer_it_can() {
    let token = "K10abcdef0123456789::server:s3cr3tpassw0rd";
    let config = format!("token: {token}\n");
    let cloud_config = |body: &str| format!("#cloud-config\n{body}");
    let run = |format: &str, userdata: &str| {
        let secret = serde_json::json!({"apiVersion": "v1", "kind": "Secret",
            "metadata": {"name": "w", "namespace": "d"},
            "data": {"format": b64(format), "value": b64(userdata)}});
        cmd()
            .arg("redact")
            .write_stdin(secret.to_string())
            .output()
            .expect("run")
    };
    // What does not read as its format is refused: nothing written, the value never quoted.
    let refused = [
        (
            "config.yaml that is not YAML",
            "cloud-config",
            cloud_config(&format!(
                "write_files:\n- path: /etc/rancher/rke2/config.yaml\n  content: |\n    {config}  bad: [unclosed\n"
            )),
        ),
        (
            "Ignition type error",
            "ignition",
            format!(
                r#"{{"ignition":{{"version":"3.3.0"}},"storage":{{"files":[{{"path":"/etc/rancher/rke2/config.yaml","mode":"0644","contents":{{"source":"data:,token%3A%20{token}"}}}}]}}}}"#
            ),
        ),
        (
            "a MIME multi-part",
            "cloud-config",
            format!("Content-Type: multipart/mixed; boundary=b\n\n--b\n\ntoken: {token}\n--b--\n"),
        ),
    ];
    for (what, format, userdata) in refused {
        let out = run(format, &userdata);
        assert_eq!(out.status.code(), Some(2), "{what}");
        assert!(out.stdout.is_empty(), "{what}: wrote something");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains("refusing"), "{what}: {stderr}");
        assert!(!stderr.contains("s3cr3t"), "{what}: {stderr}");
    }
    // Every layer that reads is followed: a key given twice (both masked), a nested merged
    // config, a script.
    let handled = [
        (
            "repeated key in an item",
            "cloud-config",
            cloud_config(&format!(
                "write_files:\n- path: /etc/rancher/rke2/config.yaml\n  content: |\n    {config}  content: other\n"
            )),
        ),
        (
            "nested config.merge",
            "ignition",
            format!(
                r#"{{"ignition":{{"version":"3.3.0","config":{{"merge":[{{"source":"data:;base64,{}"}}]}}}}}}"#,
                b64(format!(
                    r#"{{"ignition":{{"version":"3.3.0"}},"storage":{{"files":[{{"path":"/x","contents":{{"source":"data:,{token}"}}}}]}}}}"#
                ))
            ),
        ),
        (
            "a script part",
            "cloud-config",
            format!("#!/bin/sh\necho {token} > /etc/rancher/rke2/token\n"),
        ),
    ];
    for (what, format, userdata) in handled {
        let out = run(format, &userdata);
        assert!(
            out.status.success(),
            "{what}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let decoded = cmd()
            .args(["decode", "-"])
            .write_stdin(out.stdout)
            .output()
            .expect("decode");
        let text = String::from_utf8_lossy(&decoded.stdout);
        assert!(!text.contains("s3cr3t"), "{what}: {text}");
        assert!(
            text.contains("REDACTED") || what == "nested config.merge",
            "{what}: {text}"
        );
        if what == "nested config.merge" {
            let merged = text
                .split("base64,")
                .nth(1)
                .and_then(|b| b.split('"').next())
                .expect("a data URL");
            let inner = String::from_utf8(
                base64::Engine::decode(&base64::engine::general_purpose::STANDARD, merged)
                    .expect("base64"),
            )
            .expect("text");
            assert!(
                !inner.contains("s3cr3t") && inner.contains("data:,REDACTED"),
                "{inner}"
            );
        }
    }
}

/// A first control plane's payload with a credential in every place the detector knows:
/// kubelet and apiserver arguments, a K10 token, URL user-info, a drop-in, a token file, an
/// environment file, a unit's `Environment=`, Docker auth, registry tokens, a short password,
/// cloud-init user passwords, an `Authorization` header and an assignment in commands.
fn leaky_payload() -> (String, Vec<&'static str>) {
    let planted = vec![
        "kubeletTok3n",
        "oidcS3cret",
        "k10passw0rd",
        "pgPassw0rd",
        "sessionTok3n",
        "s3pr0xypw",
        "dropinTok3n",
        "tokenFileC0ntent",
        "envFilePassw0rd",
        "pr0xyPass",
        "unitEnvS3cret",
        "ZG9ja2VyOmRvY2tlcnB3",
        "identityTok3n",
        "regTok3nValue",
        "plainPassw0rd",
        "$6$rounds$hashedvalue",
        "eyJbearerTok",
        "envTok3nValue",
    ];
    let k10 = format!("K10{}::server:k10passw0rd", "a".repeat(64));
    let config = format!(
        "server: https://cp.example:9345\ntoken: {k10}\ntoken-file: /etc/rancher/rke2/tokenfile\nkubelet-arg:\n- --token=kubeletTok3n\n- provider-id=aws:///x\nkube-apiserver-arg:\n- oidc-client-secret=oidcS3cret\ndatastore-endpoint: postgres://rke2:pgPassw0rd@db:5432/rke2\netcd-s3-session-token: sessionTok3n\netcd-s3-proxy: http://u:s3pr0xypw@proxy:3128\n"
    );
    let files = [
        ("/etc/rancher/rke2/config.yaml", config),
        ("/etc/rancher/rke2/config.yaml.d/10-extra.yaml", "token: dropinTok3n\n".to_owned()),
        ("/etc/rancher/rke2/tokenfile", "tokenFileC0ntent\n".to_owned()),
        (
            "/etc/default/rke2-agent",
            "RKE2_PASSWORD=envFilePassw0rd\nHTTP_PROXY=http://user:pr0xyPass@proxy:3128\n".to_owned(),
        ),
        (
            "/etc/systemd/system/x.service",
            "[Service]\nEnvironment=APP_SECRET=unitEnvS3cret\nExecStart=/bin/true\n".to_owned(),
        ),
        (
            "/root/.docker/config.json",
            r#"{"auths":{"r.io":{"auth":"ZG9ja2VyOmRvY2tlcnB3"}}}"#.to_owned(),
        ),
        (
            "/etc/rancher/rke2/registries.yaml",
            "configs:\n  r.io:\n    auth:\n      identity_token: identityTok3n\n      token: regTok3nValue\n      password: ab\n".to_owned(),
        ),
    ];
    let mut userdata = String::from("#cloud-config\nwrite_files:\n");
    for (path, content) in files {
        userdata.push_str(&format!("- path: {path}\n  content: |\n"));
        for line in content.lines() {
            userdata.push_str(&format!("    {line}\n"));
        }
    }
    userdata.push_str("users:\n- name: ops\n  plain_text_passwd: plainPassw0rd\n  hashed_passwd: $6$rounds$hashedvalue\nruncmd:\n- curl -H 'Authorization: Bearer eyJbearerTok' https://api.example/x\n- RKE2_TOKEN=envTok3nValue sh /opt/install.sh\n- curl -sfL https://get.rke2.io | INSTALL_RKE2_VERSION=v1.31.4+rke2r1 sh -s - server\n");
    let secret = serde_json::json!({"apiVersion": "v1", "kind": "Secret", "type": "cluster.x-k8s.io/secret",
        "metadata": {"name": "leaky", "namespace": "d"},
        "data": {"format": b64("cloud-config"), "value": b64(&userdata)}});
    (secret.to_string(), planted)
}

fn leaks(output: &[u8], planted: &[&str]) -> Vec<String> {
    let text = String::from_utf8_lossy(output);
    let mut all = vec![text.to_string()];
    if let Ok(doc) = serde_json::from_slice::<serde_json::Value>(output) {
        texts(&doc, &mut all);
    }
    planted
        .iter()
        .filter(|p| all.iter().any(|t| t.contains(*p)))
        .map(|p| (*p).to_owned())
        .collect()
}

#[test]
fn no_default_output_shows_a_credential_and_redact_removes_every_one() {
    let (secret, planted) = leaky_payload();
    for args in [
        &["inspect"][..],
        &["inspect", "--verbose"],
        &["inspect", "--output", "json"],
        &["size"],
        &["lint", "--cloud-init-schema", "none"],
        &["lint", "--output", "json", "--cloud-init-schema", "none"],
        &[
            "lint",
            "--output",
            "sarif",
            "--cloud-init-schema",
            "none",
            "--stdin-filename",
            "secret.yaml",
        ],
        &["lint", "--output", "github", "--cloud-init-schema", "none"],
        &["lint", "--output", "gitlab", "--cloud-init-schema", "none"],
        &["lint", "--output", "junit", "--cloud-init-schema", "none"],
    ] {
        let out = cmd()
            .args(args)
            .write_stdin(secret.clone())
            .output()
            .expect("run");
        assert!(matches!(out.status.code(), Some(0 | 1)), "{args:?}");
        assert_eq!(
            leaks(&out.stdout, &planted),
            Vec::<String>::new(),
            "{args:?}"
        );
        assert_eq!(
            leaks(&out.stderr, &planted),
            Vec::<String>::new(),
            "{args:?}"
        );
    }
    let out = cmd()
        .arg("redact")
        .write_stdin(secret)
        .output()
        .expect("run");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(leaks(&out.stdout, &planted), Vec::<String>::new());
    // What is left still reads as the same node.
    let out = cmd()
        .args(["inspect", "--output", "json"])
        .write_stdin(out.stdout)
        .output()
        .expect("run");
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(
        doc["secrets"][0]["rke2"]["server"],
        "https://cp.example:9345"
    );
}
