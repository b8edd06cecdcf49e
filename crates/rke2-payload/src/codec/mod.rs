//! The bottom layer: encodings and helpers that know nothing of Secrets or payloads.
//!
//! Base64 as Kubernetes reads it, gzip with bounds, `data:` URLs, SHA-256 fingerprints, RFC 3339
//! times, message text that never quotes input, and the character check every YAML fast path
//! makes first. Nothing here imports another layer of the crate.
//!
//! The few of them public here are what a crate built on this one (the preview crate,
//! `rke2-payload-preview`) needs to read and write what this crate reads and writes the same
//! way: base64 as the API server decodes it ([`decode_base64`]; `to_base64`, at the crate root,
//! encodes), a parser's message without the input it quotes ([`parser_message`]), YAML read as
//! YAML 1.1 readers read it ([`yaml11_document`]), a file's contents as a `data:` URL as
//! Butane writes it ([`file_data_url`]), a time as RFC 3339 text ([`rfc3339`]) and a value's
//! fingerprint as every report writes it ([`sha256_hex`], which the doctor compares a cluster's
//! `-token` Secret with).

pub(crate) mod b64;
pub(crate) mod dataurl;
pub(crate) mod digest;
pub(crate) mod gzip;
pub(crate) mod text;
pub(crate) mod time;
pub(crate) mod tree;
pub(crate) mod yaml;
pub(crate) mod yaml11;

pub use dataurl::{FileDataUrl, file_data_url};
pub use digest::sha256_hex;
pub use text::parser_message;
pub use time::rfc3339;

/// Decodes base64 text as the Kubernetes API server decodes a Secret's `data` (Go's
/// `base64.StdEncoding`): the standard alphabet, padding required, `\r` and `\n` anywhere
/// ignored. `None` when the text is not base64.
///
/// ```
/// use rke2_payload::codec::decode_base64;
///
/// assert_eq!(decode_base64("aGVs\nbG8=").as_deref(), Some(&b"hello"[..]));
/// assert_eq!(decode_base64("aGVsbG8"), None);
/// ```
pub fn decode_base64(text: &str) -> Option<Vec<u8>> {
    b64::decode(text).ok()
}

/// The first document of `text` read with YAML 1.1's scalar rules, as PyYAML's `safe_load`
/// and Go's `gopkg.in/yaml.v2` (under `sigs.k8s.io/yaml`) read it: `yes` and `on` are booleans,
/// `0600` is the octal 384, `1:30` the sexagesimal 90. `Ok(None)` for an empty stream.
///
/// The document is returned as a `serde_json::Value`: it is any YAML the caller was given, and
/// JSON's data model is what this crate and its callers work on (timestamps and binary stay
/// text, `.inf` and `.nan` become strings).
///
/// ```
/// use rke2_payload::codec::yaml11_document;
/// use serde_json::json;
///
/// let doc = yaml11_document("enabled: yes\nmode: 0600\n")?;
/// assert_eq!(doc, Some(json!({"enabled": true, "mode": 384})));
/// assert!(yaml11_document("a: [").is_err());
/// # Ok::<(), rke2_payload::codec::Yaml11Error>(())
/// ```
///
/// # Errors
/// [`Yaml11Error`] when the text is not YAML, expands past the node budget (an alias bomb) or
/// nests too deeply.
pub fn yaml11_document(text: &str) -> Result<Option<serde_json::Value>, Yaml11Error> {
    yaml11::first_document(text).map_err(|message| Yaml11Error { message })
}

/// Why a text did not read as YAML ([`yaml11_document`]): the parser's message, scrubbed of the
/// input's text.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct Yaml11Error {
    message: String,
}

impl Yaml11Error {
    /// The parser's message (never the input's text).
    pub fn message(&self) -> &str {
        &self.message
    }
}
