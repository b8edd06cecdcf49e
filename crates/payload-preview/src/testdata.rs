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

/// Builds the Go program of `tests/go/<program>` into `dir` (GOPATH mode, offline, against
/// the sources Debian installs under `/usr/share/gocode`; `package` names the Debian package
/// whose absence the error blames).
#[cfg(test)]
pub(crate) fn build_go(dir: &Path, program: &str, package: &str) -> Result<PathBuf, String> {
    use std::process::{Command, Stdio};
    let source = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/go")
        .join(program);
    let binary = dir.join(program);
    let mut gopath = std::ffi::OsString::from("/usr/share/gocode:");
    gopath.push(dir.join("gopath"));
    if let Some(own) = std::env::var_os("GOPATH") {
        gopath.push(":");
        gopath.push(own);
    }
    let mut command = Command::new("go");
    command
        .arg("build")
        .arg("-o")
        .arg(&binary)
        .arg(".")
        .current_dir(&source)
        .env("GO111MODULE", "off")
        .env("GOPATH", gopath)
        .env("GOFLAGS", "")
        .stdin(Stdio::null());
    if std::env::var_os("GOCACHE").is_none() && std::env::var_os("HOME").is_none() {
        command.env("GOCACHE", dir.join("cache"));
    }
    let output = command
        .output()
        .map_err(|e| format!("`go` cannot be run ({e}); install golang-go"))?;
    if !output.status.success() {
        return Err(format!(
            "`go build` fails (install {package}): {}",
            String::from_utf8_lossy(&output.stderr).trim()
        ));
    }
    Ok(binary)
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
