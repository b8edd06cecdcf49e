//! The text layout of `inspect`: one block per Secret, for people.
//!
//! A block is a title line (`Secret namespace/name`, `cluster …`), the summary rows (format and
//! compression, role, join server, token, tls-san, install step, network, ingress, datastore,
//! cloud, etcd S3 backups, sizes), then the sections that have something to show:
//! Certificates, Files, Commands (12 unless `verbose`) and Findings. Every string from the
//! input is terminal-safe. The layout is for people and may change from release to release;
//! `-o json` is the stable form.

use std::io::Write;

use rke2_payload::{Compression, PayloadReport, SecretReport, StreamSummary};

use crate::Result;
use crate::style::{BOLD, DIM, OK, WARN, finding_at, group, safe, severity_label, short_hash};

/// Writes one Secret's text block. `verbose` lists every command (not the first 12);
/// `show_secrets` says the report was made with the secrets shown, so its token is written in
/// clear (else its fingerprint and how to see it).
///
/// ```
/// use rke2_payload::{Envelope, InspectOptions, Inspector, Selector};
///
/// let secret = br##"{"kind": "Secret", "metadata": {"name": "md-0-x", "namespace": "default"},
///   "stringData": {"format": "cloud-config", "value": "#cloud-config\nruncmd: [reboot]\n"}}"##;
/// let inspector = Inspector::new(InspectOptions::new());
/// let envelope = Envelope::parse(secret, &inspector.options().decode)?;
/// let report = inspector.inspect(envelope.select(&Selector::default())?)?;
///
/// let mut out = Vec::new();
/// payload_printer::inspect::text(&mut out, &report, false, false)?;
/// let text = String::from_utf8(out)?;
/// assert!(text.contains("Secret default/md-0-x"));
/// assert!(text.contains("Commands"));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn text(
    out: &mut impl Write,
    report: &SecretReport,
    verbose: bool,
    show_secrets: bool,
) -> Result<()> {
    let title = match (&report.namespace, &report.name) {
        (Some(ns), Some(name)) => format!("Secret {}/{}", safe(ns), safe(name)),
        (None, Some(name)) => format!("Secret {}", safe(name)),
        _ => "User data".to_owned(),
    };
    write!(out, "{BOLD}{title}{BOLD:#}")?;
    if let Some(cluster) = &report.cluster {
        write!(out, "  {DIM}cluster {}{DIM:#}", safe(cluster))?;
    }
    writeln!(out)?;
    let s = &*report.payload;
    summary(out, s, show_secrets)?;
    certificates(out, s)?;
    files(out, s)?;
    commands(out, s, verbose)?;
    findings(out, s)?;
    Ok(())
}

/// Writes a row of the summary: a value from the input, made terminal-safe here.
fn row(out: &mut dyn Write, key: &str, value: &str) -> std::io::Result<()> {
    writeln!(out, "  {DIM}{key:<13}{DIM:#} {}", safe(value))
}

/// The summary rows: format, role, join server, token, install, then [`cluster_rows`].
fn summary(out: &mut dyn Write, s: &PayloadReport, shown: bool) -> Result<()> {
    let compression = match s.compression {
        Compression::None => "not compressed".to_owned(),
        Compression::Gzip => "gzip (raw)".to_owned(),
        Compression::IgnitionWrapper { gzip: true } => {
            "gzip inside an Ignition config.replace wrapper".to_owned()
        }
        Compression::IgnitionWrapper { gzip: false } => {
            "Ignition config.replace wrapper".to_owned()
        }
        _ => "other".to_owned(),
    };
    row(out, "format", &format!("{}, {compression}", s.format))?;
    let role = match s.role.map(|r| r.as_str()) {
        Some("init") => "init (first control plane: creates the cluster)",
        Some("server") => "server (control plane joining)",
        Some("agent") => "agent (worker)",
        _ => "unknown",
    };
    row(out, "role", role)?;
    let r = &s.rke2;
    row(
        out,
        "server",
        r.server.as_deref().unwrap_or(if r.config_found {
            "none (nothing to join)"
        } else {
            "unknown (no /etc/rancher/rke2/config.yaml)"
        }),
    )?;
    match (&r.token, &r.token_sha256) {
        (Some(token), _) if shown => row(out, "token", token)?,
        (_, Some(sha)) => writeln!(
            out,
            "  {DIM}{:<13}{DIM:#} sha256:{}  {DIM}(--show-secrets to see it){DIM:#}",
            "token",
            safe(short_hash(sha))
        )?,
        _ => row(out, "token", "none")?,
    }
    if !r.tls_san.is_empty() {
        row(out, "tls-san", &r.tls_san.join(", "))?;
    }
    let install = match &s.install {
        Some(i) if i.airgapped => format!(
            "air-gapped ({}){}",
            i.install_type.as_str(),
            match &i.checksum {
                Some(_)
                    if s.findings
                        .iter()
                        .any(|f| f.check == rke2_payload::Check::CloudConfigInvalidYaml) =>
                {
                    ", a checksum check that makes the cloud-config invalid YAML (cloud-init runs none of it)"
                }
                Some(_) => ", checks the artifacts' checksum first",
                None => ", no checksum verification",
            }
        ),
        Some(i) => format!(
            "online via get.rke2.io ({}), version {}",
            i.install_type.as_str(),
            i.version.as_deref().unwrap_or("not set")
        ),
        None => "not found".to_owned(),
    };
    row(out, "install", &install)?;
    cluster_rows(out, s)
}

/// The rows of the cluster's network, datastore, cloud and backups, and the sizes.
fn cluster_rows(out: &mut dyn Write, s: &PayloadReport) -> Result<()> {
    let r = &s.rke2;
    let mut network = Vec::new();
    if !r.cni.is_empty() {
        network.push(format!("cni {}", r.cni.join(",")));
    }
    if let Some(c) = &r.cluster_cidr {
        network.push(format!("cluster-cidr {c}"));
    }
    if let Some(c) = &r.service_cidr {
        network.push(format!("service-cidr {c}"));
    }
    if !network.is_empty() {
        row(out, "network", &network.join("  "))?;
    }
    if !r.ingress_controller.is_empty() {
        row(out, "ingress", &r.ingress_controller.join(", "))?;
    }
    // An external datastore replaces embedded etcd: the control planes need no etcd ports
    // between them, and the datastore must be reachable from each.
    if let Some(d) = &r.datastore_endpoint {
        row(
            out,
            "datastore",
            &format!(
                "external {d} (no embedded etcd: the control planes need the datastore, not etcd ports 2379-2380, between them)"
            ),
        )?;
    }
    if let Some(p) = &r.provider_id {
        row(out, "provider-id", p)?;
    } else if let Some(c) = &r.cloud_provider_name {
        row(out, "cloud", c)?;
    }
    if let Some(s3) = &r.etcd_s3 {
        row(
            out,
            "etcd-s3",
            &match (s3.enabled, s3.bucket.as_deref()) {
                (true, Some(bucket)) => format!("enabled, bucket {bucket}"),
                (true, None) => "enabled, no bucket set".to_owned(),
                (false, Some(bucket)) => {
                    format!("not enabled (no etcd-s3: true), though bucket {bucket} is set")
                }
                (false, None) => "not enabled (etcd-s3-* keys without etcd-s3: true)".to_owned(),
            },
        )?;
    }
    row(
        out,
        "size",
        &format!(
            "value {} B · base64 {} B · user data {} B",
            group(s.size.value_bytes),
            group(s.size.base64_bytes),
            group(s.size.userdata_bytes)
        ),
    )?;
    Ok(())
}

fn certificates(out: &mut dyn Write, s: &PayloadReport) -> Result<()> {
    if s.certificates.is_empty() {
        return Ok(());
    }
    writeln!(out, "\n  {BOLD}Certificates{BOLD:#}")?;
    for c in &s.certificates {
        let key = s
            .keys
            .iter()
            .find(|k| k.matches_certificate.as_deref() == Some(c.path.as_str()));
        writeln!(
            out,
            "    {:<15} {}  {}{}  {} {}  until {}  sha256:{}  {}",
            c.purpose.as_deref().unwrap_or("-"),
            safe(&c.subject),
            if c.is_ca { "CA" } else { "leaf" },
            c.path_len
                .map(|p| format!(" pathlen:{p}"))
                .unwrap_or_default(),
            safe(&c.key_algorithm),
            c.key_bits.map(|b| b.to_string()).unwrap_or_default(),
            safe(c.not_after.get(..10).unwrap_or(&c.not_after)),
            short_hash(&c.sha256),
            if key.is_some() {
                format!("{OK}key present{OK:#}")
            } else {
                String::new()
            }
        )?;
    }
    let orphans: Vec<_> = s
        .keys
        .iter()
        .filter(|k| k.matches_certificate.is_none())
        .collect();
    for k in orphans {
        writeln!(
            out,
            "    {:<15} {} {} key without a matching certificate  {}",
            "-",
            safe(&k.algorithm),
            k.bits.map(|b| b.to_string()).unwrap_or_default(),
            safe(&k.path)
        )?;
    }
    Ok(())
}

fn files(out: &mut dyn Write, s: &PayloadReport) -> Result<()> {
    writeln!(out, "\n  {BOLD}Files{BOLD:#} ({})", s.files.len())?;
    for f in &s.files {
        writeln!(
            out,
            "    {:<5} {:<10} {:>7}  {}{}",
            f.mode.as_deref().unwrap_or("-"),
            safe(f.owner.as_deref().unwrap_or("-")),
            group(f.size),
            safe(&f.path),
            match (f.secret.as_deref(), &f.remote) {
                (_, Some(_)) => format!("  {WARN}remote source, not fetched{WARN:#}"),
                (Some(what), None) => format!("  {WARN}secret: {what}{WARN:#}"),
                (None, None) => String::new(),
            }
        )?;
    }
    Ok(())
}

fn commands(out: &mut dyn Write, s: &PayloadReport, verbose: bool) -> Result<()> {
    let shown_commands = if verbose { s.commands.len() } else { 12 };
    writeln!(out, "\n  {BOLD}Commands{BOLD:#} ({})", s.commands.len())?;
    for c in s.commands.iter().take(shown_commands) {
        writeln!(
            out,
            "    {DIM}{:<8}{DIM:#} {}",
            safe(short_origin(&c.origin)),
            safe(&c.line)
        )?;
    }
    if s.commands.len() > shown_commands {
        writeln!(
            out,
            "    {DIM}… {} more (--verbose){DIM:#}",
            s.commands.len() - shown_commands
        )?;
    }
    Ok(())
}

fn findings(out: &mut dyn Write, s: &PayloadReport) -> Result<()> {
    if s.findings.is_empty() {
        return Ok(());
    }
    writeln!(out, "\n  {BOLD}Findings{BOLD:#}")?;
    for f in &s.findings {
        let (style, label) = severity_label(f.severity);
        let at = finding_at(f);
        writeln!(
            out,
            "    {style}{label:<7}{style:#} {:<26} {}{DIM}{at}{DIM:#}",
            f.id(),
            safe(&f.message)
        )?;
    }
    Ok(())
}

fn short_origin(origin: &str) -> &str {
    origin.rsplit('/').next().unwrap_or(origin)
}

/// The line that ends a text document when Secrets or objects were passed over: how many
/// Secrets carried no bootstrap data and how many objects were not Secrets. Nothing when none
/// was.
pub fn skipped(out: &mut impl Write, summary: &StreamSummary) -> Result<()> {
    if summary.skipped_secrets + summary.skipped_objects > 0 {
        writeln!(
            out,
            "\n{DIM}skipped: {} Secret(s) without bootstrap data, {} other object(s){DIM:#}",
            summary.skipped_secrets, summary.skipped_objects
        )?;
    }
    Ok(())
}
