//! The clusters of the input and what every Secret of one cluster shares: its token, its
//! control plane endpoint and the join server.

use rand::Rng as _;
use rand::rngs::StdRng;
use rke2_payload::{CLUSTER_NAME_LABEL, Check, Finding};
use serde_json::Value;

use super::{PLACEHOLDER_SERVER, RenderOptions};
use crate::manifests::{Manifests, Object, Ref, str_at, string};

/// A cluster to render: its `Cluster` object when the input has one, its control plane.
pub(super) struct ClusterRef<'m> {
    pub(super) cluster: Option<&'m Object>,
    pub(super) name: String,
    pub(super) namespace: String,
    pub(super) control_plane: Option<&'m Object>,
}

/// Every cluster of the input: each `Cluster`, and a control plane or worker config that names
/// a cluster the input does not hold.
pub(super) fn clusters(m: &Manifests) -> Vec<ClusterRef<'_>> {
    let mut out: Vec<ClusterRef<'_>> = Vec::new();
    for c in m.of_kind("Cluster") {
        let ns = c.namespace().to_owned();
        let control_plane = Ref::at(&c.value, &["spec", "controlPlaneRef"], &ns)
            .and_then(|r| m.find("RKE2ControlPlane", &r))
            .or_else(|| {
                m.of_kind("RKE2ControlPlane")
                    .find(|rcp| rcp.namespace() == ns && cluster_label(rcp) == Some(c.name()))
            })
            .or_else(|| {
                let in_ns: Vec<&Object> = m
                    .of_kind("RKE2ControlPlane")
                    .filter(|r| r.namespace() == ns)
                    .collect();
                (in_ns.len() == 1
                    && m.of_kind("Cluster").filter(|o| o.namespace() == ns).count() == 1)
                    .then(|| in_ns[0])
            });
        out.push(ClusterRef {
            cluster: Some(c),
            name: c.name().to_owned(),
            namespace: ns,
            control_plane,
        });
    }
    // Control planes no Cluster claims: a cluster of their own (named by their label, or
    // after themselves).
    for rcp in m.of_kind("RKE2ControlPlane") {
        if out
            .iter()
            .any(|c| c.control_plane.is_some_and(|p| std::ptr::eq(p, rcp)))
        {
            continue;
        }
        let name = cluster_label(rcp).unwrap_or(rcp.name()).to_owned();
        out.push(ClusterRef {
            cluster: None,
            name,
            namespace: rcp.namespace().to_owned(),
            control_plane: Some(rcp),
        });
    }
    // Workers of clusters the input does not hold.
    for w in m
        .objects
        .iter()
        .filter(|o| matches!(o.kind(), "MachineDeployment" | "MachinePool"))
    {
        let name = worker_cluster_name(w).to_owned();
        if !out
            .iter()
            .any(|c| c.name == name && c.namespace == w.namespace())
        {
            out.push(ClusterRef {
                cluster: None,
                name,
                namespace: w.namespace().to_owned(),
                control_plane: None,
            });
        }
    }
    out
}

pub(super) fn cluster_label(o: &Object) -> Option<&str> {
    o.get(&["metadata", "labels", CLUSTER_NAME_LABEL])
        .and_then(Value::as_str)
}

pub(super) fn worker_cluster_name(w: &Object) -> &str {
    str_at(&w.value, &["spec", "clusterName"])
        .filter(|n| !n.is_empty())
        .or_else(|| cluster_label(w))
        .unwrap_or("")
}

/// What every Secret of one cluster shares.
pub(super) struct ClusterContext<'m> {
    pub(super) c: ClusterRef<'m>,
    pub(super) token: String,
    pub(super) endpoint_host: String,
    /// The join server's host, and whether it was made up.
    server_host: Option<(String, bool)>,
    pub(super) generated: Vec<String>,
    pub(super) findings: Vec<Finding>,
}

impl<'m> ClusterContext<'m> {
    pub(super) fn new(
        m: &'m Manifests,
        c: ClusterRef<'m>,
        options: &RenderOptions,
        rng: &mut StdRng,
    ) -> Self {
        let mut ctx = ClusterContext {
            c,
            token: String::new(),
            endpoint_host: String::new(),
            server_host: None,
            generated: Vec::new(),
            findings: Vec::new(),
        };
        ctx.token = ctx.join_token(m, options, rng);
        let declared_endpoint = ctx.declared_endpoint(m);
        if ctx.c.cluster.is_none() {
            ctx.findings.push(Finding::new(
                Check::ManifestMissingReference,
                format!(
                    "Cluster {}/{} is not in the input: its controlPlaneEndpoint (the last tls-san) stands in as {PLACEHOLDER_SERVER} and its pod and service CIDRs are left empty",
                    rke2_payload::terminal_safe(&ctx.c.namespace),
                    rke2_payload::terminal_safe(&ctx.c.name)
                ),
            ));
        }
        let method = ctx
            .c
            .control_plane
            .map(|rcp| string(&rcp.value, &["spec", "registrationMethod"]))
            .unwrap_or_default();
        let by_endpoint = matches!(method.as_str(), "" | "control-plane-endpoint");
        let endpoint_made_up = ctx.choose_endpoint(options, by_endpoint, declared_endpoint);
        ctx.server_host = ctx.join_server(options, &method, endpoint_made_up);
        ctx.note_missing_control_plane(endpoint_made_up);
        // (The endpoint's note says it when the server is the endpoint.)
        let server_is_endpoint =
            by_endpoint && options.server.is_none() && ctx.c.control_plane.is_some();
        if !(endpoint_made_up && server_is_endpoint)
            && ctx
                .server_host
                .as_ref()
                .is_some_and(|(_, made_up)| *made_up)
        {
            ctx.generated.push(format!(
                "the join server address ({PLACEHOLDER_SERVER}: the registration method takes it from the machines; set it with --server)"
            ));
        }
        ctx
    }

    /// The token of `--token`, of the `<cluster>-token` Secret, or a new one.
    fn join_token(&mut self, m: &Manifests, options: &RenderOptions, rng: &mut StdRng) -> String {
        let token_ref = Ref {
            name: format!("{}-token", self.c.name),
            namespace: self.c.namespace.clone(),
        };
        match (&options.token, m.secret_key(&token_ref, "value")) {
            (Some(t), _) => t.clone(),
            (None, Ok(Some(bytes))) => String::from_utf8_lossy(&bytes).into_owned(),
            _ => {
                let mut raw = [0u8; 16];
                rng.fill_bytes(&mut raw);
                self.generated.push("the join token".to_owned());
                super::hex(&raw)
            }
        }
    }

    /// The Cluster's endpoint, or (as Cluster API copies it from there) the infrastructure
    /// cluster's; empty when neither is set.
    fn declared_endpoint(&self, m: &Manifests) -> String {
        self.c
            .cluster
            .map(|o| {
                let own = string(&o.value, &["spec", "controlPlaneEndpoint", "host"]);
                if !own.is_empty() {
                    return own;
                }
                Ref::at(&o.value, &["spec", "infrastructureRef"], o.namespace())
                    .and_then(|r| {
                        m.objects.iter().find(|i| {
                            i.name() == r.name
                                && i.namespace() == r.namespace
                                && i.kind() != "Cluster"
                        })
                    })
                    .map(|i| string(&i.value, &["spec", "controlPlaneEndpoint", "host"]))
                    .unwrap_or_default()
            })
            .unwrap_or_default()
    }

    /// Sets the endpoint host; whether it is made up.
    fn choose_endpoint(
        &mut self,
        options: &RenderOptions,
        by_endpoint: bool,
        declared_endpoint: String,
    ) -> bool {
        // CAPRKE2 creates no Machine before the endpoint is set (the infrastructure provider
        // fills it in when the manifests leave it out), and always puts it in tls-san: so
        // `--server` stands for it where the endpoint is how nodes join or where it is missing,
        // else one placeholder does, the same as the join server's.
        let (endpoint_host, endpoint_made_up) = match &options.server {
            Some(server) if by_endpoint || declared_endpoint.is_empty() => (server.clone(), false),
            _ if declared_endpoint.is_empty() => (PLACEHOLDER_SERVER.to_owned(), true),
            _ => (declared_endpoint, false),
        };
        if endpoint_made_up {
            self.generated.push(format!(
                "the control plane endpoint ({PLACEHOLDER_SERVER}: the infrastructure provider fills it in; set it with --server)"
            ));
        }
        self.endpoint_host = endpoint_host;
        endpoint_made_up
    }

    /// The join server's host by the registration method, and whether it is made up.
    fn join_server(
        &self,
        options: &RenderOptions,
        method: &str,
        endpoint_made_up: bool,
    ) -> Option<(String, bool)> {
        match (&options.server, self.c.control_plane) {
            (Some(s), _) => Some((s.clone(), false)),
            (None, Some(rcp)) => match method {
                "" | "control-plane-endpoint" => {
                    Some((self.endpoint_host.clone(), endpoint_made_up))
                }
                "address" if !string(&rcp.value, &["spec", "registrationAddress"]).is_empty() => {
                    Some((string(&rcp.value, &["spec", "registrationAddress"]), false))
                }
                _ => Some((PLACEHOLDER_SERVER.to_owned(), true)),
            },
            // No control plane in the input: workers join the endpoint (the default
            // registration method) where the Cluster names one.
            (None, None) if !endpoint_made_up => Some((self.endpoint_host.clone(), false)),
            (None, None) => Some((PLACEHOLDER_SERVER.to_owned(), true)),
        }
    }

    /// The finding of a Cluster whose control plane is not in the input.
    fn note_missing_control_plane(&mut self, endpoint_made_up: bool) {
        let (Some(cluster), None) = (self.c.cluster, self.c.control_plane) else {
            return;
        };
        let Some(r) = Ref::at(
            &cluster.value,
            &["spec", "controlPlaneRef"],
            &self.c.namespace,
        ) else {
            return;
        };
        let kind = string(&cluster.value, &["spec", "controlPlaneRef", "kind"]);
        let joins = if endpoint_made_up {
            format!("a placeholder ({PLACEHOLDER_SERVER})")
        } else {
            format!(
                "the endpoint host {}",
                rke2_payload::terminal_safe(&self.endpoint_host)
            )
        };
        self.findings.push(Finding::new(
            Check::ManifestMissingReference,
            format!(
                "{}: spec.controlPlaneRef names {} {r}, which is not in the input; its workers are rendered joining {joins} with the cluster's token, and no control plane is rendered",
                cluster.title(),
                rke2_payload::terminal_safe(if kind.is_empty() { "RKE2ControlPlane" } else { &kind }),
            ),
        ));
    }
    pub(super) fn server_url(&self) -> Option<String> {
        self.server_host.as_ref().map(|(host, _)| {
            let host = host.trim_start_matches('[').trim_end_matches(']');
            if host.contains(':') {
                format!("https://[{host}]:9345")
            } else {
                format!("https://{host}:9345")
            }
        })
    }

    pub(super) fn cluster_value(&self) -> Value {
        self.c
            .cluster
            .map(|o| o.value.clone())
            .unwrap_or(Value::Null)
    }
}

pub(super) fn control_plane_version(rcp: &Object) -> String {
    let v = string(&rcp.value, &["spec", "version"]);
    if v.is_empty() {
        // v1beta1 also had it in the agent config.
        string(&rcp.value, &["spec", "agentConfig", "version"])
    } else {
        v
    }
}
