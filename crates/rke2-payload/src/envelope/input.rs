//! Reading input from a file or standard input.

use std::io::Read;
use std::path::Path;

use crate::error::Error;

/// Reads all of `path`, or standard input when `path` is `-`.
pub fn read_input(path: &Path) -> Result<Vec<u8>, Error> {
    if path.as_os_str() == "-" {
        let mut buf = Vec::new();
        std::io::stdin()
            .lock()
            .read_to_end(&mut buf)
            .map_err(|error| Error::Io {
                what: "standard input".to_owned(),
                error,
            })?;
        return Ok(buf);
    }
    std::fs::read(path).map_err(|error| Error::Io {
        what: path.display().to_string(),
        error,
    })
}
