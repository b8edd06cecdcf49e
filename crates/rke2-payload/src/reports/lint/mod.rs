//! `lint`: misconfigurations that keep nodes from joining, found in the payload before boot.
//!
//! Checks run on one payload (its [`Facts`]) and across the payloads of one cluster (the few
//! facts of each that the cluster checks compare). Every finding names a [`Check`] of the one
//! check table. [`Linter`] runs the whole pipeline on an input.
//!
//! # The JSON contract (`rke2-payload/lint/v1`)
//!
//! [`LintReport`] serialises to `{"schema", "secrets": [{"name", "namespace", "cluster", "role",
//! "findings": [..]}], "summary": {"errors", "warnings", "infos", "unreadable", "suppressed"}}`,
//! with `"suppressed": [..]` (each finding an ignore-check annotation suppressed, with the
//! [`Suppression`] that did) when there are any.
//!
//! # Suppressions
//!
//! An object suppresses a check on itself with the annotation
//! `ignore-check.rke2-payload.io/<check-id>: "<reason>"` ([`IGNORE_CHECK_ANNOTATION_PREFIX`]),
//! read from its parsed annotations:
//!
//! - on a bootstrap Secret, the findings of that Secret (not the manifest findings read back
//!   from `render`'s annotation, which are reported once whichever Secret carries them: they
//!   are suppressed when the manifests themselves are linted);
//! - on a manifest object, the manifest findings located on it ([`ManifestSite::ignores`]), and
//!   the findings of the Secrets rendered from it ([`Origin::suppressions`]: the object a
//!   Secret is rendered from and its Cluster).
//!
//! A suppressed finding is left out of the findings and the counts of its severity, so it does
//! not fail the run; it is listed in [`LintReport::suppressed`] and counted in
//! [`LintSummary::suppressed`]. An id after the prefix that names no check is a finding of its
//! own, [`Check::IgnoreCheckUnknown`] (a warning). [`Check::SecretUnreadable`] cannot be
//! suppressed. `--allow` and the minimum severity apply first: what they leave out is not
//! counted as suppressed.
//!
//! [`IGNORE_CHECK_ANNOTATION_PREFIX`]: crate::checks::IGNORE_CHECK_ANNOTATION_PREFIX
//! [`ManifestSite::ignores`]: crate::checks::ManifestSite::ignores
//! [`Origin::suppressions`]: crate::envelope::Origin::suppressions

use std::borrow::Cow;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::size::{SizeOptions, measure};
use crate::batch::{self, Memo};
use crate::checks::{Check, Finding, Ignores, Severity, Suppression, suppressible};
use crate::codec::time::now_unix;
use crate::envelope::{BootstrapSecret, Selector};
use crate::error::{Error, StreamError};
use crate::facts::Facts;
use crate::facts::rke2::Role;
use crate::options::DecodeOptions;

mod cluster;
mod payload;

pub(crate) use cluster::{ClusterFacts, Member, lint_cluster};
pub(crate) use payload::lint_payload;

/// The schema id of the lint JSON document.
pub const LINT_SCHEMA: &str = "rke2-payload/lint/v1";

/// Switches for the checks: built with [`LintOptions::new`] and its `with_` methods.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct LintOptions {
    /// Decoding limits.
    pub decode: DecodeOptions,
    /// Warn when a CA expires within this many days.
    pub cert_expiry_days: i64,
    /// "Now", seconds since the Unix epoch.
    pub now: i64,
    /// Size limits to check (`None`: no size checks). Its `decode` is not used: the linter
    /// decodes with [`LintOptions::decode`].
    pub size: Option<SizeOptions>,
    /// cloud-init's JSON schema, when installed; without it the project's own rules apply.
    #[cfg(feature = "cloud-init-schema")]
    pub cloud_init_schema: Option<Arc<super::cloud_init_schema::CloudInitSchema>>,
    /// Checks whose findings are left out.
    pub allow: Vec<Check>,
    /// The least severe findings reported: those below are left out (as if allowed), counted
    /// nowhere. [`Severity::Info`] (the default) reports every finding.
    pub min_severity: Severity,
}

impl Default for LintOptions {
    fn default() -> Self {
        LintOptions {
            decode: DecodeOptions::default(),
            cert_expiry_days: 30,
            now: now_unix(),
            size: None,
            #[cfg(feature = "cloud-init-schema")]
            cloud_init_schema: None,
            allow: Vec::new(),
            min_severity: Severity::Info,
        }
    }
}

impl LintOptions {
    /// The defaults: CAs warned of 30 days before they expire, "now" from the clock, no size
    /// checks, nothing allowed.
    ///
    /// ```
    /// use rke2_payload::{Check, LintOptions, SizeOptions};
    ///
    /// let options = LintOptions::new()
    ///     .with_size(Some(SizeOptions::new()))
    ///     .with_allow(vec![Check::ProviderIdMissing]);
    /// assert!(options.size.is_some());
    /// ```
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets [`LintOptions::decode`].
    pub fn with_decode(mut self, decode: DecodeOptions) -> Self {
        self.decode = decode;
        self
    }

    /// Sets [`LintOptions::cert_expiry_days`].
    pub fn with_cert_expiry_days(mut self, days: i64) -> Self {
        self.cert_expiry_days = days;
        self
    }

    /// Sets [`LintOptions::now`].
    pub fn with_now(mut self, now: i64) -> Self {
        self.now = now;
        self
    }

    /// Sets [`LintOptions::size`].
    pub fn with_size(mut self, size: Option<SizeOptions>) -> Self {
        self.size = size;
        self
    }

    /// Sets [`LintOptions::cloud_init_schema`].
    #[cfg(feature = "cloud-init-schema")]
    pub fn with_cloud_init_schema(
        mut self,
        schema: Option<Arc<super::cloud_init_schema::CloudInitSchema>>,
    ) -> Self {
        self.cloud_init_schema = schema;
        self
    }

    /// Sets [`LintOptions::allow`].
    pub fn with_allow(mut self, allow: Vec<Check>) -> Self {
        self.allow = allow;
        self
    }

    /// Sets [`LintOptions::min_severity`].
    pub fn with_min_severity(mut self, min_severity: Severity) -> Self {
        self.min_severity = min_severity;
        self
    }

    /// Whether a finding is reported at all: its check is not allowed and it is at least as
    /// severe as [`LintOptions::min_severity`].
    fn reports(&self, f: &Finding) -> bool {
        !self.allow.contains(&f.check) && f.severity <= self.min_severity
    }
}

/// The findings of one Secret.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[non_exhaustive]
pub struct LintedSecret {
    /// `metadata.name` (null for bare user data).
    pub name: Option<String>,
    /// `metadata.namespace`.
    pub namespace: Option<String>,
    /// The `cluster.x-k8s.io/cluster-name` label.
    pub cluster: Option<String>,
    /// What the node becomes.
    pub role: Option<Role>,
    /// Its findings: those of its payload, then those of the cluster checks. A Secret that
    /// cannot be read has one, [`Check::SecretUnreadable`].
    pub findings: Vec<Finding>,
    /// The line of the input its value is on (1-based), when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line: Option<u64>,
    /// The input file it was read from, when the input is several files (a folder,
    /// `lint a.yaml b.yaml`): the file `line` is a line of. Absent for a single input, which
    /// the report's reader names.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    /// For a Secret `render` made: the manifest object it was rendered from, and where that
    /// is written (what CI annotations point at).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rendered_from: Option<crate::checks::ManifestSite>,
    /// Why the Secret could not be read; `None` when it was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<ItemError>,
}

/// Why one Secret of an input could not be read: the others were.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[non_exhaustive]
pub struct ItemError {
    /// The error, one sentence naming the Secret (terminal-safe).
    pub message: String,
}

impl ItemError {
    /// The error of a Secret that cannot be read, `message` one terminal-safe sentence.
    ///
    /// ```
    /// assert_eq!(rke2_payload::ItemError::new("x").message, "x");
    /// ```
    pub fn new(message: impl Into<String>) -> Self {
        ItemError {
            message: message.into(),
        }
    }
}

/// How many findings of each severity.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[non_exhaustive]
pub struct LintSummary {
    /// Errors.
    pub errors: usize,
    /// Warnings.
    pub warnings: usize,
    /// Notes.
    pub infos: usize,
    /// Secrets that could not be read.
    #[serde(default)]
    pub unreadable: usize,
    /// Findings an ignore-check annotation suppressed (not counted above).
    #[serde(default)]
    pub suppressed: usize,
}

/// A finding an ignore-check annotation suppressed, and the annotation that did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[non_exhaustive]
pub struct Suppressed {
    /// The finding, as it would have been reported.
    #[serde(flatten)]
    pub finding: Finding,
    /// The Secret it is about (`namespace/name`), `None` for a finding about a manifest
    /// object (located by [`Finding::manifest`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secret: Option<String>,
    /// The annotation that suppressed it: the check, the reason, the object carrying it.
    pub by: Suppression,
}

/// What `lint` found in an input.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[non_exhaustive]
pub struct LintReport {
    /// Always [`LINT_SCHEMA`].
    pub schema: Cow<'static, str>,
    /// One entry per bootstrap Secret linted, in input order.
    pub secrets: Vec<LintedSecret>,
    /// The findings about the manifests the Secrets were rendered from (a preview's), each
    /// once per object and fact, located by [`Finding::manifest`], in the order first seen.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub manifests: Vec<Finding>,
    /// Bootstrap Secrets passed over: another provider's (kubeadm's, …), with why.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub skipped: Vec<crate::error::SkippedSecret>,
    /// The findings an ignore-check annotation suppressed, each with the annotation, in input
    /// order (a manifest object's once).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub suppressed: Vec<Suppressed>,
    /// The counts.
    pub summary: LintSummary,
}

impl LintReport {
    /// Whether the findings fail a gate: any error, or any warning when `deny_warnings`.
    /// (A Secret that cannot be read is an error finding too; see [`LintSummary::unreadable`].)
    pub fn fails(&self, deny_warnings: bool) -> bool {
        self.summary.errors > 0 || (deny_warnings && self.summary.warnings > 0)
    }
}

/// Why [`Linter::lint`] stopped.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LintError {
    /// The input could not be read, holds no bootstrap Secret, or none that the selector picks.
    #[error(transparent)]
    Input(Error),
}

/// Lints every bootstrap Secret of an input: each payload, then the Secrets of each cluster
/// together (token, tls-san, CA hash), reading each distinct payload once.
///
/// ```
/// use rke2_payload::{Check, LintOptions, Linter, Selector};
///
/// let list = br##"{"kind": "List", "items": [{"kind": "Secret", "metadata": {"name": "w"},
///   "stringData": {"format": "cloud-config", "value": "#cloud-config\nruncmd: [reboot]\n"}}]}"##;
/// let linter = Linter::new(LintOptions::new());
/// let report = linter.lint_stream(&list[..], &Selector::default(), 1)?;
/// let found: Vec<Check> = report.secrets[0].findings.iter().map(|f| f.check).collect();
/// assert_eq!(found, [Check::Rke2ConfigMissing]);
/// assert!(report.fails(false));
/// # Ok::<(), rke2_payload::LintError>(())
/// ```
#[derive(Debug)]
pub struct Linter {
    options: LintOptions,
    memo: Memo<Kept>,
}

/// What a [`Linter`] keeps of one payload.
#[derive(Debug)]
struct Kept {
    cluster: Arc<ClusterFacts>,
    found: Arc<[Finding]>,
}

/// One Secret read, in input order: its own fields, what its payload gave, and whether it is
/// the one asked for.
struct Read1 {
    name: Option<String>,
    namespace: Option<String>,
    cluster: Option<String>,
    line: Option<u64>,
    /// The input file it was read from, of several.
    file: Option<String>,
    /// What its payload gave, or why it could not be read.
    kept: Result<Arc<Kept>, Error>,
    picked: bool,
    /// The manifest findings a preview carries.
    preview: Vec<Finding>,
    /// The entry of the delivery table its infrastructure template sends it by (a preview's).
    delivery: Option<String>,
    /// Whether its provider refuses the payload itself for being gzip: the provider on its
    /// delivery path parses the data as YAML ([`Delivery::parsed_as_yaml`]) and the preview
    /// found it refuses the payload (`provider-refuses-payload`), so `gzip-unsafe`, the
    /// transport's generic reason, would tell the same fact wrongly.
    ///
    /// [`Delivery::parsed_as_yaml`]: crate::clouds::Delivery::parsed_as_yaml
    gzip_refused_by_provider: bool,
    /// The object it was rendered from (a preview's).
    rendered_from: Option<crate::checks::ManifestSite>,
    /// What its own ignore-check annotations say.
    ignores: Option<Ignores>,
    /// The suppressions of the objects it was rendered from (a preview's).
    inherited: Vec<Suppression>,
}

impl Linter {
    /// A linter that decodes and checks with `options`.
    pub fn new(options: LintOptions) -> Self {
        Linter {
            options,
            memo: Memo::default(),
        }
    }

    /// The options it checks with.
    pub fn options(&self) -> &LintOptions {
        &self.options
    }

    fn kept(&self, secret: &BootstrapSecret<'_>) -> Result<Arc<Kept>, Error> {
        self.memo.get_or_try_insert(secret, || {
            crate::facts::provider::check(secret, None)?;
            let payload = secret.decode(&self.options.decode)?;
            let facts = Facts::read(&payload);
            crate::facts::provider::check(secret, facts.document.as_ref())?;
            // Measured against the platforms asked for, or a preview's own delivery path.
            let size = self
                .options
                .size
                .as_ref()
                .filter(|o| !o.targets.is_empty() || super::size::delivery_of(secret, o).is_some())
                .map(|o| measure(secret, &payload, Some(&facts), o));
            let mut found = lint_payload(&facts, &payload, size.as_ref(), &self.options);
            // A Secret (not bare user data) without the `format` key CAPRKE2 always writes.
            if !secret.is_bare() && payload.declared_format() == crate::payload::DeclaredFormat::Missing {
                found.push(Finding::new(
                    Check::FormatMissing,
                    "the Secret has no `format` key, which CAPRKE2 always writes: it was not written by CAPRKE2, or was edited; Cluster API and the providers take the data for cloud-config",
                ));
            }
            Ok::<_, Error>(Kept {
                cluster: Arc::new(ClusterFacts::of(&facts)),
                found: found.into(),
            })
        })
    }

    /// What one Secret gives the report: its own fields, its payload's findings and facts,
    /// what its preview annotations say.
    fn read_one(&self, secret: &BootstrapSecret<'_>, picked: bool) -> Read1 {
        let origin = secret.origin();
        Read1 {
            name: secret.name().map(str::to_owned),
            namespace: secret.namespace().map(str::to_owned),
            cluster: secret.cluster().map(str::to_owned),
            line: secret.line(),
            file: None,
            kept: self.kept(secret),
            picked,
            preview: origin.map(|o| o.findings.clone()).unwrap_or_default(),
            delivery: origin
                .and_then(|o| o.delivery.as_ref())
                .map(|d| d.cloud.clone()),
            gzip_refused_by_provider: origin.is_some_and(|o| {
                o.delivery.as_ref().is_some_and(|d| d.parsed_as_yaml)
                    && o.findings
                        .iter()
                        .any(|f| f.check == Check::ProviderRefusesPayload)
            }),
            rendered_from: origin.and_then(|o| o.site.clone()),
            ignores: secret.ignores().cloned(),
            inherited: origin.map(|o| o.suppressions.clone()).unwrap_or_default(),
        }
    }

    /// Lints one Secret, as [`Inspector::inspect`](super::inspect::Inspector::inspect) and
    /// [`Sizer::measure`](super::size::Sizer::measure) read one: its payload's findings, and the
    /// manifest findings of a preview (the cluster checks compare it with nothing else).
    ///
    /// ```
    /// use rke2_payload::{Check, DecodeOptions, Envelope, LintOptions, Linter};
    ///
    /// let secret = br##"{"kind": "Secret", "metadata": {"name": "w"},
    ///   "stringData": {"format": "cloud-config", "value": "#cloud-config\nruncmd: [reboot]\n"}}"##;
    /// let envelope = Envelope::parse(secret, &DecodeOptions::default())?;
    /// let linted = Linter::new(LintOptions::new()).lint(&envelope.secrets[0])?;
    /// assert!(linted.findings.iter().any(|f| f.check == Check::Rke2ConfigMissing));
    /// # Ok::<(), rke2_payload::Error>(())
    /// ```
    ///
    /// # Errors
    /// When the Secret cannot be decoded ([`BootstrapSecret::decode`]), or holds another
    /// provider's data ([`Error::OtherProvider`]).
    pub fn lint(&self, secret: &BootstrapSecret<'_>) -> Result<LintedSecret, Error> {
        let mut read = self.read_one(secret, true);
        read.kept = Ok(std::mem::replace(&mut read.kept, Err(Error::Empty))?);
        let mut report = self.report(vec![read]);
        Ok(report.secrets.remove(0))
    }

    /// Lints every bootstrap Secret of `input` (a reader, or an [`Input`](crate::envelope::Input) of several sources) on `jobs` threads (0: one per CPU). Only the
    /// Secrets `selector` picks are reported, but the cluster checks still compare them with
    /// every Secret of the input (so the stream gives one report, at its end). A Secret that
    /// cannot be read is reported with one [`Check::SecretUnreadable`] finding and its
    /// [`LintedSecret::error`]; the rest go on.
    ///
    /// # Errors
    /// [`LintError::Input`] when the input cannot be read or the selector picks no Secret.
    pub fn lint_stream<'r>(
        &self,
        input: impl Into<crate::envelope::Input<'r>>,
        selector: &Selector,
        jobs: usize,
    ) -> Result<LintReport, LintError> {
        let mut read: Vec<Read1> = Vec::new();
        let streamed = batch::run_sourced(
            input,
            &self.options.decode,
            &Selector::default(),
            jobs,
            |secret| self.read_one(secret, selector.matches(secret)),
            |source, mut one: Read1| {
                one.file = source.map(str::to_owned);
                read.push(one);
                Ok::<(), std::convert::Infallible>(())
            },
        );
        match streamed {
            Ok(_) => {}
            Err(StreamError::Input(e)) => return Err(LintError::Input(e)),
            Err(StreamError::Sink(never)) => match never {},
        }
        if !selector.is_all() && !read.iter().any(|r| r.picked) {
            return Err(LintError::Input(Error::SecretNotFound {
                wanted: selector.to_string(),
                available: read.len(),
            }));
        }
        Ok(self.report(read))
    }

    /// The report of the Secrets read: the cluster checks over the readable ones, then each
    /// picked Secret's findings, the manifest findings once.
    fn report(&self, read: Vec<Read1>) -> LintReport {
        // Only the Secrets that could be read take part in the cluster checks.
        let readable: Vec<usize> = (0..read.len()).filter(|&i| read[i].kept.is_ok()).collect();
        let members: Vec<Member<'_>> = readable
            .iter()
            .filter_map(|&i| {
                let r = &read[i];
                r.kept.as_ref().ok().map(|kept| Member {
                    name: r.name.as_deref(),
                    namespace: r.namespace.as_deref(),
                    cluster: r.cluster.as_deref(),
                    facts: &kept.cluster,
                })
            })
            .collect();
        let mut extra: Vec<Vec<Finding>> = vec![Vec::new(); read.len()];
        for (i, finding) in lint_cluster(&members) {
            extra[readable[i]].push(finding);
        }
        drop(members);
        let mut manifests: Vec<Finding> = Vec::new();
        let mut suppressed: Vec<Suppressed> = Vec::new();
        let mut skipped = Vec::new();
        let secrets: Vec<LintedSecret> = read
            .into_iter()
            .zip(extra)
            .filter(|(r, _)| r.picked)
            .filter(
                |(r, _)| match r.kept.as_ref().err().and_then(Error::skipped) {
                    Some(s) => {
                        skipped.push(s);
                        false
                    }
                    None => true,
                },
            )
            .map(|(r, extra)| self.linted(r, extra, &mut manifests, &mut suppressed))
            .collect();
        let mut report = LintReport::new(secrets, manifests, suppressed);
        report.skipped = skipped;
        report
    }

    /// One Secret's entry of the report; the manifest findings its preview carries go to
    /// `manifests`, once each, and what an annotation suppressed to `suppressed`.
    fn linted(
        &self,
        r: Read1,
        extra: Vec<Finding>,
        manifests: &mut Vec<Finding>,
        suppressed: &mut Vec<Suppressed>,
    ) -> LintedSecret {
        let allowed = |f: &Finding| self.options.reports(f);
        let kept = match r.kept {
            Ok(kept) => kept,
            Err(e) => {
                let message = e.to_string();
                return LintedSecret {
                    role: None,
                    findings: vec![Finding::new(Check::SecretUnreadable, message.clone())],
                    name: r.name,
                    namespace: r.namespace,
                    cluster: r.cluster,
                    line: r.line,
                    file: r.file,
                    rendered_from: r.rendered_from,
                    error: Some(ItemError { message }),
                };
            }
        };
        // A manifest fact is told once, by its object; a payload check that says it again of
        // each Secret rendered from it is left out.
        let (of_manifests, own_findings): (Vec<Finding>, Vec<Finding>) =
            r.preview.into_iter().partition(|f| f.manifest.is_some());
        let restated: Vec<Check> = of_manifests
            .iter()
            .filter_map(|f| restated_by(f.check))
            .collect();
        let own = |check: Check| r.ignores.as_ref().and_then(|i| i.of(check));
        // Decided by the object each is located on (a Secret's own annotations do not reach
        // it: it is reported once, whichever Secret carries it).
        self.add_manifest_findings(of_manifests, manifests, suppressed);
        // CAPD sets the provider ID of its containers itself.
        // A provider that parses the data refuses gzip itself: one fact, one finding.
        let by_provider = |f: &Finding| {
            (f.check == Check::ProviderIdMissing && r.delivery.as_deref() == Some("docker"))
                || (f.check == Check::GzipUnsafe && r.gzip_refused_by_provider)
        };
        let unknown = r
            .ignores
            .as_ref()
            .map(Ignores::unknown_findings)
            .unwrap_or_default();
        let secret = match (&r.namespace, &r.name) {
            (Some(ns), Some(name)) => Some(format!("{ns}/{name}")),
            (None, name) => name.clone(),
            (Some(ns), None) => Some(format!("{ns}/")),
        };
        let mut findings = Vec::new();
        for f in own_findings
            .into_iter()
            .chain(kept.found.iter().cloned())
            .chain(extra)
            .chain(unknown)
            .filter(|f| allowed(f) && !restated.contains(&f.check) && !by_provider(f))
        {
            let by = own(f.check)
                .or_else(|| r.inherited.iter().find(|s| s.check == f.check))
                .filter(|_| suppressible(f.check))
                .cloned();
            match by {
                Some(by) => suppressed.push(Suppressed {
                    finding: f,
                    secret: secret.clone(),
                    by,
                }),
                None => findings.push(f),
            }
        }
        LintedSecret {
            role: kept.cluster.role,
            findings,
            name: r.name,
            namespace: r.namespace,
            cluster: r.cluster,
            line: r.line,
            file: r.file,
            rendered_from: r.rendered_from,
            error: None,
        }
    }

    /// The report on manifests of which nothing renders (a topology that does not expand, a
    /// control plane the API server rejects): the preview's findings, those the options allow,
    /// and no Secrets.
    ///
    /// ```
    /// use rke2_payload::{Check, Finding, LintOptions, Linter};
    ///
    /// // What the preview crate found on a topology Cluster whose ClusterClass is missing.
    /// let findings = vec![Finding::new(
    ///     Check::TopologyExpansionFails,
    ///     "Cluster fleet/demo: its ClusterClass fleet/missing is not in the input",
    /// )];
    /// let linter = Linter::new(LintOptions::new());
    /// let report = linter.lint_unrendered(findings);
    /// assert!(report.fails(false));
    /// assert_eq!(report.manifests[0].check, Check::TopologyExpansionFails);
    /// assert!(report.secrets.is_empty());
    /// ```
    pub fn lint_unrendered(&self, findings: Vec<Finding>) -> LintReport {
        let mut manifests: Vec<Finding> = Vec::new();
        let mut suppressed: Vec<Suppressed> = Vec::new();
        self.add_manifest_findings(findings, &mut manifests, &mut suppressed);
        LintReport::new(Vec::new(), manifests, suppressed)
    }

    /// `report` with more findings about the manifests (found apart from its Secrets: the
    /// update checks against a previous revision), those the options allow, each once;
    /// those their object's ignore-check annotation suppresses listed as suppressed. The
    /// counts are made again.
    ///
    /// ```
    /// use rke2_payload::{Check, Finding, LintOptions, Linter};
    ///
    /// let linter = Linter::new(LintOptions::new());
    /// let report = linter.lint_unrendered(Vec::new());
    /// assert!(!report.fails(false));
    /// let update = Finding::new(Check::ManifestUpdateRefused, "MachineDeployment ns/md: spec.clusterName: changes");
    /// let report = linter.with_manifest_findings(report, vec![update]);
    /// assert!(report.fails(false));
    /// assert_eq!(report.summary.errors, 1);
    /// ```
    pub fn with_manifest_findings(&self, report: LintReport, findings: Vec<Finding>) -> LintReport {
        let LintReport {
            secrets,
            mut manifests,
            skipped,
            mut suppressed,
            ..
        } = report;
        self.add_manifest_findings(findings, &mut manifests, &mut suppressed);
        let mut report = LintReport::new(secrets, manifests, suppressed);
        report.skipped = skipped;
        report
    }

    /// Adds each finding the options allow to `manifests`, or to `suppressed` when its
    /// object's annotation suppresses it, once (one check, message and object: the same fact
    /// told by several Secrets' previews).
    fn add_manifest_findings(
        &self,
        findings: Vec<Finding>,
        manifests: &mut Vec<Finding>,
        suppressed: &mut Vec<Suppressed>,
    ) {
        for f in findings {
            let same = |g: &Finding| {
                g.check == f.check && g.message == f.message && g.manifest == f.manifest
            };
            if !self.options.reports(&f)
                || manifests.iter().any(same)
                || suppressed.iter().any(|s| same(&s.finding))
            {
                continue;
            }
            match on_site(&f).cloned() {
                Some(by) => suppressed.push(Suppressed {
                    finding: f,
                    secret: None,
                    by,
                }),
                None => manifests.push(f),
            }
        }
    }
}

impl LintReport {
    /// The report of these Secrets and manifest findings, counted.
    fn new(
        secrets: Vec<LintedSecret>,
        manifests: Vec<Finding>,
        suppressed: Vec<Suppressed>,
    ) -> Self {
        let mut summary = LintSummary {
            suppressed: suppressed.len(),
            ..LintSummary::default()
        };
        for s in &secrets {
            summary.unreadable += usize::from(s.error.is_some());
        }
        for f in secrets.iter().flat_map(|s| &s.findings).chain(&manifests) {
            match f.severity {
                Severity::Error => summary.errors += 1,
                Severity::Warning => summary.warnings += 1,
                _ => summary.infos += 1,
            }
        }
        LintReport {
            schema: Cow::Borrowed(LINT_SCHEMA),
            secrets,
            manifests,
            skipped: Vec::new(),
            suppressed,
            summary,
        }
    }
}

/// The suppression the object a manifest finding is located on holds for its check.
fn on_site(f: &Finding) -> Option<&Suppression> {
    f.manifest
        .as_ref()
        .and_then(|site| site.ignores.as_deref())
        .and_then(|i| i.of(f.check))
        .filter(|_| suppressible(f.check))
}

/// The payload check that states again, of each Secret, what a manifest check states of the
/// object it was rendered from.
fn restated_by(manifest: Check) -> Option<Check> {
    match manifest {
        Check::ManifestAirGapNoChecksum => Some(Check::AirgapNoChecksum),
        Check::ManifestVersionPattern => Some(Check::VersionFormat),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_rule_is_described_once() {
        let mut ids: Vec<&str> = Check::ALL.iter().map(|c| c.id()).collect();
        ids.sort();
        let n = ids.len();
        ids.dedup();
        assert_eq!(ids.len(), n);
        assert!(Check::from_id("server-port").is_some());
    }

    /// The Secret's own annotations, its origin's and a manifest object's decide, typed; the
    /// minimum severity applies first; `secret-unreadable` stays.
    #[test]
    fn suppressions_are_decided_on_the_object_and_counted() {
        use crate::checks::{Ignores, ManifestSite, Suppression};
        use crate::envelope::{BootstrapSecret, Origin};
        use crate::error::SecretId;
        let id = SecretId {
            namespace: Some("capi".into()),
            name: Some("w".into()),
            index: 0,
        };
        let value = b"#cloud-config\nruncmd: [reboot]\n";
        let secret = BootstrapSecret::new(id, "cloud-config", value, None);
        let linter = Linter::new(LintOptions::new());
        let plain = linter.lint(&secret).expect("lints");
        assert!(
            plain
                .findings
                .iter()
                .any(|f| f.check == Check::Rke2ConfigMissing)
        );
        let own = Ignores::from_annotations(
            [("ignore-check.rke2-payload.io/rke2-config-missing", "why")],
            "Secret capi/w",
        );
        let mut report = linter.report(vec![
            linter.read_one(&secret.clone().with_ignores(own), true),
        ]);
        assert_eq!(report.summary.suppressed, report.suppressed.len());
        let by = &report.suppressed.remove(0);
        assert_eq!(
            (by.by.check, by.by.reason.as_str()),
            (Check::Rke2ConfigMissing, "why")
        );
        assert_eq!(by.secret.as_deref(), Some("capi/w"));
        let inherited = Origin::rendered(None).with_suppressions(vec![Suppression::new(
            Check::Rke2ConfigMissing,
            "",
            "RKE2ConfigTemplate capi/t",
        )]);
        let linted = linter
            .lint(&secret.clone().with_origin(inherited))
            .expect("lints");
        assert!(
            !linted
                .findings
                .iter()
                .any(|f| f.check == Check::Rke2ConfigMissing)
        );
        // A manifest finding, by the object it is located on.
        let site = ManifestSite::new("c.yaml", "Cluster capi/c", Some(1)).with_ignores(Some(
            Ignores::from_annotations(
                [("ignore-check.rke2-payload.io/manifest-schema", "known")],
                "Cluster capi/c",
            ),
        ));
        let f = Finding::new(Check::ManifestSchema, "Cluster capi/c: x").in_manifest(site);
        let report = linter.lint_unrendered(vec![f.clone()]);
        assert!(report.manifests.is_empty() && !report.fails(true));
        assert_eq!(report.summary.suppressed, 1);
        // Below the minimum severity: left out, not counted as suppressed.
        let strict = Linter::new(LintOptions::new().with_min_severity(Severity::Error));
        let info = Finding::new(Check::ManifestAirGapNoChecksum, "x");
        let report = strict.lint_unrendered(vec![info]);
        assert_eq!((report.manifests.len(), report.summary.suppressed), (0, 0));
    }

    /// A preview's gzipped cloud-config on CAPD's path: `gzip-unsafe` is the transport's
    /// verdict, and gives way to the provider's own refusal when the preview found it.
    #[test]
    fn a_provider_s_refusal_of_gzip_is_not_told_twice() {
        use crate::envelope::{BootstrapSecret, Origin};
        use crate::error::SecretId;
        let userdata = b"#cloud-config\nruncmd: [reboot]\n";
        let value = crate::codec::gzip::deflate(userdata, 6);
        let delivery = crate::clouds::delivery_for(
            "DockerMachineTemplate",
            "infrastructure.cluster.x-k8s.io/v1beta2",
            &serde_json::json!({}),
            false,
        );
        assert!(delivery.as_ref().is_some_and(|d| d.parsed_as_yaml));
        let linter = Linter::new(
            LintOptions::new().with_size(Some(crate::reports::size::SizeOptions::new())),
        );
        let ids = |findings: Vec<Finding>| {
            let id = SecretId {
                namespace: Some("capi".into()),
                name: Some("w".into()),
                index: 0,
            };
            let origin = Origin::rendered(None)
                .with_delivery(delivery.clone())
                .with_findings(findings);
            let secret =
                BootstrapSecret::new(id, "cloud-config", &value, Some("demo")).with_origin(origin);
            let linted = linter.lint(&secret).expect("lints");
            linted.findings.iter().map(|f| f.check).collect::<Vec<_>>()
        };
        let refused = Finding::new(Check::ProviderRefusesPayload, "CAPD parses it as YAML");
        let told = ids(vec![refused]);
        assert!(told.contains(&Check::ProviderRefusesPayload), "{told:?}");
        assert!(!told.contains(&Check::GzipUnsafe), "{told:?}");
        // Without the provider's refusal the transport's verdict stands.
        let alone = ids(Vec::new());
        assert!(alone.contains(&Check::GzipUnsafe), "{alone:?}");
    }
}
