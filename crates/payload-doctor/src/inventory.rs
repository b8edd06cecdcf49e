//! What the doctor reads: the objects of the kinds CAPRKE2's controllers read, from dumps or
//! from kubectl one kind at a time; which kinds could not be read, and why; what each bootstrap
//! Secret's payload says (read with the library, kept as facts, never as its value).

use std::collections::{BTreeMap, HashMap};

use rke2_payload::{DecodeOptions, Envelope, InspectOptions, Inspector, Role};
use serde_json::Value;

use crate::DoctorError;
use crate::view;

/// A kind the doctor reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum Kind {
    /// `clusters.cluster.x-k8s.io`.
    Cluster,
    /// `machines.cluster.x-k8s.io`.
    Machine,
    /// `rke2controlplanes.controlplane.cluster.x-k8s.io`.
    Rke2ControlPlane,
    /// `rke2configs.bootstrap.cluster.x-k8s.io`.
    Rke2Config,
    /// `secrets` (the bootstrap Secrets and the cluster's `-token`, `-ca`, `-kubeconfig`).
    Secret,
    /// `providers.clusterctl.cluster.x-k8s.io`, clusterctl's record of what it installed.
    Provider,
}

impl Kind {
    /// Every kind, in the order they are read.
    pub const ALL: [Kind; 6] = [
        Kind::Cluster,
        Kind::Rke2ControlPlane,
        Kind::Machine,
        Kind::Rke2Config,
        Kind::Secret,
        Kind::Provider,
    ];

    /// The resource kubectl is asked for (fully qualified, so that no other group's kind of
    /// the same name answers).
    ///
    /// ```
    /// assert_eq!(payload_doctor::Kind::Machine.resource(), "machines.cluster.x-k8s.io");
    /// ```
    pub fn resource(self) -> &'static str {
        match self {
            Kind::Cluster => "clusters.cluster.x-k8s.io",
            Kind::Machine => "machines.cluster.x-k8s.io",
            Kind::Rke2ControlPlane => "rke2controlplanes.controlplane.cluster.x-k8s.io",
            Kind::Rke2Config => "rke2configs.bootstrap.cluster.x-k8s.io",
            Kind::Secret => "secrets",
            Kind::Provider => "providers.clusterctl.cluster.x-k8s.io",
        }
    }

    /// The object kind (`RKE2ControlPlane`).
    pub fn kind(self) -> &'static str {
        match self {
            Kind::Cluster => "Cluster",
            Kind::Machine => "Machine",
            Kind::Rke2ControlPlane => "RKE2ControlPlane",
            Kind::Rke2Config => "RKE2Config",
            Kind::Secret => "Secret",
            Kind::Provider => "Provider",
        }
    }

    /// Whether a selection of namespace or cluster applies to it: clusterctl's `Provider`s
    /// live in the providers' namespaces, and are read in all of them.
    pub fn follows_selection(self) -> bool {
        self != Kind::Provider
    }

    /// The kind of a parsed object, by its group and kind.
    fn of(object: &Value) -> Option<Kind> {
        let api = view::str_at(object, &["apiVersion"]).unwrap_or("");
        let group = api.rsplit_once('/').map_or("", |(g, _)| g);
        let kind = view::str_at(object, &["kind"])?;
        Some(match (group, kind) {
            ("cluster.x-k8s.io", "Cluster") => Kind::Cluster,
            ("cluster.x-k8s.io", "Machine") => Kind::Machine,
            ("controlplane.cluster.x-k8s.io", "RKE2ControlPlane") => Kind::Rke2ControlPlane,
            ("bootstrap.cluster.x-k8s.io", "RKE2Config") => Kind::Rke2Config,
            ("", "Secret") => Kind::Secret,
            ("clusterctl.cluster.x-k8s.io", "Provider") => Kind::Provider,
            _ => return None,
        })
    }
}

/// Why a kind was not read.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Unread {
    /// The user may not read it (RBAC): kubectl's sentence.
    Refused(String),
    /// The API server does not serve it (its CRD is not installed): kubectl's sentence.
    NotServed(String),
}

impl Unread {
    /// What kubectl said.
    pub fn sentence(&self) -> &str {
        match self {
            Unread::Refused(s) | Unread::NotServed(s) => s,
        }
    }
}

/// What a bootstrap Secret's payload says, as far as the chain needs it. No secret is kept:
/// the token only as its SHA-256.
#[derive(Debug, Clone, Default)]
pub(crate) struct PayloadFacts {
    pub(crate) role: Option<Role>,
    /// `server` of `config.yaml`.
    pub(crate) server: Option<String>,
    pub(crate) token_sha256: Option<String>,
    /// `provider-id=` of `kubelet-arg`.
    pub(crate) provider_id: Option<String>,
    pub(crate) cloud_provider: Option<String>,
    /// Why it could not be read, if it could not.
    pub(crate) unreadable: Option<String>,
}

/// The secret values an inventory keeps to mask them: zeroed on drop, and never in `Debug`
/// (which says how many there are).
#[derive(Default)]
pub(crate) struct Secrets(Vec<zeroize::Zeroizing<String>>);

impl Secrets {
    pub(crate) fn iter(&self) -> impl Iterator<Item = &str> {
        self.0.iter().map(|s| s.as_str())
    }
}

impl std::fmt::Debug for Secrets {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "<{} secret value(s)>", self.0.len())
    }
}

/// The objects the doctor reads, by kind, and what it knows of the kinds it could not read.
/// Its `Debug` shows counts, never an object: the objects are the input, Secrets included.
#[derive(Default)]
pub struct Inventory {
    pub(crate) objects: BTreeMap<Kind, Vec<Value>>,
    /// The kinds read through kubectl (present even when none came back).
    pub(crate) read: Vec<Kind>,
    pub(crate) unread: BTreeMap<Kind, Unread>,
    /// Bootstrap payloads' facts, by namespace and name of their Secret.
    pub(crate) payloads: HashMap<(String, String), PayloadFacts>,
    /// Objects of other kinds, passed over.
    pub(crate) others: usize,
    /// Infrastructure objects (of an `infrastructure.cluster.x-k8s.io` group): where a
    /// Machine's bootstrap data goes.
    pub(crate) infrastructure: Vec<Value>,
    /// The secret values read (tokens: of the payloads, of the `-token` Secrets), kept in
    /// memory only to mask them wherever input text reaches the diagnosis; zeroed on drop.
    pub(crate) secrets: Secrets,
    decode: DecodeOptions,
}

impl std::fmt::Debug for Inventory {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let counts: BTreeMap<&str, usize> = self
            .objects
            .iter()
            .map(|(kind, objects)| (kind.kind(), objects.len()))
            .collect();
        f.debug_struct("Inventory")
            .field("objects", &counts)
            .field("read", &self.read)
            .field("unread", &self.unread)
            .field("payloads", &self.payloads.len())
            .field("infrastructure", &self.infrastructure.len())
            .field("others", &self.others)
            .field("secrets", &self.secrets)
            .finish_non_exhaustive()
    }
}

impl Inventory {
    /// An empty inventory whose payloads are read with `decode` (the limits).
    pub fn new(decode: DecodeOptions) -> Self {
        Inventory {
            decode,
            ..Inventory::default()
        }
    }

    /// Reads a dump (`kubectl get … -o yaml|json`: a List, YAML documents, a JSON sequence,
    /// one object) named `name` for messages: its objects of the doctor's kinds are kept, the
    /// rest counted; each bootstrap Secret's payload is read for the facts the chain needs.
    ///
    /// ```
    /// use payload_doctor::{Inventory, Kind};
    ///
    /// let mut inventory = Inventory::new(Default::default());
    /// inventory.read("dump.yaml", b"apiVersion: cluster.x-k8s.io/v1beta2\nkind: Cluster\nmetadata: {name: a, namespace: ns}\n")?;
    /// assert_eq!(inventory.count(Kind::Cluster), 1);
    /// # Ok::<(), payload_doctor::DoctorError>(())
    /// ```
    ///
    /// # Errors
    /// When the input does not read ([`DoctorError::Input`]).
    pub fn read(&mut self, name: &str, bytes: &[u8]) -> Result<(), DoctorError> {
        let input = |source| DoctorError::Input {
            input: name.to_owned(),
            source: Box::new(source),
        };
        let objects = rke2_payload::objects(bytes).map_err(input)?;
        // The Secrets' reader parses the input again: only when it holds a bootstrap Secret (of
        // six `kubectl get`s, one does).
        let bootstrap = objects
            .iter()
            .any(|o| rke2_payload::classify(o) == rke2_payload::ObjectClass::BootstrapSecret);
        for object in objects {
            self.keep_token(&object);
            match Kind::of(&object) {
                Some(kind) => self.objects.entry(kind).or_default().push(object),
                None if is_infrastructure(&object) => self.infrastructure.push(object),
                None => self.others += 1,
            }
        }
        if !bootstrap {
            return Ok(());
        }
        let envelope = match Envelope::parse(bytes, &self.decode) {
            Ok(envelope) => envelope,
            Err(e) if e.holds_no_bootstrap_secret() => return Ok(()),
            Err(e) => return Err(input(e)),
        };
        // The tokens are read to be masked, never to be shown.
        let inspector = Inspector::new(
            InspectOptions::new()
                .with_decode(self.decode.clone())
                .with_show_secrets(true),
        );
        for secret in &envelope.secrets {
            let (Some(namespace), Some(secret_name)) = (secret.namespace(), secret.name()) else {
                continue;
            };
            let facts = match inspector.inspect(secret) {
                Ok(report) => {
                    let p = &report.payload;
                    for token in [&p.rke2.token, &p.rke2.agent_token].into_iter().flatten() {
                        self.keep_secret(token);
                    }
                    PayloadFacts {
                        role: p.role,
                        server: p.rke2.server.clone(),
                        token_sha256: p.rke2.token_sha256.clone(),
                        provider_id: p.rke2.provider_id.clone(),
                        cloud_provider: p.rke2.cloud_provider_name.clone(),
                        unreadable: p.unreadable().map(|f| f.message.clone()),
                    }
                }
                Err(e) => PayloadFacts {
                    unreadable: Some(e.to_string()),
                    ..PayloadFacts::default()
                },
            };
            self.payloads
                .insert((namespace.to_owned(), secret_name.to_owned()), facts);
        }
        Ok(())
    }

    /// Keeps the token of a `<cluster>-token` Secret (its `value`), to mask it.
    fn keep_token(&mut self, object: &Value) {
        if Kind::of(object) != Some(Kind::Secret) || !view::name(object).ends_with("-token") {
            return;
        }
        let value = view::str_at(object, &["data", "value"])
            .and_then(rke2_payload::codec::decode_base64)
            .map(|b| String::from_utf8_lossy(&b).into_owned())
            .or_else(|| view::str_at(object, &["stringData", "value"]).map(str::to_owned));
        if let Some(value) = value {
            self.keep_secret(&value);
        }
    }

    fn keep_secret(&mut self, value: &str) {
        let value = value.trim();
        if value.len() >= 4 && !self.secrets.iter().any(|s| s == value) {
            self.secrets
                .0
                .push(zeroize::Zeroizing::new(value.to_owned()));
        }
    }

    /// `text` with every secret value read masked, the longest first (a token inside a
    /// longer one never leaves a part of the longer one shown).
    pub(crate) fn mask(&self, text: &mut String) {
        let mut secrets: Vec<&str> = self.secrets.iter().collect();
        secrets.sort_by_key(|s| std::cmp::Reverse(s.len()));
        for secret in secrets {
            if text.contains(secret) {
                *text = text.replace(secret, rke2_payload::PLACEHOLDER);
            }
        }
    }

    /// Reads what kubectl wrote for `kind` (`kubectl get <kind> -o json`): as [`Inventory::read`],
    /// and the kind counts as read even when no object came back.
    ///
    /// # Errors
    /// As [`Inventory::read`].
    pub fn read_kind(&mut self, kind: Kind, name: &str, bytes: &[u8]) -> Result<(), DoctorError> {
        self.read(name, bytes)?;
        self.read.push(kind);
        Ok(())
    }

    /// Records that `kind` could not be read, and why: the links that need it say unknown.
    pub fn unread(&mut self, kind: Kind, why: Unread) {
        self.unread.insert(kind, why);
    }

    /// How many objects of `kind` were read.
    pub fn count(&self, kind: Kind) -> usize {
        self.objects.get(&kind).map_or(0, Vec::len)
    }

    /// How many objects of other kinds were passed over.
    pub fn others(&self) -> usize {
        self.others
    }

    pub(crate) fn of(&self, kind: Kind) -> &[Value] {
        self.objects.get(&kind).map_or(&[], Vec::as_slice)
    }

    /// Why `kind` cannot be relied on: refused, not served, or (in a dump) absent. `None` when
    /// it was read, or objects of it are in the input.
    pub(crate) fn missing(&self, kind: Kind) -> Option<String> {
        if let Some(why) = self.unread.get(&kind) {
            return Some(format!(
                "{} could not be read: {}",
                kind.resource(),
                why.sentence()
            ));
        }
        if self.read.contains(&kind) || self.count(kind) > 0 {
            return None;
        }
        Some(format!("no {} object in the input", kind.kind()))
    }
}

/// Whether an object is of an infrastructure provider's group
/// (`infrastructure.cluster.x-k8s.io`, and the providers' own `infrastructure.*` groups).
fn is_infrastructure(object: &Value) -> bool {
    view::str_at(object, &["apiVersion"])
        .and_then(|a| a.rsplit_once('/'))
        .is_some_and(|(group, _)| group.starts_with("infrastructure."))
}

/// What kubectl's standard error says of a kind it did not read: a refusal (RBAC: the server's
/// `Forbidden`), a kind the server does not serve, or `None` for any other failure (no server,
/// no credentials), which is the command's, not the kind's.
///
/// ```
/// use payload_doctor::{Unread, kubectl_unread};
///
/// let said = "Error from server (Forbidden): secrets is forbidden: User \"dev\" cannot list resource \"secrets\"";
/// assert!(matches!(kubectl_unread(said), Some(Unread::Refused(_))));
/// assert!(kubectl_unread("The connection to the server localhost:8080 was refused").is_none());
/// ```
pub fn kubectl_unread(stderr: &str) -> Option<Unread> {
    let line = stderr
        .lines()
        .map(str::trim)
        .rfind(|l| !l.is_empty())?
        .to_owned();
    if line.contains("(Forbidden)") || line.contains("is forbidden:") {
        Some(Unread::Refused(line))
    } else if line.contains("the server doesn't have a resource type")
        || line.contains("(NotFound)")
    {
        Some(Unread::NotServed(line))
    } else {
        None
    }
}
