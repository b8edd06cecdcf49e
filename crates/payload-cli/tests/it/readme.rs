//! The README shows what the binary prints: every `$ rke2-payload …` example in a `text` block is
//! run and its output compared, and the check table is the library's.

use crate::common::*;

fn readme() -> String {
    std::fs::read_to_string(testdata().join("../README.md")).expect("README")
}

/// (command line, expected output lines, expected exit code when an `echo $?` follows).
fn examples(readme: &str) -> Vec<(String, Vec<String>, Option<i32>)> {
    let mut out = Vec::new();
    let mut in_text = false;
    let mut current: Option<(String, Vec<String>, Option<i32>)> = None;
    let mut expect_code = false;
    for line in readme.lines() {
        if line.starts_with("```") {
            in_text = !in_text && line == "```text";
            if !in_text {
                out.extend(current.take());
            }
            continue;
        }
        if !in_text {
            continue;
        }
        if let Some(command) = line.strip_prefix("$ rke2-payload ") {
            out.extend(current.take());
            current = Some((command.to_owned(), Vec::new(), None));
        } else if line == "$ echo $?" {
            expect_code = true;
        } else if expect_code {
            if let Some(c) = current.as_mut() {
                c.2 = line.trim().parse().ok();
            }
            expect_code = false;
        } else if let Some(c) = current.as_mut() {
            c.1.push(line.to_owned());
        }
    }
    out.extend(current);
    out
}

#[test]
fn every_example_in_the_readme_is_what_the_binary_prints() {
    let readme = readme();
    let examples = examples(&readme);
    assert!(examples.len() >= 3, "{} examples", examples.len());
    for (command, expected, code) in examples {
        let out = cmd()
            .current_dir(testdata().join(".."))
            .env("NO_COLOR", "1")
            .args(command.split_whitespace())
            .output()
            .expect("run");
        let got: Vec<String> = String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(|l| l.trim_end().to_owned())
            .collect();
        let expected: Vec<String> = expected.iter().map(|l| l.trim_end().to_owned()).collect();
        assert_eq!(got, expected, "README example `rke2-payload {command}`");
        if let Some(code) = code {
            assert_eq!(out.status.code(), Some(code), "exit code of `{command}`");
        }
    }
}

#[test]
fn the_readme_check_table_is_the_library_s() {
    let readme = readme();
    let rows: Vec<(String, String, String)> = readme
        .lines()
        .filter_map(|l| l.strip_prefix("| `"))
        .filter_map(|l| {
            let cells: Vec<&str> = l.split(" | ").collect();
            let id = cells.first()?.strip_suffix('`')?;
            let summary = cells.get(2)?.strip_suffix(" |")?;
            rke2_payload::Check::from_id(id)?;
            Some((
                id.to_owned(),
                (*cells.get(1)?).to_owned(),
                summary.replace("&lt;", "<").replace("&gt;", ">"),
            ))
        })
        .collect();
    let table: Vec<(String, String, String)> = rke2_payload::Check::ALL
        .iter()
        .map(|c| {
            (
                c.id().to_owned(),
                c.severity().as_str().to_owned(),
                c.summary().to_owned(),
            )
        })
        .collect();
    assert_eq!(rows, table);
    // And `--list-checks` prints the same table.
    let out = cmd().args(["lint", "--list-checks"]).output().expect("run");
    let listed: Vec<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| l.split_whitespace().next().unwrap_or("").to_owned())
        .collect();
    let ids: Vec<String> = table.into_iter().map(|t| t.0).collect();
    assert_eq!(listed, ids);
}

#[test]
fn an_unknown_check_id_is_a_usage_error() {
    let out = cmd()
        .args(["lint", "--allow", "no-such-check"])
        .arg(testdata().join("secrets/worker-cloud-config-online.yaml"))
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
    assert!(String::from_utf8_lossy(&out.stderr).contains("unknown check id"));
}
