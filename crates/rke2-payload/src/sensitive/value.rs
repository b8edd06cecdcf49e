//! The type of a secret value: redacted in `Debug`, never `Display`ed or serialised by accident,
//! wiped from memory when dropped.

use zeroize::Zeroizing;

use crate::codec::digest::sha256_hex;

/// A secret string (a join token, a key, a password).
///
/// `Debug` shows only a short fingerprint; there is no `Display` and no `Serialize`. Use
/// [`SecretValue::expose`] where showing the value was asked for.
#[derive(Clone, PartialEq, Eq)]
pub(crate) struct SecretValue(Zeroizing<String>);

impl SecretValue {
    /// Wraps a value.
    pub(crate) fn new(value: impl Into<String>) -> Self {
        SecretValue(Zeroizing::new(value.into()))
    }

    /// The value itself. Call only where the user asked to see secrets.
    pub(crate) fn expose(&self) -> &str {
        &self.0
    }

    /// Hex SHA-256 of the value's bytes: compare two secrets without showing them.
    pub(crate) fn sha256(&self) -> String {
        sha256_hex(self.0.as_bytes())
    }
}

impl std::fmt::Debug for SecretValue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "SecretValue(sha256:{}…)", &self.sha256()[..12])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_never_shows_the_value() {
        let s = SecretValue::new("461787c003ec7e4777dc92ebbc7d2686");
        let debug = format!("{s:?}");
        assert!(!debug.contains("461787c0"), "{debug}");
        assert!(debug.starts_with("SecretValue(sha256:"));
        assert_eq!(s.sha256().len(), 64);
    }
}
