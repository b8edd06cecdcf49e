//! `rke2-payload diff`.

use std::io::Write as _;
use std::path::Path;

use anyhow::{Context as _, Result, bail};
use rke2_payload::{
    Area, Change, ChangeKind, DecodeOptions, DiffOptions, DiffReport, Ignore, PairDiff, Side, diff,
};

use super::{Outcome, input_name, raw_stdout, styled};
use crate::cli::{DiffArgs, DiffFormat};
use crate::style::{BOLD, DIM, ERROR, OK, escape_unsafe, safe};

pub(crate) fn run(args: &DiffArgs) -> Result<Outcome> {
    if args.before.as_os_str() == "-" && args.after.as_os_str() == "-" {
        bail!("only one side can be standard input");
    }
    let decode = DecodeOptions::new().with_max_inflated(args.max_inflated);
    let read = |path: &Path| {
        rke2_payload::read_input(path, &decode)
            .with_context(|| format!("reading {}", input_name(path)))
    };
    // Manifests are compared as what CAPRKE2 would write for them (the same seed on both sides,
    // so the generated token and CAs are the same and only the template's changes show).
    let secrets = |path: &Path| -> Result<Vec<u8>> {
        let bytes = read(path)?;
        if !payload_preview::holds_manifests(&bytes) {
            return Ok(bytes);
        }
        super::rendered(&input_name(path), &bytes)
    };
    let (before, after) = (secrets(&args.before)?, secrets(&args.after)?);
    let options = DiffOptions::new()
        .with_decode(decode.clone())
        .with_ignore(
            args.ignore
                .iter()
                .filter_map(|i| Ignore::from_id(i))
                .collect(),
        )
        .with_strict(args.strict);
    let report = diff(&before, &after, &options).with_context(|| {
        format!(
            "comparing {} with {}",
            input_name(&args.before),
            input_name(&args.after)
        )
    })?;
    let mut out = raw_stdout();
    match args.output {
        DiffFormat::Json => {
            out.write_all(&escape_unsafe(&serde_json::to_vec_pretty(&report)?, false))?;
            writeln!(out)?;
        }
        DiffFormat::Markdown => out.write_all(markdown(&report).as_bytes())?,
        DiffFormat::Text => {
            let mut buf = styled();
            text(&mut buf, &report)?;
            out.write_all(&buf.into_inner())?;
        }
    }
    out.flush()?;
    Ok(if report.differs() {
        Outcome::CheckFailed
    } else {
        Outcome::Ok
    })
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

fn text(out: &mut impl std::io::Write, report: &DiffReport) -> Result<()> {
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

/// Markdown for a pull-request comment: a table of changes per pair, text diffs folded.
fn markdown(report: &DiffReport) -> String {
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
