//! The documents of `lint` for people and for programs: text, JSON and YAML, and the check
//! table (`lint --list-checks`). The CI formats have modules of their own: [`crate::sarif`],
//! [`crate::github`], [`crate::gitlab`], [`crate::junit`].
//!
//! Text: the manifests' findings first (`manifests`, each with `(file:line)`), then a line per
//! Secret (`✓` and its role when it has no finding; its title and role, then a line per
//! finding, most severe first; `✗` and the error when it cannot be read), then the counts. The
//! layout is for people and may change from release to release; JSON is the stable form.

use std::io::Write;

use rke2_payload::{Check, Finding, LintReport, LintedSecret};

use crate::Result;
use crate::style::{
    BOLD, DIM, ERROR, OK, file_line, finding_at, safe, secret_title, severity_label,
};

/// The Secret's name as the reports show it (terminal-safe).
pub(crate) fn title(s: &LintedSecret) -> String {
    let unnamed = if s.error.is_some() {
        "an unreadable object"
    } else {
        "user data"
    };
    secret_title(s.namespace.as_deref(), s.name.as_deref(), unnamed)
}

/// Writes the text report.
///
/// ```
/// use rke2_payload::{LintOptions, Linter, Selector};
///
/// let list = br##"{"kind": "List", "items": [{"kind": "Secret", "metadata": {"name": "w"},
///   "stringData": {"format": "cloud-config", "value": "#cloud-config\nruncmd: [reboot]\n"}}]}"##;
/// let report = Linter::new(LintOptions::new()).lint_stream(&list[..], &Selector::default(), 1)?;
///
/// let mut out = Vec::new();
/// payload_printer::lint::text(&mut out, &report)?;
/// let text = String::from_utf8(out)?;
/// assert!(text.contains("rke2-config-missing"));
/// assert!(text.ends_with("1 Secret(s): 1 error(s), 0 warning(s), 0 info\n"));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn text(out: &mut impl Write, report: &LintReport) -> Result<()> {
    text_report(out, report, false)
}

/// Writes the findings alone, as [`text`] writes them: no line for a Secret without findings,
/// no counts (`lint --quiet`); nothing when there is no finding.
///
/// ```
/// use rke2_payload::{LintOptions, Linter, Selector};
///
/// let list = br##"{"kind": "List", "items": [{"kind": "Secret", "metadata": {"name": "w"},
///   "stringData": {"format": "cloud-config", "value": "#cloud-config\nruncmd: [reboot]\n"}}]}"##;
/// let report = Linter::new(LintOptions::new()).lint_stream(&list[..], &Selector::default(), 1)?;
///
/// let mut out = Vec::new();
/// payload_printer::lint::findings_text(&mut out, &report)?;
/// let text = String::from_utf8(out)?;
/// assert!(text.contains("rke2-config-missing"));
/// assert!(!text.contains("Secret(s)"));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn findings_text(out: &mut impl Write, report: &LintReport) -> Result<()> {
    text_report(out, report, true)
}

fn text_report(out: &mut impl Write, report: &LintReport, quiet: bool) -> Result<()> {
    let (linted, summary) = (&report.secrets, &report.summary);
    if !report.manifests.is_empty() {
        writeln!(out, "{BOLD}manifests{BOLD:#}")?;
        let mut findings: Vec<&Finding> = report.manifests.iter().collect();
        findings.sort_by_key(|f| f.severity);
        for f in findings {
            finding_line(out, f, &manifest_at(f))?;
        }
    }
    for s in linted {
        if let Some(e) = &s.error {
            writeln!(
                out,
                "{ERROR}✗{ERROR:#} {BOLD}{}{BOLD:#}  {ERROR}error{ERROR:#} {}: {}{DIM}{}{DIM:#}",
                title(s),
                Check::SecretUnreadable.id(),
                safe(&e.message),
                secret_at(s)
            )?;
            continue;
        }
        let role = s.role.map_or("unknown role", |r| r.as_str());
        if s.findings.is_empty() {
            if quiet {
                continue;
            }
            writeln!(
                out,
                "{OK}✓{OK:#} {BOLD}{}{BOLD:#}  {DIM}{role}{}{DIM:#}",
                title(s),
                secret_at(s)
            )?;
            continue;
        }
        writeln!(
            out,
            "{BOLD}{}{BOLD:#}  {DIM}{role}{}{DIM:#}",
            title(s),
            secret_at(s)
        )?;
        let mut findings: Vec<&Finding> = s.findings.iter().collect();
        findings.sort_by_key(|f| f.severity);
        for f in findings {
            finding_line(out, f, &finding_at(f))?;
        }
    }
    if quiet {
        return Ok(());
    }
    write!(
        out,
        "\n{} Secret(s): {} error(s), {} warning(s), {} info",
        linted.len(),
        summary.errors,
        summary.warnings,
        summary.infos
    )?;
    if summary.unreadable > 0 {
        write!(out, ", {} unreadable", summary.unreadable)?;
    }
    writeln!(out)?;
    if summary.suppressed > 0 {
        writeln!(
            out,
            "{} finding(s) suppressed by ignore-check annotations (-o json lists each with its reason)",
            summary.suppressed
        )?;
    }
    Ok(())
}

/// One finding as a line of the text report.
fn finding_line(out: &mut impl Write, f: &Finding, at: &str) -> Result<()> {
    let (style, label) = severity_label(f.severity);
    writeln!(
        out,
        "  {style}{label:<7}{style:#} {:<28} {}{DIM}{at}{DIM:#}",
        f.id(),
        safe(&f.message)
    )?;
    Ok(())
}

/// Where a Secret read from one of several input files is, after its role in the text report
/// (`  (file:line)`); nothing for a single input.
fn secret_at(s: &LintedSecret) -> String {
    s.file
        .as_deref()
        .map(|file| format!("  ({})", file_line(file, s.line)))
        .unwrap_or_default()
}

/// Where a manifest finding is, after its message in the text report (`  (file:line)`).
fn manifest_at(f: &Finding) -> String {
    f.manifest
        .as_ref()
        .map(|site| format!("  ({})", file_line(&site.file, site.line)))
        .unwrap_or_default()
}

/// Writes the report as its JSON document (schema [`rke2_payload::LINT_SCHEMA`]), pretty.
pub fn json(out: &mut impl Write, report: &LintReport) -> Result<()> {
    crate::document::json(out, report)
}

/// Writes the report's JSON document as YAML.
pub fn yaml(out: &mut impl Write, report: &LintReport) -> Result<()> {
    crate::document::yaml(out, report)
}

/// Writes `-o name`: a line `secret/NAMESPACE/NAME` ([`crate::document::name`]) per Secret
/// that fails the gate, in report order: one with an error finding (a Secret that cannot be read
/// has one), or a warning when `deny_warnings`. The findings about manifests name no Secret and
/// are not written (the exit code still counts them).
///
/// ```
/// use rke2_payload::{LintOptions, Linter, Selector};
///
/// let list = br##"{"kind": "List", "items": [{"kind": "Secret", "metadata": {"name": "w", "namespace": "capi"},
///   "stringData": {"format": "cloud-config", "value": "#cloud-config\nruncmd: [reboot]\n"}}]}"##;
/// let report = Linter::new(LintOptions::new()).lint_stream(&list[..], &Selector::default(), 1)?;
/// let mut out = Vec::new();
/// payload_printer::lint::names(&mut out, &report, false)?;
/// assert_eq!(String::from_utf8(out).unwrap(), "secret/capi/w\n");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn names(out: &mut impl Write, report: &LintReport, deny_warnings: bool) -> Result<()> {
    for secret in &report.secrets {
        let fails = secret.findings.iter().any(|f| {
            f.severity == rke2_payload::Severity::Error
                || (deny_warnings && f.severity == rke2_payload::Severity::Warning)
        });
        if fails {
            crate::document::name(out, secret.name.as_deref(), secret.namespace.as_deref())?;
        }
    }
    Ok(())
}

/// Writes the check ids, one a line (`lint --list-checks -o name`): what `--allow` takes.
pub fn checks_names(out: &mut impl Write) -> Result<()> {
    for c in Check::ALL {
        writeln!(out, "{}", c.id())?;
    }
    Ok(())
}

/// The schema id of the check table's document (`lint --list-checks -o json`).
pub const CHECKS_SCHEMA: &str = "rke2-payload/checks/v1";

/// The check table as a document: `{"schema": "rke2-payload/checks/v1", "checks": [...]}`.
#[derive(Debug, Clone, serde::Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[non_exhaustive]
pub struct ChecksDocument {
    /// Always [`CHECKS_SCHEMA`].
    pub schema: &'static str,
    /// Every check, in the order of [`Check::ALL`].
    pub checks: Vec<CheckEntry>,
}

/// One check of the table.
#[derive(Debug, Clone, serde::Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[non_exhaustive]
pub struct CheckEntry {
    /// The check's stable id.
    pub id: Check,
    /// Its default severity.
    pub severity: rke2_payload::Severity,
    /// What it catches, in a line.
    pub summary: &'static str,
    /// Why it matters and what to do.
    pub explanation: &'static str,
}

/// The check table's document.
pub fn checks_document() -> ChecksDocument {
    ChecksDocument {
        schema: CHECKS_SCHEMA,
        checks: Check::ALL
            .iter()
            .map(|c| CheckEntry {
                id: *c,
                severity: c.severity(),
                summary: c.summary(),
                explanation: c.explanation(),
            })
            .collect(),
    }
}

/// Writes the check table as pretty JSON (`{"schema": "rke2-payload/checks/v1", "checks":
/// [{"id", "severity", "summary", "explanation"}…]}`).
pub fn checks_json(out: &mut impl Write) -> Result<()> {
    serde_json::to_writer_pretty(&mut *out, &checks_document())?;
    writeln!(out)?;
    Ok(())
}

/// Writes the check table's JSON document as YAML.
pub fn checks_yaml(out: &mut impl Write) -> Result<()> {
    crate::document::yaml(out, &checks_document())
}

/// Writes the check table as text: a line per check, id, default severity and summary.
///
/// ```
/// let mut out = Vec::new();
/// payload_printer::lint::checks_text(&mut out)?;
/// let text = String::from_utf8(out).unwrap();
/// assert!(text.lines().any(|l| l.starts_with("rke2-config-missing ")));
/// # Ok::<(), payload_printer::Error>(())
/// ```
pub fn checks_text(out: &mut impl Write) -> Result<()> {
    for c in Check::ALL {
        writeln!(
            out,
            "{:<28} {:<8} {}",
            c.id(),
            c.severity().as_str(),
            c.summary()
        )?;
    }
    Ok(())
}
