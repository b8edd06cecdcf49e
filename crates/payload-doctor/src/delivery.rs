//! Where a live bootstrap Secret's data goes: the Machine it was written for, that Machine's
//! infrastructure object, and the delivery path the library's table reads from its fields, so
//! that `size` of a cluster's Secrets judges the path that cluster uses.

use rke2_payload::{
    BootstrapSecret, ClusterInfrastructure, DeclaredFormat, Origin, delivery_in_cluster,
};
use serde_json::Value;

use crate::inventory::{Inventory, Kind};
use crate::view;

/// A Machine's or a Cluster's `infrastructureRef`: kind, group (v1beta2 `apiGroup`, v1beta1
/// `apiVersion`'s) and name.
fn infrastructure_ref(object: &Value) -> Option<(&str, &str, &str)> {
    let reference = view::at(object, &["spec", "infrastructureRef"])?;
    let kind = reference.get("kind")?.as_str()?;
    let name = reference.get("name")?.as_str()?;
    let group = reference
        .get("apiGroup")
        .and_then(Value::as_str)
        .or_else(|| {
            let api = reference.get("apiVersion")?.as_str()?;
            Some(api.rsplit_once('/').map_or("", |(g, _)| g))
        })
        .unwrap_or("");
    Some((kind, group, name))
}

/// The infrastructure kinds the Machines of the inventory name, as kubectl takes them
/// (`AWSMachine.infrastructure.cluster.x-k8s.io`), each once, in name order.
///
/// ```
/// use payload_doctor::{Inventory, infrastructure_kinds};
///
/// let mut inventory = Inventory::new(Default::default());
/// inventory.read("machines.json", br#"{"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "Machine",
///   "metadata": {"name": "m", "namespace": "ns"},
///   "spec": {"clusterName": "c", "infrastructureRef": {"apiGroup": "infrastructure.cluster.x-k8s.io", "kind": "AWSMachine", "name": "m"}}}"#)?;
/// assert_eq!(infrastructure_kinds(&inventory), ["AWSMachine.infrastructure.cluster.x-k8s.io"]);
/// # Ok::<(), payload_doctor::DoctorError>(())
/// ```
pub fn infrastructure_kinds(inventory: &Inventory) -> Vec<String> {
    kinds_named(inventory.of(Kind::Machine))
}

/// The infrastructure kinds the Clusters of the inventory name (`LinodeCluster.…`) that no
/// Machine names, as [`infrastructure_kinds`] gives them: some delivery paths depend on them.
///
/// ```
/// use payload_doctor::{Inventory, cluster_infrastructure_kinds};
///
/// let mut inventory = Inventory::new(Default::default());
/// inventory.read("clusters.json", br#"{"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "Cluster",
///   "metadata": {"name": "c", "namespace": "ns"},
///   "spec": {"infrastructureRef": {"apiGroup": "infrastructure.cluster.x-k8s.io", "kind": "LinodeCluster", "name": "c"}}}"#)?;
/// assert_eq!(cluster_infrastructure_kinds(&inventory), ["LinodeCluster.infrastructure.cluster.x-k8s.io"]);
/// # Ok::<(), payload_doctor::DoctorError>(())
/// ```
pub fn cluster_infrastructure_kinds(inventory: &Inventory) -> Vec<String> {
    let machines = infrastructure_kinds(inventory);
    kinds_named(inventory.of(Kind::Cluster))
        .into_iter()
        .filter(|k| !machines.contains(k))
        .collect()
}

/// The infrastructure kinds `objects` name in their `infrastructureRef`, as kubectl takes them.
fn kinds_named(objects: &[Value]) -> Vec<String> {
    let mut kinds: Vec<String> = objects
        .iter()
        .filter_map(infrastructure_ref)
        // A kind and a group as Kubernetes names them, nothing a command line could take
        // for an option.
        .filter(|(kind, group, _)| {
            kind.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
                && kind.chars().all(|c| c.is_ascii_alphanumeric())
                && group.starts_with("infrastructure.")
                && group
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '.' || c == '-')
        })
        .map(|(kind, group, _)| format!("{kind}.{group}"))
        .collect();
    kinds.sort();
    kinds.dedup();
    kinds
}

/// Where `secret`'s data goes, read from the live objects: the Machine whose bootstrap data it
/// is (`spec.bootstrap.dataSecretName`), that Machine's infrastructure object, and the entry of
/// the delivery table its kind and fields select. `None` when any of them is not in the
/// inventory or the table does not know the kind.
///
/// ```
/// use payload_doctor::{Inventory, live_origin};
/// use rke2_payload::{BootstrapSecret, SecretId};
///
/// let mut inventory = Inventory::new(Default::default());
/// inventory.read("dump.json", br#"{"kind": "List", "items": [
///   {"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "Machine", "metadata": {"name": "m", "namespace": "ns"},
///    "spec": {"clusterName": "c", "bootstrap": {"dataSecretName": "m-data"},
///             "infrastructureRef": {"apiGroup": "infrastructure.cluster.x-k8s.io", "kind": "AWSMachine", "name": "m"}}},
///   {"apiVersion": "infrastructure.cluster.x-k8s.io/v1beta2", "kind": "AWSMachine", "metadata": {"name": "m", "namespace": "ns"},
///    "spec": {"cloudInit": {"insecureSkipSecretsManager": true}}}]}"#)?;
/// let id = SecretId { namespace: Some("ns".into()), name: Some("m-data".into()), index: 0 };
/// let secret = BootstrapSecret::new(id, "cloud-config", b"#cloud-config\n", Some("c"));
/// let origin = live_origin(&inventory, &secret).expect("a delivery path");
/// assert_eq!(origin.delivery.map(|d| d.cloud).as_deref(), Some("aws-user-data"));
/// # Ok::<(), payload_doctor::DoctorError>(())
/// ```
pub fn live_origin(inventory: &Inventory, secret: &BootstrapSecret<'_>) -> Option<Origin> {
    let (namespace, name) = (secret.namespace()?, secret.name()?);
    let machine = inventory.of(Kind::Machine).iter().find(|m| {
        view::namespace(m) == Some(namespace)
            && view::str_at(m, &["spec", "bootstrap", "dataSecretName"]) == Some(name)
    })?;
    let infrastructure = infrastructure_of(inventory, machine, namespace)?;
    let (kind, _, infra_name) = infrastructure_ref(machine)?;
    // Where the path depends on the cluster's infrastructure object (Linode's object store),
    // the Machine's Cluster's.
    let cluster = view::str_at(machine, &["spec", "clusterName"]).and_then(|cluster| {
        let cluster = inventory
            .of(Kind::Cluster)
            .iter()
            .find(|c| view::namespace(c) == Some(namespace) && view::name(c) == cluster)?;
        infrastructure_of(inventory, cluster, namespace)
    });
    let ignition = secret.declared_format().ok() == Some(DeclaredFormat::Ignition);
    let spec = infrastructure.get("spec").unwrap_or(&Value::Null);
    let api_version = view::str_at(infrastructure, &["apiVersion"]).unwrap_or("");
    // The table names templates; a live infrastructure machine's spec is its template's
    // `spec.template.spec`.
    let mut delivery = delivery_in_cluster(
        &format!("{kind}Template"),
        api_version,
        spec,
        cluster.map(ClusterInfrastructure::of),
        ignition,
    )?;
    delivery.reason = format!(
        "{} (the live {kind} {namespace}/{infra_name} of Machine {})",
        delivery.reason,
        view::name(machine)
    );
    Some(Origin::live(delivery))
}

/// The infrastructure object in the inventory that `object`'s (a Machine's, a Cluster's)
/// `infrastructureRef` names, in `namespace`.
fn infrastructure_of<'i>(
    inventory: &'i Inventory,
    object: &Value,
    namespace: &str,
) -> Option<&'i Value> {
    let (kind, group, name) = infrastructure_ref(object)?;
    inventory.infrastructure.iter().find(|o| {
        view::namespace(o) == Some(namespace)
            && view::name(o) == name
            && view::str_at(o, &["kind"]) == Some(kind)
            && view::str_at(o, &["apiVersion"])
                .and_then(|a| a.rsplit_once('/'))
                .map(|(g, _)| g)
                == Some(group)
    })
}
