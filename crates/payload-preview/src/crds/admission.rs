//! What the mutating admission webhooks set on an object when it is created, before the API
//! server validates it against the CRD's schema (the order of `kube-apiserver`'s admission:
//! structural defaults when the object is read, then the mutating webhooks, then schema
//! validation). A field the schema requires that a webhook always fills is no mistake of the
//! manifest; this module fills it, as the webhooks do:
//!
//! - Cluster API v1.14 (`core/webhooks/admission/`): `MachineDeployment` (the cluster-name
//!   label, `replicas` from the autoscaler's min-size annotation or 1, the selector and the
//!   template's labels, the rolling update strategy), `MachinePool` (label, `replicas`),
//!   `Machine` (label), and the `v` prefix of versions on those and on a topology. Its webhooks
//!   serve `v1beta2`; the API server converts a `v1beta1` object to it and back, so the same
//!   defaults land in the `v1beta1` fields.
//! - CAPRKE2 v0.25 (`controlplane/api/*/rke2controlplane_webhook.go`,
//!   `bootstrap/api/*/rke2config*_webhook.go`): `agentConfig.format` (`cloud-config`), an
//!   RKE2ControlPlane's `replicas` (1) and its machine deletion timeouts, and in `v1beta1` its
//!   `machineTemplate.infrastructureRef` from the older `spec.infrastructureRef`.
//!
//! Only fields that are missing are set (as the webhooks do, except the labels they always
//! write).

use serde_json::{Map, Value, json};

/// The cluster name label.
const CLUSTER_NAME: &str = "cluster.x-k8s.io/cluster-name";
/// The MachineDeployment name label.
const DEPLOYMENT_NAME: &str = "cluster.x-k8s.io/deployment-name";
/// The autoscaler's size annotations.
const MIN_SIZE: &str = "cluster.x-k8s.io/cluster-api-autoscaler-node-group-min-size";
const MAX_SIZE: &str = "cluster.x-k8s.io/cluster-api-autoscaler-node-group-max-size";

/// The object as the webhooks of its kind leave it (`group` without the version).
pub(super) fn defaulted(group: &str, version: &str, kind: &str, object: &mut Value) {
    let Value::Object(object) = object else {
        return;
    };
    match (group, kind) {
        ("cluster.x-k8s.io", "MachineDeployment") => machine_deployment(version, object),
        ("cluster.x-k8s.io", "MachinePool") => {
            cluster_label(object);
            if let Some(spec) = at(object, &["spec"]) {
                replicas(spec, 1);
            }
            if let Some(spec) = at(object, &["spec", "template", "spec"]) {
                v_prefix(spec, "version");
            }
        }
        ("cluster.x-k8s.io", "Machine") => {
            cluster_label(object);
            if let Some(spec) = at(object, &["spec"]) {
                v_prefix(spec, "version");
            }
        }
        ("cluster.x-k8s.io", "Cluster") => {
            if let Some(Value::Object(topology)) =
                object.get_mut("spec").and_then(|s| s.get_mut("topology"))
            {
                v_prefix(topology, "version");
            }
        }
        ("controlplane.cluster.x-k8s.io", "RKE2ControlPlane") => control_plane(version, object),
        ("controlplane.cluster.x-k8s.io", "RKE2ControlPlaneTemplate") => {
            agent_format(object, &["spec", "template", "spec"]);
        }
        ("bootstrap.cluster.x-k8s.io", "RKE2Config") => agent_format(object, &["spec"]),
        ("bootstrap.cluster.x-k8s.io", "RKE2ConfigTemplate") => {
            agent_format(object, &["spec", "template", "spec"]);
        }
        _ => {}
    }
}

/// `MachineDeployment.Default` of Cluster API.
fn machine_deployment(version: &str, object: &mut Map<String, Value>) {
    let cluster_name = cluster_label(object);
    let name = object
        .get("metadata")
        .and_then(|m| m.get("name"))
        .cloned()
        .unwrap_or(json!(""));
    let annotations = object.get("metadata").and_then(|m| m.get("annotations"));
    let size = |key: &str| {
        annotations
            .and_then(|a| a.get(key))
            .and_then(Value::as_str)
            .and_then(|s| s.parse::<i32>().ok())
    };
    let initial = match (size(MIN_SIZE), size(MAX_SIZE)) {
        (Some(min), Some(_)) => i64::from(min),
        _ => 1,
    };
    if let Some(spec) = at(object, &["spec"]) {
        replicas(spec, initial);
    }
    // The rolling update strategy: `spec.rollout.strategy` in v1beta2, `spec.strategy` before.
    let strategy: &[&str] = if version == "v1beta1" {
        &["spec", "strategy"]
    } else {
        &["spec", "rollout", "strategy"]
    };
    if let Some(strategy) = at(object, strategy) {
        if strategy
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or("")
            .is_empty()
        {
            strategy.insert("type".into(), json!("RollingUpdate"));
        }
        if strategy.get("type") == Some(&json!("RollingUpdate"))
            && let Some(rolling) = at(strategy, &["rollingUpdate"])
        {
            rolling.entry("maxSurge").or_insert(json!(1));
            rolling.entry("maxUnavailable").or_insert(json!(0));
        }
    }
    let empty = |v: Option<&Value>| match v {
        Some(Value::Object(m)) => m.is_empty(),
        Some(Value::Array(a)) => a.is_empty(),
        _ => true,
    };
    // The selector, and the template's labels that must match it.
    let mut unselective = false;
    if let Some(selector) = at(object, &["spec", "selector"]) {
        unselective = empty(selector.get("matchLabels")) && empty(selector.get("matchExpressions"));
        if let Some(match_labels) = at(selector, &["matchLabels"]) {
            if unselective {
                match_labels.insert(DEPLOYMENT_NAME.into(), name.clone());
            }
            match_labels.insert(CLUSTER_NAME.into(), cluster_name.clone());
        }
    }
    if let Some(labels) = at(object, &["spec", "template", "metadata", "labels"]) {
        if unselective {
            labels.insert(DEPLOYMENT_NAME.into(), name);
        }
        labels.insert(CLUSTER_NAME.into(), cluster_name);
    }
    if let Some(spec) = at(object, &["spec", "template", "spec"]) {
        v_prefix(spec, "version");
    }
}

/// `RKE2ControlPlane.Default` of CAPRKE2.
fn control_plane(version: &str, object: &mut Map<String, Value>) {
    let namespace = object
        .get("metadata")
        .and_then(|m| m.get("namespace"))
        .cloned();
    agent_format(object, &["spec"]);
    if let Some(spec) = at(object, &["spec"]) {
        replicas(spec, 1);
    }
    if version == "v1beta1" {
        let Some(spec) = at(object, &["spec"]) else {
            return;
        };
        let older = spec.get("infrastructureRef").cloned();
        let drain = spec.get("nodeDrainTimeout").cloned();
        let Some(template) = at(spec, &["machineTemplate"]) else {
            return;
        };
        let named = template
            .get("infrastructureRef")
            .and_then(|r| r.get("name"))
            .and_then(Value::as_str)
            .is_some_and(|n| !n.is_empty());
        if !named && let Some(older) = older {
            template.insert("infrastructureRef".into(), older);
        }
        if let Some(Value::Object(reference)) = template.get_mut("infrastructureRef")
            && reference
                .get("namespace")
                .and_then(Value::as_str)
                .unwrap_or("")
                .is_empty()
        {
            reference.insert("namespace".into(), namespace.unwrap_or(json!("")));
        }
        if let Some(drain) = drain {
            template.entry("nodeDrainTimeout").or_insert(drain);
        }
        template.entry("nodeDrainTimeout").or_insert(json!("2m0s"));
        template
            .entry("nodeVolumeDetachTimeout")
            .or_insert(json!("5m0s"));
        template
            .entry("nodeDeletionTimeout")
            .or_insert(json!("10s"));
    } else if let Some(deletion) = at(object, &["spec", "machineTemplate", "spec", "deletion"]) {
        deletion
            .entry("nodeDrainTimeoutSeconds")
            .or_insert(json!(120));
        deletion
            .entry("nodeVolumeDetachTimeoutSeconds")
            .or_insert(json!(300));
        deletion
            .entry("nodeDeletionTimeoutSeconds")
            .or_insert(json!(10));
    }
}

/// Sets the cluster-name label from `spec.clusterName` (as a string, `""` when unset) and
/// returns it.
fn cluster_label(object: &mut Map<String, Value>) -> Value {
    let name = object
        .get("spec")
        .and_then(|s| s.get("clusterName"))
        .filter(|n| n.is_string())
        .cloned()
        .unwrap_or(json!(""));
    if let Some(labels) = at(object, &["metadata", "labels"]) {
        labels.insert(CLUSTER_NAME.into(), name.clone());
    }
    name
}

/// `agentConfig.format` defaults to `cloud-config` (`DefaultRKE2ConfigSpec`).
fn agent_format(object: &mut Map<String, Value>, spec: &[&str]) {
    let Some(spec) = at(object, spec) else {
        return;
    };
    let Some(agent) = at(spec, &["agentConfig"]) else {
        return;
    };
    if agent
        .get("format")
        .and_then(Value::as_str)
        .unwrap_or("")
        .is_empty()
    {
        agent.insert("format".into(), json!("cloud-config"));
    }
}

/// `replicas` when it is not set.
fn replicas(spec: &mut Map<String, Value>, initial: i64) {
    if spec.get("replicas").is_none_or(Value::is_null) {
        spec.insert("replicas".into(), json!(initial));
    }
}

/// A version string without its leading `v` gets one.
fn v_prefix(map: &mut Map<String, Value>, key: &str) {
    if let Some(Value::String(v)) = map.get_mut(key)
        && !v.is_empty()
        && !v.starts_with('v')
    {
        v.insert(0, 'v');
    }
}

/// The object at `keys` under `map`, each missing (or null) step made an object, as decoding
/// into the webhook's Go struct makes it; `None` where a step holds a value of another type
/// (the schema reports that, and the webhook would not run).
fn at<'m>(map: &'m mut Map<String, Value>, keys: &[&str]) -> Option<&'m mut Map<String, Value>> {
    let mut map = map;
    for key in keys {
        let slot = map.entry(*key).or_insert(Value::Null);
        if slot.is_null() {
            *slot = json!({});
        }
        map = slot.as_object_mut()?;
    }
    Some(map)
}
