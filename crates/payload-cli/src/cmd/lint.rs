//! `rke2-payload lint`.

use std::io::Write;
use std::sync::Arc;

use anyhow::Result;
use rke2_payload::findings::{Finding, Severity};
use rke2_payload::lint::{LintOptions, RULES, describe, lint_cluster, lint_secret};
use rke2_payload::memo::Memo;
use rke2_payload::report::{InspectOptions, Rke2Report, SecretReport, inspect_payload};
use rke2_payload::size::{SizeOptions, measure};
use serde::Serialize;

use super::size::cloud_targets;
use super::{Outcome, in_input, input_name, map_input, raw_stdout, styled};
use crate::cli::{LintArgs, LintFormat};
use crate::render::{BOLD, DIM, ERROR, INFO, OK, WARN};

/// The schema id of the lint JSON document.
const LINT_SCHEMA: &str = "rke2-payload/lint/v1";

#[derive(Serialize)]
struct LintedSecret {
    name: Option<String>,
    namespace: Option<String>,
    cluster: Option<String>,
    role: Option<rke2_payload::rke2::Role>,
    findings: Vec<Finding>,
}

/// What lint makes of one payload, whatever Secret carries it.
struct PayloadLint {
    /// The parts of its report the cluster checks compare ([`cluster_facts`]).
    facts: SecretReport,
    /// Its findings.
    found: Arc<[Finding]>,
}

/// The parts of a report [`lint_cluster`] reads (role, server, token and CA fingerprints,
/// tls-san, the server CA file); the rest is dropped so that a dump of thousands of Secrets
/// keeps little per Secret.
fn cluster_facts(mut report: SecretReport) -> SecretReport {
    let rke2 = std::mem::take(&mut report.rke2);
    report.rke2 = Rke2Report {
        config_found: rke2.config_found,
        server: rke2.server,
        token_sha256: rke2.token_sha256,
        token_ca_hash: rke2.token_ca_hash,
        tls_san: rke2.tls_san,
        ..Rke2Report::default()
    };
    report.install = None;
    report.commands = Vec::new();
    report.keys = Vec::new();
    report.certificates = Vec::new();
    report.findings = Vec::new();
    report
        .files
        .retain(|f| f.path.ends_with("/server/tls/server-ca.crt"));
    report.files.shrink_to_fit();
    (report.name, report.namespace, report.cluster) = (None, None, None);
    report
}

#[derive(Serialize, Default)]
struct Summary {
    errors: usize,
    warnings: usize,
    infos: usize,
}

pub(crate) fn run(args: &LintArgs) -> Result<Outcome> {
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
    lint.cloud_init_schema = match &args.cloud_init_schema {
        Some(path) if path.as_os_str() == "none" => None,
        Some(path) => Some(std::sync::Arc::new(
            rke2_payload::schema::CloudInitSchema::load(path)
                .map_err(|e| anyhow::anyhow!("cloud-init schema: {e}"))?,
        )),
        None => rke2_payload::schema::CloudInitSchema::find().map(std::sync::Arc::new),
    };

    // Every Secret is read, so the cross-Secret checks see the whole cluster. What a payload
    // yields (its findings, the facts the cluster checks compare) is made once per distinct
    // payload and shared by its replicas; each Secret keeps only those facts and its own name.
    let memo: Memo<PayloadLint> = Memo::new();
    let mut reports: Vec<SecretReport> = Vec::new();
    let mut findings: Vec<Arc<[Finding]>> = Vec::new();
    let mut selected: Option<usize> = None;
    map_input(
        &args.input,
        None,
        |secret, decode| -> Result<(SecretReport, Arc<[Finding]>, bool), rke2_payload::Error> {
            let linted = memo.get_or_try_insert(secret, || {
                let payload = secret.decode(decode)?;
                let mut inspect = InspectOptions::default();
                inspect.decode = decode.clone();
                let report = inspect_payload(secret, &payload, &inspect);
                let size = lint.size.as_ref().map(|o| measure(secret, &payload, o));
                let found = lint_secret(&report, &payload, size.as_ref(), &lint);
                Ok::<_, rke2_payload::Error>(PayloadLint {
                    facts: cluster_facts(report),
                    found: found.into(),
                })
            })?;
            let mut facts = linted.facts.clone();
            facts.name = secret.name().map(str::to_owned);
            facts.namespace = secret.namespace().map(str::to_owned);
            facts.cluster = secret.cluster().map(str::to_owned);
            let named = args.name.as_deref().is_some_and(|n| secret.is_named(n));
            Ok((facts, Arc::clone(&linted.found), named))
        },
        |result| {
            let (report, found, named) = result?;
            if named {
                selected = Some(reports.len());
            }
            findings.push(found);
            reports.push(report);
            Ok(())
        },
    )?;
    let mut extra: Vec<Vec<Finding>> = vec![Vec::new(); reports.len()];
    let refs: Vec<&SecretReport> = reports.iter().collect();
    for (i, finding) in lint_cluster(&refs) {
        extra[i].push(finding);
    }
    if let (Some(name), None) = (&args.name, selected) {
        return in_input(
            Err(rke2_payload::Error::SecretNotFound {
                wanted: name.clone(),
                available: reports.len(),
            }),
            path,
        );
    }
    let allowed = |f: &Finding| !args.allow.iter().any(|a| a == f.id);
    let linted: Vec<LintedSecret> = reports
        .into_iter()
        .zip(findings.into_iter().zip(extra))
        .enumerate()
        .filter(|(i, _)| selected.is_none_or(|s| s == *i))
        .map(|(_, (report, (found, extra)))| LintedSecret {
            name: report.name,
            namespace: report.namespace,
            cluster: report.cluster,
            role: report.role,
            findings: found.iter().cloned().chain(extra).filter(allowed).collect(),
        })
        .collect();

    let mut summary = Summary::default();
    for f in linted.iter().flat_map(|s| &s.findings) {
        match f.severity {
            Severity::Error => summary.errors += 1,
            Severity::Warning => summary.warnings += 1,
            _ => summary.infos += 1,
        }
    }
    let mut out = raw_stdout();
    match args.output {
        LintFormat::Json => {
            // Written straight from the findings, not through a `serde_json::Value` of the
            // whole document.
            #[derive(Serialize)]
            struct Doc<'a> {
                schema: &'static str,
                secrets: &'a [LintedSecret],
                summary: &'a Summary,
            }
            let doc = Doc {
                schema: LINT_SCHEMA,
                secrets: &linted,
                summary: &summary,
            };
            serde_json::to_writer_pretty(&mut out, &doc)?;
            writeln!(out)?;
        }
        LintFormat::Sarif => {
            serde_json::to_writer_pretty(&mut out, &sarif(&linted, &input_name(path)))?;
            writeln!(out)?;
        }
        LintFormat::Text => {
            let mut buf = styled();
            text(&mut buf, &linted, &summary)?;
            out.write_all(&buf.into_inner())?;
        }
    }
    out.flush()?;
    let deny_warnings = args.deny.as_deref() == Some("warnings");
    Ok(
        if summary.errors > 0 || (deny_warnings && summary.warnings > 0) {
            Outcome::CheckFailed
        } else {
            Outcome::Ok
        },
    )
}

fn title(s: &LintedSecret) -> String {
    match (&s.namespace, &s.name) {
        (Some(ns), Some(name)) => format!("{ns}/{name}"),
        (None, Some(name)) => name.clone(),
        _ => "user data".to_owned(),
    }
}

fn text(out: &mut impl Write, linted: &[LintedSecret], summary: &Summary) -> Result<()> {
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
                at.push_str(&format!(" [{p}]"));
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
                f.id, f.message
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
    let rules: Vec<serde_json::Value> = RULES
        .iter()
        .map(|(id, severity, text)| {
            serde_json::json!({
                "id": id,
                "shortDescription": {"text": text},
                "defaultConfiguration": {"level": level(*severity)},
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
                "ruleId": f.id,
                "level": level(f.severity),
                "message": {"text": format!("{}: {}", title(s), f.message)},
                "locations": [location],
                "properties": {"secret": title(s), "rule": describe(f.id)},
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
