//! `lint`: misconfigurations that keep nodes from joining, found in the payload before boot.
//!
//! Checks run on one payload (its [`Facts`]) and across the payloads of one cluster (the few
//! facts of each that the cluster checks compare). Every finding names a [`Check`] of the one
//! check table. [`Linter`] runs the whole pipeline on an input.
//!
//! # The JSON contract (`rke2-payload/lint/v1`)
//!
//! [`LintReport`] serialises to `{"schema", "secrets": [{"name", "namespace", "cluster", "role",
//! "findings": [..]}], "summary": {"errors", "warnings", "infos"}}`.

use std::borrow::Cow;
use std::io::Read;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::clouds::Counted;
use super::size::{PayloadSize, SizeOptions, measure};
use crate::batch::{self, Memo};
use crate::checks::{Check, Finding, Severity};
use crate::codec::time::now_unix;
use crate::document::File;
use crate::envelope::{BootstrapSecret, Selector};
use crate::error::{Error, StreamError};
use crate::facts::Facts;
use crate::facts::rke2::{self, Role};
use crate::options::DecodeOptions;
use crate::payload::{Compression, Format, Payload, UserDataKind};
use crate::secrets;

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
    pub cloud_init_schema: Option<Arc<super::schema::CloudInitSchema>>,
    /// Checks whose findings are left out.
    pub allow: Vec<Check>,
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
        schema: Option<Arc<super::schema::CloudInitSchema>>,
    ) -> Self {
        self.cloud_init_schema = schema;
        self
    }

    /// Sets [`LintOptions::allow`].
    pub fn with_allow(mut self, allow: Vec<Check>) -> Self {
        self.allow = allow;
        self
    }
}

/// Checks one payload: the problems noticed while reading its facts, then every check of one
/// payload. `size` is its measure when size checks were asked for.
pub(crate) fn lint_payload(
    facts: &Facts,
    payload: &Payload<'_>,
    size: Option<&PayloadSize>,
    options: &LintOptions,
) -> Vec<Finding> {
    let mut out: Vec<Finding> = facts.findings.clone();
    #[cfg(feature = "cloud-init-schema")]
    if let (Some(schema), UserDataKind::CloudConfig { .. }) =
        (&options.cloud_init_schema, payload.content())
        && let Some(text) = payload.userdata_text()
    {
        for p in schema.validate(text) {
            out.push(Finding::new(p.check, p.message));
        }
    }
    config_present(facts, payload, &mut out);
    join_url(facts, &mut out);
    tls_san(facts, &mut out);
    install_step(facts, &mut out);
    provider_id(facts, &mut out);
    ingress(facts, &mut out);
    jinja(payload, &mut out);
    bare_kubectl(facts, &mut out);
    registry_newlines(facts, &mut out);
    files(facts, payload, &mut out);
    certificates(facts, options, &mut out);
    if let Some(size) = size {
        size_checks(size, &mut out);
    }
    // Messages quote the payload (a server URL, a version): no credential in them.
    for finding in &mut out {
        if !secrets::credential_spans(&finding.message).is_empty() {
            finding.message = facts.redactor.redact_all(&finding.message);
        }
    }
    out
}

/// `rke2-config-missing` and `payload-not-utf8`: the payload writes no `config.yaml`, or is raw gzip.
fn config_present(facts: &Facts, payload: &Payload<'_>, out: &mut Vec<Finding>) {
    let config = facts.config.as_ref();
    let config_found = config.is_some();
    let readable = facts.readable();
    // A config.yaml that is there but does not parse is `rke2-config-invalid` (from the facts),
    // not missing.
    let config_written = facts
        .document
        .as_ref()
        .is_some_and(|d| d.file(rke2::CONFIG_PATH).is_some());
    // An Ignition config fetched at boot (config.replace / merge) may write it: not known here.
    let fetched = matches!(
        &facts.document,
        Some(crate::document::Document::Ignition(i)) if !i.config_sources.is_empty()
    );
    if readable && !config_found && !config_written && !fetched {
        out.push(Finding::new(
            Check::Rke2ConfigMissing,
            format!(
                "the payload writes no {}: RKE2 would start unconfigured",
                rke2::CONFIG_PATH
            ),
        ));
    }
    if payload.compression() == Compression::Gzip {
        out.push(Finding::new(Check::PayloadNotUtf8,
            "data.value is raw gzip, not text: pass it to a base64-taking argument (user_data_base64), never through base64decode()",
        ));
    }
}

/// The join URL: `server-port`, `server-on-init`, `server-missing`.
fn join_url(facts: &Facts, out: &mut Vec<Finding>) {
    let config = facts.config.as_ref();
    let config_found = config.is_some();
    let server = config.and_then(|c| c.server.as_deref());
    let has_ca = facts
        .material
        .certificates
        .iter()
        .any(|c| c.purpose.as_deref() == Some("server-ca"));
    // The join URL.
    match (server, facts.role) {
        (Some(server), _) => {
            match rke2::server_host_port(server) {
                Some((host, Some(rke2::SUPERVISOR_PORT)))
                    if server.starts_with("https://") && !host.is_empty() => {}
                _ => out.push(
                    Finding::new(Check::ServerPort,
                        format!(
                            "server is {server:?}; RKE2 joins through the supervisor at https://<host>:9345"
                        ),
                    )
                    .at_path(rke2::CONFIG_PATH),
                ),
            }
            if has_ca {
                out.push(
                    Finding::new(Check::ServerOnInit,
                        "the payload carries the cluster CA keys (first control plane) but also a server to join; the first control plane must have no `server`",
                    )
                    .at_path(rke2::CONFIG_PATH),
                );
            }
        }
        (None, Some(Role::Agent)) if config_found => out.push(
            Finding::new(Check::ServerMissing,
                "a worker without `server` cannot join: set the join URL https://<host>:9345",
            )
            .at_path(rke2::CONFIG_PATH),
        ),
        (None, Some(Role::Init)) if config_found && !has_ca => out.push(
            Finding::new(Check::ServerMissing,
                "a control plane with neither `server` nor the cluster CAs would start a new, separate cluster",
            )
            .at_path(rke2::CONFIG_PATH),
        ),
        _ => {}
    }
}

/// `tls-san-missing-server-host`: tls-san on control planes.
fn tls_san(facts: &Facts, out: &mut Vec<Finding>) {
    let config = facts.config.as_ref();
    let config_found = config.is_some();
    let server = config.and_then(|c| c.server.as_deref());
    let tls_san: &[String] = config.map_or(&[], |c| &c.tls_san);
    // tls-san on control planes.
    if matches!(facts.role, Some(Role::Init | Role::Server)) && config_found {
        let san_has = |host: &str| tls_san.iter().any(|s| s.eq_ignore_ascii_case(host));
        if tls_san.iter().any(|s| s.trim().is_empty())
            && !tls_san.iter().all(|s| s.trim().is_empty())
        {
            out.push(
                Finding::new(Check::TlsSanMissingServerHost,
                    "tls-san has an empty entry: CAPRKE2 appends the controlPlaneEndpoint host, which was empty",
                )
                .at_path(rke2::CONFIG_PATH),
            );
        }
        if tls_san.iter().all(|s| s.trim().is_empty()) {
            out.push(
                Finding::new(Check::TlsSanMissingServerHost,
                    "a control plane with no tls-san: the shared address (controlPlaneEndpoint host or registration address) will not be in the serving certificate",
                )
                .at_path(rke2::CONFIG_PATH),
            );
        } else if let Some((host, _)) = server.and_then(rke2::server_host_port)
            && !is_ip(&host)
            && !san_has(&host)
        {
            out.push(
                Finding::new(Check::TlsSanMissingServerHost,
                    format!(
                        "tls-san lacks {host}, the address this control plane is reached on; add it to serverConfig.tlsSan"
                    ),
                )
                .at_path(rke2::CONFIG_PATH),
            );
        }
    }
}

/// The install step: `airgap-no-checksum`, `egress-required`, `version-format`.
fn install_step(facts: &Facts, out: &mut Vec<Finding>) {
    // The install step.
    if let Some(install) = &facts.install {
        if install.airgapped {
            if install.checksum.is_none() {
                out.push(Finding::new(Check::AirgapNoChecksum,
                    "the air-gapped install does not check the artifacts' SHA-256 (airGappedChecksum)",
                ));
            }
        } else {
            out.push(Finding::new(Check::EgressRequired,
                "the online install downloads from get.rke2.io at boot: the node needs internet egress",
            ));
            match &install.version {
                Some(v) if is_rke2_version(v) => {}
                Some(v) => out.push(Finding::new(Check::VersionFormat,
                    format!("INSTALL_RKE2_VERSION={v} is not of the form vX.Y.Z+rke2rN"),
                )),
                None => out.push(Finding::new(Check::VersionFormat,
                    "INSTALL_RKE2_VERSION is missing or empty: the node installs whatever release is latest at boot",
                )),
            }
        }
    }
}

/// `provider-id-missing`.
fn provider_id(facts: &Facts, out: &mut Vec<Finding>) {
    let config = facts.config.as_ref();
    // A cloud controller sets the provider ID when the kubelet defers to an external one.
    if let Some(c) = config
        && c.provider_id().is_none()
        && c.cloud_provider_name.is_none()
        && !c.external_cloud_provider()
    {
        out.push(
            Finding::new(Check::ProviderIdMissing,
                "no kubelet-arg provider-id= and no cloud-provider-name: the Machine may never match its Node, and on the first control plane that blocks every later join",
            )
            .at_path(rke2::CONFIG_PATH),
        );
    }
}

/// `ingress-controller-disabled`.
fn ingress(facts: &Facts, out: &mut Vec<Finding>) {
    let config = facts.config.as_ref();
    if let Some(c) = config
        && !c.ingress_controller.is_empty()
    {
        let disabled: Vec<String> = match c.other.iter().rev().find(|(k, _)| k == "disable") {
            // RKE2 splits each item on commas too (`[rke2-a,rke2-b]` is two).
            Some((_, serde_json::Value::Array(items))) => items
                .iter()
                .filter_map(serde_json::Value::as_str)
                .flat_map(|s| s.split(','))
                .map(|s| s.trim().to_owned())
                .collect(),
            Some((_, serde_json::Value::String(s))) => {
                s.split(',').map(|s| s.trim().to_owned()).collect()
            }
            _ => Vec::new(),
        };
        for controller in &c.ingress_controller {
            let chart = format!("rke2-{controller}");
            if disabled.contains(&chart) {
                out.push(
                    Finding::new(
                        Check::IngressControllerDisabled,
                        format!(
                            "ingress-controller asks for {}, but disable lists {}: RKE2 deploys no {} ingress controller",
                            crate::codec::text::terminal_safe(controller),
                            crate::codec::text::terminal_safe(&chart),
                            crate::codec::text::terminal_safe(controller),
                        ),
                    )
                    .at_path(rke2::CONFIG_PATH),
                );
            }
        }
    }
}

/// `jinja-syntax`.
fn jinja(payload: &Payload<'_>, out: &mut Vec<Finding>) {
    // Rendered as Jinja first (CAPRKE2's `## template: jinja`).
    if let (UserDataKind::CloudConfig { jinja: true }, Some(text)) =
        (payload.content(), payload.userdata_text())
    {
        for (line, what) in jinja_problems(text) {
            out.push(Finding::located(
                Check::JinjaSyntax,
                format!("line {line}: {what}"),
                None,
                Some(crate::error::Position {
                    line: line as u64,
                    column: 1,
                    offset: None,
                }),
            ));
        }
    }
}

/// `bare-kubectl`.
fn bare_kubectl(facts: &Facts, out: &mut Vec<Finding>) {
    // runcmd is one script: a PATH that takes in RKE2's bin directory holds for what follows.
    let mut on_path: Vec<&str> = Vec::new();
    for (n, command) in facts.commands().iter().enumerate() {
        // `export PATH=…` or a bare `PATH=…`, as a line or a step of one (`… && kubectl`), not
        // in a pipeline (a subshell) nor `PATH=… cmd` (that command alone) nor text written to
        // a file.
        let sets_path = command.line.lines().any(|line| {
            !line.contains('|')
                && !line.contains('>')
                && line.split(';').flat_map(|s| s.split("&&")).any(|step| {
                    let step = step.trim();
                    let exported = step.strip_prefix("export ").map(str::trim_start);
                    exported
                        .unwrap_or(step)
                        .strip_prefix("PATH=")
                        .is_some_and(|value| {
                            value.contains("/var/lib/rancher/rke2/bin")
                                && !value.contains(char::is_whitespace)
                        })
                })
        });
        if sets_path {
            on_path.push(&command.origin);
        }
        if on_path.contains(&command.origin.as_str()) {
            continue;
        }
        if calls_bare_kubectl(&facts.redactor.redact(&command.line)) {
            // The command is named by its place, not quoted: it may carry a credential
            // (`kubectl --token=…`) that no redaction rule knows.
            out.push(Finding::new(Check::BareKubectl,
                format!(
                    "command {} of {} calls kubectl, which RKE2 installs in /var/lib/rancher/rke2/bin (not on PATH); use the full path and KUBECONFIG=/etc/rancher/rke2/rke2.yaml",
                    n + 1,
                    command.origin
                ),
            ));
        }
    }
}

/// `key-permissions` and `duplicate-path`.
fn files(facts: &Facts, payload: &Payload<'_>, out: &mut Vec<Finding>) {
    for (file, secret) in facts.files() {
        let mode = file.mode_string();
        if secret == Some("private key") && mode.as_deref() != Some("0600") {
            out.push(
                Finding::new(
                    Check::KeyPermissions,
                    format!(
                        "private key file with mode {}; it should be 0600",
                        mode.as_deref().unwrap_or("unset (0644 by default)")
                    ),
                )
                .at_path(file.path.clone()),
            );
        }
    }
    if payload.format() == Format::CloudConfig {
        // By path, in one pass: a payload can write many thousands of files.
        let mut seen: std::collections::HashMap<&str, &File> = std::collections::HashMap::new();
        for (file, _) in facts.files() {
            match seen.get(file.path.as_str()) {
                Some(first) => {
                    let same = first.sha256() == file.sha256();
                    out.push(
                        Finding::new(
                            Check::DuplicatePath,
                            if same {
                                "written twice with the same content"
                            } else {
                                "written twice with different content: the last one wins"
                            },
                        )
                        .with_severity(if same {
                            Severity::Info
                        } else {
                            Severity::Warning
                        })
                        .at_path(file.path.clone()),
                    );
                }
                None => {
                    seen.insert(&file.path, file);
                }
            }
        }
    }
}

/// `cert-expiry`.
fn certificates(facts: &Facts, options: &LintOptions, out: &mut Vec<Finding>) {
    // Every certificate the node uses: the CAs, and the others (a registry's client
    // certificate, a serving certificate): an expired one fails the TLS it is for.
    for cert in &facts.material.certificates {
        let what = if cert.is_ca {
            "CA certificate"
        } else {
            "certificate"
        };
        let left = cert.not_after_unix.saturating_sub(options.now);
        if left <= 0 {
            out.push(
                Finding::new(
                    Check::CertExpiry,
                    format!("{what} expired on {}", cert.not_after),
                )
                .at_path(cert.path.clone()),
            );
        } else if left < options.cert_expiry_days.saturating_mul(86_400) {
            out.push(
                Finding::new(
                    Check::CertExpiry,
                    format!(
                        "{what} expires on {} (in {} days)",
                        cert.not_after,
                        left / 86_400
                    ),
                )
                .with_severity(Severity::Warning)
                .at_path(cert.path.clone()),
            );
        }
    }
}

/// `size-over-limit` and `gzip-unsafe`, from the payload's measure.
fn size_checks(size: &PayloadSize, out: &mut Vec<Finding>) {
    for v in &size.clouds {
        if !v.fits {
            out.push(Finding::new(
                Check::SizeOverLimit,
                format!(
                    "{}: {} of {} {} bytes counted ({:.0}%){}",
                    v.cloud,
                    v.counted_bytes,
                    v.budget_bytes,
                    match v.counted {
                        Counted::Raw => "raw",
                        _ => "base64",
                    },
                    v.used_percent,
                    v.advice
                        .first()
                        .map(|a| format!("; {a}"))
                        .unwrap_or_default()
                ),
            ));
        }
        if v.fits
            && let Some(advice) = v.advice.iter().find(|a| a.contains("gzip"))
        {
            out.push(Finding::new(
                Check::GzipUnsafe,
                format!("{}: {advice}", v.cloud),
            ));
        }
    }
}

/// What the cluster checks compare of one payload: kept for every Secret of an input, so it is
/// small.
#[derive(Debug, Clone, Default)]
pub(crate) struct ClusterFacts {
    role: Option<Role>,
    config_found: bool,
    server: Option<String>,
    token_sha256: Option<String>,
    /// The first control plane's `agent-token`: agents may join with it instead of the token.
    agent_token_sha256: Option<String>,
    token_ca_hash: Option<String>,
    tls_san: Vec<String>,
    server_ca_sha256: Option<String>,
}

/// The path of the cluster's server CA on the first control plane.
const SERVER_CA_PATH: &str = "/var/lib/rancher/rke2/server/tls/server-ca.crt";

impl ClusterFacts {
    pub(crate) fn of(facts: &Facts) -> Self {
        let config = facts.config.as_ref();
        ClusterFacts {
            role: facts.role,
            config_found: config.is_some(),
            server: config.and_then(|c| c.server.clone()),
            token_sha256: config.and_then(|c| c.token.as_ref()).map(|t| t.sha256()),
            agent_token_sha256: config
                .and_then(|c| c.agent_token.as_ref())
                .map(|t| t.sha256()),
            token_ca_hash: config
                .and_then(|c| c.token.as_ref())
                .and_then(|t| rke2::token_ca_hash(t.expose()))
                .map(str::to_owned),
            tls_san: config.map(|c| c.tls_san.clone()).unwrap_or_default(),
            server_ca_sha256: facts
                .files()
                .find(|(f, _)| f.path == SERVER_CA_PATH)
                .and_then(|(f, _)| f.sha256()),
        }
    }
}

/// One Secret as the cluster checks see it.
pub(crate) struct Member<'a> {
    pub(crate) name: Option<&'a str>,
    pub(crate) cluster: Option<&'a str>,
    pub(crate) facts: &'a ClusterFacts,
}

/// Checks across the payloads of one cluster. Returns (index into `members`, finding).
pub(crate) fn lint_cluster(members: &[Member<'_>]) -> Vec<(usize, Finding)> {
    let mut out = Vec::new();
    // One pass to group: a fleet dump has thousands of clusters.
    let mut clusters: std::collections::BTreeMap<Option<&str>, Vec<(usize, &Member<'_>)>> =
        std::collections::BTreeMap::new();
    for (i, m) in members.iter().enumerate() {
        clusters.entry(m.cluster).or_default().push((i, m));
    }
    for members in clusters.into_values() {
        let Some((_, init)) = members
            .iter()
            .find(|(_, m)| m.facts.role == Some(Role::Init) && m.facts.config_found)
        else {
            continue;
        };
        let init_name = init.name.unwrap_or("init");
        let server_ca_sha = &init.facts.server_ca_sha256;
        for (i, join) in members
            .iter()
            .filter(|(_, m)| matches!(m.facts.role, Some(Role::Server | Role::Agent)))
        {
            let r = join.facts;
            // An agent may join with the servers' `agent-token` instead (RKE2 accepts either).
            let agent_token = r.role == Some(Role::Agent)
                && r.token_sha256.is_some()
                && r.token_sha256 == init.facts.agent_token_sha256;
            if let (Some(a), Some(b)) = (&r.token_sha256, &init.facts.token_sha256)
                && a != b
                && !agent_token
            {
                out.push((
                    *i,
                    Finding::new(
                        Check::TokenMismatch,
                        format!(
                            "the token differs from the first control plane's ({init_name}): this node cannot join"
                        ),
                    )
                    .at_path(rke2::CONFIG_PATH),
                ));
            }
            if let Some((host, _)) = r.server.as_deref().and_then(rke2::server_host_port)
                && !is_ip(&host)
                && !init
                    .facts
                    .tls_san
                    .iter()
                    .any(|s| s.eq_ignore_ascii_case(&host))
            {
                out.push((
                    *i,
                    Finding::new(
                        Check::JoinHostNotInSan,
                        format!(
                            "joins through {host}, which is not in the tls-san of the first control plane ({init_name}): TLS verification fails"
                        ),
                    )
                    .at_path(rke2::CONFIG_PATH),
                ));
            }
            if let (Some(hash), Some(ca)) = (&r.token_ca_hash, server_ca_sha)
                && !hash.eq_ignore_ascii_case(ca)
            {
                out.push((
                    *i,
                    Finding::new(
                        Check::TokenCaHash,
                        "the K10 token's CA hash does not match the server CA of the first control plane: the agent will refuse the server",
                    )
                    .at_path(rke2::CONFIG_PATH),
                ));
            }
        }
    }
    out
}

/// The findings of one Secret.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
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
pub struct ItemError {
    /// The error, one sentence naming the Secret (terminal-safe).
    pub message: String,
}

/// How many findings of each severity.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
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
}

/// What `lint` found in an input.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LintReport {
    /// Always [`LINT_SCHEMA`].
    pub schema: Cow<'static, str>,
    /// One entry per bootstrap Secret linted, in input order.
    pub secrets: Vec<LintedSecret>,
    /// The findings about the manifests the Secrets were rendered from (a preview's), each
    /// once per object and fact, located by [`Finding::manifest`], in the order first seen.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub manifests: Vec<Finding>,
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
    /// What its payload gave, or why it could not be read.
    kept: Result<Arc<Kept>, Error>,
    picked: bool,
    /// The manifest findings a preview carries.
    preview: Vec<Finding>,
    /// The entry of the delivery table its infrastructure template sends it by (a preview's).
    delivery: Option<String>,
    /// The object it was rendered from (a preview's).
    rendered_from: Option<crate::checks::ManifestSite>,
}

/// The findings of a preview's [`FINDINGS_ANNOTATION`](crate::envelope::FINDINGS_ANNOTATION):
/// known check ids only, at the severity written (or the check's own), messages made safe.
fn preview_findings(secret: &BootstrapSecret<'_>) -> Vec<Finding> {
    #[derive(serde::Deserialize)]
    struct Annotated {
        id: String,
        #[serde(default)]
        severity: Option<Severity>,
        #[serde(default)]
        message: String,
        #[serde(default)]
        manifest: Option<crate::checks::ManifestSite>,
    }
    let Some(text) = secret.preview_findings() else {
        return Vec::new();
    };
    let list: Vec<Annotated> = serde_json::from_str(text).unwrap_or_default();
    list.into_iter()
        .filter_map(|a| {
            let check = Check::from_id(&a.id)?;
            let mut f = Finding::new(
                check,
                crate::codec::text::terminal_safe(&a.message).into_owned(),
            );
            if let Some(severity) = a.severity {
                f.severity = severity;
            }
            f.manifest = a.manifest.map(crate::checks::ManifestSite::terminal_safe);
            Some(f)
        })
        .collect()
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
            let payload = secret.decode(&self.options.decode)?;
            let facts = Facts::read(&payload);
            // Measured against the platforms asked for, or a preview's own delivery path.
            let size = self
                .options
                .size
                .as_ref()
                .filter(|o| {
                    !o.targets.is_empty() || (o.follow_delivery && secret.rendered_from().is_some())
                })
                .map(|o| measure(secret, &payload, o));
            let found = lint_payload(&facts, &payload, size.as_ref(), &self.options);
            Ok::<_, Error>(Kept {
                cluster: Arc::new(ClusterFacts::of(&facts)),
                found: found.into(),
            })
        })
    }

    /// What one Secret gives the report: its own fields, its payload's findings and facts,
    /// what its preview annotations say.
    fn read_one(&self, secret: &BootstrapSecret<'_>, picked: bool) -> Read1 {
        let from = super::size::rendered_from(secret);
        Read1 {
            name: secret.name().map(str::to_owned),
            namespace: secret.namespace().map(str::to_owned),
            cluster: secret.cluster().map(str::to_owned),
            line: secret.line(),
            kept: self.kept(secret),
            picked,
            preview: preview_findings(secret),
            delivery: from
                .as_ref()
                .and_then(|f| f.delivery.as_ref())
                .map(|d| d.cloud.clone()),
            rendered_from: from.map(|f| f.site),
        }
    }

    /// Lints one Secret: its payload, and the manifest findings of a preview (the cluster
    /// checks compare it with nothing else). A Secret that cannot be read is reported with one
    /// [`Check::SecretUnreadable`] finding and its [`LintedSecret::error`].
    ///
    /// ```
    /// use rke2_payload::{Check, DecodeOptions, Envelope, LintOptions, Linter};
    ///
    /// let secret = br##"{"kind": "Secret", "metadata": {"name": "w"},
    ///   "stringData": {"format": "cloud-config", "value": "#cloud-config\nruncmd: [reboot]\n"}}"##;
    /// let envelope = Envelope::parse(secret, &DecodeOptions::default())?;
    /// let report = Linter::new(LintOptions::new()).lint(&envelope.secrets[0]);
    /// assert!(report.secrets[0].findings.iter().any(|f| f.check == Check::Rke2ConfigMissing));
    /// # Ok::<(), rke2_payload::Error>(())
    /// ```
    pub fn lint(&self, secret: &BootstrapSecret<'_>) -> LintReport {
        self.report(vec![self.read_one(secret, true)])
    }

    /// Lints every bootstrap Secret of `reader` on `jobs` threads (0: one per CPU). Only the
    /// Secrets `selector` picks are reported, but the cluster checks still compare them with
    /// every Secret of the input (so the stream gives one report, at its end). A Secret that
    /// cannot be read is reported with one [`Check::SecretUnreadable`] finding and its
    /// [`LintedSecret::error`]; the rest go on.
    ///
    /// # Errors
    /// [`LintError::Input`] when the input cannot be read or the selector picks no Secret.
    pub fn lint_stream<R: Read>(
        &self,
        reader: R,
        selector: &Selector,
        jobs: usize,
    ) -> Result<LintReport, LintError> {
        let mut read: Vec<Read1> = Vec::new();
        let streamed = batch::run(
            reader,
            &self.options.decode,
            &Selector::default(),
            jobs,
            |secret| self.read_one(secret, selector.matches(secret)),
            |one: Read1| {
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
        let secrets: Vec<LintedSecret> = read
            .into_iter()
            .zip(extra)
            .filter(|(r, _)| r.picked)
            .map(|(r, extra)| self.linted(r, extra, &mut manifests))
            .collect();
        LintReport::new(secrets, manifests)
    }

    /// One Secret's entry of the report; the manifest findings its preview carries go to
    /// `manifests`, once each.
    fn linted(&self, r: Read1, extra: Vec<Finding>, manifests: &mut Vec<Finding>) -> LintedSecret {
        let allowed = |f: &Finding| !self.options.allow.contains(&f.check);
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
                    rendered_from: r.rendered_from,
                    error: Some(ItemError { message }),
                };
            }
        };
        // A manifest fact is told once, by its object; a payload check that says it again of
        // each Secret rendered from it is left out.
        let (of_manifests, own): (Vec<Finding>, Vec<Finding>) =
            r.preview.into_iter().partition(|f| f.manifest.is_some());
        let restated: Vec<Check> = of_manifests
            .iter()
            .filter_map(|f| restated_by(f.check))
            .collect();
        for f in of_manifests.into_iter().filter(allowed) {
            if !manifests
                .iter()
                .any(|g| g.check == f.check && g.message == f.message && g.manifest == f.manifest)
            {
                manifests.push(f);
            }
        }
        // CAPD sets the provider ID of its containers itself.
        let by_provider = |f: &Finding| {
            f.check == Check::ProviderIdMissing && r.delivery.as_deref() == Some("docker")
        };
        LintedSecret {
            role: kept.cluster.role,
            findings: own
                .into_iter()
                .chain(kept.found.iter().cloned())
                .chain(extra)
                .filter(|f| allowed(f) && !restated.contains(&f.check) && !by_provider(f))
                .collect(),
            name: r.name,
            namespace: r.namespace,
            cluster: r.cluster,
            line: r.line,
            rendered_from: r.rendered_from,
            error: None,
        }
    }

    /// The report on manifests of which nothing renders (a topology that does not expand, a
    /// control plane the API server rejects): the preview's findings, those the options allow,
    /// and no Secrets.
    ///
    /// ```
    /// use rke2_payload::{Check, LintOptions, Linter, RenderOptions, Source, render};
    ///
    /// let cluster = b"apiVersion: cluster.x-k8s.io/v1beta2
    /// kind: Cluster
    /// metadata: {name: demo, namespace: fleet}
    /// spec:
    ///   topology: {classRef: {name: missing}, version: v1.34.1+rke2r1}
    /// ";
    /// let preview = render(&[Source { name: "cluster.yaml", bytes: cluster }], &RenderOptions::new())?;
    /// assert!(preview.secrets.is_empty());
    /// let linter = Linter::new(LintOptions::new());
    /// let report = linter.lint_unrendered(preview.findings);
    /// assert!(report.fails(false));
    /// assert_eq!(report.manifests[0].check, Check::TopologyExpansionFails);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn lint_unrendered(&self, findings: Vec<Finding>) -> LintReport {
        let mut manifests: Vec<Finding> = Vec::new();
        for f in findings {
            if !self.options.allow.contains(&f.check) && !manifests.contains(&f) {
                manifests.push(f);
            }
        }
        LintReport::new(Vec::new(), manifests)
    }
}

impl LintReport {
    /// The report of these Secrets and manifest findings, counted.
    fn new(secrets: Vec<LintedSecret>, manifests: Vec<Finding>) -> Self {
        let mut summary = LintSummary::default();
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
            summary,
        }
    }
}

/// `registry-auth-newline`: a credential of `registries.yaml` (read as YAML) that ends in a
/// line break, as CAPRKE2 copies it from an auth Secret made with `echo … | base64`.
fn registry_newlines(facts: &Facts, out: &mut Vec<Finding>) {
    const REGISTRIES: &str = "/etc/rancher/rke2/registries.yaml";
    for (file, _) in facts.files() {
        if file.path != REGISTRIES {
            continue;
        }
        let Some(text) = file
            .bytes()
            .and_then(|b| std::str::from_utf8(b).ok().map(str::to_owned))
        else {
            continue;
        };
        let Ok(Some(doc)) = serde_saphyr::from_str::<Option<serde_json::Value>>(&text) else {
            continue;
        };
        let Some(serde_json::Value::Object(configs)) = doc.get("configs") else {
            continue;
        };
        for (registry, config) in configs {
            for key in ["username", "password", "auth", "identity_token"] {
                if config
                    .get("auth")
                    .and_then(|a| a.get(key))
                    .and_then(serde_json::Value::as_str)
                    .is_some_and(|v| v.ends_with('\n') || v.ends_with('\r'))
                {
                    out.push(
                        Finding::new(
                            Check::RegistryAuthNewline,
                            format!(
                                "configs.{}.auth.{key} ends in a line break: the registry rejects the login (make the auth Secret's values without a trailing newline)",
                                crate::codec::text::terminal_safe(registry)
                            ),
                        )
                        .at_path(REGISTRIES),
                    );
                }
            }
        }
    }
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

/// `vX.Y.Z+rke2rN`.
pub(crate) fn is_rke2_version(v: &str) -> bool {
    let Some(rest) = v.strip_prefix('v') else {
        return false;
    };
    let Some((semver, build)) = rest.split_once('+') else {
        return false;
    };
    let parts: Vec<&str> = semver.split('.').collect();
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    parts.len() == 3
        && parts.iter().all(|p| digits(p))
        && build.strip_prefix("rke2r").is_some_and(digits)
}

fn is_ip(host: &str) -> bool {
    host.parse::<std::net::IpAddr>().is_ok()
}

/// Where a text read as a Jinja template (as cloud-init renders `## template: jinja` user
/// data) fails or drops text: (1-based line, what), at most a few. Inside `{% raw %}` nothing
/// is read. The messages never quote the text.
fn jinja_problems(text: &str) -> Vec<(usize, &'static str)> {
    let bytes = text.as_bytes();
    let line_of = |at: usize| 1 + memchr::memchr_iter(b'\n', &bytes[..at]).count();
    let mut out = Vec::new();
    let mut at = 0;
    while out.len() < 5 {
        let Some(open) = memchr::memchr(b'{', &bytes[at..]).map(|n| at + n) else {
            break;
        };
        let close: &[u8] = match bytes.get(open + 1) {
            Some(b'{') => b"}}",
            Some(b'%') => b"%}",
            Some(b'#') => b"#}",
            _ => {
                at = open + 1;
                continue;
            }
        };
        let body_start = open + 2;
        let Some(end) = memchr::memmem::find(&bytes[body_start..], close).map(|n| body_start + n)
        else {
            out.push((
                line_of(open),
                match close {
                    b"}}" => "`{{` is never closed by `}}`: Jinja fails and cloud-init applies none of the cloud-config",
                    b"%}" => "`{%` is never closed by `%}`: Jinja fails and cloud-init applies none of the cloud-config",
                    _ => "`{#` (a shell `${#var}`?) opens a Jinja comment that is never closed: Jinja fails and cloud-init applies none of the cloud-config",
                },
            ));
            break;
        };
        let body =
            text[body_start..end].trim_matches(|c: char| c.is_whitespace() || c == '-' || c == '+');
        match close {
            b"}}" if body.starts_with('.') || body.starts_with('$') => out.push((
                line_of(open),
                "`{{ .x }}` or `{{ $x }}` is Go-template (Helm) syntax, which Jinja does not read: it fails and cloud-init applies none of the cloud-config",
            )),
            b"#}" => out.push((
                line_of(open),
                "`{#` (a shell `${#var}`?) opens a Jinja comment: the text up to the next `#}` is dropped from the cloud-config",
            )),
            b"%}" if body == "raw" => {
                // Up to `{% endraw %}` (with any spacing), nothing is Jinja.
                let mut from = end + 2;
                let mut closed = false;
                while let Some(n) = memchr::memmem::find(&bytes[from..], b"{%") {
                    let tag_start = from + n + 2;
                    let Some(m) = memchr::memmem::find(&bytes[tag_start..], b"%}") else {
                        break;
                    };
                    let tag = text[tag_start..tag_start + m]
                        .trim_matches(|c: char| c.is_whitespace() || c == '-' || c == '+');
                    from = tag_start + m + 2;
                    if tag == "endraw" {
                        closed = true;
                        break;
                    }
                }
                if !closed {
                    out.push((
                        line_of(open),
                        "`{% raw %}` is never closed by `{% endraw %}`: Jinja fails and cloud-init applies none of the cloud-config",
                    ));
                    break;
                }
                at = from;
                continue;
            }
            _ => {}
        }
        at = end + 2;
    }
    out
}

/// Whether a command line runs `kubectl` by bare name.
fn calls_bare_kubectl(line: &str) -> bool {
    let mut rest = line;
    while let Some(i) = rest.find("kubectl") {
        let before = rest[..i].chars().next_back();
        let after = rest[i + 7..].chars().next();
        let word_start = before.is_none_or(|c| {
            c.is_whitespace() || matches!(c, ';' | '&' | '|' | '(' | '`' | '$' | '\'' | '"')
        });
        let word_end = after.is_none_or(|c| {
            c.is_whitespace() || matches!(c, ';' | '&' | '|' | ')' | '`' | '\'' | '"')
        });
        if word_start && word_end && !line.contains("rke2/bin") {
            return true;
        }
        rest = &rest[i + 7..];
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jinja_traps() {
        let lines = |t: &str| jinja_problems(t).iter().map(|p| p.0).collect::<Vec<_>>();
        // What CAPRKE2 and cloud-init users write: no problem.
        assert!(lines("## template: jinja\n#cloud-config\nhostname: {{ v1.local_hostname }}\nruncmd: [echo {%- if x %}a{% endif %}]\n").is_empty());
        assert!(lines("a: '{ x }'\nb: ${HOME}\nc: {\"k\": 1}\n").is_empty());
        // Helm in a file, an unclosed expression, a shell length, raw blocks.
        assert_eq!(lines("a: 1\nb: {{ .Release.Name }}\n"), [2]);
        assert_eq!(lines("x\ny\nz: {{ v1.x\n"), [3]);
        assert_eq!(lines("n=${#arr[@]}\n"), [1]);
        assert!(
            lines("{% raw %}{{ .Values.x }} ${#a}{% endraw %}\nb: {{ ds.meta_data.x }}\n")
                .is_empty()
        );
        assert_eq!(lines("{% raw %}{{ .Values.x }}\n"), [1]);
    }

    #[test]
    fn versions() {
        assert!(is_rke2_version("v1.32.5+rke2r1"));
        assert!(is_rke2_version("v1.32.5+rke2r12"));
        assert!(!is_rke2_version("v1.32.5"));
        assert!(!is_rke2_version("1.32.5+rke2r1"));
        assert!(!is_rke2_version("v1.32+rke2r1"));
        assert!(!is_rke2_version("v1.32.5+k3s1"));
        assert!(!is_rke2_version(""));
    }

    #[test]
    fn kubectl_detection() {
        assert!(calls_bare_kubectl("kubectl apply -f /x.yaml"));
        assert!(calls_bare_kubectl("sleep 5; kubectl get nodes"));
        assert!(!calls_bare_kubectl(
            "/var/lib/rancher/rke2/bin/kubectl get nodes"
        ));
        assert!(!calls_bare_kubectl(
            "PATH=$PATH:/var/lib/rancher/rke2/bin kubectl get nodes"
        ));
        assert!(!calls_bare_kubectl("echo kubectl-like"));
        assert!(!calls_bare_kubectl("systemctl start rke2-server"));
    }

    #[test]
    fn every_rule_is_described_once() {
        let mut ids: Vec<&str> = Check::ALL.iter().map(|c| c.id()).collect();
        ids.sort();
        let n = ids.len();
        ids.dedup();
        assert_eq!(ids.len(), n);
        assert!(Check::from_id("server-port").is_some());
    }
}
