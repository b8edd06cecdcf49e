//! cloud-init's own JSON schema for cloud-config, when the `cloud-init` package has installed it.
//!
//! Without it, the `cloud-config-schema` check relies on the project's own rules for the modules
//! CAPRKE2 uses (the document layer's cloud-config reader).

use std::path::Path;

use serde_json::Value;

use crate::checks::{Check, Finding};

/// Where Debian's and Fedora's `cloud-init` packages install the schema.
pub const CLOUD_INIT_SCHEMA_PATHS: &[&str] = &[
    "/usr/lib/python3/dist-packages/cloudinit/config/schemas/schema-cloud-config-v1.json",
    "/usr/lib/python3/site-packages/cloudinit/config/schemas/schema-cloud-config-v1.json",
];

/// Why a schema file could not be used.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SchemaError {
    /// The file could not be read.
    #[error("{path}: {error}")]
    Read {
        /// The file.
        path: String,
        /// The I/O error.
        error: std::io::Error,
    },
    /// The file is not JSON.
    #[error("{path}: {message}")]
    NotJson {
        /// The file.
        path: String,
        /// The parser's message.
        message: String,
    },
    /// The file is JSON but not a schema the validator can compile.
    #[error("{path}: not a usable schema: {message}")]
    NotASchema {
        /// The file.
        path: String,
        /// The validator's message.
        message: String,
    },
}

/// A compiled cloud-config schema.
pub struct CloudInitSchema {
    validator: jsonschema::Validator,
    path: String,
}

impl std::fmt::Debug for CloudInitSchema {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CloudInitSchema")
            .field("path", &self.path)
            .finish_non_exhaustive()
    }
}

impl CloudInitSchema {
    /// Loads and compiles a schema file.
    ///
    /// # Errors
    /// [`SchemaError`] when the file cannot be read, is not JSON, or is not a schema.
    pub fn load(path: &Path) -> Result<Self, SchemaError> {
        let shown = || path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|error| SchemaError::Read {
            path: shown(),
            error,
        })?;
        let schema: Value = serde_json::from_str(&text).map_err(|e| SchemaError::NotJson {
            path: shown(),
            message: e.to_string(),
        })?;
        let validator =
            jsonschema::validator_for(&schema).map_err(|e| SchemaError::NotASchema {
                path: shown(),
                message: e.to_string(),
            })?;
        Ok(CloudInitSchema {
            validator,
            path: path.display().to_string(),
        })
    }

    /// The first schema found at [`CLOUD_INIT_SCHEMA_PATHS`].
    pub fn find() -> Option<Self> {
        CLOUD_INIT_SCHEMA_PATHS
            .iter()
            .map(Path::new)
            .filter(|p| p.is_file())
            .find_map(|p| Self::load(p).ok())
    }

    /// The file it was loaded from.
    pub fn path(&self) -> &str {
        &self.path
    }

    /// Validates a cloud-config text, read as cloud-init reads it (YAML 1.1 scalars, as
    /// PyYAML). A text that is not YAML yields nothing here (the parser reports it); messages
    /// name the key path and never repeat string values.
    pub fn validate(&self, text: &str) -> Vec<Finding> {
        // The values cloud-init sees: PyYAML's YAML 1.1 rules (`0o600` is text, `yes` a bool).
        let Ok(Some(value)) = crate::codec::yaml11::first_document(text) else {
            return Vec::new();
        };
        self.validator
            .iter_errors(&value)
            .take(50)
            .map(|e| {
                let at = e.instance_path().to_string();
                let at = if at.is_empty() { "/".to_owned() } else { at };
                Finding::located(
                    Check::CloudConfigSchema,
                    format!(
                        "cloud-init's schema rejects {at}: {} (schema: {})",
                        without_strings(&e.to_string()),
                        crate::codec::text::terminal_safe(&self.path)
                    ),
                    None,
                    None,
                )
            })
            .collect()
    }
}

/// Removes double-quoted JSON strings (values from the document) except JSON type names.
fn without_strings(message: &str) -> String {
    const TYPES: &[&str] = &[
        "string", "array", "object", "integer", "number", "boolean", "null",
    ];
    let mut out = String::with_capacity(message.len());
    let mut rest = message;
    while let Some(start) = rest.find('"') {
        out.push_str(&rest[..start]);
        let after = &rest[start + 1..];
        match after.find('"') {
            Some(end) => {
                let inner = &after[..end];
                if TYPES.contains(&inner) {
                    out.push('"');
                    out.push_str(inner);
                    out.push('"');
                } else {
                    out.push('…');
                }
                rest = &after[end + 1..];
            }
            None => {
                out.push('…');
                rest = "";
            }
        }
    }
    out.push_str(rest);
    out.lines().next().unwrap_or("").to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strings_are_removed_but_types_kept() {
        assert_eq!(
            without_strings(r#""hunter22" is not of type "array""#),
            r#"… is not of type "array""#
        );
    }

    #[test]
    fn validates_with_a_small_schema() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("schema.json");
        std::fs::write(
            &path,
            r#"{"$schema":"http://json-schema.org/draft-04/schema#","type":"object","properties":{"runcmd":{"type":"array"}}}"#,
        )
        .unwrap();
        let schema = CloudInitSchema::load(&path).unwrap();
        let problems = schema.validate("#cloud-config\nruncmd: \"s3cr3t-value\"\n");
        assert_eq!(problems.len(), 1);
        assert!(
            problems[0].message.contains("/runcmd"),
            "{}",
            problems[0].message
        );
        assert!(!problems[0].message.contains("s3cr3t"));
        assert!(schema.validate("#cloud-config\nruncmd: []\n").is_empty());
        // Comments anywhere do not matter: the document is what is checked.
        for text in [
            "#cloud-config\nntp: {}\n# a comment\nruncmd: 5\n",
            "#cloud-config\nntp: {}\n  # indented\nruncmd: 5\n",
            "#cloud-config\nruncmd: 5 # after\n",
        ] {
            assert_eq!(schema.validate(text).len(), 1, "{text}");
        }
    }
}
