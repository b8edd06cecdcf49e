//! The library's integration tests: one test binary, a module per concern.

mod debug;
mod diff;
mod fixtures;
mod layers;
mod memo;
mod streaming;

use sha2::Digest as _;

/// Lowercase hex SHA-256 of `bytes`, as the reports print fingerprints.
pub(crate) fn sha256_hex(bytes: &[u8]) -> String {
    sha2::Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}
