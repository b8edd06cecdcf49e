//! Hiding known secret values in text.

use super::value::SecretValue;

/// Replaces every occurrence of known secret values in text by a placeholder (`<redacted>` by
/// default).
#[derive(Debug, Clone)]
pub(crate) struct Redactor {
    secrets: Vec<SecretValue>,
    placeholder: &'static str,
}

impl Default for Redactor {
    fn default() -> Self {
        Redactor::with_placeholder("<redacted>")
    }
}

impl Redactor {
    /// A redactor that writes `placeholder` in place of each secret.
    pub(crate) fn with_placeholder(placeholder: &'static str) -> Self {
        Redactor {
            secrets: Vec::new(),
            placeholder,
        }
    }

    /// Adds a value to hide. Values shorter than 4 characters are ignored (they would hide
    /// ordinary text).
    pub(crate) fn add(&mut self, secret: &SecretValue) {
        if secret.expose().len() >= 4 && !self.secrets.contains(secret) {
            self.secrets.push(secret.clone());
            // Longest first, so a value containing another is hidden whole.
            self.secrets
                .sort_by_key(|s| std::cmp::Reverse(s.expose().len()));
        }
    }

    /// The text with every known secret replaced.
    pub(crate) fn redact(&self, text: &str) -> String {
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
    fn redactor_hides_known_values() {
        let mut r = Redactor::default();
        r.add(&SecretValue::new("abcd1234"));
        r.add(&SecretValue::new("ab"));
        assert_eq!(
            r.redact("echo abcd1234 > /x; ab"),
            "echo <redacted> > /x; ab"
        );
    }
}
