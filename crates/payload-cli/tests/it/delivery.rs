//! Right answers on templates: the limit of the path the infrastructure template sends the data
//! by, gates that fail where CAPRKE2 (or the API server) refuses, manifest findings once per
//! object at its line, and the checks that were missing.

use crate::common::*;

use serde_json::Value;

/// A cluster on `infra` (the infrastructure machine template's kind and spec, indented for
/// `spec.template.spec`), its control plane and one MachineDeployment.
fn cluster(infra_kind: &str, infra_spec: &str, rcp_extra: &str, config_extra: &str) -> String {
    format!(
        "apiVersion: cluster.x-k8s.io/v1beta2
kind: Cluster
metadata: {{name: demo, namespace: capi}}
spec:
  controlPlaneEndpoint: {{host: demo.example.com, port: 6443}}
  controlPlaneRef: {{apiGroup: controlplane.cluster.x-k8s.io, kind: RKE2ControlPlane, name: demo-cp}}
---
apiVersion: controlplane.cluster.x-k8s.io/v1beta2
kind: RKE2ControlPlane
metadata: {{name: demo-cp, namespace: capi}}
spec:
  version: v1.32.5+rke2r1
  replicas: 1
  rolloutStrategy: {{type: RollingUpdate}}
{rcp_extra}  machineTemplate:
    spec:
      infrastructureRef: {{apiGroup: infrastructure.cluster.x-k8s.io, kind: {infra_kind}, name: demo-cp}}
---
apiVersion: infrastructure.cluster.x-k8s.io/v1beta2
kind: {infra_kind}
metadata: {{name: demo-cp, namespace: capi}}
spec:
  template:
    spec:
{infra_spec}---
apiVersion: bootstrap.cluster.x-k8s.io/v1beta2
kind: RKE2ConfigTemplate
metadata: {{name: demo-md, namespace: capi}}
spec:
  template:
    spec:
      agentConfig: {{}}
{config_extra}---
apiVersion: cluster.x-k8s.io/v1beta2
kind: MachineDeployment
metadata: {{name: demo-md, namespace: capi}}
spec:
  clusterName: demo
  template:
    spec:
      clusterName: demo
      version: v1.32.5+rke2r1
      bootstrap:
        configRef: {{apiGroup: bootstrap.cluster.x-k8s.io, kind: RKE2ConfigTemplate, name: demo-md}}
      infrastructureRef: {{apiGroup: infrastructure.cluster.x-k8s.io, kind: {infra_kind}, name: demo-cp}}
"
    )
}

fn run(args: &[&str], stdin: &str) -> (Option<i32>, String, String) {
    let out = cmd()
        .args(args)
        .write_stdin(stdin.to_owned())
        .output()
        .expect("run");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The clouds each Secret of `size -o json` was judged against.
fn judged(manifests: &str, extra: &[&str]) -> (Option<i32>, Vec<Vec<String>>) {
    let mut args = vec!["size", "-o", "json", "-"];
    args.extend_from_slice(extra);
    let (code, out, err) = run(&args, manifests);
    let doc: Value = serde_json::from_str(&out).unwrap_or_else(|_| panic!("{out}{err}"));
    let clouds = doc["secrets"]
        .as_array()
        .expect("secrets")
        .iter()
        .map(|s| {
            s["clouds"]
                .as_array()
                .expect("clouds")
                .iter()
                .map(|v| v["cloud"].as_str().expect("id").to_owned())
                .collect()
        })
        .collect();
    (code, clouds)
}

#[test]
fn size_judges_the_limit_of_the_path_the_template_picks() {
    // CAPA's default: Secrets Manager; EC2's 16 KB binds only the stub.
    let aws = cluster(
        "AWSMachineTemplate",
        "      instanceType: t3.large\n",
        "",
        "",
    );
    let (code, clouds) = judged(&aws, &[]);
    assert_eq!(code, Some(0));
    assert!(clouds.iter().all(|c| c == &["aws"]), "{clouds:?}");
    let (_, out, _) = run(&["size", "-"], &aws);
    assert!(
        out.contains("path, from the manifests: AWSMachineTemplate capi/demo-cp"),
        "{out}"
    );

    // insecureSkipSecretsManager: the payload is the EC2 user data.
    let direct = cluster(
        "AWSMachineTemplate",
        "      cloudInit: {insecureSkipSecretsManager: true}\n",
        "",
        "",
    );
    let (_, clouds) = judged(&direct, &[]);
    assert!(clouds.iter().all(|c| c == &["aws-user-data"]), "{clouds:?}");

    // Other providers by kind; --cloud still overrides.
    for (kind, cloud) in [
        ("AzureMachineTemplate", "azure"),
        ("VSphereMachineTemplate", "vsphere"),
        ("DockerMachineTemplate", "docker"),
        ("OpenStackMachineTemplate", "openstack"),
    ] {
        let (_, clouds) = judged(&cluster(kind, "      {}\n", "", ""), &[]);
        assert!(clouds.iter().all(|c| c == &[cloud]), "{kind}: {clouds:?}");
    }
    let (_, clouds) = judged(&aws, &["--cloud", "aws-user-data,gcp"]);
    assert!(
        clouds.iter().all(|c| c == &["aws-user-data", "gcp"]),
        "{clouds:?}"
    );
}

#[test]
fn a_bare_secret_keeps_the_table_with_the_path_each_verdict_assumes() {
    let out = cmd()
        .args(["size", "-o", "json"])
        .arg(testdata().join("secrets/init-cloud-config-extras.yaml"))
        .output()
        .expect("run");
    let doc: Value = serde_json::from_slice(&out.stdout).expect("json");
    let clouds = doc["secrets"][0]["clouds"].as_array().expect("clouds");
    assert!(clouds.len() > 5);
    for v in clouds {
        assert!(!v["path"].as_str().unwrap_or("").is_empty(), "{v}");
        assert_eq!(v["chosen_by_manifests"], false);
    }
    // The 18.7 KB payload fits CAPA's default path, not EC2 user data itself.
    let verdict = |id: &str| clouds.iter().find(|v| v["cloud"] == id).expect(id).clone();
    assert_eq!(verdict("aws")["fits"], true);
    assert_eq!(verdict("aws-user-data")["fits"], false);
}

#[test]
fn gates_fail_where_the_api_server_refuses_a_missing_version() {
    let manifests = cluster("DockerMachineTemplate", "      {}\n", "", "").replacen(
        "  version: v1.32.5+rke2r1\n  replicas: 1",
        "  replicas: 1",
        1,
    );
    for gate in [&["render", "-"][..], &["lint", "-"][..], &["size", "-"][..]] {
        let (code, out, err) = run(gate, &manifests);
        assert_eq!(code, Some(1), "{gate:?}: {out}{err}");
        assert!(
            format!("{out}{err}")
                .contains("RKE2ControlPlane capi/demo-cp: spec.version is required"),
            "{gate:?}: {out}{err}"
        );
    }
}

#[test]
fn a_butane_config_caprke2_refuses_fails_the_render() {
    let butane = "      agentConfig:\n        format: ignition\n        additionalUserData:\n          strict: true\n          config: |\n            variant: fcos\n            version: 1.4.0\n            storage:\n              - files: []\n";
    let manifests = cluster("DockerMachineTemplate", "      {}\n", "", "").replacen(
        "      agentConfig: {}\n",
        butane,
        1,
    );
    let (code, out, err) = run(&["render", "-"], &manifests);
    assert_ne!(code, Some(0), "{out}{err}");
    assert!(err.contains("storage is a list, not a mapping"), "{err}");
    let (code, _, _) = run(&["lint", "-"], &manifests);
    assert_ne!(code, Some(0));
}

#[test]
fn a_manifest_finding_is_told_once_at_its_object_s_line() {
    let manifests = cluster(
        "DockerMachineTemplate",
        "      {}\n",
        "  agentConfig: {nodeName: cp-0}\n",
        "",
    );
    let (_, out, _) = run(&["lint", "-o", "json", "-"], &manifests);
    let doc: Value = serde_json::from_str(&out).expect("json");
    let node_name: Vec<&Value> = doc["manifests"]
        .as_array()
        .expect("manifests")
        .iter()
        .filter(|f| f["id"] == "manifest-node-name-ignored")
        .collect();
    assert_eq!(node_name.len(), 1, "{node_name:?}");
    assert_eq!(
        node_name[0]["manifest"]["object"],
        "RKE2ControlPlane capi/demo-cp"
    );
    // The RKE2ControlPlane document starts on line 8 (its first key).
    assert_eq!(node_name[0]["manifest"]["line"], 8);
    for s in doc["secrets"].as_array().expect("secrets") {
        assert!(
            !s["findings"]
                .to_string()
                .contains("manifest-node-name-ignored")
        );
        // CAPD sets the provider ID itself.
        assert!(
            !s["findings"].to_string().contains("provider-id-missing"),
            "{s}"
        );
    }
    // GitHub annotations: one, on the manifest's line.
    let (_, out, _) = run(&["lint", "-o", "github", "-"], &manifests);
    assert_eq!(
        out.matches("manifest-node-name-ignored").count(),
        1,
        "{out}"
    );
}

#[test]
fn a_missing_control_plane_is_named_and_workers_join_the_endpoint() {
    let manifests = cluster("DockerMachineTemplate", "      {}\n", "", "");
    let start = manifests
        .find("---\napiVersion: controlplane")
        .expect("rcp");
    let end = manifests[start + 4..].find("---\n").expect("next") + start + 4;
    let without = format!("{}{}", &manifests[..start], &manifests[end..]);
    let (_, out, _) = run(&["lint", "-o", "json", "-"], &without);
    assert!(
        out.contains(
            "spec.controlPlaneRef names RKE2ControlPlane capi/demo-cp, which is not in the input"
        ),
        "{out}"
    );
    let (_, list, _) = run(&["render", "--seed", "1", "-"], &without);
    let (_, userdata, _) = run(&["decode", "-"], &list);
    assert!(
        userdata.contains("server: https://demo.example.com:9345"),
        "{userdata}"
    );
}

#[test]
fn a_flatcar_image_with_cloud_config_is_an_error() {
    let manifests = cluster(
        "AWSMachineTemplate",
        "      imageLookupBaseOS: flatcar-stable\n",
        "",
        "",
    );
    let (code, out, _) = run(&["lint", "-o", "json", "-"], &manifests);
    assert_eq!(code, Some(1));
    let doc: Value = serde_json::from_str(&out).expect("json");
    let flatcar = doc["manifests"]
        .as_array()
        .expect("manifests")
        .iter()
        .filter(|f| f["id"] == "manifest-flatcar-cloud-config")
        .count();
    // The control plane and the MachineDeployment.
    assert_eq!(flatcar, 2, "{out}");
}

#[test]
fn registry_credentials_ending_in_a_newline_are_an_error_where_rke2_pulls_its_images() {
    let registry = "      privateRegistriesConfig:\n        configs:\n          registry.example.com:\n            authSecret: {name: reg-auth, namespace: capi}\n";
    // `echo admin | base64`: the values end in a line break.
    let auth = "---\napiVersion: v1\nkind: Secret\nmetadata: {name: reg-auth, namespace: capi}\ndata:\n  username: YWRtaW4K\n  password: c2VjcmV0Cg==\n";
    let severity = |manifests: &str| {
        let (code, out, _) = run(&["lint", "-o", "json", "-"], manifests);
        assert!(!out.contains("secret\\n"), "the password never shows");
        let doc: Value = serde_json::from_str(&out).expect("json");
        let found: Vec<String> = doc["secrets"]
            .as_array()
            .expect("secrets")
            .iter()
            .flat_map(|s| s["findings"].as_array().into_iter().flatten())
            .filter(|f| f["id"] == "registry-auth-newline")
            .filter_map(|f| f["severity"].as_str().map(str::to_owned))
            .collect();
        (code, found)
    };
    // A registry of the workloads' images: their pulls fail, the node starts.
    let workloads = cluster("DockerMachineTemplate", "      {}\n", "", registry) + auth;
    let (code, found) = severity(&workloads);
    // The username and the password.
    assert_eq!(found, ["warning", "warning"], "{found:?}");
    assert_eq!(code, Some(0));
    // The registry RKE2 pulls its own images from: the node never starts.
    let system = cluster(
        "DockerMachineTemplate",
        "      {}\n",
        "",
        &registry.replace(
            "      privateRegistriesConfig:",
            "      agentConfig: {systemDefaultRegistry: registry.example.com}\n      privateRegistriesConfig:",
        ),
    )
    .replacen("      agentConfig: {}\n", "", 1)
        + auth;
    let (code, found) = severity(&system);
    assert_eq!(found, ["error", "error"], "{found:?}");
    assert_eq!(code, Some(1));
}

/// The project's ClusterClass example.
fn clusterclass() -> String {
    std::fs::read_to_string(testdata().join("../examples/preview/clusterclass.yaml"))
        .expect("the example")
}

#[test]
fn a_clusterclass_input_is_gated_like_a_classic_one() {
    let example = clusterclass();
    for gate in [&["render", "-"][..], &["lint", "-"][..], &["size", "-"][..]] {
        let (code, out, err) = run(gate, &example);
        assert_eq!(code, Some(0), "{gate:?}: {out}{err}");
    }
    // A class the input lacks: nothing renders; lint reports why (exit 1, the finding at the
    // Cluster's line), the other gates stop naming it.
    let missing = example.replacen(
        "    classRef:\n      name: rke2-aws\n",
        "    classRef:\n      name: rke2-azure\n",
        1,
    );
    let (code, out, err) = run(&["lint", "-o", "json", "-"], &missing);
    assert_eq!(code, Some(1), "{out}{err}");
    let report: Value = serde_json::from_str(&out).expect("json");
    let found = &report["manifests"][0];
    assert_eq!(found["id"], "topology-expansion-fails", "{out}");
    assert!(
        found["message"]
            .as_str()
            .is_some_and(|m| m.contains("ClusterClass default/rke2-azure")),
        "{out}"
    );
    assert!(found["manifest"]["line"].as_u64().is_some(), "{out}");
    for gate in [&["render", "-"][..], &["size", "-"][..]] {
        let (code, out, err) = run(gate, &missing);
        assert_ne!(code, Some(0), "{gate:?}: {out}{err}");
        assert!(err.contains("rke2-azure"), "{gate:?}: {err}");
    }
    // A variable value a patch writes where the CRD does not allow it: every gate fails, naming
    // the field and the patch.
    let bad = example.replacen(
        "    variables:\n    - name: extraTlsSan\n",
        "    variables:\n    - name: cni\n      value: flannel\n    - name: extraTlsSan\n",
        1,
    );
    for gate in [&["render", "-"][..], &["lint", "-"][..], &["size", "-"][..]] {
        let (code, out, err) = run(gate, &bad);
        assert_eq!(code, Some(1), "{gate:?}: {out}{err}");
        assert!(
            format!("{out}{err}").contains(
                "spec.serverConfig.cni: must be one of: none, calico, canal, cilium (written by patch cni of ClusterClass default/rke2-aws)"
            ),
            "{gate:?}: {out}{err}"
        );
    }
}

/// The ids of the findings of `lint -o json` on `manifests`, and its exit code.
fn lint_ids(manifests: &str) -> (Option<i32>, Vec<String>) {
    let (code, out, err) = run(&["lint", "-o", "json", "-"], manifests);
    let doc: Value = serde_json::from_str(&out).unwrap_or_else(|_| panic!("{out}{err}"));
    let mut ids: Vec<String> = doc["manifests"]
        .as_array()
        .into_iter()
        .flatten()
        .chain(
            doc["secrets"]
                .as_array()
                .into_iter()
                .flatten()
                .flat_map(|s| s["findings"].as_array().into_iter().flatten()),
        )
        .filter_map(|f| f["id"].as_str().map(str::to_owned))
        .collect();
    ids.sort();
    ids.dedup();
    (code, ids)
}

#[test]
fn a_provider_that_cannot_deliver_the_payload_fails_the_gate() {
    // CAPD parses the data as YAML: gzip never boots a node.
    let capd = cluster(
        "DockerMachineTemplate",
        "      {}\n",
        "  gzipUserData: true\n",
        "",
    );
    let (code, ids) = lint_ids(&capd);
    assert_eq!(code, Some(1), "{ids:?}");
    assert!(
        ids.contains(&"provider-refuses-payload".to_owned()),
        "{ids:?}"
    );
    let plain = cluster("DockerMachineTemplate", "      {}\n", "", "");
    assert!(
        !lint_ids(&plain)
            .1
            .contains(&"provider-refuses-payload".to_owned())
    );
    // CAPA stages Ignition in S3: an AWSCluster without a bucket creates no instance.
    let ignition = "  agentConfig: {format: ignition}\n";
    let aws = cluster("AWSMachineTemplate", "      instanceType: m6i.large\n", ignition, "")
        .replacen(
            "  controlPlaneRef:",
            "  infrastructureRef: {apiGroup: infrastructure.cluster.x-k8s.io, kind: AWSCluster, name: demo}\n  controlPlaneRef:",
            1,
        )
        + "---\napiVersion: infrastructure.cluster.x-k8s.io/v1beta2\nkind: AWSCluster\nmetadata: {name: demo, namespace: capi}\nspec: {region: eu-west-1}\n";
    let (code, ids) = lint_ids(&aws);
    assert_eq!(code, Some(1), "{ids:?}");
    assert!(
        ids.contains(&"provider-refuses-payload".to_owned()),
        "{ids:?}"
    );
    let with_bucket = aws.replace(
        "spec: {region: eu-west-1}",
        "spec: {region: eu-west-1, s3Bucket: {name: boot-data}}",
    );
    assert!(
        !lint_ids(&with_bucket)
            .1
            .contains(&"provider-refuses-payload".to_owned())
    );
    // A size gate fails too: the provider delivers nothing, whatever fits. `render` writes
    // what CAPRKE2 writes, and says the error.
    for refused in [&capd, &aws] {
        let (code, _, err) = run(&["size", "-"], refused);
        assert_eq!(code, Some(1), "size: {err}");
        let (code, _, err) = run(&["render", "-"], refused);
        assert_eq!(code, Some(0), "render: {err}");
        assert!(err.contains("provider-refuses-payload"), "{err}");
    }
    for fine in [&plain, &with_bucket] {
        let (code, _, err) = run(&["size", "-"], fine);
        assert_eq!(code, Some(0), "size: {err}");
    }
}

#[test]
fn an_api_version_the_crds_do_not_serve_is_refused_before_rendering() {
    let served = cluster("DockerMachineTemplate", "      {}\n", "", "");
    assert!(
        !lint_ids(&served)
            .1
            .contains(&"manifest-api-version-not-served".to_owned())
    );
    let old = served.replacen(
        "apiVersion: controlplane.cluster.x-k8s.io/v1beta2",
        "apiVersion: controlplane.cluster.x-k8s.io/v1alpha1",
        1,
    );
    let (code, ids) = lint_ids(&old);
    assert_eq!(code, Some(1));
    assert!(
        ids.contains(&"manifest-api-version-not-served".to_owned()),
        "{ids:?}"
    );
    let (code, _, err) = run(&["render", "-"], &old);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("v1alpha1 is not served"), "{err}");
}

#[test]
fn a_literal_provider_id_every_replica_shares_is_an_error() {
    let literal = "      kubelet: {extraArgs: [\"provider-id=aws:///eu-west-1a/i-0abc\"]}\n";
    let shared = cluster("DockerMachineTemplate", "      {}\n", "", "").replace(
        "      agentConfig: {}\n",
        &format!("      agentConfig:\n  {literal}"),
    );
    let (code, ids) = lint_ids(&shared);
    assert_eq!(code, Some(1), "{ids:?}");
    assert!(
        ids.contains(&"manifest-provider-id-literal".to_owned()),
        "{ids:?}"
    );
    // Filled in at boot from the instance metadata: per machine.
    let per_machine = shared.replace(
        "provider-id=aws:///eu-west-1a/i-0abc",
        "provider-id=aws:///{{ ds.meta_data.placement.availability_zone }}/{{ ds.meta_data.instance_id }}",
    );
    assert!(
        !lint_ids(&per_machine)
            .1
            .contains(&"manifest-provider-id-literal".to_owned())
    );
}

#[test]
fn a_manifest_the_crds_cel_rules_refuse_fails_lint_and_render() {
    // CAPRKE2's CRDs: additionalUserData takes config or data, not both.
    let both = "  agentConfig:\n    additionalUserData:\n      config: \"#cloud-config\\nruncmd: [date]\\n\"\n      data: {a: b}\n";
    let refused = cluster("DockerMachineTemplate", "      {}\n", both, "");
    let (code, out, err) = run(&["lint", "-o", "json", "-"], &refused);
    assert_eq!(code, Some(1), "{err}");
    let doc: Value = serde_json::from_str(&out).expect("json");
    let found: Vec<&Value> = doc["manifests"]
        .as_array()
        .expect("manifest findings")
        .iter()
        .filter(|f| f["id"] == "manifest-schema" && f["severity"] == "error")
        .collect();
    assert!(
        found.iter().any(|f| f["message"]
            .as_str()
            .is_some_and(|m| m.contains("spec.agentConfig.additionalUserData")
                && m.contains("Only config or data could be populated at once"))
            && f["manifest"]["line"] == 16),
        "{out}"
    );
    let (code, _, err) = run(&["render", "-"], &refused);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("Only config or data"), "{err}");
    // One of the two is admitted.
    let one = cluster(
        "DockerMachineTemplate",
        "      {}\n",
        "  agentConfig:\n    additionalUserData:\n      config: \"#cloud-config\\nruncmd: [date]\\n\"\n",
        "",
    );
    let (code, out, err) = run(&["lint", "-o", "json", "-"], &one);
    assert!(!out.contains("Only config or data"), "{out}{err}");
    assert_ne!(code, Some(2), "{err}");
}

#[test]
fn what_caprke2_s_webhook_refuses_fails_lint_and_render() {
    let zero = cluster("DockerMachineTemplate", "      {}\n", "", "").replacen(
        "  replicas: 1\n",
        "  replicas: 0\n",
        1,
    );
    let (code, ids) = lint_ids(&zero);
    assert_eq!(code, Some(1), "{ids:?}");
    assert!(
        ids.contains(&"manifest-webhook-refuses".to_owned()),
        "{ids:?}"
    );
    // The control plane is never created: nothing renders (exit 2, the reason said).
    let (code, _, err) = run(&["render", "-"], &zero);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("spec.replicas: cannot be less than or equal to 0"),
        "{err}"
    );
    let one = cluster("DockerMachineTemplate", "      {}\n", "", "");
    assert!(
        !lint_ids(&one)
            .1
            .contains(&"manifest-webhook-refuses".to_owned())
    );
    // `registrationMethod: address` without the address: refused on create
    // (`validateRegistrationMethod`), so nothing renders either.
    let no_address = cluster(
        "DockerMachineTemplate",
        "      {}\n",
        "  registrationMethod: address\n",
        "",
    );
    let (code, ids) = lint_ids(&no_address);
    assert_eq!(code, Some(1), "{ids:?}");
    assert!(ids.contains(&"manifest-registration-address-missing".to_owned()));
    let (code, out, err) = run(&["render", "-"], &no_address);
    assert_eq!(code, Some(2), "{err}");
    assert!(out.is_empty(), "{out}");
    assert!(err.contains("admission webhook refuses"), "{err}");
    // Ignition with a gzip file: the webhook refuses the control plane, which is never
    // created. One error for one cause, and no Secret (the workers wait for it).
    let gzip = cluster(
        "DockerMachineTemplate",
        "      {}\n",
        "  agentConfig:\n    format: ignition\n  files:\n  - {path: /etc/x, content: H4sIAAAAAAAA, encoding: gzip+base64}\n",
        "",
    );
    let (code, ids) = lint_ids(&gzip);
    assert_eq!(code, Some(1), "{ids:?}");
    assert_eq!(
        ids.iter()
            .filter(|id| matches!(
                id.as_str(),
                "manifest-webhook-refuses" | "manifest-render-fails"
            ))
            .collect::<Vec<_>>(),
        ["manifest-webhook-refuses"],
        "{ids:?}"
    );
    let (code, out, err) = run(&["render", "-o", "json", "-"], &gzip);
    assert_eq!(code, Some(2), "{err}");
    assert!(out.is_empty(), "{out}");
    assert!(
        err.contains("nothing was rendered: CAPRKE2 writes no bootstrap Secret"),
        "{err}"
    );
    assert_eq!(
        err.matches("error:").count(),
        2,
        "the refusal and the end: {err}"
    );
}

/// CAPRKE2's own private-registries example: its credentials end in a line break and its
/// client certificate expired in 2023. The pulls through that registry fail; RKE2's own images
/// come from their default registry, so the nodes start: warnings, not errors.
#[test]
fn caprke2_s_private_registries_example_warns_and_boots() {
    let text = std::fs::read_to_string(testdata().join(
        "../crates/payload-preview/tests/data/caprke2/v0.25.0-docker-cluster-template-private-registries.yaml",
    ))
    .expect("the example");
    let manifests = [
        ("${CLUSTER_NAME}", "demo"),
        ("${NAMESPACE}", "default"),
        ("${KUBERNETES_VERSION}", "v1.32.5"),
        ("${CONTROL_PLANE_MACHINE_COUNT}", "1"),
        ("${WORKER_MACHINE_COUNT}", "1"),
    ]
    .iter()
    .fold(text, |t, (var, value)| t.replace(var, value));
    let (code, out, err) = run(&["lint", "-o", "json", "-"], &manifests);
    assert_eq!(code, Some(0), "{err}{out}");
    let doc: Value = serde_json::from_str(&out).expect("json");
    let severities = |id: &str| -> Vec<String> {
        doc["secrets"]
            .as_array()
            .expect("secrets")
            .iter()
            .flat_map(|s| s["findings"].as_array().into_iter().flatten())
            .filter(|f| f["id"] == id)
            .filter_map(|f| f["severity"].as_str().map(str::to_owned))
            .collect()
    };
    for id in ["registry-auth-newline", "cert-expiry"] {
        let found = severities(id);
        assert!(!found.is_empty(), "{id}: {out}");
        assert!(found.iter().all(|s| s == "warning"), "{id}: {found:?}");
    }
    // Made the registry the workers' RKE2 pulls its own images from: errors on the worker.
    let system = manifests.replacen(
        "      agentConfig: {}",
        "      agentConfig: {systemDefaultRegistry: registry.belgai.de}",
        1,
    );
    assert_ne!(system, manifests);
    let (code, out, _) = run(&["lint", "-o", "json", "-"], &system);
    assert_eq!(code, Some(1), "{out}");
    let doc: Value = serde_json::from_str(&out).expect("json");
    for secret in doc["secrets"].as_array().expect("secrets") {
        let worker = secret["role"] == "agent";
        for f in secret["findings"].as_array().expect("findings") {
            if f["id"] == "registry-auth-newline" || f["id"] == "cert-expiry" {
                let expected = if worker { "error" } else { "warning" };
                assert_eq!(f["severity"], expected, "{secret}");
            }
        }
    }
}

#[test]
fn a_revision_the_webhooks_refuse_as_an_update_of_the_previous_fails_lint() {
    let dir = scratch();
    let write = |name: &str, text: &str| {
        let path = dir.path().join(name);
        std::fs::write(&path, text).expect("write");
        path.display().to_string()
    };
    let image = |tag: &str| format!("      {{customImage: \"kindest/node:{tag}\"}}\n");
    let before = write(
        "before.yaml",
        &cluster(
            "DockerMachineTemplate",
            &image("v1.32.5"),
            "  registrationMethod: internal-first\n",
            "",
        ),
    );
    let lint = |current: &str, previous: &str| -> (Option<i32>, Value, String) {
        let (code, out, err) = run(&["lint", current, "--previous", previous, "-o", "json"], "");
        let doc = serde_json::from_str(&out).unwrap_or(Value::Null);
        (code, doc, err)
    };
    let refusals = |doc: &Value| -> Vec<(String, Option<u64>)> {
        doc["manifests"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|f| f["id"] == "manifest-update-refused")
            .map(|f| {
                (
                    f["message"].as_str().unwrap_or("").to_owned(),
                    f["manifest"]["line"].as_u64(),
                )
            })
            .collect()
    };
    // The same revision again: no update refused.
    let same = write(
        "same.yaml",
        &cluster(
            "DockerMachineTemplate",
            &image("v1.32.5"),
            "  registrationMethod: internal-first\n",
            "",
        ),
    );
    let (code, doc, err) = lint(&same, &before);
    assert_eq!(code, Some(0), "{err}");
    assert!(refusals(&doc).is_empty(), "{doc}");
    // The template edited in place and the registration method changed: two refusals, each
    // at its field in the current file.
    let text = cluster(
        "DockerMachineTemplate",
        &image("v1.33.1"),
        "  registrationMethod: address\n  registrationAddress: demo.example.com\n",
        "",
    );
    let after = write("after.yaml", &text);
    let (code, doc, err) = lint(&after, &before);
    assert_eq!(code, Some(1), "{err}");
    let found = refusals(&doc);
    assert_eq!(found.len(), 2, "{found:?}");
    let line_of = |needle: &str| {
        u64::try_from(text.lines().position(|l| l.contains(needle)).expect(needle) + 1)
            .expect("small")
    };
    assert!(
        found
            .iter()
            .any(|(m, line)| m.contains("DockerMachineTemplate capi/demo-cp")
                && m.contains("customImage")
                && *line == Some(line_of("customImage"))),
        "{found:?}"
    );
    assert!(
        found
            .iter()
            .any(|(m, line)| m.contains("RKE2ControlPlane capi/demo-cp")
                && m.contains("registrationMethod")
                && *line == Some(line_of("registrationMethod"))),
        "{found:?}"
    );
    // Without --previous the same revision passes (a new cluster takes it).
    let (code, _, err) = run(&["lint", &after, "-o", "json"], "");
    assert_eq!(code, Some(0), "{err}");
    // Standard input cannot be read twice: one sentence, exit 2.
    let (code, out, err) = run(&["lint", "-", "--previous", &before], &text);
    assert_eq!(code, Some(2), "{err}");
    assert!(out.is_empty());
    assert!(err.contains("--previous compares files"), "{err}");
    // Nor with --from-cluster.
    let (code, _, err) = run(&["lint", "--from-cluster", "--previous", &before], "");
    assert_eq!(code, Some(2), "{err}");
}

#[test]
fn the_previous_revision_may_be_read_from_the_cluster() {
    let dir = scratch();
    let md = |cluster: &str| {
        serde_json::json!({
            "apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "MachineDeployment",
            "metadata": {"name": "md", "namespace": "capi"},
            "spec": {"clusterName": cluster, "template": {"spec": {"clusterName": cluster}}}
        })
    };
    let current = dir.path().join("current.yaml");
    std::fs::write(&current, serde_json::to_string(&md("other")).expect("JSON")).expect("write");
    // `kubectl get machinedeployment md -o json`: a live object, with and without the record
    // `kubectl apply` keeps.
    let mut live = md("demo");
    live["metadata"]["uid"] = Value::from("0b1c");
    live["metadata"]["resourceVersion"] = Value::from("42");
    live["status"] = serde_json::json!({"replicas": 1});
    let mut applied = live.clone();
    applied["metadata"]["annotations"] = serde_json::json!({
        "kubectl.kubernetes.io/last-applied-configuration": md("demo").to_string()
    });
    for (name, previous) in [("live.json", &live), ("applied.json", &applied)] {
        let path = dir.path().join(name);
        std::fs::write(&path, previous.to_string()).expect("write");
        let out = cmd()
            .args(["lint", "-o", "json", "--previous"])
            .arg(&path)
            .arg(&current)
            .output()
            .expect("run");
        let doc: Value = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|_| panic!("{}", String::from_utf8_lossy(&out.stderr)));
        assert!(
            doc["manifests"]
                .as_array()
                .into_iter()
                .flatten()
                .any(|f| f["id"] == "manifest-update-refused"
                    && f["message"]
                        .as_str()
                        .is_some_and(|m| m.contains("spec.clusterName"))),
            "{name}: {doc}"
        );
        assert_eq!(out.status.code(), Some(1), "{name}");
    }
}
