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
//!
//! The steps ([`Expander`]'s `run`, here): the class and its templates, and the names
//! (`naming.rs`); the variables, defaulted and validated, and the builtins (`variables.rs`);
//! the templates the patches apply to (`items.rs`); the patches (`inline.rs`, with `patch.rs`
//! for JSON patches); the objects made of the patched templates (`objects.rs`).

pub(crate) mod class;
mod inline;
mod items;
mod naming;
mod objects;
mod patch;
mod variables;

use rand::SeedableRng as _;
use rand::rngs::StdRng;
use rke2_payload::{Check, Finding};
use serde_json::{Map, Value, json};

use crate::manifests::{Manifests, Object, Patched};

/// The label Cluster API puts on every object it makes for a cluster.
const CLUSTER_NAME_LABEL: &str = "cluster.x-k8s.io/cluster-name";
const OWNED_LABEL: &str = "topology.cluster.x-k8s.io/owned";
const DEPLOYMENT_LABEL: &str = "topology.cluster.x-k8s.io/deployment-name";
const POOL_LABEL: &str = "topology.cluster.x-k8s.io/pool-name";

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
    rke2_payload::terminal_safe(&shorten(s, max)).into_owned()
}

/// `s` cut to at most `max` bytes on a char boundary, with `…` when cut.
fn shorten(s: &str, max: usize) -> String {
    if s.len() <= max {
        return s.to_owned();
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &s[..end])
}

/// Expands every topology Cluster of `m`. `seed` makes the generated names and uid the
/// same on every run.
///
/// # Errors
/// [`Unexpandable`] when a ClusterClass a Cluster uses has an external patch.
pub(crate) fn expand(m: &Manifests, seed: Option<u64>) -> Result<Expansion, Unexpandable> {
    let mut rng = rng(seed);
    let mut out = Expansion::default();
    for (i, cluster) in m.objects.iter().enumerate() {
        if !is_topology_cluster(cluster) {
            continue;
        }
        let mut e = Expander {
            m,
            cluster,
            subject: cluster.title(),
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

/// The random source of the generated names and uids: seeded, or the system's.
pub(crate) fn rng(seed: Option<u64>) -> StdRng {
    match seed {
        Some(s) => StdRng::seed_from_u64(s ^ 0x746f_706f_6c6f_6779),
        None => {
            use rand::TryRng as _;
            let mut bytes = [0u8; 32];
            // Without the system's randomness the names are still valid, only predictable.
            let _ = rand::rngs::SysRng.try_fill_bytes(&mut bytes);
            StdRng::from_seed(bytes)
        }
    }
}

/// A template a patch may change, and what it is for.
struct Item {
    /// `infrastructureCluster`, `controlPlane`, `controlPlaneMachine`, `md`, `mp`.
    role: Role,
    template: Value,
    /// The variables only this item sees (builtins and overrides).
    vars: Map<String, Value>,
    title: String,
    /// The template as the input writes it.
    written: Object,
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
    /// What the findings are about: the Cluster's title, or for a class expanded on its own,
    /// the class's.
    subject: String,
    rng: &'a mut StdRng,
    findings: Vec<Finding>,
}

impl<'a> Expander<'a> {
    fn fail(&mut self, check: Check, what: String) {
        self.fail_at(check, what, None);
    }

    /// A finding placed at `site` (where its author wrote what is wrong), or, without one, at
    /// the object its message names.
    fn fail_at(&mut self, check: Check, what: String, site: Option<rke2_payload::ManifestSite>) {
        let finding = Finding::new(check, format!("{}: {what}", self.subject));
        self.findings.push(match site {
            Some(site) => finding.in_manifest(site),
            None => finding,
        });
    }

    /// The expansion of the Cluster: its class and templates, the names and builtins, the
    /// patches in order, then the objects. `None` when a finding says why it stops.
    fn run(&mut self) -> Result<Option<(Object, Vec<Object>)>, Unexpandable> {
        let Some(plan) = self.plan() else {
            return Ok(None);
        };
        // External patches first: they are a refusal, whatever else is wrong.
        let patches = inline::refuse_external(&plan)?;
        // The variables: the Cluster's values, defaulted and validated.
        let Some(globals) = self.variables(&plan.spec, &plan.topo, &plan.class_title) else {
            return Ok(None);
        };
        let definitions = variables::definitions(&plan.spec);
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
        for (i, p) in patches.iter().enumerate() {
            if !self.apply_patch(p, i, &plan, &global_vars, &mut items) {
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
}

/// What the expansion of one Cluster reads: its topology, and the class it names.
struct Plan {
    /// `spec.topology`.
    topo: Value,
    /// The Cluster's namespace.
    ns: String,
    /// `ClusterClass namespace/name`, for messages.
    class_title: String,
    /// The class, as the input writes it (where its patches are).
    class: Object,
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
    /// The class's bootstrap and infrastructure templates, as the input writes them.
    bootstrap_written: Option<Object>,
    infra_written: Option<Object>,
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
            written: template.clone(),
            patched: Vec::new(),
        }
    }
}
