//! Where output goes: standard output (buffered for machine-readable formats, with colour
//! only where it is shown for text), or a file through a temporary file and a rename.
//!
//! The printers (`payload_printer`) write to any sink and always style their text; the choice
//! of colour is made here, by the sink: [`styled`] keeps the styles only when standard output
//! shows them (a terminal, no `NO_COLOR`, `--color` not `never`).
//!
//! Every file written holds secrets by nature (user data, keys, tokens): it is created mode 0600
//! whatever the umask, stays 0600 when `--force` replaces another, and only ever replaces a
//! regular file.

use std::io::{IsTerminal, Write};
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::Path;

use anyhow::{Context, Result, bail};

use payload_printer::style::safe;

/// Standard output for machine-readable formats: buffered, no colour processing.
pub(crate) fn raw_stdout() -> std::io::BufWriter<std::io::StdoutLock<'static>> {
    std::io::BufWriter::with_capacity(1 << 16, std::io::stdout().lock())
}

/// A buffer for styled text that keeps colour only where standard output shows it.
pub(crate) fn styled() -> anstream::AutoStream<Vec<u8>> {
    anstream::AutoStream::new(Vec::new(), anstream::AutoStream::choice(&std::io::stdout()))
}

/// The mode of every file the tool writes.
const PRIVATE: u32 = 0o600;

/// Writes `bytes` to `path`, or to standard output when `path` is `None` or `-`.
///
/// Refuses to write binary data to a terminal, and to replace an existing file unless `force`.
pub(crate) fn write_bytes(bytes: &[u8], path: Option<&Path>, force: bool) -> Result<()> {
    match path.filter(|p| p.as_os_str() != "-") {
        None => {
            let stdout = std::io::stdout();
            if stdout.is_terminal() && is_binary(bytes) {
                bail!(
                    "refusing to write {} bytes of binary data or control characters to a terminal; use -o FILE or pipe it",
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

/// Whether bytes are not text a terminal can show as it is: invalid UTF-8, or holding control,
/// bidi or invisible characters other than line feed, carriage return and tab.
fn is_binary(bytes: &[u8]) -> bool {
    match std::str::from_utf8(bytes) {
        Err(_) => true,
        Ok(text) => text.lines().any(|line| {
            let line = line.strip_suffix('\r').unwrap_or(line);
            line.split('\t')
                .any(|part| rke2_payload::terminal_safe(part).len() != part.len())
        }),
    }
}

/// Writes a file atomically, mode 0600: a temporary file beside it, then a rename. Never
/// replaces an existing file unless `force`, and never one that is not a regular file.
pub(crate) fn write_file(path: &Path, bytes: &[u8], force: bool) -> Result<()> {
    let shown = safe(&path.display().to_string()).into_owned();
    match std::fs::symlink_metadata(path) {
        Ok(meta) if !meta.file_type().is_file() => bail!(
            "{shown} exists and is not a regular file (a directory, link, FIFO, socket or device); refusing to replace it"
        ),
        Ok(_) if !force => bail!("{shown} already exists; pass --force to replace it"),
        _ => {}
    }
    let dir = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    let name = path
        .file_name()
        .with_context(|| format!("{shown} is not a file path"))?;
    let tmp = dir.join(format!(
        ".{}.{}.tmp",
        name.to_string_lossy(),
        std::process::id()
    ));
    let mut created = false;
    let result = (|| -> std::io::Result<()> {
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(PRIVATE)
            .open(&tmp)?;
        created = true;
        // The umask may have taken bits away (or an odd one left more): set it exactly.
        file.set_permissions(std::fs::Permissions::from_mode(PRIVATE))?;
        file.write_all(bytes)?;
        file.sync_all()?;
        drop(file);
        if force {
            // Checked again just before: what took the target's place meanwhile is not replaced.
            if std::fs::symlink_metadata(path).is_ok_and(|m| !m.file_type().is_file()) {
                return Err(std::io::Error::other(
                    "the target is no longer a regular file",
                ));
            }
            std::fs::rename(&tmp, path)
        } else {
            // A hard link fails if the target appeared meanwhile: no clobbering.
            std::fs::hard_link(&tmp, path)?;
            std::fs::remove_file(&tmp)
        }
    })();
    // Only the temporary file this call created is removed (never one of another run's).
    if result.is_err() && created {
        let _ = std::fs::remove_file(&tmp);
    }
    result.with_context(|| format!("writing {shown}"))
}
