//! Go's `text/template` with the Sprig functions Cluster API gives ClusterClass templates.
//! This first version evaluates no template: every one is refused by name, never skipped.

/// Why a template gives no text.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum TemplateError {
    /// What the template uses that this version does not evaluate.
    #[error("template function {name} is not supported by this preview")]
    Unsupported {
        /// The function (or `text/template`).
        name: String,
    },
}

/// The text of `template` executed on `data`.
pub(crate) fn render(_template: &str, _data: &serde_json::Value) -> Result<String, TemplateError> {
    Err(TemplateError::Unsupported {
        name: "text/template".to_owned(),
    })
}
