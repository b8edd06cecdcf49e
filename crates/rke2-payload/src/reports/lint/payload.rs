//! The checks of one payload: a check group per function, called from a short list.

use crate::checks::{Check, Finding, Severity};
use crate::clouds::{Counted, GzipSafety};
use crate::document::File;
use crate::facts::Facts;
use crate::facts::rke2::{self, Role};
use crate::payload::{Compression, Format, Payload, UserDataKind};
use crate::reports::size::PayloadSize;

use super::LintOptions;

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
    cidrs(facts, &mut out);
    ingress(facts, &mut out);
    jinja(payload, &mut out);
    bare_kubectl(facts, &mut out);
    registry_newlines(facts, &mut out);
    files(facts, payload, &mut out);
    certificates(facts, options, &mut out);
    if let Some(size) = size {
        size_checks(size, &mut out);
    }
    // Messages quote the payload (a server URL, a version, another tool's words): what they
    // quote reads the same verdicts as every other output.
    for finding in &mut out {
        finding.message = facts.redactor.redact_all(&finding.message);
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
    // RKE2's config is written but nothing installs or starts RKE2: cut short, or by hand. A
    // user data that is not a cloud-config (a script) or an Ignition config fetched at boot
    // may start it in ways not read here.
    let not_read = matches!(
        payload.content(),
        UserDataKind::OtherCloudInit | UserDataKind::Unrecognised
    ) || fetched;
    if readable && (config_found || config_written) && !facts.starts_rke2 && !not_read {
        out.push(Finding::new(
            Check::Rke2NotStarted,
            "the payload writes RKE2's config but never installs or starts RKE2 (no install step, no command or unit that enables rke2-server or rke2-agent): it was cut short or assembled by hand, and the machine never becomes a node",
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

/// The install step: `airgap-no-checksum`, `version-format`.
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
            // `egress-required` is said once per cluster (`lint::cluster`).
            match &install.version {
                Some(v) if is_rke2_version(v) => {}
                // A literal that is no release tag: the installer asks for a release that
                // does not exist, and the install fails. (Text that a template or the shell
                // fills in at boot is left a warning.)
                Some(v) if is_version_literal(v) => out.push(
                    Finding::new(Check::VersionFormat,
                        format!("INSTALL_RKE2_VERSION={v} is not an RKE2 release of the form v1.32.5+rke2r1: the installer finds no such release, so RKE2 is never installed and the node never starts"),
                    )
                    .with_severity(Severity::Error),
                ),
                Some(v) => out.push(Finding::new(Check::VersionFormat,
                    format!("INSTALL_RKE2_VERSION={v} is not an RKE2 release of the form v1.32.5+rke2r1"),
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

/// RKE2's defaults for `cluster-cidr` and `service-cidr`.
const DEFAULT_CIDRS: (&str, &str) = ("10.42.0.0/16", "10.43.0.0/16");

/// A CIDR as (address family is v6, first address, prefix length), read by the standard
/// library's address parser.
fn cidr(text: &str) -> Option<(bool, u128, u32)> {
    let (address, prefix) = text.trim().split_once('/')?;
    let prefix: u32 = prefix.parse().ok()?;
    match address.parse::<std::net::IpAddr>().ok()? {
        std::net::IpAddr::V4(a) if prefix <= 32 => Some((false, u128::from(u32::from(a)), prefix)),
        std::net::IpAddr::V6(a) if prefix <= 128 => Some((true, u128::from(a), prefix)),
        _ => None,
    }
}

/// Whether two networks of one family share an address: their first addresses agree on the
/// shorter prefix.
fn overlap(a: (bool, u128, u32), b: (bool, u128, u32)) -> bool {
    if a.0 != b.0 {
        return false;
    }
    let bits: u32 = if a.0 { 128 } else { 32 };
    let prefix = a.2.min(b.2);
    let mask = if prefix == 0 {
        0
    } else {
        let all: u128 = if bits == 128 {
            u128::MAX
        } else {
            (1u128 << bits) - 1
        };
        (all >> (bits - prefix)) << (bits - prefix)
    };
    a.1 & mask == b.1 & mask
}

#[cfg(test)]
mod cidr_tests {
    use super::{cidr, overlap};

    fn overlaps(a: &str, b: &str) -> bool {
        overlap(cidr(a).expect("a CIDR"), cidr(b).expect("a CIDR"))
    }

    #[test]
    fn networks_overlap_on_the_shorter_prefix_within_a_family() {
        assert!(!overlaps("10.42.0.0/16", "10.43.0.0/16"));
        assert!(overlaps("10.42.0.0/15", "10.43.0.0/16"));
        assert!(overlaps("10.0.0.0/8", "10.43.12.0/24"));
        assert!(overlaps("0.0.0.0/0", "192.168.0.0/16"));
        assert!(!overlaps("10.42.0.0/16", "fd00::/8"));
        assert!(overlaps("2001:cafe:42::/56", "2001:cafe:42::/112"));
        assert!(!overlaps("2001:cafe:42::/56", "2001:cafe:43::/112"));
        assert!(cidr("10.42.0.0/33").is_none() && cidr("nonsense").is_none());
    }
}

/// `cidr-overlap`: the pod and service networks (RKE2's defaults for the one not set) share
/// addresses, family by family.
fn cidrs(facts: &Facts, out: &mut Vec<Finding>) {
    let Some(config) = facts.config.as_ref() else {
        return;
    };
    if config.cluster_cidr.is_none() && config.service_cidr.is_none() {
        return;
    }
    let pods = config.cluster_cidr.as_deref().unwrap_or(DEFAULT_CIDRS.0);
    let services = config.service_cidr.as_deref().unwrap_or(DEFAULT_CIDRS.1);
    for p in pods.split(',') {
        for s in services.split(',') {
            if let (Some(a), Some(b)) = (cidr(p), cidr(s))
                && overlap(a, b)
            {
                out.push(
                    Finding::new(
                        Check::CidrOverlap,
                        format!(
                            "cluster-cidr {} and service-cidr {} overlap: pods given addresses in the service range are unreachable (kube-proxy's service rules capture their traffic)",
                            p.trim(),
                            s.trim()
                        ),
                    )
                    .at_path(rke2::CONFIG_PATH),
                );
            }
        }
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
                    // Written empty first (a placeholder a later entry fills, as CAPZ's
                    // azure.json), or appended to: no content is lost.
                    let intended = file.append || (first.size() == 0 && first.bytes().is_some());
                    let message = if same {
                        "written twice with the same content"
                    } else if file.append {
                        "written, then appended to"
                    } else if intended {
                        "written empty first, then with content: the content wins"
                    } else {
                        "written twice with different content: the last one wins"
                    };
                    out.push(
                        Finding::new(Check::DuplicatePath, message)
                            .with_severity(if same || intended {
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
    // certificate, a serving certificate): an expired one fails the TLS it is for. A
    // registry's own files fail only the pulls through it (containerd falls back to the
    // default endpoint), unless it is where RKE2 pulls its own images from.
    let system = system_default_registry(facts);
    // Read once for every certificate (only when there is one).
    let configs = if facts.material.certificates.is_empty() {
        None
    } else {
        registry_configs(facts)
    };
    let registry_of = |path: &str| -> Option<String> {
        configs.as_ref()?.iter().find_map(|(registry, config)| {
            let tls = config.get("tls")?;
            ["cert_file", "key_file", "ca_file"]
                .iter()
                .any(|k| tls.get(*k).and_then(serde_json::Value::as_str) == Some(path))
                .then(|| registry.clone())
        })
    };
    for cert in &facts.material.certificates {
        let what = if cert.is_ca {
            "CA certificate"
        } else {
            "certificate"
        };
        let left = cert.not_after_unix.saturating_sub(options.now);
        if left <= 0 {
            let registry = registry_of(&cert.path)
                .filter(|r| system.as_deref() != Some(registry_host(r).as_str()));
            let finding = match &registry {
                Some(r) => Finding::new(
                    Check::CertExpiry,
                    format!(
                        "{what} expired on {}: TLS to registry {} fails, and so do the pulls through it (containerd falls back to the image's default registry)",
                        cert.not_after,
                        crate::codec::text::terminal_safe(r)
                    ),
                )
                .with_severity(Severity::Warning),
                None => Finding::new(
                    Check::CertExpiry,
                    format!("{what} expired on {}", cert.not_after),
                ),
            };
            out.push(finding.at_path(cert.path.clone()));
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
        // The transport (or a provider that gzips again) breaks a gzipped payload: decided on
        // the table's entry, the advice is what to say.
        let gzip_breaks = size.compression == Compression::Gzip
            && crate::clouds::find_cloud(&v.cloud)
                .is_some_and(|c| c.gzip_cloud_config == GzipSafety::Unsafe || c.provider_gzips);
        if v.fits
            && gzip_breaks
            && let Some(advice) = v.advice.first()
        {
            out.push(Finding::new(
                Check::GzipUnsafe,
                format!("{}: {advice}", v.cloud),
            ));
        }
    }
}

/// `registry-auth-newline`: a credential of `registries.yaml` (read as YAML) that ends in a
/// line break, as CAPRKE2 copies it from an auth Secret made with `echo … | base64`.
/// Where RKE2 writes its registries file.
const REGISTRIES: &str = "/etc/rancher/rke2/registries.yaml";

/// The `system-default-registry` of `config.yaml`, as a host: where RKE2 pulls its own images.
fn system_default_registry(facts: &Facts) -> Option<String> {
    facts.config.as_ref().and_then(|c| {
        c.other
            .iter()
            .find(|(k, _)| k == "system-default-registry")
            .and_then(|(_, v)| v.as_str())
            .map(registry_host)
    })
}

/// A registry as a host, whether written `https://host/` or `host`.
fn registry_host(registry: &str) -> String {
    let host = registry.split_once("://").map_or(registry, |(_, h)| h);
    host.trim_end_matches('/').to_owned()
}

/// The `configs` of the registries file the payload writes (the last one written).
fn registry_configs(facts: &Facts) -> Option<serde_json::Map<String, serde_json::Value>> {
    let file = facts
        .files()
        .filter(|(f, _)| f.path == REGISTRIES)
        .last()?
        .0;
    let text = std::str::from_utf8(file.bytes()?).ok()?;
    let Ok(Some(doc)) = serde_saphyr::from_str::<Option<serde_json::Value>>(text) else {
        return None;
    };
    match doc.get("configs") {
        Some(serde_json::Value::Object(configs)) => Some(configs.clone()),
        _ => None,
    }
}

fn registry_newlines(facts: &Facts, out: &mut Vec<Finding>) {
    // RKE2's own images come from `system-default-registry` when it is set: a login refused
    // there keeps the node from starting. Another registry's refused login fails the pulls
    // through it, and containerd falls back to the default endpoint.
    let system = system_default_registry(facts);
    let Some(configs) = registry_configs(facts) else {
        return;
    };
    for (registry, config) in &configs {
        for key in ["username", "password", "auth", "identity_token"] {
            if config
                .get("auth")
                .and_then(|a| a.get(key))
                .and_then(serde_json::Value::as_str)
                .is_some_and(|v| v.ends_with('\n') || v.ends_with('\r'))
            {
                let boots_from = system.as_deref() == Some(registry_host(registry).as_str());
                out.push(
                    Finding::new(
                        Check::RegistryAuthNewline,
                        format!(
                            "configs.{}.auth.{key} ends in a line break: the registry rejects the login{} (make the auth Secret's values without a trailing newline)",
                            crate::codec::text::terminal_safe(registry),
                            if boots_from {
                                ", and it is the system-default-registry RKE2 pulls its own images from: the node never starts"
                            } else {
                                "; pulls through it fail (containerd falls back to the image's default registry)"
                            }
                        ),
                    )
                    .with_severity(if boots_from {
                        Severity::Error
                    } else {
                        Severity::Warning
                    })
                    .at_path(REGISTRIES),
                );
            }
        }
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
    // A release candidate is a release too: v1.33.0-rc1+rke2r1.
    let (semver, pre) = match semver.split_once('-') {
        Some((semver, pre)) => (semver, Some(pre)),
        None => (semver, None),
    };
    let parts: Vec<&str> = semver.split('.').collect();
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    // A number of a release tag has no leading zero (v1.32.5, never v1.32.05).
    let number = |s: &str| digits(s) && (s == "0" || !s.starts_with('0'));
    parts.len() == 3
        && parts.iter().all(|p| number(p))
        && pre.is_none_or(|p| {
            !p.is_empty()
                && p.bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'.')
        })
        && build.strip_prefix("rke2r").is_some_and(digits)
}

/// Whether a version is written out as it is used (letters, digits, `.`, `+`, `-`, `_`), not
/// text a template or the shell fills in at boot (`{{ … }}`, `${…}`, `$(…)`).
fn is_version_literal(v: &str) -> bool {
    v.bytes()
        .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'+' | b'-' | b'_'))
}

pub(super) fn is_ip(host: &str) -> bool {
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
        assert!(!is_rke2_version("v1.32.05+rke2r1"));
        assert!(is_rke2_version("v1.33.0-rc1+rke2r1"));
        assert!(is_rke2_version("v1.30.0+rke2r1"));
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
}
