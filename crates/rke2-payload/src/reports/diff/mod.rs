//! `diff`: what changed between two sets of bootstrap Secrets, said as facts: format and
//! compression, role, server, tls-san, version and install step, every `config.yaml` key,
//! files, commands, certificates, every other setting of the user data (`settings`) and the
//! size per cloud. Secret values are compared by fingerprint only; text is diffed with every
//! known secret value masked.
//!
//! Secrets are paired by namespace and name, else by cluster and role (the one with the same
//! content first), else (one left on each side) with each other; each pair says how it was made.

mod settings;

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::clouds::{CLOUDS, Counted};
use crate::document::{Content, File};
use crate::envelope::{BootstrapSecret, Envelope};
use crate::error::Error;
use crate::facts::{Facts, rke2};
use crate::options::DecodeOptions;
use crate::payload::Payload;
use crate::sensitive::Redactor;

/// The schema id of `diff -o json`.
pub const DIFF_SCHEMA: &str = "rke2-payload/diff/v1";

/// What a diff leaves out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum Ignore {
    /// The join token (and `agent-token`): every new cluster has a fresh one.
    Token,
    /// The CA certificates and keys: every new cluster has fresh ones.
    Ca,
}

impl Ignore {
    /// `token` or `ca`.
    pub fn from_id(id: &str) -> Option<Ignore> {
        match id {
            "token" => Some(Ignore::Token),
            "ca" => Some(Ignore::Ca),
            _ => None,
        }
    }
}

/// Options of a diff: built with [`DiffOptions::new`] and its `with_` methods.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct DiffOptions {
    /// Limits for reading both inputs.
    pub decode: DecodeOptions,
    /// What to leave out.
    pub ignore: Vec<Ignore>,
    /// Show free text (commands, lines of files) whole as its fingerprint and line count, not
    /// word by word.
    pub strict: bool,
}

impl DiffOptions {
    /// The defaults: default limits, nothing left out.
    ///
    /// ```
    /// use rke2_payload::{DiffOptions, Ignore};
    ///
    /// let options = DiffOptions::new().with_ignore(vec![Ignore::Token, Ignore::Ca]);
    /// assert_eq!(options.ignore.len(), 2);
    /// ```
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets [`DiffOptions::decode`].
    pub fn with_decode(mut self, decode: DecodeOptions) -> Self {
        self.decode = decode;
        self
    }

    /// Sets [`DiffOptions::ignore`].
    pub fn with_ignore(mut self, ignore: Vec<Ignore>) -> Self {
        self.ignore = ignore;
        self
    }

    /// Sets [`DiffOptions::strict`].
    pub fn with_strict(mut self, strict: bool) -> Self {
        self.strict = strict;
        self
    }
}

/// What a [`Change`] is about. In JSON: its id, in kebab case (`tls-san`, `format-key`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum Area {
    /// The payload's format (cloud-config or Ignition).
    Format,
    /// What the Secret's `format` key says.
    FormatKey,
    /// How the value is compressed or wrapped.
    Compression,
    /// The node's role (`init`, `server`, `agent`).
    Role,
    /// The join server.
    Server,
    /// One `tls-san` entry.
    TlsSan,
    /// The RKE2 version installed.
    Version,
    /// The install step.
    Install,
    /// The join token or agent token (by fingerprint).
    Token,
    /// A `config.yaml` key.
    Config,
    /// A file of the user data.
    File,
    /// A command.
    Command,
    /// A certificate.
    Certificate,
    /// Any other key of the user data.
    Setting,
    /// The size against one cloud's limit.
    Size,
}

impl Area {
    /// The id, as in JSON: `format`, `format-key`, `tls-san`, ….
    pub fn as_str(self) -> &'static str {
        match self {
            Area::Format => "format",
            Area::FormatKey => "format-key",
            Area::Compression => "compression",
            Area::Role => "role",
            Area::Server => "server",
            Area::TlsSan => "tls-san",
            Area::Version => "version",
            Area::Install => "install",
            Area::Token => "token",
            Area::Config => "config",
            Area::File => "file",
            Area::Command => "command",
            Area::Certificate => "certificate",
            Area::Setting => "setting",
            Area::Size => "size",
        }
    }
}

impl std::fmt::Display for Area {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// How a [`Change`] changed. In JSON: `added`, `removed`, `changed` or `reordered`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum ChangeKind {
    /// Only after.
    Added,
    /// Only before.
    Removed,
    /// On both sides, different.
    Changed,
    /// The same items in another order (commands).
    Reordered,
}

impl ChangeKind {
    /// `added`, `removed`, `changed` or `reordered`.
    pub fn as_str(self) -> &'static str {
        match self {
            ChangeKind::Added => "added",
            ChangeKind::Removed => "removed",
            ChangeKind::Changed => "changed",
            ChangeKind::Reordered => "reordered",
        }
    }
}

impl std::fmt::Display for ChangeKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// How the two Secrets of a [`PairDiff`] were paired. In JSON: `name`, `cluster and role`,
/// `only Secrets` or `order`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[non_exhaustive]
pub enum PairedBy {
    /// The same namespace and name.
    #[serde(rename = "name")]
    Name,
    /// The same cluster and role (the one with the same content first).
    #[serde(rename = "cluster and role")]
    ClusterAndRole,
    /// One Secret left on each side.
    #[serde(rename = "only Secrets")]
    OnlySecrets,
    /// As many nameless ones left on each side, in order.
    #[serde(rename = "order")]
    Order,
}

impl PairedBy {
    /// `name`, `cluster and role`, `only Secrets` or `order`.
    pub fn as_str(self) -> &'static str {
        match self {
            PairedBy::Name => "name",
            PairedBy::ClusterAndRole => "cluster and role",
            PairedBy::OnlySecrets => "only Secrets",
            PairedBy::Order => "order",
        }
    }
}

impl std::fmt::Display for PairedBy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One difference.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[non_exhaustive]
pub struct Change {
    /// What it is about.
    pub area: Area,
    /// Which one: the config key, file path, certificate path, cloud id, the setting's key path
    /// (`ntp.servers`, `users[ops].groups`; empty for the single-valued areas).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub item: String,
    /// How it changed.
    pub kind: ChangeKind,
    /// The value before (never a secret value: a fingerprint instead).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub before: Option<String>,
    /// The value after.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after: Option<String>,
    /// A unified diff of a text file's content (secret values masked), or a note.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
}

/// One side of a pair.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[non_exhaustive]
pub struct Side {
    /// `metadata.name`.
    pub name: Option<String>,
    /// `metadata.namespace`.
    pub namespace: Option<String>,
    /// The cluster-name label.
    pub cluster: Option<String>,
    /// `init`, `server` or `agent`.
    pub role: Option<String>,
}

/// Two Secrets compared.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[non_exhaustive]
pub struct PairDiff {
    /// The Secret of the first input.
    pub before: Side,
    /// The Secret of the second input.
    pub after: Side,
    /// How the two were paired.
    pub paired_by: PairedBy,
    /// What differs (empty: nothing, after the ignores).
    pub changes: Vec<Change>,
}

/// The diff of two inputs.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[non_exhaustive]
pub struct DiffReport {
    /// [`DIFF_SCHEMA`].
    pub schema: Cow<'static, str>,
    /// The pairs, in the first input's order.
    pub pairs: Vec<PairDiff>,
    /// Secrets of the first input with no partner.
    pub only_before: Vec<Side>,
    /// Secrets of the second input with no partner.
    pub only_after: Vec<Side>,
    /// What was left out.
    pub ignored: Vec<Ignore>,
}

impl DiffReport {
    /// Whether anything differs: a change in a pair, or a Secret on one side only.
    pub fn differs(&self) -> bool {
        !self.only_before.is_empty()
            || !self.only_after.is_empty()
            || self.pairs.iter().any(|p| !p.changes.is_empty())
    }
}

/// What one Secret is, for the comparison.
struct Read {
    side: Side,
    facts: Facts,
    /// `data.value` bytes.
    value_bytes: u64,
    /// Bytes of the CA material in the user data (the files at the CA paths).
    ca_bytes: u64,
    /// Whether `data.value` is the user data as it is (no gzip, no Ignition wrapper).
    plain: bool,
    format: String,
    /// The `format` key as stored (`None`: no such key).
    declared: Option<String>,
    compression: String,
    config: serde_json::Map<String, Value>,
    /// The user data as a tree, less what the other areas compare.
    tree: Option<Value>,
    /// SHA-256 of `data.value`, to pair Secrets whose content is the same.
    value_sha: String,
}

fn read_all(input: &[u8], options: &DiffOptions) -> Result<Vec<Read>, Error> {
    let envelope = Envelope::parse(input, &options.decode)?;
    let mut out = Vec::new();
    for secret in &envelope.secrets {
        out.push(read_one(secret, options)?);
    }
    Ok(out)
}

fn read_one(secret: &BootstrapSecret<'_>, options: &DiffOptions) -> Result<Read, Error> {
    let payload: Payload<'_> = secret.decode(&options.decode)?;
    let mut facts = Facts::read(&payload);
    facts.redactor.set_strict(options.strict);
    let config = facts
        .document
        .as_ref()
        .and_then(|d| d.file(rke2::CONFIG_PATH))
        .and_then(File::text)
        .and_then(|t| rke2::fast_map(&t).or_else(|| rke2::full_map(&t)))
        .unwrap_or_default();
    let ca_bytes = facts
        .files()
        .filter(|(f, _)| crate::facts::pki::purpose(&f.path).is_some())
        .filter_map(|(f, _)| f.bytes().map(|b| b.len() as u64))
        .sum();
    Ok(Read {
        ca_bytes,
        plain: payload.compression() == crate::payload::Compression::None
            && payload.format() == crate::payload::Format::CloudConfig,
        side: Side {
            name: secret.name().map(str::to_owned),
            namespace: secret.namespace().map(str::to_owned),
            cluster: secret.cluster().map(str::to_owned),
            role: facts.role.map(|r| r.as_str().to_owned()),
        },
        format: payload.format().as_str().to_owned(),
        declared: secret
            .format_key()
            .ok()
            .flatten()
            .map(|f| crate::codec::text::shorten(&f, 64)),
        compression: compression_name(payload.compression()),
        value_bytes: payload.value().len() as u64,
        value_sha: crate::codec::digest::sha256_hex(payload.value()),
        tree: settings::tree(&payload),
        config,
        facts,
    })
}

fn compression_name(c: crate::payload::Compression) -> String {
    match c {
        crate::payload::Compression::None => "none".to_owned(),
        crate::payload::Compression::Gzip => "gzip".to_owned(),
        crate::payload::Compression::IgnitionWrapper { gzip: true } => {
            "gzip in an Ignition wrapper".to_owned()
        }
        crate::payload::Compression::IgnitionWrapper { gzip: false } => {
            "an Ignition wrapper".to_owned()
        }
    }
}

/// Indices of one side's Secrets by a key, each list in input order, with how far the taken
/// ones at its front were skipped: finding the first one not taken costs, over a whole
/// pairing, time linear in the Secrets.
struct Queues<K>(HashMap<K, (Vec<usize>, usize)>);

impl<K> Default for Queues<K> {
    fn default() -> Self {
        Queues(HashMap::new())
    }
}

impl<K: std::hash::Hash + Eq> Queues<K> {
    fn push(&mut self, key: K, index: usize) {
        self.0.entry(key).or_default().0.push(index);
    }

    /// The first index under `key` not `taken` (taken ones are never given back).
    fn first_open(&mut self, key: K, taken: &[bool]) -> Option<usize> {
        let (list, skipped) = self.0.get_mut(&key)?;
        while list.get(*skipped).is_some_and(|&j| taken[j]) {
            *skipped += 1;
        }
        list.get(*skipped).copied()
    }
}

/// Compares the bootstrap Secrets of two inputs.
///
/// ```
/// use rke2_payload::{Area, ChangeKind, DiffOptions, diff};
///
/// let a = br##"{"kind": "Secret", "metadata": {"name": "w", "namespace": "capi"},
///   "stringData": {"format": "cloud-config", "value": "#cloud-config\nruncmd: [reboot]\n"}}"##;
/// let b = br##"{"kind": "Secret", "metadata": {"name": "w", "namespace": "capi"},
///   "stringData": {"format": "cloud-config", "value": "#cloud-config\nruncmd: [reboot, 'echo done']\n"}}"##;
/// let report = diff(a, b, &DiffOptions::default())?;
/// assert!(report.differs());
/// let change = &report.pairs[0].changes[0];
/// assert_eq!((change.area, change.kind), (Area::Command, ChangeKind::Added));
/// assert_eq!(change.after.as_deref(), Some("echo done"));
/// assert!(!diff(a, a, &DiffOptions::default())?.differs());
/// # Ok::<(), rke2_payload::Error>(())
/// ```
///
/// # Errors
/// [`Error`] when either input cannot be read or a Secret's value cannot be decoded.
pub fn diff(before: &[u8], after: &[u8], options: &DiffOptions) -> Result<DiffReport, Error> {
    let left = read_all(before, options)?;
    let right = read_all(after, options)?;
    let mut taken = vec![false; right.len()];
    let mut pairs: Vec<(usize, usize, PairedBy)> = Vec::new();
    let mut left_open: Vec<usize> = Vec::new();
    // The right side's Secrets by name and namespace, each list in input order: the first not
    // taken is the pair.
    let mut by_name: Queues<(&str, Option<&str>)> = Queues::default();
    for (j, r) in right.iter().enumerate() {
        if let Some(name) = r.side.name.as_deref() {
            by_name.push((name, r.side.namespace.as_deref()), j);
        }
    }
    for (i, l) in left.iter().enumerate() {
        let found = l
            .side
            .name
            .as_deref()
            .and_then(|name| by_name.first_open((name, l.side.namespace.as_deref()), &taken));
        match found {
            Some(j) => {
                taken[j] = true;
                pairs.push((i, j, PairedBy::Name));
            }
            None => left_open.push(i),
        }
    }
    // Then by cluster and role; of several, the one with the same content first.
    let mut by_role: Queues<(Option<&str>, &str)> = Queues::default();
    let mut by_content: Queues<(Option<&str>, &str, &str)> = Queues::default();
    for (j, r) in right.iter().enumerate() {
        if let Some(role) = r.side.role.as_deref() {
            let cluster = r.side.cluster.as_deref();
            by_role.push((cluster, role), j);
            by_content.push((cluster, role, r.value_sha.as_str()), j);
        }
    }
    let mut still_open = Vec::new();
    for i in left_open {
        let l = &left[i];
        let found = l.side.role.as_deref().and_then(|role| {
            let cluster = l.side.cluster.as_deref();
            by_content
                .first_open((cluster, role, l.value_sha.as_str()), &taken)
                .or_else(|| by_role.first_open((cluster, role), &taken))
        });
        match found {
            Some(j) => {
                taken[j] = true;
                pairs.push((i, j, PairedBy::ClusterAndRole));
            }
            None => still_open.push(i),
        }
    }
    let right_open: Vec<usize> = (0..right.len()).filter(|&j| !taken[j]).collect();
    let unnamed = |reads: &[Read], at: &[usize]| at.iter().all(|&k| reads[k].side.name.is_none());
    let (only_before, only_after) = if still_open.len() == 1 && right_open.len() == 1 {
        pairs.push((still_open[0], right_open[0], PairedBy::OnlySecrets));
        (Vec::new(), Vec::new())
    } else if !still_open.is_empty()
        && still_open.len() == right_open.len()
        && unnamed(&left, &still_open)
        && unnamed(&right, &right_open)
    {
        // Nameless on both sides (user data documents), as many each: in their order.
        for (&i, &j) in still_open.iter().zip(&right_open) {
            pairs.push((i, j, PairedBy::Order));
        }
        (Vec::new(), Vec::new())
    } else {
        (
            still_open.iter().map(|&i| left[i].side.clone()).collect(),
            right_open.iter().map(|&j| right[j].side.clone()).collect(),
        )
    };
    pairs.sort_by_key(|p| p.0);
    let pairs = pairs
        .into_iter()
        .map(|(i, j, how)| PairDiff {
            before: left[i].side.clone(),
            after: right[j].side.clone(),
            paired_by: how,
            changes: compare(&left[i], &right[j], &options.ignore),
        })
        .collect();
    Ok(DiffReport {
        schema: Cow::Borrowed(DIFF_SCHEMA),
        pairs,
        only_before,
        only_after,
        ignored: options.ignore.clone(),
    })
}

fn change(
    area: Area,
    item: impl Into<String>,
    kind: ChangeKind,
    before: Option<String>,
    after: Option<String>,
) -> Change {
    Change {
        area,
        item: item.into(),
        kind,
        before,
        after,
        detail: None,
    }
}

fn scalar(area: Area, before: Option<String>, after: Option<String>, out: &mut Vec<Change>) {
    let kind = match (&before, &after) {
        (a, b) if a == b => return,
        (None, Some(_)) => ChangeKind::Added,
        (Some(_), None) => ChangeKind::Removed,
        _ => ChangeKind::Changed,
    };
    out.push(change(area, "", kind, before, after));
}

/// What both sides know as secret, hidden the same way in both sides' text: the known values of
/// either side by the placeholder, then credentials found by their shape by their fingerprint.
pub(super) struct Mask {
    /// Both sides' known values, longest first (a value that contains another is hidden whole).
    known: Redactor,
    shapes: Redactor,
}

impl Mask {
    fn new(l: &Read, r: &Read) -> Self {
        Mask {
            known: l.facts.redactor.merged(&r.facts.redactor),
            shapes: Redactor::default(),
        }
    }

    /// Free text (a file, an unknown setting): strict, whole as its fingerprint.
    pub(super) fn text(&self, text: &str) -> String {
        if self.known.strict() {
            return self.known.redact_free(text);
        }
        self.value(text)
    }

    /// A value of known structure (a `config.yaml` key's): word by word, strict or not.
    pub(super) fn value(&self, text: &str) -> String {
        self.shapes.redact_all(&self.known.redact(text))
    }

    /// Whether `text` is, whole, a secret value either side knows.
    pub(super) fn knows(&self, text: &str) -> bool {
        self.known.knows(text)
    }
}

/// A short fingerprint of a secret value (never the value).
fn fingerprint(bytes: &[u8]) -> String {
    format!("sha256:{}", &crate::codec::digest::sha256_hex(bytes)[..16])
}

/// The config keys reported in their own areas.
const OWN_AREAS: &[&str] = &["server", "tls-san", "token", "agent-token"];

fn value_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Array(items) => items.iter().map(value_text).collect::<Vec<_>>().join(", "),
        other => other.to_string(),
    }
}

fn compare(l: &Read, r: &Read, ignore: &[Ignore]) -> Vec<Change> {
    let mut out = Vec::new();
    let ignore_token = ignore.contains(&Ignore::Token);
    let ignore_ca = ignore.contains(&Ignore::Ca);
    let mask = Mask::new(l, r);
    identity(l, r, &mut out);
    install_step(l, r, &mut out);
    if !ignore_token {
        token_changes(l, r, &mut out);
    }
    config_keys(l, r, &mask, &mut out);
    // Under `--ignore token`, each token of the first side stands for the second's.
    let same = if ignore_token {
        tokens(l, r)
    } else {
        Vec::new()
    };
    files(l, r, ignore_ca, &same, &mask, &mut out);
    commands(l, r, &mut out);
    certificates(l, r, ignore_ca, &mut out);
    // Everything else the user data says, where both are of one format (across formats the
    // trees have nothing in common: the facts above are what compares).
    if let (Some(a), Some(b)) = (&l.tree, &r.tree)
        && l.format == r.format
    {
        settings::settings(a, b, &same, &mask, &mut out);
    }
    sizes(l, r, ignore_ca, &mut out);
    out
}

/// Format, compression, role, join server and tls-san.
fn identity(l: &Read, r: &Read, out: &mut Vec<Change>) {
    scalar(
        Area::Format,
        Some(l.format.clone()),
        Some(r.format.clone()),
        out,
    );
    // What the `format` key says (the infrastructure provider reads it), apart from the content.
    scalar(Area::FormatKey, l.declared.clone(), r.declared.clone(), out);
    scalar(
        Area::Compression,
        Some(l.compression.clone()),
        Some(r.compression.clone()),
        out,
    );
    scalar(Area::Role, l.side.role.clone(), r.side.role.clone(), out);
    let (lc, rc) = (l.facts.config.as_ref(), r.facts.config.as_ref());
    // The server as every other fact line shows it: its password and tokens masked.
    scalar(
        Area::Server,
        lc.and_then(|c| c.server.as_deref().map(|s| l.facts.redactor.redact_all(s))),
        rc.and_then(|c| c.server.as_deref().map(|s| r.facts.redactor.redact_all(s))),
        out,
    );
    // tls-san: entries added and removed.
    let (ls, rs): (&[String], &[String]) = (
        lc.map_or(&[], |c| &c.tls_san),
        rc.map_or(&[], |c| &c.tls_san),
    );
    let (l_set, r_set): (HashSet<&String>, HashSet<&String>) =
        (ls.iter().collect(), rs.iter().collect());
    for s in rs.iter().filter(|s| !l_set.contains(s)) {
        out.push(change(
            Area::TlsSan,
            s.clone(),
            ChangeKind::Added,
            None,
            Some(s.clone()),
        ));
    }
    for s in ls.iter().filter(|s| !r_set.contains(s)) {
        out.push(change(
            Area::TlsSan,
            s.clone(),
            ChangeKind::Removed,
            Some(s.clone()),
            None,
        ));
    }
}

/// The version and the way RKE2 is installed.
fn install_step(l: &Read, r: &Read, out: &mut Vec<Change>) {
    let (li, ri) = (l.facts.install.as_ref(), r.facts.install.as_ref());
    scalar(
        Area::Version,
        li.and_then(|i| i.version.clone()),
        ri.and_then(|i| i.version.clone()),
        out,
    );
    let install = |i: Option<&rke2::Install>| {
        i.map(|i| {
            let mut s = if i.airgapped {
                "air-gapped".to_owned()
            } else {
                "online".to_owned()
            };
            s.push_str(&format!(" ({})", i.install_type.as_str()));
            if i.checksum.is_some() {
                s.push_str(", checksum checked");
            }
            s
        })
    };
    scalar(Area::Install, install(li), install(ri), out);
}

/// The join and agent tokens, by fingerprint.
fn token_changes(l: &Read, r: &Read, out: &mut Vec<Change>) {
    for key in ["token", "agent-token"] {
        let fp = |m: &serde_json::Map<String, Value>| {
            m.get(key).map(|v| fingerprint(value_text(v).as_bytes()))
        };
        let (a, b) = (fp(&l.config), fp(&r.config));
        if a != b {
            let kind = match (&a, &b) {
                (None, Some(_)) => ChangeKind::Added,
                (Some(_), None) => ChangeKind::Removed,
                _ => ChangeKind::Changed,
            };
            out.push(change(Area::Token, key, kind, a, b));
        }
    }
}

/// Every other `config.yaml` key, secret values by fingerprint.
fn config_keys(l: &Read, r: &Read, mask: &Mask, out: &mut Vec<Change>) {
    let mut keys: Vec<&String> = l.config.keys().chain(r.config.keys()).collect();
    keys.sort();
    keys.dedup();
    for key in keys {
        if OWN_AREAS.contains(&key.as_str()) {
            continue;
        }
        // `secrets-encryption-provider` names an algorithm, not a secret.
        let secret = crate::sensitive::secret_key_name(key) && !key.ends_with("-provider");
        let show = |v: &Value| {
            let text = value_text(v);
            if secret || mask.knows(&text) {
                fingerprint(text.as_bytes())
            } else {
                config_value(v, mask)
            }
        };
        match (l.config.get(key), r.config.get(key)) {
            (Some(a), Some(b)) if as_flag(a) == as_flag(b) => {}
            (Some(a), Some(b)) => out.push(change(
                Area::Config,
                key.clone(),
                ChangeKind::Changed,
                Some(show(a)),
                Some(show(b)),
            )),
            (None, Some(b)) => out.push(change(
                Area::Config,
                key.clone(),
                ChangeKind::Added,
                None,
                Some(show(b)),
            )),
            (Some(a), None) => out.push(change(
                Area::Config,
                key.clone(),
                ChangeKind::Removed,
                Some(show(a)),
                None,
            )),
            (None, None) => {}
        }
    }
}

/// A `config.yaml` value of a key not secret, as the report shows it: a credential inside
/// (an argument, a URL) masked, a list item by item (`kube-apiserver-arg: [a=b,
/// anonymous-auth=true]`: each argument judged alone, as `redact` judges it, not the items
/// joined into one text), a known secret item by its fingerprint.
fn config_value(v: &Value, mask: &Mask) -> String {
    match v {
        Value::Array(items) => items
            .iter()
            .map(|item| {
                let text = value_text(item);
                if mask.knows(&text) {
                    fingerprint(text.as_bytes())
                } else {
                    config_value(item, mask)
                }
            })
            .collect::<Vec<_>>()
            .join(", "),
        other => mask.value(&value_text(other)),
    }
}

/// A `config.yaml` value as RKE2 reads it into a flag: text, a list joined by commas (RKE2
/// splits slice flags at commas, so `a,b` and `[a, b]` are one value; `10` and `"10"` too).
fn as_flag(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Array(items) => items.iter().map(as_flag).collect::<Vec<_>>().join(","),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

fn is_ca_file(path: &str) -> bool {
    path.starts_with("/var/lib/rancher/rke2/server/tls/")
}

fn file_list(read: &Read) -> Vec<(&File, Option<&'static str>)> {
    let files = read.facts.document.as_ref().map_or(&[][..], |d| d.files());
    files
        .iter()
        .enumerate()
        .map(|(i, f)| (f, read.facts.secret_files.get(i).copied().flatten()))
        .collect()
}

fn describe(f: &File) -> String {
    let mode = f
        .mode
        .map_or_else(|| "no mode".to_owned(), |m| format!("{m:04o}"));
    let owner = f.owner.clone().unwrap_or_else(|| "no owner".to_owned());
    let size = f.bytes().map_or_else(
        || "remote or undecodable".to_owned(),
        |b| format!("{} B", b.len()),
    );
    format!("{mode} {owner}, {size}")
}

/// Each join token of the first side with the second's of the same key (`token`,
/// `agent-token`), to read past them under `--ignore token`.
fn tokens(l: &Read, r: &Read) -> Vec<(String, String)> {
    ["token", "agent-token"]
        .iter()
        .filter_map(|k| Some((value_text(l.config.get(*k)?), value_text(r.config.get(*k)?))))
        .filter(|(a, _)| a.len() >= 4)
        .collect()
}

/// The index of the last entry of each path: the entry the node ends up with.
fn last_of_each<'a>(list: &[(&'a File, Option<&'static str>)]) -> HashMap<&'a str, usize> {
    let mut at = HashMap::with_capacity(list.len());
    for (i, (f, _)) in list.iter().enumerate() {
        at.insert(f.path.as_str(), i);
    }
    at
}

/// The files' changes. `same`: the tokens `--ignore token` reads past (a text that differs only
/// in them, a join script, is the same).
fn files(
    l: &Read,
    r: &Read,
    ignore_ca: bool,
    same: &[(String, String)],
    mask: &Mask,
    out: &mut Vec<Change>,
) {
    let (lf, rf) = (file_list(l), file_list(r));
    let same_but_tokens = |x: &[u8], y: &[u8]| {
        if same.is_empty() {
            return false;
        }
        let (Ok(x), Ok(y)) = (std::str::from_utf8(x), std::str::from_utf8(y)) else {
            return false;
        };
        let mut x = x.to_owned();
        for (a, b) in same {
            x = x.replace(a.as_str(), b);
        }
        x == y
    };
    let skip = |path: &str| path == rke2::CONFIG_PATH;
    let (l_last, r_last) = (last_of_each(&lf), last_of_each(&rf));
    for (f, _) in &rf {
        if !skip(&f.path) && !l_last.contains_key(f.path.as_str()) {
            out.push(change(
                Area::File,
                f.path.clone(),
                ChangeKind::Added,
                None,
                Some(describe(f)),
            ));
        }
    }
    for (f, _) in &lf {
        if !skip(&f.path) && !r_last.contains_key(f.path.as_str()) {
            out.push(change(
                Area::File,
                f.path.clone(),
                ChangeKind::Removed,
                Some(describe(f)),
                None,
            ));
        }
    }
    for (i, (a, secret_a)) in lf.iter().enumerate() {
        // The last entry of a path is what the node ends up with.
        let Some((b, secret_b)) = r_last.get(a.path.as_str()).map(|&j| &rf[j]) else {
            continue;
        };
        if l_last.get(a.path.as_str()) != Some(&i) {
            continue;
        }
        let mut what = Vec::new();
        if a.mode != b.mode {
            what.push(format!(
                "mode {} → {}",
                a.mode.map_or("none".to_owned(), |m| format!("{m:04o}")),
                b.mode.map_or("none".to_owned(), |m| format!("{m:04o}"))
            ));
        }
        if a.owner != b.owner {
            what.push(format!(
                "owner {} → {}",
                a.owner.as_deref().unwrap_or("none"),
                b.owner.as_deref().unwrap_or("none")
            ));
        }
        let (ab, bb) = (a.bytes(), b.bytes());
        let content_changed = match (&a.content, &b.content) {
            (Content::Remote(x), Content::Remote(y)) => x != y,
            _ => ab != bb,
        };
        // config.yaml's content is its keys, compared above; a CA's content is what
        // `--ignore ca` leaves out (its mode and owner are still compared).
        let content_changed = content_changed
            && a.path != rke2::CONFIG_PATH
            && !(ignore_ca && is_ca_file(&a.path))
            && !matches!((ab, bb), (Some(x), Some(y)) if same_but_tokens(x, y));
        if what.is_empty() && !content_changed {
            continue;
        }
        let mut c = change(
            Area::File,
            a.path.clone(),
            ChangeKind::Changed,
            Some(describe(a)),
            Some(describe(b)),
        );
        if content_changed {
            // A private file (0600, 0400: read by its owner only, not run) is compared by
            // fingerprint too: what else would be kept from the group and the world.
            let private = |f: &File| f.mode.is_some_and(|m| m & 0o044 == 0 && m & 0o111 == 0);
            let secret = secret_a.is_some() || secret_b.is_some() || private(a) || private(b);
            let texts = (a.text(), b.text());
            c.detail = Some(match texts {
                (Some(x), Some(y)) if !secret => {
                    // Each side's known secrets masked in both texts, and credentials by shape.
                    let (x, y) = (mask.text(&x), mask.text(&y));
                    if x == y {
                        // Masked alike, the texts are one: only secret values differ.
                        format!(
                            "only secret values differ (masked alike): content {} → {}",
                            ab.map_or("unreadable".to_owned(), fingerprint),
                            bb.map_or("unreadable".to_owned(), fingerprint),
                        )
                    } else {
                        similar::TextDiff::from_lines(&x, &y)
                            .unified_diff()
                            .context_radius(2)
                            .header("before", "after")
                            .to_string()
                    }
                }
                _ => format!(
                    "content {} → {}{}",
                    ab.map_or("unreadable".to_owned(), fingerprint),
                    bb.map_or("unreadable".to_owned(), fingerprint),
                    if secret_a.is_some() || secret_b.is_some() {
                        " (it holds a secret: compared by fingerprint)"
                    } else if secret {
                        " (a private file: compared by fingerprint)"
                    } else {
                        " (binary)"
                    }
                ),
            });
            if what.is_empty() {
                what.push("content".to_owned());
            }
        }
        c.kind = ChangeKind::Changed;
        c.before = Some(format!("{} ({})", describe(a), what.join(", ")));
        c.after = Some(describe(b));
        out.push(c);
    }
}

fn command_lines(read: &Read) -> Vec<String> {
    read.facts
        .document
        .as_ref()
        .map_or(&[][..], |d| d.commands())
        .iter()
        .map(|c| read.facts.redactor.redact_free(&c.line))
        .collect()
}

/// Lines counted by their text, to take one at a time in constant time.
struct Multiset<'a>(HashMap<&'a str, usize>);

impl<'a> Multiset<'a> {
    fn of(lines: &'a [String]) -> Self {
        let mut counts = HashMap::with_capacity(lines.len());
        for line in lines {
            *counts.entry(line.as_str()).or_insert(0) += 1;
        }
        Multiset(counts)
    }

    /// Takes one `line`; whether there was one left.
    fn take(&mut self, line: &str) -> bool {
        match self.0.get_mut(line) {
            Some(n) if *n > 0 => {
                *n -= 1;
                true
            }
            _ => false,
        }
    }
}

fn commands(l: &Read, r: &Read, out: &mut Vec<Change>) {
    let (a, b) = (command_lines(l), command_lines(r));
    if a == b {
        return;
    }
    // Removed and added as multisets (a line run twice and now once is one removed), then
    // whether the lines both run come in another order.
    let mut rest = Multiset::of(&b);
    let mut common_a = Vec::new();
    for line in &a {
        if rest.take(line) {
            common_a.push(line.clone());
        } else {
            out.push(change(
                Area::Command,
                "",
                ChangeKind::Removed,
                Some(line.clone()),
                None,
            ));
        }
    }
    let mut left = Multiset::of(&a);
    let mut common_b = Vec::new();
    for line in &b {
        if left.take(line) {
            common_b.push(line.clone());
        } else {
            out.push(change(
                Area::Command,
                "",
                ChangeKind::Added,
                None,
                Some(line.clone()),
            ));
        }
    }
    if common_a != common_b {
        out.push(Change {
            detail: Some(format!(
                "before:\n{}\nafter:\n{}",
                common_a.join("\n"),
                common_b.join("\n")
            )),
            ..change(Area::Command, "", ChangeKind::Reordered, None, None)
        });
    }
}

fn certificates(l: &Read, r: &Read, ignore_ca: bool, out: &mut Vec<Change>) {
    use crate::facts::pki::Certificate;
    let show = |c: &Certificate| {
        format!(
            "{}, until {}, sha256:{}",
            c.subject,
            c.not_after,
            &c.sha256[..c.sha256.len().min(16)]
        )
    };
    let (lc, rc) = (
        &l.facts.material.certificates,
        &r.facts.material.certificates,
    );
    // Paths in order of first appearance; a file may hold several (a bundle): they are
    // compared by fingerprint.
    let mut paths: Vec<&str> = Vec::new();
    let mut by_path: HashMap<&str, (Vec<&Certificate>, Vec<&Certificate>)> = HashMap::new();
    for (c, left) in lc
        .iter()
        .map(|c| (c, true))
        .chain(rc.iter().map(|c| (c, false)))
    {
        let sides = by_path.entry(c.path.as_str()).or_insert_with(|| {
            paths.push(&c.path);
            (Vec::new(), Vec::new())
        });
        if left {
            sides.0.push(c);
        } else {
            sides.1.push(c);
        }
    }
    for path in paths {
        let (a, b) = by_path.remove(path).unwrap_or_default();
        let (a_sha, b_sha): (HashSet<&str>, HashSet<&str>) = (
            a.iter().map(|c| c.sha256.as_str()).collect(),
            b.iter().map(|c| c.sha256.as_str()).collect(),
        );
        let gone: Vec<&&Certificate> = a
            .iter()
            .filter(|c| !b_sha.contains(c.sha256.as_str()))
            .collect();
        let new: Vec<&&Certificate> = b
            .iter()
            .filter(|c| !a_sha.contains(c.sha256.as_str()))
            .collect();
        match (gone.as_slice(), new.as_slice()) {
            ([], []) => {}
            // One certificate replaced by another: what `--ignore ca` leaves out for a CA.
            ([x], [y]) => {
                if !(ignore_ca && is_ca_file(path)) {
                    out.push(change(
                        Area::Certificate,
                        path,
                        ChangeKind::Changed,
                        Some(show(x)),
                        Some(show(y)),
                    ));
                }
            }
            _ => {
                for x in gone {
                    out.push(change(
                        Area::Certificate,
                        path,
                        ChangeKind::Removed,
                        Some(show(x)),
                        None,
                    ));
                }
                for y in new {
                    out.push(change(
                        Area::Certificate,
                        path,
                        ChangeKind::Added,
                        None,
                        Some(show(y)),
                    ));
                }
            }
        }
    }
}

/// The size, when it changes: one change for the bytes, and one per verified cloud whose fit
/// flips.
fn sizes(l: &Read, r: &Read, ignore_ca: bool, out: &mut Vec<Change>) {
    if l.value_bytes == r.value_bytes {
        return;
    }
    // With the CAs ignored, what fresh keys change in length is no change: a PEM RSA key is
    // 1,675 or 1,679 bytes from one generation to the next. Plain user data carries the files
    // as they are, so the rest must be equal; encoded (gzip, a data URL) it may move by a
    // little more than the CA files did.
    if ignore_ca && l.ca_bytes != r.ca_bytes {
        let delta = |a: u64, b: u64| a.abs_diff(b);
        let ca = delta(l.ca_bytes, r.ca_bytes);
        let value = delta(l.value_bytes, r.value_bytes);
        let same_rest = if l.plain && r.plain {
            l.value_bytes.wrapping_sub(l.ca_bytes) == r.value_bytes.wrapping_sub(r.ca_bytes)
        } else {
            value <= 2 * ca + 32
        };
        if same_rest {
            return;
        }
    }
    let b64 = crate::codec::b64::encoded_len;
    out.push(change(
        Area::Size,
        "",
        ChangeKind::Changed,
        Some(format!(
            "{} B (base64 {} B)",
            l.value_bytes,
            b64(l.value_bytes)
        )),
        Some(format!(
            "{} B (base64 {} B)",
            r.value_bytes,
            b64(r.value_bytes)
        )),
    ));
    for cloud in CLOUDS.iter().filter(|c| c.is_verified()) {
        let fits = |value_bytes: u64| cloud.counted_bytes(value_bytes) <= cloud.limit_bytes;
        if fits(l.value_bytes) == fits(r.value_bytes) {
            continue;
        }
        let show = |value_bytes: u64| {
            format!(
                "{} of {} {} bytes ({})",
                cloud.counted_bytes(value_bytes),
                cloud.limit_bytes,
                if cloud.counted == Counted::Raw {
                    "raw"
                } else {
                    "base64"
                },
                if fits(value_bytes) {
                    "fits"
                } else {
                    "does not fit"
                }
            )
        };
        let mut c = change(
            Area::Size,
            cloud.id,
            ChangeKind::Changed,
            Some(show(l.value_bytes)),
            Some(show(r.value_bytes)),
        );
        c.detail = Some(if fits(r.value_bytes) {
            "now fits".to_owned()
        } else {
            "no longer fits".to_owned()
        });
        out.push(c);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_config_list_is_shown_item_by_item() {
        let mask = Mask {
            known: Redactor::default(),
            shapes: Redactor::default(),
        };
        let args = serde_json::json!([
            "anonymous-auth=true",
            "request-timeout=60s",
            "oidc-client-secret=Zq9Xk2mPqR7s"
        ]);
        let shown = config_value(&args, &mask);
        // Joined first, `true,` would have read as the value of `anonymous-auth`.
        assert!(
            shown.starts_with(
                "anonymous-auth=true, request-timeout=60s, oidc-client-secret=sha256:"
            ),
            "{shown}"
        );
        assert!(!shown.contains("Zq9Xk2mPqR7s"), "{shown}");
        assert_eq!(
            config_value(&serde_json::json!("anonymous-auth=true"), &mask),
            "anonymous-auth=true"
        );
    }
}
