//! GitHub Actions: workflow commands (`::error file=…,line=…,title=…::message`) that annotate
//! the run and the pull request, and a Markdown step summary with every finding.
//!
//! GitHub shows at most 10 annotations of each level (error, warning, notice) per step and
//! drops the rest without a word. So the annotations come most severe first, at most 10 of a
//! level, the tenth saying how many more there are; the step summary
//! (`$GITHUB_STEP_SUMMARY`, when the runner sets it) lists them all.

use std::io::Write;

use anyhow::{Context as _, Result};
use rke2_payload::{LintReport, Severity};

use super::sarif::{Base, repository_path};
use super::{Placed, placed};
use crate::style::safe;

/// The most annotations of one level GitHub shows for a step.
pub(super) const PER_LEVEL: usize = 10;

/// The workflow command of a severity.
fn command(severity: Severity) -> &'static str {
    match severity {
        Severity::Error => "error",
        Severity::Warning => "warning",
        _ => "notice",
    }
}

/// The escapes GitHub's toolkit applies to a command's data.
fn data(s: &str) -> String {
    safe(s)
        .replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

/// … and to its properties.
fn property(s: &str) -> String {
    data(s).replace(':', "%3A").replace(',', "%2C")
}

/// One annotation; its file relative to the repository root, as GitHub matches it.
fn annotation(out: &mut impl Write, p: &Placed<'_>, base: &Base) -> Result<()> {
    let f = p.finding;
    let mut props = Vec::new();
    if let Some(file) = &p.file {
        props.push(format!("file={}", property(&repository_path(base, file))));
        if let Some(line) = p.line {
            props.push(format!("line={line}"));
        }
    }
    props.push(format!(
        "title={}",
        property(&format!("{} ({})", f.id(), p.place))
    ));
    writeln!(
        out,
        "::{} {}::{}",
        command(f.severity),
        props.join(","),
        data(&p.message(&p.who))
    )?;
    Ok(())
}

/// The annotations, most severe first within GitHub's limit per level, then the step summary.
pub(super) fn github(
    out: &mut impl Write,
    report: &LintReport,
    path: &std::path::Path,
) -> Result<()> {
    let base = Base::here();
    let mut all = placed(report, path);
    all.sort_by_key(|p| p.finding.severity);
    for severity in [Severity::Error, Severity::Warning, Severity::Info] {
        let of_level: Vec<&Placed<'_>> = all
            .iter()
            .filter(|p| command(p.finding.severity) == command(severity))
            .collect();
        let shown = if of_level.len() > PER_LEVEL {
            PER_LEVEL - 1
        } else {
            of_level.len()
        };
        for p in &of_level[..shown] {
            annotation(out, p, &base)?;
        }
        if of_level.len() > shown {
            let more = of_level.len() - shown;
            let summary = if std::env::var_os("GITHUB_STEP_SUMMARY").is_some() {
                "the step summary lists them all"
            } else {
                "`rke2-payload lint` lists them all"
            };
            writeln!(
                out,
                "::{} title={}::{}",
                command(severity),
                property(&format!("{more} more {} findings", command(severity))),
                data(&format!(
                    "{more} more findings of this level are not annotated (GitHub shows {PER_LEVEL} per level and step); {summary}"
                ))
            )?;
        }
    }
    if let Some(file) = std::env::var_os("GITHUB_STEP_SUMMARY") {
        let mut options = std::fs::OpenOptions::new();
        options.append(true).create(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        let mut summary = options
            .open(&file)
            .with_context(|| format!("writing the step summary {}", file.to_string_lossy()))?;
        summary.write_all(step_summary(report, &all).as_bytes())?;
    }
    Ok(())
}

/// A Markdown table cell: safe for a terminal, pipes and line breaks escaped, HTML neutral.
fn cell(s: &str) -> String {
    safe(s)
        .replace('\\', "\\\\")
        .replace('|', "\\|")
        .replace(['\r', '\n'], " ")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// The step summary: the counts and a table of every finding, most severe first.
pub(super) fn step_summary(report: &LintReport, all: &[Placed<'_>]) -> String {
    let s = &report.summary;
    let mut md = format!(
        "## rke2-payload lint\n\n{} Secret(s): {} error(s), {} warning(s), {} info\n\n",
        report.secrets.len(),
        s.errors,
        s.warnings,
        s.infos
    );
    if all.is_empty() {
        md.push_str("No findings.\n");
        return md;
    }
    md.push_str("| level | check | where | finding |\n|---|---|---|---|\n");
    for p in all {
        let at = match (&p.file, p.line) {
            (Some(file), Some(line)) => format!("{file}:{line}"),
            (Some(file), None) => file.clone(),
            _ => p.place.clone(),
        };
        md.push_str(&format!(
            "| {} | `{}` | {} | {} |\n",
            p.finding.severity.as_str(),
            p.finding.id(),
            cell(&at),
            cell(&p.message(&p.place))
        ));
    }
    md.push('\n');
    md
}
