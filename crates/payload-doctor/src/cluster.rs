//! One cluster's objects, found as the controllers find them: its `Cluster`, its
//! `RKE2ControlPlane` (the Cluster's `controlPlaneRef`), its Machines (`spec.clusterName`), each
//! Machine's bootstrap Secret and what its payload says, its `-token` Secret.

use serde_json::Value;

use crate::inventory::{Inventory, Kind, PayloadFacts};
use crate::link::ObjectRef;
use crate::view;

/// The label Cluster API sets on a control-plane Machine.
pub(crate) const CONTROL_PLANE_LABEL: &str = "cluster.x-k8s.io/control-plane";

/// A Machine and its bootstrap data.
// No `Debug`: it holds input objects, which are never printed whole.
pub(crate) struct Machine<'a> {
    pub(crate) object: &'a Value,
    pub(crate) control_plane: bool,
    /// The name of its bootstrap data Secret, when known.
    pub(crate) secret: Option<&'a str>,
    /// What that Secret's payload says, when it was in the input.
    pub(crate) payload: Option<&'a PayloadFacts>,
}

impl<'a> Machine<'a> {
    pub(crate) fn name(&self) -> &'a str {
        view::name(self.object)
    }

    pub(crate) fn reference(&self) -> ObjectRef {
        ObjectRef::new("Machine", view::namespace(self.object), self.name())
    }

    pub(crate) fn node(&self) -> Option<&'a str> {
        view::str_at(self.object, &["status", "nodeRef", "name"]).filter(|n| !n.is_empty())
    }

    pub(crate) fn provider_id(&self) -> Option<&'a str> {
        view::str_at(self.object, &["spec", "providerID"]).filter(|p| !p.is_empty())
    }

    pub(crate) fn deleting(&self) -> Option<&'a str> {
        view::str_at(self.object, &["metadata", "deletionTimestamp"])
    }

    /// Its `Ready` condition.
    pub(crate) fn ready(&self) -> Option<view::Condition<'a>> {
        view::condition(self.object, &["Ready"])
    }

    /// Whether it is Ready: its `Ready` condition; a Machine without one (a dump that left
    /// the conditions out) by its phase `Running` and its Node.
    pub(crate) fn is_ready(&self) -> bool {
        match self.ready() {
            Some(condition) => condition.is_true(),
            None => {
                self.node().is_some()
                    && view::str_at(self.object, &["status", "phase"]) == Some("Running")
            }
        }
    }

    /// `status.addresses`: type and address.
    pub(crate) fn addresses(&self) -> Vec<(&'a str, &'a str)> {
        view::at(self.object, &["status", "addresses"])
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|a| Some((a.get("type")?.as_str()?, a.get("address")?.as_str()?)))
            .collect()
    }

    /// Whether its payload was in the input and read.
    pub(crate) fn payload_read(&self) -> bool {
        self.payload.is_some_and(|p| p.unreadable.is_none())
    }

    /// Why its payload could not be read, when it was in the input and could not.
    pub(crate) fn payload_unreadable(&self) -> Option<&'a str> {
        self.payload.and_then(|p| p.unreadable.as_deref())
    }

    /// Whether its payload is the init data.
    pub(crate) fn is_init(&self) -> bool {
        self.payload
            .is_some_and(|p| p.role == Some(rke2_payload::Role::Init))
    }

    /// Whether its payload joins (a server or an agent).
    pub(crate) fn joins(&self) -> bool {
        self.payload.is_some_and(|p| {
            matches!(
                p.role,
                Some(rke2_payload::Role::Server | rke2_payload::Role::Agent)
            )
        })
    }
}

/// One cluster's objects.
// No `Debug`: it holds input objects (the `-token` Secret), which are never printed whole.
pub(crate) struct ClusterObjects<'a> {
    pub(crate) namespace: &'a str,
    pub(crate) name: &'a str,
    pub(crate) cluster: Option<&'a Value>,
    pub(crate) control_plane: Option<&'a Value>,
    /// Every Machine of the cluster, oldest first.
    pub(crate) machines: Vec<Machine<'a>>,
    /// The cluster's `<name>-token` Secret, if in the input.
    pub(crate) token: Option<&'a Value>,
    pub(crate) inventory: &'a Inventory,
}

impl<'a> ClusterObjects<'a> {
    /// The objects of the cluster `namespace/name`.
    pub(crate) fn gather(inventory: &'a Inventory, namespace: &'a str, name: &'a str) -> Self {
        let in_ns = |v: &&Value| view::namespace(v) == Some(namespace);
        let cluster = inventory
            .of(Kind::Cluster)
            .iter()
            .filter(in_ns)
            .find(|c| view::name(c) == name);
        let control_plane = control_plane_of(inventory, cluster, namespace, name);
        let configs: Vec<&Value> = inventory
            .of(Kind::Rke2Config)
            .iter()
            .filter(in_ns)
            .collect();
        let mut machines: Vec<Machine<'a>> = inventory
            .of(Kind::Machine)
            .iter()
            .filter(in_ns)
            .filter(|m| machine_cluster(m) == Some(name))
            .map(|m| {
                let secret = bootstrap_secret(m, &configs, inventory.of(Kind::Secret));
                let payload = secret.and_then(|s| {
                    inventory
                        .payloads
                        .get(&(namespace.to_owned(), s.to_owned()))
                });
                Machine {
                    object: m,
                    control_plane: view::label(m, CONTROL_PLANE_LABEL).is_some()
                        || view::owners(m).any(|(kind, _)| kind == "RKE2ControlPlane"),
                    secret,
                    payload,
                }
            })
            .collect();
        machines.sort_by(|a, b| {
            fn created<'v>(m: &Machine<'v>) -> &'v str {
                view::str_at(m.object, &["metadata", "creationTimestamp"]).unwrap_or("")
            }
            created(a)
                .cmp(created(b))
                .then_with(|| a.name().cmp(b.name()))
        });
        let token_name = format!("{name}-token");
        let token = inventory
            .of(Kind::Secret)
            .iter()
            .filter(in_ns)
            .find(|s| view::name(s) == token_name);
        ClusterObjects {
            namespace,
            name,
            cluster,
            control_plane,
            machines,
            token,
            inventory,
        }
    }

    pub(crate) fn control_planes(&self) -> impl Iterator<Item = &Machine<'a>> {
        self.machines.iter().filter(|m| m.control_plane)
    }

    pub(crate) fn cluster_ref(&self) -> ObjectRef {
        ObjectRef::new("Cluster", Some(self.namespace), self.name)
    }

    pub(crate) fn control_plane_ref(&self) -> Option<ObjectRef> {
        self.control_plane
            .map(|c| ObjectRef::new("RKE2ControlPlane", Some(self.namespace), view::name(c)))
    }

    /// `spec.registrationMethod`, `control-plane-endpoint` when empty.
    pub(crate) fn registration_method(&self) -> Option<&'a str> {
        let method = self
            .control_plane
            .map(|c| view::str_at(c, &["spec", "registrationMethod"]).unwrap_or(""))?;
        Some(if method.is_empty() {
            "control-plane-endpoint"
        } else {
            method
        })
    }

    /// `status.availableServerIPs`.
    pub(crate) fn available_server_ips(&self) -> Option<Vec<&'a str>> {
        let control_plane = self.control_plane?;
        Some(
            view::at(control_plane, &["status", "availableServerIPs"])
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .collect(),
        )
    }

    /// `spec.controlPlaneEndpoint`'s host and port.
    pub(crate) fn endpoint(&self) -> Option<(&'a str, u64)> {
        let endpoint = view::at(self.cluster?, &["spec", "controlPlaneEndpoint"])?;
        Some((
            endpoint.get("host").and_then(Value::as_str).unwrap_or(""),
            endpoint.get("port").and_then(Value::as_u64).unwrap_or(0),
        ))
    }
}

/// The cluster a Machine belongs to: `spec.clusterName`, else its label.
pub(crate) fn machine_cluster(machine: &Value) -> Option<&str> {
    view::str_at(machine, &["spec", "clusterName"])
        .or_else(|| view::label(machine, rke2_payload::CLUSTER_NAME_LABEL))
}

/// The Cluster's `RKE2ControlPlane`: its `controlPlaneRef`, else one owned by or labelled
/// with the Cluster.
fn control_plane_of<'a>(
    inventory: &'a Inventory,
    cluster: Option<&'a Value>,
    namespace: &str,
    name: &str,
) -> Option<&'a Value> {
    let rcps = inventory
        .of(Kind::Rke2ControlPlane)
        .iter()
        .filter(|r| view::namespace(r) == Some(namespace));
    if let Some(reference) = cluster.and_then(|c| view::at(c, &["spec", "controlPlaneRef"])) {
        let wanted = reference.get("name").and_then(Value::as_str);
        return rcps.clone().find(|r| Some(view::name(r)) == wanted);
    }
    rcps.clone()
        .find(|r| view::owners(r).any(|(kind, owner)| kind == "Cluster" && owner == name))
        .or_else(|| {
            rcps.clone()
                .find(|r| view::label(r, rke2_payload::CLUSTER_NAME_LABEL) == Some(name))
        })
}

/// The name of a Machine's bootstrap data Secret: `spec.bootstrap.dataSecretName`, else its
/// RKE2Config's `status.dataSecretName`, else a Secret owned by that RKE2Config.
fn bootstrap_secret<'a>(
    machine: &'a Value,
    configs: &[&'a Value],
    secrets: &'a [Value],
) -> Option<&'a str> {
    if let Some(name) =
        view::str_at(machine, &["spec", "bootstrap", "dataSecretName"]).filter(|n| !n.is_empty())
    {
        return Some(name);
    }
    let config_name = view::str_at(machine, &["spec", "bootstrap", "configRef", "name"])?;
    let config = configs.iter().find(|c| view::name(c) == config_name);
    if let Some(name) = config
        .and_then(|c| view::str_at(c, &["status", "dataSecretName"]))
        .filter(|n| !n.is_empty())
    {
        return Some(name);
    }
    secrets
        .iter()
        .filter(|s| view::namespace(s) == view::namespace(machine))
        .find(|s| view::owners(s).any(|(kind, owner)| kind == "RKE2Config" && owner == config_name))
        .map(view::name)
}

/// Whether an `RKE2ControlPlane` owned by or labelled with the cluster `namespace/name`, or a
/// Machine of it bootstrapped by an `RKE2Config`, is in the input.
fn names_rke2(inventory: &Inventory, namespace: &str, name: &str) -> bool {
    let in_ns = |v: &&Value| view::namespace(v) == Some(namespace);
    inventory
        .of(Kind::Rke2ControlPlane)
        .iter()
        .filter(in_ns)
        .any(|r| {
            view::owners(r).any(|(kind, owner)| kind == "Cluster" && owner == name)
                || view::label(r, rke2_payload::CLUSTER_NAME_LABEL) == Some(name)
        })
        || inventory.of(Kind::Machine).iter().filter(in_ns).any(|m| {
            machine_cluster(m) == Some(name)
                && view::str_at(m, &["spec", "bootstrap", "configRef", "kind"])
                    == Some("RKE2Config")
        })
}

/// A cluster's namespace and name.
pub(crate) type ClusterName<'a> = (&'a str, &'a str);

/// A cluster of another control plane: its namespace, name and control plane's kind.
pub(crate) type OtherCluster<'a> = (&'a str, &'a str, String);

/// The clusters of the inventory, each once, in namespace and name order: every `Cluster`
/// whose control plane is an `RKE2ControlPlane`, and the clusters the other objects name when
/// no `Cluster` of that name was read. Those of another control plane are returned apart, with
/// its kind.
pub(crate) fn clusters(inventory: &Inventory) -> (Vec<ClusterName<'_>>, Vec<OtherCluster<'_>>) {
    let mut ours = std::collections::BTreeSet::new();
    let mut others = Vec::new();
    for cluster in inventory.of(Kind::Cluster) {
        let (Some(namespace), name) = (view::namespace(cluster), view::name(cluster)) else {
            continue;
        };
        match view::str_at(cluster, &["spec", "controlPlaneRef", "kind"]) {
            Some("RKE2ControlPlane") => {
                ours.insert((namespace, name));
            }
            // No reference (yet): RKE2's when an RKE2ControlPlane or an RKE2Config of the
            // input says so.
            None if names_rke2(inventory, namespace, name) => {
                ours.insert((namespace, name));
            }
            None => others.push((namespace, name, "no control plane".to_owned())),
            Some(kind) => others.push((namespace, name, kind.to_owned())),
        }
    }
    let known = |namespace: &str, name: &str| {
        inventory
            .of(Kind::Cluster)
            .iter()
            .any(|c| view::namespace(c) == Some(namespace) && view::name(c) == name)
    };
    for rcp in inventory.of(Kind::Rke2ControlPlane) {
        let Some(namespace) = view::namespace(rcp) else {
            continue;
        };
        let owner = view::owners(rcp)
            .find(|(kind, _)| *kind == "Cluster")
            .map(|(_, name)| name)
            .or_else(|| view::label(rcp, rke2_payload::CLUSTER_NAME_LABEL));
        if let Some(name) = owner.filter(|n| !known(namespace, n)) {
            ours.insert((namespace, name));
        }
    }
    for machine in inventory.of(Kind::Machine) {
        let (Some(namespace), Some(name)) = (view::namespace(machine), machine_cluster(machine))
        else {
            continue;
        };
        let rke2 = view::owners(machine).any(|(kind, _)| kind == "RKE2ControlPlane")
            || view::str_at(machine, &["spec", "bootstrap", "configRef", "kind"])
                == Some("RKE2Config");
        if rke2 && !known(namespace, name) {
            ours.insert((namespace, name));
        }
    }
    (ours.into_iter().collect(), others)
}
