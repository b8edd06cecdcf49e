//! The Secret envelope: finds the bootstrap Secrets in YAML or JSON input.
//!
//! Accepted input: one Secret (YAML or JSON), a `kind: List` as `kubectl get secrets -o yaml|json`
//! prints it, several YAML documents separated by `---`, or bare user data (a cloud-config, an
//! Ignition JSON config, or raw gzip), which is treated as the `value` of an unnamed Secret.
//!
//! Strings borrow from the input; nothing is decoded until asked for.

mod chunks;
pub(crate) mod cut;
mod fast;
mod input;
mod lines;
mod objects;
mod origin;
mod places;
mod raw;
mod select;
pub(crate) mod stream;

pub(crate) use input::Part;
pub use input::{Input, input_files, read_all, read_input};
pub use objects::{ObjectClass, classify, objects};
pub use origin::{Origin, Provenance};
pub use places::{FieldStep, ObjectPlaces, object_places};
pub use select::{Selector, SelectorError};
pub use stream::{StreamSummary, for_each_secret};

use std::borrow::Cow;
use std::sync::Arc;

use crate::checks::Ignores;
use crate::codec::text::shorten;
use crate::codec::{b64, gzip};
use crate::error::{Error, Position, SecretId, Syntax};
use crate::options::DecodeOptions;
use raw::{Doc, Pairs, RawObject};

/// The Secret type Cluster API gives bootstrap data Secrets.
pub const CLUSTER_SECRET_TYPE: &str = "cluster.x-k8s.io/secret";

/// The type of the Secret Rancher's system-agent applies plans from (keys `plan`,
/// `applied-checksum`, `applied-plan`, …), which CAPRKE2's in-place updates write an update
/// plan into. It never carries bootstrap data, whatever its keys.
pub(crate) const MACHINE_PLAN_SECRET_TYPE: &str = "rke.cattle.io/machine-plan";

/// Whether a Secret of this type never carries bootstrap data: it is skipped and counted
/// without its keys being read as a payload (even keys named `value` and `format`).
fn never_bootstrap(secret_type: &str) -> bool {
    secret_type == MACHINE_PLAN_SECRET_TYPE
}

/// The label that names a Secret's Cluster.
pub const CLUSTER_NAME_LABEL: &str = "cluster.x-k8s.io/cluster-name";

/// The annotation in which `render` leaves the manifest findings that concern a rendered
/// Secret (a JSON list of `{"id", "severity", "message"}`), so that `lint` reports them.
pub const FINDINGS_ANNOTATION: &str = "rke2-payload/findings";

/// The annotation in which `render` says where a rendered Secret comes from: a JSON object with
/// the manifest file, the object, its line, and the path its user data takes to the machine
/// (`{"file", "object", "line", "delivery"}`, the last an id of the delivery table), so that
/// `lint` places its findings on the manifest and `size` judges the limit that path has.
pub const RENDERED_FROM_ANNOTATION: &str = "rke2-payload/rendered-from";

/// How a value is stored in the input.
#[derive(Clone)]
enum Stored<'a> {
    /// Under `data`: base64 text.
    Base64(Cow<'a, str>),
    /// Under `stringData`: the text itself.
    Plain(Cow<'a, str>),
    /// Bare user data: the input is the value.
    Bare(Cow<'a, [u8]>),
    /// An object of a streamed input that could not be read: why.
    Broken(String),
}

impl Stored<'_> {
    fn into_owned(self) -> Stored<'static> {
        match self {
            Stored::Base64(s) => Stored::Base64(Cow::Owned(s.into_owned())),
            Stored::Plain(s) => Stored::Plain(Cow::Owned(s.into_owned())),
            Stored::Bare(b) => Stored::Bare(Cow::Owned(b.into_owned())),
            Stored::Broken(why) => Stored::Broken(why),
        }
    }
}

/// One Secret that carries bootstrap data (a `value` key), borrowing from the input.
///
/// Its `Debug` output shows where it came from and how big the value is, never the value.
#[derive(Clone)]
pub struct BootstrapSecret<'a> {
    id: SecretId,
    labels: Vec<(Cow<'a, str>, Cow<'a, str>)>,
    secret_type: Option<Cow<'a, str>>,
    value: Stored<'a>,
    format: Option<Stored<'a>>,
    /// The line of the input its value is on (1-based), when known.
    line: Option<u64>,
    /// Where it comes from: a preview's, or what `render`'s annotations say when asked.
    origin: Option<Arc<Origin>>,
    /// The kind of another provider's bootstrap config that owns it (`KubeadmConfig`).
    other_provider: Option<String>,
    /// What its own `ignore-check.rke2-payload.io/…` annotations say.
    ignores: Option<Arc<Ignores>>,
}

impl std::fmt::Debug for BootstrapSecret<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BootstrapSecret")
            .field("id", &self.id)
            .field("cluster", &self.cluster())
            .field("line", &self.line)
            .field("type", &self.secret_type)
            .field("base64_bytes", &self.base64_len())
            .finish_non_exhaustive()
    }
}

impl<'a> BootstrapSecret<'a> {
    /// A copy that owns its strings, to keep or send to another thread.
    pub fn into_owned(self) -> BootstrapSecret<'static> {
        BootstrapSecret {
            id: self.id,
            labels: self
                .labels
                .into_iter()
                .map(|(k, v)| (Cow::Owned(k.into_owned()), Cow::Owned(v.into_owned())))
                .collect(),
            secret_type: self.secret_type.map(|c| Cow::Owned(c.into_owned())),
            value: self.value.into_owned(),
            format: self.format.map(Stored::into_owned),
            line: self.line,
            origin: self.origin,
            other_provider: self.other_provider,
            ignores: self.ignores,
        }
    }

    /// A bootstrap Secret made in memory (a preview's, handed to the reports without being
    /// written out and read again): `data.format` and `data.value` stored as the API server
    /// stores them (base64), labelled with its Cluster, of type [`CLUSTER_SECRET_TYPE`].
    ///
    /// ```
    /// use rke2_payload::{BootstrapSecret, DecodeOptions, Format, SecretId};
    ///
    /// let id = SecretId { namespace: Some("default".into()), name: Some("w".into()), index: 0 };
    /// let secret = BootstrapSecret::new(id, "cloud-config", b"#cloud-config\n", Some("demo"));
    /// assert_eq!(secret.cluster(), Some("demo"));
    /// assert_eq!(secret.decode(&DecodeOptions::default())?.format(), Format::CloudConfig);
    /// # Ok::<(), rke2_payload::Error>(())
    /// ```
    pub fn new(
        id: SecretId,
        format: &str,
        value: &[u8],
        cluster: Option<&str>,
    ) -> BootstrapSecret<'static> {
        BootstrapSecret {
            id,
            labels: cluster
                .map(|c| (Cow::Borrowed(CLUSTER_NAME_LABEL), Cow::Owned(c.to_owned())))
                .into_iter()
                .collect(),
            secret_type: Some(Cow::Borrowed(CLUSTER_SECRET_TYPE)),
            value: Stored::Base64(Cow::Owned(b64::encode(value))),
            format: Some(Stored::Base64(Cow::Owned(b64::encode(format.as_bytes())))),
            line: None,
            origin: None,
            other_provider: None,
            ignores: None,
        }
    }

    /// A broken object of a streamed input, as a Secret whose value fails with `why`: its
    /// metadata when a lenient read found it, else only its place.
    pub(crate) fn broken(
        id: SecretId,
        labels: Vec<(Cow<'a, str>, Cow<'a, str>)>,
        why: String,
        line: u64,
    ) -> BootstrapSecret<'a> {
        BootstrapSecret {
            id,
            labels,
            secret_type: None,
            value: Stored::Broken(why),
            format: None,
            line: Some(line),
            origin: None,
            other_provider: None,
            ignores: None,
        }
    }

    /// Where the Secret was found.
    pub fn id(&self) -> &SecretId {
        &self.id
    }

    /// `metadata.name` (`None` for bare user data).
    pub fn name(&self) -> Option<&str> {
        self.id.name.as_deref()
    }

    /// `metadata.namespace`.
    pub fn namespace(&self) -> Option<&str> {
        self.id.namespace.as_deref()
    }

    /// The `cluster.x-k8s.io/cluster-name` label.
    pub fn cluster(&self) -> Option<&str> {
        self.label(CLUSTER_NAME_LABEL)
    }

    /// Where it comes from: set on a preview's Secrets, and read from `render`'s annotations
    /// only when [`DecodeOptions::render_annotations`] asks for it.
    pub fn origin(&self) -> Option<&Origin> {
        self.origin.as_deref()
    }

    /// What its own `ignore-check.rke2-payload.io/…` annotations say (read from the parsed
    /// annotations, always: they are the user's), `None` when it has none.
    pub fn ignores(&self) -> Option<&Ignores> {
        self.ignores.as_deref()
    }

    /// The same Secret with `ignores` (what a Secret made in memory would carry in its
    /// annotations).
    pub fn with_ignores(mut self, ignores: Ignores) -> Self {
        self.ignores = (!ignores.is_empty()).then(|| Arc::new(ignores));
        self
    }

    /// The same Secret with `origin`.
    pub fn with_origin(mut self, origin: Origin) -> Self {
        self.origin = Some(Arc::new(origin));
        self
    }

    /// The kind of another Cluster API bootstrap provider's config that owns it
    /// (`metadata.ownerReferences`: a `bootstrap.cluster.x-k8s.io` kind other than
    /// `RKE2Config`, such as kubeadm's `KubeadmConfig`): its data is not RKE2's.
    pub fn other_provider(&self) -> Option<&str> {
        self.other_provider.as_deref()
    }

    /// The value of the label `key` (`metadata.labels`).
    pub fn label(&self, key: &str) -> Option<&str> {
        self.labels
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_ref())
    }

    /// The line of the input on which its value is stored (1-based): where an editor or a
    /// code-scanning annotation should point. `None` for bare user data, and where the parser
    /// did not keep the text in place (a YAML block scalar, a JSON string with escapes: then it
    /// is the line the object starts on, if known).
    pub fn line(&self) -> Option<u64> {
        self.line
    }

    /// Whether the object could not be read at all (its value then fails with
    /// [`Error::Unreadable`]).
    pub fn is_broken(&self) -> bool {
        matches!(self.value, Stored::Broken(_))
    }

    /// The Secret's `type`.
    pub fn secret_type(&self) -> Option<&str> {
        self.secret_type.as_deref()
    }

    /// Whether this is bare user data rather than a Secret.
    pub fn is_bare(&self) -> bool {
        matches!(self.value, Stored::Bare(_))
    }

    /// The bytes of `data.value` (base64-decoded) or `stringData.value`, exactly as stored.
    pub fn value(&self) -> Result<Cow<'a, [u8]>, Error> {
        match &self.value {
            Stored::Base64(text) => {
                b64::decode(text)
                    .map(Cow::Owned)
                    .map_err(|detail| Error::Base64 {
                        secret: self.id.clone(),
                        key: "value".to_owned(),
                        detail,
                    })
            }
            Stored::Plain(Cow::Borrowed(text)) => Ok(Cow::Borrowed(text.as_bytes())),
            Stored::Plain(Cow::Owned(text)) => Ok(Cow::Owned(text.clone().into_bytes())),
            Stored::Bare(Cow::Borrowed(bytes)) => Ok(Cow::Borrowed(bytes)),
            Stored::Bare(Cow::Owned(bytes)) => Ok(Cow::Owned(bytes.clone())),
            Stored::Broken(why) => Err(Error::Unreadable {
                secret: self.id.clone(),
                detail: why.clone(),
            }),
        }
    }

    /// The base64 text of `data.value` exactly as it appears in the input (`None` for
    /// `stringData` and bare user data).
    pub fn stored_base64(&self) -> Option<&str> {
        match &self.value {
            Stored::Base64(text) => Some(text),
            _ => None,
        }
    }

    /// Length of the value's base64 text as the API server stores it (line breaks not counted).
    ///
    /// For `stringData` and bare user data this is computed: the API server would store the
    /// base64 of the bytes.
    pub fn base64_len(&self) -> u64 {
        match &self.value {
            Stored::Base64(text) => {
                let bytes = text.as_bytes();
                let breaks = memchr::memchr2_iter(b'\n', b'\r', bytes).count();
                (bytes.len() - breaks) as u64
            }
            Stored::Plain(text) => b64::encoded_len(text.len() as u64),
            Stored::Bare(bytes) => b64::encoded_len(bytes.len() as u64),
            Stored::Broken(_) => 0,
        }
    }

    /// Feeds the stored `format` and `value` keys, each with how it is stored and its length,
    /// to `feed`: what the batch memo hashes to know two payloads are the same.
    pub(crate) fn feed_stored(&self, feed: &mut dyn FnMut(&[u8])) {
        for stored in [self.format.as_ref(), Some(&self.value)] {
            let (tag, bytes): (u8, &[u8]) = match stored {
                None => (0, &[]),
                Some(Stored::Base64(text)) => (1, text.as_bytes()),
                Some(Stored::Plain(text)) => (2, text.as_bytes()),
                Some(Stored::Bare(bytes)) => (3, bytes),
                Some(Stored::Broken(why)) => (4, why.as_bytes()),
            };
            feed(&[tag]);
            feed(&(bytes.len() as u64).to_le_bytes());
            feed(bytes);
        }
    }

    /// The text of the `format` key as stored (base64-decoded under `data`), `None` when there
    /// is no such key or the input is bare user data. What it declares is read by the payload
    /// layer.
    pub(crate) fn format_key(&self) -> Result<Option<Cow<'_, str>>, Error> {
        match &self.format {
            None | Some(Stored::Bare(_) | Stored::Broken(_)) => Ok(None),
            Some(Stored::Base64(text)) => {
                let bytes = b64::decode(text).map_err(|detail| Error::Base64 {
                    secret: self.id.clone(),
                    key: "format".to_owned(),
                    detail,
                })?;
                Ok(Some(Cow::Owned(
                    String::from_utf8_lossy(&bytes).into_owned(),
                )))
            }
            Some(Stored::Plain(text)) => Ok(Some(Cow::Borrowed(text.as_ref()))),
        }
    }
}

/// All bootstrap Secrets of one input, and what was skipped.
///
/// Its `Debug` output shows the Secrets as [`BootstrapSecret`]'s does and counts the rest; the
/// secret-looking values of skipped Secrets are never shown.
pub struct Envelope<'a> {
    /// The syntax of the input; `None` for bare user data.
    pub syntax: Option<Syntax>,
    /// Bootstrap Secrets (those with a `value` key), in input order.
    pub secrets: Vec<BootstrapSecret<'a>>,
    /// Secrets without bootstrap data, skipped: without a `value` key (CA Secrets, ordinary
    /// Secrets), with a `value` that is not user data and no `format` (the join token), or of a
    /// type that never carries it (Rancher's machine plans).
    pub skipped_secrets: usize,
    /// Objects of other kinds (ConfigMaps, …), skipped.
    pub skipped_objects: usize,
    /// The last Secret skipped for having no `value` key, for the error message.
    missing_value: Option<SecretId>,
    /// Whether `render`'s annotations are read ([`DecodeOptions::render_annotations`]).
    render_annotations: bool,
}

impl std::fmt::Debug for Envelope<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Envelope")
            .field("syntax", &self.syntax)
            .field("secrets", &self.secrets)
            .field("skipped_secrets", &self.skipped_secrets)
            .field("skipped_objects", &self.skipped_objects)
            .finish_non_exhaustive()
    }
}

impl<'a> Envelope<'a> {
    /// Reads the input. Fails if it is not YAML or JSON, or holds no Secret with a `value` key.
    pub fn parse(input: &'a [u8], options: &DecodeOptions) -> Result<Self, Error> {
        let start = input
            .iter()
            .position(|b| !b.is_ascii_whitespace())
            .ok_or(Error::Empty)?;
        let trimmed = &input[start..];
        if gzip::is_gzip(trimmed) {
            return Ok(Self::bare(input));
        }
        // Whitespace, a byte-order mark, whitespace: what follows decides (as in the stream).
        let head = trimmed
            .strip_prefix("\u{feff}".as_bytes())
            .unwrap_or(trimmed)
            .trim_ascii_start();
        let text = std::str::from_utf8(input).map_err(|e| {
            let at = e.valid_up_to();
            Error::Syntax {
                syntax: Syntax::Yaml,
                message: format!(
                    "invalid UTF-8 at byte {at}: neither YAML nor JSON, nor gzip user data"
                ),
                at: None,
            }
        })?;
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        if is_bare_head(head) {
            // Without a byte-order mark, as the streaming reader hands it over.
            return Ok(Self::bare(
                input.strip_prefix("\u{feff}".as_bytes()).unwrap_or(input),
            ));
        }
        let mut envelope = Envelope::empty();
        envelope.render_annotations = options.render_annotations;
        let mut others = Vec::new();
        if looks_like_json(&head[..head.len().min(SNIFF)]) {
            envelope.syntax = Some(Syntax::Json);
            // One value, or a sequence of them (`jq -c`, `kubectl get -w -o json`).
            let docs = serde_json::Deserializer::from_str(text)
                .into_iter::<Doc<'a>>()
                .collect::<Result<Vec<_>, _>>()
                .map_err(|e| json_error(&e, text.as_bytes(), 0))?;
            // A sequence holds objects, as the stream reads one.
            if docs.len() > 1 && docs.iter().any(|d| matches!(d, Doc::Other(_))) {
                return Err(Error::Syntax {
                    syntax: Syntax::Json,
                    message: "a sequence of JSON values holds objects only".to_owned(),
                    at: None,
                });
            }
            // Bare Ignition, unless it has `items` (then a list, as the stream reads it).
            if let [Doc::Object(object)] = docs.as_slice()
                && object.ignition.is_some()
                && object.items.is_none()
            {
                return Ok(Self::bare(
                    input.strip_prefix("\u{feff}".as_bytes()).unwrap_or(input),
                ));
            }
            let mut index = 0;
            for doc in docs {
                envelope.add(doc, &mut index, &mut others);
            }
        } else {
            envelope.syntax = Some(Syntax::Yaml);
            let docs: Vec<Doc<'a>> =
                serde_saphyr::from_str_multiple_with_options(text, yaml_options(text, options))
                    .map_err(|e| yaml_error(&e, text, 0))?;
            let mut index = 0;
            for doc in docs {
                envelope.add(doc, &mut index, &mut others);
            }
        }
        if envelope.secrets.is_empty() {
            return Err(no_secret_error(
                envelope.skipped_secrets,
                envelope.missing_value.take(),
                others,
            ));
        }
        locate(&mut envelope.secrets, input, 1, None);
        Ok(envelope)
    }

    /// An envelope with nothing in it yet.
    pub(crate) fn empty() -> Self {
        Envelope {
            syntax: None,
            secrets: Vec::new(),
            skipped_secrets: 0,
            skipped_objects: 0,
            missing_value: None,
            render_annotations: false,
        }
    }

    fn bare(input: &'a [u8]) -> Self {
        let mut envelope = Envelope::empty();
        envelope.secrets.push(BootstrapSecret {
            id: SecretId::default(),
            labels: Vec::new(),
            secret_type: None,
            value: Stored::Bare(Cow::Borrowed(input)),
            format: None,
            line: None,
            origin: None,
            other_provider: None,
            ignores: None,
        });
        envelope
    }

    pub(crate) fn add(&mut self, doc: Doc<'a>, index: &mut usize, others: &mut Vec<String>) {
        let object = match doc {
            Doc::Object(object) => object,
            Doc::Other(what) => {
                others.push(what.to_owned());
                self.skipped_objects += 1;
                *index += 1;
                return;
            }
        };
        let RawObject {
            kind,
            metadata,
            secret_type,
            data,
            string_data,
            items,
            ignition: _,
        } = *object;
        let kind = kind.map(|k| k.0);
        // An object with `items` is read as the list of them, whatever its `kind` says (as the
        // streaming reader, which hands over the items before it reads the rest, must).
        if let Some(items) = items {
            for item in items {
                self.add(item, index, others);
            }
            return;
        }
        match kind.as_deref() {
            Some(k) if k == "List" || k.ends_with("List") => return,
            Some("Secret") => {}
            other => {
                others.push(match other {
                    Some(k) => format!("kind: {}", shorten(k, 40)),
                    None => "an object without `kind`".to_owned(),
                });
                self.skipped_objects += 1;
                *index += 1;
                return;
            }
        }
        let metadata = metadata.unwrap_or_default();
        let id = SecretId {
            namespace: metadata.namespace.map(|s| s.0.into_owned()),
            name: metadata.name.map(|s| s.0.into_owned()),
            index: *index,
        };
        *index += 1;
        let pick = |key: &str| -> Option<Stored<'a>> {
            // `stringData` wins over `data`, as the API server merges it.
            if let Some(v) = string_data.as_ref().and_then(|p| p.get(key)) {
                return Some(Stored::Plain(v.clone()));
            }
            data.as_ref()
                .and_then(|p: &Pairs<'a>| p.get(key))
                .map(|v| Stored::Base64(v.clone()))
        };
        if secret_type.as_ref().is_some_and(|t| never_bootstrap(&t.0)) {
            // A machine plan: never read as a payload.
            self.skipped_secrets += 1;
            return;
        }
        let Some(value) = pick("value") else {
            self.skipped_secrets += 1;
            self.missing_value = Some(id);
            return;
        };
        let format = pick("format");
        if format.is_none() && !looks_like_userdata(&value) {
            // A `value` without `format` that is not user data: CAPRKE2's `<cluster>-token`
            // Secret, or another Secret that happens to use the key.
            self.skipped_secrets += 1;
            return;
        }
        let labels = metadata
            .labels
            .map(|l| l.0.into_iter().map(|(k, v)| (k.0, v.0)).collect())
            .unwrap_or_default();
        let ignores = metadata
            .annotations
            .as_ref()
            .filter(|a| !a.ignore.is_empty())
            .map(|a| {
                let object = match (&id.namespace, &id.name) {
                    (Some(ns), Some(name)) => format!("Secret {ns}/{name}"),
                    (None, Some(name)) => format!("Secret {name}"),
                    _ => "Secret".to_owned(),
                };
                Arc::new(Ignores::from_annotations(
                    a.ignore.iter().map(|(k, v)| (k.0.as_ref(), v.0.as_ref())),
                    &object,
                ))
            });
        let origin = match metadata.annotations {
            Some(a) if self.render_annotations => Origin::from_annotations(
                a.findings.as_ref().map(|s| s.0.as_ref()),
                a.rendered_from.as_ref().map(|s| s.0.as_ref()),
            )
            .map(Arc::new),
            _ => None,
        };
        self.secrets.push(BootstrapSecret {
            id,
            labels,
            secret_type: secret_type.map(|s| s.0),
            value,
            format,
            line: None,
            origin,
            other_provider: metadata
                .owner_references
                .iter()
                .flatten()
                .find_map(other_provider),
            ignores,
        });
    }

    /// The one bootstrap Secret `selector` picks (with the default selector: the only one).
    ///
    /// # Errors
    /// [`Error::SecretNotFound`] when it picks none, [`Error::Ambiguous`] when it picks several.
    pub fn select(&self, selector: &Selector) -> Result<&BootstrapSecret<'a>, Error> {
        let matches: Vec<&BootstrapSecret<'a>> = self
            .secrets
            .iter()
            .filter(|s| selector.matches(s))
            .collect();
        match matches.as_slice() {
            [one] => Ok(one),
            [] => Err(Error::SecretNotFound {
                wanted: selector.to_string(),
                available: self.secrets.len(),
            }),
            many => Err(Error::Ambiguous {
                count: many.len(),
                names: shorten(
                    &many
                        .iter()
                        .map(|s| s.id.to_string().replace("Secret ", ""))
                        .collect::<Vec<_>>()
                        .join(", "),
                    200,
                ),
            }),
        }
    }
}

/// The kind of an owner that is another bootstrap provider's config.
fn other_provider(owner: &raw::OwnerRef<'_>) -> Option<String> {
    let group = owner.api_version.as_ref()?.0.split('/').next()?;
    let kind = owner.kind.as_ref()?.0.as_ref();
    (group == "bootstrap.cluster.x-k8s.io" && kind != "RKE2Config" && !kind.is_empty())
        .then(|| shorten(kind, 60))
}

/// Sets each Secret's line from where its value lies in `text`, whose first line is
/// `first_line`; a value not found in `text` (the parser copied it) gets `fallback`.
pub(crate) fn locate(
    secrets: &mut [BootstrapSecret<'_>],
    text: &[u8],
    first_line: u64,
    fallback: Option<u64>,
) {
    let base = text.as_ptr() as usize;
    let lines = |bytes: &[u8]| memchr::memchr_iter(b'\n', bytes).count() as u64;
    // Values come in input order: count each stretch of text once.
    let (mut from, mut line) = (0usize, first_line);
    for secret in secrets {
        let at = match &secret.value {
            Stored::Base64(Cow::Borrowed(s)) | Stored::Plain(Cow::Borrowed(s)) => {
                (s.as_ptr() as usize).checked_sub(base)
            }
            _ => None,
        }
        .filter(|&at| at <= text.len());
        secret.line = match at {
            Some(at) if at >= from => {
                line += lines(&text[from..at]);
                from = at;
                Some(line)
            }
            Some(at) => Some(first_line + lines(&text[..at])),
            None => secret.line.or(fallback),
        };
    }
}

/// The error for an input in which no bootstrap Secret was found.
fn no_secret_error(
    skipped_secrets: usize,
    missing_value: Option<SecretId>,
    mut others: Vec<String>,
) -> Error {
    if let (1, Some(secret)) = (skipped_secrets, missing_value) {
        return Error::MissingValue { secret };
    }
    if skipped_secrets > 0 {
        return Error::NoBootstrapSecret {
            secrets: skipped_secrets,
        };
    }
    others.dedup();
    let found = if others.is_empty() {
        "it is empty".to_owned()
    } else {
        others.join(", ")
    };
    Error::NotASecret { found }
}

/// Whether a stored value starts like user data (gzip, cloud-init text, or JSON).
fn looks_like_userdata(value: &Stored<'_>) -> bool {
    let head: Vec<u8> = match value {
        Stored::Base64(text) => {
            let compact: String = text
                .chars()
                .filter(|c| !c.is_ascii_whitespace())
                .take(64)
                .collect();
            // Not base64 (and no byte count to cut at a character): reported when the value
            // is decoded.
            if !compact.is_ascii() {
                return true;
            }
            let usable = compact.len() / 4 * 4;
            match b64::decode(&compact[..usable]) {
                Ok(bytes) => bytes,
                // Invalid base64 is reported when the value is decoded.
                Err(_) => return true,
            }
        }
        Stored::Plain(text) => text.as_bytes().iter().take(48).copied().collect(),
        Stored::Bare(_) | Stored::Broken(_) => return true,
    };
    if gzip::is_gzip(&head) {
        return true;
    }
    let text = String::from_utf8_lossy(&head);
    let text = text.trim_start();
    text.starts_with('{') || is_cloud_init_text(text)
}

/// Whether a text that starts with `{` or `[` is JSON rather than YAML flow style
/// (`{apiVersion: v1, …}`): a JSON object's first key is quoted.
pub(crate) fn looks_like_json(text: &[u8]) -> bool {
    let mut rest = text;
    loop {
        let trimmed = rest.trim_ascii_start();
        match trimmed.first() {
            Some(b'{') => {
                let inner = trimmed[1..].trim_ascii_start();
                return matches!(inner.first(), Some(b'"' | b'}') | None);
            }
            Some(b'[') => {
                let inner = trimmed[1..].trim_ascii_start();
                match inner.first() {
                    Some(b'{' | b'[') => rest = inner,
                    Some(b) => {
                        return matches!(b, b']' | b'"' | b'0'..=b'9' | b'-' | b't' | b'f' | b'n');
                    }
                    None => return true,
                }
            }
            _ => return false,
        }
    }
}

/// Whether text is cloud-init user data rather than a Kubernetes object.
pub(crate) fn is_cloud_init_text(text: &str) -> bool {
    [
        "#cloud-config",
        "## template:",
        "#!",
        "#include",
        "Content-Type:",
        "#cloud-boothook",
        "#part-handler",
        "#upstart-job",
    ]
    .iter()
    .any(|prefix| text.starts_with(prefix))
}

/// How many bytes of an input, past its leading whitespace, both readers look at to tell bare
/// user data from an envelope (so that they decide alike).
pub(crate) const SNIFF: usize = 4096;

/// Whether an input that starts with `head` (leading whitespace and byte-order mark removed) is
/// bare user data: gzip, cloud-init's own text, or prose. Only the first [`SNIFF`] bytes count.
pub(crate) fn is_bare_head(head: &[u8]) -> bool {
    let head = &head[..head.len().min(SNIFF)];
    if gzip::is_gzip(head) {
        return true;
    }
    let text = match std::str::from_utf8(head) {
        Ok(text) => Cow::Borrowed(text),
        // A character cut by the end of the window.
        Err(e) if e.error_len().is_none() => {
            Cow::Borrowed(std::str::from_utf8(&head[..e.valid_up_to()]).unwrap_or_default())
        }
        Err(_) => String::from_utf8_lossy(head),
    };
    is_cloud_init_text(&text) || is_plain_text(&text)
}

/// Whether a text is prose or a blob rather than YAML or JSON: its first line that is not blank
/// or a comment is no mapping entry (`key: value`, `key:`), sequence item, flow collection,
/// directive, document marker or quoted scalar. Such input is bare user data (cloud-init treats
/// it as a part it does not run), reported as such instead of "no Secret".
pub(crate) fn is_plain_text(text: &str) -> bool {
    if text.contains('\u{fffd}') {
        return false;
    }
    let Some(first) = text
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty() && !l.starts_with('#'))
    else {
        return false;
    };
    !(first.starts_with(['-', '[', '{', '%', '"', '\'', '?', '&', '*', '!', '|', '>'])
        || first.contains(": ")
        || first.ends_with(':')
        || first.starts_with("..."))
}

/// Parser options for a YAML text: budgets scaled to its length, depth and aliases strict.
pub(crate) fn yaml_options(text: &str, options: &DecodeOptions) -> serde_saphyr::Options {
    // Scale the parser's budget with the input; keep depth and aliases strict.
    let mut budget = serde_saphyr::Budget::default();
    // Scaled to the larger of the text and the largest object, so that an object streamed alone
    // gets the budget it gets inside its whole input.
    let len = text.len().max(
        usize::try_from(options.max_object)
            .unwrap_or(usize::MAX)
            .min(1 << 30),
    );
    let scale = len / 64 + 1;
    budget.max_documents = budget.max_documents.max(len / 256 + 16);
    budget.max_events = budget.max_events.max(scale * 4);
    budget.max_nodes = budget.max_nodes.max(scale * 2);
    budget.max_total_scalar_bytes = budget.max_total_scalar_bytes.max(len + 1024);
    budget.max_depth = options.max_depth;
    budget.max_aliases = 1_000;
    budget.max_anchors = 1_000;
    // The ratio of aliases to anchors differs between an object and its whole input; the
    // replay limits bound what aliases expand to either way.
    budget.enforce_alias_anchor_ratio = false;
    let mut yaml = serde_saphyr::Options::default();
    yaml.budget = Some(budget);
    yaml.with_snippet = false;
    yaml
}

/// A YAML parse error in `text`; `line_offset` places it within the whole input.
pub(crate) fn yaml_error(e: &serde_saphyr::Error, text: &str, line_offset: u64) -> Error {
    Error::Syntax {
        syntax: Syntax::Yaml,
        message: key_message(
            crate::codec::text::parser_message(&e.to_string()),
            text,
            e.location().map(|l| l.line() as usize),
        ),
        at: e.location().map(|l| Position {
            line: l.line() + line_offset,
            column: l.column(),
            offset: if line_offset == 0 {
                l.span().byte_offset()
            } else {
                None
            },
        }),
    }
}

/// The reader's message, or, when it refused a key that is not a string (null, a mapping, a
/// list: an object's keys are names), a sentence naming the mapping that key is in.
pub(crate) fn key_message(message: String, text: &str, line: Option<usize>) -> String {
    use crate::codec::text::{COLLECTION_FOR_STRING, NULL_FOR_STRING};
    let unsubstituted = line
        .and_then(|l| text.lines().nth(l.checked_sub(1)?))
        .is_some_and(|l| l.contains("${"));
    if unsubstituted {
        // The variables of a template (`${CLUSTER_NAME}`) do not read as YAML everywhere.
        return format!(
            "{message} (that line holds a ${{…}} variable: substitute the template's variables first, with clusterctl generate cluster or envsubst)"
        );
    }
    let null = if message.starts_with(NULL_FOR_STRING) {
        true
    } else if message.starts_with(COLLECTION_FOR_STRING) {
        false
    } else {
        return message;
    };
    let problems = crate::codec::tree::key_problems(text);
    let found = problems
        .iter()
        .find(|p| p.null == null && line.is_some() && p.line == line)
        .or_else(|| problems.iter().find(|p| p.null == null));
    let Some(problem) = found else {
        return message;
    };
    let field = if problem.field.is_empty() {
        "the object".to_owned()
    } else {
        problem.field.clone()
    };
    if null {
        format!(
            "{field} has a null key (empty, ~ or null: what a variable substituted by nothing leaves), and the keys of an object are strings"
        )
    } else {
        format!(
            "{field} has a key that is a mapping or a list, and the keys of an object are strings"
        )
    }
}

/// A JSON parse error in `text`, which starts at `base` bytes into the whole input.
pub(crate) fn json_error(e: &serde_json::Error, text: &[u8], base: u64) -> Error {
    let within: usize = text
        .split_inclusive(|&b| b == b'\n')
        .take(e.line().saturating_sub(1))
        .map(<[u8]>::len)
        .sum::<usize>()
        + e.column().saturating_sub(1);
    let (line, column) = if base == 0 {
        (e.line() as u64, e.column() as u64)
    } else {
        (0, 0)
    };
    Error::Syntax {
        syntax: Syntax::Json,
        message: crate::codec::text::parser_message(&e.to_string()),
        at: (e.line() > 0).then_some(Position {
            line,
            column,
            offset: Some(base + within as u64),
        }),
    }
}

#[cfg(test)]
mod tests;
