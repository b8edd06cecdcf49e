//! What the tool is (`rke2-payload version`): its version, the commit it was built from, the
//! platform it was built for and the schema id of every document it writes.
//!
//! ```
//! use payload_printer::version::VersionDocument;
//!
//! let documents = payload_printer::schema::DOCUMENTS.iter().map(|d| (d.name, d.schema));
//! let doc = VersionDocument::new(
//!     "0.3.0", Some("0123abc"), Some("2026-01-02"), "x86_64-unknown-linux-gnu", documents,
//! );
//! let mut out = Vec::new();
//! payload_printer::version::text(&mut out, &doc)?;
//! assert_eq!(String::from_utf8(out).unwrap(), "rke2-payload 0.3.0 (0123abc 2026-01-02)\n");
//! assert_eq!(doc.documents["lint"], "rke2-payload/lint/v1");
//! # Ok::<(), payload_printer::Error>(())
//! ```

use std::collections::BTreeMap;
use std::io::Write;

use crate::Result;

/// The schema id of the version document.
pub const VERSION_SCHEMA: &str = "rke2-payload/version/v1";

/// The version document: `{"schema", "version", "commit", "commit_date", "target",
/// "documents"}`.
#[derive(Debug, Clone, serde::Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[non_exhaustive]
pub struct VersionDocument {
    /// Always [`VERSION_SCHEMA`].
    pub schema: &'static str,
    /// The release (`0.3.0`).
    pub version: String,
    /// The full hash of the commit it was built from; null when built outside a git checkout
    /// (from a packaged crate).
    pub commit: Option<String>,
    /// The date of that commit (`YYYY-MM-DD`); null when the commit is.
    pub commit_date: Option<String>,
    /// The target triple it was built for (`x86_64-unknown-linux-gnu`).
    pub target: String,
    /// The schema id each document is written with, by document name (the schema module's
    /// list of documents).
    pub documents: BTreeMap<String, String>,
}

impl VersionDocument {
    /// The document of a build: its version, commit and date (when known), target, and the
    /// documents it writes as (name, schema id).
    pub fn new<'d>(
        version: &str,
        commit: Option<&str>,
        commit_date: Option<&str>,
        target: &str,
        documents: impl IntoIterator<Item = (&'d str, &'d str)>,
    ) -> Self {
        VersionDocument {
            schema: VERSION_SCHEMA,
            version: version.to_owned(),
            commit: commit.map(str::to_owned),
            commit_date: commit.and(commit_date).map(str::to_owned),
            target: target.to_owned(),
            documents: documents
                .into_iter()
                .map(|(name, schema)| (name.to_owned(), schema.to_owned()))
                .collect(),
        }
    }
}

/// Writes the version as `--version` does: `rke2-payload VERSION (COMMIT DATE)`, the commit
/// shortened to 7 digits and left out when unknown.
pub fn text(out: &mut impl Write, doc: &VersionDocument) -> Result<()> {
    write!(out, "rke2-payload {}", doc.version)?;
    if let Some(commit) = &doc.commit {
        let short = commit.get(..7).unwrap_or(commit);
        match &doc.commit_date {
            Some(date) => write!(out, " ({short} {date})")?,
            None => write!(out, " ({short})")?,
        }
    }
    writeln!(out)?;
    Ok(())
}

/// Writes the version document as pretty JSON.
pub fn json(out: &mut impl Write, doc: &VersionDocument) -> Result<()> {
    crate::document::json(out, doc)
}

/// Writes the version document as YAML.
pub fn yaml(out: &mut impl Write, doc: &VersionDocument) -> Result<()> {
    crate::document::yaml(out, doc)
}
