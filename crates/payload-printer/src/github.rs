//! GitHub Actions: workflow commands (`::error file=…,line=…,title=…::message`) that annotate
//! the run and the pull request, and a Markdown step summary with every finding.
//!
//! GitHub shows at most 10 annotations of each level (error, warning, notice) per step and
//! drops the rest without a word. So the annotations come most severe first, at most 10 of a
//! level, the tenth saying how many more there are; the step summary (which the caller appends
//! to `$GITHUB_STEP_SUMMARY` when the runner sets it) lists them all, as far as GitHub's 1 MiB
//! for a step's summary goes (past it GitHub drops the whole summary): then its last line says
//! how many are left out.
//!
//! Each annotation is one line: `::LEVEL file=PATH,line=N,title=CHECK (PLACE)::MESSAGE`, with
//! `LEVEL` `error`, `warning` or `notice`, the file relative to the repository root, and
//! GitHub's toolkit escapes (`%25`, `%0D`, `%0A`; in properties also `%3A`, `%2C`).

use std::io::Write;
use std::path::Path;

use rke2_payload::{LintReport, Severity};

use crate::Result;
use crate::placed::{Placed, Repository, placed};
use crate::style::safe;

/// The most annotations of one level GitHub shows for a step.
pub const PER_LEVEL: usize = 10;

/// The workflow command of a severity.
fn command(severity: Severity) -> &'static str {
    match severity {
        Severity::Error => "error",
        Severity::Warning => "warning",
        _ => "notice",
    }
}

/// The escapes GitHub's toolkit applies to a command's data.
pub(crate) fn data(s: &str) -> String {
    safe(s)
        .replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

/// … and to its properties.
pub(crate) fn property(s: &str) -> String {
    data(s).replace(':', "%3A").replace(',', "%2C")
}

/// One annotation; its file relative to the repository root, as GitHub matches it.
fn annotation(out: &mut impl Write, p: &Placed<'_>, repository: &Repository) -> Result<()> {
    let f = p.finding;
    let mut props = Vec::new();
    if let Some(file) = &p.file {
        props.push(format!(
            "file={}",
            property(&repository.repository_path(file))
        ));
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

/// Every finding placed, most severe first.
fn sorted<'r>(report: &'r LintReport, input: Option<&Path>) -> Vec<Placed<'r>> {
    let mut all = placed(report, input);
    all.sort_by_key(|p| p.finding.severity);
    all
}

/// Writes the annotations, most severe first within GitHub's limit per level. `input` is the
/// file the input stands for (`None`: standard input or the cluster, with no name);
/// `step_summary` says whether the caller writes the step summary too (the note on the last
/// annotation of a level points there, else at `rke2-payload lint`).
///
/// ```
/// use std::path::Path;
/// use payload_printer::Repository;
/// use rke2_payload::{LintOptions, Linter, Selector};
///
/// let list = br##"{"kind": "List", "items": [{"kind": "Secret", "metadata": {"name": "w"},
///   "stringData": {"format": "cloud-config", "value": "#cloud-config\nruncmd: [reboot]\n"}}]}"##;
/// let report = Linter::new(LintOptions::new()).lint_stream(&list[..], &Selector::default(), 1)?;
/// let repository = Repository::new("/repo".into(), Some("/repo".into()));
///
/// let mut out = Vec::new();
/// let input = Some(Path::new("secrets.json"));
/// payload_printer::github::annotations(&mut out, &report, input, &repository, false)?;
/// let text = String::from_utf8(out)?;
/// assert!(text.starts_with("::error file=secrets.json,line=1,title=rke2-config-missing (w)::w: "));
///
/// let mut summary = Vec::new();
/// payload_printer::github::step_summary(&mut summary, &report, input, 1 << 20)?;
/// assert!(String::from_utf8(summary)?.starts_with("## rke2-payload lint\n"));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn annotations(
    out: &mut impl Write,
    report: &LintReport,
    input: Option<&Path>,
    repository: &Repository,
    step_summary: bool,
) -> Result<()> {
    let all = sorted(report, input);
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
            annotation(out, p, repository)?;
        }
        if of_level.len() > shown {
            let more = of_level.len() - shown;
            let summary = if step_summary {
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

/// The most bytes GitHub takes from a step's summary file: past it, the whole summary of the
/// step is dropped (not cut), with an error annotation.
pub const STEP_SUMMARY_LIMIT: u64 = 1 << 20;

/// Writes the step summary in at most `budget` bytes (what [`STEP_SUMMARY_LIMIT`] leaves of the
/// file): a heading, the counts and a Markdown table of the findings, most severe first
/// (`| level | check | where | finding |`), or `No findings.` When the table does not fit, the
/// rows that fit and a last line saying how many findings are left out and how to see them
/// all; when not even that fits, nothing.
pub fn step_summary(
    out: &mut impl Write,
    report: &LintReport,
    input: Option<&Path>,
    budget: u64,
) -> Result<()> {
    let all = sorted(report, input);
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
        if md.len() as u64 <= budget {
            out.write_all(md.as_bytes())?;
        }
        return Ok(());
    }
    md.push_str("| level | check | where | finding |\n|---|---|---|---|\n");
    let mut rows = Vec::with_capacity(all.len());
    for p in &all {
        let at = match (&p.file, p.line) {
            (Some(file), Some(line)) => format!("{file}:{line}"),
            (Some(file), None) => file.clone(),
            _ => p.place.clone(),
        };
        rows.push(format!(
            "| {} | `{}` | {} | {} |\n",
            p.finding.severity.as_str(),
            p.finding.id(),
            cell(&at),
            cell(&p.message(&p.place))
        ));
    }
    let whole = md.len() + rows.iter().map(String::len).sum::<usize>() + 1;
    if whole as u64 <= budget {
        for row in &rows {
            md.push_str(row);
        }
        md.push('\n');
        out.write_all(md.as_bytes())?;
        return Ok(());
    }
    // The rows that fit with the last line, whose length is at most this one's.
    let left_out = |n: usize| {
        format!(
            "\n**{n} of {} findings are left out**: GitHub takes at most {} KiB of a step's summary. `rke2-payload lint` (or `-o json`) lists them all.\n",
            rows.len(),
            STEP_SUMMARY_LIMIT / 1024
        )
    };
    let room = budget.saturating_sub((md.len() + left_out(rows.len()).len()) as u64);
    if md.len() as u64 + left_out(rows.len()).len() as u64 > budget {
        return Ok(());
    }
    let mut used = 0u64;
    let mut shown = 0;
    for row in &rows {
        if used + row.len() as u64 > room {
            break;
        }
        used += row.len() as u64;
        md.push_str(row);
        shown += 1;
    }
    md.push_str(&left_out(rows.len() - shown));
    out.write_all(md.as_bytes())?;
    Ok(())
}
