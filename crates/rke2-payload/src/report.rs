//! `inspect`: what a node will do at first boot, as one serialisable report per Secret.
//!
//! # The JSON contract (`rke2-payload/inspect/v1`)
//!
//! [`InspectReport`] serialises to a stable document. Fields are only ever added within `v1`.
//!
//! ```json
//! {"schema": "rke2-payload/inspect/v1",
//!  "secrets": [{"name", "namespace", "cluster", "format": "cloud-config"|"ignition",
//!               "declared_format", "gzip": bool, "compression": {"kind": …},
//!               "role": "init"|"server"|"agent"|null,
//!               "rke2": {"server", "token_sha256", "tls_san": [..], "version", "airgapped", …},
//!               "install": {…}|null,
//!               "certificates": [{"path", "subject", "not_after", "sha256", "is_ca", …}],
//!               "keys": [{"path", "algorithm", "bits", "matches_certificate", …}],
//!               "files": [{"path", "mode": "0640"|null, "owner", "size", "sha256", "secret"}],
//!               "commands": [{"line", "origin"}],
//!               "size": {"value_bytes", "base64_bytes", "userdata_bytes"},
//!               "findings": [{"id", "severity", "message", "path"?, "line"?, "column"?}]}],
//!  "skipped_secrets": n, "skipped_objects": n}
//! ```
//!
//! Secret values (tokens, keys, passwords) appear only as SHA-256 fingerprints unless
//! [`InspectOptions::show_secrets`] is set; then `rke2.token` (and `agent_token`) hold them.

use serde::Serialize;
use serde_json::{Map, Value};

use crate::document::{Document, File, sha256_hex};
use crate::envelope::{BootstrapSecret, Envelope};
use crate::error::Error;
use crate::findings::{Finding, Severity};
use crate::memo::Memo;
use crate::options::DecodeOptions;
use crate::payload::{Compression, DeclaredFormat, Format, Payload};
use crate::pki::{self, Certificate, PrivateKey};
use crate::rke2::{self, Install, Rke2Config, Role};
use crate::secret::{Redactor, SecretString};
use crate::sensitive;

/// The schema id of the inspect JSON document.
pub const INSPECT_SCHEMA: &str = "rke2-payload/inspect/v1";

/// Switches for [`inspect`].
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct InspectOptions {
    /// Decoding limits.
    pub decode: DecodeOptions,
    /// Include secret values (the token) in the report.
    pub show_secrets: bool,
}

/// The report for a whole input.
#[derive(Debug, Clone, Serialize)]
pub struct InspectReport {
    /// Always [`INSPECT_SCHEMA`].
    pub schema: &'static str,
    /// One report per bootstrap Secret, in input order.
    pub secrets: Vec<SecretReport>,
    /// Secrets in the input that carry no bootstrap data.
    pub skipped_secrets: usize,
    /// Objects in the input that are not Secrets.
    pub skipped_objects: usize,
}

/// What one bootstrap Secret does.
#[derive(Debug, Clone, Serialize)]
pub struct SecretReport {
    /// `metadata.name` (null for bare user data).
    pub name: Option<String>,
    /// `metadata.namespace`.
    pub namespace: Option<String>,
    /// The `cluster.x-k8s.io/cluster-name` label.
    pub cluster: Option<String>,
    /// The user data format.
    pub format: Format,
    /// The `format` key as stored.
    pub declared_format: DeclaredFormat,
    /// Whether the value is gzip (raw, or inside the Ignition wrapper).
    pub gzip: bool,
    /// How the value is compressed.
    pub compression: Compression,
    /// What the node becomes.
    pub role: Option<Role>,
    /// Facts from `config.yaml` and the install step.
    pub rke2: Rke2Report,
    /// The install step, if found.
    pub install: Option<Install>,
    /// Certificates in the payload.
    pub certificates: Vec<Certificate>,
    /// Private keys in the payload (metadata only).
    pub keys: Vec<PrivateKey>,
    /// Files the payload writes.
    pub files: Vec<FileReport>,
    /// Commands run at first boot (secret values redacted).
    pub commands: Vec<CommandReport>,
    /// Sizes.
    pub size: SizeSummary,
    /// Problems and notes found while reading.
    pub findings: Vec<Finding>,
}

/// Facts from `/etc/rancher/rke2/config.yaml` and the install step.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Rke2Report {
    /// Whether `config.yaml` was found.
    pub config_found: bool,
    /// `server`: the join URL.
    pub server: Option<String>,
    /// Hex SHA-256 of the token's bytes.
    pub token_sha256: Option<String>,
    /// The token itself, only with `show_secrets`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub token: Option<String>,
    /// The CA hash inside a `K10<hash>::<user>:<password>` token (a hash of the public server CA,
    /// not a secret).
    pub token_ca_hash: Option<String>,
    /// Hex SHA-256 of `agent-token`.
    pub agent_token_sha256: Option<String>,
    /// `agent-token`, only with `show_secrets`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub agent_token: Option<String>,
    /// `tls-san`.
    pub tls_san: Vec<String>,
    /// `INSTALL_RKE2_VERSION` of an online install.
    pub version: Option<String>,
    /// Whether the install is air-gapped.
    pub airgapped: bool,
    /// `cni`.
    pub cni: Vec<String>,
    /// `cluster-cidr`.
    pub cluster_cidr: Option<String>,
    /// `service-cidr`.
    pub service_cidr: Option<String>,
    /// `node-name`.
    pub node_name: Option<String>,
    /// `node-ip`.
    pub node_ip: Vec<String>,
    /// `node-label`.
    pub node_label: Vec<String>,
    /// `node-taint`.
    pub node_taint: Vec<String>,
    /// `kubelet-arg`.
    pub kubelet_arg: Vec<String>,
    /// `provider-id=` from `kubelet-arg`.
    pub provider_id: Option<String>,
    /// `cloud-provider-name`.
    pub cloud_provider_name: Option<String>,
    /// `profile`.
    pub profile: Option<String>,
    /// etcd S3 backup settings.
    pub etcd_s3: Option<EtcdS3Report>,
    /// `datastore-endpoint`, with any password redacted.
    pub datastore_endpoint: Option<String>,
    /// Every other key; values of secret-looking keys are replaced by their SHA-256.
    pub other: Map<String, Value>,
}

/// etcd S3 settings, keys as fingerprints.
#[derive(Debug, Clone, Serialize)]
pub struct EtcdS3Report {
    /// `etcd-s3`.
    pub enabled: bool,
    /// `etcd-s3-bucket`.
    pub bucket: Option<String>,
    /// `etcd-s3-endpoint`.
    pub endpoint: Option<String>,
    /// `etcd-s3-region`.
    pub region: Option<String>,
    /// `etcd-s3-folder`.
    pub folder: Option<String>,
    /// SHA-256 of `etcd-s3-access-key`.
    pub access_key_sha256: Option<String>,
    /// SHA-256 of `etcd-s3-secret-key`.
    pub secret_key_sha256: Option<String>,
}

/// One file.
#[derive(Debug, Clone, Serialize)]
pub struct FileReport {
    /// Path on the node.
    pub path: String,
    /// Mode as four octal digits, or null when not set.
    pub mode: Option<String>,
    /// Owner, if set.
    pub owner: Option<String>,
    /// Decoded size in bytes.
    pub size: u64,
    /// Hex SHA-256 of the decoded content (null when not inline).
    pub sha256: Option<String>,
    /// How the content is encoded in the document.
    pub encoding: Option<String>,
    /// A remote source, never fetched.
    pub remote: Option<String>,
    /// What in the file is secret, if anything.
    pub secret: Option<&'static str>,
}

/// One command.
#[derive(Debug, Clone, Serialize)]
pub struct CommandReport {
    /// The command line, secret values redacted.
    pub line: String,
    /// `runcmd`, `bootcmd`, or the script or unit it comes from.
    pub origin: String,
}

/// Sizes of one Secret.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct SizeSummary {
    /// Bytes of `data.value`.
    pub value_bytes: u64,
    /// Length of its base64 text in the Secret.
    pub base64_bytes: u64,
    /// Bytes of the final user data (unwrapped, decompressed).
    pub userdata_bytes: u64,
}

/// Inspects every bootstrap Secret of an input. A Secret that cannot be decoded is returned as
/// an error in its place.
pub fn inspect_all(
    envelope: &Envelope<'_>,
    options: &InspectOptions,
) -> Vec<Result<SecretReport, Error>> {
    envelope
        .secrets
        .iter()
        .map(|secret| inspect(secret, options))
        .collect()
}

/// Inspects one bootstrap Secret.
pub fn inspect(
    secret: &BootstrapSecret<'_>,
    options: &InspectOptions,
) -> Result<SecretReport, Error> {
    let payload = secret.decode(&options.decode)?;
    Ok(inspect_payload(secret, &payload, options))
}

/// Inspects many Secrets with one set of options, reading each distinct payload once.
///
/// Every replica of a MachineDeployment carries byte-identical user data. An `Inspector` keeps
/// the report of each payload it has read (the last 256 distinct ones) and answers the next
/// Secret whose stored `format` and `value` are the same with a copy carrying that Secret's
/// name, namespace and cluster: the same report [`inspect`] makes, for the cost of a hash and a
/// comparison of the stored text. Threads may share one.
///
/// ```
/// use rke2_payload::report::{InspectOptions, Inspector};
/// use rke2_payload::{DecodeOptions, Envelope};
///
/// let list = br#"{"kind": "List", "items": [
///   {"kind": "Secret", "type": "cluster.x-k8s.io/secret", "metadata": {"name": "md-0-a"},
///    "data": {"format": "Y2xvdWQtY29uZmln", "value": "I2Nsb3VkLWNvbmZpZwpydW5jbWQ6IFtdCg=="}},
///   {"kind": "Secret", "type": "cluster.x-k8s.io/secret", "metadata": {"name": "md-0-b"},
///    "data": {"format": "Y2xvdWQtY29uZmln", "value": "I2Nsb3VkLWNvbmZpZwpydW5jbWQ6IFtdCg=="}}]}"#;
/// let envelope = Envelope::parse(list, &DecodeOptions::default())?;
/// let inspector = Inspector::new(InspectOptions::default());
/// let a = inspector.inspect(&envelope.secrets[0])?; // read
/// let b = inspector.inspect(&envelope.secrets[1])?; // the same bytes: a copy, renamed
/// assert_eq!(b.name.as_deref(), Some("md-0-b"));
/// assert_eq!(a.size.userdata_bytes, b.size.userdata_bytes);
/// # Ok::<(), rke2_payload::Error>(())
/// ```
#[derive(Debug, Default)]
pub struct Inspector {
    options: InspectOptions,
    memo: Memo<SecretReport>,
}

impl Inspector {
    /// An inspector that reads with `options`.
    pub fn new(options: InspectOptions) -> Self {
        Inspector {
            options,
            memo: Memo::default(),
        }
    }

    /// The options it reads with.
    pub fn options(&self) -> &InspectOptions {
        &self.options
    }

    /// The report of one Secret, equal to [`inspect`]'s.
    ///
    /// # Errors
    /// As [`inspect`]; a payload that fails is not kept, so each Secret carrying it fails alike.
    pub fn inspect(&self, secret: &BootstrapSecret<'_>) -> Result<SecretReport, Error> {
        let kept = self
            .memo
            .get_or_try_insert(secret, || inspect(secret, &self.options))?;
        let mut report = SecretReport::clone(&kept);
        report.name = secret.name().map(str::to_owned);
        report.namespace = secret.namespace().map(str::to_owned);
        report.cluster = secret.cluster().map(str::to_owned);
        Ok(report)
    }
}

/// Builds the report of a decoded payload.
pub fn inspect_payload(
    secret: &BootstrapSecret<'_>,
    payload: &Payload<'_>,
    options: &InspectOptions,
) -> SecretReport {
    let mut findings = Vec::new();
    if payload.format_mismatch() {
        findings.push(Finding::new(
            "format-mismatch",
            Severity::Error,
            format!(
                "the `format` key says {:?} but the user data is {}",
                payload.declared_format(),
                payload.format()
            ),
        ));
    }
    if payload.declared_format() == DeclaredFormat::Empty {
        findings.push(Finding::new(
            "format-empty",
            Severity::Warning,
            "the `format` key is empty (the defaulting webhook was bypassed); CAPRKE2 renders cloud-config",
        ));
    }
    let document = match Document::parse(payload) {
        Ok(document) => Some(document),
        Err(e) => {
            findings.push(Finding::new(
                "document-unreadable",
                Severity::Error,
                format!("{e}; files and commands cannot be listed"),
            ));
            None
        }
    };
    let files: &[File] = document.as_ref().map_or(&[], |d| d.files());
    if let Some(document) = &document {
        for p in document.problems() {
            let severity = match p.id {
                "cloud-config-schema" | "cloud-config-duplicate-key" => Severity::Warning,
                "userdata-not-cloud-config" => Severity::Info,
                _ => Severity::Error,
            };
            findings.push(Finding {
                id: p.id,
                severity,
                message: p.message.clone(),
                path: p.path.clone(),
                line: p.at.map(|a| a.line),
                column: p.at.map(|a| a.column),
            });
        }
    }

    let mut redactor = Redactor::default();
    let mut file_reports = Vec::with_capacity(files.len());
    for file in files {
        let sensitive = sensitive::classify(file);
        for value in &sensitive.values {
            redactor.add(value);
        }
        file_reports.push(FileReport {
            path: file.path.clone(),
            mode: file.mode_string(),
            owner: file.owner.clone(),
            size: file.size(),
            sha256: file.sha256(),
            encoding: file.encoding.clone(),
            remote: match &file.content {
                crate::document::Content::Remote(url) => Some(url.clone()),
                _ => None,
            },
            secret: sensitive.what,
        });
    }

    let config_file = document.as_ref().and_then(|d| d.file(rke2::CONFIG_PATH));
    let config = config_file.and_then(|f| match f.text() {
        Some(text) => match Rke2Config::parse(&text) {
            Ok(config) => Some(config),
            Err(e) => {
                findings.push(
                    Finding::new("rke2-config-invalid", Severity::Error, e.to_string())
                        .at_path(rke2::CONFIG_PATH),
                );
                None
            }
        },
        None => None,
    });
    if let Some(config) = &config {
        for secret in config.secrets() {
            redactor.add(secret);
        }
    }
    let commands: &[crate::document::Command] = document.as_ref().map_or(&[], |d| d.commands());
    let install = rke2::install(commands).map(|mut i| {
        i.command = redactor.redact(&i.command);
        i
    });
    let role = document
        .as_ref()
        .and_then(|d| rke2::role(config.as_ref(), install.as_ref(), d));

    let material = pki::scan(files);
    for p in &material.problems {
        findings.push(Finding {
            id: p.id,
            severity: Severity::Warning,
            message: p.message.clone(),
            path: p.path.clone(),
            line: None,
            column: None,
        });
    }

    let rke2 = rke2_report(config.as_ref(), install.as_ref(), options, &redactor);
    SecretReport {
        name: secret.name().map(str::to_owned),
        namespace: secret.namespace().map(str::to_owned),
        cluster: secret.cluster().map(str::to_owned),
        format: payload.format(),
        declared_format: payload.declared_format(),
        gzip: payload.compression().is_gzip(),
        compression: payload.compression(),
        role,
        rke2,
        install,
        certificates: material.certificates,
        keys: material.keys,
        files: file_reports,
        commands: commands
            .iter()
            .map(|c| CommandReport {
                line: redactor.redact(&c.line),
                origin: c.origin.clone(),
            })
            .collect(),
        size: SizeSummary {
            value_bytes: payload.value().len() as u64,
            base64_bytes: secret.base64_len(),
            userdata_bytes: payload.userdata().len() as u64,
        },
        findings,
    }
}

fn rke2_report(
    config: Option<&Rke2Config>,
    install: Option<&Install>,
    options: &InspectOptions,
    redactor: &Redactor,
) -> Rke2Report {
    let show = |s: &Option<SecretString>| {
        options
            .show_secrets
            .then(|| s.as_ref().map(|s| s.expose().to_owned()))
            .flatten()
    };
    let mut report = Rke2Report {
        version: install.and_then(|i| i.version.clone()),
        airgapped: install.is_some_and(|i| i.airgapped),
        ..Rke2Report::default()
    };
    let Some(c) = config else {
        return report;
    };
    report.config_found = true;
    report.server = c.server.clone();
    report.token_sha256 = c.token.as_ref().map(SecretString::sha256);
    report.token = show(&c.token);
    report.token_ca_hash = c
        .token
        .as_ref()
        .and_then(|t| rke2::token_ca_hash(t.expose()))
        .map(str::to_owned);
    report.agent_token_sha256 = c.agent_token.as_ref().map(SecretString::sha256);
    report.agent_token = show(&c.agent_token);
    report.tls_san = c.tls_san.clone();
    report.cni = c.cni.clone();
    report.cluster_cidr = c.cluster_cidr.clone();
    report.service_cidr = c.service_cidr.clone();
    report.node_name = c.node_name.clone();
    report.node_ip = c.node_ip.clone();
    report.node_label = c.node_label.clone();
    report.node_taint = c.node_taint.clone();
    report.kubelet_arg = c.kubelet_arg.iter().map(|a| redactor.redact(a)).collect();
    report.provider_id = c.provider_id().map(str::to_owned);
    report.cloud_provider_name = c.cloud_provider_name.clone();
    report.profile = c.profile.clone();
    report.etcd_s3 = c.etcd_s3.as_ref().map(|s| EtcdS3Report {
        enabled: s.enabled,
        bucket: s.bucket.clone(),
        endpoint: s.endpoint.clone(),
        region: s.region.clone(),
        folder: s.folder.clone(),
        access_key_sha256: s.access_key.as_ref().map(SecretString::sha256),
        secret_key_sha256: s.secret_key.as_ref().map(SecretString::sha256),
    });
    report.datastore_endpoint = if options.show_secrets {
        c.datastore_endpoint.as_ref().map(|s| s.expose().to_owned())
    } else {
        c.datastore_endpoint_redacted()
    };
    for (key, value) in &c.other {
        let value = if sensitive::secret_key_name(key) && !options.show_secrets {
            Value::String(format!(
                "sha256:{}",
                sha256_hex(value.as_str().unwrap_or(&value.to_string()).as_bytes())
            ))
        } else {
            redact_value(value, redactor)
        };
        report.other.insert(key.clone(), value);
    }
    report
}

fn redact_value(value: &Value, redactor: &Redactor) -> Value {
    match value {
        Value::String(s) => Value::String(redactor.redact(s)),
        Value::Array(items) => {
            Value::Array(items.iter().map(|v| redact_value(v, redactor)).collect())
        }
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| (k.clone(), redact_value(v, redactor)))
                .collect(),
        ),
        other => other.clone(),
    }
}
