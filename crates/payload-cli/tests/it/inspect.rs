//! `rke2-payload inspect --output json` against the facts the fixture generator recorded.

use crate::common::*;

use serde_json::Value;

fn sha256(text: &str) -> String {
    crate::common::sha256_hex(text.as_bytes())
}

fn inspect_json(file: &str, extra: &[&str]) -> (Value, String) {
    let out = cmd()
        .arg("inspect")
        .arg(testdata().join("secrets").join(file))
        .args(["--output", "json"])
        .args(extra)
        .output()
        .expect("run");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{file}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).expect("utf8");
    (serde_json::from_str(&text).expect("json"), text)
}

/// Every secret value a fixture holds, as the generator recorded it.
fn secrets_of(entry: &Value) -> Vec<String> {
    let mut out = vec![entry["token"].as_str().expect("token").to_owned()];
    let config = entry["config_yaml"].as_str().unwrap_or("");
    for line in config.lines() {
        for key in [
            "etcd-s3-access-key: ",
            "etcd-s3-secret-key: ",
            "agent-token: ",
        ] {
            if let Some(v) = line.strip_prefix(key) {
                out.push(v.trim().to_owned());
            }
        }
    }
    out
}

#[test]
fn json_fields_match_the_generator_for_every_fixture() {
    for entry in fixtures() {
        let file = entry["file"].as_str().expect("file");
        let (doc, text) = inspect_json(file, &[]);
        assert_eq!(doc["schema"], "rke2-payload/inspect/v1");
        let secrets = doc["secrets"].as_array().expect("secrets");
        assert_eq!(secrets.len(), 1, "{file}");
        let s = &secrets[0];
        assert_eq!(s["name"], entry["name"], "{file}");
        assert_eq!(s["namespace"], entry["namespace"], "{file}");
        assert_eq!(s["format"], entry["format"], "{file}");
        assert_eq!(s["gzip"], entry["gzip"], "{file}");
        assert_eq!(s["role"], entry["role"], "{file}: role");
        let r = &s["rke2"];
        assert_eq!(r["server"], entry["server"], "{file}: server");
        assert_eq!(
            r["token_sha256"].as_str(),
            Some(sha256(entry["token"].as_str().expect("token")).as_str()),
            "{file}: token"
        );
        assert_eq!(r["tls_san"], entry["tls_san"], "{file}: tls-san");
        assert_eq!(r["version"], entry["version"], "{file}: version");
        assert_eq!(r["airgapped"], entry["airgapped"], "{file}: airgapped");
        assert_eq!(s["size"]["value_bytes"], entry["value_bytes"], "{file}");
        assert_eq!(
            s["size"]["userdata_bytes"], entry["userdata_bytes"],
            "{file}"
        );
        if !entry["base64_bytes"].is_null() {
            assert_eq!(s["size"]["base64_bytes"], entry["base64_bytes"], "{file}");
        }

        // Files: the same paths in the same order, with mode, owner, size and digest.
        let files = s["files"].as_array().expect("files");
        let expected: Vec<&Value> = entry["files"].as_array().expect("files").iter().collect();
        let paths: Vec<&str> = files.iter().filter_map(|f| f["path"].as_str()).collect();
        let want: Vec<&str> = expected.iter().filter_map(|f| f["path"].as_str()).collect();
        assert_eq!(paths, want, "{file}: file list");
        for (got, want) in files.iter().zip(&expected) {
            let path = want["path"].as_str().unwrap_or("?");
            assert_eq!(got["mode"], want["mode"], "{file}: {path} mode");
            assert_eq!(got["owner"], want["owner"], "{file}: {path} owner");
            assert_eq!(got["size"], want["size"], "{file}: {path} size");
            assert_eq!(got["sha256"], want["sha256"], "{file}: {path} sha256");
        }

        // Certificates.
        let certs = s["certificates"].as_array().expect("certificates");
        let want = entry["certificates"].as_array().expect("certificates");
        assert_eq!(certs.len(), want.len(), "{file}: certificates");
        for (got, want) in certs.iter().zip(want) {
            assert_eq!(got["path"], want["path"], "{file}");
            assert_eq!(got["subject"], want["subject"], "{file}");
            assert_eq!(got["sha256"], want["sha256"], "{file}");
            assert_eq!(got["not_after"], want["not_after"], "{file}");
            assert_eq!(got["is_ca"], want["is_ca"], "{file}");
        }
        if entry["role"] == "init" {
            assert_eq!(
                s["keys"].as_array().map(Vec::len),
                Some(certs.len()),
                "{file}"
            );
            assert!(
                s["keys"]
                    .as_array()
                    .expect("keys")
                    .iter()
                    .all(|k| !k["matches_certificate"].is_null()),
                "{file}: every CA key matches its certificate"
            );
        }

        // Commands, in order.
        let commands: Vec<&str> = s["commands"]
            .as_array()
            .expect("commands")
            .iter()
            .filter_map(|c| c["line"].as_str())
            .collect();
        let want: Vec<&str> = entry["commands"]
            .as_array()
            .expect("commands")
            .iter()
            .filter_map(Value::as_str)
            .collect();
        assert_eq!(commands, want, "{file}: commands");

        // The checksum fixture is not valid YAML: a finding with a line, and still all facts.
        let invalid = s["findings"]
            .as_array()
            .expect("findings")
            .iter()
            .any(|f| f["id"] == "cloud-config-invalid-yaml" && f["line"].is_u64());
        assert_eq!(
            invalid,
            entry["yaml_valid"] == false,
            "{file}: yaml finding"
        );

        // No secret in default output.
        for secret in secrets_of(&entry) {
            assert!(!text.contains(&secret), "{file}: a secret leaked into JSON");
        }
        assert!(!text.contains("-----BEGIN"), "{file}: PEM in output");
        let userdata = std::fs::read_to_string(
            testdata()
                .join("secrets")
                .join(entry["userdata_file"].as_str().expect("userdata")),
        )
        .unwrap_or_default();
        for body_line in userdata.lines().map(str::trim).filter(|l| l.len() == 64) {
            assert!(!text.contains(body_line), "{file}: PEM body in output");
        }
    }
}

#[test]
fn show_secrets_opts_in() {
    let entry = fixtures()
        .into_iter()
        .find(|e| e["file"] == "join-cloud-config-online.yaml")
        .expect("fixture");
    let (doc, _) = inspect_json("join-cloud-config-online.yaml", &["--show-secrets"]);
    assert_eq!(doc["secrets"][0]["rke2"]["token"], entry["token"]);
    let (doc, _) = inspect_json("join-cloud-config-online.yaml", &[]);
    assert!(doc["secrets"][0]["rke2"].get("token").is_none());
}

#[test]
fn no_secret_in_text_output_or_registry_passwords_anywhere() {
    for entry in fixtures() {
        let file = entry["file"].as_str().expect("file");
        let out = cmd()
            .arg("inspect")
            .arg("-v")
            .arg(testdata().join("secrets").join(file))
            .output()
            .expect("run");
        assert!(out.status.success(), "{file}");
        let text = String::from_utf8_lossy(&out.stdout);
        for secret in secrets_of(&entry) {
            assert!(!text.contains(&secret), "{file}: secret in text output");
        }
        assert!(text.contains("sha256:"), "{file}: token fingerprint shown");
    }
    // The extras fixture's registries.yaml carries a password; it must never show.
    let reg = std::fs::read_to_string(testdata().join("secrets/init-cloud-config-extras.userdata"))
        .expect("userdata");
    let password = reg
        .lines()
        .find_map(|l| l.trim().strip_prefix("password: "))
        .expect("a registry password in the fixture");
    let (_, json) = inspect_json("init-cloud-config-extras.yaml", &[]);
    assert!(!json.contains(password));
}

#[test]
fn a_whole_list_is_inspected() {
    let (doc, _) = inspect_json("list-all.yaml", &[]);
    assert_eq!(
        doc["secrets"].as_array().map(Vec::len),
        Some(bootstrap_in_list())
    );
    assert_eq!(doc["skipped_secrets"], 3);
    let (json_doc, _) = inspect_json("list-all.json", &[]);
    assert_eq!(doc["secrets"], json_doc["secrets"]);
}

/// cloud-init's own examples (Debian's `cloud-init` package), which this project did not write:
/// every cloud-init input is inspected; the two plain texts are user data cloud-init does not
/// run, which the report says (exit 0).
#[test]
fn cloud_init_examples_are_read() {
    let dir = std::path::Path::new("/usr/share/doc/cloud-init/examples");
    if !dir.is_dir() {
        assert_ne!(
            std::env::var("CI").as_deref(),
            Ok("true"),
            "CI=true needs Debian's cloud-init package (its examples)"
        );
        return;
    }
    let mut seen = 0;
    for entry in std::fs::read_dir(dir).expect("examples") {
        let path = entry.expect("entry").path();
        if !path.is_file() {
            continue;
        }
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or("")
            .to_owned();
        let out = cmd()
            .args(["inspect", "--output", "json"])
            .arg(&path)
            .output()
            .expect("run");
        if matches!(name.as_str(), "kernel-cmdline.txt" | "plain-ignored.txt") {
            assert_eq!(out.status.code(), Some(0), "{name}");
            let doc: Value = serde_json::from_slice(&out.stdout).expect("json");
            let findings = doc["secrets"][0]["findings"]
                .as_array()
                .expect("findings")
                .clone();
            assert!(
                findings
                    .iter()
                    .any(|f| f["id"] == "userdata-not-cloud-config"),
                "{name}: {findings:?}"
            );
            continue;
        }
        assert_eq!(
            out.status.code(),
            Some(0),
            "{name}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let doc: Value = serde_json::from_slice(&out.stdout).expect("json");
        let s = &doc["secrets"][0];
        assert_eq!(s["format"], "cloud-config", "{name}");
        assert_eq!(s["gzip"], name.ends_with(".gz"), "{name}");
        let unreadable = s["findings"]
            .as_array()
            .expect("findings")
            .iter()
            .any(|f| f["id"] == "document-unreadable");
        assert!(!unreadable, "{name}: {}", s["findings"]);
        seen += 1;
    }
    assert!(seen >= 20, "only {seen} examples");
}

#[test]
fn an_input_that_cannot_be_read_leaves_standard_output_empty() {
    for command in ["inspect", "size"] {
        let out = cmd()
            .arg(command)
            .args(["--output", "json"])
            .arg(testdata().join("bad/configmap.yaml"))
            .output()
            .expect("run");
        assert_eq!(out.status.code(), Some(2), "{command}");
        assert!(
            out.stdout.is_empty(),
            "{command}: {}",
            String::from_utf8_lossy(&out.stdout)
        );
        assert!(!out.stderr.is_empty(), "{command}");
    }
}

/// A token written in any spelling RKE2 reads (a list, a map, quoted or spaced keys, another
/// case, `_`, an alias, an escape, `!!binary`, a key RKE2 does not know) and repeated under a
/// public key is shown by neither `inspect` (every output) nor `diff`.
#[test]
fn a_token_in_any_spelling_is_hidden_wherever_it_reappears() {
    let secret = "Zq8vK2mLp4XwT9nBspell";
    let escaped: String = secret
        .chars()
        .map(|c| format!("\\x{:02x}", u32::from(c)))
        .collect();
    let spellings = [
        format!("token: [{secret}]"),
        format!("token: {{a: {secret}}}"),
        format!("token : {secret}"),
        format!("'token': {secret}"),
        format!("TOKEN: {secret}"),
        format!("agent_token: {secret}"),
        format!("t: {secret}"),
        format!("my-flag: {secret}"),
        format!("token: {secret} # a comment"),
        format!("token: \"{escaped}\""),
        format!("token: !!binary {}", b64(secret)),
    ];
    let folder = scratch();
    for spelling in spellings {
        let userdata = format!(
            "#cloud-config\nwrite_files:\n- path: /etc/rancher/rke2/config.yaml\n  content: |\n    {spelling}\n    cni: {secret}\n"
        );
        let (a, b) = (folder.path().join("a.yaml"), folder.path().join("b.yaml"));
        std::fs::write(&a, &userdata).expect("write");
        std::fs::write(&b, format!("{userdata}runcmd: [reboot]\n")).expect("write");
        for args in [
            vec!["inspect", "-v"],
            vec!["inspect", "-o", "json"],
            vec!["inspect", "-o", "yaml"],
        ] {
            let out = cmd().args(&args).arg(&a).output().expect("run");
            let text = String::from_utf8_lossy(&out.stdout);
            assert!(out.status.success(), "{spelling}: {args:?}");
            assert!(!text.contains(secret), "{spelling}: {args:?}: {text}");
        }
        for format in ["text", "json", "markdown"] {
            let out = cmd()
                .args(["diff", "-o", format])
                .arg(&a)
                .arg(&b)
                .output()
                .expect("run");
            let text = String::from_utf8_lossy(&out.stdout);
            assert!(!text.contains(secret), "{spelling}: diff {format}: {text}");
        }
    }
}
