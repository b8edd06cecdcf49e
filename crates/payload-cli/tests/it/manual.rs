//! The manual pages as `man` shows them: groff renders every page, each example is one line,
//! and each page says its exit codes and the environment variables the tool reads.

use std::path::{Path, PathBuf};
use std::process::Command as Process;

use crate::common::*;

/// The subcommands, from the pages `man --dir` wrote (`rke2-payload-<subcommand>.1`).
fn subcommands(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .expect("the pages")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .filter_map(|n| {
            Some(
                n.strip_prefix("rke2-payload-")?
                    .strip_suffix(".1")?
                    .to_owned(),
            )
        })
        .collect();
    names.sort();
    names
}

/// The example commands of a subcommand's `--help`.
fn examples(sub: &str) -> Vec<String> {
    let out = cmd().args([sub, "--help"]).output().expect("run");
    let help = String::from_utf8_lossy(&out.stdout).into_owned();
    let Some(start) = help.find("Examples:\n") else {
        return Vec::new();
    };
    help[start + "Examples:\n".len()..]
        .lines()
        .take_while(|l| l.starts_with("  "))
        .map(|l| l.trim().to_owned())
        .collect()
}

/// A page as `man` on a terminal 80 columns wide shows it (`-k`: its UTF-8 read as man-db
/// reads it, through preconv): plain text, groff's typographic minus and
/// quotes back to ASCII. Any warning of groff's fails.
fn rendered(page: &Path) -> String {
    let out = Process::new("groff")
        .args(["-k", "-man", "-Tutf8", "-ww", "-rLL=78n", "-P-cbou"])
        .arg(page)
        .env("LC_ALL", "C.UTF-8")
        .output()
        .expect("groff runs");
    assert!(out.status.success(), "{}", page.display());
    assert!(
        out.stderr.is_empty(),
        "{}: {}",
        page.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .replace(['\u{2212}', '\u{2010}'], "-")
        .replace(['\u{2018}', '\u{2019}'], "'")
        .replace(['\u{201c}', '\u{201d}'], "\"")
}

/// The terms of a section's `.TP` list: the first word of each line at the section's least
/// indentation (the descriptions are indented further, or follow a short term on its line).
fn terms(text: &str, heading: &str) -> Vec<String> {
    let mut lines = text.lines();
    if lines.by_ref().find(|l| *l == heading).is_none() {
        return Vec::new();
    }
    let body: Vec<&str> = lines
        .take_while(|l| l.is_empty() || l.starts_with(' '))
        .filter(|l| !l.trim().is_empty())
        .collect();
    let indent = |l: &str| l.len() - l.trim_start().len();
    let least = body.iter().map(|l| indent(l)).min().unwrap_or(0);
    body.iter()
        .filter(|l| indent(l) == least)
        .filter_map(|l| l.split_whitespace().next())
        .map(str::to_owned)
        .collect()
}

/// The lines of one section (`NAME` … up to the next heading), trimmed.
fn section(text: &str, heading: &str) -> Option<Vec<String>> {
    let mut lines = text.lines();
    lines.by_ref().find(|l| *l == heading)?;
    Some(
        lines
            .take_while(|l| l.is_empty() || l.starts_with(' '))
            .map(|l| l.trim().to_owned())
            .filter(|l| !l.is_empty())
            .collect(),
    )
}

fn root() -> PathBuf {
    testdata().join("..")
}

#[test]
fn each_manual_page_renders_with_whole_examples_exit_codes_and_environment() {
    if !have_tool("groff", &["--version"], "groff-base") {
        return;
    }
    let folder = scratch();
    let dir = folder.path().join("man1");
    cmd().args(["man", "--dir"]).arg(&dir).assert().success();
    let subs = subcommands(&dir);
    assert!(subs.len() >= 10, "{subs:?}");

    // The environment variables the command line reads: each is on the tool's page.
    let mut sources = Vec::new();
    let mut stack = vec![root().join("crates/payload-cli/src")];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).expect("dir") {
            let path = entry.expect("entry").path();
            if path.is_dir() {
                stack.push(path);
            } else {
                sources.push(std::fs::read_to_string(&path).expect("source"));
            }
        }
    }
    let mut read: Vec<String> = Vec::new();
    for text in &sources {
        for marker in ["env::var_os(\"", "env::var(\""] {
            for (at, _) in text.match_indices(marker) {
                let name = text[at + marker.len()..].split('"').next().expect("name");
                read.push(name.to_owned());
            }
        }
    }
    assert!(read.contains(&"GITHUB_STEP_SUMMARY".to_owned()), "{read:?}");
    let tool = rendered(&dir.join("rke2-payload.1"));
    let environment = terms(&tool, "ENVIRONMENT");
    for name in read
        .iter()
        .map(String::as_str)
        .chain(["NO_COLOR", "KUBECONFIG"])
    {
        assert!(
            environment.iter().any(|l| l == name),
            "{name} is read but not in ENVIRONMENT: {environment:#?}"
        );
    }
    assert_eq!(terms(&tool, "EXIT STATUS"), ["0", "1", "2"]);

    let mut longest = 0;
    for sub in &subs {
        let page = dir.join(format!("rke2-payload-{sub}.1"));
        let text = rendered(&page);
        // Every example on a line of its own, whole (the indentation aside).
        let examples = examples(sub);
        assert!(!examples.is_empty(), "{sub} has no examples");
        let shown = section(&text, "EXAMPLES").unwrap_or_else(|| panic!("{sub}: no EXAMPLES"));
        assert_eq!(shown, examples, "{sub}: the examples as man shows them");
        longest = longest.max(examples.iter().map(String::len).max().unwrap_or(0));
        // 0 and 2 always; 1 when the subcommand's code can end in a failed check.
        let codes = terms(&text, "EXIT STATUS");
        let code =
            std::fs::read_to_string(root().join(format!("crates/payload-cli/src/cmd/{sub}.rs")))
                .unwrap_or_default();
        let fails = code.contains("Outcome::CheckFailed");
        let want: &[&str] = if fails { &["0", "1", "2"] } else { &["0", "2"] };
        assert_eq!(codes, want, "{sub}");
        // The colour variables on every page; kubectl's where the cluster is read.
        let environment = terms(&text, "ENVIRONMENT");
        assert!(environment.iter().any(|l| l == "NO_COLOR"), "{sub}");
        let from_cluster = String::from_utf8_lossy(
            &cmd()
                .args([sub.as_str(), "--help"])
                .output()
                .expect("run")
                .stdout,
        )
        .contains("--from-cluster");
        assert_eq!(
            environment.iter().any(|l| l == "KUBECONFIG"),
            from_cluster,
            "{sub}: {environment:#?}"
        );
        assert_eq!(
            environment.iter().any(|l| l == "GITHUB_STEP_SUMMARY"),
            sub == "lint",
            "{sub}"
        );
    }
    // Wider than the page (78 columns, less the indentation): had groff filled them, the longest
    // would have been cut.
    assert!(longest > 78, "{longest}");
}
