//! The document layer: a cloud-config or Ignition config read into one view of files and commands.

pub(crate) mod cloudconfig;
mod cloudconfig_fast;
pub(crate) mod ignition;

use std::borrow::Cow;

use crate::checks::Finding;
use crate::codec::digest::{LineFingerprint, sha256_hex};
use crate::error::Position;
use crate::payload::{Format, Payload, UserDataKind};

pub(crate) use cloudconfig::CloudConfig;
pub(crate) use ignition::Ignition;

/// A parsed user data document.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub(crate) enum Document {
    /// A cloud-config.
    CloudConfig(CloudConfig),
    /// An Ignition config.
    Ignition(Ignition),
}

/// Why a document could not be read at all.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum DocumentError {
    /// The user data is not UTF-8 text.
    #[error("user data is not UTF-8 text (invalid byte at offset {offset})")]
    NotUtf8 {
        /// Offset of the first invalid byte.
        offset: usize,
    },
    /// The cloud-config could not be read, even by the tolerant pass.
    #[error("cloud-config is not valid YAML: {message} at {at}")]
    Yaml {
        /// The parser's message, scrubbed.
        message: String,
        /// Where.
        at: Position,
    },
    /// The cloud-config is YAML but its top level is not a mapping.
    #[error("cloud-config top level is not a mapping")]
    NotMapping,
    /// The Ignition config is not valid JSON or does not have the Ignition shape.
    #[error("Ignition config is invalid: {message}")]
    Ignition {
        /// What is wrong, scrubbed.
        message: String,
    },
}

impl Document {
    /// Reads the user data of a payload.
    pub(crate) fn parse(payload: &Payload<'_>) -> Result<Self, DocumentError> {
        let text = std::str::from_utf8(payload.userdata()).map_err(|e| DocumentError::NotUtf8 {
            offset: e.valid_up_to(),
        })?;
        if payload.content() == UserDataKind::OtherCloudInit {
            return Ok(Document::CloudConfig(CloudConfig::other_cloud_init(text)));
        }
        match payload.format() {
            // Text without a cloud-init header that does not even read as YAML: cloud-init does
            // not run it (a part of no known type), which is a note, not an unreadable document.
            Format::CloudConfig if payload.content() == UserDataKind::Unrecognised => {
                Ok(Document::CloudConfig(
                    CloudConfig::parse(text).unwrap_or_else(|_| CloudConfig::not_cloud_init(text)),
                ))
            }
            Format::CloudConfig => CloudConfig::parse(text).map(Document::CloudConfig),
            Format::Ignition => Ignition::parse(text).map(Document::Ignition),
        }
    }

    /// Every file the document writes, in document order.
    pub(crate) fn files(&self) -> &[File] {
        match self {
            Document::CloudConfig(c) => &c.files,
            Document::Ignition(i) => &i.files,
        }
    }

    /// Every command the document runs at first boot, in order.
    pub(crate) fn commands(&self) -> &[Command] {
        match self {
            Document::CloudConfig(c) => &c.commands,
            Document::Ignition(i) => &i.commands,
        }
    }

    /// Problems noticed while reading (the document was still read).
    pub(crate) fn problems(&self) -> &[Finding] {
        match self {
            Document::CloudConfig(c) => &c.problems,
            Document::Ignition(i) => &i.problems,
        }
    }

    /// Looks a file up by path (the last one written, as the node would see it).
    pub(crate) fn file(&self, path: &str) -> Option<&File> {
        self.files().iter().rev().find(|f| f.path == path)
    }
}

/// One file a document writes.
#[derive(Clone, PartialEq, Eq)]
pub(crate) struct File {
    /// Absolute path on the node.
    pub path: String,
    /// Permission bits, if set.
    pub mode: Option<u32>,
    /// `user:group` (or `user`) if set.
    pub owner: Option<String>,
    /// How the content was encoded in the document (`base64`, `gzip+base64`, `data-url`, …).
    pub encoding: Option<String>,
    /// Where the content is.
    pub content: Content,
    /// Whether the content is appended to an existing file rather than replacing it.
    pub append: bool,
}

/// Where a file's content comes from.
#[derive(Clone, PartialEq, Eq)]
pub(crate) enum Content {
    /// Decoded content carried in the document.
    Inline(Vec<u8>),
    /// A remote source (http, https, s3, tftp, gs, arn). Never fetched.
    Remote(String),
    /// The content could not be decoded; the message says why.
    Undecodable(String),
}

impl std::fmt::Debug for File {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("File")
            .field("path", &self.path)
            .field("mode", &self.mode_string())
            .field("owner", &self.owner)
            .field("encoding", &self.encoding)
            .field("size", &self.size())
            .finish_non_exhaustive()
    }
}

impl std::fmt::Debug for Content {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Content::Inline(bytes) => write!(f, "Inline({} bytes)", bytes.len()),
            Content::Remote(_) => f.write_str("Remote(..)"),
            Content::Undecodable(why) => write!(f, "Undecodable({why:?})"),
        }
    }
}

impl File {
    /// The mode as four octal digits, e.g. `0640`.
    pub(crate) fn mode_string(&self) -> Option<String> {
        self.mode.map(|m| format!("{m:04o}"))
    }

    /// The decoded content, if carried inline.
    pub(crate) fn bytes(&self) -> Option<&[u8]> {
        match &self.content {
            Content::Inline(bytes) => Some(bytes),
            _ => None,
        }
    }

    /// The decoded content as text, if inline and UTF-8.
    pub(crate) fn text(&self) -> Option<Cow<'_, str>> {
        self.bytes()
            .and_then(|b| std::str::from_utf8(b).ok())
            .map(Cow::Borrowed)
    }

    /// Size of the decoded content in bytes (0 when not inline).
    pub(crate) fn size(&self) -> u64 {
        self.bytes().map_or(0, |b| b.len() as u64)
    }

    /// Hex SHA-256 of the decoded content, if inline.
    pub(crate) fn sha256(&self) -> Option<String> {
        self.bytes().map(sha256_hex)
    }
}

/// One command run at first boot.
///
/// Its `Debug` output shows where the command comes from and a fingerprint of the line, never
/// the line: a command can carry a password or a token this library does not know as one.
#[derive(Clone, PartialEq, Eq)]
pub(crate) struct Command {
    /// The command line as the shell would see it (argv lists joined with shell quoting).
    pub line: String,
    /// Where it comes from: `runcmd`, `bootcmd`, or the file or unit that holds it.
    pub origin: String,
}

impl std::fmt::Debug for Command {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Command")
            .field("line", &LineFingerprint(&self.line))
            .field("origin", &self.origin)
            .finish()
    }
}
