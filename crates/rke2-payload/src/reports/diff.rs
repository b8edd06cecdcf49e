//! `diff`: what changed between two sets of bootstrap Secrets, said as facts: format and
//! compression, role, server, tls-san, version and install step, every `config.yaml` key,
//! files, commands, certificates and the size per cloud. Secret values are compared by
//! fingerprint only; text is diffed with every known secret value masked.
//!
//! Secrets are paired by namespace and name, else by cluster and role, else (one left on each
//! side) with each other; each pair says how it was made.

use std::borrow::Cow;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::clouds::{CLOUDS, Counted};
use crate::document::{Content, File};
use crate::envelope::{BootstrapSecret, Envelope};
use crate::error::Error;
use crate::facts::{Facts, rke2};
use crate::options::DecodeOptions;
use crate::payload::Payload;

/// The schema id of `diff -o json`.
pub const DIFF_SCHEMA: &str = "rke2-payload/diff/v1";

/// What a diff leaves out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
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

/// Options of a diff.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct DiffOptions {
    /// What to leave out.
    pub ignore: Vec<Ignore>,
    /// Limits for reading both inputs.
    pub decode: DecodeOptions,
}

/// One difference.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Change {
    /// What it is about: `format`, `compression`, `role`, `server`, `tls-san`, `version`,
    /// `install`, `token`, `config`, `file`, `command`, `certificate`, `size`.
    pub area: Cow<'static, str>,
    /// Which one: the config key, file path, certificate path, cloud id (empty for the
    /// single-valued areas).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub item: String,
    /// `added`, `removed`, `changed` or `reordered`.
    pub kind: Cow<'static, str>,
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
#[non_exhaustive]
pub struct PairDiff {
    /// The Secret of the first input.
    pub before: Side,
    /// The Secret of the second input.
    pub after: Side,
    /// `name` (same namespace and name), `cluster and role`, or `only Secrets`.
    pub paired_by: Cow<'static, str>,
    /// What differs (empty: nothing, after the ignores).
    pub changes: Vec<Change>,
}

/// The diff of two inputs.
#[derive(Debug, Clone, Serialize, Deserialize)]
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
    format: String,
    compression: String,
    config: serde_json::Map<String, Value>,
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
    let facts = Facts::read(&payload);
    let config = facts
        .document
        .as_ref()
        .and_then(|d| d.file(rke2::CONFIG_PATH))
        .and_then(File::text)
        .and_then(|t| rke2::fast_map(&t).or_else(|| rke2::full_map(&t)))
        .unwrap_or_default();
    Ok(Read {
        side: Side {
            name: secret.name().map(str::to_owned),
            namespace: secret.namespace().map(str::to_owned),
            cluster: secret.cluster().map(str::to_owned),
            role: facts.role.map(|r| r.as_str().to_owned()),
        },
        format: payload.format().as_str().to_owned(),
        compression: compression_name(payload.compression()),
        value_bytes: payload.value().len() as u64,
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

/// Compares the bootstrap Secrets of two inputs.
///
/// ```
/// use rke2_payload::{DiffOptions, diff};
///
/// let a = br##"{"kind": "Secret", "metadata": {"name": "w", "namespace": "capi"},
///   "stringData": {"format": "cloud-config", "value": "#cloud-config\nruncmd: [reboot]\n"}}"##;
/// let b = br##"{"kind": "Secret", "metadata": {"name": "w", "namespace": "capi"},
///   "stringData": {"format": "cloud-config", "value": "#cloud-config\nruncmd: [reboot, 'echo done']\n"}}"##;
/// let report = diff(a, b, &DiffOptions::default())?;
/// assert!(report.differs());
/// let change = &report.pairs[0].changes[0];
/// assert_eq!((change.area.as_ref(), change.kind.as_ref()), ("command", "added"));
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
    let mut pairs: Vec<(usize, usize, &'static str)> = Vec::new();
    let mut left_open: Vec<usize> = Vec::new();
    for (i, l) in left.iter().enumerate() {
        let found = right.iter().enumerate().position(|(j, r)| {
            !taken[j]
                && l.side.name.is_some()
                && l.side.name == r.side.name
                && l.side.namespace == r.side.namespace
        });
        match found {
            Some(j) => {
                taken[j] = true;
                pairs.push((i, j, "name"));
            }
            None => left_open.push(i),
        }
    }
    let mut still_open = Vec::new();
    for i in left_open {
        let l = &left[i];
        let found = right.iter().enumerate().position(|(j, r)| {
            !taken[j]
                && l.side.role.is_some()
                && l.side.cluster == r.side.cluster
                && l.side.role == r.side.role
        });
        match found {
            Some(j) => {
                taken[j] = true;
                pairs.push((i, j, "cluster and role"));
            }
            None => still_open.push(i),
        }
    }
    let right_open: Vec<usize> = (0..right.len()).filter(|&j| !taken[j]).collect();
    let (only_before, only_after) = if still_open.len() == 1 && right_open.len() == 1 {
        pairs.push((still_open[0], right_open[0], "only Secrets"));
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
            paired_by: Cow::Borrowed(how),
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
    area: &'static str,
    item: impl Into<String>,
    kind: &'static str,
    before: Option<String>,
    after: Option<String>,
) -> Change {
    Change {
        area: Cow::Borrowed(area),
        item: item.into(),
        kind: Cow::Borrowed(kind),
        before,
        after,
        detail: None,
    }
}

fn scalar(
    area: &'static str,
    before: Option<String>,
    after: Option<String>,
    out: &mut Vec<Change>,
) {
    let kind = match (&before, &after) {
        (a, b) if a == b => return,
        (None, Some(_)) => "added",
        (Some(_), None) => "removed",
        _ => "changed",
    };
    out.push(change(area, "", kind, before, after));
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
    scalar(
        "format",
        Some(l.format.clone()),
        Some(r.format.clone()),
        &mut out,
    );
    scalar(
        "compression",
        Some(l.compression.clone()),
        Some(r.compression.clone()),
        &mut out,
    );
    scalar("role", l.side.role.clone(), r.side.role.clone(), &mut out);
    let (lc, rc) = (l.facts.config.as_ref(), r.facts.config.as_ref());
    scalar(
        "server",
        lc.and_then(|c| c.server.clone()),
        rc.and_then(|c| c.server.clone()),
        &mut out,
    );
    // tls-san: entries added and removed.
    let (ls, rs): (&[String], &[String]) = (
        lc.map_or(&[], |c| &c.tls_san),
        rc.map_or(&[], |c| &c.tls_san),
    );
    for s in rs.iter().filter(|s| !ls.contains(s)) {
        out.push(change("tls-san", s.clone(), "added", None, Some(s.clone())));
    }
    for s in ls.iter().filter(|s| !rs.contains(s)) {
        out.push(change(
            "tls-san",
            s.clone(),
            "removed",
            Some(s.clone()),
            None,
        ));
    }
    // The install step.
    let (li, ri) = (l.facts.install.as_ref(), r.facts.install.as_ref());
    scalar(
        "version",
        li.and_then(|i| i.version.clone()),
        ri.and_then(|i| i.version.clone()),
        &mut out,
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
    scalar("install", install(li), install(ri), &mut out);
    // The token, by fingerprint.
    if !ignore_token {
        for key in ["token", "agent-token"] {
            let fp = |m: &serde_json::Map<String, Value>| {
                m.get(key).map(|v| fingerprint(value_text(v).as_bytes()))
            };
            let (a, b) = (fp(&l.config), fp(&r.config));
            if a != b {
                let kind = match (&a, &b) {
                    (None, Some(_)) => "added",
                    (Some(_), None) => "removed",
                    _ => "changed",
                };
                out.push(change("token", key, kind, a, b));
            }
        }
    }
    // Every other config.yaml key.
    let mut keys: Vec<&String> = l.config.keys().chain(r.config.keys()).collect();
    keys.sort();
    keys.dedup();
    for key in keys {
        if OWN_AREAS.contains(&key.as_str()) {
            continue;
        }
        // `secrets-encryption-provider` names an algorithm, not a secret.
        let secret = crate::secrets::secret_key_name(key) && !key.ends_with("-provider");
        let show = |v: &Value| {
            if secret {
                fingerprint(value_text(v).as_bytes())
            } else {
                // A credential inside an ordinary value (an argument, a URL) is masked too.
                r.facts
                    .redactor
                    .redact_all(&l.facts.redactor.redact_all(&value_text(v)))
            }
        };
        match (l.config.get(key), r.config.get(key)) {
            (Some(a), Some(b)) if a == b => {}
            (Some(a), Some(b)) => out.push(change(
                "config",
                key.clone(),
                "changed",
                Some(show(a)),
                Some(show(b)),
            )),
            (None, Some(b)) => {
                out.push(change("config", key.clone(), "added", None, Some(show(b))))
            }
            (Some(a), None) => out.push(change(
                "config",
                key.clone(),
                "removed",
                Some(show(a)),
                None,
            )),
            (None, None) => {}
        }
    }
    files(l, r, ignore_ca, &mut out);
    commands(l, r, &mut out);
    certificates(l, r, ignore_ca, &mut out);
    sizes(l, r, &mut out);
    out
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

fn files(l: &Read, r: &Read, ignore_ca: bool, out: &mut Vec<Change>) {
    let (lf, rf) = (file_list(l), file_list(r));
    let skip = |path: &str| (ignore_ca && is_ca_file(path)) || path == rke2::CONFIG_PATH;
    for (f, _) in &rf {
        if !skip(&f.path) && !lf.iter().any(|(g, _)| g.path == f.path) {
            out.push(change(
                "file",
                f.path.clone(),
                "added",
                None,
                Some(describe(f)),
            ));
        }
    }
    for (f, _) in &lf {
        if !skip(&f.path) && !rf.iter().any(|(g, _)| g.path == f.path) {
            out.push(change(
                "file",
                f.path.clone(),
                "removed",
                Some(describe(f)),
                None,
            ));
        }
    }
    for (a, secret_a) in &lf {
        if ignore_ca && is_ca_file(&a.path) {
            continue;
        }
        // The last entry of a path is what the node ends up with.
        let Some((b, secret_b)) = rf.iter().rev().find(|(g, _)| g.path == a.path) else {
            continue;
        };
        if lf
            .iter()
            .rev()
            .find(|(g, _)| g.path == a.path)
            .is_some_and(|(g, _)| !std::ptr::eq(*g, *a))
        {
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
        // config.yaml's content is its keys, compared above.
        let content_changed = content_changed && a.path != rke2::CONFIG_PATH;
        if what.is_empty() && !content_changed {
            continue;
        }
        let mut c = change(
            "file",
            a.path.clone(),
            "changed",
            Some(describe(a)),
            Some(describe(b)),
        );
        if content_changed {
            let secret = secret_a.is_some() || secret_b.is_some();
            let texts = (a.text(), b.text());
            c.detail = Some(match texts {
                (Some(x), Some(y)) if !secret => {
                    // Each side's known secrets masked in both texts, and credentials by shape.
                    let mask =
                        |t: &str| r.facts.redactor.redact_all(&l.facts.redactor.redact_all(t));
                    let (x, y) = (mask(&x), mask(&y));
                    similar::TextDiff::from_lines(&x, &y)
                        .unified_diff()
                        .context_radius(2)
                        .header("before", "after")
                        .to_string()
                }
                _ => format!(
                    "content {} → {}{}",
                    ab.map_or("unreadable".to_owned(), fingerprint),
                    bb.map_or("unreadable".to_owned(), fingerprint),
                    if secret {
                        " (it holds a secret: compared by fingerprint)"
                    } else {
                        " (binary)"
                    }
                ),
            });
            if what.is_empty() {
                what.push("content".to_owned());
            }
        }
        c.kind = Cow::Borrowed("changed");
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
        .map(|c| read.facts.redactor.redact_all(&c.line))
        .collect()
}

fn commands(l: &Read, r: &Read, out: &mut Vec<Change>) {
    let (a, b) = (command_lines(l), command_lines(r));
    if a == b {
        return;
    }
    let mut sa = a.clone();
    let mut sb = b.clone();
    sa.sort();
    sb.sort();
    if sa == sb {
        out.push(Change {
            detail: Some(format!(
                "before:\n{}\nafter:\n{}",
                a.join("\n"),
                b.join("\n")
            )),
            ..change("command", "", "reordered", None, None)
        });
        return;
    }
    for op in similar::capture_diff_slices(similar::Algorithm::Myers, &a, &b) {
        match op {
            similar::DiffOp::Equal { .. } => {}
            similar::DiffOp::Delete {
                old_index, old_len, ..
            } => {
                for line in &a[old_index..old_index + old_len] {
                    out.push(change("command", "", "removed", Some(line.clone()), None));
                }
            }
            similar::DiffOp::Insert {
                new_index, new_len, ..
            } => {
                for line in &b[new_index..new_index + new_len] {
                    out.push(change("command", "", "added", None, Some(line.clone())));
                }
            }
            similar::DiffOp::Replace {
                old_index,
                old_len,
                new_index,
                new_len,
            } => {
                for line in &a[old_index..old_index + old_len] {
                    out.push(change("command", "", "removed", Some(line.clone()), None));
                }
                for line in &b[new_index..new_index + new_len] {
                    out.push(change("command", "", "added", None, Some(line.clone())));
                }
            }
        }
    }
}

fn certificates(l: &Read, r: &Read, ignore_ca: bool, out: &mut Vec<Change>) {
    if ignore_ca {
        return;
    }
    let show = |c: &crate::facts::pki::Certificate| {
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
    for c in rc {
        if !lc.iter().any(|d| d.path == c.path) {
            out.push(change(
                "certificate",
                c.path.clone(),
                "added",
                None,
                Some(show(c)),
            ));
        }
    }
    for c in lc {
        match rc.iter().find(|d| d.path == c.path) {
            None => out.push(change(
                "certificate",
                c.path.clone(),
                "removed",
                Some(show(c)),
                None,
            )),
            Some(d) if d.sha256 != c.sha256 => {
                out.push(change(
                    "certificate",
                    c.path.clone(),
                    "changed",
                    Some(show(c)),
                    Some(show(d)),
                ));
            }
            Some(_) => {}
        }
    }
}

/// The size, when it changes: one change for the bytes, and one per verified cloud whose fit
/// flips.
fn sizes(l: &Read, r: &Read, out: &mut Vec<Change>) {
    if l.value_bytes == r.value_bytes {
        return;
    }
    let b64 = crate::codec::b64::encoded_len;
    out.push(change(
        "size",
        "",
        "changed",
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
            "size",
            cloud.id,
            "changed",
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
