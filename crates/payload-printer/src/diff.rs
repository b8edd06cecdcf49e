//! The documents of `diff`: text for people, Markdown for a pull-request comment, and JSON.
//!
//! The JSON document is the library's [`DiffReport`] (schema [`rke2_payload::DIFF_SCHEMA`]),
//! pretty. Text and Markdown are for people and may change from release to release.

use std::io::Write;

use rke2_payload::{Area, Change, ChangeKind, DiffReport, Ignore, PairDiff, Side};

use crate::Result;
use crate::style::{BOLD, DIM, ERROR, OK, safe};

/// Writes the report as its JSON document, pretty.
pub fn json(out: &mut impl Write, report: &DiffReport) -> Result<()> {
    crate::document::json(out, report)
}

fn side(s: &Side) -> String {
    match (&s.namespace, &s.name) {
        (Some(ns), Some(n)) => format!("{}/{}", safe(ns), safe(n)),
        (None, Some(n)) => safe(n).into_owned(),
        _ => "user data".to_owned(),
    }
}

fn pair_title(p: &PairDiff) -> String {
    let (a, b) = (side(&p.before), side(&p.after));
    if a == b {
        format!("Secret {a}")
    } else {
        format!("Secret {a} → {b} (paired by {})", p.paired_by)
    }
}

/// One change on one line: `~ server: a → b`, `+ file /etc/x: 0644 root:root, 50 B`.
fn line(c: &Change) -> String {
    let mark = match c.kind {
        ChangeKind::Added => "+",
        ChangeKind::Removed => "-",
        ChangeKind::Reordered => "↕",
        _ => "~",
    };
    let what = if c.item.is_empty() {
        c.area.to_string()
    } else {
        format!("{} {}", c.area, safe(&c.item))
    };
    let value = match (&c.before, &c.after, c.kind) {
        (_, Some(b), ChangeKind::Added) => format!(": {}", safe(b)),
        (Some(a), _, ChangeKind::Removed) => format!(": {}", safe(a)),
        (Some(a), Some(b), _) => format!(": {} → {}", safe(a), safe(b)),
        (None, None, ChangeKind::Reordered) => " reordered".to_owned(),
        (None, None, _) if c.area == Area::Token => " changed".to_owned(),
        _ => String::new(),
    };
    let note = match (&c.detail, c.area) {
        (Some(d), Area::Size) => format!(" ({})", safe(d)),
        _ => String::new(),
    };
    format!("{mark} {what}{value}{note}")
}

/// Writes the text report: a block per pair (its title, then a line per change: `+` added, `-`
/// removed, `~` changed, `↕` reordered, with the text diff of a file, command list or setting
/// under it), the Secrets of one side only, and the counts.
///
/// ```
/// use rke2_payload::{DiffOptions, diff};
///
/// let secret = |server: &str| format!(r##"{{"kind": "Secret", "metadata": {{"name": "w"}},
///   "stringData": {{"format": "cloud-config", "value": "#cloud-config\nwrite_files:\n- path: /etc/rancher/rke2/config.yaml\n  content: 'server: {server}'\n"}}}}"##);
/// let (before, after) = (secret("https://a:9345"), secret("https://b:9345"));
/// let report = diff(before.as_bytes(), after.as_bytes(), &DiffOptions::new())?;
///
/// let mut out = Vec::new();
/// payload_printer::diff::text(&mut out, &report)?;
/// let text = String::from_utf8(out)?;
/// assert!(text.contains("~ server: https://a:9345 → https://b:9345"), "{text}");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn text(out: &mut impl Write, report: &DiffReport) -> Result<()> {
    for p in &report.pairs {
        writeln!(out, "{BOLD}{}{BOLD:#}", pair_title(p))?;
        if p.changes.is_empty() {
            writeln!(out, "  {OK}no differences{OK:#}")?;
        }
        for c in &p.changes {
            writeln!(out, "  {}", line(c))?;
            if let Some(d) = c
                .detail
                .as_deref()
                .filter(|_| matches!(c.area, Area::File | Area::Command | Area::Setting))
            {
                for l in d.lines() {
                    writeln!(out, "      {DIM}{}{DIM:#}", safe(l))?;
                }
            }
        }
        writeln!(out)?;
    }
    for s in &report.only_before {
        writeln!(
            out,
            "{ERROR}only in the first input{ERROR:#}: Secret {}",
            side(s)
        )?;
    }
    for s in &report.only_after {
        writeln!(
            out,
            "{ERROR}only in the second input{ERROR:#}: Secret {}",
            side(s)
        )?;
    }
    let changed = report
        .pairs
        .iter()
        .filter(|p| !p.changes.is_empty())
        .count();
    writeln!(
        out,
        "{} pair(s), {changed} with differences, {} only in the first input, {} only in the second{}",
        report.pairs.len(),
        report.only_before.len(),
        report.only_after.len(),
        if report.ignored.is_empty() {
            String::new()
        } else {
            format!(
                " (ignoring {})",
                report
                    .ignored
                    .iter()
                    .map(|i| match i {
                        Ignore::Token => "the token",
                        Ignore::Ca => "the CAs",
                        _ => "other",
                    })
                    .collect::<Vec<_>>()
                    .join(" and ")
            )
        }
    )?;
    Ok(())
}

/// Writes Markdown for a pull-request comment: a table of changes per pair, text diffs folded
/// (`<details>`), the Secrets of one side only; `No differences.` when nothing differs.
pub fn markdown(out: &mut impl Write, report: &DiffReport) -> Result<()> {
    out.write_all(markdown_string(report).as_bytes())?;
    Ok(())
}

/// The Markdown of [`markdown`].
fn markdown_string(report: &DiffReport) -> String {
    // Markdown table cells: no `|`, no line break, no HTML tag from the input.
    let cell = |s: &str| {
        safe(s)
            .replace('&', "&amp;")
            .replace('<', "&lt;")
            .replace('>', "&gt;")
            .replace('|', "\\|")
            .replace('\n', " ")
    };
    let mut out = String::from("### Bootstrap data changes (rke2-payload diff)\n\n");
    if !report.differs() {
        out.push_str("No differences.\n");
        return out;
    }
    for p in &report.pairs {
        if p.changes.is_empty() {
            continue;
        }
        out.push_str(&format!(
            "**{}**\n\n| | what | before | after |\n|---|---|---|---|\n",
            cell(&pair_title(p))
        ));
        for c in &p.changes {
            let mark = match c.kind {
                ChangeKind::Added => "➕",
                ChangeKind::Removed => "➖",
                ChangeKind::Reordered => "↕️",
                _ => "✏️",
            };
            let what = if c.item.is_empty() {
                c.area.to_string()
            } else {
                format!("{} `{}`", c.area, cell(&c.item))
            };
            out.push_str(&format!(
                "| {mark} | {what} | {} | {} |\n",
                c.before.as_deref().map(cell).unwrap_or_default(),
                c.after.as_deref().map(cell).unwrap_or_default()
            ));
        }
        // Text diffs and a new order, folded: each line escaped on its own.
        for c in &p.changes {
            let Some(detail) = c.detail.as_deref() else {
                continue;
            };
            let (summary, language) = match c.area {
                Area::File | Area::Setting if detail.starts_with("---") => (cell(&c.item), "diff"),
                Area::Command => ("commands, in their new order".to_owned(), "text"),
                _ => continue,
            };
            let body: String = detail
                .lines()
                .map(|l| format!("{}\n", safe(l).replace("```", "` ` `")))
                .collect();
            out.push_str(&format!(
                "\n<details><summary>{summary}</summary>\n\n```{language}\n{body}```\n\n</details>\n"
            ));
        }
        out.push('\n');
    }
    for s in &report.only_before {
        out.push_str(&format!("- only before: `{}`\n", cell(&side(s))));
    }
    for s in &report.only_after {
        out.push_str(&format!("- only after: `{}`\n", cell(&side(s))));
    }
    out
}
