//! The links of the join chain: one table of ids, what each needs and where upstream needs it;
//! the state of a link; a link as the doctor reports it.

use serde::{Deserialize, Serialize};

/// A link of the join chain, in the order the controllers walk it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum LinkId {
    /// The Cluster says its infrastructure is provisioned.
    InfrastructureProvisioned,
    /// `Cluster.spec.controlPlaneEndpoint` has a host and a port.
    ControlPlaneEndpoint,
    /// Exactly one control-plane Machine got init data.
    InitMachine,
    /// The init Machine has a `providerID` and a Node.
    InitNode,
    /// The Cluster (and the RKE2ControlPlane) say the control plane is initialized.
    ControlPlaneInitialized,
    /// `<cluster>-token` exists and holds the token of every payload.
    TokenSecret,
    /// At least one control-plane Machine is Ready.
    ReadyControlPlane,
    /// Every Ready control-plane Machine has an address of the type the registration method
    /// reads.
    RegistrationAddress,
    /// `RKE2ControlPlane.status.availableServerIPs` is not empty.
    AvailableServerIps,
    /// Every waiting join payload's `server` is a current join target.
    JoinTarget,
    /// Scaling is not blocked by the preflight checks.
    Preflight,
    /// Remediation is not blocked.
    Remediation,
    /// The installed Cluster API core is a version CAPRKE2 was tested with.
    ProviderVersions,
}

/// One row of the link table.
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub struct LinkInfo {
    /// The link.
    pub id: LinkId,
    /// When it holds.
    pub holds_when: &'static str,
    /// Where upstream makes it a requirement: files and lines at CAPRKE2 v0.25.0
    /// (`rancher/cluster-api-provider-rke2`, built on Cluster API v1.13.2) and Cluster API
    /// v1.13.2 (`kubernetes-sigs/cluster-api`; v1.14.0 moved `internal/controllers/` to
    /// `core/reconcilers/`, the lines the same).
    pub source: &'static str,
}

/// The chain, in the order the controllers walk it.
pub const LINKS: [LinkInfo; 13] = [
    LinkInfo {
        id: LinkId::InfrastructureProvisioned,
        holds_when: "the Cluster says its infrastructure is provisioned (v1beta2 status.initialization.infrastructureProvisioned, v1beta1 status.infrastructureReady)",
        source: "CAPRKE2 v0.25.0 controlplane/internal/controllers/rke2controlplane_controller.go:375-397, bootstrap/internal/controllers/rke2config_controller.go:172-182; set by Cluster API v1.13.2 internal/controllers/cluster/cluster_controller_phases.go:245",
    },
    LinkInfo {
        id: LinkId::ControlPlaneEndpoint,
        holds_when: "Cluster spec.controlPlaneEndpoint has a host and a port",
        source: "CAPRKE2 v0.25.0 controlplane/internal/controllers/rke2controlplane_controller.go:421-440 (IsValid: Cluster API v1.13.2 api/core/v1beta2/cluster_types.go:1624-1626); tls-san pkg/rke2/config.go:350",
    },
    LinkInfo {
        id: LinkId::InitMachine,
        holds_when: "exactly one control-plane Machine got init data (no server, the cluster CAs)",
        source: "CAPRKE2 v0.25.0 controlplane/internal/controllers/rke2controlplane_controller.go:563-567, scale.go:51-99; bootstrap/internal/controllers/rke2config_controller.go:391-395 (the <cluster>-lock init lock, pkg/locking/control_plane_init_mutex.go:50-120)",
    },
    LinkInfo {
        id: LinkId::InitNode,
        holds_when: "the init Machine has a providerID and a Node (status.nodeRef)",
        source: "Cluster API v1.13.2 internal/controllers/machine/machine_controller_noderef.go:84-116 (the Node found by spec.providerID, :218-245), machine_controller_status.go:401-412",
    },
    LinkInfo {
        id: LinkId::ControlPlaneInitialized,
        holds_when: "the Cluster says the control plane is initialized (v1beta2 status.initialization.controlPlaneInitialized, v1beta1 condition ControlPlaneInitialized)",
        source: "CAPRKE2 v0.25.0 bootstrap/internal/controllers/rke2config_controller.go:229-232 (joins wait for the Cluster's ControlPlaneInitialized), controlplane/internal/controllers/status.go:146-150,179-181; Cluster API v1.13.2 internal/controllers/cluster/cluster_controller_status.go:597-603",
    },
    LinkInfo {
        id: LinkId::TokenSecret,
        holds_when: "the <cluster>-token Secret exists and its token is the one in every payload",
        source: "CAPRKE2 v0.25.0 bootstrap/internal/controllers/rke2config_controller.go:973-1010 (made with the init data, key value), :679-695 and :831-848 (control-plane and worker joins read it)",
    },
    LinkInfo {
        id: LinkId::ReadyControlPlane,
        holds_when: "at least one control-plane Machine is Ready",
        source: "CAPRKE2 v0.25.0 controlplane/internal/controllers/status.go:80,152-156 (only Ready Machines: Cluster API v1.13.2 util/collections/machine_filters.go:208-215), rke2controlplane_controller.go:798-817",
    },
    LinkInfo {
        id: LinkId::RegistrationAddress,
        holds_when: "with registrationMethod internal-first, internal-only-ips or external-only-ips, every Ready control-plane Machine has an address of the type it reads",
        source: "CAPRKE2 v0.25.0 pkg/registration/registration.go:36-140, controlplane/internal/controllers/status.go:158-177",
    },
    LinkInfo {
        id: LinkId::AvailableServerIps,
        holds_when: "RKE2ControlPlane status.availableServerIPs is not empty",
        source: "CAPRKE2 v0.25.0 bootstrap/internal/controllers/rke2config_controller.go:699-703,852-856 (joins wait while it is empty), controlplane/internal/controllers/status.go:114-177",
    },
    LinkInfo {
        id: LinkId::JoinTarget,
        holds_when: "the payload of every Machine still waiting for its Node reads, and names a current join target (availableServerIPs, the endpoint host or the registration address) on port 9345",
        source: "CAPRKE2 v0.25.0 bootstrap/internal/controllers/rke2config_controller.go:66,717,867 (server: https://<availableServerIPs[0]>:9345)",
    },
    LinkInfo {
        id: LinkId::Preflight,
        holds_when: "no control-plane Machine is being deleted and each has AgentHealthy and EtcdMemberHealthy True (else scaling is blocked)",
        source: "CAPRKE2 v0.25.0 controlplane/internal/controllers/scale.go:110,208-283; the conditions pkg/rke2/workload_cluster_conditions.go:41-146,152-290",
    },
    LinkInfo {
        id: LinkId::Remediation,
        holds_when: "no control-plane Machine waits for a remediation that is blocked (one replica, a Machine provisioning without a Node, a Machine being deleted, etcd quorum)",
        source: "CAPRKE2 v0.25.0 controlplane/internal/controllers/remediation.go:96-103,202-276 (etcd quorum :585-677)",
    },
    LinkInfo {
        id: LinkId::ProviderVersions,
        holds_when: "the installed Cluster API core is a version CAPRKE2 v0.25 was tested with (v1.12, v1.13); another with the v1beta2 API (v1.11, v1.14, …) is a warning, an older one is broken",
        source: "CAPRKE2 v0.25.0 test/e2e/config/e2e_conf.yaml:21-35 (core v1.12.8 and v1.13.2), go.mod (sigs.k8s.io/cluster-api v1.13.2)",
    },
];

impl LinkId {
    /// Every link, in chain order.
    pub const ALL: [LinkId; 13] = {
        let mut ids = [LinkId::InfrastructureProvisioned; 13];
        let mut i = 0;
        while i < LINKS.len() {
            ids[i] = LINKS[i].id;
            i += 1;
        }
        ids
    };

    /// The stable id (`infrastructure-provisioned`, …).
    ///
    /// ```
    /// assert_eq!(payload_doctor::LinkId::AvailableServerIps.as_str(), "available-server-ips");
    /// ```
    pub fn as_str(self) -> &'static str {
        match self {
            LinkId::InfrastructureProvisioned => "infrastructure-provisioned",
            LinkId::ControlPlaneEndpoint => "control-plane-endpoint",
            LinkId::InitMachine => "init-machine",
            LinkId::InitNode => "init-node",
            LinkId::ControlPlaneInitialized => "control-plane-initialized",
            LinkId::TokenSecret => "token-secret",
            LinkId::ReadyControlPlane => "ready-control-plane",
            LinkId::RegistrationAddress => "registration-address",
            LinkId::AvailableServerIps => "available-server-ips",
            LinkId::JoinTarget => "join-target",
            LinkId::Preflight => "preflight",
            LinkId::Remediation => "remediation",
            LinkId::ProviderVersions => "provider-versions",
        }
    }

    /// Its row of [`LINKS`].
    pub fn info(self) -> &'static LinkInfo {
        // Every id has its row: `ALL` is built from the table (a unit test holds the two).
        LINKS.iter().find(|l| l.id == self).unwrap_or(&LINKS[0])
    }
}

impl std::fmt::Display for LinkId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What the doctor says of a link.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "kebab-case")]
pub enum State {
    /// The link holds.
    Holds,
    /// The link is broken: a node waits on it.
    Broken,
    /// Not a break, but worth a look (`--deny warnings` fails on it).
    Warning,
    /// The objects that decide it could not be read (not in the input, or refused).
    Unknown,
    /// The link does not apply to this cluster (another registration method, nothing waits).
    NotApplicable,
}

impl State {
    /// `holds`, `broken`, `warning`, `unknown`, `not-applicable`.
    pub fn as_str(self) -> &'static str {
        match self {
            State::Holds => "holds",
            State::Broken => "broken",
            State::Warning => "warning",
            State::Unknown => "unknown",
            State::NotApplicable => "not-applicable",
        }
    }
}

/// An object a link names.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[non_exhaustive]
pub struct ObjectRef {
    /// Its kind (`Cluster`, `Machine`, `RKE2ControlPlane`, `Secret`, `Provider`, …).
    pub kind: String,
    /// Its namespace.
    pub namespace: Option<String>,
    /// Its name.
    pub name: String,
}

impl ObjectRef {
    /// `kind`, `namespace`, `name`.
    pub fn new(kind: &str, namespace: Option<&str>, name: &str) -> Self {
        ObjectRef {
            kind: kind.to_owned(),
            namespace: namespace.map(str::to_owned),
            name: name.to_owned(),
        }
    }
}

impl std::fmt::Display for ObjectRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.namespace {
            Some(ns) => write!(f, "{} {ns}/{}", self.kind, self.name),
            None => write!(f, "{} {}", self.kind, self.name),
        }
    }
}

/// One link as the doctor found it: what it read, what it saw, what the controller needs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[non_exhaustive]
pub struct Link {
    /// Which link.
    pub id: LinkId,
    /// What the doctor says of it.
    pub state: State,
    /// The object it read (the one that shows the break, when broken).
    pub object: Option<ObjectRef>,
    /// The field it read, as a path (`status.availableServerIPs`).
    pub field: String,
    /// What it saw there (never a secret: tokens as fingerprints).
    pub seen: String,
    /// What the controller needs.
    pub needed: String,
    /// Where upstream needs it ([`LinkInfo::source`]).
    pub source: String,
}

impl Link {
    pub(crate) fn new(id: LinkId, state: State) -> Self {
        Link {
            id,
            state,
            object: None,
            field: String::new(),
            seen: String::new(),
            needed: id.info().holds_when.to_owned(),
            source: id.info().source.to_owned(),
        }
    }

    pub(crate) fn on(mut self, object: Option<ObjectRef>, field: &str) -> Self {
        self.object = object;
        self.field = field.to_owned();
        self
    }

    pub(crate) fn seen(mut self, seen: impl Into<String>) -> Self {
        self.seen = seen.into();
        self
    }

    pub(crate) fn needed(mut self, needed: impl Into<String>) -> Self {
        self.needed = needed.into();
        self
    }
}
