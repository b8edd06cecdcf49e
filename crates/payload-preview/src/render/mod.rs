//! A preview of the bootstrap Secrets CAPRKE2 will write, from the manifests alone: `Cluster`,
//! `RKE2ControlPlane`, `RKE2ConfigTemplate` / `RKE2Config`, `MachineDeployment` /
//! `MachinePool` and the `Secret`s and `ConfigMap`s they reference.
//!
//! It follows CAPRKE2 v0.25's rendering: the controller's choice of role (the first control
//! plane, a joining one, a worker), `config.yaml` and `registries.yaml` in its key order, the
//! files it generates from referenced objects, the cloud-config template and the Ignition
//! config, and `gzipUserData` through the encoder. What only exists at run time is generated or
//! taken from the options: the join token (the `<cluster>-token` Secret when the input has it),
//! the four CA key pairs of the first control plane (the `<cluster>-ca`, `-cca`, `-peer-etcd`,
//! `-etcd` Secrets when the input has them), the join server for the IP-based registration
//! methods. A referenced object that is not in the input is replaced by a placeholder of a
//! realistic size, with a finding that names it.
//!
//! The manifest checks of the requirements guide run on the same objects
//! ([`Preview::findings`]); every rendered Secret carries the findings that concern it in an
//! annotation, so `lint` reports them when it reads the preview.

mod answer;
pub use answer::{Answer, answer};
mod door;
pub use door::{Door, DoorError, Named, open};
mod butane;
mod cis;
mod cluster;
mod jobs;
mod machine;
mod names;
mod pki;
mod resolve;
mod rke2;
mod userdata;
mod yaml;

use rand::rngs::StdRng;
use rand::{Rng as _, RngExt as _, SeedableRng as _};
use rke2_payload::{
    CLUSTER_NAME_LABEL, CLUSTER_SECRET_TYPE, Check, DecodeOptions, FINDINGS_ANNOTATION, Finding,
    Format, RENDERED_FROM_ANNOTATION, Role,
};
use serde_json::{Value, json};
use sha2::Digest as _;

use crate::manifests::{Manifests, Object};

pub use pki::KeyError;

/// The annotation that marks a rendered Secret as a preview and says what was generated.
pub const PREVIEW_ANNOTATION: &str = "rke2-payload/preview";
/// The annotation that names the object a rendered Secret was made from.
pub const SOURCE_ANNOTATION: &str = "rke2-payload/source";

/// The largest placeholder (16 MiB): a larger size is cut to it.
pub const MAX_PLACEHOLDER: usize = 16 << 20;

/// Which bootstrap Secrets to render.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum RoleChoice {
    /// The first control plane, a joining one when the control plane has more than one
    /// replica, and one worker per MachineDeployment, MachinePool or RKE2Config.
    #[default]
    All,
    /// The first control plane only.
    Init,
    /// A joining control plane only (whatever the replica count).
    Join,
    /// The workers only.
    Worker,
}

/// What `render` needs besides the manifests. Its `Debug` output never shows the token.
#[derive(Clone, Default)]
#[non_exhaustive]
pub struct RenderOptions {
    /// Which Secrets.
    pub role: RoleChoice,
    /// The join server's host (or IP) for the IP-based registration methods, or to override
    /// what the manifests say.
    pub server: Option<String>,
    /// The join token, instead of the `<cluster>-token` Secret or a generated one.
    pub token: Option<String>,
    /// Makes the generated token and CA key pairs the same on every run (and "now" of the CA
    /// validity 2026-01-01). The names and placeholders need none: they are a function of the
    /// input, the same on every render of it.
    pub seed: Option<u64>,
    /// The size of every placeholder for an object that is not in the input (default: a
    /// realistic size for what it stands in for; at most [`MAX_PLACEHOLDER`]).
    pub placeholder_bytes: Option<usize>,
    /// "Now", in seconds since the epoch, for the CA validity (default: the clock; with a seed,
    /// 2026-01-01T00:00:00Z).
    pub now: Option<i64>,
    /// One CA pair made once per process and reused (the fuzz targets: key generation would
    /// take most of each run).
    pub(crate) reuse_keys: bool,
}

impl RenderOptions {
    /// Options that render everything with generated values.
    pub fn new() -> Self {
        Self::default()
    }

    /// With `role`.
    pub fn with_role(mut self, role: RoleChoice) -> Self {
        self.role = role;
        self
    }

    /// With a join server host.
    pub fn with_server(mut self, server: impl Into<String>) -> Self {
        self.server = Some(server.into());
        self
    }

    /// With a join token.
    pub fn with_token(mut self, token: impl Into<String>) -> Self {
        self.token = Some(token.into());
        self
    }

    /// With a seed for the generated token and CA key pairs.
    pub fn with_seed(mut self, seed: u64) -> Self {
        self.seed = Some(seed);
        self
    }

    /// With one size for every placeholder.
    pub fn with_placeholder_bytes(mut self, bytes: usize) -> Self {
        self.placeholder_bytes = Some(bytes);
        self
    }

    /// With "now" (seconds since the epoch) for the CA validity.
    pub fn with_now(mut self, now: i64) -> Self {
        self.now = Some(now);
        self
    }
}

/// One input file (or stdin): its name, for messages, and its bytes. Its `Debug` output shows
/// the name and the length, never the bytes (manifests hold Secrets).
#[derive(Clone, Copy)]
pub struct Source<'a> {
    /// The file name (`-` for stdin).
    pub name: &'a str,
    /// Its content: YAML documents, a JSON object or a `List`.
    pub bytes: &'a [u8],
}

/// Why nothing could be rendered.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RenderError {
    /// An input file does not read as YAML or JSON objects.
    #[error("{source_name}: {message}")]
    Input {
        /// The file.
        source_name: String,
        /// What the parser said (never the input's text).
        message: String,
    },
    /// The input holds no `RKE2ControlPlane`, `MachineDeployment`, `MachinePool` or
    /// `RKE2Config` to render.
    #[error(
        "the input holds no RKE2ControlPlane, MachineDeployment, MachinePool or RKE2Config to render (kinds found: {found})"
    )]
    NothingToRender {
        /// The kinds that were found.
        found: String,
    },
    /// A ClusterClass a topology Cluster uses has an `external` patch, which a runtime
    /// extension computes at run time: the topology cannot be expanded offline.
    #[error(
        "{class} has the external patch {patch}, which a runtime extension computes in the management cluster, so its topology cannot be expanded offline"
    )]
    Unexpandable {
        /// `ClusterClass namespace/name`.
        class: String,
        /// The patch's name.
        patch: String,
    },
    /// The operating system gave no randomness for the generated values.
    #[error("no randomness for the generated token and keys: {0}")]
    Entropy(String),
    /// A CA key pair could not be made.
    #[error(transparent)]
    Key(#[from] KeyError),
}

/// One rendered bootstrap Secret. Its `Debug` output shows what it is and how big, never the
/// user data (it holds the token and, on the first control plane, the CA keys).
#[derive(Clone)]
#[non_exhaustive]
pub struct PreviewSecret {
    /// `metadata.name`: the RKE2Config's name as CAPRKE2 would generate it.
    pub name: String,
    /// `metadata.namespace`.
    pub namespace: String,
    /// The Cluster's name (the `cluster.x-k8s.io/cluster-name` label).
    pub cluster: String,
    /// What the node does.
    pub role: Role,
    /// `cloud-config` or `ignition`.
    pub format: Format,
    /// Whether `gzipUserData` is set.
    pub gzip: bool,
    /// The user data (what the node's first-boot agent reads).
    pub userdata: Vec<u8>,
    /// `data.value`: the user data, gzipped when `gzipUserData` is set.
    pub value: Vec<u8>,
    /// The object it was made from (`RKE2ControlPlane default/demo-control-plane`).
    pub source: String,
    /// What was generated rather than read from the input.
    pub generated: Vec<String>,
    /// The findings that concern it.
    pub findings: Vec<Finding>,
    /// Where the object it was made from is written.
    pub site: Option<rke2_payload::ManifestSite>,
    /// The path its user data takes to the machine, from the infrastructure machine template
    /// (`None` when no template is named or its kind is not in the delivery table).
    pub delivery: Option<rke2_payload::Delivery>,
    /// The checks the object it was made from and its Cluster suppress on it (their
    /// `ignore-check.rke2-payload.io/…` annotations), in that order.
    pub suppressions: Vec<rke2_payload::Suppression>,
}

/// Every rendered Secret and every manifest finding.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct Preview {
    /// The Secrets, one per distinct payload: per Cluster, the first control plane, a joining
    /// one, then the workers.
    pub secrets: Vec<PreviewSecret>,
    /// Every finding about the manifests (each once), including those of objects that were
    /// not rendered.
    pub findings: Vec<Finding>,
    /// The ClusterClasses no Cluster of the input uses (`ClusterClass namespace/name`): checked
    /// on their own (their findings are in `findings`), nothing rendered for them.
    pub classes: Vec<String>,
}

const NAME_ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
const CA_PURPOSES: [(&str, &str, &str); 4] = [
    (
        "ca",
        "/var/lib/rancher/rke2/server/tls/server-ca.crt",
        "/var/lib/rancher/rke2/server/tls/server-ca.key",
    ),
    (
        "cca",
        "/var/lib/rancher/rke2/server/tls/client-ca.crt",
        "/var/lib/rancher/rke2/server/tls/client-ca.key",
    ),
    (
        "peer-etcd",
        "/var/lib/rancher/rke2/server/tls/etcd/peer-ca.crt",
        "/var/lib/rancher/rke2/server/tls/etcd/peer-ca.key",
    ),
    (
        "etcd",
        "/var/lib/rancher/rke2/server/tls/etcd/server-ca.crt",
        "/var/lib/rancher/rke2/server/tls/etcd/server-ca.key",
    ),
];
const LEGACY_ANNOTATION: &str = "controlplane.cluster.x-k8s.io/legacy";
/// The seed of the names a ClusterClass expansion generates: fixed, so that they are a
/// function of the input.
const TOPOLOGY_NAMES_SEED: u64 = 0;
/// 2026-01-01T00:00:00Z: "now" for a seeded render.
const SEEDED_NOW: i64 = 1_767_225_600;
/// A documentation address (RFC 5737) for the join server when only machines would know it.
const PLACEHOLDER_SERVER: &str = "192.0.2.10";

impl std::fmt::Debug for RenderOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RenderOptions")
            .field("role", &self.role)
            .field("server", &self.server)
            .field("token", &self.token.as_ref().map(|_| "<redacted>"))
            .field("seed", &self.seed)
            .field("placeholder_bytes", &self.placeholder_bytes)
            .field("now", &self.now)
            .finish_non_exhaustive()
    }
}

impl std::fmt::Debug for Source<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Source")
            .field("name", &self.name)
            .field("bytes", &self.bytes.len())
            .finish()
    }
}

impl std::fmt::Debug for PreviewSecret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PreviewSecret")
            .field("name", &self.name)
            .field("namespace", &self.namespace)
            .field("cluster", &self.cluster)
            .field("role", &self.role)
            .field("format", &self.format)
            .field("gzip", &self.gzip)
            .field("userdata_bytes", &self.userdata.len())
            .field("value_bytes", &self.value.len())
            .field("source", &self.source)
            .field("generated", &self.generated)
            .field("findings", &self.findings)
            .field("delivery", &self.delivery)
            .finish_non_exhaustive()
    }
}

/// What the admission webhooks refuse when the objects of `previous` (the revision a cluster
/// runs) are updated to those of `current` (`manifest-update-refused`, located at the field of
/// the current object): immutable fields, references that cannot be removed, a topology version
/// that goes down or skips a minor. An object of one revision only is not an update.
///
/// ```
/// use payload_preview::{Source, updates};
///
/// let old = b"apiVersion: cluster.x-k8s.io/v1beta2\nkind: MachineDeployment\nmetadata: {name: md, namespace: ns}\nspec: {clusterName: demo}\n";
/// let new = b"apiVersion: cluster.x-k8s.io/v1beta2\nkind: MachineDeployment\nmetadata: {name: md, namespace: ns}\nspec: {clusterName: other}\n";
/// let found = updates(
///     &[Source { name: "old.yaml", bytes: old }],
///     &[Source { name: "new.yaml", bytes: new }],
/// )?;
/// assert_eq!(found.len(), 1);
/// assert_eq!(found[0].check, rke2_payload::Check::ManifestUpdateRefused);
/// assert_eq!(found[0].manifest.as_ref().and_then(|m| m.line), Some(4));
/// # Ok::<(), payload_preview::RenderError>(())
/// ```
///
/// # Errors
/// [`RenderError::Input`] when a source does not read.
pub fn updates(
    previous: &[Source<'_>],
    current: &[Source<'_>],
) -> Result<Vec<Finding>, RenderError> {
    let (applied, live) = parse_previous(previous)?;
    let current = parse(current)?;
    Ok(crate::manifest_checks::updates::check(
        &applied, &live, &current,
    ))
}

/// The annotation `kubectl apply` keeps the applied manifest in.
const LAST_APPLIED: &str = "kubectl.kubernetes.io/last-applied-configuration";

/// The previous revision's objects: manifests as written, and live objects (`kubectl get -o
/// yaml`) as what was applied when they carry `kubectl apply`'s last-applied annotation (the
/// baseline `apply` compares with); the live objects without it apart, whose fields may have
/// been set by a controller.
fn parse_previous(sources: &[Source<'_>]) -> Result<(Manifests, Manifests), RenderError> {
    let mut applied = Manifests::default();
    let mut live = Manifests::default();
    for source in sources {
        for value in read_objects(source)?.into_iter().filter(Value::is_object) {
            let object = |value: Value| Object::unplaced(source.name, value);
            if rke2_payload::classify(&value) != rke2_payload::ObjectClass::Live {
                applied.objects.push(object(value));
                continue;
            }
            let last = value
                .pointer("/metadata/annotations")
                .and_then(|a| a.get(LAST_APPLIED))
                .and_then(Value::as_str)
                .and_then(|text| serde_json::from_str::<Value>(text).ok())
                .filter(Value::is_object);
            match last {
                Some(last) => applied.objects.push(object(last)),
                None => live.objects.push(object(value)),
            }
        }
    }
    Ok((applied, live))
}

/// The objects of one source, or the error that names it.
fn read_objects(source: &Source<'_>) -> Result<Vec<Value>, RenderError> {
    rke2_payload::objects(source.bytes).map_err(|e| RenderError::Input {
        source_name: rke2_payload::terminal_safe(source.name).into_owned(),
        message: e.to_string(),
    })
}

/// Reads every object of the sources.
fn parse(sources: &[Source<'_>]) -> Result<Manifests, RenderError> {
    let mut out = Manifests::default();
    for source in sources {
        let objects = read_objects(source)?;
        // Places only when the span tree sees the same objects as the reader.
        let places = std::str::from_utf8(source.bytes)
            .ok()
            .and_then(rke2_payload::object_places)
            .filter(|p| p.len() == objects.len());
        let mut places = places.into_iter().flatten();
        for value in objects {
            let places = places.next().map(std::sync::Arc::new);
            // What exists on a cluster is never rendered: a live dump is answered from its
            // Secrets. Secrets and ConfigMaps stay, for the lookups a render makes.
            let live = rke2_payload::classify(&value) == rke2_payload::ObjectClass::Live
                && !matches!(
                    value.get("kind").and_then(Value::as_str),
                    Some("Secret" | "ConfigMap")
                );
            if value.is_object() && !live {
                out.objects.push(Object {
                    source: source.name.to_owned(),
                    value,
                    line: places.as_ref().map(|p| p.first_line()),
                    places,
                    made_for: None,
                    patched: Vec::new(),
                    derived: None,
                });
            }
        }
    }
    Ok(out)
}

/// Whether `bytes` may hold objects `render` reads (`RKE2ControlPlane`, `RKE2ConfigTemplate`,
/// `RKE2Config`, `MachineDeployment`, `MachinePool`, a `ClusterClass` or a Cluster's
/// `topology`): a search for their kind names, cheap
/// enough for the first bytes of any input, that bootstrap Secrets never match (their
/// `ownerReferences` name an `RKE2Config`, never as a `kind: RKE2Config` document of its own).
pub fn may_hold_manifests(prefix: &[u8]) -> bool {
    const KINDS: [&[u8]; 8] = [
        b"RKE2ControlPlane",
        b"ClusterClass",
        // A Cluster's `topology` key (a Secret's `topology.cluster.x-k8s.io/…` labels are not).
        b"topology:",
        b"\"topology\":",
        b"RKE2ConfigTemplate",
        b"MachineDeployment",
        b"MachinePool",
        b"\nkind: RKE2Config\n",
    ];
    KINDS
        .iter()
        .any(|k| memchr::memmem::find(prefix, k).is_some())
        || prefix.starts_with(b"kind: RKE2Config\n")
}

/// Whether `bytes` hold any object `render` renders: how `lint` tells manifests from Secrets.
/// Input that names those kinds but does not parse counts as manifests, so that the parser's
/// message reaches the user.
pub fn holds_manifests(bytes: &[u8]) -> bool {
    if !may_hold_manifests(bytes) {
        return false;
    }
    let Ok(m) = parse(&[Source { name: "-", bytes }]) else {
        return true;
    };
    crate::topology::has_topology(&m)
        || m.objects.iter().any(|o| {
            matches!(
                o.kind(),
                "RKE2ControlPlane" | "RKE2Config" | "MachineDeployment" | "MachinePool"
            )
        })
}

/// What an input holds, as [`sniff_input`] tells: manifests (read whole, to [`render`]), or
/// bootstrap Secrets, still to be streamed from the bytes already read on. Its `Debug` output
/// shows which and how many bytes, never the bytes (manifests hold Secrets).
pub enum Sniffed<R> {
    /// Manifests of objects `render` reads: the whole input.
    Manifests(Vec<u8>),
    /// Anything else: the input from its first byte (what was read, then the rest).
    Secrets(std::io::Chain<std::io::Cursor<Vec<u8>>, R>),
}

impl<R> std::fmt::Debug for Sniffed<R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Sniffed::Manifests(bytes) => f
                .debug_struct("Manifests")
                .field("bytes", &bytes.len())
                .finish(),
            Sniffed::Secrets(_) => f.debug_struct("Secrets").finish_non_exhaustive(),
        }
    }
}

/// Tells manifests from Secrets by the first MiB of `reader` ([`may_hold_manifests`]); only
/// what may be manifests is read whole, up to [`DecodeOptions::max_input`] bytes, and then
/// told by [`holds_manifests`]. `name` names the input in errors.
///
/// ```
/// use std::io::Read as _;
/// use payload_preview::{Sniffed, sniff_input};
/// use rke2_payload::DecodeOptions;
///
/// let secret = &b"{\"kind\": \"Secret\", \"metadata\": {\"name\": \"w\"}}"[..];
/// let Sniffed::Secrets(mut stream) = sniff_input(secret, "w.json", &DecodeOptions::new())? else {
///     panic!("a Secret is not manifests");
/// };
/// let mut text = Vec::new();
/// stream.read_to_end(&mut text).expect("in memory");
/// assert_eq!(text, secret);
/// # Ok::<(), rke2_payload::Error>(())
/// ```
///
/// # Errors
/// [`Error::Io`](rke2_payload::Error::Io) when the input cannot be read,
/// [`Error::InputTooLarge`](rke2_payload::Error::InputTooLarge) when what may be manifests is over
/// the limit.
pub fn sniff_input<R: std::io::Read>(
    mut reader: R,
    name: &str,
    options: &DecodeOptions,
) -> Result<Sniffed<R>, rke2_payload::Error> {
    use std::io::Read as _;
    let io = |error| rke2_payload::Error::Io {
        what: name.to_owned(),
        error,
    };
    let mut prefix = Vec::new();
    (&mut reader)
        .take(1 << 20)
        .read_to_end(&mut prefix)
        .map_err(io)?;
    if !may_hold_manifests(&prefix) {
        return Ok(Sniffed::Secrets(std::io::Cursor::new(prefix).chain(reader)));
    }
    let limit = options.max_input;
    (&mut reader)
        .take(limit.saturating_sub(prefix.len() as u64).saturating_add(1))
        .read_to_end(&mut prefix)
        .map_err(io)?;
    if prefix.len() as u64 > limit {
        return Err(rke2_payload::Error::InputTooLarge {
            what: name.to_owned(),
            limit,
        });
    }
    if holds_manifests(&prefix) {
        Ok(Sniffed::Manifests(prefix))
    } else {
        // The whole input was read: the rest of the chain is empty.
        Ok(Sniffed::Secrets(std::io::Cursor::new(prefix).chain(reader)))
    }
}

/// The bootstrap Secrets CAPRKE2 will write for the manifests of `sources`.
///
/// ```
/// use payload_preview::{RenderOptions, Source, render};
///
/// let manifests = br#"
/// apiVersion: cluster.x-k8s.io/v1beta2
/// kind: Cluster
/// metadata: {name: demo, namespace: default}
/// spec:
///   controlPlaneEndpoint: {host: demo.example.com, port: 6443}
///   controlPlaneRef: {apiGroup: controlplane.cluster.x-k8s.io, kind: RKE2ControlPlane, name: demo-cp}
/// ---
/// apiVersion: controlplane.cluster.x-k8s.io/v1beta2
/// kind: RKE2ControlPlane
/// metadata: {name: demo-cp, namespace: default}
/// spec:
///   version: v1.32.5+rke2r1
///   replicas: 1
/// "#;
/// let preview = render(&[Source { name: "cluster.yaml", bytes: manifests }], &RenderOptions::new().with_seed(1))?;
/// assert_eq!(preview.secrets.len(), 1);
/// let init = &preview.secrets[0];
/// assert!(init.name.starts_with("demo-cp-"));
/// let text = String::from_utf8(init.userdata.clone()).unwrap();
/// assert!(text.starts_with("## template: jinja\n#cloud-config\n"));
/// assert!(text.contains("INSTALL_RKE2_VERSION=v1.32.5+rke2r1 sh -s - server"));
/// # Ok::<(), payload_preview::RenderError>(())
/// ```
///
/// # Errors
/// [`RenderError::Input`] when a source does not read, [`RenderError::NothingToRender`] when
/// no object to render is there, [`RenderError::Entropy`] / [`RenderError::Key`] when key
/// material cannot be made.
pub fn render(sources: &[Source<'_>], options: &RenderOptions) -> Result<Preview, RenderError> {
    let mut manifests = parse(sources)?;
    // ClusterClass topologies become the objects the topology controller makes.
    let topology_findings = expand_topology(&mut manifests)?;
    // Each ClusterClass on its own, those no Cluster uses too (named as the expansion names).
    let classes = crate::manifest_checks::classes(&manifests, Some(TOPOLOGY_NAMES_SEED));
    let renderable = manifests.objects.iter().any(|o| {
        matches!(
            o.kind(),
            "RKE2ControlPlane" | "MachineDeployment" | "MachinePool" | "RKE2Config"
        )
    });
    if !renderable {
        return nothing_to_render(&manifests, topology_findings, classes);
    }
    let now = options.now.unwrap_or(if options.seed.is_some() {
        SEEDED_NOW
    } else {
        now_unix()
    });
    let mut renderer = Renderer {
        manifests: &manifests,
        options,
        rng: new_rng(options.seed)?,
        // The CA pairs made so far: at most four per render, shared by the clusters of one
        // input (key generation is the slow part, and bounded so).
        keys: machine::Keys {
            now,
            cas: Vec::new(),
        },
        preview: Preview::default(),
    };
    let mut global = topology_findings;
    global.extend(classes.findings);
    global.extend(unsubstituted(&manifests));
    for cluster in cluster::clusters(&manifests) {
        let ctx = cluster::ClusterContext::new(&manifests, cluster, options, &mut renderer.rng);
        renderer.render_cluster(&ctx)?;
    }
    let mut preview = renderer.preview;
    preview.classes = classes.alone;
    // What concerns objects rather than one Secret: the manifest checks, and what kept an
    // object from rendering (already in `preview.findings`).
    let object_findings: Vec<Finding> = std::mem::take(&mut preview.findings)
        .into_iter()
        .chain(global)
        .chain(crate::manifest_checks::findings(&manifests))
        .collect();
    share_findings(&mut preview, object_findings, &manifests);
    Ok(preview)
}

/// One render's state: the input, the options, the random source, the CA pairs made so far
/// and the preview as it grows.
struct Renderer<'m> {
    manifests: &'m Manifests,
    options: &'m RenderOptions,
    rng: StdRng,
    keys: machine::Keys,
    preview: Preview,
}

/// Replaces each topology Cluster by the objects the topology controller makes of it; the
/// findings of the expansion.
fn expand_topology(manifests: &mut Manifests) -> Result<Vec<Finding>, RenderError> {
    if !crate::topology::has_topology(manifests) {
        return Ok(Vec::new());
    }
    // The names the expansion generates are the same on every render of the input, whatever
    // the seed (which is for the token and the keys): `render` and `lint` of one input, and two
    // renders of it, name the same Secrets.
    let expansion = crate::topology::expand(manifests, Some(TOPOLOGY_NAMES_SEED)).map_err(|u| {
        RenderError::Unexpandable {
            class: u.class,
            patch: u.patch,
        }
    })?;
    for (i, cluster) in expansion.clusters {
        if let Some(slot) = manifests.objects.get_mut(i) {
            *slot = cluster;
        }
    }
    manifests.objects.extend(expansion.objects);
    Ok(expansion.findings)
}

/// The answer when no object renders: what kept a topology from expanding and what is wrong
/// with the ClusterClasses checked on their own, else the error naming the kinds the input
/// holds.
fn nothing_to_render(
    manifests: &Manifests,
    topology_findings: Vec<Finding>,
    classes: crate::manifest_checks::Classes,
) -> Result<Preview, RenderError> {
    if !topology_findings.is_empty() || !classes.alone.is_empty() {
        let titles: Vec<(String, &Object)> =
            manifests.objects.iter().map(|o| (o.title(), o)).collect();
        let mut preview = Preview {
            classes: classes.alone,
            ..Preview::default()
        };
        // A class on its own is linted as the input writes it: every manifest check runs.
        let checked = if preview.classes.is_empty() {
            Vec::new()
        } else {
            crate::manifest_checks::findings(manifests)
        };
        for f in topology_findings
            .into_iter()
            .chain(classes.findings)
            .chain(checked)
        {
            push_unique(&mut preview.findings, locate(f, &titles));
        }
        return Ok(preview);
    }
    let mut kinds: Vec<String> = manifests
        .objects
        .iter()
        .map(|o| rke2_payload::terminal_safe(o.kind()).into_owned())
        .collect();
    kinds.sort();
    kinds.dedup();
    let found = if kinds.is_empty() {
        "none".to_owned()
    } else {
        kinds.join(", ")
    };
    Err(RenderError::NothingToRender { found })
}

/// The random source: seeded, or from the system.
fn new_rng(seed: Option<u64>) -> Result<StdRng, RenderError> {
    Ok(match seed {
        Some(seed) => StdRng::seed_from_u64(seed),
        None => {
            use rand::TryRng as _;
            let mut seed = [0u8; 32];
            rand::rngs::SysRng
                .try_fill_bytes(&mut seed)
                .map_err(|e| RenderError::Entropy(e.to_string()))?;
            StdRng::from_seed(seed)
        }
    })
}

/// A finding per `${VAR}` left in an object of the input.
fn unsubstituted(manifests: &Manifests) -> Vec<Finding> {
    let mut out = Vec::new();
    // A Secret or ConfigMap no RKE2 object names reaches no bootstrap data: a `${VAR}` there
    // (an add-on's shell script, written `$${VAR}` for clusterctl) is its own business.
    let mut named = Vec::new();
    for o in manifests
        .objects
        .iter()
        .filter(|o| o.kind().starts_with("RKE2"))
    {
        referenced_names(&o.value, o.namespace(), &mut named);
    }
    for object in manifests.objects.iter().filter(|o| {
        o.made_for.is_none()
            && (!matches!(o.kind(), "Secret" | "ConfigMap")
                || named.contains(&(o.namespace().to_owned(), o.name().to_owned())))
    }) {
        let mut vars = Vec::new();
        crate::manifests::unsubstituted(&object.value, &mut vars);
        for var in vars {
            out.push(Finding::new(
                Check::ManifestUnsubstitutedVariable,
                format!(
                    "{}: ${{{}}} is not substituted (run clusterctl generate cluster or envsubst first); it is rendered as written",
                    object.title(),
                    rke2_payload::terminal_safe(&var)
                ),
            ));
        }
    }
    out
}

/// Every object an RKE2 object may name (`{name: …}` anywhere in it, with its `namespace` when
/// it says one), as (namespace, name).
fn referenced_names(value: &Value, namespace: &str, out: &mut Vec<(String, String)>) {
    match value {
        Value::Object(map) => {
            if let Some(Value::String(name)) = map.get("name") {
                let ns = map
                    .get("namespace")
                    .and_then(Value::as_str)
                    .unwrap_or(namespace);
                out.push((ns.to_owned(), name.clone()));
            }
            for v in map.values() {
                referenced_names(v, namespace, out);
            }
        }
        Value::Array(items) => {
            for v in items {
                referenced_names(v, namespace, out);
            }
        }
        _ => {}
    }
}

/// Locates every finding, gives each Secret the findings about the objects of its namespace
/// (so that `render | lint` sees them) and lists them all once in the preview, by object.
fn share_findings(preview: &mut Preview, object_findings: Vec<Finding>, manifests: &Manifests) {
    // Each object's title once: every finding is located by it.
    let titles: Vec<(String, &Object)> = manifests.objects.iter().map(|o| (o.title(), o)).collect();
    let object_findings: Vec<Finding> = object_findings
        .into_iter()
        .map(|f| locate(f, &titles))
        .collect();
    for s in &mut preview.secrets {
        let own = std::mem::take(&mut s.findings);
        s.findings = own.into_iter().map(|f| locate(f, &titles)).collect();
    }
    for finding in &object_findings {
        let namespace = finding_namespace(&finding.message);
        for s in &mut preview.secrets {
            if namespace.is_none_or(|ns| ns == s.namespace) {
                push_unique(&mut s.findings, finding.clone());
            }
        }
    }
    for s in &preview.secrets {
        for f in &s.findings {
            push_unique(&mut preview.findings, f.clone());
        }
    }
    for f in object_findings {
        push_unique(&mut preview.findings, f);
    }
}

/// The finding with the place of the object it is about: every manifest finding's message
/// starts with the title of its object (`Kind namespace/name: …`, made by [`Object::title`]),
/// the longest title that does is the object.
fn locate(f: Finding, titles: &[(String, &Object)]) -> Finding {
    if f.manifest.is_some() {
        return f;
    }
    let object = titles
        .iter()
        .filter(|(title, _)| {
            f.message
                .strip_prefix(title.as_str())
                .is_some_and(|rest| rest.starts_with(": "))
        })
        .max_by_key(|(title, _)| title.len());
    match object {
        Some((_, o)) => {
            let site = o.site();
            f.in_manifest(site)
        }
        None => f,
    }
}

/// The namespace of the object a finding's message starts with (`Kind namespace/name: …`).
fn finding_namespace(message: &str) -> Option<&str> {
    let (head, _) = message.split_once(": ")?;
    let (_, object) = head.split_once(' ')?;
    object.split_once('/').map(|(ns, _)| ns)
}

/// Seconds since the Unix epoch, now.
fn now_unix() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
}

/// Lowercase hex of `bytes`.
fn hex(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        out.push(char::from(b"0123456789abcdef"[usize::from(b >> 4)]));
        out.push(char::from(b"0123456789abcdef"[usize::from(b & 15)]));
    }
    out
}

fn push_unique(list: &mut Vec<Finding>, f: Finding) {
    if !list
        .iter()
        .any(|g| g.check == f.check && g.message == f.message)
    {
        list.push(f);
    }
}

fn random_suffix(rng: &mut StdRng) -> String {
    (0..5)
        .map(|_| NAME_ALPHABET[rng.random_range(0..NAME_ALPHABET.len())] as char)
        .collect()
}

fn random_uid(rng: &mut StdRng) -> String {
    let mut b = [0u8; 16];
    rng.fill_bytes(&mut b);
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    let h = hex(&b);
    format!(
        "{}-{}-{}-{}-{}",
        &h[..8],
        &h[8..12],
        &h[12..16],
        &h[16..20],
        &h[20..]
    )
}

impl PreviewSecret {
    /// The Secret as CAPRKE2 writes it, with the preview annotations.
    pub fn to_value(&self) -> Value {
        let mut annotations = serde_json::Map::new();
        let generated = if self.generated.is_empty() {
            "nothing".to_owned()
        } else {
            self.generated.join("; ")
        };
        annotations.insert(
            PREVIEW_ANNOTATION.to_owned(),
            Value::String(format!(
                "rendered offline from the manifests by rke2-payload {} (role {}); generated: {generated}",
                env!("CARGO_PKG_VERSION"),
                self.role.as_str()
            )),
        );
        annotations.insert(
            SOURCE_ANNOTATION.to_owned(),
            Value::String(self.source.clone()),
        );
        if !self.findings.is_empty() {
            let list: Vec<Value> = self
                .findings
                .iter()
                .map(|f| match &f.manifest {
                    Some(site) => {
                        let mut one = json!({"id": f.check.id(), "severity": f.severity.as_str(), "message": f.message, "manifest": site});
                        // What the object's annotations say of it: `lint` of this output
                        // decides on it as it would on the manifests.
                        if let Some(by) = site.ignores.as_deref().and_then(|i| i.of(f.check)) {
                            one["ignored"] = Value::String(by.reason.clone());
                        }
                        one
                    }
                    None => json!({"id": f.check.id(), "severity": f.severity.as_str(), "message": f.message}),
                })
                .collect();
            annotations.insert(
                FINDINGS_ANNOTATION.to_owned(),
                Value::String(Value::Array(list).to_string()),
            );
        }
        // The suppressions of the objects it was made from, as annotations of its own: `lint`
        // reads a Secret's annotations whatever it is given.
        for by in &self.suppressions {
            annotations
                .entry(format!(
                    "{}{}",
                    rke2_payload::IGNORE_CHECK_ANNOTATION_PREFIX,
                    by.check.id()
                ))
                .or_insert_with(|| Value::String(by.reason.clone()));
        }
        if let Some(site) = &self.site {
            let mut from = json!({"file": site.file, "object": site.object, "line": site.line});
            if let Some(d) = &self.delivery {
                from["delivery"] = json!({"cloud": d.cloud, "reason": d.reason});
                if d.parsed_as_yaml {
                    from["delivery"]["parsed_as_yaml"] = Value::Bool(true);
                }
            }
            annotations.insert(
                RENDERED_FROM_ANNOTATION.to_owned(),
                Value::String(from.to_string()),
            );
        }
        json!({
            "apiVersion": "v1",
            "kind": "Secret",
            "type": CLUSTER_SECRET_TYPE,
            "metadata": {
                "name": self.name,
                "namespace": self.namespace,
                "labels": {CLUSTER_NAME_LABEL: self.cluster},
                "annotations": annotations,
                "ownerReferences": [{
                    "apiVersion": "bootstrap.cluster.x-k8s.io/v1beta2",
                    "kind": "RKE2Config",
                    "name": self.name,
                    "uid": uid_for(&self.name),
                    "controller": true,
                }],
            },
            "data": {
                "format": rke2_payload::to_base64(self.format.as_str().as_bytes()),
                "value": rke2_payload::to_base64(&self.value),
            },
        })
    }
}

/// A stable, made-up UID for an owner reference (the RKE2Config does not exist yet).
fn uid_for(name: &str) -> String {
    let digest = hex(&sha2::Sha256::digest(name.as_bytes()));
    let mut rng = StdRng::seed_from_u64(u64::from_str_radix(&digest[..16], 16).unwrap_or(0));
    random_uid(&mut rng)
}

impl Preview {
    /// The preview as a `kind: List` of Secrets, YAML.
    pub fn to_yaml(&self) -> String {
        // As kubectl prints Secrets: a value on one line, never folded.
        let options = serde_saphyr::ser_options! {
            prefer_block_scalars: false,
            compact_list_indent: true,
        };
        serde_saphyr::to_string_with_options(&self.list(), options).unwrap_or_default()
    }

    /// The preview as a `kind: List` of Secrets, JSON (pretty, ending in a line break).
    pub fn to_json(&self) -> String {
        let mut text = serde_json::to_string_pretty(&self.list()).unwrap_or_default();
        text.push('\n');
        text
    }

    /// The Secrets, typed, each with its [`Origin`](rke2_payload::Origin): what the reports
    /// read when they are given manifests (nothing is written out and read back, so nothing of
    /// the input can stand in for a preview's origin).
    pub fn to_secrets(&self) -> Vec<rke2_payload::BootstrapSecret<'static>> {
        self.secrets
            .iter()
            .enumerate()
            .map(|(index, s)| {
                let id = rke2_payload::SecretId {
                    namespace: Some(s.namespace.clone()),
                    name: Some(s.name.clone()),
                    index,
                };
                rke2_payload::BootstrapSecret::new(
                    id,
                    s.format.as_str(),
                    &s.value,
                    Some(&s.cluster),
                )
                .with_origin(
                    rke2_payload::Origin::rendered(s.site.clone())
                        .with_delivery(s.delivery.clone())
                        .with_findings(s.findings.clone())
                        .with_suppressions(s.suppressions.clone()),
                )
            })
            .collect()
    }

    fn list(&self) -> Value {
        json!({
            "apiVersion": "v1",
            "kind": "List",
            "items": self.secrets.iter().map(PreviewSecret::to_value).collect::<Vec<_>>(),
            "metadata": {"resourceVersion": ""},
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sniff_input_reads_manifests_whole_and_streams_the_rest_from_its_first_byte() {
        use std::io::Read as _;
        let manifests =
            b"kind: RKE2ControlPlane\nmetadata: {name: cp}\nspec: {version: v1.32.5+rke2r1}\n";
        let sniffed = sniff_input(&manifests[..], "m.yaml", &DecodeOptions::new()).expect("reads");
        // Manifests hold Secrets: their Debug is a length.
        assert_eq!(
            format!("{sniffed:?}"),
            format!("Manifests {{ bytes: {} }}", manifests.len())
        );
        match sniffed {
            Sniffed::Manifests(bytes) => assert_eq!(bytes, manifests),
            Sniffed::Secrets(_) => panic!("manifests are read whole"),
        }
        let tight = DecodeOptions::new().with_max_input(10);
        let error = sniff_input(&manifests[..], "m.yaml", &tight).expect_err("over the cap");
        assert!(
            matches!(&error, rke2_payload::Error::InputTooLarge { what, limit: 10 } if what == "m.yaml"),
            "{error}"
        );
        // It names a kind render reads, and holds none: streamed, every byte kept.
        let secret = b"---\nkind: Secret\nmetadata: {name: MachineDeployment}\n".repeat(3);
        let Sniffed::Secrets(mut stream) =
            sniff_input(&secret[..], "s.yaml", &DecodeOptions::new()).expect("reads")
        else {
            panic!("a Secret is not manifests");
        };
        let mut read = Vec::new();
        stream.read_to_end(&mut read).expect("in memory");
        assert_eq!(read, secret);
    }

    #[test]
    fn debug_output_never_shows_the_token_or_the_keys() {
        let manifests = b"apiVersion: controlplane.cluster.x-k8s.io/v1beta2\nkind: RKE2ControlPlane\nmetadata: {name: cp, namespace: default}\nspec: {version: v1.32.5+rke2r1}\n";
        let token = "0123456789abcdef0123456789abcdef";
        let options = RenderOptions::new().with_seed(1).with_token(token);
        let source = Source {
            name: "cp.yaml",
            bytes: manifests,
        };
        let preview = render(&[source], &options).unwrap();
        let init = &preview.secrets[0];
        assert!(String::from_utf8_lossy(&init.userdata).contains(token));
        for shown in [
            format!("{options:?}"),
            format!("{source:?}"),
            format!("{preview:?}"),
            format!("{init:?}"),
        ] {
            assert!(!shown.contains(token), "{shown}");
            assert!(!shown.contains("PRIVATE KEY"), "{shown}");
            assert!(!shown.contains("RKE2ControlPlane\\nmetadata"), "{shown}");
        }
    }

    /// The manifest findings of `check` the preview of `text` carries (the preview's, and those
    /// its Secrets carry), each once.
    fn of(text: &str, check: Check) -> Vec<String> {
        let source = Source {
            name: "c.yaml",
            bytes: text.as_bytes(),
        };
        let preview = render(&[source], &RenderOptions::new().with_seed(1)).expect("renders");
        preview
            .findings
            .iter()
            .chain(preview.secrets.iter().flat_map(|s| s.findings.iter()))
            .filter(|f| f.check == check)
            .map(|f| f.message.clone())
            .collect::<std::collections::BTreeSet<String>>()
            .into_iter()
            .collect()
    }

    const TERRAFORM: &str = "apiVersion: cluster.x-k8s.io/v1beta2
kind: Cluster
metadata: {name: demo, namespace: capi}
spec:
  controlPlaneEndpoint: {host: demo.example.com, port: 6443}
  infrastructureRef: {apiGroup: infrastructure.cluster.x-k8s.io, kind: TerraformCluster, name: demo}
  controlPlaneRef: {apiGroup: controlplane.cluster.x-k8s.io, kind: CONTROL_PLANE, name: demo-cp}
---
apiVersion: infrastructure.cluster.x-k8s.io/v1alpha1
kind: TerraformCluster
metadata: {name: demo, namespace: capi}
spec: {source: {image: ghcr.io/captf-io/module-images/oci-cluster:v0.1.0-terraform}, variables: {compartment_id: x}}
---
apiVersion: controlplane.cluster.x-k8s.io/v1beta2
kind: RKE2ControlPlane
metadata: {name: demo-cp, namespace: capi}
spec:
  version: v1.32.5+rke2r1
  replicas: 1
  machineTemplate:
    spec:
      infrastructureRef: {apiGroup: infrastructure.cluster.x-k8s.io, kind: TerraformMachineTemplate, name: demo-cp}
";

    #[test]
    fn an_rke2_cluster_s_infrastructure_is_judged_once_on_its_object() {
        let rke2 = TERRAFORM.replace("CONTROL_PLANE", "RKE2ControlPlane");
        let found = of(&rke2, Check::ManifestInfrastructureNotRke2);
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(
            found[0].starts_with("TerraformCluster capi/demo: spec.variables.distribution is not set (default kubeadm), not rke2")
                && found[0].contains("CAPTF: captf-io/terraform-aws-cluster"),
            "{}",
            found[0]
        );
        // Only a cluster whose control plane is CAPRKE2's.
        let other = TERRAFORM.replace("CONTROL_PLANE", "KubeadmControlPlane");
        assert!(of(&other, Check::ManifestInfrastructureNotRke2).is_empty());
        // A hostile value is shown escaped.
        let hostile = rke2.replace("compartment_id: x", "distribution: \"k\\u001b[2J\"");
        let found = of(&hostile, Check::ManifestInfrastructureNotRke2);
        assert!(
            found[0].contains("is k\\x1b[2J, not rke2") && !found[0].contains('\u{1b}'),
            "{}",
            found[0]
        );
    }
}
