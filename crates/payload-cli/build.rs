//! Records what the binary was built from, for `--version` and `rke2-payload version`:
//! `RKE2_PAYLOAD_COMMIT` (the full hash) and `RKE2_PAYLOAD_COMMIT_DATE` (its commit date,
//! `YYYY-MM-DD`) when the build runs in a git checkout of this repository, or when the builder
//! sets them; nothing otherwise (a packaged crate has no `.git`). Both are properties of the
//! source, not of the build, so builds stay reproducible. `RKE2_PAYLOAD_TARGET` is the target
//! triple.

use std::path::Path;
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-env-changed=RKE2_PAYLOAD_COMMIT");
    println!("cargo:rerun-if-env-changed=RKE2_PAYLOAD_COMMIT_DATE");
    if let Ok(target) = std::env::var("TARGET") {
        println!("cargo:rustc-env=RKE2_PAYLOAD_TARGET={target}");
    }
    let given = std::env::var("RKE2_PAYLOAD_COMMIT")
        .ok()
        .filter(|c| !c.is_empty());
    let (commit, date) = match given {
        Some(commit) => (
            Some(commit),
            std::env::var("RKE2_PAYLOAD_COMMIT_DATE")
                .ok()
                .filter(|d| !d.is_empty()),
        ),
        None => from_git(),
    };
    if let Some(commit) = commit {
        println!("cargo:rustc-env=RKE2_PAYLOAD_COMMIT={commit}");
        if let Some(date) = date {
            println!("cargo:rustc-env=RKE2_PAYLOAD_COMMIT_DATE={date}");
        }
    }
}

/// The commit and its date, when the crate is built inside a git checkout whose top is this
/// workspace (not a packaged crate unpacked in someone else's repository).
fn from_git() -> (Option<String>, Option<String>) {
    let Some(manifest) = std::env::var_os("CARGO_MANIFEST_DIR") else {
        return (None, None);
    };
    let workspace = Path::new(&manifest).join("../..");
    let Some(top) = git(&workspace, &["rev-parse", "--show-toplevel"]) else {
        return (None, None);
    };
    let same = |a: &Path, b: &Path| match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    };
    if !same(Path::new(&top), &workspace) {
        return (None, None);
    }
    // Build again when HEAD moves (a checkout, a commit on the branch).
    let mut watched = vec!["HEAD".to_owned()];
    if let Some(head) = git(&workspace, &["symbolic-ref", "-q", "HEAD"]) {
        watched.push(head);
        watched.push("packed-refs".to_owned());
    }
    for path in watched {
        if let Some(file) = git(&workspace, &["rev-parse", "--git-path", &path]) {
            let file = workspace.join(file);
            if file.exists() {
                println!("cargo:rerun-if-changed={}", file.display());
            }
        }
    }
    let commit = git(&workspace, &["rev-parse", "HEAD"]).filter(|c| c.len() == 40);
    let date = commit
        .as_ref()
        .and_then(|_| git(&workspace, &["log", "-1", "--format=%cs", "HEAD"]));
    (commit, date)
}

/// The trimmed output of a git command run in `dir`, if it succeeds.
fn git(dir: &Path, args: &[&str]) -> Option<String> {
    let out = Command::new("git")
        .current_dir(dir)
        .args(args)
        .output()
        .ok()?;
    let text = String::from_utf8(out.stdout).ok()?;
    let text = text.trim();
    (out.status.success() && !text.is_empty()).then(|| text.to_owned())
}
