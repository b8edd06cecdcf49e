//! Hostile input: every case ends with a clear exit-2 error (or, where the input is valid, a
//! normal result), in bounded time, never a crash.

use crate::common::*;

use std::path::Path;
use std::process::Output;
use std::time::{Duration, Instant};

use assert_cmd::Command;

/// Runs the tool and checks the run was bounded and did not crash.
fn run(args: &[&str], file: &Path, limit: Duration) -> Output {
    let start = Instant::now();
    let out = Command::cargo_bin("rke2-payload")
        .expect("binary")
        .args(args)
        .arg(file)
        .timeout(limit)
        .output()
        .expect("run");
    assert!(
        start.elapsed() < limit,
        "{args:?} {}: too slow",
        file.display()
    );
    assert!(
        matches!(out.status.code(), Some(0..=2)),
        "{args:?} {}: crashed ({:?}): {}",
        file.display(),
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

fn expect_error(args: &[&str], file: &Path, message: &str) {
    let out = run(args, file, Duration::from_secs(60));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{}: {stderr}", file.display());
    assert!(stderr.contains(message), "{}: {stderr}", file.display());
    assert_eq!(stderr.trim_end().lines().count(), 1, "one line: {stderr}");
}

fn secret_yaml(value_b64: &str) -> String {
    format!(
        "apiVersion: v1\nkind: Secret\nmetadata:\n  name: hostile\n  namespace: default\ndata:\n  format: Y2xvdWQtY29uZmln\n  value: {value_b64}\n"
    )
}

#[test]
fn gzip_bomb_and_nested_gzip() {
    expect_error(
        &["decode"],
        &testdata().join("bad/gzip-bomb.yaml"),
        "inflates past the cap",
    );
    expect_error(
        &["inspect"],
        &testdata().join("bad/gzip-bomb.yaml"),
        "inflates past the cap",
    );
    expect_error(
        &["size"],
        &testdata().join("bad/nested-gzip.yaml"),
        "gzip inside gzip",
    );
}

#[test]
fn yaml_alias_bomb() {
    let mut bomb = String::from(
        "a0: &a0 [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n",
    );
    for i in 1..10 {
        let refs = vec![format!("*a{}", i - 1); 9].join(",");
        bomb.push_str(&format!("a{i}: &a{i} [{refs}]\n"));
    }
    bomb.push_str("kind: Secret\nmetadata: {name: x}\ndata:\n  value: eA==\n");
    let file = temp_path("laughs.yaml");
    std::fs::write(&file, bomb).expect("write");
    expect_error(&["inspect"], &file, "exceeds a reading limit");
}

#[test]
fn deeply_nested_yaml_and_json() {
    let file = temp_path("deep.yaml");
    std::fs::write(
        &file,
        format!("{}{}", "[".repeat(100_000), "]".repeat(100_000)),
    )
    .expect("write");
    expect_error(&["decode"], &file, "no Secret");
    let file = temp_path("deep-map.yaml");
    let mut text = String::from("kind: Secret\nmetadata:\n  name: x\n  annotations:\n");
    for depth in 0..2_000 {
        text.push_str(&" ".repeat(4 + depth * 2));
        text.push_str("a:\n");
    }
    std::fs::write(&file, text).expect("write");
    expect_error(&["decode"], &file, "not YAML");
    let file = temp_path("deep.json");
    std::fs::write(
        &file,
        format!("{}1{}", "{\"a\":".repeat(100_000), "}".repeat(100_000)),
    )
    .expect("write");
    expect_error(&["decode"], &file, "");
    let file = temp_path("deep-array.json");
    std::fs::write(
        &file,
        format!("{}{}", "[".repeat(100_000), "]".repeat(100_000)),
    )
    .expect("write");
    expect_error(&["inspect"], &file, "");
}

#[test]
fn a_100_mb_base64_line() {
    let value = "A".repeat(100 << 20);
    let file = temp_path("big.yaml");
    std::fs::write(&file, secret_yaml(&value)).expect("write");
    expect_error(
        &["decode"],
        &file,
        "more than the 1048576 bytes a Kubernetes Secret can hold",
    );
    let file = temp_path("big.json");
    std::fs::write(
        &file,
        format!(
            "{{\"apiVersion\":\"v1\",\"kind\":\"Secret\",\"metadata\":{{\"name\":\"big\"}},\"data\":{{\"value\":\"{value}\",\"format\":\"\"}}}}"
        ),
    )
    .expect("write");
    // Streamed: refused while reading, at the cap on one object.
    expect_error(&["size"], &file, "is larger than 8388608 bytes");
    std::fs::remove_file(&file).expect("cleanup");
}

#[test]
fn invalid_utf8_and_nul_bytes() {
    let file = temp_path("not-utf8-value.yaml");
    std::fs::write(
        &file,
        secret_yaml(&b64(b"#cloud-config\nruncmd: [\xff\xfe]\n")),
    )
    .expect("write");
    // User data that does not read as its format is a finding of the report, exit 0 (only
    // gates exit 1, only a Secret that cannot be decoded exits 2).
    let out = run(&["inspect", "-o", "json"], &file, Duration::from_secs(60));
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    let findings = doc["secrets"][0]["findings"]
        .as_array()
        .expect("findings")
        .clone();
    assert!(
        findings.iter().any(|f| f["id"] == "document-unreadable"
            && f["message"]
                .as_str()
                .is_some_and(|m| m.contains("not UTF-8"))),
        "{findings:?}"
    );
    expect_error(
        &["decode"],
        &testdata().join("bad/not-yaml.txt"),
        "invalid UTF-8",
    );
    let file = temp_path("nul.yaml");
    std::fs::write(
        &file,
        "apiVersion: v1\nkind: Secret\x00\nmetadata: {name: x}\n",
    )
    .expect("write");
    expect_error(&["decode"], &file, "");
}

#[test]
fn crlf_line_endings_work() {
    let original =
        std::fs::read_to_string(testdata().join("secrets/join-cloud-config-online.yaml"))
            .expect("fixture");
    let file = temp_path("crlf.yaml");
    std::fs::write(&file, original.replace('\n', "\r\n")).expect("write");
    let out = run(&["decode"], &file, Duration::from_secs(30));
    assert_eq!(out.status.code(), Some(0));
    let expected = std::fs::read(testdata().join("secrets/join-cloud-config-online.userdata"))
        .expect("userdata");
    assert!(out.stdout == expected);
    // CRLF inside the user data itself (a cloud-config edited on Windows).
    let userdata = String::from_utf8(expected)
        .expect("utf8")
        .replace('\n', "\r\n");
    let file = temp_path("crlf-userdata.yaml");
    std::fs::write(&file, secret_yaml(&b64(userdata.as_bytes()))).expect("write");
    let out = run(
        &["inspect", "--output", "json"],
        &file,
        Duration::from_secs(30),
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(
        doc["secrets"][0]["rke2"]["server"],
        "https://10.0.1.10:9345"
    );
    assert_eq!(doc["secrets"][0]["files"].as_array().map(Vec::len), Some(3));
}

#[test]
fn truncation_trailing_data_and_broken_data_urls() {
    expect_error(
        &["decode"],
        &testdata().join("bad/truncated-gzip.yaml"),
        "truncated",
    );
    expect_error(
        &["decode"],
        &testdata().join("bad/gzip-trailing.yaml"),
        "trailing data",
    );
    expect_error(
        &["decode"],
        &testdata().join("bad/bad-wrapper.yaml"),
        "data URL",
    );
    // The Secret text cut anywhere: a clean error or a valid shorter document, never a crash.
    let original = std::fs::read(testdata().join("secrets/worker-ignition-gzip-online.yaml"))
        .expect("fixture");
    for cut in (1..original.len()).step_by(original.len() / 23 + 1) {
        let file = temp_path("cut.yaml");
        std::fs::write(&file, &original[..cut]).expect("write");
        run(&["inspect"], &file, Duration::from_secs(30));
    }
    // The Ignition wrapper JSON cut inside the Secret's value.
    let wrapper = std::fs::read(testdata().join("secrets/worker-ignition-gzip-online.userdata"))
        .expect("userdata");
    let file = temp_path("cut-ignition.yaml");
    let text = String::from_utf8(wrapper).expect("utf8");
    let cut = &text[..text.len() / 2];
    std::fs::write(
        &file,
        secret_yaml(&b64(cut.as_bytes())).replace("Y2xvdWQtY29uZmln", "aWduaXRpb24="),
    )
    .expect("write");
    expect_error(&["inspect"], &file, "");
}

#[test]
fn ignition_with_100000_files() {
    let mut json = String::from(r#"{"ignition":{"version":"3.3.0"},"storage":{"files":["#);
    for i in 0..100_000 {
        if i > 0 {
            json.push(',');
        }
        json.push_str(&format!(
            r#"{{"path":"/etc/f/{i}","mode":420,"contents":{{"source":"data:,{i}"}}}}"#
        ));
    }
    json.push_str("]}}");
    let file = temp_path("many.ign");
    std::fs::write(&file, json).expect("write");
    let out = run(
        &["lint", "--output", "json"],
        &file,
        Duration::from_secs(60),
    );
    assert_eq!(
        out.status.code(),
        Some(1),
        "no config.yaml: an error finding"
    );
    let out = run(
        &["size", "--cloud", "aws-user-data"],
        &file,
        Duration::from_secs(60),
    );
    assert_eq!(out.status.code(), Some(1), "far over AWS's limit");
}

#[test]
fn corrupt_pem_and_duplicate_keys() {
    let userdata =
        std::fs::read_to_string(testdata().join("secrets/init-cloud-config-online.userdata"))
            .expect("userdata");
    let corrupt = userdata.replacen("MII", "M*I", 1);
    let file = temp_path("corrupt-pem.yaml");
    std::fs::write(&file, secret_yaml(&b64(corrupt.as_bytes()))).expect("write");
    let out = run(
        &["inspect", "--output", "json"],
        &file,
        Duration::from_secs(30),
    );
    assert_eq!(out.status.code(), Some(0));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert!(doc.to_string().contains("pem-invalid"));

    let file = temp_path("dup.yaml");
    std::fs::write(
        &file,
        "apiVersion: v1\nkind: Secret\nmetadata: {name: x}\ndata:\n  value: eA==\n  value: eQ==\n",
    )
    .expect("write");
    expect_error(&["decode"], &file, "appears twice");
}

#[test]
fn a_multibyte_character_where_a_value_is_sniffed() {
    // Without a `format` key the first characters of the value are read to tell what it is: a
    // three-byte character there was once cut inside, a panic.
    let file = temp_path("value-non-ascii-in-base64-head.yaml");
    std::fs::write(
        &file,
        "kind: Secret\nmetadata:\n  name: a\ndata:\n  value: \"I2Nsb3VkLWNvbmZpZw\\u2028o=\"\n",
    )
    .expect("write");
    for args in [&["inspect"][..], &["decode"], &["size"], &["redact"]] {
        expect_error(args, &file, "data.value is not valid base64");
    }
}
