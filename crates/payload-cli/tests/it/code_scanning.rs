//! SARIF that GitHub code scanning takes, and GitHub annotations within its limits: files
//! relative to the repository root however they are typed, standard input named or refused,
//! security rules tagged, help that exists, results capped with a note; annotations most
//! severe first, at most ten a level, everything in the step summary.

use std::path::Path;

use serde_json::Value;

use crate::common::*;

/// A List of `n` copies of a worker Secret, named apart, each of a cluster of its own (so one
/// `egress-required` note each: the note is said once per cluster).
fn many_workers(n: usize) -> Vec<u8> {
    let text = std::fs::read_to_string(testdata().join("secrets/worker-cloud-config-online.yaml"))
        .expect("fixture");
    let secret: Value = serde_saphyr::from_str(&text).expect("YAML");
    let items: Vec<Value> = (0..n)
        .map(|i| {
            let mut s = secret.clone();
            s["metadata"]["name"] = Value::String(format!("demo-md-0-{i:05}"));
            s["metadata"]["labels"]["cluster.x-k8s.io/cluster-name"] =
                Value::String(format!("demo-{i:05}"));
            s
        })
        .collect();
    serde_json::to_vec(&serde_json::json!({"apiVersion": "v1", "kind": "List", "items": items}))
        .expect("JSON")
}

/// A repository with the fixture list at `sub/list.json`.
fn repository() -> tempfile::TempDir {
    let dir = scratch();
    std::fs::create_dir(dir.path().join(".git")).expect("a .git folder");
    std::fs::create_dir(dir.path().join("sub")).expect("sub");
    std::fs::copy(
        testdata().join("secrets/list-all.json"),
        dir.path().join("sub/list.json"),
    )
    .expect("copy");
    dir
}

fn sarif_in(dir: &Path, args: &[&str], stdin: Option<Vec<u8>>) -> (Option<i32>, Vec<u8>, String) {
    let mut c = cmd();
    c.current_dir(dir).env_remove("GITHUB_WORKSPACE").args(args);
    if let Some(bytes) = stdin {
        c.write_stdin(bytes);
    }
    let out = c.output().expect("run");
    (
        out.status.code(),
        out.stdout,
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn sarif_locates_every_result_relative_to_the_repository_root() {
    let repo = repository();
    let absolute = repo.path().join("sub/list.json").display().to_string();
    let inner = repo.path().join("sub");
    for (cwd, path) in [
        (repo.path(), "sub/list.json"),
        (repo.path(), "./sub/list.json"),
        (repo.path(), absolute.as_str()),
        (inner.as_path(), "list.json"),
        (inner.as_path(), "../sub/./list.json"),
    ] {
        let (code, out, err) = sarif_in(cwd, &["lint", path, "-o", "sarif"], None);
        assert!(code.is_some_and(|c| c < 2), "{path}: {err}");
        let doc: Value = serde_json::from_slice(&out).expect("SARIF");
        let run = &doc["runs"][0];
        let root = run["originalUriBaseIds"]["%SRCROOT%"]["uri"]
            .as_str()
            .expect("the root's URI");
        assert!(
            root.starts_with("file:///") && root.ends_with('/'),
            "{root}"
        );
        let results = run["results"].as_array().expect("results");
        assert!(!results.is_empty());
        for r in results {
            let location = &r["locations"][0]["physicalLocation"];
            assert_eq!(
                location["artifactLocation"]["uri"], "sub/list.json",
                "{path}"
            );
            assert_eq!(
                location["artifactLocation"]["uriBaseId"], "%SRCROOT%",
                "{path}"
            );
            assert!(location["region"]["startLine"].as_u64().is_some());
        }
    }
}

#[test]
fn sarif_from_standard_input_is_named_or_refused() {
    let repo = repository();
    let bytes = std::fs::read(repo.path().join("sub/list.json")).expect("read");
    let (code, out, err) = sarif_in(
        repo.path(),
        &["lint", "-", "-o", "sarif"],
        Some(bytes.clone()),
    );
    assert_eq!(code, Some(2), "{err}");
    assert!(out.is_empty());
    assert!(err.contains("--stdin-filename"), "{err}");
    let (code, out, err) = sarif_in(
        repo.path(),
        &[
            "lint",
            "-",
            "-o",
            "sarif",
            "--stdin-filename",
            "sub/list.json",
        ],
        Some(bytes),
    );
    assert!(code.is_some_and(|c| c < 2), "{err}");
    let doc: Value = serde_json::from_slice(&out).expect("SARIF");
    for r in doc["runs"][0]["results"].as_array().expect("results") {
        assert_eq!(
            r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
            "sub/list.json"
        );
    }
    // Naming a file that is not standard input is a usage error.
    let (code, _, err) = sarif_in(
        repo.path(),
        &[
            "lint",
            "sub/list.json",
            "-o",
            "sarif",
            "--stdin-filename",
            "x.json",
        ],
        None,
    );
    assert_eq!(code, Some(2), "{err}");
}

#[test]
fn security_rules_are_tagged_and_help_points_at_the_check_table() {
    let repo = repository();
    let (_, out, err) = sarif_in(repo.path(), &["lint", "sub/list.json", "-o", "sarif"], None);
    let doc: Value = serde_json::from_slice(&out).unwrap_or_else(|e| panic!("{e}: {err}"));
    let rules = doc["runs"][0]["tool"]["driver"]["rules"]
        .as_array()
        .expect("rules");
    let tagged: Vec<&str> = rules
        .iter()
        .filter(|r| {
            r["properties"]["tags"]
                .as_array()
                .is_some_and(|t| t.iter().any(|t| t == "security"))
        })
        .map(|r| r["id"].as_str().unwrap_or(""))
        .collect();
    for id in [
        "key-permissions",
        "token-ca-hash",
        "remote-content",
        "airgap-no-checksum",
    ] {
        assert!(tagged.contains(&id), "{id}: {tagged:?}");
    }
    assert!(!tagged.contains(&"size-over-limit"));
    for rule in rules {
        if let Some(score) = rule["properties"]["security-severity"].as_str() {
            let score: f64 = score.parse().expect("a number");
            assert!(score > 0.0 && score <= 10.0, "{score}");
        }
        let help = rule["helpUri"].as_str().expect("helpUri");
        assert!(
            help.starts_with("https://") && help.ends_with("#checks"),
            "{help}"
        );
    }
    // The anchor is the README's check table.
    let readme = std::fs::read_to_string(testdata().join("../README.md")).expect("README");
    assert!(readme.lines().any(|l| l == "### Checks"));
    assert!(
        !doc["runs"][0]["tool"]["driver"]["informationUri"]
            .as_str()
            .unwrap_or("")
            .contains("crates.io/crates/rke2-payload-cli")
    );
}

#[test]
fn past_github_s_limits_the_most_severe_are_kept_and_the_rest_counted() {
    let repo = repository();
    let list = repo.path().join("many.json");
    std::fs::write(&list, many_workers(5_003)).expect("write");
    let (code, out, err) = sarif_in(repo.path(), &["lint", "many.json", "-o", "sarif"], None);
    assert!(code.is_some_and(|c| c < 2), "{err}");
    let doc: Value = serde_json::from_slice(&out).expect("SARIF");
    let run = &doc["runs"][0];
    assert_eq!(run["results"].as_array().expect("results").len(), 5_000);
    let note = run["invocations"][0]["toolExecutionNotifications"][0]["message"]["text"]
        .as_str()
        .expect("a notification");
    assert!(note.starts_with("3 of 5003 results are left out"), "{note}");

    // GitHub annotations: at most ten a level, the last one counting the rest; the step
    // summary has every finding.
    let summary = repo.path().join("summary.md");
    let out = cmd()
        .current_dir(repo.path())
        .env("GITHUB_STEP_SUMMARY", &summary)
        .args(["lint", "sub/list.json", "-o", "github"])
        .output()
        .expect("run");
    let text = String::from_utf8_lossy(&out.stdout);
    let levels: Vec<&str> = text
        .lines()
        .map(|l| l.split([' ', ':']).find(|w| !w.is_empty()).unwrap_or(""))
        .collect();
    // Most severe first.
    let rank = |l: &str| match l {
        "error" => 0,
        "warning" => 1,
        _ => 2,
    };
    assert!(
        levels.windows(2).all(|w| rank(w[0]) <= rank(w[1])),
        "{levels:?}"
    );
    for level in ["error", "warning", "notice"] {
        assert!(
            levels.iter().filter(|l| **l == level).count() <= 10,
            "{level}: {text}"
        );
    }
    let json = cmd()
        .args(["lint", "-o", "json"])
        .arg(repo.path().join("sub/list.json"))
        .output()
        .expect("run");
    let report: Value = serde_json::from_slice(&json.stdout).expect("JSON");
    let infos = report["summary"]["infos"].as_u64().expect("infos") as usize;
    assert!(infos > 10, "the fixture has more notes than GitHub shows");
    assert!(
        text.contains(&format!(
            "{} more findings of this level are not annotated",
            infos - 9
        )),
        "{text}"
    );
    // The annotations' files are relative to the repository root, however the path was typed.
    let absolute = repo.path().join("sub/list.json").display().to_string();
    for typed in ["./sub/list.json", absolute.as_str()] {
        let out = cmd()
            .current_dir(repo.path())
            .env_remove("GITHUB_STEP_SUMMARY")
            .args(["lint", typed, "-o", "github"])
            .output()
            .expect("run");
        for line in String::from_utf8_lossy(&out.stdout).lines() {
            if line.contains("file=") {
                assert!(line.contains("file=sub/list.json,"), "{typed}: {line}");
            }
        }
    }
    let md = std::fs::read_to_string(&summary).expect("the step summary");
    let rows = md
        .lines()
        .filter(|l| l.starts_with("| ") && !l.starts_with("| level"))
        .count();
    let total = infos
        + report["summary"]["errors"].as_u64().expect("errors") as usize
        + report["summary"]["warnings"].as_u64().expect("warnings") as usize;
    assert_eq!(rows, total, "{md}");
}

#[test]
fn the_step_summary_stays_within_github_s_mebibyte_and_says_what_it_left_out() {
    // GitHub drops a step's whole summary past 1 MiB (the file's size, what earlier steps or
    // commands of the step wrote included).
    const LIMIT: usize = 1 << 20;
    let repo = repository();
    std::fs::write(repo.path().join("many.json"), many_workers(5_003)).expect("write");
    let summary = repo.path().join("summary.md");
    let before = format!("## An earlier report\n\n{}\n", "x".repeat(400_000));
    std::fs::write(&summary, &before).expect("write");
    let out = cmd()
        .current_dir(repo.path())
        .env("GITHUB_STEP_SUMMARY", &summary)
        .args(["lint", "many.json", "-o", "github"])
        .output()
        .expect("run");
    assert!(
        out.status.code().is_some_and(|c| c < 2),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let md = std::fs::read_to_string(&summary).expect("the step summary");
    assert!(md.len() <= LIMIT, "{} bytes", md.len());
    assert!(md.starts_with(&before), "what was there is kept");
    assert!(
        md.len() > LIMIT - 2_000,
        "the room is used: {} bytes",
        md.len()
    );
    let rows = md
        .lines()
        .filter(|l| l.starts_with("| ") && !l.starts_with("| level"))
        .count();
    let last = md.trim_end().lines().last().expect("a last line");
    assert_eq!(
        last,
        format!(
            "**{} of 5003 findings are left out**: GitHub takes at most 1024 KiB of a step's summary. `rke2-payload lint` (or `-o json`) lists them all.",
            5_003 - rows
        ),
        "{rows} rows"
    );
    assert!(rows > 1_000 && rows < 5_003, "{rows}");

    // A file already full: nothing is added, so GitHub still shows what was there.
    let full = "y".repeat(LIMIT - 10);
    std::fs::write(&summary, &full).expect("write");
    let out = cmd()
        .current_dir(repo.path())
        .env("GITHUB_STEP_SUMMARY", &summary)
        .args(["lint", "many.json", "-o", "github"])
        .output()
        .expect("run");
    assert!(out.status.code().is_some_and(|c| c < 2));
    assert_eq!(std::fs::read_to_string(&summary).expect("summary"), full);
}

/// A repository with two Secret files in two folders: the second after a ConfigMap of 7 lines,
/// so that it is on another line than the first.
fn two_files() -> tempfile::TempDir {
    let dir = scratch();
    std::fs::create_dir(dir.path().join(".git")).expect("a .git folder");
    let text = std::fs::read_to_string(testdata().join("secrets/worker-cloud-config-online.yaml"))
        .expect("fixture");
    for (folder, file, name, pad) in [("a", "one.yaml", "one", 0), ("b", "two.yaml", "two", 7)] {
        std::fs::create_dir_all(dir.path().join(folder)).expect("folder");
        let mut secret: Value = serde_saphyr::from_str(&text).expect("YAML");
        secret["metadata"]["name"] = Value::String(name.to_owned());
        // A cluster each, so that each has its `egress-required` note.
        secret["metadata"]["labels"]["cluster.x-k8s.io/cluster-name"] =
            Value::String(name.to_owned());
        let body = serde_saphyr::to_string(&secret).expect("YAML");
        std::fs::write(
            dir.path().join(folder).join(file),
            format!(
                "{}{body}",
                if pad > 0 {
                    "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: pad\ndata:\n  a: b\n---\n"
                } else {
                    ""
                }
            ),
        )
        .expect("write");
    }
    dir
}

#[test]
fn each_input_file_s_secrets_are_placed_in_that_file() {
    let repo = two_files();
    // The line of each Secret's value, as the JSON report says, in its own file.
    let (_, out, err) = sarif_in(
        repo.path(),
        &["lint", "a/one.yaml", "b/two.yaml", "-o", "json"],
        None,
    );
    let doc: Value = serde_json::from_slice(&out).unwrap_or_else(|e| panic!("{e}: {err}"));
    let mut lines = std::collections::BTreeMap::new();
    for s in doc["secrets"].as_array().expect("secrets") {
        lines.insert(
            s["name"].as_str().expect("name").to_owned(),
            (
                s["file"]
                    .as_str()
                    .expect("the file of each of two")
                    .to_owned(),
                s["line"].as_u64().expect("line"),
            ),
        );
    }
    assert_eq!(lines["one"].0, "a/one.yaml");
    assert_eq!(lines["two"].0, "b/two.yaml");
    assert_eq!(lines["two"].1, lines["one"].1 + 7, "{lines:?}");

    for args in [
        &["lint", "a/one.yaml", "b/two.yaml", "-o", "sarif"][..],
        &["lint", ".", "-o", "sarif"][..],
    ] {
        let (code, out, err) = sarif_in(repo.path(), args, None);
        assert!(code.is_some_and(|c| c < 2), "{args:?}: {err}");
        let doc: Value = serde_json::from_slice(&out).expect("SARIF");
        let results = doc["runs"][0]["results"].as_array().expect("results");
        let mut seen = std::collections::BTreeSet::new();
        for r in results {
            let who = r["properties"]["secret"].as_str().expect("secret");
            let name = who.rsplit('/').next().expect("name");
            let at = &r["locations"][0]["physicalLocation"];
            assert_eq!(
                at["artifactLocation"]["uri"], lines[name].0,
                "{args:?}: {who} placed in the wrong file"
            );
            assert_eq!(at["region"]["startLine"], lines[name].1, "{args:?}: {who}");
            seen.insert(name.to_owned());
        }
        assert_eq!(seen.len(), 2, "{args:?}: findings of both Secrets");
        // The same finding in two files is two alerts, not one.
        let prints: std::collections::BTreeSet<&str> = results
            .iter()
            .map(|r| {
                r["partialFingerprints"]["rke2PayloadFinding/v1"]
                    .as_str()
                    .expect("fp")
            })
            .collect();
        assert_eq!(prints.len(), results.len(), "{args:?}: fingerprints apart");
    }

    let (_, out, _) = sarif_in(
        repo.path(),
        &["lint", "a/one.yaml", "b/two.yaml", "-o", "github"],
        None,
    );
    let text = String::from_utf8(out).expect("UTF-8");
    assert!(
        text.contains(&format!("file=b/two.yaml,line={}", lines["two"].1)),
        "{text}"
    );
    assert!(
        !text.contains(&format!("file=a/one.yaml,line={}", lines["two"].1)),
        "{text}"
    );

    let (_, out, _) = sarif_in(
        repo.path(),
        &["lint", "a/one.yaml", "b/two.yaml", "-o", "gitlab"],
        None,
    );
    let doc: Value = serde_json::from_slice(&out).expect("GitLab JSON");
    for issue in doc.as_array().expect("issues") {
        let path = issue["location"]["path"].as_str().expect("path");
        let line = issue["location"]["lines"]["begin"].as_u64().expect("line");
        assert!(
            (path, line) == (lines["one"].0.as_str(), lines["one"].1)
                || (path, line) == (lines["two"].0.as_str(), lines["two"].1),
            "{issue}"
        );
    }

    let (_, out, _) = sarif_in(repo.path(), &["lint", "a/one.yaml", "b/two.yaml"], None);
    let text = String::from_utf8(out).expect("UTF-8");
    assert!(
        text.contains(&format!("(b/two.yaml:{})", lines["two"].1)),
        "the text report names the file of each of two: {text}"
    );
    // A single input is named by the reader: the text stays as it was.
    let (_, out, _) = sarif_in(repo.path(), &["lint", "a/one.yaml"], None);
    let text = String::from_utf8(out).expect("UTF-8");
    assert!(!text.contains("(a/one.yaml"), "{text}");
}
