//! `rke2-payload lint`.

use std::io::Write;

use anyhow::Result;
use rke2_payload::{
    Check, Finding, LintError, LintOptions, LintReport, LintedSecret, Linter, Severity, SizeOptions,
};

use super::size::cloud_targets;
use super::{Outcome, decode_options, in_input, input_name, open_input, raw_stdout, styled};
use crate::cli::{LintArgs, LintFormat};
use crate::render::{BOLD, DIM, ERROR, INFO, OK, WARN, escape_unsafe, safe, xml};

pub(crate) fn run(args: &LintArgs) -> Result<Outcome> {
    if args.list_checks {
        return list_checks(args.output);
    }
    let path = &args.input.file;
    let targets = cloud_targets(&args.cloud)?;
    let size = (!targets.is_empty()).then(|| {
        let mut size = SizeOptions::default();
        size.targets = targets;
        size.headroom_percent = args.headroom;
        size.contributors = false;
        size
    });
    let mut lint = LintOptions::default();
    lint.cert_expiry_days = args.cert_expiry_days;
    lint.size = size;
    lint.allow = args.allow.clone();
    lint.cloud_init_schema = match &args.cloud_init_schema {
        Some(path) if path.as_os_str() == "none" => None,
        Some(path) => Some(std::sync::Arc::new(
            rke2_payload::CloudInitSchema::load(path)
                .map_err(|e| anyhow::anyhow!("cloud-init schema: {e}"))?,
        )),
        None => rke2_payload::CloudInitSchema::find().map(std::sync::Arc::new),
    };
    let linter = Linter::new(lint, decode_options(&args.input));
    let report = match linter.lint(
        open_input(&args.input)?,
        args.name.as_deref(),
        args.input.jobs,
    ) {
        Ok(report) => report,
        Err(LintError::Input(e)) => return in_input(Err(e), path),
        Err(LintError::Secret(e)) => return Err(e.into()),
        Err(e) => return Err(e.into()),
    };
    let mut out = raw_stdout();
    match args.output {
        LintFormat::Json => {
            out.write_all(&escape_unsafe(&serde_json::to_vec_pretty(&report)?, false))?;
            writeln!(out)?;
        }
        LintFormat::Sarif => {
            let sarif = serde_json::to_vec_pretty(&sarif(&report.secrets, &input_name(path)))?;
            out.write_all(&escape_unsafe(&sarif, false))?;
            writeln!(out)?;
        }
        LintFormat::Text => {
            let mut buf = styled();
            text(&mut buf, &report)?;
            out.write_all(&buf.into_inner())?;
        }
        LintFormat::Github => github(&mut out, &report, path)?,
        LintFormat::Gitlab => {
            let doc = serde_json::to_vec_pretty(&gitlab(&report, path))?;
            out.write_all(&escape_unsafe(&doc, false))?;
            writeln!(out)?;
        }
        LintFormat::Junit => junit(&mut out, &report)?,
    }
    out.flush()?;
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
        LintFormat::Json | LintFormat::Sarif | LintFormat::Gitlab => {
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
            serde_json::to_writer_pretty(&mut out, &serde_json::json!({"checks": checks}))?;
            writeln!(out)?;
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
    match (&s.namespace, &s.name) {
        (Some(ns), Some(name)) => format!("{}/{}", safe(ns), safe(name)),
        (None, Some(name)) => safe(name).into_owned(),
        _ => "user data".to_owned(),
    }
}

fn text(out: &mut impl Write, report: &LintReport) -> Result<()> {
    let (linted, summary) = (&report.secrets, &report.summary);
    for s in linted {
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
            let (style, label) = match f.severity {
                Severity::Error => (ERROR, "error"),
                Severity::Warning => (WARN, "warning"),
                _ => (INFO, "info"),
            };
            let mut at = String::new();
            if let Some(p) = &f.path {
                at.push_str(&format!(" [{}]", safe(p)));
            }
            if let Some(l) = f.line {
                at.push_str(&format!(" (line {l}"));
                if let Some(c) = f.column {
                    at.push_str(&format!(", column {c}"));
                }
                at.push(')');
            }
            writeln!(
                out,
                "  {style}{label:<7}{style:#} {:<28} {}{DIM}{at}{DIM:#}",
                f.id(),
                safe(&f.message)
            )?;
        }
    }
    writeln!(
        out,
        "\n{} Secret(s): {} error(s), {} warning(s), {} info",
        linted.len(),
        summary.errors,
        summary.warnings,
        summary.infos
    )?;
    Ok(())
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

/// The input file as the annotations name it (`None` for standard input).
fn input_file(path: &std::path::Path) -> Option<String> {
    (path.as_os_str() != "-").then(|| path.display().to_string())
}

/// GitHub Actions workflow commands, one per finding: `::error file=…,title=…::message`.
fn github(out: &mut impl Write, report: &LintReport, path: &std::path::Path) -> Result<()> {
    // The escapes GitHub's toolkit applies to a command's data and to its properties.
    let data = |s: &str| {
        safe(s)
            .replace('%', "%25")
            .replace('\r', "%0D")
            .replace('\n', "%0A")
    };
    let property = |s: &str| data(s).replace(':', "%3A").replace(',', "%2C");
    let file = input_file(path);
    for s in &report.secrets {
        for f in &s.findings {
            let level = match f.severity {
                Severity::Error => "error",
                Severity::Warning => "warning",
                _ => "notice",
            };
            let mut props = Vec::new();
            if let Some(file) = &file {
                props.push(format!("file={}", property(file)));
            }
            props.push(format!(
                "title={}",
                property(&format!("{} ({})", f.id(), place(s, f)))
            ));
            writeln!(
                out,
                "::{level} {}::{}",
                props.join(","),
                data(&format!("{}: {}", title(s), f.message))
            )?;
        }
    }
    Ok(())
}

/// A GitLab Code Quality report: one issue per finding, with a stable fingerprint.
fn gitlab(report: &LintReport, path: &std::path::Path) -> serde_json::Value {
    let file = input_file(path).unwrap_or_else(|| "standard-input".to_owned());
    let mut issues = Vec::new();
    for s in &report.secrets {
        for f in &s.findings {
            let severity = match f.severity {
                Severity::Error => "critical",
                Severity::Warning => "major",
                _ => "info",
            };
            let key = format!(
                "{}\n{}\n{}\n{}",
                f.id(),
                title(s),
                f.path.as_deref().unwrap_or(""),
                f.message
            );
            issues.push(serde_json::json!({
                "description": format!("{}: {}", place(s, f), f.message),
                "check_name": f.id(),
                "fingerprint": fingerprint(&key),
                "severity": severity,
                "location": {"path": file, "lines": {"begin": 1}},
            }));
        }
    }
    serde_json::Value::Array(issues)
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
/// severity, a passed one for a Secret without.
fn junit(out: &mut impl Write, report: &LintReport) -> Result<()> {
    let failing = |f: &&Finding| matches!(f.severity, Severity::Error | Severity::Warning);
    let tests: usize = report
        .secrets
        .iter()
        .map(|s| s.findings.iter().filter(failing).count().max(1))
        .sum();
    let failures: usize = report
        .secrets
        .iter()
        .map(|s| s.findings.iter().filter(failing).count())
        .sum();
    writeln!(out, r#"<?xml version="1.0" encoding="UTF-8"?>"#)?;
    writeln!(
        out,
        r#"<testsuites name="rke2-payload lint" tests="{tests}" failures="{failures}" errors="0">"#
    )?;
    for s in &report.secrets {
        let name = xml(&title(s));
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

/// SARIF 2.1.0: one run, one rule per check id, one result per finding.
fn sarif(linted: &[LintedSecret], input: &str) -> serde_json::Value {
    let rules: Vec<serde_json::Value> = Check::ALL
        .iter()
        .map(|check| {
            serde_json::json!({
                "id": check.id(),
                "shortDescription": {"text": check.summary()},
                "defaultConfiguration": {"level": level(check.severity())},
            })
        })
        .collect();
    let mut results = Vec::new();
    for s in linted {
        for f in &s.findings {
            let mut location = serde_json::json!({
                "physicalLocation": {"artifactLocation": {"uri": input}},
                "logicalLocations": [{
                    "fullyQualifiedName": match &f.path {
                        Some(p) => format!("{}:{p}", title(s)),
                        None => title(s),
                    },
                    "kind": "resource",
                }],
            });
            if let Some(line) = f.line {
                location["physicalLocation"]["region"] = serde_json::json!({
                    "startLine": line,
                    "startColumn": f.column.unwrap_or(1),
                });
            }
            results.push(serde_json::json!({
                "ruleId": f.id(),
                "level": level(f.severity),
                "message": {"text": format!("{}: {}", title(s), f.message)},
                "locations": [location],
                "properties": {"secret": title(s), "rule": f.check.summary()},
            }));
        }
    }
    serde_json::json!({
        "version": "2.1.0",
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "runs": [{
            "tool": {"driver": {
                "name": "rke2-payload",
                "version": env!("CARGO_PKG_VERSION"),
                "informationUri": "https://github.com/rancher/cluster-api-provider-rke2",
                "rules": rules,
            }},
            "results": results,
        }],
    })
}

fn level(severity: Severity) -> &'static str {
    match severity {
        Severity::Error => "error",
        Severity::Warning => "warning",
        _ => "note",
    }
}
