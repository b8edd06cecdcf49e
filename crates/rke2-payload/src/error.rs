//! Typed errors for every decoding layer.
//!
//! Each error says what was being read and where: which Secret (by namespace, name and position in
//! the input), which key, which file inside the payload, and the byte offset where it is known.
//! No error message ever contains a secret value: parser messages that quote input are scrubbed
//! before they are stored (see [`scrub`]).

use std::fmt;

/// Where in the input a Secret was found, for messages and reports.
#[derive(Debug, Clone, PartialEq, Eq, Default, serde::Serialize)]
pub struct SecretId {
    /// `metadata.namespace`, if the Secret has one.
    pub namespace: Option<String>,
    /// `metadata.name`, if the Secret has one (bare user data has none).
    pub name: Option<String>,
    /// Position of the Secret among all objects of the input (0-based: YAML document, or item of a
    /// `List`).
    pub index: usize,
}

impl fmt::Display for SecretId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (&self.namespace, &self.name) {
            (Some(ns), Some(name)) => write!(f, "Secret {ns}/{name}"),
            (None, Some(name)) => write!(f, "Secret {name}"),
            _ => write!(f, "object #{}", self.index + 1),
        }
    }
}

/// Which parser read the Secret envelope.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Syntax {
    /// YAML (one document, several documents separated by `---`, or a `List`).
    Yaml,
    /// JSON (one object or a `List`).
    Json,
}

impl fmt::Display for Syntax {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Syntax::Yaml => "YAML",
            Syntax::Json => "JSON",
        })
    }
}

/// A position in a text: 1-based line and column, and the 0-based byte offset where known.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
pub struct Position {
    /// 1-based line number (0 when only the byte offset is known).
    pub line: u64,
    /// 1-based column number.
    pub column: u64,
    /// 0-based byte offset in the text, when the parser reports it.
    pub offset: Option<u64>,
}

impl fmt::Display for Position {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line == 0 {
            return write!(f, "byte {}", self.offset.unwrap_or(0));
        }
        write!(f, "line {}, column {}", self.line, self.column)?;
        if let Some(offset) = self.offset {
            write!(f, " (byte {offset})")?;
        }
        Ok(())
    }
}

/// Everything that can go wrong while decoding a bootstrap Secret.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The input could not be read.
    #[error("could not read {what}: {error}")]
    Io {
        /// What was being read (a path, or "standard input").
        what: String,
        /// The underlying I/O error.
        error: std::io::Error,
    },

    /// The input is empty (or holds only white space).
    #[error("the input is empty")]
    Empty,

    /// The input is neither a Kubernetes object in YAML or JSON nor bare user data.
    #[error("the input is not {syntax}: {message}{}", at.map(|p| format!(" at {p}")).unwrap_or_default())]
    Syntax {
        /// The syntax the input looked like.
        syntax: Syntax,
        /// The parser's message, scrubbed of input text.
        message: String,
        /// Where the parser stopped, when known.
        at: Option<Position>,
    },

    /// The input is valid YAML or JSON, but no object in it is a Secret.
    #[error("the input holds no Secret ({found})")]
    NotASecret {
        /// What the input held instead, e.g. `kind: ConfigMap`.
        found: String,
    },

    /// Secrets were found, but none of them carries bootstrap data (a `value` key).
    #[error(
        "no bootstrap Secret in the input: {secrets} Secret(s) without a `value` key were skipped"
    )]
    NoBootstrapSecret {
        /// How many Secrets were read and skipped.
        secrets: usize,
    },

    /// The Secret picked by name is not in the input.
    #[error(
        "no bootstrap Secret named {wanted} in the input ({available} bootstrap Secret(s) read)"
    )]
    SecretNotFound {
        /// The name asked for, as `namespace/name` or `name`.
        wanted: String,
        /// How many bootstrap Secrets the input holds.
        available: usize,
    },

    /// Several Secrets match where exactly one was needed.
    #[error("{count} bootstrap Secrets match; pick one by name ({names})")]
    Ambiguous {
        /// How many matched.
        count: usize,
        /// Their names, comma-separated (possibly shortened).
        names: String,
    },

    /// A Secret has no `value` key in `data` or `stringData`.
    #[error("{secret} has no `value` key in `data` or `stringData`")]
    MissingValue {
        /// The Secret.
        secret: SecretId,
    },

    /// `data.value` is larger than a Secret can be.
    #[error(
        "{secret}: data.value is {bytes} bytes, more than the {limit} bytes a Kubernetes Secret can hold"
    )]
    ValueTooLarge {
        /// The Secret.
        secret: SecretId,
        /// Its size (decoded, or estimated from the base64 length).
        bytes: u64,
        /// The limit.
        limit: u64,
    },

    /// The user data was decoded but cannot be read as its format.
    #[error("{what}: {detail}")]
    Unreadable {
        /// Which Secret.
        what: String,
        /// Why.
        detail: String,
    },

    /// A `data` value is not valid base64.
    #[error("{secret}: data.{key} is not valid base64: {detail}")]
    Base64 {
        /// The Secret.
        secret: SecretId,
        /// The key under `data`.
        key: String,
        /// What is wrong, with the offset into the base64 text.
        detail: String,
    },

    /// The `format` key names a format this tool does not know.
    #[error(
        "{secret}: unknown format {format:?} in the `format` key (expected `cloud-config` or `ignition`)"
    )]
    UnknownFormat {
        /// The Secret.
        secret: SecretId,
        /// The format as stored (not secret: it is a short enum-like word; shortened to 40 chars).
        format: String,
    },

    /// The payload (`data.value`) could not be decoded.
    #[error("{secret}: {error}")]
    Payload {
        /// The Secret.
        secret: SecretId,
        /// What went wrong.
        error: PayloadError,
    },
}

/// What went wrong inside one payload (`data.value`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PayloadError {
    /// A gzip stream could not be decoded.
    #[error("{what}: {error}")]
    Gzip {
        /// What held the gzip stream (e.g. `data.value`, `the Ignition wrapper's data URL`).
        what: String,
        /// The gzip failure.
        error: GzipError,
    },

    /// The payload is gzip inside gzip. cloud-init unwraps only one layer.
    #[error(
        "data.value is gzip inside gzip: cloud-init decompresses only one layer, so the node would get gzip bytes"
    )]
    NestedGzip,

    /// The Ignition gzip wrapper (`ignition.config.replace` with a `data:` URL) is broken.
    #[error("Ignition wrapper: {detail}")]
    Wrapper {
        /// What is wrong.
        detail: String,
    },

    /// A `data:` URL could not be decoded.
    #[error("{what}: {error}")]
    DataUrl {
        /// Where the URL was.
        what: String,
        /// The failure.
        error: DataUrlError,
    },

    /// An Ignition config declares a version this tool does not read.
    #[error("unsupported Ignition version {version:?} (this tool reads 3.0.0 to 3.6.0)")]
    IgnitionVersion {
        /// The version as found (shortened to 40 chars).
        version: String,
    },

    /// The payload is JSON but not an Ignition config.
    #[error("payload is not an Ignition config: {detail}")]
    NotIgnition {
        /// What is wrong.
        detail: String,
    },
}

/// A gzip decoding failure.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum GzipError {
    /// The bytes do not start with the gzip magic `1f 8b`.
    #[error("not gzip (no 1f 8b magic)")]
    NotGzip,
    /// The stream ends before the gzip trailer.
    #[error("gzip stream is truncated: its {len} compressed bytes end before the gzip trailer")]
    Truncated {
        /// Compressed bytes in all.
        len: u64,
    },
    /// The deflate data or the header is corrupt.
    #[error("gzip stream is corrupt near compressed byte {offset}: {detail}")]
    Corrupt {
        /// Compressed byte offset where decoding stopped (approximate).
        offset: u64,
        /// The decoder's message.
        detail: String,
    },
    /// Bytes that are not another gzip member follow the end of the stream.
    #[error("{trailing} bytes of trailing data after the gzip stream at compressed byte {offset}")]
    TrailingData {
        /// Where the trailing data starts.
        offset: u64,
        /// How many bytes follow.
        trailing: u64,
    },
    /// Inflating would exceed the configured cap (a gzip bomb, or a cap set too low).
    #[error(
        "gzip stream inflates past the cap of {cap} bytes (from {compressed} compressed bytes); raise the cap if this payload is genuine"
    )]
    TooLarge {
        /// The cap in bytes.
        cap: u64,
        /// Compressed size.
        compressed: u64,
    },
}

/// A `data:` URL (RFC 2397) decoding failure.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum DataUrlError {
    /// The URL does not start with `data:`.
    #[error("not a data URL (no `data:` scheme)")]
    NotDataUrl,
    /// There is no `,` between the media type and the data.
    #[error("data URL has no `,` before its data")]
    NoComma,
    /// The base64 part is invalid.
    #[error("data URL base64 is invalid: {detail}")]
    Base64 {
        /// What is wrong, with the offset into the data part.
        detail: String,
    },
    /// A `%` escape is malformed.
    #[error("data URL has a malformed %-escape at byte {offset} of its data")]
    Percent {
        /// Offset into the data part.
        offset: usize,
    },
}

/// Removes quoted input text from a parser message, so that an error about a line holding a
/// token never repeats the token.
///
/// Double-quoted spans (how serde and the parsers quote values) become `"…"`. Backtick spans
/// (how serde names fields) are kept when they look like a key name.
pub fn scrub(message: &str) -> String {
    let mut out = String::with_capacity(message.len());
    let mut rest = message;
    while let Some(start) = rest.find(['"', '`']) {
        let quote = rest.as_bytes()[start] as char;
        out.push_str(&rest[..start]);
        let after = &rest[start + 1..];
        match after.find(quote) {
            Some(end) => {
                let inner = &after[..end];
                let looks_like_key = quote == '`'
                    && inner.len() <= 40
                    && inner
                        .bytes()
                        .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'));
                out.push(quote);
                out.push_str(if looks_like_key { inner } else { "…" });
                out.push(quote);
                rest = &after[end + 1..];
            }
            None => {
                out.push('…');
                rest = "";
            }
        }
    }
    out.push_str(rest);
    // Parser messages sometimes span lines (snippets); keep the first line only.
    match out.split_once('\n') {
        Some((first, _)) => first.trim_end().to_owned(),
        None => out,
    }
}

/// A parser's message for an error: scrubbed of input text, without the position the parser
/// appends (errors carry it separately).
pub(crate) fn parser_message(message: &str) -> String {
    let message = scrub(message);
    match message.find(" at line ") {
        Some(i) => message[..i].to_owned(),
        None => message,
    }
}

/// Shortens a string for an error message, on a char boundary.
pub(crate) fn shorten(s: &str, max: usize) -> String {
    if s.len() <= max {
        return s.to_owned();
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &s[..end])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scrub_hides_quoted_data_but_keeps_key_names() {
        let m =
            scrub("invalid type: string \"461787c003ec7e4777dc92ebbc7d2686xx\", expected `value`");
        assert!(!m.contains("461787c0"), "{m}");
        assert!(m.contains("`value`"), "{m}");
        assert_eq!(scrub("unterminated \"abc"), "unterminated …");
        assert_eq!(scrub("line one\nsnippet with secret"), "line one");
    }

    #[test]
    fn secret_id_display() {
        let id = SecretId {
            namespace: Some("ns".into()),
            name: Some("n".into()),
            index: 0,
        };
        assert_eq!(id.to_string(), "Secret ns/n");
        let id = SecretId {
            namespace: None,
            name: None,
            index: 2,
        };
        assert_eq!(id.to_string(), "object #3");
    }

    #[test]
    fn shorten_respects_char_boundaries() {
        assert_eq!(shorten("ééé", 3), "é…");
        assert_eq!(shorten("abc", 3), "abc");
    }
}
