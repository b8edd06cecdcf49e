//! Typed errors for every decoding layer.
//!
//! Each error says what was being read and where: which Secret (by namespace, name and position in
//! the input), which key, which file inside the payload, and the byte offset where it is known.
//! No error message ever contains a secret value: parser messages that quote input are scrubbed
//! before they are stored.

use std::fmt;

use crate::codec::dataurl::DataUrlError;
use crate::codec::gzip::GzipError;
use crate::codec::text::terminal_safe;

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

/// Names come from the input: they are shown terminal-safe.
impl fmt::Display for SecretId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (&self.namespace, &self.name) {
            (Some(ns), Some(name)) => {
                write!(f, "Secret {}/{}", terminal_safe(ns), terminal_safe(name))
            }
            (None, Some(name)) => write!(f, "Secret {}", terminal_safe(name)),
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
#[non_exhaustive]
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

    /// One object of the input, or bare user data, is larger than `DecodeOptions::max_object`.
    #[error(
        "an object of the input (read up to {at}) is larger than {limit} bytes; a Kubernetes Secret holds at most about 1 MiB"
    )]
    ObjectTooLarge {
        /// Where the object starts (`line N`, `byte N`).
        at: String,
        /// The cap.
        limit: u64,
    },

    /// An input read whole is larger than `DecodeOptions::max_input`.
    #[error("{what} is larger than {limit} bytes, the most read whole into memory")]
    InputTooLarge {
        /// What was being read.
        what: String,
        /// The cap.
        limit: u64,
    },

    /// The input is empty (or holds only white space).
    #[error("the input is empty")]
    Empty,

    /// One of several inputs could not be read: which one, and why.
    #[error("{input}: {error}")]
    InInput {
        /// The input's name (a file path, `standard input`), terminal-safe.
        input: String,
        /// What went wrong in it.
        error: Box<Error>,
    },

    /// A folder named as an input holds no file with a `.yaml`, `.yml` or `.json` name (as
    /// `kubectl -f DIR` reads a folder).
    #[error("{folder} holds no .yaml, .yml or .json file")]
    EmptyFolder {
        /// The folder, terminal-safe.
        folder: String,
    },

    /// The bootstrap data of another Cluster API bootstrap provider (kubeadm's, and the rest):
    /// not RKE2's, so no RKE2 report is made of it. Reports skip and count such Secrets.
    #[error("{secret} holds {provider}'s bootstrap data, not RKE2's ({why})")]
    OtherProvider {
        /// Which Secret.
        secret: SecretId,
        /// The provider, as its config kind names it (`KubeadmConfig`) or as its payload shows.
        provider: String,
        /// What says so (its owner, a file or command of its payload).
        why: String,
    },

    /// The worker threads stopped before the input was read through: a bug in this crate.
    #[error(
        "the worker threads stopped before the input was read through (a bug: please report it)"
    )]
    WorkersStopped,

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

    /// Secrets were found, but none of them carries bootstrap data (a `value` key with user
    /// data, in a Secret of a type that may carry it).
    #[error(
        "no bootstrap Secret in the input: {secrets} Secret(s) without bootstrap data were skipped"
    )]
    NoBootstrapSecret {
        /// How many Secrets were read and skipped.
        secrets: usize,
    },

    /// No Secret of the input is the one (or ones) asked for.
    #[error("no bootstrap Secret {wanted} in the input ({available} bootstrap Secret(s) read)")]
    SecretNotFound {
        /// What was asked for, as the selector says it: `named capi/x`, `in namespace capi`,
        /// `in cluster demo`, `with labels a=b`.
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

    /// One object of a streamed input (a `List` item, a YAML document) could not be read; the
    /// others were.
    #[error("{secret} cannot be read: {detail}")]
    Unreadable {
        /// The object: its name when a lenient second read found it, else its place.
        secret: SecretId,
        /// Why, with the line or byte where the parser stopped.
        detail: String,
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

    /// A Secret could not be written out again (as YAML or JSON).
    #[error("could not write the Secret as {syntax}: {message}")]
    Write {
        /// The syntax it was written in.
        syntax: Syntax,
        /// The serialiser's message.
        message: String,
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
        "{secret}: unknown format in the `format` key (value {format}; expected `cloud-config` or `ignition`)"
    )]
    UnknownFormat {
        /// The Secret.
        secret: SecretId,
        /// The fingerprint of the stored value (`sha256:` and 16 hex digits), never the value:
        /// an unexpected `format` could hold anything.
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

/// How a stream of Secrets ended early: the input could not be read, or the caller's own code
/// (the sink that gets each result) failed and stopped it.
#[derive(Debug)]
pub enum StreamError<E> {
    /// The input could not be read or holds no bootstrap Secret.
    Input(Error),
    /// The caller's sink returned this error.
    Sink(E),
}

impl<E> From<Error> for StreamError<E> {
    fn from(error: Error) -> Self {
        StreamError::Input(error)
    }
}

impl<E: fmt::Display> fmt::Display for StreamError<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StreamError::Input(e) => e.fmt(f),
            StreamError::Sink(e) => e.fmt(f),
        }
    }
}

impl<E: std::error::Error + 'static> std::error::Error for StreamError<E> {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            StreamError::Input(e) => e.source(),
            StreamError::Sink(e) => e.source(),
        }
    }
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

#[cfg(test)]
mod tests {
    use super::*;

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
}

/// A bootstrap Secret a report passed over, and why: another provider's data
/// ([`Error::OtherProvider`]).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[non_exhaustive]
pub struct SkippedSecret {
    /// `metadata.name`.
    pub name: Option<String>,
    /// `metadata.namespace`.
    pub namespace: Option<String>,
    /// Whose data it holds (`KubeadmConfig`, `kubeadm`).
    pub provider: String,
    /// What says so, in a sentence (terminal-safe).
    pub reason: String,
}

impl Error {
    /// Whether the error says only that an input holds no bootstrap Secret (empty, no Secret,
    /// only Secrets without bootstrap data): one of several inputs may, as long as another
    /// holds one.
    ///
    /// ```
    /// assert!(rke2_payload::Error::Empty.holds_no_bootstrap_secret());
    /// ```
    pub fn holds_no_bootstrap_secret(&self) -> bool {
        matches!(
            self,
            Error::Empty
                | Error::NotASecret { .. }
                | Error::NoBootstrapSecret { .. }
                | Error::MissingValue { .. }
        )
    }

    /// The Secret this error says a report passes over (another provider's), if it says so.
    ///
    /// ```
    /// use rke2_payload::{Error, SecretId};
    ///
    /// let id = SecretId { namespace: Some("d".into()), name: Some("w".into()), index: 0 };
    /// let e = Error::OtherProvider { secret: id, provider: "KubeadmConfig".into(), why: "it is owned by a KubeadmConfig".into() };
    /// assert_eq!(e.skipped().map(|s| s.provider).as_deref(), Some("KubeadmConfig"));
    /// assert!(Error::Empty.skipped().is_none());
    /// ```
    pub fn skipped(&self) -> Option<SkippedSecret> {
        match self {
            Error::OtherProvider {
                secret,
                provider,
                why,
            } => Some(SkippedSecret {
                name: secret.name.clone(),
                namespace: secret.namespace.clone(),
                provider: terminal_safe(provider).into_owned(),
                reason: terminal_safe(why).into_owned(),
            }),
            _ => None,
        }
    }
}
