//! `lint`: misconfigurations that keep nodes from joining, found in the payload before boot.
//!
//! Checks run on one payload ([`lint_secret`]) and across the payloads of one cluster
//! ([`lint_cluster`]). Every finding has a stable id from [`RULES`].

use crate::findings::{Finding, Severity};
use crate::payload::{Compression, Format, Payload};
use crate::report::SecretReport;
use crate::rke2::{self, Role};
use crate::size::{SizeOptions, SizeReport};

/// Every check: id, default severity, what it catches.
pub const RULES: &[(&str, Severity, &str)] = &[
    (
        "format-mismatch",
        Severity::Error,
        "the `format` key disagrees with the user data",
    ),
    (
        "format-empty",
        Severity::Warning,
        "the `format` key is empty",
    ),
    (
        "document-unreadable",
        Severity::Error,
        "the user data cannot be read as its format",
    ),
    (
        "cloud-config-invalid-yaml",
        Severity::Error,
        "the cloud-config is not valid YAML",
    ),
    (
        "cloud-config-schema",
        Severity::Warning,
        "keys or values cloud-init would reject",
    ),
    (
        "cloud-config-duplicate-key",
        Severity::Warning,
        "a top-level cloud-config key appears twice",
    ),
    (
        "userdata-not-cloud-config",
        Severity::Info,
        "the user data is another cloud-init part type",
    ),
    (
        "ignition-invalid",
        Severity::Error,
        "what ignition-validate would reject",
    ),
    (
        "rke2-config-invalid",
        Severity::Error,
        "config.yaml is not valid YAML",
    ),
    (
        "pem-invalid",
        Severity::Warning,
        "a PEM block cannot be read",
    ),
    (
        "rke2-config-missing",
        Severity::Error,
        "no /etc/rancher/rke2/config.yaml in the payload",
    ),
    (
        "server-port",
        Severity::Error,
        "the join URL is not https://<host>:9345",
    ),
    (
        "server-on-init",
        Severity::Error,
        "a payload with the cluster CAs also has a server to join",
    ),
    (
        "server-missing",
        Severity::Error,
        "a joining node has no server URL",
    ),
    (
        "tls-san-missing-server-host",
        Severity::Warning,
        "tls-san lacks the shared address the control plane is reached on",
    ),
    (
        "version-format",
        Severity::Warning,
        "an online install without a vX.Y.Z+rke2rN version",
    ),
    (
        "provider-id-missing",
        Severity::Warning,
        "no kubelet provider-id and no cloud provider",
    ),
    (
        "payload-not-utf8",
        Severity::Info,
        "the payload is gzip: pass it to a base64-taking argument",
    ),
    (
        "egress-required",
        Severity::Info,
        "the online install needs get.rke2.io reachable",
    ),
    (
        "airgap-no-checksum",
        Severity::Info,
        "the air-gapped install does not verify its artifacts",
    ),
    (
        "bare-kubectl",
        Severity::Warning,
        "a command calls kubectl without the RKE2 bin path",
    ),
    (
        "key-permissions",
        Severity::Warning,
        "a private key file is not mode 0600",
    ),
    (
        "duplicate-path",
        Severity::Warning,
        "two files are written to the same path",
    ),
    (
        "cert-expiry",
        Severity::Error,
        "a CA certificate is expired or expires soon",
    ),
    (
        "token-mismatch",
        Severity::Error,
        "a joining node's token differs from the first control plane's",
    ),
    (
        "join-host-not-in-san",
        Severity::Error,
        "the join host is not in the first control plane's tls-san",
    ),
    (
        "token-ca-hash",
        Severity::Error,
        "a K10 token's CA hash does not match the cluster's server CA",
    ),
    (
        "size-over-limit",
        Severity::Error,
        "the payload does not fit the cloud's user-data limit",
    ),
    (
        "gzip-unsafe",
        Severity::Warning,
        "the payload is gzip on a platform that corrupts or re-gzips it",
    ),
];

/// The description of a rule id.
pub fn describe(id: &str) -> Option<&'static str> {
    RULES.iter().find(|r| r.0 == id).map(|r| r.2)
}

/// Switches for the checks.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct LintOptions {
    /// Warn when a CA expires within this many days.
    pub cert_expiry_days: i64,
    /// "Now", seconds since the Unix epoch.
    pub now: i64,
    /// Size limits to check (empty: no size checks).
    pub size: Option<SizeOptions>,
    /// cloud-init's JSON schema, when installed; without it the project's own rules apply.
    pub cloud_init_schema: Option<std::sync::Arc<crate::schema::CloudInitSchema>>,
}

impl Default for LintOptions {
    fn default() -> Self {
        LintOptions {
            cert_expiry_days: 30,
            now: crate::time::now_unix(),
            size: None,
            cloud_init_schema: None,
        }
    }
}

/// Checks one payload. `report` is its [`crate::report::inspect`] report (whose reading problems
/// are included), `size` its size report when size checks were asked for.
pub fn lint_secret(
    report: &SecretReport,
    payload: &Payload<'_>,
    size: Option<&SizeReport>,
    options: &LintOptions,
) -> Vec<Finding> {
    let mut out: Vec<Finding> = report.findings.clone();
    let r = &report.rke2;
    let has_ca = report
        .certificates
        .iter()
        .any(|c| c.purpose == Some("server-ca"));
    let readable = !out.iter().any(|f| f.id == "document-unreadable");

    if let (Some(schema), crate::payload::Content::CloudConfig { .. }) =
        (&options.cloud_init_schema, payload.content())
        && let Some(text) = payload.userdata_text()
    {
        for p in schema.validate(text) {
            out.push(Finding::new(p.id, Severity::Warning, p.message));
        }
    }
    if readable && !r.config_found {
        out.push(Finding::new(
            "rke2-config-missing",
            Severity::Error,
            format!(
                "the payload writes no {}: RKE2 would start unconfigured",
                rke2::CONFIG_PATH
            ),
        ));
    }
    if payload.compression() == Compression::Gzip {
        out.push(Finding::new(
            "payload-not-utf8",
            Severity::Info,
            "data.value is raw gzip, not text: pass it to a base64-taking argument (user_data_base64), never through base64decode()",
        ));
    }

    // The join URL.
    match (&r.server, report.role) {
        (Some(server), _) => {
            match rke2::server_host_port(server) {
                Some((host, Some(rke2::SUPERVISOR_PORT)))
                    if server.starts_with("https://") && !host.is_empty() => {}
                _ => out.push(
                    Finding::new(
                        "server-port",
                        Severity::Error,
                        format!(
                            "server is {server:?}; RKE2 joins through the supervisor at https://<host>:9345"
                        ),
                    )
                    .at_path(rke2::CONFIG_PATH),
                ),
            }
            if has_ca {
                out.push(
                    Finding::new(
                        "server-on-init",
                        Severity::Error,
                        "the payload carries the cluster CA keys (first control plane) but also a server to join; the first control plane must have no `server`",
                    )
                    .at_path(rke2::CONFIG_PATH),
                );
            }
        }
        (None, Some(Role::Agent)) if r.config_found => out.push(
            Finding::new(
                "server-missing",
                Severity::Error,
                "a worker without `server` cannot join: set the join URL https://<host>:9345",
            )
            .at_path(rke2::CONFIG_PATH),
        ),
        (None, Some(Role::Init)) if r.config_found && !has_ca => out.push(
            Finding::new(
                "server-missing",
                Severity::Error,
                "a control plane with neither `server` nor the cluster CAs would start a new, separate cluster",
            )
            .at_path(rke2::CONFIG_PATH),
        ),
        _ => {}
    }

    // tls-san on control planes.
    if matches!(report.role, Some(Role::Init | Role::Server)) && r.config_found {
        let san_has = |host: &str| r.tls_san.iter().any(|s| s.eq_ignore_ascii_case(host));
        if r.tls_san.iter().any(|s| s.trim().is_empty())
            && !r.tls_san.iter().all(|s| s.trim().is_empty())
        {
            out.push(
                Finding::new(
                    "tls-san-missing-server-host",
                    Severity::Warning,
                    "tls-san has an empty entry: CAPRKE2 appends the controlPlaneEndpoint host, which was empty",
                )
                .at_path(rke2::CONFIG_PATH),
            );
        }
        if r.tls_san.iter().all(|s| s.trim().is_empty()) {
            out.push(
                Finding::new(
                    "tls-san-missing-server-host",
                    Severity::Warning,
                    "a control plane with no tls-san: the shared address (controlPlaneEndpoint host or registration address) will not be in the serving certificate",
                )
                .at_path(rke2::CONFIG_PATH),
            );
        } else if let Some((host, _)) = r.server.as_deref().and_then(rke2::server_host_port)
            && !is_ip(&host)
            && !san_has(&host)
        {
            out.push(
                Finding::new(
                    "tls-san-missing-server-host",
                    Severity::Warning,
                    format!(
                        "tls-san lacks {host}, the address this control plane is reached on; add it to serverConfig.tlsSan"
                    ),
                )
                .at_path(rke2::CONFIG_PATH),
            );
        }
    }

    // The install step.
    if let Some(install) = &report.install {
        if install.airgapped {
            if install.checksum.is_none() {
                out.push(Finding::new(
                    "airgap-no-checksum",
                    Severity::Info,
                    "the air-gapped install does not check the artifacts' SHA-256 (airGappedChecksum)",
                ));
            }
        } else {
            out.push(Finding::new(
                "egress-required",
                Severity::Info,
                "the online install downloads from get.rke2.io at boot: the node needs internet egress",
            ));
            match &install.version {
                Some(v) if is_rke2_version(v) => {}
                Some(v) => out.push(Finding::new(
                    "version-format",
                    Severity::Warning,
                    format!("INSTALL_RKE2_VERSION={v} is not of the form vX.Y.Z+rke2rN"),
                )),
                None => out.push(Finding::new(
                    "version-format",
                    Severity::Warning,
                    "INSTALL_RKE2_VERSION is missing or empty: the node installs whatever release is latest at boot",
                )),
            }
        }
    }

    if r.config_found && r.provider_id.is_none() && r.cloud_provider_name.is_none() {
        out.push(
            Finding::new(
                "provider-id-missing",
                Severity::Warning,
                "no kubelet-arg provider-id= and no cloud-provider-name: the Machine may never match its Node, and on the first control plane that blocks every later join",
            )
            .at_path(rke2::CONFIG_PATH),
        );
    }

    for (n, command) in report.commands.iter().enumerate() {
        if calls_bare_kubectl(&command.line) {
            // The command is named by its place, not quoted: it may carry a credential
            // (`kubectl --token=…`) that no redaction rule knows.
            out.push(Finding::new(
                "bare-kubectl",
                Severity::Warning,
                format!(
                    "command {} of {} calls kubectl, which RKE2 installs in /var/lib/rancher/rke2/bin (not on PATH); use the full path and KUBECONFIG=/etc/rancher/rke2/rke2.yaml",
                    n + 1,
                    command.origin
                ),
            ));
        }
    }

    for file in &report.files {
        if file.secret == Some("private key") && file.mode.as_deref() != Some("0600") {
            out.push(
                Finding::new(
                    "key-permissions",
                    Severity::Warning,
                    format!(
                        "private key file with mode {}; it should be 0600",
                        file.mode.as_deref().unwrap_or("unset (0644 by default)")
                    ),
                )
                .at_path(file.path.clone()),
            );
        }
    }
    if report.format == Format::CloudConfig {
        let mut seen: Vec<(&str, Option<&str>)> = Vec::new();
        for file in &report.files {
            match seen.iter().find(|(p, _)| *p == file.path) {
                Some((_, sha)) => {
                    let same = *sha == file.sha256.as_deref();
                    out.push(
                        Finding::new(
                            "duplicate-path",
                            if same {
                                Severity::Info
                            } else {
                                Severity::Warning
                            },
                            if same {
                                "written twice with the same content".to_owned()
                            } else {
                                "written twice with different content: the last one wins".to_owned()
                            },
                        )
                        .at_path(file.path.clone()),
                    );
                }
                None => seen.push((&file.path, file.sha256.as_deref())),
            }
        }
    }

    for cert in report.certificates.iter().filter(|c| c.is_ca) {
        let left = cert.not_after_unix - options.now;
        if left <= 0 {
            out.push(
                Finding::new(
                    "cert-expiry",
                    Severity::Error,
                    format!("CA certificate expired on {}", cert.not_after),
                )
                .at_path(cert.path.clone()),
            );
        } else if left < options.cert_expiry_days * 86_400 {
            out.push(
                Finding::new(
                    "cert-expiry",
                    Severity::Warning,
                    format!(
                        "CA certificate expires on {} (in {} days)",
                        cert.not_after,
                        left / 86_400
                    ),
                )
                .at_path(cert.path.clone()),
            );
        }
    }

    if let Some(size) = size {
        for v in &size.clouds {
            if !v.fits {
                out.push(Finding::new(
                    "size-over-limit",
                    Severity::Error,
                    format!(
                        "{}: {} of {} {} bytes counted ({:.0}%){}",
                        v.cloud,
                        v.counted_bytes,
                        v.budget_bytes,
                        match v.counted {
                            crate::clouds::Counted::Raw => "raw",
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
                    "gzip-unsafe",
                    Severity::Warning,
                    format!("{}: {advice}", v.cloud),
                ));
            }
        }
    }
    out
}

/// Checks across the payloads of one cluster. Returns (index into `reports`, finding).
pub fn lint_cluster(reports: &[&SecretReport]) -> Vec<(usize, Finding)> {
    let mut out = Vec::new();
    // One pass to group: a fleet dump has thousands of clusters.
    let mut clusters: std::collections::BTreeMap<Option<&str>, Vec<(usize, &SecretReport)>> =
        std::collections::BTreeMap::new();
    for (i, r) in reports.iter().enumerate() {
        clusters
            .entry(r.cluster.as_deref())
            .or_default()
            .push((i, *r));
    }
    for members in clusters.into_values() {
        let Some((_, init)) = members
            .iter()
            .find(|(_, r)| r.role == Some(Role::Init) && r.rke2.config_found)
        else {
            continue;
        };
        let server_ca_sha = init
            .files
            .iter()
            .find(|f| f.path == "/var/lib/rancher/rke2/server/tls/server-ca.crt")
            .and_then(|f| f.sha256.clone());
        for (i, join) in members
            .iter()
            .filter(|(_, r)| matches!(r.role, Some(Role::Server | Role::Agent)))
        {
            let r = &join.rke2;
            if let (Some(a), Some(b)) = (&r.token_sha256, &init.rke2.token_sha256)
                && a != b
            {
                out.push((
                    *i,
                    Finding::new(
                        "token-mismatch",
                        Severity::Error,
                        format!(
                            "the token differs from the first control plane's ({}): this node cannot join",
                            init.name.as_deref().unwrap_or("init")
                        ),
                    )
                    .at_path(rke2::CONFIG_PATH),
                ));
            }
            if let Some((host, _)) = r.server.as_deref().and_then(rke2::server_host_port)
                && !is_ip(&host)
                && !init
                    .rke2
                    .tls_san
                    .iter()
                    .any(|s| s.eq_ignore_ascii_case(&host))
            {
                out.push((
                    *i,
                    Finding::new(
                        "join-host-not-in-san",
                        Severity::Error,
                        format!(
                            "joins through {host}, which is not in the tls-san of the first control plane ({}): TLS verification fails",
                            init.name.as_deref().unwrap_or("init")
                        ),
                    )
                    .at_path(rke2::CONFIG_PATH),
                ));
            }
            if let (Some(hash), Some(ca)) = (&r.token_ca_hash, &server_ca_sha)
                && !hash.eq_ignore_ascii_case(ca)
            {
                out.push((
                    *i,
                    Finding::new(
                        "token-ca-hash",
                        Severity::Error,
                        "the K10 token's CA hash does not match the server CA of the first control plane: the agent will refuse the server",
                    )
                    .at_path(rke2::CONFIG_PATH),
                ));
            }
        }
    }
    out
}

/// `vX.Y.Z+rke2rN`.
pub fn is_rke2_version(v: &str) -> bool {
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
        let mut ids: Vec<&str> = RULES.iter().map(|r| r.0).collect();
        ids.sort();
        let n = ids.len();
        ids.dedup();
        assert_eq!(ids.len(), n);
        assert!(describe("server-port").is_some());
    }
}
