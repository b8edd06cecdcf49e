//! The first links of the chain, up to the init Node: what must hold before any node can join.
//! Each function reads one cluster's objects and returns its link; none stops at a broken one
//! before it, so every link is shown.

use crate::cluster::ClusterObjects;
use crate::inventory::Kind;
use crate::link::{Link, LinkId, ObjectRef, State};
use crate::view;

/// A link that cannot be decided: `why`.
pub(crate) fn unknown(id: LinkId, why: String) -> Link {
    Link::new(id, State::Unknown).seen(why)
}

/// `infrastructure-provisioned`.
pub(crate) fn infrastructure(c: &ClusterObjects<'_>) -> Link {
    let id = LinkId::InfrastructureProvisioned;
    let Some(cluster) = c.cluster else {
        return unknown(id, missing(c, Kind::Cluster));
    };
    let (field, value) = if view::version(cluster) == "v1beta1" {
        (
            "status.infrastructureReady",
            view::bool_at(cluster, &["status", "infrastructureReady"]),
        )
    } else {
        (
            "status.initialization.infrastructureProvisioned",
            view::bool_at(
                cluster,
                &["status", "initialization", "infrastructureProvisioned"],
            ),
        )
    };
    let link = Link::new(id, State::Holds).on(Some(c.cluster_ref()), field);
    if value == Some(true) {
        return link.seen("true");
    }
    let mut seen = value.map_or("not set".to_owned(), |v| v.to_string());
    if let Some(condition) = view::condition(cluster, &["InfrastructureReady"]) {
        seen.push_str("; ");
        seen.push_str(&condition.describe("InfrastructureReady"));
    }
    Link {
        state: State::Broken,
        ..link.seen(seen).needed(
            "true: the infrastructure provider marks its cluster object provisioned; until then RKE2ControlPlane creates nothing and RKE2Config writes no bootstrap data",
        )
    }
}

/// `control-plane-endpoint`.
pub(crate) fn endpoint(c: &ClusterObjects<'_>) -> Link {
    let id = LinkId::ControlPlaneEndpoint;
    if c.cluster.is_none() {
        return unknown(id, missing(c, Kind::Cluster));
    }
    let link = Link::new(id, State::Holds).on(Some(c.cluster_ref()), "spec.controlPlaneEndpoint");
    match c.endpoint() {
        Some((host, port)) if !host.is_empty() && port > 0 => link.seen(format!("{host}:{port}")),
        found => Link {
            state: State::Broken,
            ..link
                .seen(found.map_or("not set".to_owned(), |(host, port)| {
                    format!("host {host:?}, port {port}")
                }))
                .needed("a host and a port: RKE2ControlPlane creates no Machine until the endpoint is valid, and its host is the init node's tls-san and the join URL's host (port 9345)")
        },
    }
}

/// `init-machine`.
pub(crate) fn init_machine(c: &ClusterObjects<'_>, initialized: Option<bool>) -> Link {
    let id = LinkId::InitMachine;
    let control_planes: Vec<_> = c.control_planes().collect();
    if c.inventory.count(Kind::Machine) == 0 && c.inventory.missing(Kind::Machine).is_some() {
        return unknown(id, missing(c, Kind::Machine));
    }
    let inits: Vec<_> = control_planes.iter().filter(|m| m.is_init()).collect();
    let field = "spec.bootstrap.dataSecretName";
    match inits.as_slice() {
        [one] => Link::new(id, State::Holds)
            .on(Some(one.reference()), field)
            .seen(format!(
                "init data in Secret {}",
                one.secret.unwrap_or_default()
            )),
        [first, rest @ ..] if !rest.is_empty() => {
            let names: Vec<&str> = inits.iter().map(|m| m.name()).collect();
            Link::new(id, State::Broken)
                .on(Some(rest[0].reference()), field)
                .seen(format!(
                    "{} control-plane Machines got init data: {} (the first, {}, has the cluster's CAs; the others start clusters of their own)",
                    inits.len(),
                    names.join(", "),
                    first.name()
                ))
                .needed("exactly one: the init lock lets one Machine create the cluster, every other server joins it")
        }
        _ => no_init_machine(c, &control_planes, initialized),
    }
}

/// `init-machine` when no control-plane Machine of the input carries init data.
fn no_init_machine(
    c: &ClusterObjects<'_>,
    control_planes: &[&crate::cluster::Machine<'_>],
    initialized: Option<bool>,
) -> Link {
    let id = LinkId::InitMachine;
    if control_planes.is_empty() {
        return Link::new(id, State::Broken)
            .on(c.control_plane_ref(), "spec.replicas")
            .seen("no control-plane Machine")
            .needed("RKE2ControlPlane creates the first control-plane Machine once the infrastructure is provisioned and the endpoint is valid");
    }
    if initialized == Some(true) {
        let seen = if control_planes.iter().all(|m| m.payload_read()) {
            "the control plane is initialized; the init Machine is gone (replaced)"
        } else {
            "the control plane is initialized (not every control-plane payload is in the input)"
        };
        return Link::new(id, State::Holds)
            .on(Some(c.cluster_ref()), "")
            .seen(seen);
    }
    let unread: Vec<&str> = control_planes
        .iter()
        .filter(|m| m.payload.is_none())
        .map(|m| m.name())
        .collect();
    if !unread.is_empty() {
        if let Some(why) = c.inventory.missing(Kind::Secret) {
            return unknown(id, why);
        }
        let waiting: Vec<&str> = control_planes
            .iter()
            .filter(|m| m.secret.is_none())
            .map(|m| m.name())
            .collect();
        if waiting.len() == control_planes.len() {
            return Link::new(id, State::Broken)
                .on(Some(control_planes[0].reference()), "spec.bootstrap.dataSecretName")
                .seen(format!("no bootstrap data yet on {}", waiting.join(", ")))
                .needed("RKE2Config writes the init data for one control-plane Machine once the infrastructure is provisioned");
        }
        return unknown(
            id,
            format!(
                "the bootstrap Secrets of {} are not in the input",
                unread.join(", ")
            ),
        );
    }
    let unreadable: Vec<String> = control_planes
        .iter()
        .filter_map(|m| {
            let why = m.payload.and_then(|p| p.unreadable.as_deref())?;
            Some(format!("{}: {why}", m.name()))
        })
        .collect();
    if !unreadable.is_empty() {
        return unknown(
            id,
            format!(
                "no readable control-plane payload carries init data; unreadable: {}",
                unreadable.join("; ")
            ),
        );
    }
    Link::new(id, State::Broken)
        .on(Some(control_planes[0].reference()), "spec.bootstrap.dataSecretName")
        .seen("every control-plane payload joins (has a server); none creates the cluster")
        .needed("one control-plane Machine with init data (no server) while the control plane is not initialized")
}

/// `init-node`.
pub(crate) fn init_node(c: &ClusterObjects<'_>, initialized: Option<bool>) -> Link {
    let id = LinkId::InitNode;
    let by_payload = c.control_planes().find(|m| m.is_init());
    // Without the payloads, before initialization: the oldest control-plane Machine, which
    // RKE2ControlPlane creates first and whose RKE2Config takes the init lock.
    let by_age = || {
        (initialized != Some(true))
            .then(|| c.control_planes().next())
            .flatten()
            .filter(|m| !m.payload_read())
    };
    let Some(init) = by_payload.or_else(by_age) else {
        return if initialized == Some(true) {
            Link::new(id, State::NotApplicable)
                .seen("the init Machine is gone; the control plane is initialized")
        } else {
            unknown(id, "no init Machine to follow".to_owned())
        };
    };
    let link = Link::new(id, State::Holds).on(Some(init.reference()), "status.nodeRef");
    if let Some(node) = init.node() {
        return link.seen(format!("Node {node}"));
    }
    let payload = init.payload;
    let kubelet = payload.and_then(|p| p.provider_id.as_deref());
    let cloud = payload.and_then(|p| p.cloud_provider.as_deref());
    let Some(provider_id) = init.provider_id() else {
        return Link {
            state: State::Broken,
            ..link.on(Some(init.reference()), "spec.providerID").seen("not set").needed(
                "the infrastructure provider sets spec.providerID once the instance exists; Cluster API then finds the Node by it",
            )
        };
    };
    let mut seen = format!("no Node yet for providerID {provider_id}");
    if by_payload.is_none() {
        seen.push_str(" (the oldest control-plane Machine, taken as the init one: its bootstrap Secret is not in the input)");
    }
    match (kubelet, cloud) {
        (Some(k), _) if k != provider_id => seen.push_str(&format!(
            "; the payload's kubelet provider-id is {k}, which never matches it"
        )),
        (Some(k), _) => seen.push_str(&format!("; the payload's kubelet provider-id is {k}")),
        (None, Some(cloud)) => seen.push_str(&format!(
            "; the payload sets no kubelet provider-id, cloud-provider-name {cloud} sets it"
        )),
        (None, None) => seen.push_str(
            "; the payload sets no kubelet provider-id and no cloud-provider-name: the Node's providerID comes from a cloud controller manager, or is never set",
        ),
    }
    for kind in ["NodeHealthy", "NodeReady"] {
        if let Some(condition) = view::condition(init.object, &[kind]) {
            seen.push_str("; ");
            seen.push_str(&condition.describe(kind));
            break;
        }
    }
    // Once the control plane is initialized, the init Machine is one control plane among
    // others: the joins wait on a Ready one (ready-control-plane), not on it.
    let state = if initialized == Some(true) {
        State::Warning
    } else {
        State::Broken
    };
    Link {
        state,
        ..link.seen(seen).needed(format!(
            "a Node whose spec.providerID is exactly {provider_id}: every join waits for this control plane to be Ready"
        ))
    }
}

/// Whether the control plane is initialized, by the Cluster, else by the RKE2ControlPlane.
pub(crate) fn is_initialized(c: &ClusterObjects<'_>) -> Option<bool> {
    cluster_initialized(c)
        .map(|(v, _)| v)
        .or_else(|| rcp_initialized(c).map(|(v, _)| v))
}

fn cluster_initialized(c: &ClusterObjects<'_>) -> Option<(bool, &'static str)> {
    let cluster = c.cluster?;
    // RKE2Config reads the condition (v1beta2 `ControlPlaneInitialized`); the fields mirror it.
    if let Some(condition) = view::condition(cluster, &["ControlPlaneInitialized"]) {
        return Some((
            condition.is_true(),
            "status.conditions[ControlPlaneInitialized]",
        ));
    }
    if let Some(v) = view::bool_at(
        cluster,
        &["status", "initialization", "controlPlaneInitialized"],
    ) {
        return Some((v, "status.initialization.controlPlaneInitialized"));
    }
    Some((
        view::bool_at(cluster, &["status", "controlPlaneReady"]).unwrap_or(false),
        "status.controlPlaneReady",
    ))
}

fn rcp_initialized(c: &ClusterObjects<'_>) -> Option<(bool, &'static str)> {
    let rcp = c.control_plane?;
    if let Some(v) = view::bool_at(
        rcp,
        &["status", "initialization", "controlPlaneInitialized"],
    ) {
        return Some((v, "status.initialization.controlPlaneInitialized"));
    }
    Some((
        view::bool_at(rcp, &["status", "initialized"]).unwrap_or(false),
        "status.initialized",
    ))
}

/// `control-plane-initialized`.
pub(crate) fn initialized(c: &ClusterObjects<'_>) -> Link {
    let id = LinkId::ControlPlaneInitialized;
    let rcp = rcp_initialized(c);
    let Some((value, field)) = cluster_initialized(c) else {
        return match rcp {
            Some((v, field)) => Link::new(id, if v { State::Holds } else { State::Broken })
                .on(c.control_plane_ref(), field)
                .seen(v.to_string()),
            None => unknown(id, missing(c, Kind::Cluster)),
        };
    };
    let link = Link::new(id, State::Holds).on(Some(c.cluster_ref()), field);
    if value {
        return link.seen("true");
    }
    let mut seen = "false".to_owned();
    if let Some(condition) = c
        .cluster
        .and_then(|cl| view::condition(cl, &["ControlPlaneInitialized"]))
    {
        seen = condition.describe("ControlPlaneInitialized");
    }
    if let Some((v, rcp_field)) = rcp {
        seen.push_str(&format!("; RKE2ControlPlane {rcp_field}: {v}"));
    }
    Link {
        state: State::Broken,
        ..link.seen(seen).needed(
            "true: RKE2Config writes no join data (control planes or workers) until the Cluster says the control plane is initialized; RKE2ControlPlane says so once the workload cluster's kube-system/rke2-serving Secret exists",
        )
    }
}

/// Why `kind` cannot be relied on in this input.
pub(crate) fn missing(c: &ClusterObjects<'_>, kind: Kind) -> String {
    c.inventory
        .missing(kind)
        .unwrap_or_else(|| format!("no {} {}/{} in the input", kind.kind(), c.namespace, c.name))
}

/// The Secret `name` of the cluster's namespace.
pub(crate) fn secret_ref(c: &ClusterObjects<'_>, name: &str) -> ObjectRef {
    ObjectRef::new("Secret", Some(c.namespace), name)
}
