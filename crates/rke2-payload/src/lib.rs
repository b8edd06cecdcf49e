//! Decode, inspect, measure, lint, re-encode, convert and redact the bootstrap Secrets that the
//! Cluster API RKE2 bootstrap provider (CAPRKE2) writes for every Machine.
//!
//! A bootstrap Secret holds `data.format` (`cloud-config` or `ignition`) and `data.value`: a
//! cloud-config document, an Ignition 3.x config, raw gzip of a cloud-config, or an Ignition config
//! that wraps a gzipped config in a `data:` URL. This crate reads them layer by layer, each layer
//! importing only those below it (`docs/architecture.md` in the repository is the map):
//!
//! bytes → [`Envelope`] (one Secret, a `List`, several YAML documents, or bare user data) →
//! [`BootstrapSecret`] → [`Payload`] (format, compression, final user data) → the facts of what
//! the node will do → the reports: [`Inspector`], [`Sizer`], [`Linter`], and [`diff`] of two
//! inputs. The inverse path: [`reencode`], [`compress`], [`secret_with_value`], [`convert`],
//! [`redact`]. The preview of the Secrets CAPRKE2 will write for manifests is the crate
//! `rke2-payload-preview`, built on this one: what it needs of this crate is public here
//! (the object reader [`objects`], [`classify`] and [`object_places`]; [`Origin`] and
//! [`BootstrapSecret::new`] to hand its Secrets to the reports; the helpers of [`codec`]).
//!
//! Every report has one shape: `new(options)`, where the options (built with `new()` and
//! `with_` methods, the decoding limits in their `decode`) say everything it needs; one
//! method for one [`BootstrapSecret`] ([`Inspector::inspect`], [`Sizer::measure`],
//! [`Linter::lint`]); one for a stream of them read on several threads
//! ([`Inspector::for_each`], [`Sizer::for_each`], each result in input order, and
//! [`Linter::lint_stream`], one report at the end, as the cluster checks compare every
//! Secret), from an [`Input`]: a reader, several named ones (files, folders through
//! [`input_files`], JSON sequences), or Secrets made in memory.
//!
//! No output of this crate (`Debug`, `Display`, error messages) contains the value of a Secret.
//!
//! # Decode
//!
//! ```
//! use rke2_payload::{DecodeOptions, Envelope, Format, Selector};
//!
//! let secret = br#"
//! apiVersion: v1
//! kind: Secret
//! type: cluster.x-k8s.io/secret
//! metadata: {name: worker-1, namespace: default}
//! data:
//!   format: Y2xvdWQtY29uZmln
//!   value: IyMgdGVtcGxhdGU6IGppbmphCiNjbG91ZC1jb25maWcKcnVuY21kOiBbXQo=
//! "#;
//! let options = DecodeOptions::default();
//! let envelope = Envelope::parse(secret, &options)?;
//! // Pick Secrets as kubectl does: -n, --name, -l, --cluster-name.
//! let selector = Selector::default().with_namespace("default")?.with_name("worker-1")?;
//! let payload = envelope.select(&selector)?.decode(&options)?;
//! assert_eq!(payload.format(), Format::CloudConfig);
//! assert!(payload.userdata().starts_with(b"## template: jinja\n#cloud-config\n"));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Inspect
//!
//! ```
//! use rke2_payload::{Envelope, InspectOptions, Inspector, Role, Selector};
//!
//! let secret = br##"{"kind": "Secret", "metadata": {"name": "md-0-x"}, "stringData": {
//!   "format": "cloud-config",
//!   "value": "#cloud-config\nwrite_files:\n- path: /etc/rancher/rke2/config.yaml\n  content: |\n    server: https://cp.example:9345\n    token: 8c3f2b1d9e7a4c6f\nruncmd:\n- curl -sfL https://get.rke2.io | INSTALL_RKE2_TYPE=agent sh -\n"}}"##;
//! let inspector = Inspector::new(InspectOptions::new());
//! let envelope = Envelope::parse(secret, &inspector.options().decode)?;
//! let report = inspector.inspect(envelope.select(&Selector::default())?)?;
//! assert_eq!(report.payload.role, Some(Role::Agent));
//! assert_eq!(report.payload.rke2.server.as_deref(), Some("https://cp.example:9345"));
//! // The token is a fingerprint unless `show_secrets` is set.
//! assert!(report.payload.rke2.token.is_none() && report.payload.rke2.token_sha256.is_some());
//! # Ok::<(), rke2_payload::Error>(())
//! ```
//!
//! # Size
//!
//! ```
//! use rke2_payload::{Envelope, Selector, SizeOptions, Sizer, Target, find_cloud};
//!
//! let secret = br##"{"kind": "Secret", "metadata": {"name": "w"},
//!   "stringData": {"format": "cloud-config", "value": "#cloud-config\nruncmd: [reboot]\n"}}"##;
//! let aws = find_cloud("aws").expect("a known cloud");
//! let sizer = Sizer::new(SizeOptions::new().with_targets(vec![Target::Cloud(aws)]));
//! let envelope = Envelope::parse(secret, &sizer.options().decode)?;
//! let report = sizer.measure(envelope.select(&Selector::default())?)?;
//! assert!(report.payload.fits());
//! assert_eq!(report.payload.clouds[0].cloud, "aws");
//! # Ok::<(), rke2_payload::Error>(())
//! ```
//!
//! # Lint
//!
//! ```
//! use rke2_payload::{Check, LintOptions, Linter, Selector};
//!
//! let list = br##"{"kind": "List", "items": [{"kind": "Secret", "metadata": {"name": "w"},
//!   "stringData": {"format": "cloud-config", "value": "#cloud-config\nruncmd: [reboot]\n"}}]}"##;
//! let linter = Linter::new(LintOptions::new());
//! let report = linter.lint_stream(&list[..], &Selector::default(), 1)?;
//! assert_eq!(report.secrets[0].findings[0].check, Check::Rke2ConfigMissing);
//! assert_eq!(Check::Rke2ConfigMissing.id(), "rke2-config-missing");
//! # Ok::<(), rke2_payload::LintError>(())
//! ```
//!
//! # Encode, convert, redact
//!
//! ```
//! use rke2_payload::{
//!     DecodeOptions, Envelope, Format, RedactOptions, Selector, compress, convert, redact, reencode,
//! };
//!
//! let secret = br##"{"kind": "Secret", "metadata": {"name": "w"},
//!   "stringData": {"format": "cloud-config", "value": "#cloud-config\nruncmd: [reboot]\n"}}"##;
//! let options = DecodeOptions::default();
//! let envelope = Envelope::parse(secret, &options)?;
//! let payload = envelope.select(&Selector::default())?.decode(&options)?;
//! let gzipped = reencode(&payload, Some(true));
//! assert!(gzipped.starts_with(&[0x1f, 0x8b]));
//! let ignition = convert(&payload, Format::Ignition)?.expect("another format");
//! let wrapped = compress(&ignition, Format::Ignition, true);
//! assert!(wrapped.starts_with(b"{\"ignition\""));
//! let redacted = redact(secret, &RedactOptions::new().with_decode(options))?;
//! assert!(std::str::from_utf8(&redacted).is_ok());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Cargo features
//!
//! - `cloud-init-schema` (on by default): the `lint` check against cloud-init's own JSON
//!   schema ([`CloudInitSchema`]); it brings the `jsonschema` crate and its dependencies.
//! - `fuzzing`: the entry points the fuzz targets call (they panic by design when a property
//!   breaks); not for other use.

#![deny(missing_docs)]

mod batch;
mod checks;
mod clouds;
pub mod codec;
mod document;
mod encode;
mod envelope;
mod error;
mod facts;
mod options;
mod payload;
mod redact;
mod reports;
mod sensitive;
#[cfg(test)]
mod testdata;

#[cfg(any(test, feature = "fuzzing"))]
pub mod fuzzing;

pub use batch::MAX_JOBS;
pub use checks::{
    Check, Finding, IGNORE_CHECK_ANNOTATION_PREFIX, Ignores, ManifestSite, Severity, Suppression,
};
pub use clouds::{
    CLOUDS, CLUSTER_REQUIREMENTS, Cloud, ClusterInfrastructure, ClusterRequirement, Confidence,
    Counted, Delivery, GzipSafety, Handling, PROVIDER_HANDLING, Precondition, ProviderHandling,
    cluster_requirements, delivery_for, delivery_in_cluster, find_cloud, payload_preconditions,
};
pub use codec::dataurl::DataUrlError;
pub use codec::gzip::GzipError;
pub use codec::text::terminal_safe;
pub use document::DocumentError;
pub use encode::convert::{ConvertError, convert};
pub use encode::{compress, reencode, secret_with_value, to_base64};
pub use envelope::{
    BootstrapSecret, CLUSTER_NAME_LABEL, CLUSTER_SECRET_TYPE, Envelope, FINDINGS_ANNOTATION,
    FieldStep, Input, ObjectClass, ObjectPlaces, Origin, Provenance, RENDERED_FROM_ANNOTATION,
    Selector, SelectorError, StreamSummary, classify, for_each_secret, input_files, object_places,
    objects, read_all, read_input,
};
pub use error::{Error, PayloadError, Position, SecretId, SkippedSecret, StreamError, Syntax};
pub use facts::pki::{Certificate, PrivateKey};
pub use facts::rke2::{Install, Role};
pub use options::DecodeOptions;
pub use payload::{Compression, DeclaredFormat, Format, Payload, UserDataKind};
pub use redact::{RedactError, RedactOptions, Refusal, redact, redact_selected};
#[cfg(feature = "cloud-init-schema")]
pub use reports::cloud_init_schema::{
    BUNDLED_CLOUD_INIT_VERSION, CLOUD_INIT_SCHEMA_PATHS, CloudInitSchema, SchemaError,
};
pub use reports::diff::{
    Area, Change, ChangeKind, DIFF_SCHEMA, DiffOptions, DiffReport, Ignore, PairDiff, PairedBy,
    Side, diff,
};
pub use reports::inspect::{
    CommandReport, EtcdS3Report, FileReport, INSPECT_SCHEMA, InspectOptions, InspectReport,
    Inspector, OtherKeys, PayloadReport, Rke2Report, SecretReport, SizeSummary,
};
pub use reports::lint::{
    ItemError, LINT_SCHEMA, LintError, LintOptions, LintReport, LintSummary, LintedSecret, Linter,
    Suppressed,
};
pub use reports::size::{
    Contributor, PayloadSize, SIZE_SCHEMA, SizeDocument, SizeOptions, SizeReport, Sizer, Target,
    Verdict,
};
pub use sensitive::PLACEHOLDER;

/// The README's examples compile.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
