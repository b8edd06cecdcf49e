//! What each infrastructure provider does with the bootstrap data before a machine sees it, and
//! what it needs for that, as data: a provider that parses the data as YAML (so gzip or Ignition
//! never reach the node), one that stages Ignition in object storage (so the cluster's
//! infrastructure must name a bucket). A payload that breaks one is refused by the provider,
//! whatever its size. And what a cluster's infrastructure object must say for an RKE2 control
//! plane to be reachable at all ([`CLUSTER_REQUIREMENTS`]): a matter of the infrastructure, not of
//! the payload.

use serde_json::Value;

/// Cluster API's annotation that marks an infrastructure cluster as externally managed
/// (`util/annotations` `IsExternallyManaged`: present, whatever its value).
const MANAGED_BY: &str = "cluster.x-k8s.io/managed-by";

/// What a provider does with the bootstrap data.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Handling {
    /// It parses the data as a YAML cloud-config and provisions from what it read: a gzipped
    /// payload, and an Ignition one unless `ignition` says it takes Ignition, never reach a node.
    ParsesYaml {
        /// Whether it also takes an Ignition payload (read by a provisioner of its own, or
        /// passed on unchanged).
        ignition: bool,
        /// Whether it leaves the data alone when the cluster's infrastructure object is
        /// externally managed (Cluster API's `cluster.x-k8s.io/managed-by` annotation).
        unless_externally_managed: bool,
    },
    /// It stages an Ignition payload in object storage: the cluster's infrastructure object
    /// must name a bucket at `cluster_field`, unless the machine's `unless` field holds
    /// `unless_value` (the data then goes into user data directly).
    StagesIgnition {
        /// Where the cluster's infrastructure object names the bucket.
        cluster_field: &'static [&'static str],
        /// The machine template field that sends the data another way.
        unless: &'static [&'static str],
        /// The value of `unless` that does.
        unless_value: &'static str,
    },
}

/// One provider's handling, for the infrastructure machine (template) kinds it serves.
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub struct ProviderHandling {
    /// The provider, as people name it (`CAPD`).
    pub provider: &'static str,
    /// The infrastructure machine template kinds (and machine pool kinds) it serves.
    pub kinds: &'static [&'static str],
    /// Their API group.
    pub group: &'static str,
    /// What it does with the data.
    pub handling: Handling,
    /// Where its code does it.
    pub source: &'static str,
}

/// Every provider whose handling of the data constrains the payload.
pub const PROVIDER_HANDLING: &[ProviderHandling] = &[
    ProviderHandling {
        provider: "CAPD",
        kinds: &[
            "DockerMachineTemplate",
            "DockerMachinePoolTemplate",
            "DockerMachinePool",
        ],
        group: "infrastructure.cluster.x-k8s.io",
        handling: Handling::ParsesYaml {
            ignition: true,
            unless_externally_managed: false,
        },
        source: "kubernetes-sigs/cluster-api v1.14.0 test/infrastructure/docker/internal/provisioning/cloudinit/adapter.go:58-62 (the cloud-config must be valid YAML)",
    },
    ProviderHandling {
        provider: "CAPHV",
        kinds: &["HarvesterMachineTemplate"],
        group: "infrastructure.cluster.x-k8s.io",
        handling: Handling::ParsesYaml {
            ignition: false,
            unless_externally_managed: false,
        },
        source: "rancher-sandbox/cluster-api-provider-harvester util/cloudinit.go:39-42 (the bootstrap data is YAML-merged with CAPHV's own cloud-init)",
    },
    ProviderHandling {
        provider: "CAPK",
        kinds: &["KubevirtMachineTemplate"],
        group: "infrastructure.cluster.x-k8s.io",
        handling: Handling::ParsesYaml {
            ignition: true,
            unless_externally_managed: true,
        },
        source: "kubernetes-sigs/cluster-api-provider-kubevirt v0.11.2 controllers/kubevirtmachine_controller.go:208 (unless the KubevirtCluster is externally managed), :584-588 and :659-661 (the data is parsed as YAML to add the capk SSH user; a parse error stops the reconcile), :680 (a document without a #cloud-config header, such as Ignition JSON, passes unchanged)",
    },
    ProviderHandling {
        provider: "CAPA",
        kinds: &["AWSMachineTemplate"],
        group: "infrastructure.cluster.x-k8s.io",
        handling: Handling::StagesIgnition {
            cluster_field: &["s3Bucket", "name"],
            unless: &["ignition", "storageType"],
            unless_value: "UnencryptedUserData",
        },
        source: "kubernetes-sigs/cluster-api-provider-aws pkg/cloud/services/s3/s3.go:187-190 (no S3 bucket configured: the instance is not created)",
    },
];

/// The cluster's infrastructure object (an `AWSCluster`, a `LinodeCluster`, …) as a precondition
/// or a delivery path reads it: its `spec`, and whether it is externally managed.
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub struct ClusterInfrastructure<'a> {
    /// The object's `spec`.
    pub spec: &'a Value,
    /// Whether Cluster API's `cluster.x-k8s.io/managed-by` annotation marks it externally
    /// managed.
    pub externally_managed: bool,
}

impl<'a> ClusterInfrastructure<'a> {
    /// The infrastructure object whose `spec` is `spec`, externally managed or not.
    pub fn new(spec: &'a Value, externally_managed: bool) -> Self {
        ClusterInfrastructure {
            spec,
            externally_managed,
        }
    }

    /// Read from the whole object: its `spec` (null when it has none) and its annotations.
    ///
    /// ```
    /// use rke2_payload::ClusterInfrastructure;
    /// use serde_json::json;
    ///
    /// let object = json!({"metadata": {"annotations": {"cluster.x-k8s.io/managed-by": ""}},
    ///   "spec": {"region": "x"}});
    /// let infra = ClusterInfrastructure::of(&object);
    /// assert!(infra.externally_managed);
    /// assert_eq!(infra.spec["region"], "x");
    /// ```
    pub fn of(object: &'a Value) -> Self {
        static NULL: Value = Value::Null;
        ClusterInfrastructure {
            spec: object.get("spec").unwrap_or(&NULL),
            externally_managed: object
                .get("metadata")
                .and_then(|m| m.get("annotations"))
                .and_then(Value::as_object)
                .is_some_and(|a| a.contains_key(MANAGED_BY)),
        }
    }
}

/// A precondition of the provider that a payload breaks.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Precondition {
    /// The provider (`CAPD`).
    pub provider: &'static str,
    /// The field that decides it, as a path (`gzipUserData`, `AWSCluster spec.s3Bucket`).
    pub field: String,
    /// What goes wrong, in one sentence.
    pub message: String,
    /// Where the provider's code does it.
    pub source: &'static str,
}

/// The entries of [`PROVIDER_HANDLING`] for a kind of `group` (empty: any group).
fn handlings<'k>(
    kind: &'k str,
    group: &'k str,
) -> impl Iterator<Item = &'static ProviderHandling> + 'k {
    PROVIDER_HANDLING
        .iter()
        .filter(move |p| p.kinds.contains(&kind) && (p.group == group || group.is_empty()))
}

/// Whether the provider of `kind` (of API group `group`) parses the bootstrap data as YAML for
/// a machine of `cluster` (`None`: not in the input, so not externally managed).
pub(crate) fn parses_yaml(
    kind: &str,
    group: &str,
    cluster: Option<ClusterInfrastructure<'_>>,
) -> bool {
    let managed = cluster.is_some_and(|c| c.externally_managed);
    handlings(kind, group).any(|p| match p.handling {
        Handling::ParsesYaml {
            unless_externally_managed,
            ..
        } => !(unless_externally_managed && managed),
        Handling::StagesIgnition { .. } => false,
    })
}

/// The provider preconditions a payload breaks: the payload is of format `ignition` (else
/// cloud-config) and gzipped (`gzip`: CAPRKE2's `gzipUserData`), its infrastructure machine
/// template is of kind `kind` and API version `api_version` with machine spec `spec` (a
/// template's `spec.template.spec`), and the cluster's infrastructure object is `cluster` when
/// the input holds it (`None`: a precondition on its spec is not judged, and it is taken as not
/// externally managed).
///
/// ```
/// use rke2_payload::{ClusterInfrastructure, payload_preconditions};
/// use serde_json::json;
///
/// let broken = payload_preconditions(
///     "DockerMachineTemplate", "infrastructure.cluster.x-k8s.io/v1beta2", &json!({}), None, false, true);
/// assert_eq!(broken[0].provider, "CAPD");
/// assert_eq!(broken[0].field, "gzipUserData");
/// let bucket = json!({"s3Bucket": {"name": "boot"}});
/// let fine = payload_preconditions(
///     "AWSMachineTemplate", "infrastructure.cluster.x-k8s.io/v1beta2", &json!({}),
///     Some(ClusterInfrastructure::new(&bucket, false)), true, false);
/// assert!(fine.is_empty());
/// ```
pub fn payload_preconditions(
    kind: &str,
    api_version: &str,
    spec: &Value,
    cluster: Option<ClusterInfrastructure<'_>>,
    ignition: bool,
    gzip: bool,
) -> Vec<Precondition> {
    let group = api_version.rsplit_once('/').map_or(api_version, |(g, _)| g);
    let at = |v: &'_ Value, path: &[&str]| -> Option<Value> {
        path.iter().try_fold(v, |v, k| v.get(*k)).cloned()
    };
    let mut out = Vec::new();
    for p in handlings(kind, group) {
        match p.handling {
            Handling::ParsesYaml {
                ignition: takes_ignition,
                unless_externally_managed,
            } => {
                if unless_externally_managed && cluster.is_some_and(|c| c.externally_managed) {
                    continue;
                }
                let unless = if unless_externally_managed {
                    " (unless the cluster's infrastructure object is externally managed)"
                } else {
                    ""
                };
                if ignition && !takes_ignition {
                    out.push(Precondition {
                        provider: p.provider,
                        field: "agentConfig.format".to_owned(),
                        message: format!(
                            "{} parses the bootstrap data as a YAML cloud-config{unless}: an Ignition payload never reaches the node",
                            p.provider
                        ),
                        source: p.source,
                    });
                } else if gzip {
                    out.push(Precondition {
                        provider: p.provider,
                        field: "gzipUserData".to_owned(),
                        message: format!(
                            "{} parses the bootstrap data as YAML before any machine sees it{unless}: gzipped data is not YAML, so the node never boots",
                            p.provider
                        ),
                        source: p.source,
                    });
                }
            }
            Handling::StagesIgnition {
                cluster_field,
                unless,
                unless_value,
            } => {
                let direct = at(spec, unless).and_then(|v| v.as_str().map(str::to_owned))
                    == Some(unless_value.to_owned());
                let bucket = cluster.map(|c| {
                    at(c.spec, cluster_field)
                        .and_then(|v| v.as_str().map(|s| !s.is_empty()))
                        .unwrap_or(false)
                });
                if ignition && !direct && bucket == Some(false) {
                    out.push(Precondition {
                        provider: p.provider,
                        field: format!("spec.{}", cluster_field.join(".")),
                        message: format!(
                            "{} stages an Ignition payload in S3, and the cluster's infrastructure names no bucket (spec.{}; or set {} to {unless_value}): the instance is never created",
                            p.provider,
                            cluster_field.join("."),
                            unless.join(".")
                        ),
                        source: p.source,
                    });
                }
            }
        }
    }
    out
}

/// What a cluster's infrastructure object must say for an RKE2 control plane: a field of its
/// `spec` that selects the provider's RKE2 behaviour, whose default is another distribution's.
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub struct ClusterRequirement {
    /// The provider, as people name it (`CAPTF`).
    pub provider: &'static str,
    /// The infrastructure cluster kind.
    pub kind: &'static str,
    /// Its API group.
    pub group: &'static str,
    /// The modules it holds for, by the name of the repository of the object's
    /// `spec.source.image` (its last path component); empty: any object of the kind.
    pub modules: &'static [&'static str],
    /// The field, a path of keys of `spec`.
    pub field: &'static [&'static str],
    /// The value an RKE2 control plane needs there.
    pub value: &'static str,
    /// The value the provider takes when the field is unset.
    pub default: &'static str,
    /// A field of `spec` that can set the value from elsewhere (a ConfigMap or Secret the
    /// input need not hold): when it is set and `field` is not, nothing is judged.
    pub may_come_from: &'static [&'static str],
    /// What goes wrong otherwise, in words that follow "so" or a colon.
    pub consequence: &'static str,
    /// Where the provider's code says it.
    pub source: &'static str,
}

/// Every infrastructure cluster whose RKE2 behaviour is a setting.
pub const CLUSTER_REQUIREMENTS: &[ClusterRequirement] = &[ClusterRequirement {
    provider: "CAPTF",
    kind: "TerraformCluster",
    group: "infrastructure.cluster.x-k8s.io",
    modules: &[
        "aws-cluster",
        "azure-cluster",
        "gcp-cluster",
        "oci-cluster",
        "openstack-cluster",
    ],
    field: &["variables", "distribution"],
    value: "rke2",
    default: "kubeadm",
    may_come_from: &["variablesFrom"],
    consequence: "the module opens the RKE2 supervisor port 9345 (listener and firewall rules) only for rke2, so no node can join the first server",
    source: "captf-io/terraform-aws-cluster 48d11b3e variables.tf:103-113 (distribution: kubeadm or rke2, default kubeadm; rke2 adds the supervisor listener on 9345 and its security group rules), and the same variable in terraform-azure-cluster, terraform-google-cluster, terraform-oci-cluster and terraform-openstack-cluster",
}];

/// The [`CLUSTER_REQUIREMENTS`] a cluster's infrastructure object of kind `kind` and API
/// version `api_version`, whose `spec` is `spec`, breaks under an RKE2 control plane.
///
/// ```
/// use rke2_payload::cluster_requirements;
/// use serde_json::json;
///
/// let api = "infrastructure.cluster.x-k8s.io/v1alpha1";
/// let image = "ghcr.io/captf-io/module-images/aws-cluster:v0.1.0-opentofu";
/// let kubeadm = json!({"source": {"image": image}, "variables": {"vpc_id": "vpc-1"}});
/// let broken = cluster_requirements("TerraformCluster", api, &kubeadm);
/// assert_eq!(broken[0].field, "spec.variables.distribution");
/// let rke2 = json!({"source": {"image": image}, "variables": {"distribution": "rke2"}});
/// assert!(cluster_requirements("TerraformCluster", api, &rke2).is_empty());
/// ```
pub fn cluster_requirements(kind: &str, api_version: &str, spec: &Value) -> Vec<Precondition> {
    let group = api_version.rsplit_once('/').map_or(api_version, |(g, _)| g);
    let at = |path: &[&str]| path.iter().try_fold(spec, |v, k| v.get(*k));
    let module = at(&["source", "image"])
        .and_then(Value::as_str)
        .map(super::image_name);
    CLUSTER_REQUIREMENTS
        .iter()
        .filter(|r| r.kind == kind && (r.group == group || group.is_empty()))
        .filter(|r| r.modules.is_empty() || module.is_some_and(|m| r.modules.contains(&m)))
        .filter_map(|r| {
            let set = at(r.field).filter(|v| !v.is_null());
            if set.is_none() && at(r.may_come_from).is_some_and(|v| !v.is_null()) {
                return None;
            }
            let field = format!("spec.{}", r.field.join("."));
            let is = match set {
                None => format!("{field} is not set (default {})", r.default),
                Some(v) if v.as_str() == Some(r.value) => return None,
                Some(Value::String(s)) => {
                    format!("{field} is {}", crate::codec::text::terminal_safe(s))
                }
                Some(_) => format!("{field} is not a string"),
            };
            Some(Precondition {
                provider: r.provider,
                message: format!(
                    "{is}, not {}, under an RKE2ControlPlane: {}",
                    r.value, r.consequence
                ),
                field,
                source: r.source,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::{ClusterInfrastructure, cluster_requirements, payload_preconditions as check};

    const GROUP: &str = "infrastructure.cluster.x-k8s.io/v1beta2";

    #[test]
    fn providers_that_parse_yaml_refuse_gzip_and_caphv_refuses_ignition() {
        let capd = check(
            "DockerMachineTemplate",
            GROUP,
            &json!({}),
            None,
            false,
            true,
        );
        assert_eq!(capd.len(), 1);
        assert!(
            check(
                "DockerMachineTemplate",
                GROUP,
                &json!({}),
                None,
                false,
                false
            )
            .is_empty()
        );
        // CAPD reads Ignition with a provisioner of its own.
        assert!(
            check(
                "DockerMachineTemplate",
                GROUP,
                &json!({}),
                None,
                true,
                false
            )
            .is_empty()
        );
        let caphv = check(
            "HarvesterMachineTemplate",
            GROUP,
            &json!({}),
            None,
            true,
            false,
        );
        assert_eq!(caphv[0].field, "agentConfig.format");
        assert_eq!(
            check(
                "HarvesterMachineTemplate",
                GROUP,
                &json!({}),
                None,
                false,
                true
            )[0]
            .field,
            "gzipUserData"
        );
        // Another group's kind of the same name is not CAPD's.
        assert!(
            check(
                "DockerMachineTemplate",
                "example.com/v1",
                &json!({}),
                None,
                false,
                true
            )
            .is_empty()
        );
    }

    #[test]
    fn capa_stages_ignition_in_the_bucket_the_aws_cluster_names() {
        let no_bucket = json!({"region": "eu-west-1"});
        let refused = check(
            "AWSMachineTemplate",
            GROUP,
            &json!({}),
            Some(ClusterInfrastructure::new(&no_bucket, false)),
            true,
            false,
        );
        assert_eq!(refused[0].provider, "CAPA");
        assert_eq!(refused[0].field, "spec.s3Bucket.name");
        // Unencrypted user data does not go through S3; cloud-config never does.
        let direct = json!({"ignition": {"storageType": "UnencryptedUserData"}});
        assert!(
            check(
                "AWSMachineTemplate",
                GROUP,
                &direct,
                Some(ClusterInfrastructure::new(&no_bucket, false)),
                true,
                false
            )
            .is_empty()
        );
        assert!(
            check(
                "AWSMachineTemplate",
                GROUP,
                &json!({}),
                Some(ClusterInfrastructure::new(&no_bucket, false)),
                false,
                false
            )
            .is_empty()
        );
        // Without the AWSCluster in the input nothing is judged.
        assert!(check("AWSMachineTemplate", GROUP, &json!({}), None, true, false).is_empty());
    }

    #[test]
    fn capk_parses_yaml_unless_the_kubevirt_cluster_is_externally_managed() {
        let gzip = check(
            "KubevirtMachineTemplate",
            GROUP,
            &json!({}),
            None,
            false,
            true,
        );
        assert_eq!(gzip.len(), 1);
        assert_eq!(gzip[0].provider, "CAPK");
        assert_eq!(gzip[0].field, "gzipUserData");
        // Ignition JSON has no #cloud-config header: CAPK passes it on unchanged.
        assert!(
            check(
                "KubevirtMachineTemplate",
                GROUP,
                &json!({}),
                None,
                true,
                false
            )
            .is_empty()
        );
        let managed = json!({
            "metadata": {"annotations": {"cluster.x-k8s.io/managed-by": "hypershift"}},
            "spec": {}
        });
        let infra = ClusterInfrastructure::of(&managed);
        assert!(infra.externally_managed);
        assert!(
            check(
                "KubevirtMachineTemplate",
                GROUP,
                &json!({}),
                Some(infra),
                false,
                true
            )
            .is_empty()
        );
        let owned = json!({"spec": {}});
        assert_eq!(
            check(
                "KubevirtMachineTemplate",
                GROUP,
                &json!({}),
                Some(ClusterInfrastructure::of(&owned)),
                false,
                true
            )
            .len(),
            1
        );
        assert!(super::parses_yaml(
            "KubevirtMachineTemplate",
            "infrastructure.cluster.x-k8s.io",
            None
        ));
        assert!(!super::parses_yaml(
            "KubevirtMachineTemplate",
            "infrastructure.cluster.x-k8s.io",
            Some(infra)
        ));
        assert!(!super::parses_yaml(
            "AWSMachineTemplate",
            "infrastructure.cluster.x-k8s.io",
            None
        ));
    }

    #[test]
    fn a_captf_cluster_module_must_be_told_rke2() {
        const API: &str = "infrastructure.cluster.x-k8s.io/v1alpha1";
        let image = "registry.example.com:5000/mirror/aws-cluster:v0.1.0-terraform@sha256:00";
        let unset = json!({"source": {"image": image}, "variables": {"vpc_id": "vpc-1"}});
        let broken = cluster_requirements("TerraformCluster", API, &unset);
        assert_eq!(broken.len(), 1);
        assert_eq!(broken[0].provider, "CAPTF");
        assert_eq!(broken[0].field, "spec.variables.distribution");
        assert!(
            broken[0].message.contains("not set (default kubeadm)"),
            "{}",
            broken[0].message
        );
        assert!(broken[0].message.contains("9345"), "{}", broken[0].message);
        let kubeadm = json!({"source": {"image": image}, "variables": {"distribution": "kubeadm"}});
        let said = cluster_requirements("TerraformCluster", API, &kubeadm);
        assert!(
            said[0].message.contains("is kubeadm, not rke2"),
            "{}",
            said[0].message
        );
        let rke2 = json!({"source": {"image": image}, "variables": {"distribution": "rke2"}});
        assert!(cluster_requirements("TerraformCluster", API, &rke2).is_empty());
        // The value may come from a ConfigMap or Secret the input does not show.
        let from =
            json!({"source": {"image": image}, "variablesFrom": [{"configMapRef": {"name": "v"}}]});
        assert!(cluster_requirements("TerraformCluster", API, &from).is_empty());
        // A module of one's own may declare no such variable.
        let own = json!({"source": {"image": "example.com/my-cluster:v1"}});
        assert!(cluster_requirements("TerraformCluster", API, &own).is_empty());
        // Another group's kind of the same name is not CAPTF's.
        assert!(cluster_requirements("TerraformCluster", "example.com/v1", &unset).is_empty());
    }
}
