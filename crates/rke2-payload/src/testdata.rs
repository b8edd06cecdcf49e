//! Where the unit tests find their fixtures, in the repository and in the crate's package.
//!
//! The fixtures they read are copies kept in `tests/data/` of this crate (made by
//! `scripts/sync-test-data.sh` from the repository's `testdata/`), so that the tests run from the
//! package crates.io serves. What only the repository holds (the saved fuzz inputs, the invalid
//! and generated fixtures) is found through [`repository`], which is `None` in a package.

use std::path::{Path, PathBuf};

/// This crate's own test data (`tests/data/`), in the repository and in the package alike.
pub(crate) fn crate_data() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data")
}

/// The repository's root, when the crate is built inside it: the workspace's `Cargo.toml` two
/// folders up names this crate as a member. From an unpacked package there is none; the caller
/// skips what needs it and says so (`what` names it in the note).
pub(crate) fn repository(what: &str) -> Option<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let manifest = std::fs::read_to_string(root.join("Cargo.toml")).unwrap_or_default();
    if manifest.contains("[workspace]") && manifest.contains("\"crates/rke2-payload\"") {
        Some(root)
    } else {
        eprintln!("note: skipped {what}: not in the rke2-payload repository (a packaged crate)");
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(dir: &Path) -> Vec<String> {
        let mut out: Vec<String> = std::fs::read_dir(dir)
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
            .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
            .collect();
        out.sort();
        out
    }

    /// Every copy in `tests/data/secrets/` is the repository's file, byte for byte, and every
    /// file the copy script takes is there (rerun `scripts/sync-test-data.sh` when this fails).
    #[test]
    fn the_copies_are_the_repository_s() {
        let Some(root) = repository("the comparison of the test data with the repository's") else {
            return;
        };
        let source = root.join("testdata/secrets");
        let copy = crate_data().join("secrets");
        let wanted: Vec<String> = names(&source)
            .into_iter()
            .filter(|n| !(n.starts_with("list-") && n.ends_with(".json")))
            .collect();
        assert_eq!(
            names(&copy),
            wanted,
            "rerun scripts/sync-test-data.sh: the copies are not the repository's files"
        );
        let mut pairs: Vec<(PathBuf, PathBuf)> = wanted
            .iter()
            .map(|n| (source.join(n), copy.join(n)))
            .collect();
        pairs.push((
            root.join("testdata/go-gzip-sizes.json"),
            crate_data().join("go-gzip-sizes.json"),
        ));
        for (from, to) in pairs {
            assert!(
                std::fs::read(&from).expect("source") == std::fs::read(&to).expect("copy"),
                "{} differs from {}: rerun scripts/sync-test-data.sh",
                to.display(),
                from.display()
            );
        }
    }

    #[test]
    fn the_repository_is_found_in_the_repository_only() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let in_repository = root.join("crates/rke2-payload/src/testdata.rs").is_file();
        assert_eq!(repository("nothing").is_some(), in_repository);
    }
}
