//! `rke2-payload size`: exact figures, each cloud's counting rule, exit codes, JSON and JUnit.

use crate::common::*;

use serde_json::Value;

/// The limits and counting rules, restated here from the platforms' documentation so that the
/// test does not read them from the code it checks.
const RULES: &[(&str, u64, bool)] = &[
    ("aws-user-data", 16_384, false),
    ("aws", 1_048_576, false),
    ("azure", 65_535, false),
    ("openstack", 65_535, true),
    ("hetzner", 32_768, false),
    ("oci", 32_000, true),
    ("cloudstack", 32_768, true),
    ("linode", 16_383, false),
];

fn b64_len(n: u64) -> u64 {
    n.div_ceil(3) * 4
}

#[test]
fn figures_and_verdicts_for_every_fixture() {
    let clouds: Vec<&str> = RULES.iter().map(|r| r.0).collect();
    for entry in fixtures() {
        let file = entry["file"].as_str().expect("file");
        let out = cmd()
            .arg("size")
            .arg(testdata().join("secrets").join(file))
            .args(["--output", "json", "--cloud", &clouds.join(",")])
            .output()
            .expect("run");
        let doc: Value = serde_json::from_slice(&out.stdout).expect("json");
        assert_eq!(doc["schema"], "rke2-payload/size/v1");
        let s = &doc["secrets"][0];
        let value = entry["value_bytes"].as_u64().expect("value");
        assert_eq!(s["value_bytes"], value, "{file}");
        assert_eq!(s["userdata_bytes"], entry["userdata_bytes"], "{file}");
        assert_eq!(s["base64_bytes"].as_u64(), Some(b64_len(value)), "{file}");
        if !entry["base64_bytes"].is_null() {
            assert_eq!(s["base64_bytes"], entry["base64_bytes"], "{file}");
        }
        let gzip = entry["gzip"].as_bool().expect("gzip");
        let gz = s["gzip_value_bytes"].as_u64().expect("gzip bytes");
        if gzip {
            assert_eq!(gz, value, "{file}: already compressed");
        } else {
            assert!(
                gz < value,
                "{file}: gzip should shrink it ({gz} vs {value})"
            );
        }
        let mut all_fit = true;
        for (verdict, (id, limit, base64)) in
            s["clouds"].as_array().expect("clouds").iter().zip(RULES)
        {
            let counted = if *base64 { b64_len(value) } else { value };
            assert_eq!(verdict["cloud"], *id, "{file}");
            assert_eq!(verdict["limit_bytes"], *limit, "{file} {id}");
            assert_eq!(verdict["counted_bytes"], counted, "{file} {id}");
            assert_eq!(verdict["fits"], counted <= *limit, "{file} {id}");
            all_fit &= counted <= *limit;
        }
        assert_eq!(doc["fits"], all_fit, "{file}");
        assert_eq!(
            out.status.code(),
            Some(if all_fit { 0 } else { 1 }),
            "{file}"
        );
    }
}

#[test]
fn exit_codes_follow_budget_and_headroom() {
    // init cloud-config online: 14,387 raw bytes, 19,184 base64.
    let file = testdata().join("secrets/init-cloud-config-online.yaml");
    let run = |args: &[&str]| {
        cmd()
            .arg("size")
            .arg(&file)
            .args(args)
            .output()
            .expect("run")
            .status
            .code()
    };
    assert_eq!(run(&["--budget", "14387"]), Some(0));
    assert_eq!(run(&["--budget", "14386"]), Some(1));
    assert_eq!(run(&["--budget", "19184:base64"]), Some(0));
    assert_eq!(run(&["--budget", "19183:base64"]), Some(1));
    // AWS 16,384 with 10% headroom keeps 14,745: fits; with 15% keeps 13,926: does not.
    assert_eq!(
        run(&["--cloud", "aws-user-data", "--headroom", "10"]),
        Some(0)
    );
    assert_eq!(
        run(&["--cloud", "aws-user-data", "--headroom", "15"]),
        Some(1)
    );
    assert_eq!(run(&["--cloud", "nope"]), Some(2));
    assert_eq!(run(&["--budget", "12:bits"]), Some(2));
    assert_eq!(run(&["--headroom", "100"]), Some(2));
}

#[test]
fn advice_where_it_applies() {
    let out = cmd()
        .arg("size")
        .arg(testdata().join("secrets/init-cloud-config-extras.yaml"))
        .args(["--cloud", "aws-user-data,hetzner", "--output", "json"])
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(1));
    let doc: Value = serde_json::from_slice(&out.stdout).expect("json");
    let aws = &doc["secrets"][0]["clouds"][0];
    assert_eq!(aws["fits"], false);
    assert_eq!(aws["fits_with_gzip"], true);
    assert_eq!(aws["advice"][0], "fits with gzipUserData: true");

    // A gzip cloud-config on platforms that carry user data as text, or gzip it again.
    let out = cmd()
        .arg("size")
        .arg(testdata().join("secrets/worker-cloud-config-gzip-online.yaml"))
        .args(["--cloud", "hetzner,cloudstack,aws", "--output", "json"])
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(0));
    let doc: Value = serde_json::from_slice(&out.stdout).expect("json");
    let advice = |i: usize| doc["secrets"][0]["clouds"][i]["advice"].to_string();
    assert!(advice(0).contains("not safe"), "{}", advice(0));
    assert!(advice(1).contains("second gzip"), "{}", advice(1));
    assert_eq!(advice(2), "[]");
}

#[test]
fn junit_has_one_case_per_secret_and_cloud() {
    let out = cmd()
        .arg("size")
        .arg(testdata().join("secrets/list-all.yaml"))
        .args(["--cloud", "aws-user-data,openstack", "--output", "junit"])
        .output()
        .expect("run");
    assert_eq!(
        out.status.code(),
        Some(1),
        "extras payloads are over AWS's limit"
    );
    let xml = String::from_utf8(out.stdout).expect("utf8");
    assert!(xml.starts_with("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites "));
    assert_eq!(xml.matches("<testcase ").count(), 2 * bootstrap_in_list());
    assert_eq!(xml.matches("<testsuite ").count(), bootstrap_in_list());
    let failures = xml.matches("<failure ").count();
    assert!(failures >= 2, "{failures}");
    assert!(xml.contains(&format!("failures=\"{failures}\"")));
    assert!(xml.trim_end().ends_with("</testsuites>"));
    // Well-formed for a real XML parser, where Python is at hand.
    if let Ok(status) = std::process::Command::new("python3")
        .args([
            "-c",
            "import sys, xml.dom.minidom; xml.dom.minidom.parseString(sys.stdin.read())",
        ])
        .stdin(std::process::Stdio::piped())
        .spawn()
        .and_then(|mut child| {
            use std::io::Write;
            child
                .stdin
                .take()
                .expect("stdin")
                .write_all(xml.as_bytes())?;
            child.wait()
        })
    {
        assert!(status.success(), "JUnit XML is not well-formed");
    }
}

#[test]
fn text_has_a_bar_per_cloud() {
    let out = cmd()
        .arg("size")
        .arg(testdata().join("secrets/init-cloud-config-online.yaml"))
        .args(["--cloud", "aws-user-data,openstack"])
        .output()
        .expect("run");
    let text = String::from_utf8(out.stdout).expect("utf8");
    assert!(text.contains("aws-user-data "), "{text}");
    assert!(text.contains("88%  14,387 of 16,384 raw bytes"), "{text}");
    assert!(
        text.contains("29%  19,184 of 65,535 base64 bytes"),
        "{text}"
    );
    assert!(text.contains('█'));
}

#[test]
fn the_default_gate_uses_verified_limits_only() {
    let file = testdata().join("secrets/init-cloud-config-online.yaml");
    let out = cmd()
        .arg("size")
        .arg(&file)
        .args(["-o", "json"])
        .output()
        .expect("run");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let doc: Value = serde_json::from_slice(&out.stdout).expect("json");
    let measured: Vec<String> = doc["secrets"][0]["clouds"]
        .as_array()
        .expect("clouds")
        .iter()
        .filter_map(|v| v["cloud"].as_str().map(str::to_owned))
        .collect();
    let unverified: Vec<&str> = rke2_payload::CLOUDS
        .iter()
        .filter(|c| !c.is_verified())
        .map(|c| c.id)
        .collect();
    assert!(!unverified.is_empty());
    for id in &unverified {
        assert!(
            !measured.iter().any(|m| m == id),
            "{id} is unverified: {measured:?}"
        );
    }
    // On request they are measured (and may fail the gate).
    let out = cmd()
        .arg("size")
        .arg(&file)
        .args(["--cloud", "all", "-o", "json"])
        .output()
        .expect("run");
    let text = String::from_utf8_lossy(&out.stdout);
    for id in &unverified {
        assert!(text.contains(&format!("\"{id}\"")), "{id} with --cloud all");
    }
}
