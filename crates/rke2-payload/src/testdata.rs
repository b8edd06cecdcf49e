//! Where the unit tests find their fixtures, in the repository and in the crate's package.
//!
//! The fixtures of bootstrap Secrets live in `tests/data/` of this crate, so that the tests run
//! from the package crates.io serves; the repository's `testdata/secrets` and
//! `testdata/go-gzip-sizes.json` are links to them (one tree, no copies). What only the
//! repository holds (the saved fuzz inputs, the invalid and generated fixtures) is found
//! through [`repository`], which is `None` in a package.

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

    /// The repository's `testdata/secrets` is this crate's folder, not a copy of it.
    #[test]
    fn the_repository_s_fixtures_are_this_crate_s() {
        let Some(root) = repository("the link from the repository's test data") else {
            return;
        };
        for name in ["secrets", "go-gzip-sizes.json"] {
            let linked = std::fs::canonicalize(root.join("testdata").join(name)).expect("testdata");
            let own = std::fs::canonicalize(crate_data().join(name)).expect("tests/data");
            assert_eq!(
                linked, own,
                "testdata/{name} is not a link to tests/data/{name}"
            );
        }
        assert!(names(&crate_data().join("secrets")).contains(&"INDEX.json".to_owned()));
    }

    #[test]
    fn the_repository_is_found_in_the_repository_only() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let in_repository = root.join("crates/rke2-payload/src/testdata.rs").is_file();
        assert_eq!(repository("nothing").is_some(), in_repository);
    }
}
