//! `rke2-payload lint`.

use std::io::Write;

use anyhow::Result;
use rke2_payload::{
    Check, Finding, LintError, LintOptions, LintReport, LintedSecret, Linter, Severity, SizeOptions,
};

use super::size::cloud_targets;
use super::{
    Outcome, Rendered, decode_options, in_input, nothing_rendered, raw_stdout, secrets_or_findings,
    selector, styled, unreadable_secrets,
};
use crate::cli::{LintArgs, LintFormat};

mod github;
mod sarif;
use crate::style::{
    BOLD, DIM, ERROR, INFO, OK, WARN, escape_unsafe, safe, secret_title, xml, yaml,
};

pub(crate) fn run(args: &LintArgs) -> Result<Outcome> {
    if args.list_checks {
        return list_checks(args.output);
    }
    let path = args.input.path();
    // Where the reports locate the input: the file, or what --stdin-filename says standard
    // input stands for.
    let located = match &args.stdin_filename {
        Some(name) if path.as_os_str() == "-" && !args.input.from_cluster => name.as_path(),
        Some(_) => anyhow::bail!(
            "--stdin-filename names what standard input stands for, and the input is {}",
            super::input_name(path)
        ),
        None => path,
    };
    let selector = selector(&args.input)?;
    let targets = cloud_targets(&args.cloud)?;
    // Without --cloud, a Secret rendered from manifests is still held to the limit of the
    // path its infrastructure template sends it by.
    let size = SizeOptions::new()
        .with_follow_delivery(targets.is_empty())
        .with_targets(targets)
        .with_headroom_percent(args.headroom)
        .with_contributors(false);
    let cloud_init_schema = match &args.cloud_init_schema {
        Some(path) if path.as_os_str() == "none" => None,
        Some(path) => Some(std::sync::Arc::new(
            rke2_payload::CloudInitSchema::load(path)
                .map_err(|e| anyhow::anyhow!("cloud-init schema: {e}"))?,
        )),
        None => rke2_payload::CloudInitSchema::find().map(std::sync::Arc::new),
    };
    let linter = Linter::new(
        LintOptions::new()
            .with_decode(decode_options(&args.input))
            .with_cert_expiry_days(args.cert_expiry_days)
            .with_size(Some(size))
            .with_allow(args.allow.clone())
            .with_cloud_init_schema(cloud_init_schema),
    );
    let report = match secrets_or_findings(&args.input)? {
        // Manifests of which nothing renders: their findings are the report.
        Rendered::Nothing { findings, .. } if !findings.is_empty() => {
            linter.lint_unrendered(findings)
        }
        Rendered::Nothing { name, findings } => return Err(nothing_rendered(&name, &findings)),
        Rendered::Secrets(input, _) => {
            match linter.lint_stream(input, &selector, args.input.jobs) {
                Ok(report) => report,
                Err(LintError::Input(e)) => return in_input(Err(e), path),
                Err(e) => return Err(e.into()),
            }
        }
    };
    let mut out = raw_stdout();
    match args.output {
        LintFormat::Json => {
            out.write_all(&escape_unsafe(&serde_json::to_vec_pretty(&report)?, false))?;
            writeln!(out)?;
        }
        LintFormat::Yaml => out.write_all(yaml(&serde_json::to_value(&report)?)?.as_bytes())?,
        LintFormat::Sarif => {
            let sarif = serde_json::to_vec_pretty(&sarif::sarif(&report, located)?)?;
            out.write_all(&escape_unsafe(&sarif, false))?;
            writeln!(out)?;
        }
        LintFormat::Text => {
            let mut buf = styled();
            text(&mut buf, &report)?;
            out.write_all(&buf.into_inner())?;
        }
        LintFormat::Github => github::github(&mut out, &report, located)?,
        LintFormat::Gitlab => {
            let doc = serde_json::to_vec_pretty(&gitlab(&report, located))?;
            out.write_all(&escape_unsafe(&doc, false))?;
            writeln!(out)?;
        }
        LintFormat::Junit => junit(&mut out, &report)?,
    }
    out.flush()?;
    super::report_skipped(&report.skipped);
    let errors: Vec<&str> = report
        .secrets
        .iter()
        .filter_map(|s| s.error.as_ref().map(|e| e.message.as_str()))
        .collect();
    unreadable_secrets(path, &errors)?;
    let deny_warnings = args.deny.as_deref() == Some("warnings");
    Ok(if report.fails(deny_warnings) {
        Outcome::CheckFailed
    } else {
        Outcome::Ok
    })
}

/// `lint --list-checks`: the check table, as text or JSON.
fn list_checks(format: LintFormat) -> Result<Outcome> {
    let mut out = raw_stdout();
    match format {
        LintFormat::Json | LintFormat::Yaml | LintFormat::Sarif | LintFormat::Gitlab => {
            let checks: Vec<serde_json::Value> = Check::ALL
                .iter()
                .map(|c| {
                    serde_json::json!({
                        "id": c.id(),
                        "severity": c.severity().as_str(),
                        "summary": c.summary(),
                        "explanation": c.explanation(),
                    })
                })
                .collect();
            let doc = serde_json::json!({"checks": checks});
            if format == LintFormat::Yaml {
                out.write_all(yaml(&doc)?.as_bytes())?;
            } else {
                serde_json::to_writer_pretty(&mut out, &doc)?;
                writeln!(out)?;
            }
        }
        LintFormat::Text | LintFormat::Github | LintFormat::Junit => {
            for c in Check::ALL {
                writeln!(
                    out,
                    "{:<28} {:<8} {}",
                    c.id(),
                    c.severity().as_str(),
                    c.summary()
                )?;
            }
        }
    }
    out.flush()?;
    Ok(Outcome::Ok)
}

/// The Secret's name as text shows it (terminal-safe).
fn title(s: &LintedSecret) -> String {
    let unnamed = if s.error.is_some() {
        "an unreadable object"
    } else {
        "user data"
    };
    secret_title(s.namespace.as_deref(), s.name.as_deref(), unnamed)
}

fn text(out: &mut impl Write, report: &LintReport) -> Result<()> {
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
                "{ERROR}✗{ERROR:#} {BOLD}{}{BOLD:#}  {ERROR}error{ERROR:#} {}: {}",
                title(s),
                Check::SecretUnreadable.id(),
                safe(&e.message)
            )?;
            continue;
        }
        let role = s.role.map_or("unknown role", |r| r.as_str());
        if s.findings.is_empty() {
            writeln!(
                out,
                "{OK}✓{OK:#} {BOLD}{}{BOLD:#}  {DIM}{role}{DIM:#}",
                title(s)
            )?;
            continue;
        }
        writeln!(out, "{BOLD}{}{BOLD:#}  {DIM}{role}{DIM:#}", title(s))?;
        let mut findings: Vec<&Finding> = s.findings.iter().collect();
        findings.sort_by_key(|f| f.severity);
        for f in findings {
            finding_line(out, f, &crate::style::finding_at(f))?;
        }
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
    Ok(())
}

/// One finding as a line of the text report.
fn finding_line(out: &mut impl Write, f: &Finding, at: &str) -> Result<()> {
    let (style, label) = match f.severity {
        Severity::Error => (ERROR, "error"),
        Severity::Warning => (WARN, "warning"),
        _ => (INFO, "info"),
    };
    writeln!(
        out,
        "  {style}{label:<7}{style:#} {:<28} {}{DIM}{at}{DIM:#}",
        f.id(),
        safe(&f.message)
    )?;
    Ok(())
}

/// Where a manifest finding is, after its message in the text report (`  (file:line)`).
fn manifest_at(f: &Finding) -> String {
    match &f.manifest {
        Some(site) => match site.line {
            Some(line) => format!("  ({}:{line})", safe(&site.file)),
            None => format!("  ({})", safe(&site.file)),
        },
        None => String::new(),
    }
}

/// Every finding of a report with where the CI formats place it: the Secret's findings at the
/// line of its value in the input file, the manifests' at their object's line in the file it
/// came from (the input, or a file `render` read).
struct Placed<'r> {
    finding: &'r Finding,
    /// The Secret or object, in words (with the file and line inside the payload).
    place: String,
    /// `Kind namespace/name` or the Secret's title: what the message is about.
    who: String,
    file: Option<String>,
    line: Option<u64>,
    /// What identifies the finding from run to run.
    key: String,
}

impl Placed<'_> {
    /// The finding's message for a CI report, after `about` (the Secret's title or place),
    /// unless it is a manifest finding, whose message names its object already.
    fn message(&self, about: &str) -> String {
        if self.finding.manifest.is_some() {
            self.finding.message.clone()
        } else {
            format!("{about}: {}", self.finding.message)
        }
    }
}

fn placed<'r>(report: &'r LintReport, path: &std::path::Path) -> Vec<Placed<'r>> {
    let input = input_file(path);
    let mut out = Vec::new();
    for f in &report.manifests {
        let (who, file, line) = match &f.manifest {
            Some(site) => (
                site.object.clone(),
                (site.file != "-").then(|| site.file.clone()),
                site.line,
            ),
            None => ("manifests".to_owned(), input.clone(), None),
        };
        out.push(Placed {
            finding: f,
            place: who.clone(),
            key: format!("{}\n{who}\n\n{}", f.id(), f.message),
            who,
            file,
            line,
        });
    }
    for s in &report.secrets {
        // A rendered Secret's findings point at the object it was rendered from, in its file.
        let (file, line) = match &s.rendered_from {
            Some(site) if site.file != "-" => (Some(site.file.clone()), site.line),
            _ => (input.clone(), s.line),
        };
        for f in &s.findings {
            out.push(Placed {
                finding: f,
                place: place(s, f),
                who: title(s),
                file: file.clone(),
                line,
                key: finding_key(s, f),
            });
        }
    }
    out
}

/// Where a finding is, in words: the Secret, the file of its payload, the line in the user data.
fn place(s: &LintedSecret, f: &Finding) -> String {
    let mut at = title(s);
    if let Some(p) = &f.path {
        at.push_str(&format!(" {}", safe(p)));
    }
    if let Some(l) = f.line {
        at.push_str(&format!(" line {l}"));
    }
    at
}

/// The input file as the reports name it: `None` for standard input and for the cluster.
fn input_file(path: &std::path::Path) -> Option<String> {
    (path.as_os_str() != "-" && path.as_os_str() != crate::cli::FROM_CLUSTER)
        .then(|| path.display().to_string())
}

/// A GitLab Code Quality report: one issue per finding, with a stable fingerprint.
fn gitlab(report: &LintReport, path: &std::path::Path) -> serde_json::Value {
    let mut issues = Vec::new();
    for p in placed(report, path) {
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

/// What identifies a finding from run to run: the check, the Secret, the file, the message.
fn finding_key(s: &LintedSecret, f: &Finding) -> String {
    format!(
        "{}\n{}\n{}\n{}",
        f.id(),
        title(s),
        f.path.as_deref().unwrap_or(""),
        f.message
    )
}

/// A short stable fingerprint of a finding (FNV-1a, 64 bits, in hex): the same finding in the
/// same Secret keeps it from run to run.
fn fingerprint(key: &str) -> String {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for b in key.bytes() {
        hash ^= u64::from(b);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    format!("{hash:016x}")
}

/// JUnit XML: a test suite per Secret, a failed test case per finding of error (or warning)
/// severity, a passed one for a Secret without, and an error case for a Secret that cannot be
/// read.
fn junit(out: &mut impl Write, report: &LintReport) -> Result<()> {
    let failing = |f: &&Finding| matches!(f.severity, Severity::Error | Severity::Warning);
    let counted = |s: &LintedSecret| {
        if s.error.is_some() {
            0
        } else {
            s.findings.iter().filter(failing).count()
        }
    };
    let tests: usize = report.secrets.iter().map(|s| counted(s).max(1)).sum();
    let failures: usize = report.secrets.iter().map(counted).sum();
    let errors = report.summary.unreadable;
    writeln!(out, r#"<?xml version="1.0" encoding="UTF-8"?>"#)?;
    writeln!(
        out,
        r#"<testsuites name="rke2-payload lint" tests="{tests}" failures="{failures}" errors="{errors}">"#
    )?;
    for s in &report.secrets {
        let name = xml(&title(s));
        if let Some(e) = &s.error {
            writeln!(
                out,
                r#"  <testsuite name="{name}" tests="1" failures="0" errors="1">"#
            )?;
            writeln!(
                out,
                "    <testcase classname=\"rke2-payload.lint.{name}\" name=\"{}\" time=\"0\">\n      <error type=\"{0}\" message=\"{}\"/>\n    </testcase>\n  </testsuite>",
                Check::SecretUnreadable.id(),
                xml(&e.message)
            )?;
            continue;
        }
        let found: Vec<&Finding> = s.findings.iter().filter(failing).collect();
        writeln!(
            out,
            r#"  <testsuite name="{name}" tests="{}" failures="{}" errors="0">"#,
            found.len().max(1),
            found.len()
        )?;
        if found.is_empty() {
            writeln!(
                out,
                r#"    <testcase classname="rke2-payload.lint.{name}" name="lint" time="0"/>"#
            )?;
        }
        for f in found {
            writeln!(
                out,
                r#"    <testcase classname="rke2-payload.lint.{name}" name="{}" time="0">"#,
                xml(f.id())
            )?;
            writeln!(
                out,
                r#"      <failure type="{}" message="{}">{}</failure>"#,
                f.severity.as_str(),
                xml(&f.message),
                xml(&place(s, f))
            )?;
            writeln!(out, "    </testcase>")?;
        }
        writeln!(out, "  </testsuite>")?;
    }
    writeln!(out, "</testsuites>")?;
    Ok(())
}
