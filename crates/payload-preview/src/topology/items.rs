//! The templates the patches apply to (`Item`s): the infrastructure cluster, the control plane
//! and its machine template, and per MachineDeployment and MachinePool topology its bootstrap
//! and infrastructure templates, each with its builtins and overrides.

use rke2_payload::Check;
use serde_json::{Map, Value, json};

use super::naming::TemplateRef;
use super::variables::Definition;
use super::{
    ControlPlaneMeta, DEPLOYMENT_LABEL, Expander, Item, Names, POOL_LABEL, Plan, Role, Templates,
    Worker, shown,
};
use crate::manifests::{Object, at, str_at};

/// The worker classes of one kind (`machineDeployments` or `machinePools`) of a class.
struct WorkerClass<'v> {
    class: &'v str,
    value: &'v Value,
}

/// Where a worker topology is: its list, its index there, whether it is a pool, and its index
/// among all the workers.
#[derive(Clone, Copy)]
struct WorkerAt {
    list: &'static str,
    i: usize,
    pool: bool,
    index: usize,
}

impl<'a> Expander<'a> {
    /// The items of the infrastructure cluster, the control plane and its machine template
    /// (with `builtin.controlPlane` and the control plane's overrides), and the control plane's
    /// topology metadata.
    pub(super) fn control_plane_items(
        &mut self,
        plan: &Plan,
        templates: &Templates<'a>,
        names: &Names,
        definitions: &[Definition],
        items: &mut Vec<Item>,
    ) -> ControlPlaneMeta {
        let cp_topo = plan
            .topo
            .get("controlPlane")
            .cloned()
            .unwrap_or(Value::Null);
        let meta = ControlPlaneMeta {
            replicas: cp_topo.get("replicas").cloned(),
            labels: merged_metadata(&cp_topo, &plan.spec, "labels", &["controlPlane"]),
            annotations: merged_metadata(&cp_topo, &plan.spec, "annotations", &["controlPlane"]),
        };
        let mut builtin = json!({"name": names.cp, "version": plan.version});
        if let Some(r) = &meta.replicas {
            builtin["replicas"] = r.clone();
        }
        let mut labels = meta.labels.clone();
        labels.extend(self.labels(&[]));
        builtin["metadata"] = json!({"labels": labels, "annotations": meta.annotations});
        if let Some(n) = &names.cp_machine {
            builtin["machineTemplate"] = json!({"infrastructureRef": {"name": n}});
        }
        let mut vars = self.overrides(&cp_topo, definitions, "control plane");
        vars.insert("builtin".into(), json!({"controlPlane": builtin}));
        items.push(Item::new(
            Role::InfrastructureCluster,
            templates.infra,
            Map::new(),
        ));
        items.push(Item::new(Role::ControlPlane, templates.cp, vars.clone()));
        if let Some(t) = templates.cp_machine {
            items.push(Item::new(Role::ControlPlaneMachine, t, vars));
        }
        meta
    }

    /// The MachineDeployment and MachinePool topologies, each with its bootstrap and
    /// infrastructure items.
    pub(super) fn workers(
        &mut self,
        plan: &Plan,
        definitions: &[Definition],
        items: &mut Vec<Item>,
    ) -> Option<Vec<Worker>> {
        let mut workers: Vec<Worker> = Vec::new();
        for pool in [false, true] {
            let list = if pool {
                "machinePools"
            } else {
                "machineDeployments"
            };
            let classes: Vec<WorkerClass<'_>> = plan
                .spec
                .pointer(&format!("/workers/{list}"))
                .and_then(Value::as_array)
                .map(|a| {
                    a.iter()
                        .map(|v| WorkerClass {
                            class: str_at(v, &["class"]).unwrap_or(""),
                            value: v,
                        })
                        .collect()
                })
                .unwrap_or_default();
            let tops: Vec<Value> = plan
                .topo
                .pointer(&format!("/workers/{list}"))
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default();
            for (i, t) in tops.iter().enumerate() {
                let at = WorkerAt {
                    list,
                    i,
                    pool,
                    index: workers.len(),
                };
                let (worker, bootstrap, infra) =
                    self.worker(plan, definitions, &classes, t, &at)?;
                items.push(bootstrap);
                items.push(infra);
                workers.push(worker);
            }
        }
        Some(workers)
    }

    /// One worker topology: its class's templates, its names and builtins, its two items.
    fn worker(
        &mut self,
        plan: &Plan,
        definitions: &[Definition],
        classes: &[WorkerClass<'_>],
        t: &Value,
        at: &WorkerAt,
    ) -> Option<(Worker, Item, Item)> {
        let WorkerAt {
            list,
            i,
            pool,
            index,
        } = *at;
        let class = str_at(t, &["class"]).unwrap_or("").to_owned();
        let topology_name = str_at(t, &["name"]).unwrap_or("").to_owned();
        let Some(wc) = classes.iter().find(|c| c.class == class) else {
            self.fail(
                Check::TopologyExpansionFails,
                format!(
                    "spec.topology.workers.{list}[{i}] uses class {}, which {} does not define; the cluster is not expanded",
                    shown(&class, 60),
                    plan.class_title
                ),
            );
            return None;
        };
        let (bt, it) = self.worker_templates(plan, wc, &class)?;
        let (naming_default, extra, key) = if pool {
            (
                "{{ .cluster.name }}-{{ .machinePool.topologyName }}-{{ .random }}",
                json!({"machinePool": {"topologyName": topology_name}}),
                "machinePool",
            )
        } else {
            (
                "{{ .cluster.name }}-{{ .machineDeployment.topologyName }}-{{ .random }}",
                json!({"machineDeployment": {"topologyName": topology_name}}),
                "machineDeployment",
            )
        };
        let name = self.name(
            str_at(wc.value, &["naming", "template"])
                .or_else(|| str_at(wc.value, &["namingStrategy", "template"])),
            naming_default,
            extra,
        )?;
        let prefix = format!("{}-{}-", self.cluster.name(), topology_name);
        let bootstrap_name = self.template_name(&prefix);
        let infra_name = self.template_name(&prefix);
        let mut builtin = json!({
            "version": plan.version,
            "class": class,
            "name": name,
            "topologyName": topology_name,
            "replicas": t.get("replicas").cloned().unwrap_or(json!(1)),
            "bootstrap": {"configRef": {"name": bootstrap_name}},
            "infrastructureRef": {"name": infra_name},
        });
        let mut md_labels = merged_worker_metadata(t, wc.value, "labels");
        md_labels.extend(self.labels(&[(
            if pool { POOL_LABEL } else { DEPLOYMENT_LABEL },
            &topology_name,
        )]));
        builtin["metadata"] = json!({
            "labels": md_labels,
            "annotations": merged_worker_metadata(t, wc.value, "annotations"),
        });
        let mut vars = self.overrides(t, definitions, &format!("{list}[{i}]"));
        vars.insert("builtin".into(), json!({ key: builtin }));
        let role = |bootstrap: bool| {
            if pool {
                Role::Pool(index, bootstrap)
            } else {
                Role::Deployment(index, bootstrap)
            }
        };
        let bootstrap = Item::new(role(true), bt, vars.clone());
        let infra = Item::new(role(false), it, vars);
        let worker = Worker {
            topology_name,
            name,
            bootstrap_name,
            infra_name,
            topo: t.clone(),
            bootstrap: Value::Null,
            infra: Value::Null,
            bootstrap_patched: Vec::new(),
            infra_patched: Vec::new(),
            bootstrap_written: None,
            infra_written: None,
            class_value: wc.value.clone(),
            pool,
        };
        Some((worker, bootstrap, infra))
    }

    /// A worker class's bootstrap and infrastructure templates (a finding if one is missing).
    fn worker_templates(
        &mut self,
        plan: &Plan,
        wc: &WorkerClass<'_>,
        class: &str,
    ) -> Option<(&'a Object, &'a Object)> {
        let b = TemplateRef::at(
            wc.value,
            &["bootstrap", "templateRef"],
            &["template", "bootstrap", "ref"],
            &plan.class_ns,
        );
        let inf = TemplateRef::at(
            wc.value,
            &["infrastructure", "templateRef"],
            &["template", "infrastructure", "ref"],
            &plan.class_ns,
        );
        let (Some(b), Some(inf)) = (b, inf) else {
            self.fail(
                Check::TopologyExpansionFails,
                format!(
                    "class {} of {} names no bootstrap or infrastructure template",
                    shown(class, 60),
                    plan.class_title
                ),
            );
            return None;
        };
        let bt = self.template(&b, "bootstrap template");
        let it = self.template(&inf, "infrastructure machine template");
        Some((bt?, it?))
    }
}

/// The topology's metadata `key` over the class's (`util.MergeMap`: the first wins).
fn merged_metadata(
    topo: &Value,
    spec: &Value,
    key: &str,
    class_path: &[&str],
) -> Map<String, Value> {
    let mut out = Map::new();
    let mut path: Vec<&str> = class_path.to_vec();
    path.extend(["metadata", key]);
    if let Some(Value::Object(c)) = at(spec, &path) {
        out.extend(c.clone());
    }
    if let Some(Value::Object(t)) = at(topo, &["metadata", key]) {
        out.extend(t.clone());
    }
    out
}

pub(super) fn merged_worker_metadata(topo: &Value, class: &Value, key: &str) -> Map<String, Value> {
    let mut out = Map::new();
    for path in [["template", "metadata"], ["metadata", ""]] {
        let p: Vec<&str> = path.iter().copied().filter(|s| !s.is_empty()).collect();
        if let Some(Value::Object(c)) = at(class, &p).and_then(|m| m.get(key)) {
            out.extend(c.clone());
        }
    }
    if let Some(Value::Object(t)) = at(topo, &["metadata", key]) {
        out.extend(t.clone());
    }
    out
}
