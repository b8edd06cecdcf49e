//! Writing results: to standard output, or to a file through a temporary file and a rename.

use std::io::{IsTerminal, Write};
use std::path::Path;

use anyhow::{Context, Result, bail};

/// Writes `bytes` to `path`, or to standard output when `path` is `None`.
///
/// Refuses to write binary data to a terminal, and to replace an existing file unless `force`.
pub(crate) fn write_bytes(bytes: &[u8], path: Option<&Path>, force: bool) -> Result<()> {
    match path {
        None => {
            let stdout = std::io::stdout();
            if stdout.is_terminal() && is_binary(bytes) {
                bail!(
                    "refusing to write {} bytes of binary data to a terminal; use -o FILE or pipe it",
                    bytes.len()
                );
            }
            let mut lock = stdout.lock();
            lock.write_all(bytes)
                .context("writing to standard output")?;
            lock.flush().context("writing to standard output")
        }
        Some(path) => write_file(path, bytes, force),
    }
}

/// Whether bytes are not text: invalid UTF-8, or holding NUL or other control bytes.
fn is_binary(bytes: &[u8]) -> bool {
    std::str::from_utf8(bytes).is_err()
        || bytes
            .iter()
            .any(|&b| b < 0x20 && !matches!(b, b'\n' | b'\r' | b'\t'))
}

/// Writes a file atomically: a temporary file beside it, then a rename. Never replaces an
/// existing file unless `force`.
pub(crate) fn write_file(path: &Path, bytes: &[u8], force: bool) -> Result<()> {
    if !force && path.exists() {
        bail!(
            "{} already exists; pass --force to replace it",
            path.display()
        );
    }
    let dir = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    let name = path
        .file_name()
        .with_context(|| format!("{} is not a file path", path.display()))?;
    let tmp = dir.join(format!(
        ".{}.{}.tmp",
        name.to_string_lossy(),
        std::process::id()
    ));
    let result = (|| -> std::io::Result<()> {
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp)?;
        file.write_all(bytes)?;
        file.sync_all()?;
        drop(file);
        if force {
            std::fs::rename(&tmp, path)
        } else {
            // A hard link fails if the target appeared meanwhile: no clobbering.
            std::fs::hard_link(&tmp, path)?;
            std::fs::remove_file(&tmp)
        }
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result.with_context(|| format!("writing {}", path.display()))
}
