//! Which bootstrap Secrets one cluster gets: the first and the joining control planes, a
//! worker per MachineDeployment and MachinePool, and the RKE2Configs of standalone Machines.

use rke2_payload::{Check, Finding, Role};
use serde_json::Value;

use super::cluster::{ClusterContext, cluster_label, control_plane_version, worker_cluster_name};
use super::{Renderer, RoleChoice, push_unique};
use crate::manifests::{Object, Ref, string};

/// The spec of a worker whose bootstrap config is not in the input.
static EMPTY: std::sync::LazyLock<Value> =
    std::sync::LazyLock::new(|| Value::Object(serde_json::Map::new()));

/// The role, the spec (an `RKE2ConfigSpec`), the version, the object it came from and the name
/// of one Secret to render.
pub(super) struct Job<'v> {
    pub(super) role: Role,
    pub(super) spec: &'v Value,
    pub(super) version: String,
    pub(super) source: &'v Object,
    pub(super) name: String,
    /// The object whose `infrastructureRef` says where the machine runs (the control plane,
    /// the MachineDeployment or MachinePool, the Machine of a standalone RKE2Config).
    pub(super) machine: Option<&'v Object>,
}

impl<'m> Renderer<'m> {
    /// The Secrets of the cluster the options ask for, in the order they are rendered (which
    /// is the order the names and keys are drawn in for a seed).
    pub(super) fn jobs(&mut self, ctx: &ClusterContext<'m>) -> Vec<Job<'m>> {
        // A control plane that never makes a Machine (its infrastructure template is not in
        // the input) never initializes, and CAPRKE2 writes no worker's data before it has
        // (`handleClusterNotInitialized`): the cluster gets no Secret at all.
        // Nor does a control plane CAPRKE2's admission webhook refuses
        // (`manifest-webhook-refuses`): it is never created.
        if ctx.c.control_plane.is_some_and(|rcp| {
            crate::manifest_checks::missing_infrastructure_template(self.manifests, rcp).is_some()
                || crate::manifest_checks::webhooks::refuses(rcp)
        }) {
            return Vec::new();
        }
        let mut jobs = self.control_plane_jobs(ctx);
        let role = self.options.role;
        if matches!(role, RoleChoice::All | RoleChoice::Worker) {
            // The RKE2Configs a MachinePool renders (not again on their own).
            let mut pooled: Vec<&Object> = Vec::new();
            jobs.extend(self.worker_jobs(ctx, &mut pooled));
            jobs.extend(self.config_jobs(ctx, &pooled));
        }
        // An RKE2Config the webhook refuses is never created, so it writes no Secret.
        jobs.retain(|job| {
            job.source.kind() != "RKE2Config"
                || !crate::manifest_checks::webhooks::refuses(job.source)
        });
        jobs
    }

    /// The first control plane, and a joining one when there are more replicas.
    fn control_plane_jobs(&mut self, ctx: &ClusterContext<'m>) -> Vec<Job<'m>> {
        let mut jobs = Vec::new();
        let Some(rcp) = ctx.c.control_plane else {
            return jobs;
        };
        let role = self.options.role;
        let spec = rcp.get(&["spec"]).unwrap_or(&EMPTY);
        let version = control_plane_version(rcp);
        let replicas = rcp
            .get(&["spec", "replicas"])
            .and_then(Value::as_i64)
            .unwrap_or(1);
        if matches!(role, RoleChoice::All | RoleChoice::Init) {
            jobs.push(Job {
                role: Role::Init,
                spec,
                version: version.clone(),
                source: rcp,
                name: super::names::control_plane_config(rcp, "init"),
                machine: Some(rcp),
            });
        }
        if role == RoleChoice::Join || (role == RoleChoice::All && replicas > 1) {
            jobs.push(Job {
                role: Role::Server,
                spec,
                version,
                source: rcp,
                name: super::names::control_plane_config(rcp, "join"),
                machine: Some(rcp),
            });
        }
        jobs
    }

    /// A worker per MachineDeployment and MachinePool of the cluster; the RKE2Configs that
    /// MachinePools name go to `pooled`.
    fn worker_jobs(
        &mut self,
        ctx: &ClusterContext<'m>,
        pooled: &mut Vec<&'m Object>,
    ) -> Vec<Job<'m>> {
        let m = self.manifests;
        let mut jobs = Vec::new();
        for w in m.objects.iter().filter(|o| {
            matches!(o.kind(), "MachineDeployment" | "MachinePool")
                && o.namespace() == ctx.c.namespace
                && worker_cluster_name(o) == ctx.c.name
                // Nor a worker Machine without its template.
                && crate::manifest_checks::missing_infrastructure_template(m, o).is_none()
        }) {
            let config_ref = Ref::at(
                &w.value,
                &["spec", "template", "spec", "bootstrap", "configRef"],
                w.namespace(),
            );
            let version = string(&w.value, &["spec", "template", "spec", "version"]);
            // A MachinePool names an RKE2Config itself (its bootstrap Secret bears that name);
            // a MachineDeployment names a template.
            let ref_kind = string(
                &w.value,
                &["spec", "template", "spec", "bootstrap", "configRef", "kind"],
            );
            if ref_kind == "RKE2Config"
                && let Some(config) = config_ref.as_ref().and_then(|r| m.find("RKE2Config", r))
            {
                jobs.push(Job {
                    role: Role::Agent,
                    spec: config.get(&["spec"]).unwrap_or(&EMPTY),
                    version,
                    source: config,
                    name: config.name().to_owned(),
                    machine: Some(w),
                });
                pooled.push(config);
                continue;
            }
            let template = config_ref
                .as_ref()
                .and_then(|r| m.find("RKE2ConfigTemplate", r));
            let (spec, source) = match template {
                Some(t) => (t.get(&["spec", "template", "spec"]).unwrap_or(&EMPTY), t),
                None => {
                    self.note_missing_config(w, &ref_kind, config_ref);
                    (&*EMPTY, w)
                }
            };
            let name = match super::names::worker_config(w, &ctx.c.name) {
                Ok(name) => name,
                Err(why) => {
                    self.note_unnamed(w, &why);
                    continue;
                }
            };
            jobs.push(Job {
                role: Role::Agent,
                spec,
                version,
                source,
                name,
                machine: Some(w),
            });
        }
        jobs
    }

    /// The finding of a worker whose bootstrap config is not in the input.
    fn note_missing_config(&mut self, w: &Object, ref_kind: &str, config_ref: Option<Ref>) {
        let kind = if ref_kind.is_empty() {
            "RKE2ConfigTemplate"
        } else {
            ref_kind
        };
        let what = config_ref.map_or_else(
            || "no bootstrap.configRef".to_owned(),
            |r| {
                format!(
                    "{} {r}, which is not in the input",
                    rke2_payload::terminal_safe(kind)
                )
            },
        );
        push_unique(
            &mut self.preview.findings,
            Finding::new(
                Check::ManifestMissingReference,
                format!(
                    "{}: spec.template.spec.bootstrap.configRef names {what}; its workers are rendered with an empty RKE2Config",
                    w.title()
                ),
            ),
        );
    }

    /// The finding of a worker whose Machine name template does not render: its MachineSet
    /// creates no Machine (Cluster API v1.14.0
    /// `core/reconcilers/machineset/machineset_controller.go:1234`), so no RKE2Config.
    fn note_unnamed(&mut self, w: &Object, why: &str) {
        push_unique(
            &mut self.preview.findings,
            Finding::new(
                Check::ManifestRenderFails,
                format!(
                    "{}: spec.machineNaming.template does not render ({}): its MachineSet creates no Machine, so no bootstrap Secret is written for its workers",
                    w.title(),
                    rke2_payload::terminal_safe(why)
                ),
            ),
        );
    }

    /// The RKE2Configs of the cluster that no MachinePool renders (those of standalone
    /// Machines).
    fn config_jobs(&self, ctx: &ClusterContext<'m>, pooled: &[&'m Object]) -> Vec<Job<'m>> {
        let m = self.manifests;
        let mut jobs = Vec::new();
        for config in m.of_kind("RKE2Config").filter(|o| {
            o.namespace() == ctx.c.namespace
                && cluster_label(o).is_none_or(|c| c == ctx.c.name)
                && !pooled.iter().any(|p| std::ptr::eq(*p, *o))
        }) {
            let control_plane = config
                .get(&["metadata", "labels", "cluster.x-k8s.io/control-plane"])
                .is_some();
            let machine = m.of_kind("Machine").find(|machine| {
                let at = |field: &str| {
                    string(&machine.value, &["spec", "bootstrap", "configRef", field])
                };
                machine.namespace() == config.namespace()
                    && at("name") == config.name()
                    && matches!(at("kind").as_str(), "" | "RKE2Config")
            });
            jobs.push(Job {
                role: if control_plane {
                    Role::Server
                } else {
                    Role::Agent
                },
                spec: config.get(&["spec"]).unwrap_or(&EMPTY),
                // The version of the Machine whose bootstrap.configRef names it (what
                // CAPRKE2 installs), else the control plane's.
                version: machine
                    .map(|machine| string(&machine.value, &["spec", "version"]))
                    .filter(|v| !v.is_empty())
                    .or_else(|| ctx.c.control_plane.map(control_plane_version))
                    .unwrap_or_default(),
                source: config,
                name: config.name().to_owned(),
                machine,
            });
        }
        jobs
    }
}
