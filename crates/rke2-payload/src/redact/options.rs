//! What `redact` is told: the decoding limits and how free text is masked.

use crate::options::DecodeOptions;

/// The options of [`redact`](super::redact) and [`redact_selected`](super::redact_selected).
///
/// ```
/// use rke2_payload::{DecodeOptions, RedactOptions};
///
/// let options = RedactOptions::new()
///     .with_decode(DecodeOptions::default())
///     .with_strict(true);
/// assert!(options.strict);
/// ```
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct RedactOptions {
    /// Decoding limits.
    pub decode: DecodeOptions,
    /// Mask free text (commands, scripts, files of no known structure, comments, values of
    /// no known schema) whole, keeping its line count and a fingerprint
    /// (`REDACTED (3 lines, sha256:…)`), instead of word by word: for a payload shared where
    /// even its public words should not be seen.
    pub strict: bool,
}

impl RedactOptions {
    /// The defaults: default limits, free text masked word by word.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets the decoding limits.
    #[must_use]
    pub fn with_decode(mut self, decode: DecodeOptions) -> Self {
        self.decode = decode;
        self
    }

    /// Masks free text whole.
    #[must_use]
    pub fn with_strict(mut self, strict: bool) -> Self {
        self.strict = strict;
        self
    }
}
