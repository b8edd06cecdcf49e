//! Findings: problems and notes about a payload, as data with stable ids.

/// How serious a finding is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum Severity {
    /// The node will not boot or join as intended.
    Error,
    /// Likely wrong; check it.
    Warning,
    /// Worth knowing.
    Info,
}

impl Severity {
    /// `error`, `warning` or `info`.
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Info => "info",
        }
    }
}

/// One finding.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Finding {
    /// Stable id, e.g. `cloud-config-invalid-yaml`.
    pub id: &'static str,
    /// Severity.
    pub severity: Severity,
    /// What is wrong and what to do; never a secret value.
    pub message: String,
    /// The file of the payload concerned, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// 1-based line in the user data (or in `path`), if known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<u64>,
    /// 1-based column, if known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub column: Option<u64>,
}

impl Finding {
    /// A finding without a location.
    pub fn new(id: &'static str, severity: Severity, message: impl Into<String>) -> Self {
        Finding {
            id,
            severity,
            message: message.into(),
            path: None,
            line: None,
            column: None,
        }
    }

    /// Sets the file concerned.
    pub fn at_path(mut self, path: impl Into<String>) -> Self {
        self.path = Some(path.into());
        self
    }
}
