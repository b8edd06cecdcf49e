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

    /// The text with every known secret replaced, and every credential found by its shape
    /// (`--token=…`, `PASSWORD=…`, URL user-info, `Authorization:`, K10 tokens): by the
    /// placeholder, or, for the default redactor (what reports show), by its fingerprint
    /// `sha256:<16 hex>`.
    pub(crate) fn redact_all(&self, text: &str) -> String {
        let known = self.redact(text);
        super::detect::mask_credentials(&known, |value| {
            if self.placeholder == "<redacted>" {
                let sha = crate::codec::digest::sha256_hex(value.as_bytes());
                format!("sha256:{}", &sha[..16])
            } else {
                self.placeholder.to_owned()
            }
        })
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
