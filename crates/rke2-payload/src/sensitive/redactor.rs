//! Hiding known secret values in text.

use super::value::SecretValue;

/// Replaces every occurrence of known secret values in text by a placeholder (`<redacted>` by
/// default).
#[derive(Debug, Clone)]
pub(crate) struct Redactor {
    /// Longest first, so a value containing another is hidden whole.
    secrets: Vec<SecretValue>,
    placeholder: &'static str,
    /// Whether credentials found by their shape show as their fingerprint (what reports show)
    /// rather than as the placeholder (what `redact` writes).
    fingerprint_shapes: bool,
    /// Whether free text (commands, file lines) shows whole as its fingerprint and line count.
    strict: bool,
}

impl Default for Redactor {
    fn default() -> Self {
        Redactor {
            fingerprint_shapes: true,
            ..Redactor::with_placeholder("<redacted>")
        }
    }
}

impl Redactor {
    /// A redactor that writes `placeholder` in place of each secret, known or found by shape.
    pub(crate) fn with_placeholder(placeholder: &'static str) -> Self {
        Redactor {
            secrets: Vec::new(),
            placeholder,
            fingerprint_shapes: false,
            strict: false,
        }
    }

    /// Adds a value to hide. Values shorter than 4 characters are ignored (they would hide
    /// ordinary text).
    pub(crate) fn add(&mut self, secret: &SecretValue) {
        if secret.expose().len() >= 4 && !self.secrets.contains(secret) {
            // Kept longest first: inserted after every value at least as long.
            let len = secret.expose().len();
            let at = self.secrets.partition_point(|s| s.expose().len() >= len);
            self.secrets.insert(at, secret.clone());
        }
    }

    /// The text with every known secret replaced, and every secret part the classification of
    /// free text finds (credentials by their shape, `--token X`, `-t X`, `-pX`, private key
    /// bodies, long random runs; [`super::mask::text`]): by the
    /// placeholder, or, for the default redactor (what reports show), by its fingerprint
    /// `sha256:<16 hex>`.
    pub(crate) fn redact_all(&self, text: &str) -> String {
        let known = self.redact(text);
        super::mask::text::mask_with(&known, |value| {
            if self.fingerprint_shapes {
                let sha = crate::codec::digest::sha256_hex(value.as_bytes());
                format!("sha256:{}", &sha[..16])
            } else {
                self.placeholder.to_owned()
            }
        })
    }

    /// Shows free text whole as its fingerprint and line count ([`Redactor::redact_free`]).
    pub(crate) fn set_strict(&mut self, strict: bool) {
        self.strict = strict;
    }

    /// Free text (a command, a line of a file) as the reports show it: word by word
    /// ([`Redactor::redact_all`]), or, strict, whole as `sha256:<16 hex> (N lines)`.
    pub(crate) fn redact_free(&self, text: &str) -> String {
        if !self.strict || !text.trim().contains(char::is_whitespace) {
            return self.redact_all(text);
        }
        let (lines, fingerprint) = super::mask::strict_summary(text);
        format!("{fingerprint} ({lines})")
    }

    /// Whether free text shows whole.
    pub(crate) fn strict(&self) -> bool {
        self.strict
    }

    /// One redactor with the known values of both (longest first), this one's placeholder.
    pub(crate) fn merged(&self, other: &Redactor) -> Redactor {
        let mut out = self.clone();
        for secret in &other.secrets {
            out.add(secret);
        }
        out
    }

    /// Whether `text` is, whole, one of the known secret values.
    pub(crate) fn knows(&self, text: &str) -> bool {
        self.secrets.iter().any(|s| s.expose() == text)
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
        r.set_strict(true);
        assert_eq!(
            r.redact_free("echo a\necho b\n"),
            format!(
                "sha256:{} (2 lines)",
                &crate::codec::digest::sha256_hex(b"echo a\necho b\n")[..16]
            )
        );
    }
}
