//! What each infrastructure provider does with the bootstrap data before a machine sees it, and
//! what it needs for that, as data: a provider that parses the data as YAML (so gzip or Ignition
//! never reach the node), one that stages Ignition in object storage (so the cluster's
//! infrastructure must name a bucket). A payload that breaks one is refused by the provider,
//! whatever its size.

use serde_json::Value;

/// What a provider does with the bootstrap data.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Handling {
    /// It parses the data as a YAML cloud-config and provisions from what it read: a gzipped
    /// payload, and an Ignition one unless `ignition` says it takes Ignition, never reach a node.
    ParsesYaml {
        /// Whether it also takes an Ignition payload (read by a provisioner of its own).
        ignition: bool,
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
        handling: Handling::ParsesYaml { ignition: true },
        source: "kubernetes-sigs/cluster-api v1.14.0 test/infrastructure/docker/internal/provisioning/cloudinit/adapter.go:58-62 (the cloud-config must be valid YAML)",
    },
    ProviderHandling {
        provider: "CAPHV",
        kinds: &["HarvesterMachineTemplate"],
        group: "infrastructure.cluster.x-k8s.io",
        handling: Handling::ParsesYaml { ignition: false },
        source: "rancher-sandbox/cluster-api-provider-harvester util/cloudinit.go:39-42 (the bootstrap data is YAML-merged with CAPHV's own cloud-init)",
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

/// The provider preconditions a payload breaks: the payload is of format `ignition` (else
/// cloud-config) and gzipped (`gzip`: CAPRKE2's `gzipUserData`), its infrastructure machine
/// template is of kind `kind` and API version `api_version` with machine spec `spec` (a
/// template's `spec.template.spec`), and the cluster's infrastructure object's `spec` is
/// `cluster_spec` when the input holds it (`None`: a precondition on it is not judged).
///
/// ```
/// use rke2_payload::payload_preconditions;
/// use serde_json::json;
///
/// let broken = payload_preconditions(
///     "DockerMachineTemplate", "infrastructure.cluster.x-k8s.io/v1beta2", &json!({}), None, false, true);
/// assert_eq!(broken[0].provider, "CAPD");
/// assert_eq!(broken[0].field, "gzipUserData");
/// let fine = payload_preconditions(
///     "AWSMachineTemplate", "infrastructure.cluster.x-k8s.io/v1beta2", &json!({}),
///     Some(&json!({"s3Bucket": {"name": "boot"}})), true, false);
/// assert!(fine.is_empty());
/// ```
pub fn payload_preconditions(
    kind: &str,
    api_version: &str,
    spec: &Value,
    cluster_spec: Option<&Value>,
    ignition: bool,
    gzip: bool,
) -> Vec<Precondition> {
    let group = api_version.rsplit_once('/').map_or(api_version, |(g, _)| g);
    let at = |v: &'_ Value, path: &[&str]| -> Option<Value> {
        path.iter().try_fold(v, |v, k| v.get(*k)).cloned()
    };
    let mut out = Vec::new();
    for p in PROVIDER_HANDLING
        .iter()
        .filter(|p| p.kinds.contains(&kind) && (p.group == group || group.is_empty()))
    {
        match p.handling {
            Handling::ParsesYaml {
                ignition: takes_ignition,
            } => {
                if ignition && !takes_ignition {
                    out.push(Precondition {
                        provider: p.provider,
                        field: "agentConfig.format".to_owned(),
                        message: format!(
                            "{} parses the bootstrap data as a YAML cloud-config: an Ignition payload never reaches the node",
                            p.provider
                        ),
                        source: p.source,
                    });
                } else if gzip {
                    out.push(Precondition {
                        provider: p.provider,
                        field: "gzipUserData".to_owned(),
                        message: format!(
                            "{} parses the bootstrap data as YAML before any machine sees it: gzipped data is not YAML, so the node never boots",
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
                let bucket = cluster_spec.map(|c| {
                    at(c, cluster_field)
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

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::payload_preconditions as check;

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
            Some(&no_bucket),
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
                Some(&no_bucket),
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
                Some(&no_bucket),
                false,
                false
            )
            .is_empty()
        );
        // Without the AWSCluster in the input nothing is judged.
        assert!(check("AWSMachineTemplate", GROUP, &json!({}), None, true, false).is_empty());
    }
}
