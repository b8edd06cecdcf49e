//! The chain on objects made here: a healthy cluster of each API version, then one change at a
//! time, each breaking one link as the controllers would leave the objects.

use serde_json::{Value, json};

use super::*;

const TOKEN: &str = "8f0c6b1d2e3a4f5061728394a5b6c7d8";
const NS: &str = "fleet";
const NAME: &str = "demo";

/// A CAPRKE2-style cloud-config: `config.yaml` with the token, a `server` unless init, the
/// kubelet's provider-id when given; the install step of a server or an agent.
fn userdata(token: &str, server: Option<&str>, agent: bool, provider_id: Option<&str>) -> String {
    let mut config = format!("token: {token}\ntls-san:\n  - lb.example.com\n");
    if let Some(server) = server {
        config.push_str(&format!("server: {server}\n"));
    }
    if let Some(id) = provider_id {
        config.push_str(&format!("kubelet-arg:\n  - provider-id={id}\n"));
    }
    let indented: String = config.lines().map(|l| format!("    {l}\n")).collect();
    let kind = if agent { "agent" } else { "server" };
    format!(
        "#cloud-config\nwrite_files:\n- path: /etc/rancher/rke2/config.yaml\n  owner: root:root\n  permissions: '0640'\n  content: |\n{indented}runcmd:\n- 'curl -sfL https://get.rke2.io | INSTALL_RKE2_VERSION=v1.31.4+rke2r1 INSTALL_RKE2_TYPE=\"{kind}\" sh -s -'\n- 'systemctl enable --now rke2-{kind}.service'\n"
    )
}

fn b64(text: &str) -> String {
    rke2_payload::to_base64(text.as_bytes())
}

fn condition(version: &str, kind: &str, status: bool) -> Value {
    let status = if status { "True" } else { "False" };
    if version == "v1beta1" {
        json!({"type": kind, "status": status, "lastTransitionTime": "2026-12-01T10:00:00Z"})
    } else {
        json!({"type": kind, "status": status, "reason": if status == "True" { "Healthy" } else { "NotHealthy" },
            "lastTransitionTime": "2026-12-01T10:00:00Z"})
    }
}

/// Where a Machine's v1beta2 conditions live in `version`.
fn set_conditions(machine: &mut Value, version: &str, conditions: Vec<Value>) {
    if version == "v1beta1" {
        machine["status"]["v1beta2"] = json!({"conditions": conditions});
    } else {
        machine["status"]["conditions"] = json!(conditions);
    }
}

struct MachineSpec<'a> {
    name: &'a str,
    control_plane: bool,
    server: Option<&'a str>,
    ip: &'a str,
    node: bool,
}

fn machine(version: &str, m: &MachineSpec<'_>, created: usize) -> (Value, Value) {
    let provider_id = format!("aws:///us-east-1a/i-{}", m.name);
    let mut labels = json!({"cluster.x-k8s.io/cluster-name": NAME});
    let mut owners = json!([]);
    if m.control_plane {
        labels["cluster.x-k8s.io/control-plane"] = json!("");
        owners = json!([{"apiVersion": "controlplane.cluster.x-k8s.io/v1beta2", "kind": "RKE2ControlPlane", "name": NAME, "controller": true, "uid": "u-rcp"}]);
    }
    let mut object = json!({
        "apiVersion": format!("cluster.x-k8s.io/{version}"),
        "kind": "Machine",
        "metadata": {"name": m.name, "namespace": NS, "labels": labels, "ownerReferences": owners,
            "uid": format!("u-{}", m.name), "creationTimestamp": format!("2026-12-01T10:0{created}:00Z")},
        "spec": {"clusterName": NAME, "providerID": provider_id,
            "bootstrap": {"configRef": {"kind": "RKE2Config", "name": m.name}, "dataSecretName": m.name}},
        "status": {"addresses": [{"type": "InternalIP", "address": m.ip}, {"type": "Hostname", "address": m.name}],
            "phase": if m.node { "Running" } else { "Provisioned" }}
    });
    if m.node {
        object["status"]["nodeRef"] = if version == "v1beta1" {
            json!({"apiVersion": "v1", "kind": "Node", "name": m.name})
        } else {
            json!({"name": m.name})
        };
    }
    let mut conditions = vec![condition(version, "Ready", m.node)];
    if m.control_plane {
        conditions.push(condition(version, "AgentHealthy", m.node));
        conditions.push(condition(version, "EtcdMemberHealthy", m.node));
    }
    set_conditions(&mut object, version, conditions);
    let agent = !m.control_plane;
    let secret = json!({
        "apiVersion": "v1", "kind": "Secret", "type": "cluster.x-k8s.io/secret",
        "metadata": {"name": m.name, "namespace": NS, "labels": {"cluster.x-k8s.io/cluster-name": NAME},
            "ownerReferences": [{"apiVersion": "bootstrap.cluster.x-k8s.io/v1beta2", "kind": "RKE2Config", "name": m.name, "uid": "u"}]},
        "data": {"format": b64("cloud-config"), "value": b64(&userdata(TOKEN, m.server, agent, None))}
    });
    (object, secret)
}

/// A healthy cluster: three control planes (the first the init one), a worker, registration
/// by `method`.
fn healthy(version: &str, method: &str) -> Vec<Value> {
    let join = "https://10.0.0.10:9345";
    let specs = [
        MachineSpec {
            name: "demo-cp-a",
            control_plane: true,
            server: None,
            ip: "10.0.0.10",
            node: true,
        },
        MachineSpec {
            name: "demo-cp-b",
            control_plane: true,
            server: Some(join),
            ip: "10.0.0.11",
            node: true,
        },
        MachineSpec {
            name: "demo-cp-c",
            control_plane: true,
            server: Some(join),
            ip: "10.0.0.12",
            node: true,
        },
        MachineSpec {
            name: "demo-md-x",
            control_plane: false,
            server: Some(join),
            ip: "10.0.1.20",
            node: true,
        },
    ];
    let mut cluster = json!({
        "apiVersion": format!("cluster.x-k8s.io/{version}"), "kind": "Cluster",
        "metadata": {"name": NAME, "namespace": NS, "uid": "u-cluster"},
        "spec": {"controlPlaneEndpoint": {"host": "lb.example.com", "port": 6443}},
    });
    if version == "v1beta1" {
        cluster["spec"]["controlPlaneRef"] = json!({"apiVersion": "controlplane.cluster.x-k8s.io/v1beta2", "kind": "RKE2ControlPlane", "name": NAME, "namespace": NS});
        cluster["status"] = json!({"infrastructureReady": true, "controlPlaneReady": true,
            "conditions": [condition(version, "ControlPlaneInitialized", true)]});
    } else {
        cluster["spec"]["controlPlaneRef"] = json!({"apiGroup": "controlplane.cluster.x-k8s.io", "kind": "RKE2ControlPlane", "name": NAME});
        cluster["status"] = json!({"initialization": {"infrastructureProvisioned": true, "controlPlaneInitialized": true},
            "conditions": [{"type": "ControlPlaneInitialized", "status": "True", "reason": "Initialized"}]});
    }
    let ips = if method == "internal-only-ips" {
        json!(["10.0.0.10", "10.0.0.11", "10.0.0.12"])
    } else {
        json!(["lb.example.com"])
    };
    let mut rcp = json!({
        "apiVersion": format!("controlplane.cluster.x-k8s.io/{version}"), "kind": "RKE2ControlPlane",
        "metadata": {"name": NAME, "namespace": NS, "uid": "u-rcp",
            "ownerReferences": [{"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "Cluster", "name": NAME, "uid": "u-cluster"}]},
        "spec": {"replicas": 3, "registrationMethod": method, "version": "v1.31.4+rke2r1"},
        "status": {"availableServerIPs": ips, "replicas": 3, "readyReplicas": 3}
    });
    if version == "v1beta1" {
        rcp["status"]["initialized"] = json!(true);
    } else {
        rcp["status"]["initialization"] = json!({"controlPlaneInitialized": true});
    }
    // With the endpoint method, joiners name the endpoint host.
    let mut objects = vec![cluster, rcp];
    for (i, spec) in specs.iter().enumerate() {
        let (mut m, mut s) = machine(version, spec, i);
        if method != "internal-only-ips" && spec.server.is_some() {
            let text = userdata(
                TOKEN,
                Some("https://lb.example.com:9345"),
                !spec.control_plane,
                None,
            );
            s["data"]["value"] = json!(b64(&text));
        }
        m["metadata"]["resourceVersion"] = json!("1");
        objects.push(m);
        objects.push(s);
    }
    objects.push(json!({"apiVersion": "v1", "kind": "Secret", "type": "cluster.x-k8s.io/secret",
        "metadata": {"name": "demo-token", "namespace": NS, "labels": {"cluster.x-k8s.io/cluster-name": NAME}},
        "data": {"value": b64(TOKEN)}}));
    for (name, kind, version) in [
        ("cluster-api", "CoreProvider", "v1.13.2"),
        ("bootstrap-rke2", "BootstrapProvider", "v0.25.0"),
        ("control-plane-rke2", "ControlPlaneProvider", "v0.25.0"),
    ] {
        let provider = if name == "cluster-api" {
            "cluster-api"
        } else {
            "rke2"
        };
        objects.push(
            json!({"apiVersion": "clusterctl.cluster.x-k8s.io/v1alpha3", "kind": "Provider",
            "metadata": {"name": name, "namespace": "capi-system"},
            "providerName": provider, "type": kind, "version": version}),
        );
    }
    objects
}

fn run(objects: &[Value]) -> Diagnosis {
    let list = json!({"apiVersion": "v1", "kind": "List", "items": objects});
    let mut inventory = Inventory::new(Default::default());
    inventory
        .read("dump.json", list.to_string().as_bytes())
        .expect("the dump reads");
    diagnose(&inventory, &DoctorOptions::default())
}

fn find<'a>(objects: &'a mut [Value], kind: &str, name: &str) -> &'a mut Value {
    objects
        .iter_mut()
        .find(|o| o["kind"] == kind && o["metadata"]["name"] == name)
        .expect("the object")
}

fn link(d: &Diagnosis, id: LinkId) -> &Link {
    d.clusters[0]
        .links
        .iter()
        .find(|l| l.id == id)
        .expect("the link")
}

/// The first broken link's id and the name of the object it names.
fn first(d: &Diagnosis) -> (Option<LinkId>, Option<String>) {
    let c = &d.clusters[0];
    (
        c.first_broken,
        c.first_broken()
            .and_then(|l| l.object.as_ref())
            .map(|o| o.name.clone()),
    )
}

#[test]
fn the_table_and_the_ids_agree() {
    for (i, id) in LinkId::ALL.iter().enumerate() {
        assert_eq!(LINKS[i].id, *id);
        assert_eq!(id.info().id, *id);
        let json = serde_json::to_value(id).expect("serialize");
        assert_eq!(json, id.as_str());
    }
}

#[test]
fn healthy_clusters_of_both_versions_and_every_method_hold() {
    for version in ["v1beta1", "v1beta2"] {
        for method in ["control-plane-endpoint", "internal-only-ips", ""] {
            let d = run(&healthy(version, method));
            assert_eq!(d.clusters.len(), 1);
            let c = &d.clusters[0];
            let not_holding: Vec<_> = c
                .links
                .iter()
                .filter(|l| !matches!(l.state, State::Holds | State::NotApplicable))
                .map(|l| (l.id, l.state, l.seen.clone()))
                .collect();
            assert!(
                not_holding.is_empty(),
                "{version} {method}: {not_holding:?}"
            );
            assert_eq!(d.exit_code(true), 0);
        }
    }
}

#[test]
fn infrastructure_not_provisioned() {
    for version in ["v1beta1", "v1beta2"] {
        let mut o = healthy(version, "");
        let c = find(&mut o, "Cluster", NAME);
        c["status"] = json!({});
        let d = run(&o);
        assert_eq!(
            first(&d),
            (
                Some(LinkId::InfrastructureProvisioned),
                Some(NAME.to_owned())
            )
        );
        assert_eq!(d.exit_code(false), 1);
    }
}

#[test]
fn endpoint_without_a_port() {
    let mut o = healthy("v1beta2", "");
    find(&mut o, "Cluster", NAME)["spec"]["controlPlaneEndpoint"] =
        json!({"host": "lb.example.com", "port": 0});
    assert_eq!(first(&run(&o)).0, Some(LinkId::ControlPlaneEndpoint));
}

#[test]
fn two_init_machines() {
    let mut o = healthy("v1beta1", "");
    let s = find(&mut o, "Secret", "demo-cp-b");
    s["data"]["value"] = json!(b64(&userdata(TOKEN, None, false, None)));
    assert_eq!(
        first(&run(&o)),
        (Some(LinkId::InitMachine), Some("demo-cp-b".to_owned()))
    );
}

#[test]
fn init_machine_without_a_node_names_the_kubelet_provider_id() {
    let mut o: Vec<Value> = healthy("v1beta2", "")
        .into_iter()
        .filter(|v| {
            !(v["kind"] == "Machine" || v["kind"] == "Secret")
                || v["metadata"]["name"] == "demo-cp-a"
                || v["metadata"]["name"] == "demo-token"
        })
        .collect();
    let m = find(&mut o, "Machine", "demo-cp-a");
    m["status"]
        .as_object_mut()
        .expect("status")
        .remove("nodeRef");
    set_conditions(
        m,
        "v1beta2",
        vec![
            json!({"type": "Ready", "status": "False", "reason": "NotReady"}),
            json!({"type": "NodeHealthy", "status": "Unknown", "reason": "InspectionFailed",
            "message": "Waiting for a Node with spec.providerID aws:///us-east-1a/i-demo-cp-a to exist"}),
        ],
    );
    find(&mut o, "Secret", "demo-cp-a")["data"]["value"] = json!(b64(&userdata(
        TOKEN,
        None,
        false,
        Some("aws:///i-demo-cp-a")
    )));
    let c = find(&mut o, "Cluster", NAME);
    c["status"] = json!({"initialization": {"infrastructureProvisioned": true},
        "conditions": [{"type": "ControlPlaneInitialized", "status": "False", "reason": "NotInitialized"}]});
    let rcp = find(&mut o, "RKE2ControlPlane", NAME);
    rcp["status"] = json!({"initialization": {}});
    let d = run(&o);
    assert_eq!(
        first(&d),
        (Some(LinkId::InitNode), Some("demo-cp-a".to_owned()))
    );
    let seen = &link(&d, LinkId::InitNode).seen;
    assert!(
        seen.contains("aws:///i-demo-cp-a, which never matches it"),
        "{seen}"
    );
}

#[test]
fn control_plane_not_initialized() {
    let mut o = healthy("v1beta1", "");
    let c = find(&mut o, "Cluster", NAME);
    c["status"]["controlPlaneReady"] = json!(false);
    c["status"]["conditions"] = json!([{"type": "ControlPlaneInitialized", "status": "False",
        "severity": "Info", "reason": "WaitingForControlPlaneProviderInitialized"}]);
    assert_eq!(
        first(&run(&o)),
        (Some(LinkId::ControlPlaneInitialized), Some(NAME.to_owned()))
    );
}

#[test]
fn token_secret_missing_or_different() {
    let o: Vec<Value> = healthy("v1beta2", "")
        .into_iter()
        .filter(|v| v["metadata"]["name"] != "demo-token")
        .collect();
    assert_eq!(
        first(&run(&o)),
        (Some(LinkId::TokenSecret), Some("demo-token".to_owned()))
    );
    let mut o = healthy("v1beta2", "");
    find(&mut o, "Secret", "demo-token")["data"]["value"] = json!(b64("another-token"));
    let d = run(&o);
    assert_eq!(first(&d).0, Some(LinkId::TokenSecret));
    // Nothing of either token is shown but fingerprints.
    let text = serde_json::to_string(&d).expect("json");
    assert!(!text.contains(TOKEN) && !text.contains("another-token"));
}

#[test]
fn no_ready_control_plane() {
    let mut o = healthy("v1beta2", "");
    for name in ["demo-cp-a", "demo-cp-b", "demo-cp-c"] {
        let m = find(&mut o, "Machine", name);
        m["status"]["conditions"][0] =
            json!({"type": "Ready", "status": "False", "reason": "NotReady"});
    }
    find(&mut o, "RKE2ControlPlane", NAME)["status"]["availableServerIPs"] = json!([]);
    assert_eq!(
        first(&run(&o)),
        (
            Some(LinkId::ReadyControlPlane),
            Some("demo-cp-a".to_owned())
        )
    );
}

#[test]
fn ready_machines_without_the_address_the_method_reads() {
    let mut o = healthy("v1beta1", "internal-only-ips");
    for name in ["demo-cp-a", "demo-cp-b", "demo-cp-c"] {
        find(&mut o, "Machine", name)["status"]["addresses"] =
            json!([{"type": "ExternalIP", "address": "203.0.113.9"}]);
    }
    find(&mut o, "RKE2ControlPlane", NAME)["status"]["availableServerIPs"] = json!([]);
    assert_eq!(
        first(&run(&o)),
        (
            Some(LinkId::RegistrationAddress),
            Some("demo-cp-a".to_owned())
        )
    );
}

#[test]
fn one_ready_machine_without_the_address_is_passed_over_not_a_break() {
    // Upstream skips a Ready Machine without the address type; the others are join targets.
    let mut o = healthy("v1beta2", "internal-only-ips");
    find(&mut o, "Machine", "demo-cp-c")["status"]["addresses"] =
        json!([{"type": "ExternalIP", "address": "203.0.113.9"}]);
    find(&mut o, "RKE2ControlPlane", NAME)["status"]["availableServerIPs"] =
        json!(["10.0.0.10", "10.0.0.11"]);
    let d = run(&o);
    assert_eq!(first(&d).0, None);
    let l = link(&d, LinkId::RegistrationAddress);
    assert_eq!(l.state, State::Warning);
    assert_eq!(
        l.object.as_ref().map(|o| o.name.as_str()),
        Some("demo-cp-c")
    );
}

#[test]
fn no_available_server_ips_with_a_ready_machine() {
    let mut o = healthy("v1beta2", "control-plane-endpoint");
    find(&mut o, "RKE2ControlPlane", NAME)["status"]["availableServerIPs"] = json!([]);
    let d = run(&o);
    assert_eq!(
        first(&d),
        (Some(LinkId::AvailableServerIps), Some(NAME.to_owned()))
    );
    assert_eq!(
        link(&d, LinkId::RegistrationAddress).state,
        State::NotApplicable
    );
}

#[test]
fn a_waiting_worker_with_a_stale_server() {
    let mut o = healthy("v1beta2", "internal-only-ips");
    let m = find(&mut o, "Machine", "demo-md-x");
    m["status"]
        .as_object_mut()
        .expect("status")
        .remove("nodeRef");
    find(&mut o, "Secret", "demo-md-x")["data"]["value"] = json!(b64(&userdata(
        TOKEN,
        Some("https://10.0.0.99:9345"),
        true,
        None
    )));
    let d = run(&o);
    assert_eq!(
        first(&d),
        (Some(LinkId::JoinTarget), Some("demo-md-x".to_owned()))
    );
    // The same stale server on a Machine that joined long ago breaks nothing.
    let m = find(&mut o, "Machine", "demo-md-x");
    m["status"]["nodeRef"] = json!({"name": "demo-md-x"});
    assert_eq!(first(&run(&o)).0, None);
}

#[test]
fn preflight_and_remediation() {
    let mut o = healthy("v1beta1", "");
    find(&mut o, "Machine", "demo-cp-c")["status"]["v1beta2"]["conditions"][2] =
        json!({"type": "EtcdMemberHealthy", "status": "False", "reason": "NotHealthy"});
    assert_eq!(
        first(&run(&o)),
        (Some(LinkId::Preflight), Some("demo-cp-c".to_owned()))
    );

    let mut o = healthy("v1beta2", "");
    find(&mut o, "Machine", "demo-cp-b")["metadata"]["deletionTimestamp"] =
        json!("2026-12-01T11:00:00Z");
    assert_eq!(
        first(&run(&o)),
        (Some(LinkId::Preflight), Some("demo-cp-b".to_owned()))
    );

    // One replica, marked unhealthy by a MachineHealthCheck: never remediated.
    let mut o: Vec<Value> = healthy("v1beta2", "")
        .into_iter()
        .filter(|v| !(v["metadata"]["name"] == "demo-cp-b" || v["metadata"]["name"] == "demo-cp-c"))
        .collect();
    find(&mut o, "RKE2ControlPlane", NAME)["spec"]["replicas"] = json!(1);
    let m = find(&mut o, "Machine", "demo-cp-a");
    let conditions = m["status"]["conditions"]
        .as_array_mut()
        .expect("conditions");
    conditions.push(
        json!({"type": "HealthCheckSucceeded", "status": "False", "reason": "UnhealthyNode"}),
    );
    conditions.push(
        json!({"type": "OwnerRemediated", "status": "False", "reason": "CannotBeRemediated"}),
    );
    let d = run(&o);
    assert_eq!(
        first(&d),
        (Some(LinkId::Remediation), Some("demo-cp-a".to_owned()))
    );
}

#[test]
fn a_core_without_the_v1beta2_api_is_broken() {
    let mut o = healthy("v1beta2", "");
    find(&mut o, "Provider", "cluster-api")["version"] = json!("v1.10.7");
    let d = run(&o);
    assert_eq!(
        first(&d),
        (
            Some(LinkId::ProviderVersions),
            Some("cluster-api".to_owned())
        )
    );
    find(&mut o, "Provider", "cluster-api")["version"] = json!("v1.11.0");
    assert_eq!(
        link(&run(&o), LinkId::ProviderVersions).state,
        State::Warning
    );
}

#[test]
fn a_waiting_machine_whose_payload_does_not_read_breaks_its_join() {
    let mut o = healthy("v1beta2", "internal-only-ips");
    find(&mut o, "Machine", "demo-md-x")["status"]
        .as_object_mut()
        .expect("status")
        .remove("nodeRef");
    // A gzip stream cut short: the node cannot read it.
    let s = find(&mut o, "Secret", "demo-md-x");
    s["data"]["value"] = json!(rke2_payload::to_base64(&[
        0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3, 1
    ]));
    let d = run(&o);
    assert_eq!(
        first(&d),
        (Some(LinkId::JoinTarget), Some("demo-md-x".to_owned()))
    );
    assert!(link(&d, LinkId::JoinTarget).seen.contains("cannot be read"));
    // The endpoint host is a join target whatever the registration method.
    let mut o = healthy("v1beta2", "internal-only-ips");
    find(&mut o, "Machine", "demo-md-x")["status"]
        .as_object_mut()
        .expect("status")
        .remove("nodeRef");
    find(&mut o, "Secret", "demo-md-x")["data"]["value"] = json!(b64(&userdata(
        TOKEN,
        Some("https://lb.example.com:9345"),
        true,
        None
    )));
    assert_eq!(first(&run(&o)).0, None);
}

#[test]
fn an_untested_core_is_a_warning() {
    let mut o = healthy("v1beta2", "");
    find(&mut o, "Provider", "cluster-api")["version"] = json!("v1.14.0");
    let d = run(&o);
    assert_eq!(first(&d).0, None);
    assert_eq!(link(&d, LinkId::ProviderVersions).state, State::Warning);
    assert_eq!(d.exit_code(false), 0);
    assert_eq!(d.exit_code(true), 1);
}

#[test]
fn missing_kinds_are_unknown_not_broken() {
    let o: Vec<Value> = healthy("v1beta2", "")
        .into_iter()
        .filter(|v| v["kind"] != "Secret" && v["kind"] != "Provider")
        .collect();
    let d = run(&o);
    assert_eq!(first(&d).0, None);
    for id in [LinkId::TokenSecret, LinkId::ProviderVersions] {
        assert_eq!(link(&d, id).state, State::Unknown, "{id}");
    }
    let mut inventory = Inventory::new(Default::default());
    inventory.unread(
        Kind::Secret,
        Unread::Refused("secrets is forbidden".to_owned()),
    );
    let list = json!({"kind": "List", "items": o});
    inventory
        .read("dump.json", list.to_string().as_bytes())
        .expect("reads");
    let d = diagnose(&inventory, &DoctorOptions::default());
    assert!(
        link(&d, LinkId::TokenSecret)
            .seen
            .contains("secrets is forbidden")
    );
    assert_eq!(d.unread[0].reason, "refused");
}

#[test]
fn other_control_planes_are_left_alone() {
    let mut o = healthy("v1beta2", "");
    o.push(json!({"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "Cluster",
        "metadata": {"name": "kubeadm", "namespace": NS},
        "spec": {"controlPlaneRef": {"apiGroup": "controlplane.cluster.x-k8s.io", "kind": "KubeadmControlPlane", "name": "kubeadm"}}}));
    let d = run(&o);
    assert_eq!(d.clusters.len(), 1);
    assert_eq!(d.skipped_clusters[0].control_plane, "KubeadmControlPlane");
}
