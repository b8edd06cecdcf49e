//! Reading input from a file or standard input.

use std::io::Read;
use std::path::Path;

use crate::codec::text::terminal_safe;
use crate::error::Error;
use crate::options::DecodeOptions;

/// Reads all of `path`, or standard input when `path` is `-`, refusing more than
/// [`DecodeOptions::max_input`] bytes (without reading more than that).
///
/// # Errors
/// [`Error::Io`] when it cannot be read, [`Error::InputTooLarge`] past the cap.
pub fn read_input(path: &Path, options: &DecodeOptions) -> Result<Vec<u8>, Error> {
    let what = if path.as_os_str() == "-" {
        "standard input".to_owned()
    } else {
        terminal_safe(&path.display().to_string()).into_owned()
    };
    let io = |error| Error::Io {
        what: what.clone(),
        error,
    };
    let mut buf = Vec::new();
    let limit = options.max_input.saturating_add(1);
    if path.as_os_str() == "-" {
        std::io::stdin()
            .lock()
            .take(limit)
            .read_to_end(&mut buf)
            .map_err(io)?;
    } else {
        std::fs::File::open(path)
            .and_then(|f| {
                // Room for the whole file at once (read_to_end would double its buffer as it
                // reads, holding up to twice the input): a file that grows meanwhile is read
                // on as before.
                let len = f.metadata().map_or(0, |m| m.len()).min(limit);
                buf.reserve_exact(usize::try_from(len).unwrap_or(0));
                f.take(limit).read_to_end(&mut buf)
            })
            .map_err(io)?;
    }
    if buf.len() as u64 > options.max_input {
        return Err(Error::InputTooLarge {
            what,
            limit: options.max_input,
        });
    }
    Ok(buf)
}
