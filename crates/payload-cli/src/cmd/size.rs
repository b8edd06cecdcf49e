//! `rke2-payload size`.

use std::io::Write;

use anyhow::{Result, bail};
use rke2_payload::{
    CLOUDS, Compression, Counted, SIZE_SCHEMA, SizeOptions, SizeReport, Sizer, Target, Verdict,
    find_cloud,
};

use super::{
    Items, Layout, Outcome, decode_options, error_item, raw_stdout, report_refusals,
    secrets_and_refusals, selector, streamed, styled, unreadable_secrets,
};
use crate::cli::{SizeArgs, SizeFormat};
use crate::style::{BOLD, DIM, ERROR, OK, WARN, group, safe, secret_title, xml};

pub(crate) fn run(args: &SizeArgs) -> Result<Outcome> {
    let path = args.input.path();
    let selector = selector(&args.input)?;
    let options = size_options(args)?;
    let mut out = raw_stdout();
    let mut fits = true;
    let mut unreadable: Vec<String> = Vec::new();
    let mut skipped: Vec<rke2_payload::SkippedSecret> = Vec::new();
    let format = args.output;
    let layout = match format {
        SizeFormat::Json => Layout::Json,
        SizeFormat::Yaml => Layout::Yaml,
        SizeFormat::Text | SizeFormat::Junit => Layout::Text,
    };
    let mut items = Items::new(layout, SIZE_SCHEMA);
    // JUnit needs totals in its first element: collect only what it prints.
    let mut junit_items = Vec::new();
    // Replicas' identical payloads are measured once; see `Sizer`.
    let sizer = Sizer::new(options);
    let (input, refusals) = secrets_and_refusals(&args.input)?;
    // Reports are measured and rendered on the worker threads; this thread writes them in order.
    streamed(
        sizer.for_each(
            input,
            &selector,
            args.input.jobs,
            |sizer, secret| -> Result<(bool, Rendered)> {
                let failed = |e: rke2_payload::Error| {
                    if let Some(skipped) = e.skipped() {
                        return Ok((true, Rendered::Skipped(skipped)));
                    }
                    let message = e.to_string();
                    let item = match format {
                        SizeFormat::Junit => Rendered::Junit(JunitItem::Failed(
                            secret_title(
                                secret.namespace(),
                                secret.name(),
                                &format!("object #{}", secret.id().index + 1),
                            ),
                            message,
                        )),
                        _ => Rendered::Error(error_item(secret, &message, layout), message),
                    };
                    Ok((true, item))
                };
                match format {
                    SizeFormat::Json | SizeFormat::Yaml => match sizer.measure_json(secret) {
                        Ok((json, fits)) => Ok((fits, Rendered::Bytes(json))),
                        Err(e) => failed(e),
                    },
                    SizeFormat::Junit => match sizer.measure(secret) {
                        Ok(report) => Ok((
                            report.payload.fits(),
                            Rendered::Junit(JunitItem::Report(Box::new(report))),
                        )),
                        Err(e) => failed(e),
                    },
                    SizeFormat::Text => match sizer.measure(secret) {
                        Ok(report) => {
                            let mut buf = styled();
                            text(&mut buf, &report)?;
                            Ok((report.payload.fits(), Rendered::Bytes(buf.into_inner())))
                        }
                        Err(e) => failed(e),
                    },
                }
            },
            |made| {
                let (fit, rendered) = made?;
                fits &= fit;
                match rendered {
                    Rendered::Junit(item) => {
                        if let JunitItem::Failed(_, message) = &item {
                            unreadable.push(message.clone());
                        }
                        junit_items.push(item);
                        Ok(())
                    }
                    Rendered::Error(bytes, message) => {
                        unreadable.push(message);
                        items.item(&mut out, &bytes)
                    }
                    Rendered::Bytes(bytes) => items.item(&mut out, &bytes),
                    Rendered::Skipped(one) => {
                        skipped.push(one);
                        Ok(())
                    }
                }
            },
        ),
        path,
    )?;
    if format == SizeFormat::Junit {
        junit(&mut out, &junit_items)?;
    }
    let mut fields = vec![("fits", fits.to_string())];
    fields.extend(super::skipped_field(&skipped));
    items.finish(&mut out, &fields)?;
    super::report_skipped(&skipped);
    out.flush()?;
    unreadable_secrets(path, &unreadable)?;
    // What CAPRKE2 would refuse fails the gate, whatever the sizes.
    report_refusals(&refusals);
    Ok(if fits && refusals.is_empty() {
        Outcome::Ok
    } else {
        Outcome::CheckFailed
    })
}

/// One Secret's report, made on a worker thread.
enum Rendered {
    /// Rendered as JSON or text.
    Bytes(Vec<u8>),
    /// The item that says the Secret cannot be read (JSON or text), and the message.
    Error(Vec<u8>, String),
    /// Kept for JUnit, which needs all reports before it writes anything.
    Junit(JunitItem),
    /// Another provider's Secret, passed over.
    Skipped(rke2_payload::SkippedSecret),
}

/// What JUnit writes a suite for.
enum JunitItem {
    /// A Secret measured.
    Report(Box<SizeReport>),
    /// A Secret that cannot be read: its title, the message.
    Failed(String, String),
}

fn size_options(args: &SizeArgs) -> Result<SizeOptions> {
    let mut targets = cloud_targets(&args.cloud)?;
    // Platforms the user names are measured as named; otherwise a Secret rendered from
    // manifests is measured against its infrastructure template's path.
    let follow_delivery = targets.is_empty();
    if let Some((limit_bytes, counted)) = args.budget {
        targets.push(Target::Budget {
            limit_bytes,
            counted,
        });
    }
    if targets.is_empty() {
        // A gate should not fail on a guess: platforms whose limit no source states are
        // measured only when asked for (`--cloud ID` or `--cloud all`).
        targets = CLOUDS
            .iter()
            .filter(|c| c.is_verified())
            .map(Target::Cloud)
            .collect();
    }
    Ok(SizeOptions::new()
        .with_decode(decode_options(&args.input))
        .with_targets(targets)
        .with_headroom_percent(args.headroom)
        .with_contributors(args.output == SizeFormat::Text)
        .with_follow_delivery(follow_delivery))
}

/// The platforms named by `--cloud` (`all` for every one).
pub(crate) fn cloud_targets(ids: &[String]) -> Result<Vec<Target>> {
    let mut targets = Vec::new();
    for id in ids.iter().map(|s| s.trim()).filter(|s| !s.is_empty()) {
        if id == "all" {
            targets.extend(CLOUDS.iter().map(Target::Cloud));
            continue;
        }
        match find_cloud(id) {
            Some(cloud) => targets.push(Target::Cloud(cloud)),
            None => bail!(
                "unknown cloud {id:?}; known: {}",
                CLOUDS.iter().map(|c| c.id).collect::<Vec<_>>().join(", ")
            ),
        }
    }
    Ok(targets)
}

/// The Secret's name as text shows it (terminal-safe).
fn title(report: &SizeReport) -> String {
    secret_title(
        report.namespace.as_deref(),
        report.name.as_deref(),
        "user data",
    )
}

fn counted_name(counted: Counted) -> &'static str {
    match counted {
        Counted::Raw => "raw bytes",
        _ => "base64 bytes",
    }
}

fn text(out: &mut impl Write, sized: &SizeReport) -> Result<()> {
    let report = &*sized.payload;
    let compression = match report.compression {
        Compression::None => "not compressed",
        Compression::Gzip => "gzip",
        Compression::IgnitionWrapper { .. } => "gzip in an Ignition wrapper",
        _ => "compressed",
    };
    let heading = match sized.name {
        Some(_) => format!("Secret {}", title(sized)),
        None => "User data".to_owned(),
    };
    writeln!(
        out,
        "{BOLD}{heading}{BOLD:#}  {DIM}{}, {compression}{DIM:#}",
        report.format
    )?;
    let gzip = if report.compression.is_gzip() {
        String::new()
    } else {
        format!(" · with gzipUserData: {} B", group(report.gzip_value_bytes))
    };
    writeln!(
        out,
        "  {DIM}data.value {} B · base64 {} B · user data {} B{gzip}{DIM:#}",
        group(report.value_bytes),
        group(report.base64_bytes),
        group(report.userdata_bytes),
    )?;
    let width = report
        .clouds
        .iter()
        .map(|v| v.cloud.len())
        .max()
        .unwrap_or(5);
    for v in &report.clouds {
        bar_line(out, v, width)?;
    }
    if !report.contributors.is_empty() {
        let parts: Vec<String> = report
            .contributors
            .iter()
            .take(5)
            .map(|c| format!("{} {} B ({:.0}%)", safe(&c.what), group(c.bytes), c.percent))
            .collect();
        writeln!(out, "  {DIM}biggest parts:{DIM:#} {}", parts.join(" · "))?;
    }
    Ok(())
}

fn bar_line(out: &mut impl Write, v: &Verdict, width: usize) -> Result<()> {
    const CELLS: usize = 20;
    let filled = ((v.used_percent / 100.0 * CELLS as f64).round() as usize).min(CELLS);
    let style = if !v.fits {
        ERROR
    } else if v.used_percent >= 80.0 {
        WARN
    } else {
        OK
    };
    let verdict = if v.fits {
        format!("{OK}fits{OK:#}")
    } else {
        format!(
            "{ERROR}over by {} B{ERROR:#}",
            group(v.headroom_bytes.unsigned_abs())
        )
    };
    let budget = if v.budget_bytes < v.limit_bytes {
        format!(" (budget {})", group(v.budget_bytes))
    } else {
        String::new()
    };
    writeln!(
        out,
        "  {:<width$}  {style}{}{style:#}{DIM}{}{DIM:#} {:>4.0}%  {} of {} {}{budget}  {verdict}",
        v.cloud,
        "█".repeat(filled),
        "░".repeat(CELLS - filled),
        v.used_percent,
        group(v.counted_bytes),
        group(v.limit_bytes),
        counted_name(v.counted),
    )?;
    for advice in &v.advice {
        writeln!(out, "  {:<width$}  {DIM}→ {advice}{DIM:#}", "")?;
    }
    if !v.path.is_empty() {
        let by = if v.chosen_by_manifests {
            "path, from the manifests"
        } else {
            "assumes"
        };
        writeln!(out, "  {:<width$}  {DIM}{by}: {}{DIM:#}", "", safe(&v.path))?;
    }
    Ok(())
}

fn junit(out: &mut impl Write, items: &[JunitItem]) -> Result<()> {
    let reports: Vec<&SizeReport> = items
        .iter()
        .filter_map(|i| match i {
            JunitItem::Report(r) => Some(&**r),
            JunitItem::Failed(..) => None,
        })
        .collect();
    let errors = items.len() - reports.len();
    let tests: usize = reports
        .iter()
        .map(|r| r.payload.clouds.len())
        .sum::<usize>()
        + errors;
    let failures: usize = reports
        .iter()
        .map(|r| r.payload.clouds.iter().filter(|v| !v.fits).count())
        .sum();
    writeln!(out, r#"<?xml version="1.0" encoding="UTF-8"?>"#)?;
    writeln!(
        out,
        r#"<testsuites name="rke2-payload size" tests="{tests}" failures="{failures}" errors="{errors}">"#
    )?;
    for item in items {
        let sized = match item {
            JunitItem::Report(sized) => sized,
            JunitItem::Failed(title, message) => {
                let name = xml(title);
                writeln!(
                    out,
                    r#"  <testsuite name="{name}" tests="1" failures="0" errors="1">"#
                )?;
                writeln!(
                    out,
                    "    <testcase classname=\"rke2-payload.size.{name}\" name=\"read\" time=\"0\">\n      <error type=\"secret-unreadable\" message=\"{}\"/>\n    </testcase>\n  </testsuite>",
                    xml(message)
                )?;
                continue;
            }
        };
        let name = xml(&title(sized));
        let report = &*sized.payload;
        let failed = report.clouds.iter().filter(|v| !v.fits).count();
        writeln!(
            out,
            r#"  <testsuite name="{name}" tests="{}" failures="{failed}" errors="0">"#,
            report.clouds.len()
        )?;
        for v in &report.clouds {
            let summary = format!(
                "{} of {} {} ({:.1}%), budget {}",
                v.counted_bytes,
                v.limit_bytes,
                counted_name(v.counted),
                v.used_percent,
                v.budget_bytes
            );
            write!(
                out,
                r#"    <testcase classname="rke2-payload.size.{name}" name="{}" time="0">"#,
                xml(&v.cloud)
            )?;
            if v.fits {
                writeln!(out, "<system-out>{}</system-out></testcase>", xml(&summary))?;
            } else {
                writeln!(
                    out,
                    "\n      <failure type=\"over-budget\" message=\"{}\">{}</failure>\n    </testcase>",
                    xml(&format!(
                        "over by {} bytes: {summary}",
                        v.headroom_bytes.unsigned_abs()
                    )),
                    xml(&v.advice.join("; "))
                )?;
            }
        }
        writeln!(out, "  </testsuite>")?;
    }
    writeln!(out, "</testsuites>")?;
    Ok(())
}
