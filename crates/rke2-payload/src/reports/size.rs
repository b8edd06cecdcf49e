//! Size budgets: a payload measured against each platform's user-data limit, on the bytes that
//! platform counts.
//!
//! # The JSON contract (`rke2-payload/size/v1`)
//!
//! ```json
//! {"schema": "rke2-payload/size/v1",
//!  "secrets": [{"name", "namespace", "format", "compression", "value_bytes", "base64_bytes",
//!               "userdata_bytes", "gzip_value_bytes", "gzip_base64_bytes",
//!               "clouds": [{"cloud", "limit_bytes", "counted", "counted_bytes", "budget_bytes",
//!                           "headroom_bytes", "used_percent", "fits", "fits_with_gzip",
//!                           "advice": [..]}],
//!               "contributors": [{"what", "bytes", "percent"}]}],
//!  "fits": bool}
//! ```
//!
//! `counted_bytes` is what the platform counts: the raw bytes of `data.value`, or the length of its
//! base64 text. `budget_bytes` is the limit less the requested headroom; `fits` compares
//! `counted_bytes` with it. `gzip_value_bytes` is what `data.value` would be with CAPRKE2's
//! `gzipUserData: true`, computed by compressing (deflate level 6, Go's default, with libdeflate:
//! within 1.5% (10 bytes on the smallest) of Go's own output on CAPRKE2 payloads, see the gzip tests) and, for
//! Ignition, adding the `config.replace` wrapper around it.

use std::borrow::Cow;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::batch::{self, Memo};
use crate::clouds::{Cloud, Counted, GzipSafety};
use crate::codec::{b64, gzip};
use crate::document::Document;
use crate::envelope::{BootstrapSecret, Selector, StreamSummary};
use crate::error::{Error, StreamError};
use crate::facts::{Facts, pki};
use crate::options::DecodeOptions;
use crate::payload::{Compression, Format, Payload, ignition_gzip_wrapper_len};

/// The schema id of the size JSON document.
pub const SIZE_SCHEMA: &str = "rke2-payload/size/v1";

/// A limit to measure against: a built-in platform, or a budget of the user's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    /// A platform of [`CLOUDS`](crate::clouds::CLOUDS).
    Cloud(&'static Cloud),
    /// `--budget BYTES[:raw|:base64]`.
    Budget {
        /// The limit in bytes.
        limit_bytes: u64,
        /// What it counts.
        counted: Counted,
    },
}

impl Target {
    /// The id shown in reports (`budget` for a custom budget).
    pub fn id(&self) -> &'static str {
        match self {
            Target::Cloud(c) => c.id,
            Target::Budget { .. } => "budget",
        }
    }

    fn limit(&self) -> u64 {
        match self {
            Target::Cloud(c) => c.limit_bytes,
            Target::Budget { limit_bytes, .. } => *limit_bytes,
        }
    }

    fn counted(&self) -> Counted {
        match self {
            Target::Cloud(c) => c.counted,
            Target::Budget { counted, .. } => *counted,
        }
    }

    fn count(&self, value_bytes: u64) -> u64 {
        match self.counted() {
            Counted::Raw => value_bytes,
            _ => b64::encoded_len(value_bytes),
        }
    }
}

/// What to measure against: built with [`SizeOptions::new`] and its `with_` methods.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct SizeOptions {
    /// Decoding limits.
    pub decode: DecodeOptions,
    /// The limits (default: every platform whose limit is verified, [`Cloud::is_verified`]).
    pub targets: Vec<Target>,
    /// Percent of each limit to keep free (0–100).
    pub headroom_percent: f64,
    /// Whether to list the biggest parts of the user data (needs the document parsed).
    pub contributors: bool,
    /// Whether a Secret rendered from manifests is measured against the limit of the path its
    /// infrastructure machine template sends it by (the `delivery` of its
    /// [`RENDERED_FROM_ANNOTATION`](crate::envelope::RENDERED_FROM_ANNOTATION)) instead of
    /// every platform of [`SizeOptions::targets`] (budgets still apply). Off when the user
    /// names the platforms.
    pub follow_delivery: bool,
}

impl Default for SizeOptions {
    fn default() -> Self {
        SizeOptions {
            decode: DecodeOptions::default(),
            targets: crate::clouds::CLOUDS
                .iter()
                .filter(|c| c.is_verified())
                .map(Target::Cloud)
                .collect(),
            headroom_percent: 0.0,
            contributors: true,
            follow_delivery: true,
        }
    }
}

impl SizeOptions {
    /// The defaults: every verified platform, no headroom, contributors listed, a preview's
    /// own delivery path followed.
    ///
    /// ```
    /// use rke2_payload::{SizeOptions, Target, find_cloud};
    ///
    /// let aws = find_cloud("aws").expect("in the table");
    /// let options = SizeOptions::new()
    ///     .with_targets(vec![Target::Cloud(aws)])
    ///     .with_headroom_percent(10.0);
    /// assert_eq!(options.targets.len(), 1);
    /// ```
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets [`SizeOptions::decode`].
    pub fn with_decode(mut self, decode: DecodeOptions) -> Self {
        self.decode = decode;
        self
    }

    /// Sets [`SizeOptions::targets`].
    pub fn with_targets(mut self, targets: Vec<Target>) -> Self {
        self.targets = targets;
        self
    }

    /// Sets [`SizeOptions::headroom_percent`].
    pub fn with_headroom_percent(mut self, percent: f64) -> Self {
        self.headroom_percent = percent;
        self
    }

    /// Sets [`SizeOptions::contributors`].
    pub fn with_contributors(mut self, contributors: bool) -> Self {
        self.contributors = contributors;
        self
    }

    /// Sets [`SizeOptions::follow_delivery`].
    pub fn with_follow_delivery(mut self, follow: bool) -> Self {
        self.follow_delivery = follow;
        self
    }
}

/// The whole `size --output json` document: every Secret's report, and whether all fit.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[non_exhaustive]
pub struct SizeDocument {
    /// Always [`SIZE_SCHEMA`].
    pub schema: Cow<'static, str>,
    /// One report per bootstrap Secret, in input order.
    pub secrets: Vec<SizeReport>,
    /// Whether every Secret fits every target.
    pub fits: bool,
}

/// Sizes of one Secret and its verdict per target: where it is, and the measure of its payload.
///
/// In JSON the payload's fields follow the Secret's own (`name`, `namespace`) in one object.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[non_exhaustive]
pub struct SizeReport {
    /// `metadata.name`.
    pub name: Option<String>,
    /// `metadata.namespace`.
    pub namespace: Option<String>,
    /// The measure of the payload; the replicas of a MachineDeployment share one.
    #[serde(flatten)]
    pub payload: Arc<PayloadSize>,
}

/// The sizes of one payload and its verdict per target, whatever Secret carries it.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[non_exhaustive]
pub struct PayloadSize {
    /// The user data format.
    pub format: Format,
    /// How `data.value` is compressed.
    pub compression: Compression,
    /// Bytes of `data.value`.
    pub value_bytes: u64,
    /// Length of its base64 text in the Secret.
    pub base64_bytes: u64,
    /// Bytes of the final user data.
    pub userdata_bytes: u64,
    /// Bytes `data.value` would have with `gzipUserData: true` (its current size if already so).
    pub gzip_value_bytes: u64,
    /// Length of the base64 text of that.
    pub gzip_base64_bytes: u64,
    /// One verdict per target.
    pub clouds: Vec<Verdict>,
    /// The biggest parts of the user data, largest first (when asked for).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub contributors: Vec<Contributor>,
}

/// The verdict for one target.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[non_exhaustive]
pub struct Verdict {
    /// Platform id, or `budget`.
    pub cloud: Cow<'static, str>,
    /// The platform's limit.
    pub limit_bytes: u64,
    /// What the platform counts.
    pub counted: Counted,
    /// The bytes it counts for this payload.
    pub counted_bytes: u64,
    /// The limit less the headroom asked for.
    pub budget_bytes: u64,
    /// `budget_bytes - counted_bytes` (negative when over).
    pub headroom_bytes: i64,
    /// `counted_bytes` as a percentage of `limit_bytes`.
    pub used_percent: f64,
    /// Whether the payload fits the budget.
    pub fits: bool,
    /// Whether it would fit with `gzipUserData: true` (null when already compressed).
    pub fits_with_gzip: Option<bool>,
    /// What to do about it, where something applies.
    pub advice: Vec<String>,
    /// The path the bootstrap data takes on this platform, which the limit binds: what the
    /// verdict assumes (empty for a budget of the user's).
    #[serde(default)]
    pub path: Cow<'static, str>,
    /// Whether the platform and path were read from the infrastructure machine template of
    /// the manifests the Secret was rendered from, or, for a Secret read from a cluster, from
    /// its Machine's infrastructure object (then [`Verdict::path`] says which).
    #[serde(default)]
    pub chosen_by_manifests: bool,
}

/// A part of the user data and its size.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[non_exhaustive]
pub struct Contributor {
    /// What it is: `certificates and keys (8 PEM files)`, a file path, `commands`, …
    pub what: String,
    /// Decoded bytes.
    pub bytes: u64,
    /// Share of the user data, in percent.
    pub percent: f64,
}

impl PayloadSize {
    /// Whether every verdict fits.
    pub fn fits(&self) -> bool {
        self.clouds.iter().all(|v| v.fits)
    }
}

/// Measures one decoded payload.
pub(crate) fn measure(
    secret: &BootstrapSecret<'_>,
    payload: &Payload<'_>,
    facts: Option<&Facts>,
    options: &SizeOptions,
) -> PayloadSize {
    let value_bytes = payload.value().len() as u64;
    let base64_bytes = secret.base64_len();
    let compressed = payload.compression().is_gzip();
    let gzip_value_bytes = if compressed {
        value_bytes
    } else {
        gzip_size(payload)
    };
    let delivered = delivery_of(secret, options).and_then(|(d, replaces)| {
        Some((crate::clouds::find_cloud(&d.cloud)?, &d.reason, replaces))
    });
    let clouds = match delivered {
        Some((cloud, reason, replaces)) => std::iter::once(verdict(
            &Target::Cloud(cloud),
            payload,
            value_bytes,
            gzip_value_bytes,
            options,
            Some(reason),
        ))
        .chain(
            options
                .targets
                .iter()
                // A preview's own path replaces the platforms; one read from annotations is
                // measured beside them.
                .filter(|t| match t {
                    Target::Budget { .. } => true,
                    Target::Cloud(c) => !replaces && c.id != cloud.id,
                })
                .map(|t| verdict(t, payload, value_bytes, gzip_value_bytes, options, None)),
        )
        .collect(),
        None => options
            .targets
            .iter()
            .map(|target| {
                verdict(
                    target,
                    payload,
                    value_bytes,
                    gzip_value_bytes,
                    options,
                    None,
                )
            })
            .collect(),
    };
    let contributors = if options.contributors {
        match facts {
            Some(facts) => contributors(payload, facts),
            None => contributors(payload, &Facts::read_files(payload)),
        }
    } else {
        Vec::new()
    };
    PayloadSize {
        format: payload.format(),
        compression: payload.compression(),
        value_bytes,
        base64_bytes,
        userdata_bytes: payload.userdata().len() as u64,
        gzip_value_bytes,
        gzip_base64_bytes: b64::encoded_len(gzip_value_bytes),
        clouds,
        contributors,
    }
}

/// Measures many Secrets with one set of options, each distinct payload once.
///
/// Like [`Inspector`](super::inspect::Inspector): the replicas of a MachineDeployment carry
/// byte-identical user data, so a `Sizer` keeps the measure of each payload it measured (the
/// last 256 distinct ones) and answers the next Secret with the same stored `format` and `value`
/// with it under that Secret's name and namespace. The gzip estimate, a compression of the whole
/// user data, is most of what `size` costs. Threads may share one.
///
/// ```
/// use rke2_payload::{DecodeOptions, Envelope, SizeOptions, Sizer};
///
/// let secret = br#"{"kind": "Secret", "type": "cluster.x-k8s.io/secret",
///   "metadata": {"name": "md-0-a"},
///   "data": {"format": "Y2xvdWQtY29uZmln", "value": "I2Nsb3VkLWNvbmZpZwpydW5jbWQ6IFtdCg=="}}"#;
/// let envelope = Envelope::parse(secret, &DecodeOptions::default())?;
/// let sizer = Sizer::new(SizeOptions::new());
/// let report = sizer.measure(&envelope.secrets[0])?;
/// assert_eq!(report.payload.value_bytes, 25);
/// assert!(report.payload.fits());
/// # Ok::<(), rke2_payload::Error>(())
/// ```
#[derive(Debug)]
pub struct Sizer {
    options: SizeOptions,
    /// Measures, for [`Sizer::measure`].
    sizes: Memo<Arc<PayloadSize>>,
    /// JSON and whether it fits, for [`Sizer::measure_json`]: a run asks for one or the other,
    /// and keeps only what it asks for.
    json: Memo<(Vec<u8>, bool)>,
}

impl Sizer {
    /// A sizer that decodes and measures with `options`.
    pub fn new(options: SizeOptions) -> Self {
        Sizer {
            options,
            sizes: Memo::default(),
            json: Memo::default(),
        }
    }

    /// The options it measures against.
    pub fn options(&self) -> &SizeOptions {
        &self.options
    }

    fn size(&self, secret: &BootstrapSecret<'_>) -> Result<PayloadSize, Error> {
        crate::facts::provider::check(secret, None)?;
        let payload = secret.decode(&self.options.decode)?;
        // The document is read for the contributors, or to tell another provider's payload.
        let facts = (self.options.contributors
            || crate::facts::provider::may_be_other(payload.userdata()))
        .then(|| Facts::read_files(&payload));
        let document = facts.as_ref().and_then(|f| f.document.as_ref());
        crate::facts::provider::check(secret, document)?;
        Ok(measure(secret, &payload, facts.as_ref(), &self.options))
    }

    /// The report of one Secret.
    ///
    /// # Errors
    /// When the Secret cannot be decoded (see [`BootstrapSecret::decode`]); a payload that fails
    /// is not kept, so each Secret carrying it fails alike.
    pub fn measure(&self, secret: &BootstrapSecret<'_>) -> Result<SizeReport, Error> {
        // A preview Secret's targets are its own (its delivery path): not shared by payload.
        let size = if delivery_of(secret, &self.options).is_some() {
            Arc::new(self.size(secret)?)
        } else {
            Arc::clone(
                &*self
                    .sizes
                    .get_or_try_insert(secret, || self.size(secret).map(Arc::new))?,
            )
        };
        Ok(SizeReport {
            name: secret.name().map(str::to_owned),
            namespace: secret.namespace().map(str::to_owned),
            payload: Arc::clone(&size),
        })
    }

    /// The report of one Secret as compact JSON (the `secrets` item of `size --output json`, the
    /// same as [`Sizer::measure`]'s serialised), and whether it fits every target. The JSON of
    /// each distinct payload is written once.
    ///
    /// # Errors
    /// As [`Sizer::measure`].
    pub fn measure_json(&self, secret: &BootstrapSecret<'_>) -> Result<(Vec<u8>, bool), Error> {
        let make = || {
            let size = self.size(secret)?;
            Ok::<_, Error>((batch::json_fields(&size), size.fits()))
        };
        let kept = if delivery_of(secret, &self.options).is_some() {
            Arc::new(make()?)
        } else {
            self.json.get_or_try_insert(secret, make)?
        };
        let own = [("name", secret.name()), ("namespace", secret.namespace())];
        Ok((batch::json_object(&own, &kept.0), kept.1))
    }

    /// Reads every bootstrap Secret of `input` (a reader, or an [`Input`](crate::envelope::Input) of several sources) that `selector` picks on `jobs` threads (0: one
    /// per CPU), calls `work` with this sizer and each Secret on those threads, and `sink` with
    /// each result in input order. A Secret that cannot be read reaches `work` too (its
    /// measure fails); the stream goes on.
    ///
    /// # Errors
    /// [`StreamError::Input`] when the input cannot be read, or the selector picks no Secret;
    /// [`StreamError::Sink`] with the error of `sink`, which stops the stream.
    pub fn for_each<'r, T, E>(
        &self,
        input: impl Into<crate::envelope::Input<'r>>,
        selector: &Selector,
        jobs: usize,
        work: impl Fn(&Sizer, &BootstrapSecret<'_>) -> T + Sync,
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

/// What `gzipUserData: true` makes of the user data.
fn gzip_size(payload: &Payload<'_>) -> u64 {
    match payload.format() {
        Format::CloudConfig => gzip::estimated_len(payload.userdata()),
        Format::Ignition => ignition_gzip_wrapper_len(gzip::estimated_len(payload.userdata())),
    }
}

/// The delivery path a Secret's [`Origin`](crate::envelope::Origin) names, when `options`
/// follow it, and whether it replaces the targets (a preview of this run: the manifests say
/// which path the data takes; a Secret read from a cluster: its Machine's infrastructure object
/// says it) or is measured beside them (`render`'s annotations read back:
/// an input never takes a target away).
pub(crate) fn delivery_of<'s>(
    secret: &'s BootstrapSecret<'_>,
    options: &SizeOptions,
) -> Option<(&'s crate::clouds::Delivery, bool)> {
    if !options.follow_delivery {
        return None;
    }
    let origin = secret.origin()?;
    let replaces = matches!(
        origin.provenance,
        crate::envelope::Provenance::Rendered | crate::envelope::Provenance::Live
    );
    origin.delivery.as_ref().map(|d| (d, replaces))
}

fn verdict(
    target: &Target,
    payload: &Payload<'_>,
    value_bytes: u64,
    gzip_value_bytes: u64,
    options: &SizeOptions,
    chosen_by: Option<&str>,
) -> Verdict {
    let limit = target.limit();
    let counted = target.count(value_bytes);
    let keep = options.headroom_percent.clamp(0.0, 100.0);
    let budget = ((limit as f64) * (100.0 - keep) / 100.0).floor() as u64;
    let fits = counted <= budget;
    let compressed = payload.compression().is_gzip();
    let fits_with_gzip = (!compressed).then(|| target.count(gzip_value_bytes) <= budget);
    let mut advice = Vec::new();
    let gzip_safety = match target {
        Target::Cloud(c) => match payload.format() {
            Format::CloudConfig => c.gzip_cloud_config,
            Format::Ignition => c.gzip_ignition,
        },
        Target::Budget { .. } => GzipSafety::Unknown,
    };
    if !fits {
        match (fits_with_gzip, gzip_safety) {
            (Some(true), GzipSafety::Unsafe) => advice.push(
                "gzip would make it fit, but gzip is not safe on this platform (it carries user data as text)"
                    .to_owned(),
            ),
            (Some(true), _) => advice.push("fits with gzipUserData: true".to_owned()),
            (Some(false), _) => advice.push(
                "too large even with gzipUserData: true; move files out of the payload (CA Secrets, manifests) or use the provider's offload"
                    .to_owned(),
            ),
            (None, _) => advice.push(
                "already compressed; move content out of the payload or use the provider's offload"
                    .to_owned(),
            ),
        }
    }
    if let Target::Cloud(cloud) = target
        && payload.compression() == Compression::Gzip
    {
        if cloud.gzip_cloud_config == GzipSafety::Unsafe {
            advice.push(
                "gzip is not safe on this platform: it sends user data as text, which corrupts gzip bytes"
                    .to_owned(),
            );
        }
        if cloud.provider_gzips {
            advice.push(
                "already gzip: a second gzip by the provider would break it (cloud-init undoes one layer); disable the provider's compression"
                    .to_owned(),
            );
        }
    }
    Verdict {
        cloud: Cow::Borrowed(target.id()),
        limit_bytes: limit,
        counted: target.counted(),
        counted_bytes: counted,
        budget_bytes: budget,
        headroom_bytes: i64::try_from(budget).unwrap_or(i64::MAX)
            - i64::try_from(counted).unwrap_or(i64::MAX),
        used_percent: if limit == 0 {
            f64::INFINITY
        } else {
            (counted as f64) * 100.0 / (limit as f64)
        },
        fits,
        fits_with_gzip,
        advice,
        // The table's own sentence is borrowed: 17 verdicts a payload, each written once.
        path: match (chosen_by, target) {
            (Some(reason), _) => Cow::Owned(reason.to_owned()),
            (None, Target::Cloud(c)) => Cow::Borrowed(c.path),
            (None, Target::Budget { .. }) => Cow::Borrowed(""),
        },
        chosen_by_manifests: chosen_by.is_some(),
    }
}

/// The biggest parts of the user data: PEM material together, each file of 256 bytes or more,
/// the commands, and the rest.
fn contributors(payload: &Payload<'_>, facts: &Facts) -> Vec<Contributor> {
    let Some(document) = &facts.document else {
        return Vec::new();
    };
    let total = payload.userdata().len() as u64;
    let percent = |bytes: u64| {
        if total == 0 {
            0.0
        } else {
            (bytes as f64) * 100.0 / (total as f64)
        }
    };
    let mut parts: Vec<(String, u64)> = Vec::new();
    let (mut pem_files, mut pem_bytes) = (0u64, 0u64);
    let mut small = 0u64;
    for (file, secret) in facts.files() {
        let is_pem = file
            .bytes()
            .is_some_and(|b| b.windows(11).any(|w| w == b"-----BEGIN "))
            && (pki::purpose(&file.path).is_some()
                || secret == Some("private key")
                || file.path.ends_with(".crt"));
        if is_pem {
            pem_files += 1;
            pem_bytes += file.size();
        } else if file.size() >= 256 {
            parts.push((file.path.clone(), file.size()));
        } else {
            small += file.size();
        }
    }
    if pem_files > 0 {
        parts.push((
            format!("certificates and keys ({pem_files} PEM files)"),
            pem_bytes,
        ));
    }
    if small > 0 {
        parts.push(("smaller files".to_owned(), small));
    }
    // Ignition commands live in a script file, already counted.
    let commands: u64 = match document {
        Document::CloudConfig(_) => document
            .commands()
            .iter()
            .map(|c| c.line.len() as u64 + 1)
            .sum(),
        _ => 0,
    };
    if commands > 0 {
        parts.push(("commands".to_owned(), commands));
    }
    parts.sort_by_key(|p| std::cmp::Reverse(p.1));
    parts
        .into_iter()
        .map(|(what, bytes)| Contributor {
            what,
            bytes,
            percent: percent(bytes),
        })
        .collect()
}

#[cfg(test)]
mod tests {

    /// The fixtures' copies in this crate (`tests/data/`, see `crate::testdata`).
    fn testdata() -> std::path::PathBuf {
        crate::testdata::crate_data()
    }

    fn single_fixtures() -> Vec<serde_json::Value> {
        let text = std::fs::read_to_string(testdata().join("secrets/INDEX.json")).expect("index");
        let all: Vec<serde_json::Value> = serde_json::from_str(&text).expect("index is JSON");
        all.into_iter().filter(|e| e["kind"] == "Secret").collect()
    }

    /// The gzip estimate `size` reports, against what Go's `compress/gzip` (CAPRKE2's encoder) made of
    /// the same user data: `testdata/go-gzip-sizes.json`, written by `testdata/gen/gogzip`.
    #[test]
    fn the_gzip_estimate_is_within_one_and_a_half_percent_of_go() {
        let text =
            std::fs::read_to_string(testdata().join("go-gzip-sizes.json")).expect("go sizes");
        let go: serde_json::Value = serde_json::from_str(&text).expect("JSON");
        let sizes: std::collections::HashMap<&str, u64> = go["sizes"]
            .as_array()
            .expect("sizes")
            .iter()
            .map(|e| {
                (
                    e["sha256"].as_str().expect("sha"),
                    e["gzip_bytes"].as_u64().expect("n"),
                )
            })
            .collect();
        let options = DecodeOptions::default();
        let mut compared = 0;
        for entry in single_fixtures() {
            let file = entry["file"].as_str().expect("file");
            let input = std::fs::read(testdata().join("secrets").join(file)).expect(file);
            let envelope = crate::envelope::Envelope::parse(&input, &options).expect(file);
            let payload = envelope.secrets[0].decode(&options).expect(file);
            let sha = crate::codec::digest::sha256_hex(payload.userdata());
            let Some(&want) = sizes.get(sha.as_str()) else {
                panic!(
                    "{file}: no Go figure for its user data; rerun `go run testdata/gen/gogzip/main.go` (its header says how)"
                );
            };
            let got = gzip::estimated_len(payload.userdata());
            let off = (got as f64 - want as f64).abs() / want as f64;
            // Payloads under 1 KB compress to a few hundred bytes, where a few bytes are over 1.5%.
            assert!(
                off <= 0.015 || got.abs_diff(want) <= 10,
                "{file}: estimate {got}, Go {want} ({:.2}%)",
                off * 100.0
            );
            compared += 1;
        }
        assert!(compared >= 30, "{compared}");
    }
    use super::*;
    use crate::clouds;

    fn secret(value: &[u8]) -> crate::envelope::Envelope<'_> {
        crate::envelope::Envelope::parse(value, &DecodeOptions::default()).unwrap()
    }

    #[test]
    fn counts_raw_and_base64_as_each_platform_does() {
        // 16,384 bytes of cloud-config: exactly AWS's limit; OpenStack counts 21,848.
        let mut text = b"#cloud-config\nruncmd: []\n".to_vec();
        text.resize(16_384, b'#');
        let env = secret(&text);
        let payload = env.secrets[0].decode(&DecodeOptions::default()).unwrap();
        let options = SizeOptions {
            targets: vec![
                Target::Cloud(clouds::find_cloud("aws-user-data").unwrap()),
                Target::Cloud(clouds::find_cloud("openstack").unwrap()),
            ],
            headroom_percent: 0.0,
            contributors: false,
            follow_delivery: true,
            decode: DecodeOptions::default(),
        };
        let report = measure(&env.secrets[0], &payload, None, &options);
        assert_eq!(report.value_bytes, 16_384);
        assert_eq!(report.base64_bytes, 21_848);
        let aws = &report.clouds[0];
        assert_eq!(
            (aws.counted_bytes, aws.fits, aws.headroom_bytes),
            (16_384, true, 0)
        );
        let os = &report.clouds[1];
        assert_eq!((os.counted_bytes, os.fits), (21_848, true));
        assert!(report.gzip_value_bytes < 200, "{}", report.gzip_value_bytes);

        text.push(b'#');
        let env = secret(&text);
        let payload = env.secrets[0].decode(&DecodeOptions::default()).unwrap();
        let report = measure(&env.secrets[0], &payload, None, &options);
        assert!(!report.clouds[0].fits);
        assert_eq!(report.clouds[0].headroom_bytes, -1);
        assert_eq!(report.clouds[0].fits_with_gzip, Some(true));
        assert_eq!(report.clouds[0].advice, ["fits with gzipUserData: true"]);
    }

    #[test]
    fn headroom_and_custom_budgets() {
        let text = b"#cloud-config\nruncmd: []\n".repeat(40); // 1,000 bytes
        let env = secret(&text);
        let payload = env.secrets[0].decode(&DecodeOptions::default()).unwrap();
        let options = SizeOptions {
            targets: vec![Target::Budget {
                limit_bytes: 1_100,
                counted: Counted::Raw,
            }],
            headroom_percent: 10.0,
            contributors: false,
            follow_delivery: true,
            decode: DecodeOptions::default(),
        };
        let report = measure(&env.secrets[0], &payload, None, &options);
        let v = &report.clouds[0];
        assert_eq!(v.cloud, "budget");
        assert_eq!(v.budget_bytes, 990);
        assert!(!v.fits);
        let options = SizeOptions {
            headroom_percent: 5.0,
            ..options
        };
        assert!(measure(&env.secrets[0], &payload, None, &options).clouds[0].fits);
    }
}
