//! What an infrastructure provider does with the payload, and needs for it, read from the
//! manifests: CAPTF's modules (the delivery its machine module picks, the distribution its
//! cluster module is told), CAPL's object store, CAPK's YAML parse, and one finding where the
//! provider refuses a gzipped payload.

use crate::common::*;

use serde_json::Value;

/// A cluster whose infrastructure cluster is `infra_cluster` (kind and `spec`, flow YAML, and
/// any `metadata` fields after the name), whose control plane and one MachineDeployment run on
/// the infrastructure machine template `machine_kind` with `spec.template.spec` `machine_spec`
/// (flow YAML); `rcp_extra` goes into the RKE2ControlPlane's spec (two spaces in).
fn manifests(infra_cluster: (&str, &str, &str), machine: (&str, &str), rcp_extra: &str) -> String {
    let (cluster_kind, cluster_spec, cluster_meta) = infra_cluster;
    let (machine_kind, machine_spec) = machine;
    format!(
        "apiVersion: cluster.x-k8s.io/v1beta2
kind: Cluster
metadata: {{name: demo, namespace: capi}}
spec:
  controlPlaneEndpoint: {{host: demo.example.com, port: 6443}}
  infrastructureRef: {{apiGroup: infrastructure.cluster.x-k8s.io, kind: {cluster_kind}, name: demo}}
  controlPlaneRef: {{apiGroup: controlplane.cluster.x-k8s.io, kind: RKE2ControlPlane, name: demo-cp}}
---
apiVersion: infrastructure.cluster.x-k8s.io/v1alpha1
kind: {cluster_kind}
metadata: {{name: demo, namespace: capi{cluster_meta}}}
spec: {cluster_spec}
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
      infrastructureRef: {{apiGroup: infrastructure.cluster.x-k8s.io, kind: {machine_kind}, name: demo-cp}}
---
apiVersion: infrastructure.cluster.x-k8s.io/v1alpha1
kind: {machine_kind}
metadata: {{name: demo-cp, namespace: capi}}
spec:
  template:
    spec: {machine_spec}
---
apiVersion: bootstrap.cluster.x-k8s.io/v1beta2
kind: RKE2ConfigTemplate
metadata: {{name: demo-md, namespace: capi}}
spec:
  template:
    spec:
      agentConfig: {{}}
---
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
      infrastructureRef: {{apiGroup: infrastructure.cluster.x-k8s.io, kind: {machine_kind}, name: demo-cp}}
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

/// The clouds each Secret of `size -o json` was judged against, and the exit code.
fn judged(manifests: &str) -> (Option<i32>, Vec<Vec<String>>) {
    let (code, out, err) = run(&["size", "-o", "json", "-"], manifests);
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

/// The findings (id, message) of `lint -o json` on `input` with `extra` arguments, every
/// Secret's and the manifests', and its exit code.
fn lint(input: &str, extra: &[&str]) -> (Option<i32>, Vec<(String, String)>) {
    let mut args = vec!["lint", "-o", "json", "-"];
    args.extend_from_slice(extra);
    let (code, out, err) = run(&args, input);
    let doc: Value = serde_json::from_str(&out).unwrap_or_else(|_| panic!("{out}{err}"));
    let found = doc["manifests"]
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
        .map(|f| {
            (
                f["id"].as_str().unwrap_or_default().to_owned(),
                f["message"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect();
    (code, found)
}

fn has(found: &[(String, String)], id: &str) -> bool {
    found.iter().any(|(i, _)| i == id)
}

const AWS_CLUSTER: &str = "ghcr.io/captf-io/module-images/aws-cluster:v0.1.0-opentofu";
const AWS_MACHINE: &str = "ghcr.io/captf-io/module-images/aws-machine:v0.1.0-opentofu";

fn captf(distribution: &str, machine_variables: &str) -> String {
    manifests(
        (
            "TerraformCluster",
            &format!(
                "{{source: {{image: '{AWS_CLUSTER}'}}, variables: {{vpc_id: vpc-1{distribution}}}}}"
            ),
            "",
        ),
        (
            "TerraformMachineTemplate",
            &format!("{{source: {{image: '{AWS_MACHINE}'}}{machine_variables}}}"),
        ),
        "",
    )
}

#[test]
fn a_terraform_cluster_not_told_rke2_opens_no_supervisor_port() {
    let unset = captf("", "");
    let (code, found) = lint(&unset, &[]);
    assert_eq!(code, Some(1), "{found:?}");
    let (_, message) = found
        .iter()
        .find(|(id, _)| id == "manifest-infrastructure-not-rke2")
        .unwrap_or_else(|| panic!("{found:?}"));
    assert!(
        message.starts_with("TerraformCluster capi/demo")
            && message.contains("spec.variables.distribution is not set (default kubeadm)")
            && message.contains("9345")
            && message.contains("no node can join"),
        "{message}"
    );
    // It is the infrastructure's fault, not the payload's: one id, told once.
    assert!(!has(&found, "provider-refuses-payload"), "{found:?}");
    assert_eq!(
        found
            .iter()
            .filter(|(id, _)| id == "manifest-infrastructure-not-rke2")
            .count(),
        1
    );
    let kubeadm = captf(", distribution: kubeadm", "");
    let (_, found) = lint(&kubeadm, &[]);
    assert!(
        found
            .iter()
            .any(|(id, m)| id == "manifest-infrastructure-not-rke2"
                && m.contains("spec.variables.distribution is kubeadm, not rke2")),
        "{found:?}"
    );
    let rke2 = captf(", distribution: rke2", "");
    let (code, found) = lint(&rke2, &[]);
    assert!(
        !has(&found, "manifest-infrastructure-not-rke2"),
        "{found:?}"
    );
    assert_ne!(code, Some(2), "{found:?}");
    // The previews are written either way: the payload is not at fault.
    let (code, out, err) = run(&["render", "-"], &unset);
    assert_eq!(code, Some(0), "{err}");
    assert!(out.contains("kind: Secret"), "{out}");
}

#[test]
fn size_judges_the_path_captf_s_aws_machine_module_picks() {
    // The default bootstrap_delivery stages the payload in S3: one path, not every cloud.
    let (code, clouds) = judged(&captf(", distribution: rke2", ""));
    assert_eq!(code, Some(0), "{clouds:?}");
    assert!(!clouds.is_empty());
    assert!(clouds.iter().all(|c| c == &["captf-aws-s3"]), "{clouds:?}");
    let inline = captf(
        ", distribution: rke2",
        ", variables: {bootstrap_delivery: inline}",
    );
    let (_, clouds) = judged(&inline);
    assert!(clouds.iter().all(|c| c == &["aws-user-data"]), "{clouds:?}");
    let (_, out, _) = run(&["size", "-"], &inline);
    assert!(
        out.contains("TerraformMachineTemplate capi/demo-cp") && out.contains("inline"),
        "{out}"
    );
}

/// A control plane whose payload carries a file of `bytes` hex digits that do not compress
/// much (an Ignition payload gzips its files).
fn big_file(bytes: usize) -> String {
    let mut state: u64 = 0x2545_f491_4f6c_dd1d;
    let content: String = (0..bytes)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            char::from_digit((state % 16) as u32, 16).unwrap_or('0')
        })
        .collect();
    format!("  files:\n  - path: /etc/big.txt\n    content: '{content}'\n")
}

#[test]
fn a_linode_cluster_with_an_object_store_takes_what_the_metadata_cannot() {
    let machine = (
        "LinodeMachineTemplate",
        "{region: us-ord, type: g6-standard-2}",
    );
    let without = manifests(
        ("LinodeCluster", "{region: us-ord}", ""),
        machine,
        &big_file(20_000),
    );
    let (code, clouds) = judged(&without);
    assert_eq!(code, Some(1), "{clouds:?}");
    assert!(clouds.iter().all(|c| c == &["linode"]), "{clouds:?}");
    let with = manifests(
        (
            "LinodeCluster",
            "{region: us-ord, objectStore: {credentialsRef: {name: bucket}}}",
            "",
        ),
        machine,
        &big_file(20_000),
    );
    let (code, clouds) = judged(&with);
    assert_eq!(code, Some(0), "{clouds:?}");
    assert!(
        clouds.iter().all(|c| c == &["linode-object-store"]),
        "{clouds:?}"
    );
    let (code, found) = lint(&with, &[]);
    assert!(!has(&found, "size-over-limit"), "{found:?}");
    assert_ne!(code, Some(2));
    // The pointer is a cloud-config #include: the control plane's Ignition payload keeps the
    // metadata limit (the workers' cloud-config does not).
    let ignition = manifests(
        (
            "LinodeCluster",
            "{region: us-ord, objectStore: {credentialsRef: {name: bucket}}}",
            "",
        ),
        machine,
        &(big_file(40_000) + "  agentConfig: {format: ignition}\n"),
    );
    let (code, clouds) = judged(&ignition);
    assert_eq!(code, Some(1), "{clouds:?}");
    assert_eq!(
        clouds,
        [
            vec!["linode".to_owned()],
            vec!["linode-object-store".to_owned()]
        ],
        "{clouds:?}"
    );
}

#[test]
fn capk_refuses_gzip_unless_its_cluster_is_externally_managed() {
    let machine = ("KubevirtMachineTemplate", "{virtualMachineTemplate: {}}");
    let gzip = "  gzipUserData: true\n";
    let owned = manifests(("KubevirtCluster", "{}", ""), machine, gzip);
    let (code, found) = lint(&owned, &[]);
    assert_eq!(code, Some(1), "{found:?}");
    assert!(
        found
            .iter()
            .any(|(id, m)| id == "provider-refuses-payload" && m.contains("CAPK")),
        "{found:?}"
    );
    assert!(!has(&found, "gzip-unsafe"), "{found:?}");
    // An externally managed KubevirtCluster: CAPK copies the data as it is, so the
    // transport's own verdict stands.
    let managed = manifests(
        (
            "KubevirtCluster",
            "{}",
            ", annotations: {cluster.x-k8s.io/managed-by: external}",
        ),
        machine,
        gzip,
    );
    let (_, found) = lint(&managed, &[]);
    assert!(!has(&found, "provider-refuses-payload"), "{found:?}");
    assert!(has(&found, "gzip-unsafe"), "{found:?}");
    let plain = manifests(("KubevirtCluster", "{}", ""), machine, "");
    let (_, found) = lint(&plain, &[]);
    assert!(!has(&found, "provider-refuses-payload"), "{found:?}");
}

#[test]
fn a_provider_that_refuses_gzip_is_one_finding_not_two() {
    for machine in [
        ("DockerMachineTemplate", "{}"),
        ("HarvesterMachineTemplate", "{}"),
    ] {
        let gzip = manifests(
            ("DockerCluster", "{}", ""),
            machine,
            "  gzipUserData: true\n",
        );
        let (code, found) = lint(&gzip, &[]);
        assert_eq!(code, Some(1), "{found:?}");
        assert!(has(&found, "provider-refuses-payload"), "{found:?}");
        assert!(!has(&found, "gzip-unsafe"), "{machine:?}: {found:?}");
        // The same from render's output read back with its annotations.
        let (code, rendered, err) = run(&["render", "-"], &gzip);
        // What CAPRKE2 writes is written (exit 0); the error is said on stderr.
        assert_eq!(code, Some(0), "{err}");
        assert!(err.contains("provider-refuses-payload"), "{err}");
        assert!(rendered.contains("kind: Secret"), "{rendered}");
        let (_, found) = lint(&rendered, &["--from-render"]);
        assert!(has(&found, "provider-refuses-payload"), "{found:?}");
        assert!(!has(&found, "gzip-unsafe"), "{machine:?}: {found:?}");
        // Read bare, nothing says which provider: the transport's verdict is all there is.
        let (_, found) = lint(&rendered, &["--cloud", "docker"]);
        assert!(has(&found, "gzip-unsafe"), "{machine:?}: {found:?}");
    }
}

#[test]
fn capz_s_azure_json_secret_is_made_at_run_time_not_missing() {
    // CAPZ writes `<AzureMachineTemplate>-azure-json` (keys control-plane-azure.json and
    // worker-node-azure.json) for every AzureMachineTemplate; CAPRKE2 reads it when it renders.
    let files = |secret: &str, key: &str| {
        format!(
            "  files:\n  - path: /etc/kubernetes/azure.json\n    owner: root:root\n    permissions: \"0644\"\n    contentFrom:\n      secret: {{name: {secret}, key: {key}}}\n"
        )
    };
    let machine = ("AzureMachineTemplate", "{vmSize: Standard_D2s_v3}");
    let severity = |manifests: &str| -> Vec<String> {
        let (code, out, err) = run(&["lint", "-o", "json", "-"], manifests);
        assert_ne!(code, Some(2), "{err}");
        let doc: Value = serde_json::from_str(&out).expect("JSON");
        doc["manifests"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|f| f["id"] == "manifest-missing-reference")
            .map(|f| f["severity"].as_str().unwrap_or("").to_owned())
            .collect()
    };
    let made = manifests(
        ("AzureCluster", "{location: westeurope}", ""),
        machine,
        &files("demo-cp-azure-json", "control-plane-azure.json"),
    );
    assert_eq!(severity(&made), ["info"]);
    let (_, found) = lint(&made, &[]);
    assert!(
        found
            .iter()
            .any(|(id, m)| id == "manifest-missing-reference"
                && m.contains("CAPZ creates at run time for AzureMachineTemplate capi/demo-cp")),
        "{found:?}"
    );
    // Another template's name, or a key CAPZ does not write: missing, as any other Secret.
    for (secret, key) in [
        ("demo-md-azure-json", "control-plane-azure.json"),
        ("demo-cp-azure-json", "azure.json"),
    ] {
        let missing = manifests(
            ("AzureCluster", "{location: westeurope}", ""),
            machine,
            &files(secret, key),
        );
        assert_eq!(severity(&missing), ["warning"], "{secret} {key}");
    }
}
