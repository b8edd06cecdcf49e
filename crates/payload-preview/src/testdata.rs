//! Where the unit tests find what only the repository holds (the saved fuzz inputs, the
//! fixtures of `testdata/`): [`repository`], which is `None` in a package. The crate's own
//! fixtures (`tests/data/`) are in its package and read with `include_str!`.

use std::path::{Path, PathBuf};

/// The repository's root, when the crate is built inside it: the workspace's `Cargo.toml` two
/// folders up names this crate as a member. From an unpacked package there is none; the caller
/// skips what needs it and says so (`what` names it in the note).
pub(crate) fn repository(what: &str) -> Option<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let manifest = std::fs::read_to_string(root.join("Cargo.toml")).unwrap_or_default();
    if manifest.contains("[workspace]") && manifest.contains("\"crates/payload-preview\"") {
        Some(root)
    } else {
        eprintln!("note: skipped {what}: not in the rke2-payload repository (a packaged crate)");
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_repository_is_found_in_the_repository_only() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let in_repository = root
            .join("crates/payload-preview/src/testdata.rs")
            .is_file();
        assert_eq!(repository("nothing").is_some(), in_repository);
    }
}
