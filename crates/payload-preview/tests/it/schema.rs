//! API schema findings on manifests: every Cluster API and CAPRKE2 object is checked against its
//! CRD as the API server admits it, one finding per problem at the field's line; on the
//! objects a topology expansion makes, a bad value a patch wrote names the patch.

use payload_preview::{Source, render};
use rke2_payload::{Check, Finding};

use crate::topology::{CLASS_V1BETA2, CLUSTER_V1BETA2, options};

/// The `manifest-schema` findings of rendering `sources`.
fn schema_findings(sources: &[(&str, &str)]) -> Vec<Finding> {
    let sources: Vec<Source<'_>> = sources
        .iter()
        .map(|(name, text)| Source {
            name,
            bytes: text.as_bytes(),
        })
        .collect();
    let preview = render(&sources, &options()).expect("a preview");
    preview
        .findings
        .into_iter()
        .filter(|f| f.check == Check::ManifestSchema)
        .collect()
}

/// A cluster with mistakes on known lines (1-based, counted from the first line of the text).
const MISTAKES: &str = "apiVersion: cluster.x-k8s.io/v1beta2
kind: Cluster
metadata: {name: demo, namespace: capi}
spec:
  controlPlaneEndpoint: {host: demo.example.com, port: 6443}
  controlPlaneRef: {apiGroup: controlplane.cluster.x-k8s.io, kind: RKE2ControlPlane, name: demo-cp}
---
apiVersion: controlplane.cluster.x-k8s.io/v1beta2
kind: RKE2ControlPlane
metadata: {name: demo-cp, namespace: capi}
spec:
  version: v1.32.5+rke2r1
  replicas: three
  registrationMehod: internal-first
  rolloutStrategy: {type: RollingUpdate}
  machineTemplate:
    spec:
      infrastructureRef: {apiGroup: infrastructure.cluster.x-k8s.io, kind: DockerMachineTemplate, name: cp}
  serverConfig:
    cni: calico
    tlsSan:
    - demo.example.com
    etcd:
      backupConfig:
        retention: 5
---
apiVersion: cluster.x-k8s.io/v1beta2
kind: MachineDeployment
metadata: {name: demo-md, namespace: capi}
spec:
  clusterName: demo
  template:
    spec:
      clusterName: demo
      version: v1.32.5+rke2r1
      bootstrap:
        configRef: {apiGroup: bootstrap.cluster.x-k8s.io, kind: RKE2ConfigTemplate, name: demo-md}
---
apiVersion: bootstrap.cluster.x-k8s.io/v1beta2
kind: RKE2ConfigTemplate
metadata: {name: demo-md, namespace: capi}
spec:
  template:
    spec:
      agentConfig:
        format: cloudconfig
";

#[test]
fn each_mistake_is_one_finding_at_its_field_s_line_naming_what_is_allowed() {
    let found = schema_findings(&[("cluster.yaml", MISTAKES)]);
    let summary: Vec<(String, Option<u64>)> = found
        .iter()
        .map(|f| {
            let site = f.manifest.as_ref().expect("a manifest finding");
            assert_eq!(site.file, "cluster.yaml");
            (f.message.clone(), site.line)
        })
        .collect();
    let expect = [
        (
            "RKE2ControlPlane capi/demo-cp: spec.registrationMehod: is not a field of the schema (did you mean registrationMethod?)",
            14,
        ),
        (
            "RKE2ControlPlane capi/demo-cp: spec.replicas: must be of type integer, not a string",
            13,
        ),
        (
            "RKE2ControlPlane capi/demo-cp: spec.serverConfig.etcd.backupConfig.retention: must be of type string, not an integer",
            25,
        ),
        (
            // A missing field is reported where its parent is written.
            "MachineDeployment capi/demo-md: spec.template.spec.infrastructureRef: is required",
            33,
        ),
        (
            "RKE2ConfigTemplate capi/demo-md: spec.template.spec.agentConfig.format: must be one of: cloud-config, ignition",
            46,
        ),
    ];
    for (message, line) in expect {
        assert!(
            summary
                .iter()
                .any(|(m, l)| m.starts_with(message) && *l == Some(line)),
            "{message} at line {line}: {summary:#?}"
        );
    }
    assert_eq!(summary.len(), expect.len(), "{summary:#?}");
    // Where the schema came from, and never the value found.
    assert!(
        found
            .iter()
            .all(|f| f.message.contains("v0.25.0") || f.message.contains("v1.14.0")),
        "{summary:#?}"
    );
    assert!(found.iter().all(|f| !f.message.contains("three")));
    // The API server rejects such objects: a refusal, as for the other checks it makes.
    assert!(found.iter().all(Finding::is_refusal));
}

#[test]
fn what_the_defaults_and_webhooks_fill_in_is_no_mistake() {
    // A v1beta1 MachineDeployment without a selector (Cluster API's webhook makes it), a v1beta1
    // control plane naming its infrastructure the old way (CAPRKE2's webhook moves it into
    // machineTemplate), a Machine without the cluster-name label.
    let text = "apiVersion: cluster.x-k8s.io/v1beta1
kind: MachineDeployment
metadata: {name: md, namespace: capi}
spec:
  clusterName: demo
  template:
    spec:
      clusterName: demo
      bootstrap:
        configRef: {apiVersion: bootstrap.cluster.x-k8s.io/v1beta1, kind: RKE2ConfigTemplate, name: md}
      infrastructureRef: {apiVersion: infrastructure.cluster.x-k8s.io/v1beta1, kind: DockerMachineTemplate, name: md}
---
apiVersion: controlplane.cluster.x-k8s.io/v1beta1
kind: RKE2ControlPlane
metadata: {name: cp, namespace: capi}
spec:
  version: v1.32.5+rke2r1
  rolloutStrategy: {type: RollingUpdate}
  infrastructureRef: {apiVersion: infrastructure.cluster.x-k8s.io/v1beta1, kind: DockerMachineTemplate, name: cp}
---
apiVersion: bootstrap.cluster.x-k8s.io/v1beta1
kind: RKE2ConfigTemplate
metadata: {name: md, namespace: capi}
spec: {template: {spec: {}}}
";
    let found = schema_findings(&[("old.yaml", text)]);
    assert!(found.is_empty(), "{found:#?}");
    // Without the older field, nothing fills machineTemplate.infrastructureRef.
    let without = text.replace(
        "  infrastructureRef: {apiVersion: infrastructure.cluster.x-k8s.io/v1beta1, kind: DockerMachineTemplate, name: cp}\n",
        "",
    );
    let found = schema_findings(&[("old.yaml", &without)]);
    assert_eq!(found.len(), 1, "{found:#?}");
    assert!(
        found[0].message.starts_with(
            "RKE2ControlPlane capi/cp: spec.machineTemplate.infrastructureRef: is required"
        ),
        "{}",
        found[0].message
    );
}

#[test]
fn a_bad_value_a_patch_writes_names_the_patch_and_the_class_once() {
    let class = CLASS_V1BETA2.replace(
        "      - {op: replace, path: /spec/template/spec/serverConfig/etcd/backupConfig/retention, value: \"9\"}\n",
        "      - {op: replace, path: /spec/template/spec/serverConfig/etcd/backupConfig/retention, value: 9}\n      - {op: add, path: /spec/template/spec/serverConfig/tlsSAN, value: [c.example.com]}\n",
    );
    let found = schema_findings(&[("class.yaml", &class), ("cluster.yaml", CLUSTER_V1BETA2)]);
    let messages: Vec<&str> = found.iter().map(|f| f.message.as_str()).collect();
    assert_eq!(messages.len(), 2, "{messages:#?}");
    for field in [
        "spec.serverConfig.etcd.backupConfig.retention: must be of type string, not an integer",
        "spec.serverConfig.tlsSAN: is not a field of the schema (did you mean tlsSan?)",
    ] {
        assert!(
            messages
                .iter()
                .any(|m| m.starts_with("RKE2ControlPlane fleet/demo-")
                    && m.contains(field)
                    && m.contains("(written by patch cni of ClusterClass fleet/rke2)")),
            "{field}: {messages:#?}"
        );
    }
    // The class as written is valid: nothing is reported on its templates.
    let clean = schema_findings(&[
        ("class.yaml", CLASS_V1BETA2),
        ("cluster.yaml", CLUSTER_V1BETA2),
    ]);
    assert!(clean.is_empty(), "{clean:#?}");
}

#[test]
fn a_mistake_in_a_class_template_is_reported_on_the_template() {
    let class = CLASS_V1BETA2.replace(
        "      rolloutStrategy: {type: RollingUpdate}\n",
        "      rolloutStrategy: {type: RollingUpdate}\n      registrationMethod: internal-last\n",
    );
    let found = schema_findings(&[("class.yaml", &class), ("cluster.yaml", CLUSTER_V1BETA2)]);
    // The patch `cni` replaces registrationMethod on the expanded control plane; the template's
    // own value is what the API server rejects, on the template.
    assert_eq!(found.len(), 1, "{found:#?}");
    assert!(
        found[0].message.starts_with(
            "RKE2ControlPlaneTemplate fleet/cp: spec.template.spec.registrationMethod: must be one of: internal-first"
        ),
        "{}",
        found[0].message
    );
    assert_eq!(
        found[0].manifest.as_ref().map(|s| s.file.as_str()),
        Some("class.yaml")
    );
}
