//! The output contract: the JSON Schemas of `docs/schemas/` are what the report types generate
//! (`rke2-payload schema NAME`), and every document the binary writes, on the examples and the
//! fixtures, validates against its schema; `-o name`; `version`.
//!
//! To write the schema files again after a report type changed:
//! `UPDATE_SCHEMAS=1 cargo test -p rke2-payload-cli --test it contract`.

use std::path::PathBuf;

use serde_json::Value;

use crate::common::*;

/// Every document, as `rke2-payload schema` names them.
const DOCUMENTS: &[&str] = &[
    "inspect", "size", "lint", "checks", "diff", "doctor", "clouds", "version",
];

fn schemas_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../docs/schemas")
}

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The schema `rke2-payload schema NAME` prints.
fn generated(name: &str) -> String {
    let out = cmd().args(["schema", name]).output().expect("run");
    assert!(out.status.success(), "schema {name}: {out:?}");
    String::from_utf8(out.stdout).expect("UTF-8")
}

/// The committed schema of a document.
fn committed(name: &str) -> Value {
    let path = schemas_dir().join(format!("{name}-v1.json"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).expect("JSON")
}

#[test]
fn the_schema_files_are_what_the_report_types_generate() {
    let update = std::env::var_os("UPDATE_SCHEMAS").is_some();
    let mut stale = Vec::new();
    for name in DOCUMENTS {
        let text = generated(name);
        let path = schemas_dir().join(format!("{name}-v1.json"));
        if update {
            std::fs::create_dir_all(schemas_dir()).expect("docs/schemas");
            std::fs::write(&path, &text).expect("write the schema");
        } else if std::fs::read_to_string(&path).ok().as_deref() != Some(text.as_str()) {
            stale.push(format!("docs/schemas/{name}-v1.json"));
        }
    }
    assert!(
        stale.is_empty(),
        "{} differ from what the report types generate: run \
         `UPDATE_SCHEMAS=1 cargo test -p rke2-payload-cli --test it contract` and commit them \
         (an additive change keeps v1; a removed, renamed or retyped field bumps the schema id)",
        stale.join(", ")
    );
    // No file of a document that is gone.
    let mut files: Vec<String> = std::fs::read_dir(schemas_dir())
        .expect("docs/schemas")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    files.sort();
    let mut expected: Vec<String> = DOCUMENTS.iter().map(|n| format!("{n}-v1.json")).collect();
    expected.sort();
    assert_eq!(files, expected);
}

#[test]
fn the_schemas_are_valid_strict_and_named() {
    // `rke2-payload schema` lists exactly these documents.
    let out = cmd().arg("schema").output().expect("run");
    assert!(out.status.success());
    let listed: Vec<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| l.split_whitespace().next().unwrap_or("").to_owned())
        .collect();
    assert_eq!(listed, DOCUMENTS);
    for name in DOCUMENTS {
        let schema = committed(name);
        if let Err(e) = jsonschema::meta::validate(&schema) {
            panic!("{name}: not a valid JSON Schema: {e}");
        }
        assert_eq!(
            schema["$schema"],
            "https://json-schema.org/draft/2020-12/schema"
        );
        assert_eq!(
            schema["$id"],
            format!(
                "https://raw.githubusercontent.com/rke2-payload/rke2-payload/main/docs/schemas/{name}-v1.json"
            )
        );
        assert_eq!(
            schema["properties"]["schema"]["const"],
            format!("rke2-payload/{name}/v1")
        );
        assert_eq!(schema["additionalProperties"], false, "{name}");
        assert!(
            schema["required"]
                .as_array()
                .is_some_and(|r| r.iter().any(|f| f == "schema")),
            "{name}"
        );
    }
}

/// Validates a document against the committed schema of `name`, and returns it.
fn assert_valid_document(name: &str, doc: &Value, what: &str) {
    let schema = committed(name);
    let validator = jsonschema::validator_for(&schema).expect("the schema compiles");
    let errors: Vec<String> = validator
        .iter_errors(doc)
        .take(5)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    assert!(
        errors.is_empty(),
        "{what}: the {name} document does not validate against docs/schemas/{name}-v1.json:\n{}",
        errors.join("\n")
    );
}

/// Runs the binary; its standard output is a document (whatever the exit code: a failing gate
/// or an unreadable Secret still writes one), in JSON or, with `-o yaml`, YAML.
fn document_of(args: &[&str]) -> Value {
    maybe_document_of(args).unwrap_or_else(|| panic!("{args:?}: no document"))
}

/// As [`document_of`], `None` for an input error that stops before any document (exit 2,
/// nothing written: an input without any bootstrap Secret).
fn maybe_document_of(args: &[&str]) -> Option<Value> {
    let out = cmd().current_dir(repo()).args(args).output().expect("run");
    assert!(
        matches!(out.status.code(), Some(0..=2)),
        "{args:?}: {out:?}"
    );
    if out.status.code() == Some(2) && out.stdout.is_empty() {
        return None;
    }
    let yaml = args.windows(2).any(|w| w == ["-o", "yaml"]);
    let doc: Result<Value, String> = if yaml {
        serde_saphyr::from_slice(&out.stdout).map_err(|e| e.to_string())
    } else {
        serde_json::from_slice(&out.stdout).map_err(|e| e.to_string())
    };
    Some(doc.unwrap_or_else(|e| {
        panic!(
            "{args:?}: not a document ({e}): {}",
            String::from_utf8_lossy(&out.stderr)
        )
    }))
}

/// A bootstrap Secret of another provider (kubeadm's), which the reports list as passed over.
const KUBEADM: &str = "apiVersion: v1
kind: Secret
metadata:
  name: kc-1
  namespace: capi
  ownerReferences: [{apiVersion: bootstrap.cluster.x-k8s.io/v1beta1, kind: KubeadmConfig, name: kc-1, uid: x}]
type: cluster.x-k8s.io/secret
stringData: {format: cloud-config, value: \"#cloud-config\\nruncmd: [kubeadm join]\\n\"}
";

/// The inputs of the Secret reports: the fixture Lists (every fixture Secret), JSON, several
/// documents, bare user data, each broken Secret, manifests the reports preview, and a Secret
/// of another provider.
fn secret_inputs(scratch: &std::path::Path) -> Vec<Vec<String>> {
    let kubeadm = scratch.join("kubeadm.yaml");
    std::fs::write(&kubeadm, KUBEADM).expect("write");
    let mut inputs: Vec<Vec<String>> = [
        "testdata/secrets/list-all.yaml",
        "testdata/secrets/list-all.json",
        "testdata/secrets/list-main-branch.yaml",
        "testdata/secrets/multi-doc.yaml",
        "testdata/secrets/worker-ignition-online.json",
        "testdata/secrets/init-cloud-config-extras.userdata",
        "examples/preview/demo-cluster.yaml",
        "examples/preview/schema-mistakes.yaml",
        "testdata/manifests",
    ]
    .iter()
    .map(|p| vec![(*p).to_owned()])
    .collect();
    let mut bad: Vec<PathBuf> = std::fs::read_dir(repo().join("testdata/bad"))
        .expect("testdata/bad")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        .collect();
    bad.sort();
    inputs.extend(bad.iter().map(|p| vec![p.display().to_string()]));
    inputs.push(vec![
        kubeadm.display().to_string(),
        "testdata/secrets/list-all.yaml".to_owned(),
    ]);
    inputs
}

#[test]
fn inspect_size_and_lint_documents_validate_against_their_schemas() {
    let dir = scratch();
    let inputs = secret_inputs(dir.path());
    let mut runs = vec![
        (
            "inspect",
            vec![
                "inspect",
                "testdata/secrets/list-all.yaml",
                "--show-secrets",
            ],
        ),
        (
            "size",
            vec![
                "size",
                "testdata/secrets/list-all.yaml",
                "--cloud",
                "all",
                "--budget",
                "2000:base64",
            ],
        ),
        (
            "lint",
            vec![
                "lint",
                "testdata/secrets/list-all.yaml",
                "--cloud",
                "aws",
                "--deny",
                "warnings",
            ],
        ),
    ];
    for input in &inputs {
        for command in ["inspect", "size", "lint"] {
            let mut args = vec![command];
            args.extend(input.iter().map(String::as_str));
            runs.push((command, args));
        }
    }
    let mut documents = 0;
    for (name, mut args) in runs {
        args.extend(["-o", "json"]);
        if let Some(doc) = maybe_document_of(&args) {
            assert_valid_document(name, &doc, &args.join(" "));
            documents += 1;
        }
    }
    // Only an input without any bootstrap Secret (a ConfigMap) writes none.
    assert!(
        documents >= (inputs.len() - 1) * 3,
        "{documents} of {}",
        inputs.len() * 3
    );
}

#[test]
fn yaml_documents_validate_against_the_same_schemas() {
    for (name, args) in [
        (
            "inspect",
            &["inspect", "testdata/secrets/list-all.yaml", "-o", "yaml"][..],
        ),
        (
            "size",
            &["size", "testdata/secrets/list-all.yaml", "-o", "yaml"],
        ),
        (
            "lint",
            &["lint", "testdata/secrets/list-all.yaml", "-o", "yaml"],
        ),
        ("checks", &["lint", "--list-checks", "-o", "yaml"]),
        ("clouds", &["clouds", "-o", "yaml"]),
        ("version", &["version", "-o", "yaml"]),
        (
            "doctor",
            &[
                "doctor",
                "crates/payload-doctor/tests/data/dumps/multi.yaml",
                "-o",
                "yaml",
            ],
        ),
    ] {
        assert_valid_document(name, &document_of(args), &args.join(" "));
    }
}

#[test]
fn diff_documents_validate_against_their_schema() {
    let secrets = "testdata/secrets";
    for (before, after) in [
        ("list-all.yaml", "list-main-branch.yaml"),
        (
            "init-cloud-config-online.yaml",
            "init-ignition-gzip-online.yaml",
        ),
        (
            "worker-cloud-config-online.yaml",
            "worker-cloud-config-upstream-cis.yaml",
        ),
        ("list-all.yaml", "list-all.json"),
    ] {
        let (before, after) = (format!("{secrets}/{before}"), format!("{secrets}/{after}"));
        for extra in [&[][..], &["--ignore", "token,ca"]] {
            let mut args = vec!["diff", &before, &after, "-o", "json"];
            args.extend(extra);
            assert_valid_document("diff", &document_of(&args), &args.join(" "));
        }
    }
    let args = [
        "diff",
        "examples/preview/demo-cluster.yaml",
        "examples/preview/clusterclass.yaml",
        "-o",
        "json",
    ];
    assert_valid_document("diff", &document_of(&args), &args.join(" "));
}

#[test]
fn doctor_documents_validate_against_their_schema() {
    let dumps = repo().join("crates/payload-doctor/tests/data/dumps");
    let mut paths: Vec<PathBuf> = std::fs::read_dir(&dumps)
        .expect("dumps")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.is_dir() || p.extension().is_some_and(|e| e == "yaml" || e == "json"))
        .filter(|p| !p.ends_with("expected.json"))
        .collect();
    paths.sort();
    assert!(paths.len() > 10, "{paths:?}");
    for path in paths {
        let path = path.display().to_string();
        let args = ["doctor", path.as_str(), "-o", "json"];
        assert_valid_document("doctor", &document_of(&args), &args.join(" "));
    }
}

#[test]
fn the_tables_and_the_version_validate_against_their_schemas() {
    for (name, args) in [
        ("checks", &["lint", "--list-checks", "-o", "json"][..]),
        ("clouds", &["clouds", "-o", "json"]),
        ("version", &["version", "-o", "json"]),
    ] {
        let doc = document_of(args);
        assert_eq!(doc["schema"], format!("rke2-payload/{name}/v1"));
        assert_valid_document(name, &doc, &args.join(" "));
    }
}

/// The first finding of a lint document.
fn finding(doc: &mut Value) -> &mut serde_json::Map<String, Value> {
    doc["secrets"]
        .as_array_mut()
        .and_then(|s| s.iter_mut().find(|s| s["findings"][0].is_object()))
        .and_then(|s| s["findings"][0].as_object_mut())
        .expect("a finding")
}

/// The schemas catch drift: a field the schema does not know, a required field missing, a
/// value of another type or an unknown id each fail validation.
#[test]
fn the_schemas_refuse_what_the_tool_does_not_write() {
    let lint = document_of(&["lint", "testdata/secrets/list-all.yaml", "-o", "json"]);
    assert_valid_document("lint", &lint, "lint");
    let validator = jsonschema::validator_for(&committed("lint")).expect("compiles");
    let mut extra = lint.clone();
    finding(&mut extra).insert("confidence".to_owned(), "high".into());
    assert!(!validator.is_valid(&extra), "an unknown field passed");
    let mut missing = lint.clone();
    finding(&mut missing).remove("severity");
    assert!(!validator.is_valid(&missing), "a missing field passed");
    let mut unknown = lint.clone();
    finding(&mut unknown).insert("id".to_owned(), "no-such-check".into());
    assert!(!validator.is_valid(&unknown), "an unknown check id passed");
    let mut retyped = lint.clone();
    retyped["summary"]["errors"] = "3".into();
    assert!(!validator.is_valid(&retyped), "a retyped count passed");
    let mut renamed = lint;
    renamed["schema"] = "rke2-payload/lint/v2".into();
    assert!(!validator.is_valid(&renamed), "another schema id passed");

    // An unreadable Secret's item is closed too.
    let inspect = document_of(&["inspect", "testdata/bad/bad-base64.yaml", "-o", "json"]);
    assert!(inspect["secrets"][0]["error"]["message"].is_string());
    let validator = jsonschema::validator_for(&committed("inspect")).expect("compiles");
    assert!(validator.is_valid(&inspect));
    let mut extra = inspect;
    extra["secrets"][0]["error"]["code"] = 3.into();
    assert!(!validator.is_valid(&extra));
}

#[test]
fn o_name_lists_secrets_as_kubectl_names_them() {
    let list = "testdata/secrets/list-all.yaml";
    let lines = |args: &[&str]| -> (Vec<String>, Option<i32>) {
        let out = cmd().current_dir(repo()).args(args).output().expect("run");
        let text = String::from_utf8(out.stdout).expect("UTF-8");
        (text.lines().map(str::to_owned).collect(), out.status.code())
    };
    // inspect: every bootstrap Secret, in input order, as the JSON document lists them.
    let (names, code) = lines(&["inspect", list, "-o", "name"]);
    assert_eq!(code, Some(0));
    let doc = document_of(&["inspect", list, "-o", "json"]);
    let expected: Vec<String> = doc["secrets"]
        .as_array()
        .expect("secrets")
        .iter()
        .map(|s| {
            format!(
                "secret/{}/{}",
                s["namespace"].as_str().expect("namespace"),
                s["name"].as_str().expect("name")
            )
        })
        .collect();
    assert_eq!(names, expected);
    assert_eq!(names.len(), bootstrap_in_list());

    // lint: the Secrets that fail the gate; with --deny warnings, those with warnings too.
    let lint = document_of(&["lint", list, "-o", "json"]);
    let failing = |deny_warnings: bool| -> Vec<String> {
        lint["secrets"]
            .as_array()
            .expect("secrets")
            .iter()
            .filter(|s| {
                s["findings"].as_array().expect("findings").iter().any(|f| {
                    f["severity"] == "error" || (deny_warnings && f["severity"] == "warning")
                })
            })
            .map(|s| {
                format!(
                    "secret/{}/{}",
                    s["namespace"].as_str().expect("ns"),
                    s["name"].as_str().expect("name")
                )
            })
            .collect()
    };
    let (names, code) = lines(&["lint", list, "-o", "name"]);
    assert_eq!(names, failing(false));
    assert!(!names.is_empty());
    assert_eq!(code, Some(1), "the exit code is the gate's");
    let (names, _) = lines(&["lint", list, "-o", "name", "--deny", "warnings"]);
    assert_eq!(names, failing(true));
    assert!(names.len() > failing(false).len());

    // size: the Secrets that do not fit a target.
    let over = |extra: &[&str]| -> Vec<String> {
        let mut args = vec!["size", list, "-o", "json"];
        args.extend(extra);
        document_of(&args)["secrets"]
            .as_array()
            .expect("secrets")
            .iter()
            .filter(|s| {
                s["clouds"]
                    .as_array()
                    .expect("clouds")
                    .iter()
                    .any(|v| v["fits"] == false)
            })
            .map(|s| {
                format!(
                    "secret/{}/{}",
                    s["namespace"].as_str().expect("ns"),
                    s["name"].as_str().expect("name")
                )
            })
            .collect()
    };
    let budget = ["--budget", "3000"];
    let (names, code) = lines(&["size", list, "--budget", "3000", "-o", "name"]);
    assert!(
        !names.is_empty() && names.len() < bootstrap_in_list(),
        "{names:?}"
    );
    assert_eq!(names, over(&budget));
    assert_eq!(code, Some(1));
    let (names, code) = lines(&["size", list, "--cloud", "aws", "-o", "name"]);
    assert!(names.is_empty(), "{names:?}");
    assert_eq!(code, Some(0));

    // A Secret without a namespace is `secret/NAME`; bare user data has no name.
    let (names, _) = lines(&[
        "inspect",
        "testdata/secrets/worker-cloud-config-online.userdata",
        "-o",
        "name",
    ]);
    assert!(names.is_empty(), "{names:?}");

    // The check ids, what --allow takes.
    let (ids, code) = lines(&["lint", "--list-checks", "-o", "name"]);
    assert_eq!(code, Some(0));
    assert!(ids.iter().any(|i| i == "server-port"));
    assert!(ids.iter().all(|i| !i.contains(' ')));
}

#[test]
fn o_name_escapes_names_from_the_input() {
    let input = "apiVersion: v1
kind: Secret
metadata: {name: \"evil\\e[2Jname\", namespace: \"ns\\u202e\"}
stringData: {format: cloud-config, value: \"#cloud-config\\nruncmd: [reboot]\\n\"}
";
    let out = cmd()
        .args(["inspect", "-o", "name"])
        .write_stdin(input)
        .output()
        .expect("run");
    let text = String::from_utf8(out.stdout).expect("UTF-8");
    assert!(
        !text.contains('\u{1b}') && !text.contains('\u{202e}'),
        "{text:?}"
    );
    assert!(text.starts_with("secret/ns"), "{text:?}");
}

#[test]
fn version_says_the_commit_and_the_documents() {
    let doc = document_of(&["version", "-o", "json"]);
    assert_eq!(doc["version"], env!("CARGO_PKG_VERSION"));
    assert!(doc["target"].as_str().is_some_and(|t| t.contains('-')));
    for name in DOCUMENTS {
        assert_eq!(doc["documents"][name], format!("rke2-payload/{name}/v1"));
    }
    // Built from this checkout, the commit is HEAD's (when git can say).
    let head = std::process::Command::new("git")
        .current_dir(repo())
        .args(["rev-parse", "HEAD"])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned());
    let text = cmd().arg("--version").output().expect("run");
    let text = String::from_utf8(text.stdout).expect("UTF-8");
    match doc["commit"].as_str() {
        Some(commit) => {
            assert_eq!(commit.len(), 40);
            assert!(
                doc["commit_date"].as_str().is_some_and(|d| d.len() == 10),
                "{doc}"
            );
            if let Some(head) = head.filter(|_| std::env::var_os("RKE2_PAYLOAD_COMMIT").is_none()) {
                // A commit made since the build is not the binary's: only check a prefix is
                // a commit of this repository.
                let known = std::process::Command::new("git")
                    .current_dir(repo())
                    .args(["cat-file", "-e", &format!("{commit}^{{commit}}")])
                    .status()
                    .is_ok_and(|s| s.success());
                assert!(known || head == commit, "{commit} is not a commit here");
            }
            assert!(text.contains(&format!("({} ", &commit[..7])), "{text}");
        }
        None => {
            assert!(doc["commit_date"].is_null());
            assert_eq!(
                text.trim(),
                format!("rke2-payload {}", env!("CARGO_PKG_VERSION"))
            );
        }
    }
    let plain = cmd().arg("version").output().expect("run");
    assert_eq!(String::from_utf8(plain.stdout).expect("UTF-8"), text);
}
