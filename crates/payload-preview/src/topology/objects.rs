//! The objects the controller makes from the patched templates (`exp/topology/desiredstate`):
//! the Cluster's references, the infrastructure cluster, the control plane and its machine
//! template, and per worker its bootstrap and infrastructure objects and its MachineDeployment
//! or MachinePool.

use serde_json::{Map, Value, json};

use super::items::merged_worker_metadata;
use super::{
    CLUSTER_NAME_LABEL, ControlPlaneMeta, DEPLOYMENT_LABEL, Expander, Item, Names, OWNED_LABEL,
    POOL_LABEL, Plan, Role, Worker,
};
use crate::crds::PathSeg;
use crate::manifests::{Derived, Object, Patched, str_at};

impl<'a> Expander<'a> {
    /// The labels the controller sets on what it makes for the Cluster, and `extra`.
    pub(super) fn labels(&self, extra: &[(&str, &str)]) -> Map<String, Value> {
        let mut l = Map::new();
        l.insert(CLUSTER_NAME_LABEL.into(), json!(self.cluster.name()));
        l.insert(OWNED_LABEL.into(), json!(""));
        for (k, v) in extra {
            l.insert((*k).into(), json!(v));
        }
        l
    }

    /// The Cluster with its references, and the objects made from the patched templates of the
    /// infrastructure cluster and the control plane; the workers take their patched templates.
    pub(super) fn objects(
        &self,
        plan: &Plan,
        items: Vec<Item>,
        workers: &mut [Worker],
        names: &Names,
        cp_meta: &ControlPlaneMeta,
    ) -> Option<(Object, Vec<Object>)> {
        let cluster = self.cluster;
        let mut infra_cluster = None;
        let mut cp = None;
        let mut cp_machine = None;
        for item in items {
            match item.role {
                Role::InfrastructureCluster => {
                    let mut o = object_from_template(
                        cluster,
                        &item.template,
                        &names.infra,
                        &plan.ns,
                        self.labels(&[]),
                    );
                    o.patched = patched_in_object(&item.patched);
                    o.derived = derived(item.written, false, Vec::new());
                    infra_cluster = Some(o);
                }
                Role::ControlPlane => {
                    let mut l = cp_meta.labels.clone();
                    l.extend(self.labels(&[]));
                    let mut o =
                        object_from_template(cluster, &item.template, &names.cp, &plan.ns, l);
                    o.patched = patched_in_object(&item.patched);
                    o.derived = derived(item.written, false, self.set_from_cluster());
                    cp = Some(o);
                }
                Role::ControlPlaneMachine => {
                    let name = names.cp_machine.clone().unwrap_or_default();
                    let mut o =
                        template_copy(cluster, &item.template, &name, &plan.ns, self.labels(&[]));
                    o.patched = item.patched;
                    o.derived = derived(item.written, true, Vec::new());
                    cp_machine = Some(o);
                }
                Role::Deployment(w, bootstrap) | Role::Pool(w, bootstrap) => {
                    if let Some(worker) = workers.get_mut(w) {
                        if bootstrap {
                            worker.bootstrap = item.template;
                            worker.bootstrap_patched = item.patched;
                            worker.bootstrap_written = Some(item.written);
                        } else {
                            worker.infra = item.template;
                            worker.infra_patched = item.patched;
                            worker.infra_written = Some(item.written);
                        }
                    }
                }
            }
        }
        let (infra_cluster, mut cp) = (infra_cluster?, cp?);
        self.set_control_plane(plan, &mut cp, cp_machine.as_ref(), cp_meta);
        let old_cluster = is_v1beta1(self.cluster_api());
        let mut expanded = cluster.clone();
        let cp_r = reference(&cp, old_cluster, &plan.ns);
        let infra_r = reference(&infra_cluster, old_cluster, &plan.ns);
        let spec = ensure_object(&mut expanded.value, "spec");
        spec.insert("controlPlaneRef".into(), cp_r);
        spec.insert("infrastructureRef".into(), infra_r);
        let mut objects = vec![infra_cluster];
        objects.extend(cp_machine);
        objects.push(cp);
        Some((expanded, objects))
    }

    /// What the controller sets on the control plane after the patches: version, replicas,
    /// the machine template's reference and metadata.
    fn set_control_plane(
        &self,
        plan: &Plan,
        cp: &mut Object,
        machine: Option<&Object>,
        meta: &ControlPlaneMeta,
    ) {
        let old = is_v1beta1(str_at(&cp.value, &["apiVersion"]).unwrap_or(""));
        let machine_ref = machine.map(|m| reference(m, old, &plan.ns));
        let spec = ensure_object(&mut cp.value, "spec");
        spec.insert("version".into(), json!(plan.version));
        if let Some(r) = &meta.replicas {
            spec.insert("replicas".into(), r.clone());
        }
        let mt = ensure_object_in(spec, "machineTemplate");
        if let Some(r) = machine_ref {
            if old {
                mt.insert("infrastructureRef".into(), r);
            } else {
                ensure_object_in(mt, "spec").insert("infrastructureRef".into(), r);
            }
        }
        let mut l = meta.labels.clone();
        l.extend(self.labels(&[]));
        mt.insert(
            "metadata".into(),
            json!({"labels": l, "annotations": meta.annotations}),
        );
    }

    /// The control plane's fields the controller sets from the Cluster's topology after the
    /// patches ([`Expander::set_control_plane`]), with where the Cluster writes each.
    fn set_from_cluster(&self) -> Vec<(Vec<String>, rke2_payload::ManifestSite)> {
        let key = |k: &str| PathSeg::Key(k.to_owned());
        let topology = [key("spec"), key("topology")];
        let at = |rest: &[&str]| {
            let mut path = topology.to_vec();
            path.extend(rest.iter().map(|k| key(k)));
            self.cluster.field_site(&path)
        };
        let owned = |path: &[&str]| path.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
        vec![
            (owned(&["spec", "version"]), at(&["version"])),
            (
                owned(&["spec", "replicas"]),
                at(&["controlPlane", "replicas"]),
            ),
            (
                owned(&["spec", "machineTemplate", "metadata"]),
                at(&["controlPlane", "metadata"]),
            ),
        ]
    }

    /// The Cluster's API version (v1beta2 when it says none).
    fn cluster_api(&self) -> &'a str {
        str_at(&self.cluster.value, &["apiVersion"]).unwrap_or("cluster.x-k8s.io/v1beta2")
    }

    /// A worker's bootstrap and infrastructure objects and its MachineDeployment or
    /// MachinePool.
    pub(super) fn worker_objects(&self, plan: &Plan, w: &Worker) -> [Object; 3] {
        let cluster = self.cluster;
        let ns = &plan.ns;
        let old_cluster = is_v1beta1(self.cluster_api());
        let (kind, label) = if w.pool {
            ("MachinePool", POOL_LABEL)
        } else {
            ("MachineDeployment", DEPLOYMENT_LABEL)
        };
        let mut l = merged_worker_metadata(&w.topo, &w.class_value, "labels");
        l.extend(self.labels(&[(label, &w.topology_name)]));
        let annotations = merged_worker_metadata(&w.topo, &w.class_value, "annotations");
        let (bootstrap, infra) = if w.pool {
            // A MachinePool's bootstrap config and infrastructure are objects.
            let mut b =
                object_from_template(cluster, &w.bootstrap, &w.bootstrap_name, ns, l.clone());
            let mut i = object_from_template(cluster, &w.infra, &w.infra_name, ns, l.clone());
            b.patched = patched_in_object(&w.bootstrap_patched);
            i.patched = patched_in_object(&w.infra_patched);
            b.derived = w
                .bootstrap_written
                .clone()
                .and_then(|t| derived(t, false, Vec::new()));
            i.derived = w
                .infra_written
                .clone()
                .and_then(|t| derived(t, false, Vec::new()));
            (b, i)
        } else {
            let mut b = template_copy(cluster, &w.bootstrap, &w.bootstrap_name, ns, l.clone());
            let mut i = template_copy(cluster, &w.infra, &w.infra_name, ns, l.clone());
            b.patched.clone_from(&w.bootstrap_patched);
            i.patched.clone_from(&w.infra_patched);
            b.derived = w
                .bootstrap_written
                .clone()
                .and_then(|t| derived(t, true, Vec::new()));
            i.derived = w
                .infra_written
                .clone()
                .and_then(|t| derived(t, true, Vec::new()));
            (b, i)
        };
        let mut template_spec = json!({
            "clusterName": cluster.name(),
            "version": plan.version,
            "bootstrap": {"configRef": reference(&bootstrap, old_cluster, ns)},
            "infrastructureRef": reference(&infra, old_cluster, ns),
        });
        if let Some(fd) = w.topo.get("failureDomain") {
            template_spec["failureDomain"] = fd.clone();
        }
        let mut spec = json!({
            "clusterName": cluster.name(),
            "template": {
                "metadata": {"labels": l, "annotations": annotations},
                "spec": template_spec,
            },
        });
        spec["replicas"] = w.topo.get("replicas").cloned().unwrap_or(json!(1));
        let value = json!({
            "apiVersion": self.cluster_api(),
            "kind": kind,
            "metadata": {"name": w.name, "namespace": ns, "labels": l, "annotations": annotations},
            "spec": spec,
        });
        [bootstrap, infra, generated(cluster, value)]
    }
}

/// Whether an API version is `…/v1beta1` (references name `apiVersion` and `namespace`).
fn is_v1beta1(api_version: &str) -> bool {
    api_version.ends_with("/v1beta1")
}

/// A reference to `o` in the contract of the referring object: v1beta1 `apiVersion`, `kind`,
/// `name`, `namespace`; v1beta2 `apiGroup`, `kind`, `name`.
fn reference(o: &Object, old: bool, namespace: &str) -> Value {
    let api_version = str_at(&o.value, &["apiVersion"]).unwrap_or("");
    if old {
        json!({"apiVersion": api_version, "kind": o.kind(), "name": o.name(), "namespace": namespace})
    } else {
        json!({"apiGroup": api_version.split('/').next().unwrap_or(""), "kind": o.kind(), "name": o.name()})
    }
}

fn ensure_object<'v>(value: &'v mut Value, key: &str) -> &'v mut Map<String, Value> {
    if !value.is_object() {
        *value = json!({});
    }
    let Value::Object(map) = value else {
        unreachable!("made an object above")
    };
    ensure_object_in(map, key)
}

fn ensure_object_in<'v>(map: &'v mut Map<String, Value>, key: &str) -> &'v mut Map<String, Value> {
    let slot = map.entry(key).or_insert_with(|| json!({}));
    if !slot.is_object() {
        *slot = json!({});
    }
    match slot {
        Value::Object(m) => m,
        _ => unreachable!("made an object above"),
    }
}

/// An object made for `cluster`, placed where the Cluster is written.
fn generated(cluster: &Object, value: Value) -> Object {
    Object {
        source: cluster.source.clone(),
        value,
        line: cluster.line,
        places: None,
        made_for: Some(cluster.title()),
        patched: Vec::new(),
        derived: None,
    }
}

/// Where an object made of `template` is written ([`Derived`]); `copy` when it is a copy of
/// the template.
fn derived(
    template: Object,
    copy: bool,
    from_cluster: Vec<(Vec<String>, rke2_payload::ManifestSite)>,
) -> Option<std::sync::Arc<Derived>> {
    let derived = Derived {
        template,
        copy,
        from_cluster,
    };
    Some(std::sync::Arc::new(derived))
}

/// What the patches wrote into a template, where it lands in the object the template stands
/// for ([`object_from_template`]): `spec.template.spec` is the object's `spec`, the template's
/// `spec.template.metadata` its metadata; the rest of the template is not in the object.
fn patched_in_object(patched: &[Patched]) -> Vec<Patched> {
    patched
        .iter()
        .filter_map(|p| {
            let path = match p.path.as_slice() {
                [spec, template, rest @ ..] if spec == "spec" && template == "template" => {
                    match rest {
                        [] => vec!["spec".to_owned()],
                        [inner, rest @ ..] if inner == "spec" => std::iter::once("spec".to_owned())
                            .chain(rest.iter().cloned())
                            .collect(),
                        [inner, rest @ ..] if inner == "metadata" => {
                            std::iter::once("metadata".to_owned())
                                .chain(rest.iter().cloned())
                                .collect()
                        }
                        _ => return None,
                    }
                }
                [spec] if spec == "spec" => vec!["spec".to_owned()],
                _ => return None,
            };
            Some(Patched { path, ..p.clone() })
        })
        .collect()
}

/// The object a template stands for (`GenerateTemplate`): its kind without `Template`, its
/// `spec.template.spec` as `spec`, its `spec.template.metadata` merged into the labels.
fn object_from_template(
    cluster: &Object,
    template: &Value,
    name: &str,
    namespace: &str,
    mut labels: Map<String, Value>,
) -> Object {
    let kind = str_at(template, &["kind"]).unwrap_or("");
    let kind = kind.strip_suffix("Template").unwrap_or(kind);
    if let Some(Value::Object(l)) = template.pointer("/spec/template/metadata/labels") {
        let mut merged = l.clone();
        merged.extend(labels);
        labels = merged;
    }
    let annotations = template
        .pointer("/spec/template/metadata/annotations")
        .cloned()
        .unwrap_or(json!({}));
    let value = json!({
        "apiVersion": str_at(template, &["apiVersion"]).unwrap_or(""),
        "kind": kind,
        "metadata": {"name": name, "namespace": namespace, "labels": labels, "annotations": annotations},
        "spec": template.pointer("/spec/template/spec").cloned().unwrap_or(json!({})),
    });
    generated(cluster, value)
}

/// A copy of a template for one cluster (`templateToTemplate`).
fn template_copy(
    cluster: &Object,
    template: &Value,
    name: &str,
    namespace: &str,
    labels: Map<String, Value>,
) -> Object {
    let mut value = template.clone();
    if let Value::Object(map) = &mut value {
        let meta = ensure_object_in(map, "metadata");
        let mut l = match meta.get("labels") {
            Some(Value::Object(l)) => l.clone(),
            _ => Map::new(),
        };
        l.extend(labels);
        for key in [
            "uid",
            "resourceVersion",
            "creationTimestamp",
            "generation",
            "managedFields",
        ] {
            meta.shift_remove(key);
        }
        meta.insert("name".into(), json!(name));
        meta.insert("namespace".into(), json!(namespace));
        meta.insert("labels".into(), Value::Object(l));
    }
    generated(cluster, value)
}
