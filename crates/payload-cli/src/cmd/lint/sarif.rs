//! SARIF 2.1.0 for code scanning (GitHub's in particular): one run, one rule per check, one
//! result per finding, each located in a file of the repository.
//!
//! What GitHub's SARIF upload needs, and what is done for it:
//! - every result has a physical location: the input file, or the file a rendered Secret's
//!   object came from; standard input (or the cluster) has none, so it is named with
//!   `--stdin-filename` or SARIF is refused;
//! - the location is relative to the repository root (`uriBaseId` `%SRCROOT%`, whose absolute
//!   URI is in `originalUriBaseIds`), found from the working directory (`.git`, else
//!   `GITHUB_WORKSPACE`), whether the path was typed `./x`, `x` or `/abs/x`;
//! - rules whose findings weaken security carry the `security` tag and a `security-severity`;
//! - at most 5,000 results per run are read, so the most severe 5,000 are kept and a tool
//!   notification says how many were left out.

use std::path::{Component, Path, PathBuf};

use anyhow::Result;
use rke2_payload::{Check, LintReport, Severity};

use super::{Placed, fingerprint, placed};

/// The most results GitHub reads from one run.
pub(super) const MAX_RESULTS: usize = 5_000;

/// The repository the documentation lives in.
pub(super) const REPOSITORY: &str = if env!("CARGO_PKG_REPOSITORY").is_empty() {
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
pub(super) fn security_severity(check: Check) -> Option<&'static str> {
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

/// Where the results' files are found: the repository root and the working directory.
pub(super) struct Base {
    cwd: PathBuf,
    root: Option<PathBuf>,
}

impl Base {
    /// The working directory and the repository it is in.
    pub(super) fn here() -> Base {
        let cwd = std::env::current_dir().unwrap_or_default();
        let root = cwd
            .ancestors()
            .find(|d| d.join(".git").exists())
            .map(Path::to_path_buf)
            .or_else(|| std::env::var_os("GITHUB_WORKSPACE").map(PathBuf::from));
        Base { cwd, root }
    }

    /// The file relative to the repository root when it is inside it (`/`-separated).
    fn relative(&self, file: &str) -> Option<String> {
        let absolute = normal(&self.cwd.join(file));
        let root = normal(self.root.as_ref()?);
        absolute
            .strip_prefix(&root)
            .ok()
            .map(Path::to_path_buf)
            .or_else(|| {
                // The same place through a symbolic link.
                let real = std::fs::canonicalize(&absolute).ok()?;
                let real_root = std::fs::canonicalize(&root).ok()?;
                real.strip_prefix(real_root).ok().map(Path::to_path_buf)
            })
            .map(|relative| slashed(&relative))
    }

    /// The file's location: relative to the repository root when it is inside it (with the
    /// base id), else its absolute `file:` URI.
    fn locate(&self, file: &str) -> serde_json::Value {
        match self.relative(file) {
            Some(relative) => serde_json::json!({
                "uri": uri_reference(&relative),
                "uriBaseId": "%SRCROOT%",
            }),
            None => {
                let absolute = normal(&self.cwd.join(file));
                serde_json::json!({"uri": format!("file://{}", uri_reference(&slashed(&absolute)))})
            }
        }
    }

    /// `originalUriBaseIds`: where `%SRCROOT%` is.
    fn base_ids(&self) -> Option<serde_json::Value> {
        let root = normal(self.root.as_ref()?);
        let mut uri = format!("file://{}", uri_reference(&slashed(&root)));
        if !uri.ends_with('/') {
            uri.push('/');
        }
        Some(serde_json::json!({"%SRCROOT%": {"uri": uri}}))
    }
}

/// The path with `.` and `..` resolved without touching the file system.
fn normal(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

/// A path with `/` between its parts.
fn slashed(path: &Path) -> String {
    let parts: Vec<String> = path
        .components()
        .filter_map(|c| match c {
            Component::Normal(p) => Some(p.to_string_lossy().into_owned()),
            _ => None,
        })
        .collect();
    let joined = parts.join("/");
    if path.has_root() {
        format!("/{joined}")
    } else {
        joined
    }
}

/// A path as a URI reference: every byte outside RFC 3986's unreserved characters and `/`
/// percent-encoded (a backslash is a file name character here, not a separator).
pub(super) fn uri_reference(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    for b in path.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' | b'/' => {
                out.push(b as char);
            }
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

pub(super) fn level(severity: Severity) -> &'static str {
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
fn result(p: &Placed<'_>, base: &Base, file: &str) -> serde_json::Value {
    let f = p.finding;
    let mut decoded = p.who.clone();
    if let Some(path) = &f.path {
        decoded.push_str(&format!(":{path}"));
    }
    if let Some(l) = f.line {
        decoded.push_str(&format!(":{l}"));
    }
    let mut physical = serde_json::json!({"artifactLocation": base.locate(file)});
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

/// The SARIF document of a report; `input` is the file the input stands for (standard input
/// named by `--stdin-filename`). Refused when a result would have no file.
pub(super) fn sarif(report: &LintReport, input: &Path) -> Result<serde_json::Value> {
    let base = Base::here();
    let mut placed = placed(report, input);
    if let Some(p) = placed.iter().find(|p| p.file.is_none()) {
        anyhow::bail!(
            "SARIF needs a file for every result, and {} has none (it is about {}); name the file standard input stands for with --stdin-filename, or lint the file itself",
            p.finding.id(),
            p.who
        );
    }
    // The most severe first, so that what GitHub drops past its limit is the least severe.
    placed.sort_by_key(|p| p.finding.severity);
    let total = placed.len();
    let results: Vec<serde_json::Value> = placed
        .iter()
        .take(MAX_RESULTS)
        .filter_map(|p| p.file.as_deref().map(|file| result(p, &base, file)))
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
        "invocations": [invocation],
        "results": results,
    });
    if let Some(ids) = base.base_ids() {
        run["originalUriBaseIds"] = ids;
    }
    Ok(serde_json::json!({
        "version": "2.1.0",
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "runs": [run],
    }))
}

/// A file as GitHub's annotations name it: relative to the repository root when it is inside
/// it (however it was typed), else as given.
pub(super) fn repository_path(base: &Base, file: &str) -> String {
    base.relative(file).unwrap_or_else(|| file.to_owned())
}
