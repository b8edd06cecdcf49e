//! Digests and hex: how this crate fingerprints secret values and file contents.

use sha2::{Digest, Sha256};

/// A command line in `Debug` output: its length and the start of its SHA-256.
pub(crate) struct LineFingerprint<'a>(pub(crate) &'a str);

impl std::fmt::Debug for LineFingerprint<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let sha = sha256_hex(self.0.as_bytes());
        write!(f, "<{} bytes, sha256:{}…>", self.0.len(), &sha[..12])
    }
}

/// Lowercase hex SHA-256 of `bytes`: how every report fingerprints a secret value (a token's
/// `token_sha256`, a file's content).
///
/// ```
/// assert_eq!(
///     rke2_payload::codec::sha256_hex(b"abc"),
///     "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
/// );
/// ```
pub fn sha256_hex(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}

/// Lowercase hex of `bytes`.
pub(crate) fn hex(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        out.push(char::from(b"0123456789abcdef"[usize::from(b >> 4)]));
        out.push(char::from(b"0123456789abcdef"[usize::from(b & 15)]));
    }
    out
}
