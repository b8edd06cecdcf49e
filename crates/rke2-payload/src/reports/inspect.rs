//! `inspect`: what a node will do at first boot, as one serialisable report per Secret.
//!
//! # The JSON contract (`rke2-payload/inspect/v1`)
//!
//! [`InspectReport`] serialises to a stable document, and reads back with `Deserialize`. Fields are only ever added within `v1`.
//!
//! ```json
//! {"schema": "rke2-payload/inspect/v1",
//!  "secrets": [{"name", "namespace", "cluster", "format": "cloud-config"|"ignition",
//!               "declared_format", "gzip": bool, "compression": {"kind": …},
//!               "role": "init"|"server"|"agent"|null,
//!               "rke2": {"server", "token_sha256", "tls_san": [..], "version", "airgapped",
//!                        "ingress_controller": [..] (only when set), …},
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

use std::borrow::Cow;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::batch::{self, Memo};
use crate::checks::{Check, Finding};
use crate::codec::digest::sha256_hex;
use crate::document::Content;
use crate::envelope::{BootstrapSecret, Selector, StreamSummary};
use crate::error::{Error, StreamError};
use crate::facts::Facts;
use crate::facts::pki::{Certificate, PrivateKey};
use crate::facts::rke2::{Install, Rke2Config, Role};
use crate::options::DecodeOptions;
use crate::payload::{Compression, DeclaredFormat, Format, Payload};
use crate::sensitive::{self, Redactor, SecretValue};

/// The schema id of the inspect JSON document.
pub const INSPECT_SCHEMA: &str = "rke2-payload/inspect/v1";

/// Switches for [`Inspector`]: built with [`InspectOptions::new`] and its `with_` methods.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct InspectOptions {
    /// Decoding limits.
    pub decode: DecodeOptions,
    /// Include secret values (the token) in the report.
    pub show_secrets: bool,
    /// Show free text (commands) whole as its fingerprint and line count, not word by word.
    pub strict: bool,
}

impl InspectOptions {
    /// The defaults: default limits, no secret shown.
    ///
    /// ```
    /// use rke2_payload::{DecodeOptions, InspectOptions};
    ///
    /// let options = InspectOptions::new()
    ///     .with_decode(DecodeOptions::new().with_max_inflated(1 << 20))
    ///     .with_show_secrets(true);
    /// assert!(options.show_secrets);
    /// ```
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets [`InspectOptions::decode`].
    pub fn with_decode(mut self, decode: DecodeOptions) -> Self {
        self.decode = decode;
        self
    }

    /// Sets [`InspectOptions::show_secrets`].
    pub fn with_show_secrets(mut self, show: bool) -> Self {
        self.show_secrets = show;
        self
    }

    /// Sets [`InspectOptions::strict`].
    pub fn with_strict(mut self, strict: bool) -> Self {
        self.strict = strict;
        self
    }
}

/// The report for a whole input.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[non_exhaustive]
pub struct InspectReport {
    /// Always [`INSPECT_SCHEMA`].
    pub schema: Cow<'static, str>,
    /// One report per bootstrap Secret, in input order.
    pub secrets: Vec<SecretReport>,
    /// Secrets in the input that carry no bootstrap data.
    pub skipped_secrets: usize,
    /// Objects in the input that are not Secrets.
    pub skipped_objects: usize,
}

/// What one bootstrap Secret does: where it is, and the report of its payload.
///
/// In JSON the payload's fields follow the Secret's own (`name`, `namespace`, `cluster`) in one
/// object.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[non_exhaustive]
pub struct SecretReport {
    /// `metadata.name` (null for bare user data).
    pub name: Option<String>,
    /// `metadata.namespace`.
    pub namespace: Option<String>,
    /// The `cluster.x-k8s.io/cluster-name` label.
    pub cluster: Option<String>,
    /// What the payload does; the replicas of a MachineDeployment share one.
    #[serde(flatten)]
    pub payload: Arc<PayloadReport>,
}

/// What one payload does, whatever Secret carries it.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[non_exhaustive]
pub struct PayloadReport {
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

impl PayloadReport {
    /// The finding that says the document could not be read, if it could not.
    pub fn unreadable(&self) -> Option<&Finding> {
        self.findings
            .iter()
            .find(|f| f.check == Check::DocumentUnreadable)
    }
}

/// Facts from `/etc/rancher/rke2/config.yaml` and the install step.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[non_exhaustive]
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
    /// `ingress-controller`: the packaged ingress controllers RKE2 deploys, the first the
    /// default class; omitted when the key is absent or empty (RKE2's default then applies).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ingress_controller: Vec<String>,
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
    /// Every other key, as JSON text of its value; values of secret-looking keys are replaced
    /// by their SHA-256.
    pub other: OtherKeys,
}

/// etcd S3 settings, keys as fingerprints.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[non_exhaustive]
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
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[non_exhaustive]
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
    pub secret: Option<Cow<'static, str>>,
}

/// One command.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[non_exhaustive]
pub struct CommandReport {
    /// The command line, secret values redacted.
    pub line: String,
    /// `runcmd`, `bootcmd`, or the script or unit it comes from.
    pub origin: String,
}

/// Sizes of one Secret.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[non_exhaustive]
pub struct SizeSummary {
    /// Bytes of `data.value`.
    pub value_bytes: u64,
    /// Length of its base64 text in the Secret.
    pub base64_bytes: u64,
    /// Bytes of the final user data (unwrapped, decompressed).
    pub userdata_bytes: u64,
}

/// The keys of `config.yaml` this tool does not read itself, in file order, each with its value
/// as JSON (secret-looking values already replaced by a fingerprint).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(transparent)]
pub struct OtherKeys(Map<String, Value>);

impl OtherKeys {
    /// The keys, in file order.
    pub fn keys(&self) -> impl Iterator<Item = &str> {
        self.0.keys().map(String::as_str)
    }

    /// The value of `key` as JSON text.
    pub fn json(&self, key: &str) -> Option<String> {
        self.0.get(key).map(Value::to_string)
    }

    /// How many keys there are.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// Inspects many Secrets with one set of options, reading each distinct payload once.
///
/// Every replica of a MachineDeployment carries byte-identical user data. An `Inspector` keeps
/// the report of each payload it has read (the last 256 distinct ones) and answers the next
/// Secret whose stored `format` and `value` are the same with the same report under that
/// Secret's name, namespace and cluster: what reading it again makes, for the cost of a hash and a
/// comparison of the stored text. Threads may share one.
///
/// ```
/// use rke2_payload::{DecodeOptions, Envelope, InspectOptions, Inspector};
///
/// let list = br#"{"kind": "List", "items": [
///   {"kind": "Secret", "type": "cluster.x-k8s.io/secret", "metadata": {"name": "md-0-a"},
///    "data": {"format": "Y2xvdWQtY29uZmln", "value": "I2Nsb3VkLWNvbmZpZwpydW5jbWQ6IFtdCg=="}},
///   {"kind": "Secret", "type": "cluster.x-k8s.io/secret", "metadata": {"name": "md-0-b"},
///    "data": {"format": "Y2xvdWQtY29uZmln", "value": "I2Nsb3VkLWNvbmZpZwpydW5jbWQ6IFtdCg=="}}]}"#;
/// let envelope = Envelope::parse(list, &DecodeOptions::default())?;
/// let inspector = Inspector::new(InspectOptions::default());
/// let a = inspector.inspect(&envelope.secrets[0])?; // read
/// let b = inspector.inspect(&envelope.secrets[1])?; // the same bytes: the same report, renamed
/// assert_eq!(b.name.as_deref(), Some("md-0-b"));
/// assert!(std::sync::Arc::ptr_eq(&a.payload, &b.payload));
/// # Ok::<(), rke2_payload::Error>(())
/// ```
#[derive(Debug, Default)]
pub struct Inspector {
    options: InspectOptions,
    /// Reports, for [`Inspector::inspect`].
    reports: Memo<Arc<PayloadReport>>,
    /// JSON, for [`Inspector::inspect_json`]: a run asks for one or the other, and keeps only
    /// what it asks for.
    json: Memo<KeptJson>,
}

/// What [`Inspector::inspect_json`] keeps of one payload. No `Debug` of the JSON: with
/// `show_secrets` it holds them.
struct KeptJson {
    json: Vec<u8>,
    unreadable: Option<Finding>,
}

impl std::fmt::Debug for KeptJson {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KeptJson").finish_non_exhaustive()
    }
}

impl Inspector {
    /// An inspector that reads with `options`.
    pub fn new(options: InspectOptions) -> Self {
        Inspector {
            options,
            reports: Memo::default(),
            json: Memo::default(),
        }
    }

    /// The options it reads with.
    pub fn options(&self) -> &InspectOptions {
        &self.options
    }

    fn report(&self, secret: &BootstrapSecret<'_>) -> Result<PayloadReport, Error> {
        crate::facts::provider::check(secret, None)?;
        let payload = secret.decode(&self.options.decode)?;
        let facts = Facts::read(&payload);
        crate::facts::provider::check(secret, facts.document.as_ref())?;
        Ok(payload_report(secret, &payload, facts, &self.options))
    }

    /// The report of one Secret.
    ///
    /// ```
    /// use rke2_payload::{Envelope, InspectOptions, Inspector};
    ///
    /// let secret = br##"{"kind": "Secret", "metadata": {"name": "w"},
    ///   "stringData": {"format": "cloud-config", "value": "#cloud-config\nruncmd: [reboot]\n"}}"##;
    /// let inspector = Inspector::new(InspectOptions::new());
    /// let envelope = Envelope::parse(secret, &inspector.options().decode)?;
    /// let report = inspector.inspect(&envelope.secrets[0])?;
    /// assert_eq!(report.payload.commands[0].line, "reboot");
    /// # Ok::<(), rke2_payload::Error>(())
    /// ```
    ///
    /// # Errors
    /// When the Secret cannot be decoded ([`BootstrapSecret::decode`]); a payload that fails is
    /// not kept, so each Secret carrying it fails alike.
    pub fn inspect(&self, secret: &BootstrapSecret<'_>) -> Result<SecretReport, Error> {
        let report = self
            .reports
            .get_or_try_insert(secret, || self.report(secret).map(Arc::new))?;
        Ok(SecretReport {
            name: secret.name().map(str::to_owned),
            namespace: secret.namespace().map(str::to_owned),
            cluster: secret.cluster().map(str::to_owned),
            payload: Arc::clone(&report),
        })
    }

    /// The report of one Secret as compact JSON (the `secrets` item of `inspect --output json`,
    /// the same as [`Inspector::inspect`]'s serialised), and the finding that says its document
    /// could not be read, if it could not. The JSON of each distinct payload is written once.
    ///
    /// # Errors
    /// As [`Inspector::inspect`].
    pub fn inspect_json(
        &self,
        secret: &BootstrapSecret<'_>,
    ) -> Result<(Vec<u8>, Option<Finding>), Error> {
        let kept = self.json.get_or_try_insert(secret, || {
            let report = self.report(secret)?;
            Ok::<_, Error>(KeptJson {
                json: batch::json_fields(&report),
                unreadable: report.unreadable().cloned(),
            })
        })?;
        let own = [
            ("name", secret.name()),
            ("namespace", secret.namespace()),
            ("cluster", secret.cluster()),
        ];
        Ok((
            batch::json_object(&own, &kept.json),
            kept.unreadable.clone(),
        ))
    }

    /// Reads every bootstrap Secret of `input` (a reader, or an [`Input`](crate::envelope::Input) of several sources) that `selector` picks on `jobs` threads (0: one
    /// per CPU), calls `work` with this inspector and each Secret on those threads, and `sink`
    /// with each result in input order. A Secret that cannot be read reaches `work` too (its
    /// report fails); the stream goes on.
    ///
    /// # Errors
    /// [`StreamError::Input`] when the input cannot be read, or the selector picks no Secret;
    /// [`StreamError::Sink`] with the error of `sink`, which stops the stream.
    pub fn for_each<'r, T, E>(
        &self,
        input: impl Into<crate::envelope::Input<'r>>,
        selector: &Selector,
        jobs: usize,
        work: impl Fn(&Inspector, &BootstrapSecret<'_>) -> T + Sync,
        sink: impl FnMut(T) -> Result<(), E>,
    ) -> Result<StreamSummary, StreamError<E>>
    where
        T: Send,
    {
        batch::run(
            input,
            &self.options.decode,
            selector,
            jobs,
            |s| work(self, s),
            sink,
        )
    }
}

/// Builds the report of a decoded payload from its facts (taken: the report keeps their parts).
pub(crate) fn payload_report(
    secret: &BootstrapSecret<'_>,
    payload: &Payload<'_>,
    mut facts: Facts,
    options: &InspectOptions,
) -> PayloadReport {
    facts.redactor.set_strict(options.strict);
    let redactor = &facts.redactor;
    let files = facts
        .files()
        .map(|(file, secret)| FileReport {
            path: file.path.clone(),
            mode: file.mode_string(),
            owner: file.owner.clone(),
            size: file.size(),
            sha256: file.sha256(),
            encoding: file.encoding.clone(),
            remote: match &file.content {
                // A remote source's user-info and tokens are the payload's secrets too.
                Content::Remote(url) => Some(shown(redactor, url, options)),
                _ => None,
            },
            secret: secret.map(Cow::Borrowed),
        })
        .collect();
    PayloadReport {
        format: payload.format(),
        declared_format: payload.declared_format(),
        gzip: payload.compression().is_gzip(),
        compression: payload.compression(),
        role: facts.role,
        rke2: rke2_report(
            facts.config.as_ref(),
            facts.install.as_ref(),
            options,
            redactor,
        ),
        install: facts.install.clone(),
        certificates: facts.material.certificates.clone(),
        keys: facts.material.keys.clone(),
        files,
        commands: facts
            .commands()
            .iter()
            .map(|c| CommandReport {
                line: if options.strict && !options.show_secrets {
                    redactor.redact_free(&c.line)
                } else {
                    shown(redactor, &c.line, options)
                },
                origin: c.origin.clone(),
            })
            .collect(),
        size: SizeSummary {
            value_bytes: payload.value().len() as u64,
            base64_bytes: secret.base64_len(),
            userdata_bytes: payload.userdata().len() as u64,
        },
        // Findings quote the payload (a remote source's URL): the same verdicts as lint's.
        findings: facts
            .findings
            .iter()
            .cloned()
            .map(|mut f| {
                if !options.show_secrets {
                    f.message = redactor.redact_all(&f.message);
                }
                f
            })
            .collect(),
    }
}

fn rke2_report(
    config: Option<&Rke2Config>,
    install: Option<&Install>,
    options: &InspectOptions,
    redactor: &Redactor,
) -> Rke2Report {
    let show = |s: &Option<SecretValue>| {
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
    report.server = c.server.as_deref().map(|s| shown(redactor, s, options));
    report.token_sha256 = c.token.as_ref().map(SecretValue::sha256);
    report.token = show(&c.token);
    report.token_ca_hash = c
        .token
        .as_ref()
        .and_then(|t| crate::facts::rke2::token_ca_hash(t.expose()))
        .map(str::to_owned);
    report.agent_token_sha256 = c.agent_token.as_ref().map(SecretValue::sha256);
    report.agent_token = show(&c.agent_token);
    // Every value shown goes through the redactor: a known secret given under another key
    // (`cni: <the token>`) is hidden there too.
    let known = |v: &str| {
        if options.show_secrets {
            v.to_owned()
        } else {
            redactor.redact(v)
        }
    };
    let all = |values: &[String]| -> Vec<String> { values.iter().map(|v| known(v)).collect() };
    let one = |value: &Option<String>| value.as_deref().map(known);
    report.tls_san = all(&c.tls_san);
    report.cni = all(&c.cni);
    report.ingress_controller = all(&c.ingress_controller);
    report.cluster_cidr = one(&c.cluster_cidr);
    report.service_cidr = one(&c.service_cidr);
    report.node_name = one(&c.node_name);
    report.node_ip = all(&c.node_ip);
    report.node_label = c
        .node_label
        .iter()
        .map(|l| shown(redactor, l, options))
        .collect();
    report.node_taint = c
        .node_taint
        .iter()
        .map(|t| shown(redactor, t, options))
        .collect();
    report.kubelet_arg = c
        .kubelet_arg
        .iter()
        .map(|a| shown(redactor, a, options))
        .collect();
    report.provider_id = c.provider_id().map(str::to_owned);
    report.cloud_provider_name = one(&c.cloud_provider_name);
    report.profile = one(&c.profile);
    report.etcd_s3 = c.etcd_s3.as_ref().map(|s| EtcdS3Report {
        enabled: s.enabled,
        bucket: one(&s.bucket),
        endpoint: one(&s.endpoint),
        region: one(&s.region),
        folder: one(&s.folder),
        access_key_sha256: s.access_key.as_ref().map(SecretValue::sha256),
        secret_key_sha256: s.secret_key.as_ref().map(SecretValue::sha256),
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
        report.other.0.insert(key.clone(), value);
    }
    report
}

/// Text from the payload as a report shows it: known secret values hidden, and, unless
/// `show_secrets`, every credential found by its shape as its fingerprint.
fn shown(redactor: &Redactor, text: &str, options: &InspectOptions) -> String {
    if options.show_secrets {
        redactor.redact(text)
    } else {
        redactor.redact_all(text)
    }
}

fn redact_value(value: &Value, redactor: &Redactor) -> Value {
    match value {
        Value::String(s) => Value::String(redactor.redact_all(s)),
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
