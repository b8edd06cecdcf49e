//! ClusterClass topologies: a Cluster with `spec.topology` renders to the same user data as
//! the same cluster written out by hand as classic manifests.

use payload_preview::{RenderError, RenderOptions, Source, render};
use rke2_payload::Check;

pub(crate) const CLASS_V1BETA2: &str = r#"
apiVersion: cluster.x-k8s.io/v1beta2
kind: ClusterClass
metadata: {name: rke2, namespace: fleet}
spec:
  controlPlane:
    templateRef: {apiVersion: controlplane.cluster.x-k8s.io/v1beta2, kind: RKE2ControlPlaneTemplate, name: cp}
    machineInfrastructure:
      templateRef: {apiVersion: infrastructure.cluster.x-k8s.io/v1beta2, kind: DockerMachineTemplate, name: cp-machine}
  infrastructure:
    templateRef: {apiVersion: infrastructure.cluster.x-k8s.io/v1beta2, kind: DockerClusterTemplate, name: infra}
  workers:
    machineDeployments:
    - class: general
      bootstrap:
        templateRef: {apiVersion: bootstrap.cluster.x-k8s.io/v1beta2, kind: RKE2ConfigTemplate, name: worker}
      infrastructure:
        templateRef: {apiVersion: infrastructure.cluster.x-k8s.io/v1beta2, kind: DockerMachineTemplate, name: worker-machine}
    - class: gpu-large
      bootstrap:
        templateRef: {apiVersion: bootstrap.cluster.x-k8s.io/v1beta2, kind: RKE2ConfigTemplate, name: worker}
      infrastructure:
        templateRef: {apiVersion: infrastructure.cluster.x-k8s.io/v1beta2, kind: DockerMachineTemplate, name: worker-machine}
  variables:
  - name: cni
    required: true
    schema: {openAPIV3Schema: {type: string, default: cilium}}
  - name: registration
    required: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          method: {type: string}
          sans: {type: array, items: {type: string}}
  - name: nodeLabels
    required: false
    schema: {openAPIV3Schema: {type: array, items: {type: string}}}
  patches:
  - name: cni
    definitions:
    - selector:
        apiVersion: controlplane.cluster.x-k8s.io/v1beta2
        kind: RKE2ControlPlaneTemplate
        matchResources: {controlPlane: true}
      jsonPatches:
      - {op: add, path: /spec/template/spec/serverConfig/cni, valueFrom: {variable: cni}}
      - {op: add, path: /spec/template/spec/registrationMethod, valueFrom: {variable: registration.method}}
      - {op: add, path: /spec/template/spec/serverConfig/tlsSan/-, valueFrom: {variable: "registration.sans[1]"}}
      - {op: replace, path: /spec/template/spec/serverConfig/etcd/backupConfig/retention, value: "9"}
      - {op: remove, path: /spec/template/spec/serverConfig/disableComponents}
  - name: worker-labels
    definitions:
    - selector:
        apiVersion: bootstrap.cluster.x-k8s.io/v1beta2
        kind: RKE2ConfigTemplate
        matchResources:
          machineDeploymentClass: {names: ["gpu-*"]}
      jsonPatches:
      - {op: add, path: /spec/template/spec/agentConfig/nodeLabels, valueFrom: {variable: nodeLabels}}
      - {op: add, path: /spec/template/spec/agentConfig/kubelet/extraArgs/-, value: "max-pods=250"}
---
apiVersion: controlplane.cluster.x-k8s.io/v1beta2
kind: RKE2ControlPlaneTemplate
metadata: {name: cp, namespace: fleet}
spec:
  template:
    spec:
      rolloutStrategy: {type: RollingUpdate}
      serverConfig:
        tlsSan: [first.example.com]
        etcd: {backupConfig: {retention: "5"}}
        disableComponents: {kubernetesComponents: [cloudController]}
---
apiVersion: infrastructure.cluster.x-k8s.io/v1beta2
kind: DockerClusterTemplate
metadata: {name: infra, namespace: fleet}
spec: {template: {spec: {}}}
---
apiVersion: infrastructure.cluster.x-k8s.io/v1beta2
kind: DockerMachineTemplate
metadata: {name: cp-machine, namespace: fleet}
spec: {template: {spec: {customImage: kindest/node:v1.34.0}}}
---
apiVersion: infrastructure.cluster.x-k8s.io/v1beta2
kind: DockerMachineTemplate
metadata: {name: worker-machine, namespace: fleet}
spec: {template: {spec: {customImage: kindest/node:v1.34.0}}}
---
apiVersion: bootstrap.cluster.x-k8s.io/v1beta2
kind: RKE2ConfigTemplate
metadata: {name: worker, namespace: fleet}
spec:
  template:
    spec:
      agentConfig:
        kubelet: {extraArgs: [v=2]}
"#;

pub(crate) const CLUSTER_V1BETA2: &str = r#"
apiVersion: cluster.x-k8s.io/v1beta2
kind: Cluster
metadata: {name: demo, namespace: fleet}
spec:
  controlPlaneEndpoint: {host: demo.example.com, port: 6443}
  clusterNetwork:
    pods: {cidrBlocks: [10.45.0.0/16]}
    services: {cidrBlocks: [10.46.0.0/16]}
  topology:
    classRef: {name: rke2}
    version: v1.34.1+rke2r1
    controlPlane: {replicas: 3}
    variables:
    - name: registration
      value: {method: control-plane-endpoint, sans: [a.example.com, b.example.com]}
    - name: nodeLabels
      value: [pool=general]
    workers:
      machineDeployments:
      - {class: general, name: md-0, replicas: 2}
      - class: gpu-large
        name: md-gpu
        replicas: 1
        variables:
          overrides:
          - {name: nodeLabels, value: [pool=gpu]}
"#;

/// The same cluster, written out as Cluster API would create it.
const BY_HAND: &str = r#"
apiVersion: cluster.x-k8s.io/v1beta2
kind: Cluster
metadata: {name: demo, namespace: fleet}
spec:
  controlPlaneEndpoint: {host: demo.example.com, port: 6443}
  clusterNetwork:
    pods: {cidrBlocks: [10.45.0.0/16]}
    services: {cidrBlocks: [10.46.0.0/16]}
  controlPlaneRef: {apiGroup: controlplane.cluster.x-k8s.io, kind: RKE2ControlPlane, name: demo-cp}
---
apiVersion: controlplane.cluster.x-k8s.io/v1beta2
kind: RKE2ControlPlane
metadata: {name: demo-cp, namespace: fleet}
spec:
  version: v1.34.1+rke2r1
  replicas: 3
  registrationMethod: control-plane-endpoint
  rolloutStrategy: {type: RollingUpdate}
  machineTemplate:
    spec:
      infrastructureRef: {apiGroup: infrastructure.cluster.x-k8s.io, kind: DockerMachineTemplate, name: cp-machine}
  serverConfig:
    cni: cilium
    tlsSan: [first.example.com, b.example.com]
    etcd: {backupConfig: {retention: "9"}}
---
apiVersion: infrastructure.cluster.x-k8s.io/v1beta2
kind: DockerMachineTemplate
metadata: {name: cp-machine, namespace: fleet}
spec: {template: {spec: {customImage: kindest/node:v1.34.0}}}
---
apiVersion: infrastructure.cluster.x-k8s.io/v1beta2
kind: DockerMachineTemplate
metadata: {name: worker-machine, namespace: fleet}
spec: {template: {spec: {}}}
---
apiVersion: cluster.x-k8s.io/v1beta2
kind: MachineDeployment
metadata: {name: demo-md-0, namespace: fleet}
spec:
  clusterName: demo
  replicas: 2
  template:
    spec:
      clusterName: demo
      version: v1.34.1+rke2r1
      bootstrap:
        configRef: {apiGroup: bootstrap.cluster.x-k8s.io, kind: RKE2ConfigTemplate, name: general}
      infrastructureRef: {apiGroup: infrastructure.cluster.x-k8s.io, kind: DockerMachineTemplate, name: worker-machine}
---
apiVersion: bootstrap.cluster.x-k8s.io/v1beta2
kind: RKE2ConfigTemplate
metadata: {name: general, namespace: fleet}
spec:
  template:
    spec:
      agentConfig:
        kubelet: {extraArgs: [v=2]}
---
apiVersion: cluster.x-k8s.io/v1beta2
kind: MachineDeployment
metadata: {name: demo-md-gpu, namespace: fleet}
spec:
  clusterName: demo
  replicas: 1
  template:
    spec:
      clusterName: demo
      version: v1.34.1+rke2r1
      bootstrap:
        configRef: {apiGroup: bootstrap.cluster.x-k8s.io, kind: RKE2ConfigTemplate, name: gpu}
      infrastructureRef: {apiGroup: infrastructure.cluster.x-k8s.io, kind: DockerMachineTemplate, name: worker-machine}
---
apiVersion: bootstrap.cluster.x-k8s.io/v1beta2
kind: RKE2ConfigTemplate
metadata: {name: gpu, namespace: fleet}
spec:
  template:
    spec:
      agentConfig:
        nodeLabels: [pool=gpu]
        kubelet: {extraArgs: [v=2, max-pods=250]}
"#;

pub(crate) fn options() -> RenderOptions {
    RenderOptions::new()
        .with_seed(7)
        .with_token("a-fixed-token-for-the-comparison")
}

/// The user data of each rendered Secret; the inputs must be valid for their API schemas.
fn userdata(sources: &[Source<'_>]) -> Vec<(String, String)> {
    let preview = render(sources, &options()).expect("renders");
    let schema: Vec<&str> = preview
        .findings
        .iter()
        .filter(|f| f.check == Check::ManifestSchema)
        .map(|f| f.message.as_str())
        .collect();
    assert!(schema.is_empty(), "{schema:#?}");
    preview
        .secrets
        .iter()
        .map(|s| {
            (
                format!("{:?}", s.role),
                String::from_utf8(s.userdata.clone()).expect("text"),
            )
        })
        .collect()
}

#[test]
fn a_topology_renders_the_user_data_of_the_same_cluster_written_by_hand() {
    let expanded = userdata(&[
        Source {
            name: "class.yaml",
            bytes: CLASS_V1BETA2.as_bytes(),
        },
        Source {
            name: "cluster.yaml",
            bytes: CLUSTER_V1BETA2.as_bytes(),
        },
    ]);
    let by_hand = userdata(&[Source {
        name: "by-hand.yaml",
        bytes: BY_HAND.as_bytes(),
    }]);
    let roles: Vec<&str> = expanded.iter().map(|(r, _)| r.as_str()).collect();
    assert_eq!(roles, ["Init", "Server", "Agent", "Agent"]);
    assert_eq!(expanded.len(), by_hand.len());
    for ((role, got), (_, want)) in expanded.iter().zip(&by_hand) {
        assert_eq!(got, want, "{role}");
    }
    // What the patches did shows in the user data.
    let init = &expanded[0].1;
    assert!(init.contains("cni:\n        - cilium"), "{init}");
    assert!(init.contains("- b.example.com"));
    assert!(!init.contains("disable-cloud-controller"));
    assert!(expanded[3].1.contains("pool=gpu"));
    assert!(!expanded[2].1.contains("pool="));
    assert!(!expanded[2].1.contains("max-pods"));
}

#[test]
fn the_topology_of_a_v1beta1_class_expands_too() {
    let class = CLASS_V1BETA2
        .replace("cluster.x-k8s.io/v1beta2\nkind: ClusterClass", "cluster.x-k8s.io/v1beta1\nkind: ClusterClass")
        .replace("    templateRef: {apiVersion: controlplane", "    ref: {apiVersion: controlplane")
        .replace("      templateRef: {apiVersion: infrastructure.cluster.x-k8s.io/v1beta2, kind: DockerMachineTemplate, name: cp-machine}", "      ref: {apiVersion: infrastructure.cluster.x-k8s.io/v1beta2, kind: DockerMachineTemplate, name: cp-machine}")
        .replace("    templateRef: {apiVersion: infrastructure.cluster.x-k8s.io/v1beta2, kind: DockerClusterTemplate", "    ref: {apiVersion: infrastructure.cluster.x-k8s.io/v1beta2, kind: DockerClusterTemplate")
        .replace("      bootstrap:\n        templateRef:", "      template:\n        bootstrap:\n          ref:")
        .replace("      infrastructure:\n        templateRef: {apiVersion: infrastructure.cluster.x-k8s.io/v1beta2, kind: DockerMachineTemplate, name: worker-machine}", "        infrastructure:\n          ref: {apiVersion: infrastructure.cluster.x-k8s.io/v1beta2, kind: DockerMachineTemplate, name: worker-machine}");
    let cluster = CLUSTER_V1BETA2
        .replace(
            "cluster.x-k8s.io/v1beta2\nkind: Cluster",
            "cluster.x-k8s.io/v1beta1\nkind: Cluster",
        )
        .replace("classRef: {name: rke2}", "class: rke2");
    let expanded = userdata(&[
        Source {
            name: "class.yaml",
            bytes: class.as_bytes(),
        },
        Source {
            name: "cluster.yaml",
            bytes: cluster.as_bytes(),
        },
    ]);
    let by_hand = userdata(&[Source {
        name: "by-hand.yaml",
        bytes: BY_HAND.as_bytes(),
    }]);
    assert_eq!(expanded, by_hand);
}

fn findings_of(cluster: &str) -> Vec<(Check, String)> {
    let preview = render(
        &[
            Source {
                name: "class.yaml",
                bytes: CLASS_V1BETA2.as_bytes(),
            },
            Source {
                name: "cluster.yaml",
                bytes: cluster.as_bytes(),
            },
        ],
        &options(),
    )
    .expect("a preview with findings");
    preview
        .findings
        .iter()
        .filter(|f| f.is_refusal())
        .map(|f| (f.check, f.message.clone()))
        .collect()
}

#[test]
fn what_keeps_a_topology_from_expanding_is_a_refusal_that_names_it() {
    let cases = [
        (
            CLUSTER_V1BETA2.replace("    - name: registration\n      value: {method: control-plane-endpoint, sans: [a.example.com, b.example.com]}\n", ""),
            Check::TopologyVariableInvalid,
            "required variable registration",
        ),
        (
            CLUSTER_V1BETA2.replace("- name: nodeLabels\n      value: [pool=general]", "- name: nodeLabelz\n      value: [pool=general]"),
            Check::TopologyVariableInvalid,
            "nodeLabelz",
        ),
        (
            CLUSTER_V1BETA2.replace("classRef: {name: rke2}", "classRef: {name: rke3}"),
            Check::TopologyExpansionFails,
            "ClusterClass fleet/rke3",
        ),
        (
            CLUSTER_V1BETA2.replace("class: gpu-large", "class: gpu-small"),
            Check::TopologyExpansionFails,
            "gpu-small",
        ),
        (
            CLUSTER_V1BETA2.replace("sans: [a.example.com, b.example.com]", "sans: [a.example.com]"),
            Check::TopologyExpansionFails,
            "patch cni",
        ),
    ];
    for (cluster, check, named) in cases {
        let found = findings_of(&cluster);
        assert!(
            found.iter().any(|(c, m)| *c == check && m.contains(named)),
            "{named}: {found:?}"
        );
    }
}

#[test]
fn a_replace_of_a_path_the_template_lacks_fails_naming_the_patch() {
    let class = CLASS_V1BETA2.replace("etcd: {backupConfig: {retention: \"5\"}}", "etcd: {}");
    let preview = render(
        &[
            Source {
                name: "class.yaml",
                bytes: class.as_bytes(),
            },
            Source {
                name: "cluster.yaml",
                bytes: CLUSTER_V1BETA2.as_bytes(),
            },
        ],
        &options(),
    )
    .expect("a preview");
    assert!(preview.secrets.is_empty());
    let f = preview
        .findings
        .iter()
        .find(|f| f.check == Check::TopologyExpansionFails)
        .expect("a finding");
    assert!(f.message.contains("patch cni"), "{}", f.message);
    assert!(
        f.message
            .contains("/spec/template/spec/serverConfig/etcd/backupConfig/retention")
    );
}

#[test]
fn an_external_patch_is_refused_by_name() {
    let class = CLASS_V1BETA2.replace(
        "  patches:\n",
        "  patches:\n  - name: from-extension\n    external: {generatePatchesExtension: generate.my-extension}\n",
    );
    let err = render(
        &[
            Source {
                name: "class.yaml",
                bytes: class.as_bytes(),
            },
            Source {
                name: "cluster.yaml",
                bytes: CLUSTER_V1BETA2.as_bytes(),
            },
        ],
        &options(),
    )
    .expect_err("refused");
    assert!(matches!(err, RenderError::Unexpandable { .. }));
    let message = err.to_string();
    assert!(message.contains("from-extension"), "{message}");
    assert!(message.contains("ClusterClass fleet/rke2"), "{message}");
}

/// A patch whose value is a Go template (conditionals, ranges, Sprig) and whose `enabledIf` is
/// one, inserted before the class's other patches.
fn templated_class() -> String {
    CLASS_V1BETA2.replace(
        "  patches:\n",
        r#"  patches:
  - name: templated
    enabledIf: '{{ eq .cni "cilium" }}'
    definitions:
    - selector:
        apiVersion: bootstrap.cluster.x-k8s.io/v1beta2
        kind: RKE2ConfigTemplate
        matchResources:
          machineDeploymentClass: {names: ["*"]}
      jsonPatches:
      - op: add
        path: /spec/template/spec/agentConfig/kubelet/extraArgs/-
        valueFrom:
          template: 'node-labels={{ .builtin.machineDeployment.topologyName }}-{{ upper .builtin.cluster.name }}{{ range $i, $c := .builtin.cluster.network.pods }},pods{{ $i }}={{ $c }}{{ end }}{{ if gt (int .builtin.machineDeployment.replicas) 1 }},ha=yes{{ end }}'
"#,
    )
}

#[test]
fn template_values_and_enabled_if_render_as_go_and_sprig_would() {
    let class = templated_class();
    let expanded = userdata(&[
        Source {
            name: "class.yaml",
            bytes: class.as_bytes(),
        },
        Source {
            name: "cluster.yaml",
            bytes: CLUSTER_V1BETA2.as_bytes(),
        },
    ]);
    let by_hand = BY_HAND
        .replace(
            "        kubelet: {extraArgs: [v=2]}",
            "        kubelet: {extraArgs: [v=2, \"node-labels=md-0-DEMO,pods0=10.45.0.0/16,ha=yes\"]}",
        )
        .replace(
            "kubelet: {extraArgs: [v=2, max-pods=250]}",
            "kubelet: {extraArgs: [v=2, \"node-labels=md-gpu-DEMO,pods0=10.45.0.0/16\", max-pods=250]}",
        );
    let by_hand = userdata(&[Source {
        name: "by-hand.yaml",
        bytes: by_hand.as_bytes(),
    }]);
    assert!(
        expanded[2]
            .1
            .contains("node-labels=md-0-DEMO,pods0=10.45.0.0/16,ha=yes")
    );
    assert_eq!(expanded, by_hand);

    // With another CNI the patch is not enabled.
    let canal = CLUSTER_V1BETA2.replacen(
        "    variables:\n",
        "    variables:\n    - name: cni\n      value: canal\n",
        1,
    );
    let expanded = userdata(&[
        Source {
            name: "class.yaml",
            bytes: class.as_bytes(),
        },
        Source {
            name: "cluster.yaml",
            bytes: canal.as_bytes(),
        },
    ]);
    assert!(expanded.iter().all(|(_, u)| !u.contains("node-labels=md")));
}

#[test]
fn a_template_function_the_preview_lacks_is_refused_by_name() {
    let class = templated_class().replace(
        "{{ upper .builtin.cluster.name }}",
        "{{ semver \"1.2.3\" }}",
    );
    let found = findings_of_class(&class, CLUSTER_V1BETA2);
    assert!(
        found
            .iter()
            .any(|(c, m)| *c == Check::TopologyExpansionFails
                && m.contains("semver")
                && m.contains("patch templated")),
        "{found:?}"
    );
}

#[test]
fn a_failing_template_names_the_patch_but_never_a_variable_s_value() {
    // `fail` with a variable in its message, ranging over a string, comparing a list with a map:
    // Go would print the values; a variable may hold a secret.
    for template in [
        "{{ fail (printf \"no %s\" .registration.method) }}",
        "{{ range .registration.method }}x{{ end }}",
        "{{ eq .registration.sans .registration }}",
    ] {
        let class = templated_class().replace("{{ upper .builtin.cluster.name }}", template);
        let found = findings_of_class(&class, CLUSTER_V1BETA2);
        assert!(
            found
                .iter()
                .any(|(c, m)| *c == Check::TopologyExpansionFails && m.contains("patch templated")),
            "{template}: {found:?}"
        );
        for (_, m) in &found {
            for value in ["control-plane-endpoint", "a.example.com", "b.example.com"] {
                assert!(!m.contains(value), "{template}: {m}");
            }
        }
    }
}

#[test]
fn a_variable_value_is_checked_against_its_schema_with_the_field_named() {
    let cluster = CLUSTER_V1BETA2.replace("method: control-plane-endpoint", "method: 5");
    let found = findings_of_class(CLASS_V1BETA2, &cluster);
    assert!(
        found
            .iter()
            .any(|(c, m)| *c == Check::TopologyVariableInvalid
                && m.contains("variable registration.method")
                && m.contains("string")),
        "{found:?}"
    );
}

fn findings_of_class(class: &str, cluster: &str) -> Vec<(Check, String)> {
    let preview = render(
        &[
            Source {
                name: "class.yaml",
                bytes: class.as_bytes(),
            },
            Source {
                name: "cluster.yaml",
                bytes: cluster.as_bytes(),
            },
        ],
        &options(),
    )
    .expect("a preview with findings");
    preview
        .findings
        .iter()
        .filter(|f| f.is_refusal())
        .map(|f| (f.check, f.message.clone()))
        .collect()
}
