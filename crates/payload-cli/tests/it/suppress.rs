//! Suppressions where users keep them: `ignore-check.rke2-payload.io/<id>` annotations on a
//! Secret or a manifest object, the config file of defaults, `--min-severity` and `--quiet`.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::common::{cmd, scratch, testdata};

/// `text` with `annotations` (already indented for `metadata:`) added after its first
/// `metadata:` line following `after` (a line of the object, such as `kind: Secret`).
fn annotate(text: &str, after: &str, annotations: &str) -> String {
    let at = text.find(after).expect("the object");
    let meta = at + text[at..].find("metadata:\n").expect("its metadata") + "metadata:\n".len();
    format!("{}{annotations}{}", &text[..meta], &text[meta..])
}

/// The fixture `name` of `testdata/secrets`, annotated, written into `dir`.
fn annotated_secret(dir: &Path, name: &str, annotations: &str) -> PathBuf {
    let text = std::fs::read_to_string(testdata().join("secrets").join(name)).expect("fixture");
    let path = dir.join(name);
    std::fs::write(&path, annotate(&text, "kind: Secret", annotations)).expect("written");
    path
}

/// `lint … -o json` in `dir`, read: the exit code and the document.
fn lint_json(dir: &Path, args: &[&str]) -> (i32, Value) {
    let out = cmd()
        .current_dir(dir)
        .env_remove("RKE2_PAYLOAD_CONFIG")
        .arg("lint")
        .args(args)
        .args(["-o", "json"])
        .output()
        .expect("runs");
    let doc = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{e}: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    (out.status.code().unwrap_or(-1), doc)
}

fn ids(doc: &Value) -> Vec<String> {
    doc["secrets"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|s| s["findings"].as_array().into_iter().flatten())
        .chain(doc["manifests"].as_array().into_iter().flatten())
        .filter_map(|f| f["id"].as_str().map(str::to_owned))
        .collect()
}

#[test]
fn an_annotation_on_a_secret_suppresses_its_finding_and_says_why() {
    let dir = scratch();
    let plain = testdata().join("secrets/worker-cloud-config-checksum.yaml");
    let (code, doc) = lint_json(dir.path(), &[plain.to_str().expect("utf-8")]);
    assert_eq!(code, 1, "{doc}");
    assert_eq!(doc["summary"]["suppressed"], 0);
    let file = annotated_secret(
        dir.path(),
        "worker-cloud-config-checksum.yaml",
        "  annotations:\n    ignore-check.rke2-payload.io/cloud-config-invalid-yaml: \"fixed upstream, see #42\"\n",
    );
    let (code, doc) = lint_json(dir.path(), &[file.to_str().expect("utf-8")]);
    assert_eq!(code, 0, "{doc}");
    assert!(!ids(&doc).contains(&"cloud-config-invalid-yaml".to_owned()));
    assert_eq!(doc["summary"]["errors"], 0);
    assert_eq!(doc["summary"]["suppressed"], 1);
    let s = &doc["suppressed"][0];
    assert_eq!(s["id"], "cloud-config-invalid-yaml");
    assert_eq!(s["secret"], "default/demo-md-0-c48vq-qv2pb");
    assert_eq!(s["by"]["reason"], "fixed upstream, see #42");
    assert_eq!(s["by"]["object"], "Secret default/demo-md-0-c48vq-qv2pb");
    // The text report says how many.
    let out = cmd()
        .current_dir(dir.path())
        .args(["lint", "--no-config"])
        .arg(&file)
        .output()
        .expect("runs");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("1 finding(s) suppressed by ignore-check annotations"),
        "{text}"
    );
}

#[test]
fn an_unknown_check_id_in_the_annotation_is_a_warning_and_suppresses_nothing() {
    let dir = scratch();
    let file = annotated_secret(
        dir.path(),
        "worker-cloud-config-checksum.yaml",
        "  annotations:\n    ignore-check.rke2-payload.io/cloud-config-invalid-yml: typo\n",
    );
    let (code, doc) = lint_json(dir.path(), &[file.to_str().expect("utf-8")]);
    assert_eq!(code, 1, "{doc}");
    assert_eq!(doc["summary"]["suppressed"], 0);
    let findings = doc["secrets"][0]["findings"].as_array().expect("findings");
    let unknown = findings
        .iter()
        .find(|f| f["id"] == "ignore-check-unknown")
        .expect("the unknown id is told");
    assert_eq!(unknown["severity"], "warning");
    assert_eq!(
        unknown["message"],
        "Secret default/demo-md-0-c48vq-qv2pb: the annotation ignore-check.rke2-payload.io/cloud-config-invalid-yml names no check, so it suppresses nothing (`rke2-payload lint --list-checks` lists the ids)"
    );
    assert!(ids(&doc).contains(&"cloud-config-invalid-yaml".to_owned()));
}

/// The manifests of `testdata/manifests/worker-cloud-config-online.yaml`, with annotations on
/// the RKE2ConfigTemplate and the RKE2ControlPlane.
fn annotated_manifests(dir: &Path, template: &str, control_plane: &str) -> PathBuf {
    let text =
        std::fs::read_to_string(testdata().join("manifests/worker-cloud-config-online.yaml"))
            .expect("fixture");
    let text = annotate(&text, "kind: RKE2ConfigTemplate\n", template);
    let text = annotate(&text, "kind: RKE2ControlPlane\n", control_plane);
    let path = dir.join("cluster.yaml");
    std::fs::write(&path, text).expect("written");
    path
}

#[test]
fn an_annotation_on_a_manifest_object_suppresses_its_findings_and_those_of_its_secrets() {
    let dir = scratch();
    let plain = annotated_manifests(dir.path(), "", "");
    let (code, doc) = lint_json(dir.path(), &[plain.to_str().expect("utf-8")]);
    assert_eq!(code, 1, "{doc}");
    let found = ids(&doc);
    assert!(
        found.contains(&"manifest-provider-id-literal".to_owned()),
        "{found:?}"
    );
    assert!(found.contains(&"egress-required".to_owned()), "{found:?}");

    let file = annotated_manifests(
        dir.path(),
        "  annotations:\n    ignore-check.rke2-payload.io/manifest-provider-id-literal: \"one Machine only\"\n",
        "  annotations:\n    ignore-check.rke2-payload.io/egress-required: NAT gateway\n",
    );
    let (code, doc) = lint_json(dir.path(), &[file.to_str().expect("utf-8")]);
    // The error is gone: only a warning is left.
    assert_eq!(code, 0, "{doc}");
    let found = ids(&doc);
    assert!(
        !found.contains(&"manifest-provider-id-literal".to_owned()),
        "{found:?}"
    );
    assert!(!found.contains(&"egress-required".to_owned()), "{found:?}");
    assert_eq!(doc["summary"]["suppressed"], 2);
    let suppressed = doc["suppressed"].as_array().expect("listed");
    let on_template = suppressed
        .iter()
        .find(|s| s["id"] == "manifest-provider-id-literal")
        .expect("the manifest finding");
    assert_eq!(on_template["by"]["reason"], "one Machine only");
    assert_eq!(
        on_template["by"]["object"],
        "RKE2ConfigTemplate default/demo-md-0"
    );
    assert_eq!(
        on_template["manifest"]["object"],
        "RKE2ConfigTemplate default/demo-md-0"
    );
    // The rendered Secret's finding, decided on the object it was rendered from.
    let of_secret = suppressed
        .iter()
        .find(|s| s["id"] == "egress-required")
        .expect("the Secret's finding");
    assert_eq!(
        of_secret["by"]["object"],
        "RKE2ControlPlane default/demo-control-plane"
    );
    assert_eq!(of_secret["by"]["reason"], "NAT gateway");
    assert!(
        of_secret["secret"]
            .as_str()
            .is_some_and(|s| s.starts_with("default/demo-control-plane-"))
    );

    // `render` writes the suppressions on the Secrets it renders, so `lint` of its output
    // applies them to the Secrets' findings.
    let rendered = cmd()
        .current_dir(dir.path())
        .args(["render", "--seed", "1"])
        .arg(&file)
        .output()
        .expect("runs");
    let out = cmd()
        .current_dir(dir.path())
        .args(["lint", "-o", "json"])
        .write_stdin(rendered.stdout.clone())
        .output()
        .expect("runs");
    let doc: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(out.status.code(), Some(0), "{doc}");
    assert!(!ids(&doc).contains(&"egress-required".to_owned()), "{doc}");
    assert_eq!(doc["suppressed"][0]["by"]["reason"], "NAT gateway");
    // Read back with the findings of the manifests (`--from-render`), the object's own
    // annotation still suppresses its finding: the gate is what it is on the manifests.
    let out = cmd()
        .current_dir(dir.path())
        .args(["lint", "--from-render", "-o", "json"])
        .write_stdin(rendered.stdout.clone())
        .output()
        .expect("runs");
    let doc: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(out.status.code(), Some(0), "{doc}");
    assert!(
        !ids(&doc).contains(&"manifest-provider-id-literal".to_owned()),
        "{doc}"
    );
    let on_template = doc["suppressed"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|s| s["id"] == "manifest-provider-id-literal")
        .expect("listed as suppressed");
    assert_eq!(on_template["by"]["reason"], "one Machine only");
    assert_eq!(
        on_template["by"]["object"],
        "RKE2ConfigTemplate default/demo-md-0"
    );
    // Without the annotation, the same read-back fails the gate.
    let plain_rendered = cmd()
        .current_dir(dir.path())
        .args(["render", "--seed", "1"])
        .arg(testdata().join("manifests/worker-cloud-config-online.yaml"))
        .output()
        .expect("runs");
    let out = cmd()
        .current_dir(dir.path())
        .args(["lint", "--from-render", "-o", "json"])
        .write_stdin(plain_rendered.stdout)
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(1));

    // An unknown id on a manifest object is located on it.
    let file = annotated_manifests(
        dir.path(),
        "  annotations:\n    ignore-check.rke2-payload.io/provider-id-litteral: x\n",
        "",
    );
    let (_, doc) = lint_json(dir.path(), &[file.to_str().expect("utf-8")]);
    let unknown = doc["manifests"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|f| f["id"] == "ignore-check-unknown")
        .expect("told");
    assert_eq!(
        unknown["manifest"]["object"],
        "RKE2ConfigTemplate default/demo-md-0"
    );
}

/// A repository in a scratch folder: `.git`, a config file at its root with `config`, and a
/// subdirectory `a/b`.
fn repository(config: &str) -> tempfile::TempDir {
    let dir = scratch();
    std::fs::create_dir_all(dir.path().join(".git")).expect("made");
    std::fs::create_dir_all(dir.path().join("a/b")).expect("made");
    std::fs::write(dir.path().join(".rke2-payload.yaml"), config).expect("written");
    dir
}

fn warning_only() -> String {
    testdata()
        .join("secrets/worker-cloud-config-empty-format.yaml")
        .to_string_lossy()
        .into_owned()
}

#[test]
fn the_config_file_is_found_from_a_subdirectory_and_flags_override_it() {
    let repo = repository("deny: warnings\nallow: [egress-required]\n");
    let sub = repo.path().join("a/b");
    let (code, doc) = lint_json(&sub, &[&warning_only()]);
    assert_eq!(code, 1, "deny: warnings applies: {doc}");
    assert_eq!(ids(&doc), ["format-empty"], "allow applies");
    // A flag given wins.
    let (code, _) = lint_json(&sub, &[&warning_only(), "--deny", "none"]);
    assert_eq!(code, 0);
    // The checks allowed add up.
    let (code, doc) = lint_json(&sub, &[&warning_only(), "--allow", "format-empty"]);
    assert_eq!((code, ids(&doc)), (0, Vec::<String>::new()));
    // --no-config reads none.
    let (code, doc) = lint_json(&sub, &[&warning_only(), "--no-config"]);
    assert_eq!(code, 0);
    assert_eq!(ids(&doc), ["format-empty", "egress-required"]);
    // The search stops at the repository root: a file above it is not read.
    let outer = scratch();
    std::fs::write(outer.path().join(".rke2-payload.yaml"), "deny: warnings\n").expect("written");
    std::fs::create_dir_all(outer.path().join("repo/.git")).expect("made");
    let (code, _) = lint_json(&outer.path().join("repo"), &[&warning_only()]);
    assert_eq!(code, 0);
}

#[test]
fn the_environment_variable_and_the_flag_name_the_config_file() {
    let dir = scratch();
    let file = dir.path().join("defaults.yml");
    std::fs::write(&file, "lint:\n  min-severity: error\n").expect("written");
    let out = cmd()
        .current_dir(dir.path())
        .env("RKE2_PAYLOAD_CONFIG", &file)
        .args(["lint", "-o", "json", &warning_only()])
        .output()
        .expect("runs");
    let doc: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(doc["summary"]["warnings"], 0, "{doc}");
    assert_eq!(doc["summary"]["infos"], 0, "{doc}");
    // --config wins over the variable.
    let other = dir.path().join("other.yaml");
    std::fs::write(&other, "deny: warnings\n").expect("written");
    let out = cmd()
        .current_dir(dir.path())
        .env("RKE2_PAYLOAD_CONFIG", &file)
        .args(["lint", &warning_only(), "--config"])
        .arg(&other)
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(1));
    // `size` takes its settings too: the cloud measured.
    std::fs::write(&file, "cloud: [aws]\nsize:\n  headroom: 10\n").expect("written");
    let out = cmd()
        .current_dir(dir.path())
        .env("RKE2_PAYLOAD_CONFIG", &file)
        .args(["size", "-o", "json", &warning_only()])
        .output()
        .expect("runs");
    let doc: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    let text = doc.to_string();
    assert!(text.contains("\"aws\""), "{text}");
    assert!(!text.contains("\"azure\""), "{text}");
}

#[test]
fn an_unknown_key_in_the_config_file_is_a_usage_error_naming_it_and_the_file() {
    let repo = repository("deny: warnings\nclod: [aws]\n");
    let out = cmd()
        .current_dir(repo.path().join("a"))
        .env_remove("RKE2_PAYLOAD_CONFIG")
        .args(["lint", &warning_only()])
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("clod") && err.contains(".rke2-payload.yaml"),
        "{err}"
    );
    // A check id that names no check, too.
    let repo = repository("allow: [egres-required]\n");
    let out = cmd()
        .current_dir(repo.path())
        .env_remove("RKE2_PAYLOAD_CONFIG")
        .args(["lint", &warning_only()])
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("egres-required") && err.contains("names no check"),
        "{err}"
    );
    // --no-config reads none, so nothing is wrong.
    let out = cmd()
        .current_dir(repo.path())
        .args(["lint", "--no-config", &warning_only()])
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(0));
}

#[test]
fn min_severity_leaves_out_what_is_below_it_from_the_report_and_the_exit_code() {
    let dir = scratch();
    let (_, doc) = lint_json(dir.path(), &[&warning_only(), "--min-severity", "warning"]);
    assert_eq!(ids(&doc), ["format-empty"]);
    assert_eq!(doc["summary"]["infos"], 0);
    let (code, doc) = lint_json(
        dir.path(),
        &[
            &warning_only(),
            "--min-severity",
            "error",
            "--deny",
            "warnings",
        ],
    );
    assert_eq!((code, ids(&doc)), (0, Vec::<String>::new()));
}

#[test]
fn quiet_writes_the_findings_alone() {
    let dir = scratch();
    let run = |args: &[&str]| {
        cmd()
            .current_dir(dir.path())
            .env_remove("RKE2_PAYLOAD_CONFIG")
            .args(["lint", "--quiet"])
            .args(args)
            .output()
            .expect("runs")
    };
    // Nothing found at or above warning: nothing written.
    let clean = testdata().join("secrets/worker-cloud-config-online.yaml");
    let out = run(&[clean.to_str().expect("utf-8"), "--min-severity", "warning"]);
    assert_eq!(out.status.code(), Some(0));
    assert!(out.stdout.is_empty() && out.stderr.is_empty(), "{out:?}");
    // A finding: its Secret and the finding, no counts.
    let out = run(&[&warning_only(), "--deny", "warnings"]);
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("format-empty"), "{text}");
    assert!(!text.contains("Secret(s)"), "{text}");
    // Only the text report has a quiet form.
    let out = run(&[&warning_only(), "-o", "json"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--quiet"));
}
