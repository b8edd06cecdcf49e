//! One Machine's bootstrap Secret, step by step as CAPRKE2 makes it: the refusals, the CA key
//! pairs of the first control plane, `config.yaml` and the files, the user data in its format,
//! the Secret.

use rand::SeedableRng as _;
use rand::rngs::StdRng;
use rke2_payload::{Check, Finding, Format, Role};
use serde_json::Value;

use super::cluster::ClusterContext;
use super::jobs::Job;
use super::resolve::Resolver;
use super::rke2::{self, File};
use super::{
    CA_PURPOSES, KeyError, LEGACY_ANNOTATION, PreviewSecret, RenderError, Renderer, SEEDED_NOW,
    pki, userdata,
};
use crate::manifests::{Manifests, Object, Ref, flag, string, strings};

static NULL: Value = Value::Null;

/// The CA pairs of one render: "now" for their validity, and the pairs made so far (at most
/// four, shared by the clusters of the input).
pub(super) struct Keys {
    pub(super) now: i64,
    pub(super) cas: Vec<(String, String)>,
}

/// What rendering one Machine gave.
enum Outcome {
    Secret(Box<PreviewSecret>),
    /// CAPRKE2 writes no Secret: why, about the object (not a Secret of the preview).
    Refused(Vec<Finding>),
}

impl<'m> Renderer<'m> {
    /// Renders the Secrets of one cluster into the preview.
    pub(super) fn render_cluster(&mut self, ctx: &ClusterContext<'m>) -> Result<(), RenderError> {
        for job in self.jobs(ctx) {
            match Machine::new(ctx, &job).render(self)? {
                Outcome::Secret(secret) => self.preview.secrets.push(*secret),
                Outcome::Refused(findings) => self.preview.findings.extend(findings),
            }
        }
        Ok(())
    }
}

/// The render of one Machine: its job, and what it has generated and found so far.
struct Machine<'a, 'm> {
    ctx: &'a ClusterContext<'m>,
    job: &'a Job<'m>,
    /// The title of the object the Secret is made from.
    owner: String,
    /// `spec.agentConfig`.
    agent: &'m Value,
    generated: Vec<String>,
    findings: Vec<Finding>,
}

impl<'a, 'm> Machine<'a, 'm> {
    fn new(ctx: &'a ClusterContext<'m>, job: &'a Job<'m>) -> Self {
        Machine {
            ctx,
            job,
            owner: job.source.title(),
            agent: job.spec.get("agentConfig").unwrap_or(&NULL),
            generated: ctx.generated.clone(),
            findings: ctx.findings.clone(),
        }
    }

    fn control_plane(&self) -> bool {
        self.job.role != Role::Agent
    }

    fn render(mut self, r: &mut Renderer<'m>) -> Result<Outcome, RenderError> {
        if let Some(refusal) = self.refusal() {
            return Ok(Outcome::Refused(vec![refusal]));
        }
        // CA key pairs first, so that the generated values come in one order for a seed.
        let ca_files = self.ca_files(r)?;
        let mut resolver = Resolver {
            manifests: r.manifests,
            placeholder_bytes: r.options.placeholder_bytes,
            findings: Vec::new(),
            generated: Vec::new(),
        };
        let files = self.files(&mut resolver, ca_files);
        let base = self.base_user_data(files);
        self.findings.append(&mut resolver.findings);
        self.generated.append(&mut resolver.generated);
        let (format, userdata) = if string(self.agent, &["format"]) == "ignition" {
            match self.ignition(base) {
                Some(bytes) => (Format::Ignition, bytes),
                None => return Ok(Outcome::Refused(self.findings)),
            }
        } else {
            (Format::CloudConfig, self.cloud_config(base))
        };
        Ok(Outcome::Secret(Box::new(self.secret(
            r.manifests,
            format,
            userdata,
        ))))
    }

    /// Why CAPRKE2 writes nothing for this Machine, if it does not.
    fn refusal(&self) -> Option<Finding> {
        let (owner, version) = (&self.owner, &self.job.version);
        // CAPRKE2 finds no version to install (`GetDesiredVersion`) and writes nothing.
        if version.is_empty() {
            return Some(Finding::new(
                Check::ManifestRenderFails,
                format!(
                    "{owner}: {} is required and not set: the API server rejects the object (a required field of the CRD), and CAPRKE2 writes no bootstrap data without a version",
                    if self.job.source.kind() == "RKE2ControlPlane" {
                        "spec.version"
                    } else {
                        "the Machine template's spec.version (or the control plane's)"
                    }
                ),
            ));
        }
        let profile = string(self.agent, &["cisProfile"]);
        if !profile.is_empty() && !cis_profile_fits(&profile, version) {
            return Some(Finding::new(
                Check::ManifestRenderFails,
                format!(
                    "{owner}: CAPRKE2 cannot render this Machine's bootstrap data: CIS profile {} is not supported for version {} (cis and cis-1.23 need v1.25 or later, cis-1.5 and cis-1.6 an earlier one)",
                    rke2_payload::terminal_safe(&profile),
                    rke2_payload::terminal_safe(version)
                ),
            ));
        }
        None
    }

    /// The first control plane's CA certificates and keys: the cluster's stored ones, else
    /// the pairs of this render (made once, shared by its clusters).
    fn ca_files(&mut self, r: &mut Renderer<'m>) -> Result<Vec<File>, RenderError> {
        let mut ca_files = Vec::new();
        if self.job.role != Role::Init {
            return Ok(ca_files);
        }
        let c = &self.ctx.c;
        let legacy = c.control_plane.is_some_and(|rcp| {
            rcp.get(&["metadata", "annotations", LEGACY_ANNOTATION])
                .is_some()
        });
        let purposes = if legacy {
            &CA_PURPOSES[..2]
        } else {
            &CA_PURPOSES[..]
        };
        let (mut made, mut shared) = (0, 0);
        for (i, (purpose, cert_path, key_path)) in purposes.iter().enumerate() {
            let secret = Ref {
                name: format!("{}-{purpose}", c.name),
                namespace: c.namespace.clone(),
            };
            let stored = (
                r.manifests.secret_key(&secret, "tls.crt"),
                r.manifests.secret_key(&secret, "tls.key"),
            );
            let (cert, key) = match stored {
                (Ok(Some(cert)), Ok(key)) => (
                    String::from_utf8_lossy(&cert).into_owned(),
                    key.map(|k| String::from_utf8_lossy(&k).into_owned())
                        .unwrap_or_default(),
                ),
                _ if r.options.reuse_keys => reused_ca()?,
                _ => match r.keys.cas.get(i) {
                    Some(pair) => {
                        shared += 1;
                        pair.clone()
                    }
                    None => {
                        made += 1;
                        let ca = pki::new_ca(&mut r.rng, r.keys.now)?;
                        let pair = (ca.cert_pem, ca.key_pem.to_string());
                        r.keys.cas.push(pair.clone());
                        pair
                    }
                },
            };
            ca_files.push(File::new(cert_path, cert, "0640"));
            if !key.is_empty() {
                ca_files.push(File::new(key_path, key, "0600"));
            }
        }
        if made > 0 {
            self.generated
                .push(format!("{made} CA key pairs (RSA-2048, CN=kubernetes)"));
        }
        if shared > 0 {
            self.generated.push(format!(
                "{shared} CA key pairs (RSA-2048, CN=kubernetes, the same as another cluster's of this preview)"
            ));
        }
        Ok(ca_files)
    }

    /// `config.yaml` (the agent keys, then a control plane's server keys) and the files its
    /// keys bring.
    fn config(&self, resolver: &mut Resolver<'_>) -> (String, Vec<File>) {
        let ns = self.job.source.namespace();
        let rcp = self.ctx.c.control_plane;
        let rcp_server_config = rcp
            .and_then(|r| r.get(&["spec", "serverConfig"]))
            .unwrap_or(&NULL);
        let rcp_ns = rcp.map_or(ns, |r| r.namespace());
        let server = if self.job.role == Role::Init {
            None
        } else {
            self.ctx.server_url()
        };
        let agent_input = rke2::AgentInput {
            agent: self.agent,
            namespace: ns,
            server: server.as_deref(),
            token: &self.ctx.token,
            cloud_provider_name: string(rcp_server_config, &["cloudProviderName"]),
            cloud_provider_config_map: Ref::at(
                rcp_server_config,
                &["cloudProviderConfigMap"],
                rcp_ns,
            ),
            owner: &self.owner,
        };
        let mut config_files = Vec::new();
        let (mut pairs, agent_files) = rke2::agent_config(&agent_input, resolver);
        if self.control_plane() {
            let cluster_value = self.ctx.cluster_value();
            let server_input = rke2::ServerInput {
                server_config: rcp_server_config,
                namespace: rcp_ns,
                cluster: &cluster_value,
                endpoint_host: &self.ctx.endpoint_host,
                owner: &self.owner,
            };
            let (server_pairs, server_files) = rke2::server_config(&server_input, resolver);
            pairs.extend(server_pairs);
            config_files.extend(server_files);
        }
        config_files.extend(agent_files);
        (rke2::config_yaml(pairs), config_files)
    }

    /// Every file of the user data, in CAPRKE2's order: those `config.yaml` brings,
    /// `registries.yaml` and its files, `spec.files`, the control plane's manifests, the CA
    /// pairs, `config.yaml`.
    fn files(&self, resolver: &mut Resolver<'_>, ca_files: Vec<File>) -> Vec<File> {
        let spec = self.job.spec;
        let ns = self.job.source.namespace();
        let owner = &self.owner;
        let (config_yaml, mut files) = self.config(resolver);
        let (registries_yaml, registry_files) = rke2::registries(spec, ns, owner, resolver);
        files.extend(registry_files);
        files.push(File::new(rke2::REGISTRIES_PATH, registries_yaml, "0640"));
        for f in spec
            .get("files")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            files.push(user_file(f, ns, owner, resolver));
        }
        if self.control_plane()
            && let Some(rcp) = self.ctx.c.control_plane
            && let Some(r) = Ref::at(
                &rcp.value,
                &["spec", "manifestsConfigMapReference"],
                rcp.namespace(),
            )
        {
            for (key, text) in resolver.manifests_config_map(owner, &r) {
                files.push(File {
                    path: format!("/var/lib/rancher/rke2/server/manifests/{key}"),
                    owner: String::new(),
                    permissions: String::new(),
                    encoding: String::new(),
                    content: text,
                });
            }
        }
        files.extend(ca_files);
        files.push(File::new(rke2::CONFIG_PATH, config_yaml, "0640"));
        files
    }

    /// What both formats are made from.
    fn base_user_data(&self, files: Vec<File>) -> userdata::BaseUserData {
        let (spec, agent) = (self.job.spec, self.agent);
        let mut arbitrary: Vec<(String, String)> =
            crate::manifests::sorted_map(agent, &["additionalUserData", "data"])
                .into_iter()
                .filter(|(k, _)| !crate::manifest_checks::IGNORED_KEYS.contains(&k.as_str()))
                .map(|(k, v)| (k, userdata::correct_arbitrary(&v)))
                .collect();
        arbitrary.sort();
        userdata::BaseUserData {
            control_plane: self.control_plane(),
            files,
            ntp_servers: strings(agent, &["ntp", "servers"]),
            arbitrary,
            additional: String::new(),
            pre: strings(spec, &["preRKE2Commands"]),
            post: strings(spec, &["postRKE2Commands"]),
            version: self.job.version.clone(),
            air_gapped: flag(agent, &["airGapped"]),
            checksum: string(agent, &["airGappedChecksum"]),
            cis: !string(agent, &["cisProfile"]).is_empty(),
        }
    }

    /// A finding that CAPRKE2 cannot render the Machine's bootstrap data, and why.
    fn refuse(&mut self, why: String) {
        self.findings.push(Finding::new(
            Check::ManifestRenderFails,
            format!(
                "{}: CAPRKE2 cannot render this Machine's bootstrap data: {why}",
                self.owner
            ),
        ));
    }

    /// The cloud-config, with `additionalUserData.config` merged where it parses.
    fn cloud_config(&mut self, mut base: userdata::BaseUserData) -> Vec<u8> {
        let additional = string(self.agent, &["additionalUserData", "config"]);
        if !additional.is_empty() {
            match userdata::cleanup_additional_cloud_config(&additional) {
                Ok(text) => base.additional = text,
                Err(why) => self.refuse(format!(
                    "spec.agentConfig.additionalUserData.config does not parse as YAML ({why})"
                )),
            }
        }
        userdata::cloud_config(&base).into_bytes()
    }

    /// The Ignition config, with `additionalUserData.config` (Butane) merged; `None` when
    /// CAPRKE2 refuses to make it.
    fn ignition(&mut self, base: userdata::BaseUserData) -> Option<Vec<u8>> {
        let additional = string(self.agent, &["additionalUserData", "config"]);
        let flatcar = additional.contains("variant: flatcar");
        let strict = flag(self.agent, &["additionalUserData", "strict"]);
        let butane = (!additional.trim().is_empty()).then_some((additional.as_str(), strict));
        match userdata::ignition(&base, flatcar, butane) {
            Ok((bytes, left_out)) => {
                if !left_out.is_empty() {
                    self.findings.push(Finding::new(
                        Check::ManifestButaneNotMerged,
                        format!(
                            "{}: spec.agentConfig.additionalUserData.config sets {}, which the preview does not translate from Butane; CAPRKE2 merges them, so the real payload has them on top",
                            self.owner,
                            left_out
                                .iter()
                                .map(|s| rke2_payload::terminal_safe(s).into_owned())
                                .collect::<Vec<_>>()
                                .join(", ")
                        ),
                    ));
                }
                Some(bytes)
            }
            Err(why) => {
                self.refuse(why.0);
                None
            }
        }
    }

    /// The Secret of the user data, `gzipUserData` applied.
    fn secret(self, m: &Manifests, format: Format, userdata: Vec<u8>) -> PreviewSecret {
        let job = self.job;
        let gzip = job
            .spec
            .get("gzipUserData")
            .and_then(Value::as_bool)
            .unwrap_or(false);
        let value = rke2_payload::compress(&userdata, format, gzip);
        let mut findings = self.findings;
        if let Some(machine) = job.machine {
            let cluster = self.ctx.c.cluster;
            findings.extend(preconditions(
                m,
                machine,
                cluster,
                format,
                gzip,
                &self.owner,
            ));
        }
        PreviewSecret {
            name: job.name.clone(),
            namespace: job.source.namespace().to_owned(),
            cluster: self.ctx.c.name.clone(),
            role: job.role,
            format,
            gzip,
            userdata,
            value,
            source: format!(
                "{} in {}",
                self.owner,
                rke2_payload::terminal_safe(&job.source.source)
            ),
            generated: self.generated,
            findings,
            site: Some(job.source.site()),
            // The template it was made from (a topology's: the class's), then its Cluster.
            suppressions: job
                .source
                .site()
                .ignores
                .iter()
                .flat_map(|i| i.suppressions.clone())
                .chain(
                    self.ctx
                        .c
                        .cluster
                        .and_then(Object::ignores)
                        .into_iter()
                        .flat_map(|i| i.suppressions),
                )
                .collect(),
            delivery: job.machine.and_then(|machine| {
                delivery(m, machine, self.ctx.c.cluster, format == Format::Ignition)
            }),
        }
    }
}

/// The one CA pair of `RenderOptions::reuse_keys` (made once per process).
fn reused_ca() -> Result<(String, String), KeyError> {
    static ONE: std::sync::OnceLock<Result<(String, String), KeyError>> =
        std::sync::OnceLock::new();
    ONE.get_or_init(|| {
        pki::new_ca(&mut StdRng::seed_from_u64(0), SEEDED_NOW)
            .map(|ca| (ca.cert_pem, ca.key_pem.to_string()))
    })
    .clone()
}

/// The infrastructure (template) `machine`'s `infrastructureRef` names: its kind, API version
/// (`group/` for a v1beta2 reference, which carries no version), the reference, and the object
/// when the input holds it.
fn infrastructure<'m>(
    m: &'m Manifests,
    machine: &Object,
) -> Option<(String, String, Ref, Option<&'m Object>)> {
    let (field, r) = crate::manifests::INFRASTRUCTURE_REFS
        .iter()
        .find_map(|path| {
            Some((
                machine.get(path)?,
                Ref::at(&machine.value, path, machine.namespace())?,
            ))
        })?;
    let kind = string(field, &["kind"]);
    // v1beta1 references carry apiVersion, v1beta2 ones apiGroup.
    let api = match string(field, &["apiVersion"]) {
        v if !v.is_empty() => v,
        _ => format!("{}/", string(field, &["apiGroup"])),
    };
    let infra = m
        .objects
        .iter()
        .find(|o| o.kind() == kind && o.name() == r.name && o.namespace() == r.namespace);
    Some((kind, api, r, infra))
}

/// The machine spec of an infrastructure object: a template's `spec.template.spec`, else
/// `spec`.
fn machine_spec<'m>(kind: &str, infra: Option<&'m Object>) -> Option<&'m Value> {
    infra.and_then(|o| {
        if kind.ends_with("Template") {
            o.get(&["spec", "template", "spec"])
        } else {
            o.get(&["spec"])
        }
    })
}

/// `provider-refuses-payload`: the preconditions of the machine's infrastructure provider
/// (the library's table) that this payload breaks, judged on the template in the input (or its
/// kind's defaults) and the cluster's infrastructure object when the input holds it.
fn preconditions(
    m: &Manifests,
    machine: &Object,
    cluster: Option<&Object>,
    format: Format,
    gzip: bool,
    owner: &str,
) -> Vec<Finding> {
    let Some((kind, api, _, infra)) = infrastructure(m, machine) else {
        return Vec::new();
    };
    let null = Value::Null;
    let spec = machine_spec(&kind, infra).unwrap_or(&null);
    let cluster_infra = cluster_infrastructure(m, cluster);
    let ignition = format == Format::Ignition;
    // The table names templates (and pools); a Machine's own infrastructure object is its
    // template's kind without the suffix.
    let mut found =
        rke2_payload::payload_preconditions(&kind, &api, spec, cluster_infra, ignition, gzip);
    if found.is_empty() && !kind.ends_with("Template") {
        let template = format!("{kind}Template");
        found = rke2_payload::payload_preconditions(
            &template,
            &api,
            spec,
            cluster_infra,
            ignition,
            gzip,
        );
    }
    found
        .into_iter()
        .map(|p| {
            Finding::new(
                Check::ProviderRefusesPayload,
                format!(
                    "{owner}: {} ({}; {})",
                    p.message,
                    rke2_payload::terminal_safe(&p.field),
                    p.source
                ),
            )
        })
        .collect()
}

/// The infrastructure object `cluster`'s `spec.infrastructureRef` names, when the input holds
/// it, as the library's tables read it.
fn cluster_infrastructure<'m>(
    m: &'m Manifests,
    cluster: Option<&Object>,
) -> Option<rke2_payload::ClusterInfrastructure<'m>> {
    let c = cluster?;
    let r = Ref::at(&c.value, &["spec", "infrastructureRef"], c.namespace())?;
    let kind = string(c.get(&["spec", "infrastructureRef"])?, &["kind"]);
    m.objects
        .iter()
        .find(|o| o.kind() == kind && o.name() == r.name && o.namespace() == r.namespace)
        .map(|o| rke2_payload::ClusterInfrastructure::of(&o.value))
}

/// The path the machine's bootstrap data takes, from the infrastructure (template) that
/// `machine`'s `infrastructureRef` names: read from the template in the input, or, when it is
/// not there, its kind's default path; and from `cluster`'s infrastructure object, where the
/// path depends on it.
fn delivery(
    m: &Manifests,
    machine: &Object,
    cluster: Option<&Object>,
    ignition: bool,
) -> Option<rke2_payload::Delivery> {
    let (kind, api, r, infra) = infrastructure(m, machine)?;
    let null = Value::Null;
    let spec = machine_spec(&kind, infra).unwrap_or(&null);
    let cluster_infra = cluster_infrastructure(m, cluster);
    let found = rke2_payload::delivery_in_cluster(&kind, &api, spec, cluster_infra, ignition)
        .or_else(|| {
            rke2_payload::delivery_in_cluster(
                &format!("{kind}Template"),
                &api,
                spec,
                cluster_infra,
                ignition,
            )
        })?;
    let safe = rke2_payload::terminal_safe;
    let reason = match infra {
        Some(o) => format!("{}: {}", o.title(), found.reason),
        None => format!(
            "{} {r} (not in the input, so its defaults): {}",
            safe(&kind),
            found.reason
        ),
    };
    let mut delivery = found;
    delivery.reason = reason;
    Some(delivery)
}

/// CAPRKE2's check of a CIS profile against the version (`pkg/util` `ProfileCompliant`).
fn cis_profile_fits(profile: &str, version: &str) -> bool {
    let minor = version
        .strip_prefix('v')
        .and_then(|v| v.split_once('.'))
        .and_then(|(major, rest)| {
            Some((
                major.parse::<u32>().ok()?,
                rest.split('.').next()?.parse::<u32>().ok()?,
            ))
        });
    let Some((major, minor)) = minor else {
        return false;
    };
    let at_least_125 = (major, minor) >= (1, 25);
    match profile {
        "cis" | "cis-1.23" => at_least_125,
        "cis-1.5" | "cis-1.6" => !at_least_125,
        _ => false,
    }
}

/// A `spec.files` entry with `contentFrom` resolved.
fn user_file(f: &Value, namespace: &str, owner: &str, resolver: &mut Resolver<'_>) -> File {
    let mut file = File {
        path: string(f, &["path"]),
        owner: string(f, &["owner"]),
        permissions: string(f, &["permissions"]),
        encoding: string(f, &["encoding"]),
        content: string(f, &["content"]),
    };
    let field = "spec.files[].contentFrom";
    if let Some(from) = f.get("contentFrom") {
        if let Some(r) = Ref::at(from, &["secret"], namespace) {
            let key = string(from, &["secret", "key"]);
            file.content = resolver.secret_text(owner, &r, &key, field, 512);
        } else if let Some(r) = Ref::at(from, &["configMap"], namespace) {
            let key = string(from, &["configMap", "key"]);
            file.content = resolver.config_map(owner, &r, &key, field, 512);
        }
    }
    file
}
