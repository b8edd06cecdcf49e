//! A GitLab Code Quality report: a JSON array with one issue per finding, each with a stable
//! fingerprint, for the merge-request widget.
//!
//! An issue is `{"description", "check_name", "fingerprint", "severity", "location": {"path",
//! "lines": {"begin"}}}`: the severity is `critical` (error), `major` (warning) or `info`; the
//! path is the input file, or the file a rendered Secret's object came from
//! (`standard-input` when there is none); the line is that of the Secret's value or of the
//! object (1 when unknown).

use std::io::Write;
use std::path::Path;

use rke2_payload::{LintReport, Severity};

use crate::Result;
use crate::placed::{fingerprint, placed};

/// The Code Quality report of a lint report; `input` is the file the input stands for (`None`:
/// standard input or the cluster, with no name).
pub fn document(report: &LintReport, input: Option<&Path>) -> serde_json::Value {
    let mut issues = Vec::new();
    for p in placed(report, input) {
        let f = p.finding;
        let severity = match f.severity {
            Severity::Error => "critical",
            Severity::Warning => "major",
            _ => "info",
        };
        issues.push(serde_json::json!({
            "description": p.message(&p.place),
            "check_name": f.id(),
            "fingerprint": fingerprint(&p.key),
            "severity": severity,
            "location": {
                "path": p.file.as_deref().unwrap_or("standard-input"),
                "lines": {"begin": p.line.unwrap_or(1)},
            },
        }));
    }
    serde_json::Value::Array(issues)
}

/// Writes the Code Quality report, pretty, free of control and bidi characters.
///
/// ```
/// use rke2_payload::{LintOptions, Linter, Selector};
///
/// let list = br##"{"kind": "List", "items": [{"kind": "Secret", "metadata": {"name": "w"},
///   "stringData": {"format": "cloud-config", "value": "#cloud-config\nruncmd: [reboot]\n"}}]}"##;
/// let report = Linter::new(LintOptions::new()).lint_stream(&list[..], &Selector::default(), 1)?;
///
/// let mut out = Vec::new();
/// payload_printer::gitlab::write(&mut out, &report, None)?;
/// let issues: serde_json::Value = serde_json::from_slice(&out)?;
/// assert_eq!(issues[0]["check_name"], "rke2-config-missing");
/// assert_eq!(issues[0]["severity"], "critical");
/// assert_eq!(issues[0]["location"]["path"], "standard-input");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn write(out: &mut impl Write, report: &LintReport, input: Option<&Path>) -> Result<()> {
    crate::document::json(out, &document(report, input))
}
