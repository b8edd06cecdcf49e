//! A type for secret values: redacted in `Debug`, never `Display`ed or serialised by accident.

use crate::document::sha256_hex;

/// A secret string (a join token, a key, a password).
///
/// `Debug` shows only a short fingerprint; there is no `Display` and no `Serialize`. Use
/// [`SecretString::expose`] where showing the value was asked for.
#[derive(Clone, PartialEq, Eq)]
pub struct SecretString(String);

impl SecretString {
    /// Wraps a value.
    pub fn new(value: impl Into<String>) -> Self {
        SecretString(value.into())
    }

    /// The value itself. Call only where the user asked to see secrets.
    pub fn expose(&self) -> &str {
        &self.0
    }

    /// Hex SHA-256 of the value's bytes: compare two secrets without showing them.
    pub fn sha256(&self) -> String {
        sha256_hex(self.0.as_bytes())
    }

    /// Whether the value is empty.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl std::fmt::Debug for SecretString {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "SecretString(sha256:{}…)", &self.sha256()[..12])
    }
}

/// Replaces every occurrence of known secret values in text by a placeholder (`<redacted>` by
/// default).
#[derive(Debug, Clone)]
pub struct Redactor {
    secrets: Vec<SecretString>,
    placeholder: &'static str,
}

impl Default for Redactor {
    fn default() -> Self {
        Redactor::with_placeholder("<redacted>")
    }
}

impl Redactor {
    /// A redactor that writes `placeholder` in place of each secret.
    pub fn with_placeholder(placeholder: &'static str) -> Self {
        Redactor {
            secrets: Vec::new(),
            placeholder,
        }
    }

    /// Adds a value to hide. Values shorter than 4 characters are ignored (they would hide
    /// ordinary text).
    pub fn add(&mut self, secret: &SecretString) {
        if secret.expose().len() >= 4 && !self.secrets.contains(secret) {
            self.secrets.push(secret.clone());
            // Longest first, so a value containing another is hidden whole.
            self.secrets
                .sort_by_key(|s| std::cmp::Reverse(s.expose().len()));
        }
    }

    /// The text with every known secret replaced.
    pub fn redact(&self, text: &str) -> String {
        let mut out = text.to_owned();
        for secret in &self.secrets {
            if out.contains(secret.expose()) {
                out = out.replace(secret.expose(), self.placeholder);
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_never_shows_the_value() {
        let s = SecretString::new("461787c003ec7e4777dc92ebbc7d2686");
        let debug = format!("{s:?}");
        assert!(!debug.contains("461787c0"), "{debug}");
        assert!(debug.starts_with("SecretString(sha256:"));
        assert_eq!(s.sha256().len(), 64);
    }

    #[test]
    fn redactor_hides_known_values() {
        let mut r = Redactor::default();
        r.add(&SecretString::new("abcd1234"));
        r.add(&SecretString::new("ab"));
        assert_eq!(
            r.redact("echo abcd1234 > /x; ab"),
            "echo <redacted> > /x; ab"
        );
    }
}
