//! The text layout of `size`: one block per Secret, with a bar per target.
//!
//! A block is the Secret's title with the user data's format and compression, its sizes
//! (`data.value`, base64, user data, and what `gzipUserData: true` would make of it), then a
//! line per target: a 20-cell bar of the share of the limit used (green, yellow from 80%, red
//! over), the bytes counted of the limit, and the verdict, each followed by its advice and the
//! delivery path it assumes. Byte counts are grouped (`16,384`). The layout is for people and
//! may change from release to release; `-o json` is the stable form.

use std::io::Write;

use rke2_payload::{Compression, Counted, SizeReport, Verdict};

use crate::Result;
use crate::style::{BOLD, DIM, ERROR, OK, WARN, group, safe, secret_title};

/// The Secret's name as text shows it (terminal-safe).
pub(crate) fn title(report: &SizeReport) -> String {
    secret_title(
        report.namespace.as_deref(),
        report.name.as_deref(),
        "user data",
    )
}

pub(crate) fn counted_name(counted: Counted) -> &'static str {
    match counted {
        Counted::Raw => "raw bytes",
        _ => "base64 bytes",
    }
}

/// Writes one Secret's text block: its title with the format and compression, its sizes, one
/// bar per target (the share of the limit used, what is counted, the verdict, the advice, the
/// delivery path the limit is for), and the biggest parts of the user data when the report
/// has them.
///
/// ```
/// use rke2_payload::{Envelope, Selector, SizeOptions, Sizer};
///
/// let secret = br##"{"kind": "Secret", "metadata": {"name": "md-0-x", "namespace": "default"},
///   "stringData": {"format": "cloud-config", "value": "#cloud-config\nruncmd: [reboot]\n"}}"##;
/// let sizer = Sizer::new(SizeOptions::new());
/// let envelope = Envelope::parse(secret, &sizer.options().decode)?;
/// let report = sizer.measure(envelope.select(&Selector::default())?)?;
///
/// let mut out = Vec::new();
/// payload_printer::size::text(&mut out, &report)?;
/// let text = String::from_utf8(out)?;
/// assert!(text.contains("Secret default/md-0-x"));
/// assert!(text.contains("data.value 31 B"));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn text(out: &mut impl Write, sized: &SizeReport) -> Result<()> {
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
