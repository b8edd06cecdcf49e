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

mod butane;
pub(crate) mod checks;
mod cis;

mod pki;
mod resolve;
mod rke2;
mod userdata;
mod yaml;

use rand::rngs::StdRng;
use rand::{Rng as _, RngExt as _, SeedableRng as _};
use serde_json::{Value, json};

use crate::checks::{Check, Finding};
use crate::envelope::{
    CLUSTER_NAME_LABEL, CLUSTER_SECRET_TYPE, FINDINGS_ANNOTATION, RENDERED_FROM_ANNOTATION,
};
use crate::facts::rke2::Role;
use crate::manifests::{Manifests, Object, Ref, flag, str_at, string, strings};
use crate::payload::Format;
use resolve::Resolver;
use rke2::File;

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
    /// Makes the generated token, CA key pairs, names and placeholders the same on every run.
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

    /// With a seed for everything generated.
    pub fn with_seed(mut self, seed: u64) -> Self {
        self.seed = Some(seed);
        self
    }

    /// With one size for every placeholder.
    pub fn with_placeholder_bytes(mut self, bytes: usize) -> Self {
        self.placeholder_bytes = Some(bytes);
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
    pub site: Option<crate::checks::ManifestSite>,
    /// The path its user data takes to the machine, from the infrastructure machine template
    /// (`None` when no template is named or its kind is not in the delivery table).
    pub delivery: Option<crate::reports::clouds::Delivery>,
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

/// Reads every object of the sources.
fn parse(sources: &[Source<'_>]) -> Result<Manifests, RenderError> {
    let mut out = Manifests::default();
    for source in sources {
        let objects = crate::encode::objects(source.bytes).map_err(|e| RenderError::Input {
            source_name: crate::codec::text::terminal_safe(source.name).into_owned(),
            message: e.to_string(),
        })?;
        // Places only when the span tree sees the same objects as the reader.
        let places = std::str::from_utf8(source.bytes)
            .ok()
            .and_then(crate::manifests::object_places)
            .filter(|p| p.len() == objects.len());
        let mut places = places.into_iter().flatten();
        for value in objects {
            let places = places.next().map(std::sync::Arc::new);
            if value.is_object() {
                out.objects.push(Object {
                    source: source.name.to_owned(),
                    value,
                    line: places.as_ref().map(|p| p.first_line()),
                    places,
                    made_for: None,
                    patched: Vec::new(),
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

/// The bootstrap Secrets CAPRKE2 will write for the manifests of `sources`.
///
/// ```
/// use rke2_payload::{RenderOptions, Source, render};
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
/// # Ok::<(), rke2_payload::RenderError>(())
/// ```
///
/// # Errors
/// [`RenderError::Input`] when a source does not read, [`RenderError::NothingToRender`] when
/// no object to render is there, [`RenderError::Entropy`] / [`RenderError::Key`] when key
/// material cannot be made.
pub fn render(sources: &[Source<'_>], options: &RenderOptions) -> Result<Preview, RenderError> {
    let mut manifests = parse(sources)?;
    // ClusterClass topologies become the objects the topology controller makes.
    let mut topology_findings = Vec::new();
    if crate::topology::has_topology(&manifests) {
        let expansion = crate::topology::expand(&manifests, options.seed).map_err(|u| {
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
        topology_findings = expansion.findings;
    }
    let renderable = manifests.objects.iter().any(|o| {
        matches!(
            o.kind(),
            "RKE2ControlPlane" | "MachineDeployment" | "MachinePool" | "RKE2Config"
        )
    });
    if !renderable {
        if !topology_findings.is_empty() {
            // What kept the topology from expanding is the answer.
            let titles: Vec<(String, &Object)> =
                manifests.objects.iter().map(|o| (o.title(), o)).collect();
            let mut preview = Preview::default();
            for f in topology_findings {
                push_unique(&mut preview.findings, locate(f, &titles));
            }
            return Ok(preview);
        }
        let mut kinds: Vec<String> = manifests
            .objects
            .iter()
            .map(|o| crate::codec::text::terminal_safe(o.kind()).into_owned())
            .collect();
        kinds.sort();
        kinds.dedup();
        let found = if kinds.is_empty() {
            "none".to_owned()
        } else {
            kinds.join(", ")
        };
        return Err(RenderError::NothingToRender { found });
    }
    let mut rng = match options.seed {
        Some(seed) => StdRng::seed_from_u64(seed),
        None => {
            use rand::TryRng as _;
            let mut seed = [0u8; 32];
            rand::rngs::SysRng
                .try_fill_bytes(&mut seed)
                .map_err(|e| RenderError::Entropy(e.to_string()))?;
            StdRng::from_seed(seed)
        }
    };
    let now = options.now.unwrap_or(if options.seed.is_some() {
        SEEDED_NOW
    } else {
        crate::codec::time::now_unix()
    });
    let mut preview = Preview::default();
    let mut global = topology_findings;
    for object in manifests.objects.iter().filter(|o| o.made_for.is_none()) {
        let mut vars = Vec::new();
        crate::manifests::unsubstituted(&object.value, &mut vars);
        for var in vars {
            global.push(Finding::new(
                Check::ManifestUnsubstitutedVariable,
                format!(
                    "{}: ${{{}}} is not substituted (run clusterctl generate cluster or envsubst first); it is rendered as written",
                    object.title(),
                    crate::codec::text::terminal_safe(&var)
                ),
            ));
        }
    }
    // The CA pairs made so far: at most four per render, shared by the clusters of one input
    // (key generation is the slow part, and bounded so).
    let mut keys = Keys {
        now,
        cas: Vec::new(),
    };
    for cluster in clusters(&manifests) {
        let ctx = ClusterContext::new(&manifests, cluster, options, &mut rng)?;
        render_cluster(&ctx, &manifests, options, &mut rng, &mut keys, &mut preview)?;
    }
    // Each object's title once: every finding is located by it.
    let titles: Vec<(String, &Object)> = manifests.objects.iter().map(|o| (o.title(), o)).collect();
    // What concerns objects rather than one Secret: the manifest checks, and what kept an
    // object from rendering (already in `preview.findings`).
    let object_findings: Vec<Finding> = std::mem::take(&mut preview.findings)
        .into_iter()
        .chain(global)
        .chain(checks::manifest_checks(&manifests))
        .map(|f| locate(f, &titles))
        .collect();
    for s in &mut preview.secrets {
        let own = std::mem::take(&mut s.findings);
        s.findings = own.into_iter().map(|f| locate(f, &titles)).collect();
    }
    // A finding about an object goes with the Secrets of its namespace (so that `render |
    // lint` sees it; the reports tell it once, by its object).
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
    Ok(preview)
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

fn push_unique(list: &mut Vec<Finding>, f: Finding) {
    if !list
        .iter()
        .any(|g| g.check == f.check && g.message == f.message)
    {
        list.push(f);
    }
}

/// A cluster to render: its `Cluster` object when the input has one, its control plane.
struct ClusterRef<'m> {
    cluster: Option<&'m Object>,
    name: String,
    namespace: String,
    control_plane: Option<&'m Object>,
}

/// Every cluster of the input: each `Cluster`, and a control plane or worker config that names
/// a cluster the input does not hold.
fn clusters(m: &Manifests) -> Vec<ClusterRef<'_>> {
    let mut out: Vec<ClusterRef<'_>> = Vec::new();
    for c in m.of_kind("Cluster") {
        let ns = c.namespace().to_owned();
        let control_plane = Ref::at(&c.value, &["spec", "controlPlaneRef"], &ns)
            .and_then(|r| m.find("RKE2ControlPlane", &r))
            .or_else(|| {
                m.of_kind("RKE2ControlPlane")
                    .find(|rcp| rcp.namespace() == ns && cluster_label(rcp) == Some(c.name()))
            })
            .or_else(|| {
                let in_ns: Vec<&Object> = m
                    .of_kind("RKE2ControlPlane")
                    .filter(|r| r.namespace() == ns)
                    .collect();
                (in_ns.len() == 1
                    && m.of_kind("Cluster").filter(|o| o.namespace() == ns).count() == 1)
                    .then(|| in_ns[0])
            });
        out.push(ClusterRef {
            cluster: Some(c),
            name: c.name().to_owned(),
            namespace: ns,
            control_plane,
        });
    }
    // Control planes no Cluster claims: a cluster of their own (named by their label, or
    // after themselves).
    for rcp in m.of_kind("RKE2ControlPlane") {
        if out
            .iter()
            .any(|c| c.control_plane.is_some_and(|p| std::ptr::eq(p, rcp)))
        {
            continue;
        }
        let name = cluster_label(rcp).unwrap_or(rcp.name()).to_owned();
        out.push(ClusterRef {
            cluster: None,
            name,
            namespace: rcp.namespace().to_owned(),
            control_plane: Some(rcp),
        });
    }
    // Workers of clusters the input does not hold.
    for w in m
        .objects
        .iter()
        .filter(|o| matches!(o.kind(), "MachineDeployment" | "MachinePool"))
    {
        let name = worker_cluster_name(w).to_owned();
        if !out
            .iter()
            .any(|c| c.name == name && c.namespace == w.namespace())
        {
            out.push(ClusterRef {
                cluster: None,
                name,
                namespace: w.namespace().to_owned(),
                control_plane: None,
            });
        }
    }
    out
}

fn cluster_label(o: &Object) -> Option<&str> {
    o.get(&["metadata", "labels", CLUSTER_NAME_LABEL])
        .and_then(Value::as_str)
}

fn worker_cluster_name(w: &Object) -> &str {
    str_at(&w.value, &["spec", "clusterName"])
        .filter(|n| !n.is_empty())
        .or_else(|| cluster_label(w))
        .unwrap_or("")
}

/// What every Secret of one cluster shares.
struct ClusterContext<'m> {
    c: ClusterRef<'m>,
    token: String,
    endpoint_host: String,
    /// The join server's host, and whether it was made up.
    server_host: Option<(String, bool)>,
    generated: Vec<String>,
    findings: Vec<Finding>,
}

impl<'m> ClusterContext<'m> {
    fn new(
        m: &'m Manifests,
        c: ClusterRef<'m>,
        options: &RenderOptions,
        rng: &mut StdRng,
    ) -> Result<Self, RenderError> {
        let mut generated = Vec::new();
        let mut findings = Vec::new();
        let token_ref = Ref {
            name: format!("{}-token", c.name),
            namespace: c.namespace.clone(),
        };
        let token = match (&options.token, m.secret_key(&token_ref, "value")) {
            (Some(t), _) => t.clone(),
            (None, Ok(Some(bytes))) => String::from_utf8_lossy(&bytes).into_owned(),
            _ => {
                let mut raw = [0u8; 16];
                rng.fill_bytes(&mut raw);
                generated.push("the join token".to_owned());
                crate::codec::digest::hex(&raw)
            }
        };
        // The Cluster's endpoint, or (as Cluster API copies it from there) the infrastructure
        // cluster's.
        let declared_endpoint = c
            .cluster
            .map(|o| {
                let own = string(&o.value, &["spec", "controlPlaneEndpoint", "host"]);
                if !own.is_empty() {
                    return own;
                }
                Ref::at(&o.value, &["spec", "infrastructureRef"], o.namespace())
                    .and_then(|r| {
                        m.objects.iter().find(|i| {
                            i.name() == r.name
                                && i.namespace() == r.namespace
                                && i.kind() != "Cluster"
                        })
                    })
                    .map(|i| string(&i.value, &["spec", "controlPlaneEndpoint", "host"]))
                    .unwrap_or_default()
            })
            .unwrap_or_default();
        if c.cluster.is_none() {
            findings.push(Finding::new(
                Check::ManifestMissingReference,
                format!(
                    "Cluster {}/{} is not in the input: its controlPlaneEndpoint (the last tls-san) stands in as {PLACEHOLDER_SERVER} and its pod and service CIDRs are left empty",
                    crate::codec::text::terminal_safe(&c.namespace),
                    crate::codec::text::terminal_safe(&c.name)
                ),
            ));
        }
        let method = c
            .control_plane
            .map(|rcp| string(&rcp.value, &["spec", "registrationMethod"]))
            .unwrap_or_default();
        let by_endpoint = matches!(method.as_str(), "" | "control-plane-endpoint");
        // CAPRKE2 creates no Machine before the endpoint is set (the infrastructure provider
        // fills it in when the manifests leave it out), and always puts it in tls-san: so
        // `--server` stands for it where the endpoint is how nodes join or where it is missing,
        // else one placeholder does, the same as the join server's.
        let (endpoint_host, endpoint_made_up) = match &options.server {
            Some(server) if by_endpoint || declared_endpoint.is_empty() => (server.clone(), false),
            _ if declared_endpoint.is_empty() => (PLACEHOLDER_SERVER.to_owned(), true),
            _ => (declared_endpoint, false),
        };
        if endpoint_made_up {
            generated.push(format!(
                "the control plane endpoint ({PLACEHOLDER_SERVER}: the infrastructure provider fills it in; set it with --server)"
            ));
        }
        let server_host = match (&options.server, c.control_plane) {
            (Some(s), _) => Some((s.clone(), false)),
            (None, Some(rcp)) => match method.as_str() {
                "" | "control-plane-endpoint" => Some((endpoint_host.clone(), endpoint_made_up)),
                "address" if !string(&rcp.value, &["spec", "registrationAddress"]).is_empty() => {
                    Some((string(&rcp.value, &["spec", "registrationAddress"]), false))
                }
                _ => Some((PLACEHOLDER_SERVER.to_owned(), true)),
            },
            // No control plane in the input: workers join the endpoint (the default
            // registration method) where the Cluster names one.
            (None, None) if !endpoint_made_up => Some((endpoint_host.clone(), false)),
            (None, None) => Some((PLACEHOLDER_SERVER.to_owned(), true)),
        };
        if let (Some(cluster), None) = (c.cluster, c.control_plane)
            && let Some(r) = Ref::at(&cluster.value, &["spec", "controlPlaneRef"], &c.namespace)
        {
            let kind = string(&cluster.value, &["spec", "controlPlaneRef", "kind"]);
            let joins = if endpoint_made_up {
                format!("a placeholder ({PLACEHOLDER_SERVER})")
            } else {
                format!(
                    "the endpoint host {}",
                    crate::codec::text::terminal_safe(&endpoint_host)
                )
            };
            findings.push(Finding::new(
                Check::ManifestMissingReference,
                format!(
                    "{}: spec.controlPlaneRef names {} {r}, which is not in the input; its workers are rendered joining {joins} with the cluster's token, and no control plane is rendered",
                    cluster.title(),
                    crate::codec::text::terminal_safe(if kind.is_empty() { "RKE2ControlPlane" } else { &kind }),
                ),
            ));
        }
        // (The endpoint's note says it when the server is the endpoint.)
        let server_is_endpoint =
            by_endpoint && options.server.is_none() && c.control_plane.is_some();
        if !(endpoint_made_up && server_is_endpoint)
            && server_host.as_ref().is_some_and(|(_, made_up)| *made_up)
        {
            generated.push(format!(
                "the join server address ({PLACEHOLDER_SERVER}: the registration method takes it from the machines; set it with --server)"
            ));
        }
        Ok(ClusterContext {
            c,
            token,
            endpoint_host,
            server_host,
            generated,
            findings,
        })
    }

    fn server_url(&self) -> Option<String> {
        self.server_host.as_ref().map(|(host, _)| {
            let host = host.trim_start_matches('[').trim_end_matches(']');
            if host.contains(':') {
                format!("https://[{host}]:9345")
            } else {
                format!("https://{host}:9345")
            }
        })
    }

    fn cluster_value(&self) -> Value {
        self.c
            .cluster
            .map(|o| o.value.clone())
            .unwrap_or(Value::Null)
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
    let h = crate::codec::digest::hex(&b);
    format!(
        "{}-{}-{}-{}-{}",
        &h[..8],
        &h[8..12],
        &h[12..16],
        &h[16..20],
        &h[20..]
    )
}

/// The CA pairs of one render: "now" for their validity, and the pairs made so far (at most
/// four, shared by the clusters of the input).
struct Keys {
    now: i64,
    cas: Vec<(String, String)>,
}

/// The role, the spec (an `RKE2ConfigSpec`), the version, the object it came from and the name
/// of one Secret to render.
struct Job<'v> {
    role: Role,
    spec: &'v Value,
    version: String,
    source: &'v Object,
    name: String,
    /// The object whose `infrastructureRef` says where the machine runs (the control plane,
    /// the MachineDeployment or MachinePool, the Machine of a standalone RKE2Config).
    machine: Option<&'v Object>,
}

fn render_cluster(
    ctx: &ClusterContext<'_>,
    m: &Manifests,
    options: &RenderOptions,
    rng: &mut StdRng,
    keys: &mut Keys,
    preview: &mut Preview,
) -> Result<(), RenderError> {
    let empty = Value::Object(serde_json::Map::new());
    let mut jobs: Vec<Job<'_>> = Vec::new();
    let wants = |r: RoleChoice| options.role == RoleChoice::All || options.role == r;
    if let Some(rcp) = ctx.c.control_plane {
        let spec = rcp.get(&["spec"]).unwrap_or(&empty);
        let version = control_plane_version(rcp);
        let replicas = rcp
            .get(&["spec", "replicas"])
            .and_then(Value::as_i64)
            .unwrap_or(1);
        if wants(RoleChoice::Init) {
            jobs.push(Job {
                role: Role::Init,
                spec,
                version: version.clone(),
                source: rcp,
                name: format!("{}-{}", rcp.name(), random_suffix(rng)),
                machine: Some(rcp),
            });
        }
        if options.role == RoleChoice::Join || (options.role == RoleChoice::All && replicas > 1) {
            jobs.push(Job {
                role: Role::Server,
                spec,
                version,
                source: rcp,
                name: format!("{}-{}", rcp.name(), random_suffix(rng)),
                machine: Some(rcp),
            });
        }
    }
    if wants(RoleChoice::Worker) {
        // The RKE2Configs a MachinePool renders (not again on their own).
        let mut pooled: Vec<&Object> = Vec::new();
        for w in m.objects.iter().filter(|o| {
            matches!(o.kind(), "MachineDeployment" | "MachinePool")
                && o.namespace() == ctx.c.namespace
                && worker_cluster_name(o) == ctx.c.name
        }) {
            let config_ref = Ref::at(
                &w.value,
                &["spec", "template", "spec", "bootstrap", "configRef"],
                w.namespace(),
            );
            let version = string(&w.value, &["spec", "template", "spec", "version"]);
            // A MachinePool names an RKE2Config itself (its bootstrap Secret bears that name);
            // a MachineDeployment names a template.
            let ref_kind = string(
                &w.value,
                &["spec", "template", "spec", "bootstrap", "configRef", "kind"],
            );
            if ref_kind == "RKE2Config"
                && let Some(config) = config_ref.as_ref().and_then(|r| m.find("RKE2Config", r))
            {
                jobs.push(Job {
                    role: Role::Agent,
                    spec: config.get(&["spec"]).unwrap_or(&empty),
                    version,
                    source: config,
                    name: config.name().to_owned(),
                    machine: Some(w),
                });
                pooled.push(config);
                continue;
            }
            let template = config_ref
                .as_ref()
                .and_then(|r| m.find("RKE2ConfigTemplate", r));
            let (spec, source) = match template {
                Some(t) => (t.get(&["spec", "template", "spec"]).unwrap_or(&empty), t),
                None => {
                    let kind = if ref_kind.is_empty() {
                        "RKE2ConfigTemplate"
                    } else {
                        ref_kind.as_str()
                    };
                    let what = config_ref.map_or_else(
                        || "no bootstrap.configRef".to_owned(),
                        |r| {
                            format!(
                                "{} {r}, which is not in the input",
                                crate::codec::text::terminal_safe(kind)
                            )
                        },
                    );
                    push_unique(
                        &mut preview.findings,
                        Finding::new(
                            Check::ManifestMissingReference,
                            format!(
                                "{}: spec.template.spec.bootstrap.configRef names {what}; its workers are rendered with an empty RKE2Config",
                                w.title()
                            ),
                        ),
                    );
                    (&empty, w)
                }
            };
            let name = format!("{}-{}-{}", w.name(), random_suffix(rng), random_suffix(rng));
            jobs.push(Job {
                role: Role::Agent,
                spec,
                version,
                source,
                name,
                machine: Some(w),
            });
        }
        for config in m.of_kind("RKE2Config").filter(|o| {
            o.namespace() == ctx.c.namespace
                && cluster_label(o).is_none_or(|c| c == ctx.c.name)
                && !pooled.iter().any(|p| std::ptr::eq(*p, *o))
        }) {
            let control_plane = config
                .get(&["metadata", "labels", "cluster.x-k8s.io/control-plane"])
                .is_some();
            let machine = m.of_kind("Machine").find(|machine| {
                let at = |field: &str| {
                    string(&machine.value, &["spec", "bootstrap", "configRef", field])
                };
                machine.namespace() == config.namespace()
                    && at("name") == config.name()
                    && matches!(at("kind").as_str(), "" | "RKE2Config")
            });
            jobs.push(Job {
                role: if control_plane {
                    Role::Server
                } else {
                    Role::Agent
                },
                spec: config.get(&["spec"]).unwrap_or(&empty),
                // The version of the Machine whose bootstrap.configRef names it (what
                // CAPRKE2 installs), else the control plane's.
                version: machine
                    .map(|machine| string(&machine.value, &["spec", "version"]))
                    .filter(|v| !v.is_empty())
                    .or_else(|| ctx.c.control_plane.map(control_plane_version))
                    .unwrap_or_default(),
                source: config,
                name: config.name().to_owned(),
                machine,
            });
        }
    }
    for job in jobs {
        if let Some(secret) = render_one(ctx, m, &job, options, rng, keys, &mut preview.findings)? {
            preview.secrets.push(secret);
        }
    }
    Ok(())
}

fn control_plane_version(rcp: &Object) -> String {
    let v = string(&rcp.value, &["spec", "version"]);
    if v.is_empty() {
        // v1beta1 also had it in the agent config.
        string(&rcp.value, &["spec", "agentConfig", "version"])
    } else {
        v
    }
}

fn render_one(
    ctx: &ClusterContext<'_>,
    m: &Manifests,
    job: &Job<'_>,
    options: &RenderOptions,
    rng: &mut StdRng,
    keys: &mut Keys,
    orphans: &mut Vec<Finding>,
) -> Result<Option<PreviewSecret>, RenderError> {
    let spec = job.spec;
    let ns = job.source.namespace();
    let owner = job.source.title();
    let null = Value::Null;
    let agent = spec.get("agentConfig").unwrap_or(&null);
    let control_plane = job.role != Role::Agent;
    let rcp_server_config = ctx
        .c
        .control_plane
        .and_then(|r| r.get(&["spec", "serverConfig"]))
        .unwrap_or(&null);
    let rcp_ns = ctx.c.control_plane.map_or(ns, |r| r.namespace());
    let mut generated = ctx.generated.clone();
    let mut findings = ctx.findings.clone();

    // CAPRKE2 finds no version to install (`GetDesiredVersion`) and writes nothing.
    if job.version.is_empty() {
        orphans.push(Finding::new(
            Check::ManifestRenderFails,
            format!(
                "{owner}: {} is required and not set: the API server rejects the object (a required field of the CRD), and CAPRKE2 writes no bootstrap data without a version",
                if job.source.kind() == "RKE2ControlPlane" {
                    "spec.version"
                } else {
                    "the Machine template's spec.version (or the control plane's)"
                }
            ),
        ));
        return Ok(None);
    }
    let profile = string(agent, &["cisProfile"]);
    if !profile.is_empty() && !cis_profile_fits(&profile, &job.version) {
        orphans.push(Finding::new(
            Check::ManifestRenderFails,
            format!(
                "{owner}: CAPRKE2 cannot render this Machine's bootstrap data: CIS profile {} is not supported for version {} (cis and cis-1.23 need v1.25 or later, cis-1.5 and cis-1.6 an earlier one)",
                crate::codec::text::terminal_safe(&profile),
                crate::codec::text::terminal_safe(&job.version)
            ),
        ));
        return Ok(None);
    }

    // CA key pairs first, so that the generated values come in one order for a seed.
    let mut ca_files = Vec::new();
    if job.role == Role::Init {
        let legacy = ctx.c.control_plane.is_some_and(|r| {
            r.get(&["metadata", "annotations", LEGACY_ANNOTATION])
                .is_some()
        });
        let purposes = if legacy {
            &CA_PURPOSES[..2]
        } else {
            &CA_PURPOSES[..]
        };
        let (mut made, mut shared) = (0, 0);
        for (i, (purpose, cert_path, key_path)) in purposes.iter().enumerate() {
            let r = Ref {
                name: format!("{}-{purpose}", ctx.c.name),
                namespace: ctx.c.namespace.clone(),
            };
            let stored = (m.secret_key(&r, "tls.crt"), m.secret_key(&r, "tls.key"));
            let (cert, key) = match stored {
                (Ok(Some(cert)), Ok(key)) => (
                    String::from_utf8_lossy(&cert).into_owned(),
                    key.map(|k| String::from_utf8_lossy(&k).into_owned())
                        .unwrap_or_default(),
                ),
                _ if options.reuse_keys => {
                    static ONE: std::sync::OnceLock<Result<(String, String), KeyError>> =
                        std::sync::OnceLock::new();
                    let pair = ONE.get_or_init(|| {
                        pki::new_ca(&mut StdRng::seed_from_u64(0), SEEDED_NOW)
                            .map(|ca| (ca.cert_pem, ca.key_pem.to_string()))
                    });
                    pair.clone()?
                }
                _ => match keys.cas.get(i) {
                    Some(pair) => {
                        shared += 1;
                        pair.clone()
                    }
                    None => {
                        made += 1;
                        let ca = pki::new_ca(rng, keys.now)?;
                        let pair = (ca.cert_pem, ca.key_pem.to_string());
                        keys.cas.push(pair.clone());
                        pair
                    }
                },
            };
            ca_files.push(File::new(cert_path, cert, "0640"));
            if !key.is_empty() {
                ca_files.push(File::new(key_path, key, "0600"));
            }
        }
        if made > 0 {
            generated.push(format!("{made} CA key pairs (RSA-2048, CN=kubernetes)"));
        }
        if shared > 0 {
            generated.push(format!(
                "{shared} CA key pairs (RSA-2048, CN=kubernetes, the same as another cluster's of this preview)"
            ));
        }
    }

    let mut resolver = Resolver {
        manifests: m,
        placeholder_bytes: options.placeholder_bytes,
        rng,
        findings: Vec::new(),
        generated: Vec::new(),
    };
    let server = if job.role == Role::Init {
        None
    } else {
        ctx.server_url()
    };
    let agent_input = rke2::AgentInput {
        agent,
        namespace: ns,
        server: server.as_deref(),
        token: &ctx.token,
        cloud_provider_name: string(rcp_server_config, &["cloudProviderName"]),
        cloud_provider_config_map: Ref::at(rcp_server_config, &["cloudProviderConfigMap"], rcp_ns),
        owner: &owner,
    };
    let mut config_files = Vec::new();
    let mut pairs = Vec::new();
    let (agent_pairs, agent_files) = rke2::agent_config(&agent_input, &mut resolver);
    if control_plane {
        let cluster_value = ctx.cluster_value();
        let server_input = rke2::ServerInput {
            server_config: rcp_server_config,
            namespace: rcp_ns,
            cluster: &cluster_value,
            endpoint_host: &ctx.endpoint_host,
            owner: &owner,
        };
        let (server_pairs, server_files) = rke2::server_config(&server_input, &mut resolver);
        pairs.extend(agent_pairs);
        pairs.extend(server_pairs);
        config_files.extend(server_files);
    } else {
        pairs.extend(agent_pairs);
    }
    config_files.extend(agent_files);
    let config_yaml = rke2::config_yaml(pairs);

    let (registries_yaml, registry_files) = rke2::registries(spec, ns, &owner, &mut resolver);
    let mut files = config_files;
    files.extend(registry_files);
    files.push(File::new(rke2::REGISTRIES_PATH, registries_yaml, "0640"));
    for f in spec
        .get("files")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        files.push(user_file(f, ns, &owner, &mut resolver));
    }
    if control_plane
        && let Some(rcp) = ctx.c.control_plane
        && let Some(r) = Ref::at(
            &rcp.value,
            &["spec", "manifestsConfigMapReference"],
            rcp.namespace(),
        )
    {
        for (key, text) in resolver.manifests_config_map(&owner, &r) {
            files.push(File {
                path: format!("/var/lib/rancher/rke2/server/manifests/{key}"),
                owner: String::new(),
                permissions: String::new(),
                encoding: String::new(),
                content: text,
            });
        }
    }
    files.extend(ca_files);
    files.push(File::new(rke2::CONFIG_PATH, config_yaml, "0640"));

    let format = match string(agent, &["format"]).as_str() {
        "ignition" => Format::Ignition,
        _ => Format::CloudConfig,
    };
    let additional = string(agent, &["additionalUserData", "config"]);
    let mut arbitrary: Vec<(String, String)> =
        crate::manifests::sorted_map(agent, &["additionalUserData", "data"])
            .into_iter()
            .filter(|(k, _)| !userdata::IGNORED_KEYS.contains(&k.as_str()))
            .map(|(k, v)| (k, userdata::correct_arbitrary(&v)))
            .collect();
    arbitrary.sort();
    let mut base = userdata::BaseUserData {
        control_plane,
        files,
        ntp_servers: strings(agent, &["ntp", "servers"]),
        arbitrary,
        additional: String::new(),
        pre: strings(spec, &["preRKE2Commands"]),
        post: strings(spec, &["postRKE2Commands"]),
        version: job.version.clone(),
        air_gapped: flag(agent, &["airGapped"]),
        checksum: string(agent, &["airGappedChecksum"]),
        cis: !string(agent, &["cisProfile"]).is_empty(),
    };
    findings.append(&mut resolver.findings);
    generated.append(&mut resolver.generated);
    let refuse = |findings: &mut Vec<Finding>, why: String| {
        findings.push(Finding::new(
            Check::ManifestRenderFails,
            format!("{owner}: CAPRKE2 cannot render this Machine's bootstrap data: {why}"),
        ));
    };
    let userdata = match format {
        Format::CloudConfig => {
            if !additional.is_empty() {
                match userdata::cleanup_additional_cloud_config(&additional) {
                    Ok(text) => base.additional = text,
                    Err(why) => refuse(
                        &mut findings,
                        format!(
                            "spec.agentConfig.additionalUserData.config does not parse as YAML ({why})"
                        ),
                    ),
                }
            }
            userdata::cloud_config(&base).into_bytes()
        }
        Format::Ignition => {
            if job.version.is_empty() {
                refuse(
                    &mut findings,
                    "the RKE2 version is empty, which Ignition rendering refuses".to_owned(),
                );
                orphans.append(&mut findings);
                return Ok(None);
            }
            let flatcar = additional.contains("variant: flatcar");
            let strict = flag(agent, &["additionalUserData", "strict"]);
            let butane = (!additional.trim().is_empty()).then_some((additional.as_str(), strict));
            match userdata::ignition(&base, flatcar, butane) {
                Ok((bytes, left_out)) => {
                    if !left_out.is_empty() {
                        findings.push(Finding::new(
                            Check::ManifestButaneNotMerged,
                            format!(
                                "{owner}: spec.agentConfig.additionalUserData.config sets {}, which the preview does not translate from Butane; CAPRKE2 merges them, so the real payload has them on top",
                                left_out
                                    .iter()
                                    .map(|s| crate::codec::text::terminal_safe(s).into_owned())
                                    .collect::<Vec<_>>()
                                    .join(", ")
                            ),
                        ));
                    }
                    bytes
                }
                Err(why) => {
                    refuse(&mut findings, why.0);
                    orphans.append(&mut findings);
                    return Ok(None);
                }
            }
        }
    };
    let gzip = spec
        .get("gzipUserData")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    let value = crate::encode::compress(&userdata, format, gzip);
    Ok(Some(PreviewSecret {
        name: job.name.clone(),
        namespace: ns.to_owned(),
        cluster: ctx.c.name.clone(),
        role: job.role,
        format,
        gzip,
        userdata,
        value,
        source: format!(
            "{owner} in {}",
            crate::codec::text::terminal_safe(&job.source.source)
        ),
        generated,
        findings,
        site: Some(job.source.site()),
        delivery: job
            .machine
            .and_then(|machine| delivery(m, machine, format == Format::Ignition)),
    }))
}

/// The path the machine's bootstrap data takes, from the infrastructure (template) that
/// `machine`'s `infrastructureRef` names: read from the template in the input, or, when it is
/// not there, its kind's default path.
fn delivery(
    m: &Manifests,
    machine: &Object,
    ignition: bool,
) -> Option<crate::reports::clouds::Delivery> {
    let (field, r) = crate::manifests::INFRASTRUCTURE_REFS
        .iter()
        .find_map(|path| {
            Some((
                machine.get(path)?,
                Ref::at(&machine.value, path, machine.namespace())?,
            ))
        })?;
    let kind = string(field, &["kind"]);
    // v1beta1 references carry apiVersion, v1beta2 ones apiGroup.
    let api = match string(field, &["apiVersion"]) {
        v if !v.is_empty() => v,
        _ => format!("{}/", string(field, &["apiGroup"])),
    };
    let infra = m
        .objects
        .iter()
        .find(|o| o.kind() == kind && o.name() == r.name && o.namespace() == r.namespace);
    let null = Value::Null;
    let spec = infra
        .and_then(|o| {
            if kind.ends_with("Template") {
                o.get(&["spec", "template", "spec"])
            } else {
                o.get(&["spec"])
            }
        })
        .unwrap_or(&null);
    let found =
        crate::reports::clouds::delivery_for(&kind, &api, spec, ignition).or_else(|| {
            crate::reports::clouds::delivery_for(&format!("{kind}Template"), &api, spec, ignition)
        })?;
    let safe = crate::codec::text::terminal_safe;
    let reason = match infra {
        Some(o) => format!("{}: {}", o.title(), found.reason),
        None => format!(
            "{} {r} (not in the input, so its defaults): {}",
            safe(&kind),
            found.reason
        ),
    };
    Some(crate::reports::clouds::Delivery {
        cloud: found.cloud,
        reason,
    })
}

/// CAPRKE2's check of a CIS profile against the version (`pkg/util` `ProfileCompliant`).
fn cis_profile_fits(profile: &str, version: &str) -> bool {
    let minor = version
        .strip_prefix('v')
        .and_then(|v| v.split_once('.'))
        .and_then(|(major, rest)| {
            Some((
                major.parse::<u32>().ok()?,
                rest.split('.').next()?.parse::<u32>().ok()?,
            ))
        });
    let Some((major, minor)) = minor else {
        return false;
    };
    let at_least_125 = (major, minor) >= (1, 25);
    match profile {
        "cis" | "cis-1.23" => at_least_125,
        "cis-1.5" | "cis-1.6" => !at_least_125,
        _ => false,
    }
}

/// A `spec.files` entry with `contentFrom` resolved.
fn user_file(f: &Value, namespace: &str, owner: &str, resolver: &mut Resolver<'_>) -> File {
    let mut file = File {
        path: string(f, &["path"]),
        owner: string(f, &["owner"]),
        permissions: string(f, &["permissions"]),
        encoding: string(f, &["encoding"]),
        content: string(f, &["content"]),
    };
    let field = "spec.files[].contentFrom";
    if let Some(from) = f.get("contentFrom") {
        if let Some(r) = Ref::at(from, &["secret"], namespace) {
            let key = string(from, &["secret", "key"]);
            file.content = resolver.secret_text(owner, &r, &key, field, 512);
        } else if let Some(r) = Ref::at(from, &["configMap"], namespace) {
            let key = string(from, &["configMap", "key"]);
            file.content = resolver.config_map(owner, &r, &key, field, 512);
        }
    }
    file
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
                    Some(site) => json!({"id": f.check.id(), "severity": f.severity.as_str(), "message": f.message, "manifest": site}),
                    None => json!({"id": f.check.id(), "severity": f.severity.as_str(), "message": f.message}),
                })
                .collect();
            annotations.insert(
                FINDINGS_ANNOTATION.to_owned(),
                Value::String(Value::Array(list).to_string()),
            );
        }
        if let Some(site) = &self.site {
            let mut from = json!({"file": site.file, "object": site.object, "line": site.line});
            if let Some(d) = &self.delivery {
                from["delivery"] = json!({"cloud": d.cloud, "reason": d.reason});
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
                "format": crate::codec::b64::encode(self.format.as_str().as_bytes()),
                "value": crate::codec::b64::encode(&self.value),
            },
        })
    }
}

/// A stable, made-up UID for an owner reference (the RKE2Config does not exist yet).
fn uid_for(name: &str) -> String {
    let digest = crate::codec::digest::sha256_hex(name.as_bytes());
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
}
