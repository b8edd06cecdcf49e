//! ClusterClass expansion: a `Cluster` with `spec.topology` and its `ClusterClass` turned into
//! the classic objects Cluster API's topology controller creates (the infrastructure cluster,
//! the control plane and its machine template, per MachineDeployment and MachinePool topology
//! the bootstrap and infrastructure templates and the MachineDeployment or MachinePool), so
//! that the preview previews them as it previews classic manifests.
//!
//! What each part follows in Cluster API (v1.14):
//! - the objects and their names: `exp/topology/desiredstate` (`computeControlPlane`,
//!   `computeMachineDeployment`, `templateToObject`: a template's `spec.template.spec`
//!   becomes the object's `spec`, its kind loses `Template`; names from the class's naming
//!   template, `{{ .cluster.name }}-{{ .random }}` and
//!   `{{ .cluster.name }}-{{ .machineDeployment.topologyName }}-{{ .random }}` by default,
//!   templates named `<cluster>-<topology name>-<random>`);
//! - the variables: the Cluster's values defaulted from each definition's schema (the
//!   Cluster webhook's `DefaultClusterVariables`), then validated (required, defined, schema);
//!   per MachineDeployment and control plane overrides; the builtins
//!   (`patches/variables`: `Global`, `ControlPlane`, `MachineDeployment`, `MachinePool`);
//! - the patches: `patches/engine.go` and `patches/inline/json_patch_generator.go`: each
//!   patch in order, on every template whose selector matches (apiVersion, kind,
//!   `matchResources`, class names with a leading or trailing `*`), `enabledIf` and
//!   `valueFrom.template` executed as Go templates with Sprig and read back as YAML, each
//!   definition's JSON patches applied whole, and only `spec`, labels and annotations kept;
//!   the control plane's version, replicas and machine template are set after the patches,
//!   as the controller preserves them.
//!
//! An `external` patch (served by a runtime extension) cannot be expanded offline: the
//! expansion is refused naming it.

pub(crate) mod gotemplate;
mod patch;

use rand::SeedableRng as _;
use rand::rngs::StdRng;
use serde_json::{Map, Value, json};

use crate::apischema::VariableSchema;
use crate::checks::{Check, Finding};
use crate::manifests::{Manifests, Object, Patched, at, str_at};

/// The label Cluster API puts on every object it makes for a cluster.
const CLUSTER_NAME_LABEL: &str = "cluster.x-k8s.io/cluster-name";
const OWNED_LABEL: &str = "topology.cluster.x-k8s.io/owned";
const DEPLOYMENT_LABEL: &str = "topology.cluster.x-k8s.io/deployment-name";
const POOL_LABEL: &str = "topology.cluster.x-k8s.io/pool-name";
/// Kubernetes' `utilrand` alphabet (no vowels, no confusable digits).
const ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";

/// What the expansion made of the input.
#[derive(Debug, Default)]
pub(crate) struct Expansion {
    /// The topology Clusters, by their index in the input, with the references the
    /// controller sets (`controlPlaneRef`, `infrastructureRef`).
    pub(crate) clusters: Vec<(usize, Object)>,
    /// The objects the controller creates.
    pub(crate) objects: Vec<Object>,
    /// What kept a cluster from expanding, or is wrong with its variables.
    pub(crate) findings: Vec<Finding>,
}

/// A patch that cannot be applied offline.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Unexpandable {
    /// The patch's name.
    pub(crate) patch: String,
    /// `ClusterClass ns/name`.
    pub(crate) class: String,
}

/// Whether the input holds a ClusterClass or a Cluster with a topology.
pub(crate) fn has_topology(m: &Manifests) -> bool {
    m.objects.iter().any(is_topology_cluster) || m.of_kind("ClusterClass").next().is_some()
}

fn is_topology_cluster(o: &Object) -> bool {
    o.kind() == "Cluster" && o.get(&["spec", "topology"]).is_some_and(Value::is_object)
}

/// Text of the input in a message: cut and escaped.
pub(crate) fn shown(s: &str, max: usize) -> String {
    crate::codec::text::terminal_safe(&crate::codec::text::shorten(s, max)).into_owned()
}

/// Expands every topology Cluster of `m`. `seed` makes the generated names and uid the
/// same on every run.
///
/// # Errors
/// [`Unexpandable`] when a ClusterClass a Cluster uses has an external patch.
pub(crate) fn expand(m: &Manifests, seed: Option<u64>) -> Result<Expansion, Unexpandable> {
    let mut rng = match seed {
        Some(s) => StdRng::seed_from_u64(s ^ 0x746f_706f_6c6f_6779),
        None => {
            use rand::TryRng as _;
            let mut bytes = [0u8; 32];
            // Without the system's randomness the names are still valid, only predictable.
            let _ = rand::rngs::SysRng.try_fill_bytes(&mut bytes);
            StdRng::from_seed(bytes)
        }
    };
    let mut out = Expansion::default();
    for (i, cluster) in m.objects.iter().enumerate() {
        if !is_topology_cluster(cluster) {
            continue;
        }
        let mut e = Expander {
            m,
            cluster,
            rng: &mut rng,
            findings: Vec::new(),
        };
        if let Some((expanded, objects)) = e.run()? {
            out.clusters.push((i, expanded));
            out.objects.extend(objects);
        }
        out.findings.append(&mut e.findings);
    }
    Ok(out)
}

/// A template a patch may change, and what it is for.
struct Item {
    /// `infrastructureCluster`, `controlPlane`, `controlPlaneMachine`, `md`, `mp`.
    role: Role,
    template: Value,
    /// The variables only this item sees (builtins and overrides).
    vars: Map<String, Value>,
    title: String,
    /// What the patches wrote into the template, in order.
    patched: Vec<Patched>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Role {
    InfrastructureCluster,
    ControlPlane,
    ControlPlaneMachine,
    /// A MachineDeployment's template (index into the topology's list), bootstrap or not.
    Deployment(usize, bool),
    Pool(usize, bool),
}

struct Expander<'a> {
    m: &'a Manifests,
    cluster: &'a Object,
    rng: &'a mut StdRng,
    findings: Vec<Finding>,
}

/// A reference to a template as a ClusterClass holds it.
struct TemplateRef {
    kind: String,
    name: String,
    namespace: String,
}

impl TemplateRef {
    /// The reference at `v2` (v1beta2 `templateRef`) or `v1` (v1beta1 `ref`) under `value`.
    fn at(value: &Value, v2: &[&str], v1: &[&str], namespace: &str) -> Option<TemplateRef> {
        let r = at(value, v2).or_else(|| at(value, v1))?;
        let s = |k: &str| str_at(r, &[k]).unwrap_or("").to_owned();
        let name = s("name");
        if name.is_empty() {
            return None;
        }
        let ns = s("namespace");
        Some(TemplateRef {
            kind: s("kind"),
            name,
            namespace: if ns.is_empty() {
                namespace.to_owned()
            } else {
                ns
            },
        })
    }
}

/// The worker classes of one kind (`machineDeployments` or `machinePools`) of a class.
struct WorkerClass<'v> {
    class: &'v str,
    value: &'v Value,
}

impl<'a> Expander<'a> {
    fn fail(&mut self, check: Check, what: String) {
        self.findings.push(Finding::new(
            check,
            format!("{}: {what}", self.cluster.title()),
        ));
    }

    fn template(&mut self, r: &TemplateRef, what: &str) -> Option<&'a Object> {
        let found = self
            .m
            .objects
            .iter()
            .find(|o| o.kind() == r.kind && o.name() == r.name && o.namespace() == r.namespace);
        if found.is_none() {
            self.fail(
                Check::TopologyExpansionFails,
                format!(
                    "the ClusterClass's {what} names {} {}/{}, which is not in the input; the cluster is not expanded",
                    shown(&r.kind, 60),
                    shown(&r.namespace, 60),
                    shown(&r.name, 60)
                ),
            );
        }
        found
    }

    fn random(&mut self) -> String {
        use rand::RngExt as _;
        (0..5)
            .map(|_| ALPHABET[self.rng.random_range(0..ALPHABET.len())] as char)
            .collect()
    }

    /// A name from a naming template (Go template on `cluster.name`, `random` and the
    /// topology name), as `internal/topology/names` makes it.
    fn name(&mut self, template: Option<&str>, default: &str, extra: Value) -> Option<String> {
        let template = template.filter(|t| !t.is_empty()).unwrap_or(default);
        let mut data = json!({"cluster": {"name": self.cluster.name()}, "random": self.random()});
        if let (Value::Object(d), Value::Object(e)) = (&mut data, extra) {
            d.extend(e);
        }
        let name = if template == default {
            // The defaults need no template engine.
            let mut name = default.to_owned();
            for (key, value) in [
                ("{{ .cluster.name }}", data["cluster"]["name"].as_str()),
                ("{{ .random }}", data["random"].as_str()),
                (
                    "{{ .machineDeployment.topologyName }}",
                    data.pointer("/machineDeployment/topologyName")
                        .and_then(Value::as_str),
                ),
                (
                    "{{ .machinePool.topologyName }}",
                    data.pointer("/machinePool/topologyName")
                        .and_then(Value::as_str),
                ),
            ] {
                if let Some(v) = value {
                    name = name.replace(key, v);
                }
            }
            name
        } else {
            match gotemplate::render_name(template, &data) {
                Ok(n) => n,
                Err(e) => {
                    let e = without_values(&e.to_string(), &data);
                    self.fail(
                        Check::TopologyExpansionFails,
                        format!("the naming template {} fails: {e}", shown(template, 60)),
                    );
                    return None;
                }
            }
        };
        // Names over 63 characters are cut and given a new random suffix.
        if name.len() > 63 {
            let mut cut = name[..char_floor(&name, 58)].to_owned();
            cut.push_str(&self.random());
            return Some(cut);
        }
        Some(name)
    }

    /// A template name: `<prefix><random>`, the prefix cut to 58 bytes.
    fn template_name(&mut self, prefix: &str) -> String {
        let mut name = prefix[..char_floor(prefix, 58)].to_owned();
        name.push_str(&self.random());
        name
    }

    /// The expansion of the Cluster: its class and templates, the names and builtins, the
    /// patches in order, then the objects. `None` when a finding says why it stops.
    fn run(&mut self) -> Result<Option<(Object, Vec<Object>)>, Unexpandable> {
        let Some(plan) = self.plan() else {
            return Ok(None);
        };
        // External patches first: they are a refusal, whatever else is wrong.
        let patches = refuse_external(&plan)?;
        // The variables: the Cluster's values, defaulted and validated.
        let Some(globals) = self.variables(&plan.spec, &plan.topo, &plan.class_title) else {
            return Ok(None);
        };
        let definitions = definitions(&plan.spec);
        let Some(templates) = self.templates(&plan) else {
            return Ok(None);
        };
        // Names first: the builtins name the objects.
        let Some(names) = self.names(&plan, &templates) else {
            return Ok(None);
        };
        let uid = self.uid();
        let mut global_vars = globals;
        global_vars.insert(
            "builtin".into(),
            json!({"cluster": self.cluster_builtin(&plan, &uid)}),
        );
        let mut items = Vec::new();
        let cp_meta = self.control_plane_items(&plan, &templates, &names, &definitions, &mut items);
        let Some(mut workers) = self.workers(&plan, &definitions, &mut items) else {
            return Ok(None);
        };
        for p in &patches {
            if !self.apply_patch(p, &plan.class_title, &global_vars, &mut items) {
                return Ok(None);
            }
        }
        Ok(self
            .objects(&plan, items, &mut workers, &names, &cp_meta)
            .map(|(cluster, objects)| {
                let mut all = objects;
                all.extend(workers.iter().flat_map(|w| self.worker_objects(&plan, w)));
                (cluster, all)
            }))
    }

    /// The Cluster's topology and the ClusterClass it names (a finding if it is not there).
    fn plan(&mut self) -> Option<Plan> {
        let cv = &self.cluster.value;
        let ns = self.cluster.namespace().to_owned();
        let topo = cv.pointer("/spec/topology").cloned().unwrap_or(Value::Null);
        let class_name = str_at(&topo, &["classRef", "name"])
            .or_else(|| str_at(&topo, &["class"]))
            .unwrap_or("")
            .to_owned();
        let class_ns = str_at(&topo, &["classRef", "namespace"])
            .or_else(|| str_at(&topo, &["classNamespace"]))
            .filter(|n| !n.is_empty())
            .unwrap_or(&ns)
            .to_owned();
        let Some(class) = self
            .m
            .of_kind("ClusterClass")
            .find(|c| c.name() == class_name && c.namespace() == class_ns)
        else {
            self.fail(
                Check::TopologyExpansionFails,
                format!(
                    "spec.topology names ClusterClass {}/{}, which is not in the input; nothing is rendered for it",
                    shown(&class_ns, 60),
                    shown(&class_name, 60)
                ),
            );
            return None;
        };
        Some(Plan {
            version: str_at(&topo, &["version"]).unwrap_or("").to_owned(),
            topo,
            ns,
            class_title: class.title(),
            spec: class.get(&["spec"]).cloned().unwrap_or(Value::Null),
            class_name,
            class_ns,
        })
    }

    /// The class's infrastructure cluster, control plane and control plane machine templates.
    fn templates(&mut self, plan: &Plan) -> Option<Templates<'a>> {
        let spec = &plan.spec;
        let named = |this: &mut Self, r: Option<TemplateRef>, what: &str| {
            if r.is_none() {
                this.fail(
                    Check::TopologyExpansionFails,
                    format!("{} names no {what} template", plan.class_title),
                );
            }
            r
        };
        let infra_ref = TemplateRef::at(
            spec,
            &["infrastructure", "templateRef"],
            &["infrastructure", "ref"],
            &plan.class_ns,
        );
        let infra_ref = named(self, infra_ref, "infrastructure")?;
        let cp_ref = TemplateRef::at(
            spec,
            &["controlPlane", "templateRef"],
            &["controlPlane", "ref"],
            &plan.class_ns,
        );
        let cp_ref = named(self, cp_ref, "control plane")?;
        let cp_machine_ref = TemplateRef::at(
            spec,
            &["controlPlane", "machineInfrastructure", "templateRef"],
            &["controlPlane", "machineInfrastructure", "ref"],
            &plan.class_ns,
        );
        let infra = self.template(&infra_ref, "infrastructure template");
        let cp = self.template(&cp_ref, "control plane template");
        let cp_machine = cp_machine_ref
            .as_ref()
            .map(|r| self.template(r, "control plane machine template"));
        let (Some(infra), Some(cp)) = (infra, cp) else {
            return None;
        };
        if cp_machine.is_some_and(|t| t.is_none()) {
            return None;
        }
        Some(Templates {
            infra,
            cp,
            cp_machine: cp_machine.flatten(),
        })
    }

    /// The names of the infrastructure cluster, the control plane and its machine template,
    /// in the order the controller draws their random parts.
    fn names(&mut self, plan: &Plan, templates: &Templates<'a>) -> Option<Names> {
        let spec = &plan.spec;
        let infra = self.name(
            str_at(spec, &["infrastructure", "naming", "template"])
                .or_else(|| str_at(spec, &["infrastructureNamingStrategy", "template"])),
            "{{ .cluster.name }}-{{ .random }}",
            json!({}),
        );
        let cp = self.name(
            str_at(spec, &["controlPlane", "naming", "template"])
                .or_else(|| str_at(spec, &["controlPlane", "namingStrategy", "template"])),
            "{{ .cluster.name }}-{{ .random }}",
            json!({}),
        );
        let (Some(infra), Some(cp)) = (infra, cp) else {
            return None;
        };
        let cp_machine = templates.cp_machine.map(|_| {
            let prefix = format!("{}-", self.cluster.name());
            self.template_name(&prefix)
        });
        Some(Names {
            infra,
            cp,
            cp_machine,
        })
    }

    /// `builtin.cluster`.
    fn cluster_builtin(&self, plan: &Plan, uid: &str) -> Value {
        let cv = &self.cluster.value;
        let mut bc = json!({
            "name": self.cluster.name(),
            "namespace": plan.ns,
            "uid": uid,
            "topology": {
                "version": plan.version,
                "class": plan.class_name,
                "classNamespace": plan.class_ns,
                "classRef": {"name": plan.class_name, "namespace": plan.class_ns},
            },
        });
        if let Some(meta) = metadata_of(cv, &["metadata"]) {
            bc["metadata"] = meta;
        }
        let mut network = Map::new();
        if let Some(d) =
            str_at(cv, &["spec", "clusterNetwork", "serviceDomain"]).filter(|d| !d.is_empty())
        {
            network.insert("serviceDomain".into(), json!(d));
        }
        for (key, path) in [("services", "services"), ("pods", "pods")] {
            if let Some(blocks) = at(cv, &["spec", "clusterNetwork", path, "cidrBlocks"]) {
                network.insert(key.into(), blocks.clone());
            }
        }
        if !network.is_empty() {
            bc["network"] = Value::Object(network);
        }
        bc
    }

    /// The labels the controller sets on what it makes for the Cluster, and `extra`.
    fn labels(&self, extra: &[(&str, &str)]) -> Map<String, Value> {
        let mut l = Map::new();
        l.insert(CLUSTER_NAME_LABEL.into(), json!(self.cluster.name()));
        l.insert(OWNED_LABEL.into(), json!(""));
        for (k, v) in extra {
            l.insert((*k).into(), json!(v));
        }
        l
    }

    /// The items of the infrastructure cluster, the control plane and its machine template
    /// (with `builtin.controlPlane` and the control plane's overrides), and the control plane's
    /// topology metadata.
    fn control_plane_items(
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
    fn workers(
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
                    shown(&class, 60),
                    plan.class_title
                ),
            );
            return None;
        };
        let bt = self.template(&b, "bootstrap template");
        let it = self.template(&inf, "infrastructure machine template");
        let (Some(bt), Some(it)) = (bt, it) else {
            return None;
        };
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
            class_value: wc.value.clone(),
            pool,
        };
        Some((worker, bootstrap, infra))
    }

    /// The Cluster with its references, and the objects made from the patched templates of the
    /// infrastructure cluster and the control plane; the workers take their patched templates.
    fn objects(
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
                    infra_cluster = Some(o);
                }
                Role::ControlPlane => {
                    let mut l = cp_meta.labels.clone();
                    l.extend(self.labels(&[]));
                    let mut o =
                        object_from_template(cluster, &item.template, &names.cp, &plan.ns, l);
                    o.patched = patched_in_object(&item.patched);
                    cp = Some(o);
                }
                Role::ControlPlaneMachine => {
                    let name = names.cp_machine.clone().unwrap_or_default();
                    let mut o =
                        template_copy(cluster, &item.template, &name, &plan.ns, self.labels(&[]));
                    o.patched = item.patched;
                    cp_machine = Some(o);
                }
                Role::Deployment(w, bootstrap) | Role::Pool(w, bootstrap) => {
                    if let Some(worker) = workers.get_mut(w) {
                        if bootstrap {
                            worker.bootstrap = item.template;
                            worker.bootstrap_patched = item.patched;
                        } else {
                            worker.infra = item.template;
                            worker.infra_patched = item.patched;
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

    /// The Cluster's API version (v1beta2 when it says none).
    fn cluster_api(&self) -> &'a str {
        str_at(&self.cluster.value, &["apiVersion"]).unwrap_or("cluster.x-k8s.io/v1beta2")
    }

    /// A worker's bootstrap and infrastructure objects and its MachineDeployment or
    /// MachinePool.
    fn worker_objects(&self, plan: &Plan, w: &Worker) -> [Object; 3] {
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
            (b, i)
        } else {
            let mut b = template_copy(cluster, &w.bootstrap, &w.bootstrap_name, ns, l.clone());
            let mut i = template_copy(cluster, &w.infra, &w.infra_name, ns, l.clone());
            b.patched.clone_from(&w.bootstrap_patched);
            i.patched.clone_from(&w.infra_patched);
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

    fn uid(&mut self) -> String {
        use rand::RngExt as _;
        let b: [u8; 16] = self.rng.random();
        let h: String = b.iter().map(|x| format!("{x:02x}")).collect();
        format!(
            "{}-{}-4{}-{}-{}",
            &h[..8],
            &h[8..12],
            &h[13..16],
            &h[16..20],
            &h[20..32]
        )
    }

    /// The Cluster's variable values, defaulted and validated against the class's
    /// definitions; `None` (with findings) when one is wrong.
    fn variables(
        &mut self,
        spec: &Value,
        topo: &Value,
        class_title: &str,
    ) -> Option<Map<String, Value>> {
        let defs = definitions(spec);
        let mut values: Map<String, Value> = Map::new();
        let mut ok = true;
        for v in topo
            .get("variables")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let name = str_at(v, &["name"]).unwrap_or("");
            if name == "builtin" {
                continue;
            }
            if !defs.iter().any(|d| d.name == name) {
                self.fail(
                    Check::TopologyVariableInvalid,
                    format!(
                        "spec.topology.variables sets {}, which {class_title} does not define",
                        shown(name, 60)
                    ),
                );
                ok = false;
                continue;
            }
            values.insert(
                name.to_owned(),
                v.get("value").cloned().unwrap_or(Value::Null),
            );
        }
        for d in &defs {
            let given = values.remove(&d.name);
            let value = d
                .schema
                .as_ref()
                .and_then(|s| s.default_value(given.clone()))
                .or(given);
            match value {
                None if d.required => {
                    self.fail(
                        Check::TopologyVariableInvalid,
                        format!(
                            "the required variable {} of {class_title} is not set and has no default",
                            shown(&d.name, 60)
                        ),
                    );
                    ok = false;
                }
                None => {}
                Some(value) => {
                    if let Some(schema) = &d.schema {
                        for violation in schema.validate(&value) {
                            self.fail(
                                Check::TopologyVariableInvalid,
                                format!(
                                    "variable {}{}: {}",
                                    shown(&d.name, 60),
                                    field_of(&violation),
                                    violation.problem.describe()
                                ),
                            );
                            ok = false;
                        }
                    }
                    values.insert(d.name.clone(), value);
                }
            }
        }
        ok.then_some(values)
    }

    /// A control plane's or worker's `variables.overrides`, defaulted and validated.
    fn overrides(&mut self, topo: &Value, defs: &[Definition], what: &str) -> Map<String, Value> {
        let mut out = Map::new();
        for v in topo
            .pointer("/variables/overrides")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let name = str_at(v, &["name"]).unwrap_or("");
            let Some(d) = defs.iter().find(|d| d.name == name) else {
                self.fail(
                    Check::TopologyVariableInvalid,
                    format!(
                        "the {what} overrides variable {}, which the ClusterClass does not define",
                        shown(name, 60)
                    ),
                );
                continue;
            };
            let given = v.get("value").cloned().unwrap_or(Value::Null);
            let value = d
                .schema
                .as_ref()
                .and_then(|s| s.default_value(Some(given.clone())))
                .unwrap_or(given);
            if let Some(schema) = &d.schema {
                for violation in schema.validate(&value) {
                    self.fail(
                        Check::TopologyVariableInvalid,
                        format!(
                            "the {what} override of variable {}{}: {}",
                            shown(name, 60),
                            field_of(&violation),
                            violation.problem.describe()
                        ),
                    );
                }
            }
            out.insert(name.to_owned(), value);
        }
        out
    }

    /// One patch on every item; `false` (with a finding) when it fails.
    fn apply_patch(
        &mut self,
        p: &Value,
        class_title: &str,
        globals: &Map<String, Value>,
        items: &mut [Item],
    ) -> bool {
        let patch_name = str_at(p, &["name"]).unwrap_or("").to_owned();
        let enabled_if = str_at(p, &["enabledIf"]).unwrap_or("");
        let defs: Vec<&Value> = p
            .get("definitions")
            .and_then(Value::as_array)
            .map(|d| d.iter().collect())
            .unwrap_or_default();
        for item in items.iter_mut() {
            let matching: Vec<&&Value> = defs
                .iter()
                .filter(|d| selects(d.get("selector").unwrap_or(&Value::Null), item))
                .collect();
            if matching.is_empty() {
                continue;
            }
            let vars = merge(globals, &item.vars);
            let fail = |this: &mut Self, what: String| {
                this.fail(
                    Check::TopologyExpansionFails,
                    format!(
                        "patch {} of {class_title} on {}: {what}; the cluster is not expanded",
                        shown(&patch_name, 60),
                        item.title
                    ),
                );
                false
            };
            if !enabled_if.is_empty() {
                match template_value(enabled_if, &vars) {
                    Ok(Value::Bool(true)) => {}
                    Ok(_) => continue,
                    Err(e) => return fail(self, format!("enabledIf fails: {e}")),
                }
            }
            for d in matching {
                let mut ops = Vec::new();
                for (j, jp) in d
                    .get("jsonPatches")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .enumerate()
                {
                    let op = str_at(jp, &["op"]).unwrap_or("").to_owned();
                    let path = str_at(jp, &["path"]).unwrap_or("").to_owned();
                    let value = if op == "add" || op == "replace" {
                        match patch_value(jp, &vars) {
                            Ok(v) => Some(v),
                            Err(e) => {
                                return fail(
                                    self,
                                    format!("jsonPatches[{j}] ({op} {}): {e}", shown(&path, 80)),
                                );
                            }
                        }
                    } else {
                        None
                    };
                    ops.push(patch::Op { op, path, value });
                }
                let before = item.template.clone();
                if let Err(e) = patch::apply(&mut item.template, &ops) {
                    return fail(self, e.what);
                }
                item.patched.extend(ops.iter().map(|op| Patched {
                    path: patch::tokens(&op.path).unwrap_or_default(),
                    patch: patch_name.clone(),
                    class: class_title.to_owned(),
                }));
                // Only spec, labels and annotations of a patched template are kept.
                let mut kept = before;
                if let (Value::Object(k), Value::Object(patched)) = (&mut kept, &item.template) {
                    match patched.get("spec") {
                        Some(s) => {
                            k.insert("spec".into(), s.clone());
                        }
                        None => {
                            k.shift_remove("spec");
                        }
                    }
                    for key in ["labels", "annotations"] {
                        let new = patched.get("metadata").and_then(|m| m.get(key)).cloned();
                        if let Some(Value::Object(meta)) = k.get_mut("metadata") {
                            match new {
                                Some(v) => {
                                    meta.insert(key.into(), v);
                                }
                                None => {
                                    meta.shift_remove(key);
                                }
                            }
                        }
                    }
                }
                item.template = kept;
            }
        }
        true
    }
}

/// What the expansion of one Cluster reads: its topology, and the class it names.
struct Plan {
    /// `spec.topology`.
    topo: Value,
    /// The Cluster's namespace.
    ns: String,
    /// `ClusterClass namespace/name`, for messages.
    class_title: String,
    /// The class's `spec`.
    spec: Value,
    class_name: String,
    class_ns: String,
    /// `spec.topology.version`.
    version: String,
}

/// The class's templates of the infrastructure cluster and the control plane.
struct Templates<'a> {
    infra: &'a Object,
    cp: &'a Object,
    cp_machine: Option<&'a Object>,
}

/// The names of the objects made for the infrastructure cluster and the control plane.
struct Names {
    infra: String,
    cp: String,
    cp_machine: Option<String>,
}

/// The control plane topology's replicas and metadata (merged with the class's).
struct ControlPlaneMeta {
    replicas: Option<Value>,
    labels: Map<String, Value>,
    annotations: Map<String, Value>,
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

/// A MachineDeployment or MachinePool topology, with its templates once patched.
struct Worker {
    topology_name: String,
    name: String,
    bootstrap_name: String,
    infra_name: String,
    topo: Value,
    bootstrap: Value,
    infra: Value,
    bootstrap_patched: Vec<Patched>,
    infra_patched: Vec<Patched>,
    class_value: Value,
    pool: bool,
}

impl Item {
    /// The item of a template, not patched yet.
    fn new(role: Role, template: &Object, vars: Map<String, Value>) -> Item {
        Item {
            role,
            template: template.value.clone(),
            vars,
            title: template.title(),
            patched: Vec::new(),
        }
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

/// The patches of a class, or the refusal of the first `external` one (served by a runtime
/// extension, which cannot run offline).
fn refuse_external(plan: &Plan) -> Result<Vec<Value>, Unexpandable> {
    let patches: Vec<Value> = plan
        .spec
        .get("patches")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    for p in &patches {
        let has_definitions = p
            .get("definitions")
            .and_then(Value::as_array)
            .is_some_and(|d| !d.is_empty());
        if !has_definitions && p.get("external").is_some() {
            return Err(Unexpandable {
                patch: shown(str_at(p, &["name"]).unwrap_or(""), 80),
                class: plan.class_title.clone(),
            });
        }
    }
    Ok(patches)
}

/// One variable definition of a class.
struct Definition {
    name: String,
    required: bool,
    schema: Option<VariableSchema>,
}

fn definitions(spec: &Value) -> Vec<Definition> {
    spec.get("variables")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|v| Definition {
            name: str_at(v, &["name"]).unwrap_or("").to_owned(),
            required: v.get("required").and_then(Value::as_bool).unwrap_or(false),
            schema: v
                .pointer("/schema/openAPIV3Schema")
                .and_then(|s| VariableSchema::compile(s).ok()),
        })
        .collect()
}

/// Whether a patch definition's selector picks `item` (`matchesSelector`).
fn selects(selector: &Value, item: &Item) -> bool {
    let s = |k: &str| str_at(selector, &[k]).unwrap_or("");
    if s("apiVersion") != str_at(&item.template, &["apiVersion"]).unwrap_or("")
        || s("kind") != str_at(&item.template, &["kind"]).unwrap_or("")
    {
        return false;
    }
    let r = selector.get("matchResources").unwrap_or(&Value::Null);
    let flag = |k: &str| r.get(k).and_then(Value::as_bool).unwrap_or(false);
    let names_match = |key: &str, class: &str| {
        r.pointer(&format!("/{key}/names"))
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .any(|n| {
                n == "*"
                    || n == class
                    || n.strip_prefix('*').is_some_and(|s| class.ends_with(s))
                    || n.strip_suffix('*').is_some_and(|p| class.starts_with(p))
            })
    };
    let class = || {
        item.vars
            .get("builtin")
            .and_then(|b| b.get("machineDeployment").or_else(|| b.get("machinePool")))
            .and_then(|m| m.get("class"))
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned()
    };
    match item.role {
        Role::InfrastructureCluster => flag("infrastructureCluster"),
        Role::ControlPlane | Role::ControlPlaneMachine => flag("controlPlane"),
        Role::Deployment(..) => names_match("machineDeploymentClass", &class()),
        Role::Pool(..) => names_match("machinePoolClass", &class()),
    }
}

/// Global and item variables as `MergeVariableMaps` merges them: `builtin` key by key, the
/// item's value of any other variable over the global one.
fn merge(globals: &Map<String, Value>, item: &Map<String, Value>) -> Value {
    let mut out = globals.clone();
    for (k, v) in item {
        if k == "builtin" {
            let b = out.entry("builtin").or_insert_with(|| json!({}));
            if let (Value::Object(b), Value::Object(v)) = (b, v) {
                for (k2, v2) in v {
                    b.insert(k2.clone(), v2.clone());
                }
            }
        } else {
            out.insert(k.clone(), v.clone());
        }
    }
    Value::Object(out)
}

/// A template's output read as YAML (sigs.k8s.io/yaml), as `renderValueTemplate` does.
///
/// A template's error may quote what it was given (`fail`'s message, a value it cannot range
/// over): every string of the variables is hidden in it, as a variable may hold a secret.
fn template_value(template: &str, vars: &Value) -> Result<Value, String> {
    let text =
        gotemplate::render(template, vars).map_err(|e| without_values(&e.to_string(), vars))?;
    crate::codec::yaml11::first_document(&text)
        .map(|v| v.unwrap_or(Value::Null))
        .map_err(|e| without_values(&format!("its output is not YAML ({e})"), vars))
}

/// `text` with every string of `vars` (of 4 characters or more) replaced by `<value>`.
fn without_values(text: &str, vars: &Value) -> String {
    fn collect(v: &Value, out: &mut crate::secrets::Redactor, depth: usize) {
        match v {
            Value::String(s) => out.add(&crate::secrets::SecretValue::new(s.as_str())),
            Value::Array(items) if depth < 64 => {
                items.iter().for_each(|i| collect(i, out, depth + 1));
            }
            Value::Object(map) if depth < 64 => {
                map.values().for_each(|i| collect(i, out, depth + 1));
            }
            _ => {}
        }
    }
    let mut known = crate::secrets::Redactor::with_placeholder("<value>");
    collect(vars, &mut known, 0);
    known.redact(text)
}

/// The value of one JSON patch (`calculateValue`).
fn patch_value(jp: &Value, vars: &Value) -> Result<Value, String> {
    let value = jp.get("value");
    let from = jp.get("valueFrom");
    match (value, from) {
        (Some(v), None) => Ok(v.clone()),
        (None, None) => Err("neither value nor valueFrom is set".into()),
        (Some(_), Some(_)) => Err("both value and valueFrom are set".into()),
        (None, Some(f)) => {
            let variable = str_at(f, &["variable"]).unwrap_or("");
            let template = str_at(f, &["template"]).unwrap_or("");
            match (variable.is_empty(), template.is_empty()) {
                (false, true) => variable_value(vars, variable),
                (true, false) => template_value(template, vars),
                (true, true) => Err("valueFrom sets neither variable nor template".into()),
                (false, false) => Err("valueFrom sets both variable and template".into()),
            }
        }
    }
}

/// A dotted variable path (`a.b[0].c`) in the variables (`GetVariableValue`).
fn variable_value(vars: &Value, path: &str) -> Result<Value, String> {
    let mut here = vars;
    for (i, segment) in path.split('.').enumerate() {
        let (key, index) = match (segment.find('['), segment.find(']')) {
            (None, None) => (segment, None),
            (Some(l), Some(r)) if l < r => {
                let n: usize = segment[l + 1..r].parse().map_err(|_| {
                    format!("variable {} has an invalid array index", shown(path, 80))
                })?;
                (&segment[..l], Some(n))
            }
            _ => return Err(format!("variable {} has invalid syntax", shown(path, 80))),
        };
        here = here.get(key).ok_or_else(|| {
            if i == 0 {
                format!("variable {} does not exist", shown(key, 60))
            } else {
                format!(
                    "variable {} does not exist: it has no {}",
                    shown(path, 80),
                    shown(key, 60)
                )
            }
        })?;
        if let Some(n) = index {
            let items = here.as_array().ok_or_else(|| {
                format!(
                    "variable {}: {} is not an array",
                    shown(path, 80),
                    shown(key, 60)
                )
            })?;
            here = items.get(n).ok_or_else(|| {
                format!("variable {}: the array has no index {n}", shown(path, 80))
            })?;
        }
    }
    Ok(here.clone())
}

/// `metadata.labels`/`annotations` at `path`, when either is set.
fn metadata_of(value: &Value, path: &[&str]) -> Option<Value> {
    let m = at(value, path)?;
    let labels = m.get("labels").cloned();
    let annotations = m.get("annotations").cloned();
    if labels.is_none() && annotations.is_none() {
        return None;
    }
    let mut out = json!({});
    if let Some(l) = labels {
        out["labels"] = l;
    }
    if let Some(a) = annotations {
        out["annotations"] = a;
    }
    Some(out)
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

fn merged_worker_metadata(topo: &Value, class: &Value, key: &str) -> Map<String, Value> {
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
    }
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

/// The largest char boundary of `s` at or below `max`.
fn char_floor(s: &str, max: usize) -> usize {
    let mut i = max.min(s.len());
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// `.field.path` of a violation inside a variable's value, `""` at the value itself.
fn field_of(v: &crate::apischema::Violation) -> String {
    if v.path.is_empty() {
        String::new()
    } else {
        format!(".{}", v.pointer())
    }
}
