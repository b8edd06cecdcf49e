//! SARIF 2.1.0 for code scanning (GitHub's in particular): one run, one rule per check, one
//! result per finding, each located in a file of the repository.
//!
//! What GitHub's SARIF upload needs, and what is done for it:
//! - every result has a physical location: the input file, or the file a rendered Secret's
//!   object came from; standard input (or the cluster) has none, so it needs a name, or SARIF
//!   is refused ([`crate::Error::Unlocated`]);
//! - the location is relative to the repository root (`uriBaseId` `%SRCROOT%`, whose absolute
//!   URI is in `originalUriBaseIds`), whether the path was typed `./x`, `x` or `/abs/x`
//!   ([`Repository`]);
//! - rules whose findings weaken security carry the `security` tag and a `security-severity`;
//! - at most 5,000 results per run are read, so the most severe 5,000 are kept and a tool
//!   notification says how many were left out;
//! - one upload takes at most one run of a tool per `automationDetails.id` (GitHub rejects the
//!   upload otherwise, since July 2025, whatever the action's `category` says: it only fills
//!   runs without an id), so the run's id names what was linted ([`automation_id`]): the SARIF
//!   files of several `lint` runs over different inputs upload together, and each input keeps
//!   its own alerts from commit to commit.

use std::io::Write;
use std::path::Path;

use rke2_payload::{Check, LintReport, Severity};

use crate::placed::{Placed, Repository, fingerprint, placed};
use crate::{Error, Result};

/// The most results GitHub reads from one run.
pub const MAX_RESULTS: usize = 5_000;

/// The repository the documentation lives in.
const REPOSITORY: &str = if env!("CARGO_PKG_REPOSITORY").is_empty() {
    "https://github.com/rke2-payload/rke2-payload"
} else {
    env!("CARGO_PKG_REPOSITORY")
};

/// The README's check table, where every rule is explained.
fn help_uri() -> String {
    format!("{REPOSITORY}#checks")
}

/// How much a finding of `check` weakens the cluster's security, on GitHub's scale (0.1–3.9
/// low, 4.0–6.9 medium, 7.0–8.9 high); `None` for a check about something else.
///
/// ```
/// use rke2_payload::Check;
///
/// assert_eq!(payload_printer::sarif::security_severity(Check::KeyPermissions), Some("7.5"));
/// assert_eq!(payload_printer::sarif::security_severity(Check::Rke2ConfigMissing), None);
/// ```
pub fn security_severity(check: Check) -> Option<&'static str> {
    Some(match check {
        // A private key others can read.
        Check::KeyPermissions => "7.5",
        // A join token pinned to another CA: the pin that keeps a rogue server out fails.
        Check::TokenCaHash => "7.0",
        // Artifacts installed without verifying them.
        Check::AirgapNoChecksum | Check::ManifestAirGapNoChecksum => "6.0",
        // Configuration fetched at boot from elsewhere.
        Check::RemoteContent => "5.0",
        // TLS that fails verification (the fix people reach for is to turn it off).
        Check::JoinHostNotInSan | Check::ManifestRegistrationAddressNotInTlsSan => "5.0",
        // Certificates expired or about to.
        Check::CertExpiry => "4.0",
        // A credential that is sent wrong.
        Check::RegistryAuthNewline => "3.0",
        _ => return None,
    })
}

/// SARIF's level of a severity.
fn level(severity: Severity) -> &'static str {
    match severity {
        Severity::Error => "error",
        Severity::Warning => "warning",
        _ => "note",
    }
}

/// The rule of a check.
fn rule(check: Check) -> serde_json::Value {
    let mut rule = serde_json::json!({
        "id": check.id(),
        "name": format!("{check:?}"),
        "shortDescription": {"text": check.summary()},
        "fullDescription": {"text": check.explanation()},
        "help": {
            "text": format!("{}. {}", check.summary(), check.explanation()),
            "markdown": format!("**{}** ({}): {}", check.id(), check.summary(), check.explanation()),
        },
        "helpUri": help_uri(),
        "defaultConfiguration": {"level": level(check.severity())},
    });
    if let Some(score) = security_severity(check) {
        rule["properties"] = serde_json::json!({
            "tags": ["security"],
            "security-severity": score,
        });
    }
    rule
}

/// One result.
fn result(p: &Placed<'_>, repository: &Repository, file: &str) -> serde_json::Value {
    let f = p.finding;
    let mut decoded = p.who.clone();
    if let Some(path) = &f.path {
        decoded.push_str(&format!(":{path}"));
    }
    if let Some(l) = f.line {
        decoded.push_str(&format!(":{l}"));
    }
    let mut physical = serde_json::json!({"artifactLocation": repository.locate(file)});
    if let Some(line) = p.line {
        physical["region"] = serde_json::json!({"startLine": line});
    }
    let properties = if f.manifest.is_some() {
        serde_json::json!({"object": p.who, "rule": f.check.summary()})
    } else {
        serde_json::json!({"secret": p.who, "rule": f.check.summary()})
    };
    serde_json::json!({
        "ruleId": f.id(),
        "ruleIndex": Check::ALL.iter().position(|&c| c == f.check).unwrap_or(0),
        "level": level(f.severity),
        "message": {"text": p.message(&p.place)},
        "locations": [{
            "physicalLocation": physical,
            "logicalLocations": [{"fullyQualifiedName": decoded, "kind": "resource"}],
        }],
        "partialFingerprints": {"rke2PayloadFinding/v1": fingerprint(&p.key)},
        "properties": properties,
    })
}

/// The run's `automationDetails.id` for a lint of `linted` (the inputs as they were named:
/// files and folders, the name standard input stands for, `cluster`): `rke2-payload/`, each
/// relative to the repository root when it is inside it, joined by `,`, and a final `/`.
/// GitHub reads what comes before the last `/` as the run's category: the same inputs keep
/// their alerts from commit to commit, other inputs have theirs.
///
/// ```
/// use payload_printer::Repository;
///
/// let repository = Repository::new("/repo/sub".into(), Some("/repo".into()));
/// assert_eq!(
///     payload_printer::sarif::automation_id(&["../templates/a.yaml", "./classes/"], &repository),
///     "rke2-payload/templates/a.yaml,sub/classes/"
/// );
/// assert_eq!(payload_printer::sarif::automation_id(&[], &repository), "rke2-payload/");
/// ```
pub fn automation_id(linted: &[&str], repository: &Repository) -> String {
    let names: Vec<String> = linted
        .iter()
        .map(|name| {
            let name = repository.repository_path(name);
            let name = name.trim_end_matches('/');
            crate::style::safe(if name.is_empty() { "." } else { name }).into_owned()
        })
        .collect();
    if names.is_empty() {
        "rke2-payload/".to_owned()
    } else {
        format!("rke2-payload/{}/", names.join(","))
    }
}

/// The SARIF document of a report; `input` is the file the input stands for (`None` for
/// standard input or the cluster without a name), `linted` every input as it was named (the
/// run's [`automation_id`]). Refused when a result would have no file.
pub fn document(
    report: &LintReport,
    input: Option<&Path>,
    linted: &[&str],
    repository: &Repository,
) -> Result<serde_json::Value> {
    let mut placed = placed(report, input);
    if let Some(p) = placed.iter().find(|p| p.file.is_none()) {
        return Err(Error::Unlocated {
            check: p.finding.id(),
            about: p.who.clone(),
        });
    }
    // The most severe first, so that what GitHub drops past its limit is the least severe.
    placed.sort_by_key(|p| p.finding.severity);
    let total = placed.len();
    let results: Vec<serde_json::Value> = placed
        .iter()
        .take(MAX_RESULTS)
        .filter_map(|p| p.file.as_deref().map(|file| result(p, repository, file)))
        .collect();
    let mut invocation = serde_json::json!({"executionSuccessful": true});
    if total > MAX_RESULTS {
        invocation["toolExecutionNotifications"] = serde_json::json!([{
            "level": "warning",
            "message": {"text": format!(
                "{} of {total} results are left out: code scanning reads at most {MAX_RESULTS} per run (the most severe are kept); `rke2-payload lint -o json` lists them all",
                total - MAX_RESULTS
            )},
        }]);
    }
    let mut run = serde_json::json!({
        "tool": {"driver": {
            "name": "rke2-payload",
            "version": env!("CARGO_PKG_VERSION"),
            "informationUri": REPOSITORY,
            "rules": Check::ALL.iter().map(|&c| rule(c)).collect::<Vec<_>>(),
        }},
        "automationDetails": {"id": automation_id(linted, repository)},
        "invocations": [invocation],
        "results": results,
    });
    if let Some(ids) = repository.base_ids() {
        run["originalUriBaseIds"] = ids;
    }
    Ok(serde_json::json!({
        "version": "2.1.0",
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "runs": [run],
    }))
}

/// Writes the SARIF document of a report, pretty, free of control and bidi characters (see
/// [`document`]). Nothing is written when it is refused.
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
/// let input = Path::new("secrets.json");
/// payload_printer::sarif::write(&mut out, &report, Some(input), &["secrets.json"], &repository)?;
/// let sarif: serde_json::Value = serde_json::from_slice(&out)?;
/// assert_eq!(sarif["runs"][0]["automationDetails"]["id"], "rke2-payload/secrets.json/");
/// let result = &sarif["runs"][0]["results"][0];
/// assert_eq!(result["ruleId"], "rke2-config-missing");
/// assert_eq!(result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"], "secrets.json");
///
/// // Standard input without a name: no file to point at.
/// assert!(payload_printer::sarif::write(&mut Vec::new(), &report, None, &["-"], &repository).is_err());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn write(
    out: &mut impl Write,
    report: &LintReport,
    input: Option<&Path>,
    linted: &[&str],
    repository: &Repository,
) -> Result<()> {
    crate::document::json(out, &document(report, input, linted, repository)?)
}
