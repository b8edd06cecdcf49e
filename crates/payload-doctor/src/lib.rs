//! Why a Cluster API RKE2 (CAPRKE2) node does not join: the join chain the controllers walk,
//! read link by link from the live objects of a management cluster or a dump of them.
//!
//! The doctor reads, per cluster, what CAPRKE2's controllers read: the `Cluster`, its
//! `RKE2ControlPlane`, its `Machine`s and `RKE2Config`s, each Machine's bootstrap Secret (its
//! payload read with [`rke2_payload`] for the role, the `server`, the token's fingerprint and
//! the kubelet's `provider-id`), the `<cluster>-token` Secret, and clusterctl's `Provider`s.
//! It walks the chain in the controllers' order ([`LINKS`]) and says of each link whether it
//! holds, is broken, is worth a warning, cannot be decided, or does not apply, naming the
//! object and field it read, what it saw, what the controller needs and where upstream needs
//! it. It reads `v1beta1` and `v1beta2` objects alike. Nothing secret is shown: a token only
//! as its SHA-256 (the tokens read are kept in memory only to mask them wherever input text
//! reaches a link, and zeroed when dropped).
//!
//! ```
//! use payload_doctor::{DoctorOptions, Inventory, LinkId, State, diagnose};
//!
//! let dump = br#"{"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "Cluster",
//!   "metadata": {"name": "demo", "namespace": "fleet"},
//!   "spec": {"controlPlaneRef": {"apiGroup": "controlplane.cluster.x-k8s.io", "kind": "RKE2ControlPlane", "name": "demo"}},
//!   "status": {"initialization": {"infrastructureProvisioned": false}}}"#;
//! let mut inventory = Inventory::new(Default::default());
//! inventory.read("dump.json", dump)?;
//! let diagnosis = diagnose(&inventory, &DoctorOptions::default());
//! let first = diagnosis.clusters[0].first_broken().expect("a broken link");
//! assert_eq!(first.id, LinkId::InfrastructureProvisioned);
//! assert_eq!(first.state, State::Broken);
//! assert_eq!(diagnosis.exit_code(false), 1);
//! # Ok::<(), payload_doctor::DoctorError>(())
//! ```

#![deny(missing_docs)]

mod chain;
mod cluster;
mod delivery;
mod health;
mod inventory;
mod join;
mod link;
mod view;

use serde::{Deserialize, Serialize};

pub use delivery::{cluster_infrastructure_kinds, infrastructure_kinds, live_origin};
pub use inventory::{Inventory, Kind, Unread, kubectl_unread};
pub use link::{LINKS, Link, LinkId, LinkInfo, ObjectRef, State};

/// The schema id of the doctor's JSON and YAML documents.
pub const DOCTOR_SCHEMA: &str = "rke2-payload/doctor/v1";

/// What went wrong reading the doctor's input.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DoctorError {
    /// An input did not read as Kubernetes objects.
    #[error("reading {input}")]
    Input {
        /// The input's name (a file, `kubectl get <kind>`).
        input: String,
        /// Why.
        #[source]
        source: Box<rke2_payload::Error>,
    },
}

/// Which clusters to diagnose.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct DoctorOptions {
    /// Only clusters in this namespace.
    pub namespace: Option<String>,
    /// Only the cluster of this name.
    pub cluster: Option<String>,
}

impl DoctorOptions {
    /// Every cluster.
    pub fn new() -> Self {
        DoctorOptions::default()
    }

    /// Only clusters in `namespace`.
    pub fn with_namespace(mut self, namespace: Option<String>) -> Self {
        self.namespace = namespace;
        self
    }

    /// Only the cluster `name`.
    pub fn with_cluster(mut self, name: Option<String>) -> Self {
        self.cluster = name;
        self
    }
}

/// One cluster's chain.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[non_exhaustive]
pub struct ClusterChain {
    /// The Cluster's namespace.
    pub namespace: String,
    /// The Cluster's name.
    pub name: String,
    /// The `apiVersion` of its `Cluster` object, when read.
    pub api_version: Option<String>,
    /// The first broken link's id, if any.
    pub first_broken: Option<LinkId>,
    /// Every link, in chain order.
    pub links: Vec<Link>,
}

impl ClusterChain {
    /// The first broken link, in chain order.
    pub fn first_broken(&self) -> Option<&Link> {
        self.links.iter().find(|l| l.state == State::Broken)
    }

    /// The links in `state`.
    pub fn in_state(&self, state: State) -> impl Iterator<Item = &Link> {
        self.links.iter().filter(move |l| l.state == state)
    }
}

/// A cluster left alone: its control plane is not an `RKE2ControlPlane` (or it names none, and
/// nothing of RKE2 in the input belongs to it).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[non_exhaustive]
pub struct SkippedCluster {
    /// Its namespace.
    pub namespace: String,
    /// Its name.
    pub name: String,
    /// The kind of its control plane (`KubeadmControlPlane`, …), or `no control plane`.
    pub control_plane: String,
}

/// A kind that could not be read.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[non_exhaustive]
pub struct UnreadKind {
    /// The resource (`secrets`, `machines.cluster.x-k8s.io`).
    pub resource: String,
    /// `refused` (RBAC) or `not-served` (no such resource on the server).
    pub reason: String,
    /// What kubectl said.
    pub message: String,
}

/// What the doctor found.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[non_exhaustive]
pub struct Diagnosis {
    /// [`DOCTOR_SCHEMA`].
    pub schema: String,
    /// Each RKE2 cluster's chain, in namespace and name order.
    pub clusters: Vec<ClusterChain>,
    /// Clusters of another control plane, left alone.
    pub skipped_clusters: Vec<SkippedCluster>,
    /// The kinds that could not be read.
    pub unread: Vec<UnreadKind>,
    /// Counts.
    pub summary: Summary,
}

/// The counts of a [`Diagnosis`].
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[non_exhaustive]
pub struct Summary {
    /// Clusters diagnosed.
    pub clusters: usize,
    /// Clusters with a broken link.
    pub broken: usize,
    /// Links with a warning, in all clusters.
    pub warnings: usize,
    /// Links that could not be decided, in all clusters.
    pub unknown: usize,
}

impl Diagnosis {
    /// 1 when a link is broken (or, with `deny_warnings`, warns), else 0.
    pub fn exit_code(&self, deny_warnings: bool) -> i32 {
        let failed = self.summary.broken > 0 || (deny_warnings && self.summary.warnings > 0);
        i32::from(failed)
    }
}

/// Walks the chain of every RKE2 cluster of `inventory` that `options` selects.
pub fn diagnose(inventory: &Inventory, options: &DoctorOptions) -> Diagnosis {
    let (ours, others) = cluster::clusters(inventory);
    let selected = |namespace: &str, name: &str| {
        options.namespace.as_deref().is_none_or(|n| n == namespace)
            && options.cluster.as_deref().is_none_or(|c| c == name)
    };
    let versions = health::provider_versions(inventory);
    let clusters: Vec<ClusterChain> = ours
        .into_iter()
        .filter(|(namespace, name)| selected(namespace, name))
        .map(|(namespace, name)| {
            let objects = cluster::ClusterObjects::gather(inventory, namespace, name);
            let mut links = walk(&objects);
            links.push(versions.clone());
            // Input text reaches what a link says (condition messages, addresses, names): no
            // secret read does.
            for link in &mut links {
                inventory.mask(&mut link.seen);
                inventory.mask(&mut link.needed);
                inventory.mask(&mut link.field);
            }
            ClusterChain {
                namespace: namespace.to_owned(),
                name: name.to_owned(),
                api_version: objects
                    .cluster
                    .and_then(|c| view::str_at(c, &["apiVersion"]))
                    .map(str::to_owned),
                first_broken: links
                    .iter()
                    .find(|l| l.state == State::Broken)
                    .map(|l| l.id),
                links,
            }
        })
        .collect();
    let skipped_clusters = others
        .into_iter()
        .filter(|(namespace, name, _)| selected(namespace, name))
        .map(|(namespace, name, kind)| SkippedCluster {
            namespace: namespace.to_owned(),
            name: name.to_owned(),
            control_plane: kind,
        })
        .collect();
    let unread = inventory
        .unread
        .iter()
        .map(|(kind, why)| UnreadKind {
            resource: kind.resource().to_owned(),
            reason: match why {
                Unread::Refused(_) => "refused",
                Unread::NotServed(_) => "not-served",
            }
            .to_owned(),
            message: why.sentence().to_owned(),
        })
        .collect();
    let count = |state: State| {
        clusters
            .iter()
            .map(|c| c.in_state(state).count())
            .sum::<usize>()
    };
    let summary = Summary {
        clusters: clusters.len(),
        broken: clusters.iter().filter(|c| c.first_broken.is_some()).count(),
        warnings: count(State::Warning),
        unknown: count(State::Unknown),
    };
    Diagnosis {
        schema: DOCTOR_SCHEMA.to_owned(),
        clusters,
        skipped_clusters,
        unread,
        summary,
    }
}

/// The chain of one cluster, but for `provider-versions` (the management cluster's).
fn walk(c: &cluster::ClusterObjects<'_>) -> Vec<Link> {
    let initialized = chain::is_initialized(c);
    // A Machine whose remediation is blocked breaks links before remediation's (it is not
    // Ready, its checks fail): those say so as warnings, and the break is remediation's.
    let remediation = health::remediation(c, initialized);
    let stuck = health::stuck(c, &remediation);
    vec![
        chain::infrastructure(c),
        chain::endpoint(c),
        chain::init_machine(c, initialized),
        chain::init_node(c, initialized),
        chain::initialized(c),
        join::token(c),
        join::ready(c, &stuck),
        join::registration_address(c),
        join::available_server_ips(c, &stuck),
        join::join_target(c),
        health::preflight(c, &stuck),
        remediation,
    ]
}

#[cfg(any(test, feature = "fuzzing"))]
pub mod fuzzing;
#[cfg(test)]
mod tests;
