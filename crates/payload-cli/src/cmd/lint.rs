//! `rke2-payload lint`.

use std::io::Write;

use anyhow::Result;
use rke2_payload::{
    Check, Finding, LintError, LintOptions, LintReport, LintedSecret, Linter, Severity, SizeOptions,
};

use super::size::cloud_targets;
use super::{Outcome, decode_options, in_input, input_name, open_input, raw_stdout, styled};
use crate::cli::{LintArgs, LintFormat};
use crate::render::{BOLD, DIM, ERROR, INFO, OK, WARN, escape_unsafe, safe};

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
        LintFormat::Json | LintFormat::Sarif => {
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
        LintFormat::Text => {
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
