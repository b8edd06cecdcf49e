//! `rke2-payload decode` and `clouds` from the outside: exit codes, bytes written, messages.

use crate::common::*;

use predicates::prelude::*;
use serde_json::Value;

#[test]
fn decode_writes_exactly_the_rendered_user_data() {
    for entry in fixtures() {
        let file = testdata()
            .join("secrets")
            .join(entry["file"].as_str().expect("file"));
        let expected = std::fs::read(
            testdata()
                .join("secrets")
                .join(entry["userdata_file"].as_str().expect("userdata")),
        )
        .expect("userdata");
        let out = cmd().arg("decode").arg(&file).output().expect("run");
        assert_eq!(out.status.code(), Some(0), "{}", file.display());
        assert!(
            out.stdout == expected,
            "{}: user data differs",
            file.display()
        );
        assert!(out.stderr.is_empty());
    }
}

#[test]
fn decode_raw_writes_the_stored_value() {
    let file = testdata().join("secrets/worker-cloud-config-gzip-online.yaml");
    let out = cmd()
        .args(["decode", "--raw"])
        .arg(&file)
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(&out.stdout[..2], &[0x1f, 0x8b]);
    let entry = fixtures()
        .into_iter()
        .find(|e| e["file"] == "worker-cloud-config-gzip-online.yaml")
        .expect("entry");
    assert_eq!(
        out.stdout.len() as u64,
        entry["value_bytes"].as_u64().expect("n")
    );
}

#[test]
fn decode_reads_stdin_and_picks_from_a_list() {
    let list = std::fs::read(testdata().join("secrets/list-all.json")).expect("list");
    let expected =
        std::fs::read(testdata().join("secrets/init-cloud-config-online.userdata")).expect("ud");
    let entry = fixtures()
        .into_iter()
        .find(|e| e["file"] == "init-cloud-config-online.yaml")
        .expect("entry");
    let name = entry["name"].as_str().expect("name");
    cmd()
        .args(["decode", "-", "--name", &format!("default/{name}")])
        .write_stdin(list.clone())
        .assert()
        .success()
        .stdout(predicate::eq(expected.clone()));
    cmd()
        .args(["decode", "--name", name])
        .write_stdin(list.clone())
        .assert()
        .success()
        .stdout(predicate::eq(expected));
    // Several Secrets and no name: a usage error that lists them.
    cmd()
        .arg("decode")
        .write_stdin(list.clone())
        .assert()
        .code(2)
        .stderr(predicate::str::contains("pick one by name"));
    cmd()
        .args(["decode", "--name", "nope"])
        .write_stdin(list)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("no bootstrap Secret named nope"));
    // kubectl's habits: -n is the namespace, --name takes NAME or NAMESPACE/NAME.
    let stdin = std::fs::read(testdata().join("secrets/list-all.yaml")).expect("list");
    cmd()
        .args(["decode", "-n", "default", "--name", name])
        .write_stdin(stdin.clone())
        .assert()
        .success();
    cmd()
        .args(["decode", "-n", "elsewhere", "--name", name])
        .write_stdin(stdin)
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "no bootstrap Secret named elsewhere/",
        ));
}

#[test]
fn every_bad_input_is_a_clear_exit_2() {
    let cases = [
        ("not-yaml.txt", "not YAML"),
        ("configmap.yaml", "no Secret (kind: ConfigMap)"),
        ("no-value.yaml", "has no `value` key"),
        (
            "bad-base64.yaml",
            "data.value is not valid base64: invalid character '!' at offset 40",
        ),
        ("truncated-gzip.yaml", "truncated"),
        (
            "gzip-trailing.yaml",
            "4 bytes of trailing data after the gzip stream",
        ),
        ("gzip-bomb.yaml", "inflates past the cap of 16777216 bytes"),
        ("nested-gzip.yaml", "gzip inside gzip"),
        ("bad-wrapper.yaml", "config.replace.source"),
        ("wrapper-not-gzip.yaml", "does not hold gzip"),
        (
            "unknown-ignition-version.yaml",
            "unsupported Ignition version \"9.9.9\"",
        ),
    ];
    for (file, message) in cases {
        let out = cmd()
            .arg("decode")
            .arg(testdata().join("bad").join(file))
            .output()
            .expect("run");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{file}: {stderr}");
        assert!(out.stdout.is_empty(), "{file}");
        assert!(
            stderr.starts_with("rke2-payload: error: "),
            "{file}: {stderr}"
        );
        assert!(stderr.contains(message), "{file}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{file}: one sentence: {stderr}");
    }
}

#[test]
fn the_cap_is_configurable() {
    let file = testdata().join("secrets/init-cloud-config-gzip-online.yaml");
    cmd()
        .args(["decode", "--max-inflated", "1000"])
        .arg(&file)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("cap of 1000 bytes"));
}

#[test]
fn output_file_is_never_clobbered_without_force() {
    let dir = scratch();
    let out = dir.path().join("userdata.txt");
    let file = testdata().join("secrets/worker-ignition-gzip-online.yaml");
    cmd()
        .arg("decode")
        .arg(&file)
        .arg("--to-file")
        .arg(&out)
        .assert()
        .success();
    let first = std::fs::read(&out).expect("written");
    assert!(first.starts_with(b"{\"ignition\""));
    cmd()
        .arg("decode")
        .arg(&file)
        .arg("--to-file")
        .arg(&out)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--force"));
    cmd()
        .arg("decode")
        .arg(&file)
        .args(["-o", "raw", "--force", "--to-file"])
        .arg(&out)
        .assert()
        .success();
    assert_ne!(std::fs::read(&out).expect("rewritten"), first);
}

#[test]
fn help_has_examples_and_usage_errors_exit_2() {
    for sub in ["decode", "clouds"] {
        cmd()
            .args([sub, "--help"])
            .assert()
            .success()
            .stdout(predicate::str::contains("Examples:"));
    }
    cmd().arg("frobnicate").assert().code(2);
    cmd().args(["decode", "--bogus"]).assert().code(2);
}

#[test]
fn clouds_lists_every_required_platform() {
    let out = cmd()
        .args(["clouds", "--output", "json"])
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(0));
    let doc: Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(doc["schema"], "rke2-payload/clouds/v1");
    let ids: Vec<&str> = doc["clouds"]
        .as_array()
        .expect("clouds")
        .iter()
        .filter_map(|c| c["id"].as_str())
        .collect();
    for id in [
        "aws",
        "aws-machinepool",
        "azure",
        "gcp",
        "openstack",
        "vsphere",
        "hetzner",
        "digitalocean",
        "oci",
        "ibm-vpc",
        "linode",
        "cloudstack",
        "kubevirt",
        "nutanix",
        "outscale",
        "alibaba",
    ] {
        assert!(ids.contains(&id), "{id} missing");
    }
    let aws = &doc["clouds"][1];
    assert_eq!(aws["id"], "aws-user-data");
    assert_eq!(aws["limit_bytes"], 16384);
    assert_eq!(aws["counted"], "raw");
    cmd()
        .arg("clouds")
        .assert()
        .success()
        .stdout(predicate::str::contains("openstack").and(predicate::str::contains("49,149")));
}

#[test]
fn decoded_user_data_passes_the_real_validators() {
    let mut checked = 0;
    for entry in fixtures() {
        let file = testdata()
            .join("secrets")
            .join(entry["file"].as_str().expect("file"));
        let out = cmd().arg("decode").arg(&file).output().expect("run");
        assert!(out.status.success());
        let format = entry["format"].as_str().expect("format");
        // The airGappedChecksum fixture is not valid YAML, as CAPRKE2 renders it.
        if entry["yaml_valid"] == false {
            continue;
        }
        if assert_valid(format, &out.stdout, &file.display().to_string()) {
            checked += 1;
        }
    }
    if validator("ignition-validate").is_some() && validator("cloud-init").is_some() {
        assert!(checked >= 29, "only {checked} payloads validated");
    }
}

/// On a terminal (util-linux `script` gives one), binary output is refused; text is written.
#[test]
fn binary_is_never_written_to_a_terminal() {
    let Some(script) = validator("script") else {
        return;
    };
    let bin = assert_cmd::cargo::cargo_bin("rke2-payload");
    let run = |args: &str| {
        let out = std::process::Command::new(&script)
            .args(["-qec", &format!("{} {args}", bin.display()), "/dev/null"])
            .output()
            .expect("script");
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
        )
    };
    let gz = testdata().join("secrets/worker-cloud-config-gzip-online.yaml");
    let (code, text) = run(&format!("decode --raw {}", gz.display()));
    assert_eq!(code, Some(2), "{text}");
    assert!(
        text.contains(
            "refusing to write 643 bytes of binary data or control characters to a terminal"
        ),
        "{text}"
    );
    let (code, text) = run(&format!("decode {}", gz.display()));
    assert_eq!(code, Some(0), "{text}");
    assert!(text.contains("#cloud-config"));
}

/// The validator helper really rejects what the validators reject.
#[test]
fn validators_reject_broken_user_data() {
    for (format, bad) in [
        ("ignition", &br#"{"ignition":{"version":"9.9.9"}}"#[..]),
        ("cloud-config", b"#cloud-config\nruncmd: 5\n"),
    ] {
        // A panic is the rejection; returning means the validator was missing.
        if let Ok(ran) = std::panic::catch_unwind(|| assert_valid(format, bad, "bad")) {
            assert!(!ran, "{format}: the validator accepted broken input");
        }
    }
}

#[test]
fn a_byte_order_mark_before_bare_user_data_is_read_the_same_on_every_path() {
    let input = b"\xef\xbb\xbf#cloud-config\nruncmd: [a]\n".to_vec();
    let decoded = cmd()
        .arg("decode")
        .write_stdin(input.clone())
        .output()
        .expect("run");
    assert!(decoded.status.success());
    assert_eq!(decoded.stdout, b"#cloud-config\nruncmd: [a]\n");
    let inspected = cmd()
        .args(["inspect", "-o", "json"])
        .write_stdin(input)
        .output()
        .expect("run");
    let doc: serde_json::Value = serde_json::from_slice(&inspected.stdout).expect("json");
    assert_eq!(
        doc["secrets"][0]["size"]["userdata_bytes"],
        decoded.stdout.len()
    );
}
