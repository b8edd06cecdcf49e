//! What can stop a printer.

/// Why a printer stopped. Every variant's message is its cause's own, so that a caller that
/// adds context reads the same sentence as before the printers were a crate; the I/O error of
/// a closed pipe stays in [`std::error::Error::source`], where a caller looks for it.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The sink failed (a closed pipe, a full disk).
    #[error("{0}")]
    Io(#[source] std::io::Error),
    /// A value could not be written as JSON (or read back as the JSON item it should be).
    #[error("{0}")]
    Json(#[source] serde_json::Error),
    /// A value could not be written as YAML.
    #[error("{0}")]
    Yaml(#[source] Box<dyn std::error::Error + Send + Sync>),
    /// A report could not be written as XML.
    #[error("{0}")]
    Xml(#[source] Box<dyn std::error::Error + Send + Sync>),
    /// SARIF was asked for a report with a finding that has no file to point at: a result of
    /// code scanning needs one (standard input needs a name).
    #[error(
        "SARIF needs a file for every result, and {check} has none (it is about {about}); name the file standard input stands for with --stdin-filename, or lint the file itself"
    )]
    Unlocated {
        /// The finding's check id.
        check: &'static str,
        /// What the finding is about (the Secret or object), terminal-safe.
        about: String,
    },
}

impl From<std::io::Error> for Error {
    fn from(e: std::io::Error) -> Self {
        Error::Io(e)
    }
}

impl From<serde_json::Error> for Error {
    fn from(e: serde_json::Error) -> Self {
        Error::Json(e)
    }
}

/// What every printer returns.
pub type Result<T> = std::result::Result<T, Error>;
