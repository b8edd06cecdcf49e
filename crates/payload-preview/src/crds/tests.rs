//! Tests of the CRD and variable schemas.

use serde_json::{Value, json};

use super::*;

/// A test data file of CAPRKE2's examples (Apache-2.0, copied from the repository at the tag in
/// the file name; see `tests/data/caprke2/README.md`).
macro_rules! example {
    ($name:literal) => {
        include_str!(concat!("../../tests/data/caprke2/", $name))
    };
}

/// A value for a `${VAR}` placeholder of the examples that the schemas accept.
fn placeholder(name: &str) -> String {
    match name {
        "CONTROL_PLANE_MACHINE_COUNT" | "WORKER_MACHINE_COUNT" => "3".to_owned(),
        "CLUSTER_API_PORT" => "6443".to_owned(),
        "RKE2_VERSION" | "KUBERNETES_VERSION" => "v1.31.4+rke2r1".to_owned(),
        "KIND_IMAGE_VERSION" => "v1.31.4".to_owned(),
        "CIS_PROFILE" => "cis".to_owned(),
        _ => name.to_lowercase().replace('_', "-"),
    }
}

/// The documents of a YAML stream, with `${VAR}` placeholders replaced.
fn documents(text: &str) -> Vec<Value> {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let end = after.find('}').expect("a closed placeholder");
        out.push_str(&placeholder(&after[..end]));
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    serde_saphyr::from_multiple::<Value>(&out)
        .expect("the example is YAML")
        .into_iter()
        .filter(Value::is_object)
        .collect()
}

/// The messages of every covered object of a stream, and how many objects were covered.
fn check_stream(text: &str) -> (usize, Vec<String>) {
    let mut covered = 0;
    let mut problems = Vec::new();
    for object in documents(text) {
        let api_version = object["apiVersion"].as_str().unwrap_or_default();
        let kind = object["kind"].as_str().unwrap_or_default();
        if let Some(schema) = crd_schema(api_version, kind) {
            covered += 1;
            for violation in schema.validate(&object) {
                problems.push(format!("{}: {}", schema.source(), violation.message()));
            }
        }
    }
    (covered, problems)
}

/// Asserts that a stream has covered objects and no problem.
fn assert_clean(text: &str, expected_covered: usize) {
    let (covered, problems) = check_stream(text);
    assert!(problems.is_empty(), "{problems:#?}");
    assert_eq!(covered, expected_covered);
}

/// The problems of one object.
fn problems_of(object: &Value) -> Vec<Violation> {
    let schema = crd_schema(
        object["apiVersion"].as_str().unwrap(),
        object["kind"].as_str().unwrap(),
    )
    .expect("a covered kind");
    schema.validate(object)
}

/// A valid RKE2ControlPlane of v1beta2.
fn control_plane() -> Value {
    json!({
        "apiVersion": "controlplane.cluster.x-k8s.io/v1beta2",
        "kind": "RKE2ControlPlane",
        "metadata": {"name": "cp", "namespace": "default", "labels": {"cluster.x-k8s.io/cluster-name": "c"}},
        "spec": {
            "replicas": 3,
            "version": "v1.31.4+rke2r1",
            "registrationMethod": "control-plane-endpoint",
            "rolloutStrategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1}},
            "agentConfig": {"nodeLabels": ["a=b"]},
            "serverConfig": {"tlsSan": ["cp.example"], "cni": "calico"},
            "files": [{"path": "/etc/motd", "content": "hello", "owner": "root:root", "permissions": "0644"}],
            "machineTemplate": {"spec": {"infrastructureRef": {
                "apiGroup": "infrastructure.cluster.x-k8s.io", "kind": "DockerMachineTemplate", "name": "cp"}}}
        }
    })
}

#[test]
fn every_embedded_schema_compiles() {
    let covered = embedded::covered();
    assert_eq!(covered.len(), 18);
    for (api_version, kind) in &covered {
        let schema = crd_schema(api_version, kind).expect("compiles");
        assert!(
            schema.source().contains(kind.as_str()),
            "{}",
            schema.source()
        );
        assert!(!schema.origin().commit.is_empty());
    }
    for group in [
        "cluster.x-k8s.io",
        "controlplane.cluster.x-k8s.io",
        "bootstrap.cluster.x-k8s.io",
    ] {
        for version in ["v1beta1", "v1beta2"] {
            assert!(
                covered
                    .iter()
                    .any(|(a, _)| *a == format!("{group}/{version}")),
                "{group}/{version}"
            );
        }
    }
    let cluster = crd_schema("cluster.x-k8s.io/v1beta2", "Cluster").unwrap();
    assert_eq!(
        cluster.source(),
        "cluster.x-k8s.io/v1beta2 Cluster from Cluster API v1.14.0"
    );
    assert_eq!(
        cluster.origin().commit,
        "560d4acf507bc7cac34b2da449fa5cd53eaeb149"
    );
    assert!(crd_schema("cluster.x-k8s.io/v1beta2", "Secret").is_none());
    assert!(crd_schema("v1", "Secret").is_none());
    assert!(crd_schema("cluster.x-k8s.io/v1alpha4", "Cluster").is_none());
    // Compiled once: the same address each time.
    assert!(std::ptr::eq(
        cluster,
        crd_schema("cluster.x-k8s.io/v1beta2", "Cluster").unwrap()
    ));
}

#[test]
fn caprke2_examples_v1beta2_pass() {
    assert_clean(example!("v0.25.0-docker-cluster-template.yaml"), 4);
    assert_clean(example!("v0.25.0-docker-cluster-template-kube-vip.yaml"), 4);
    assert_clean(example!("v0.25.0-docker-clusterclass-template.yaml"), 3);
    assert_clean(example!("v0.25.0-docker-cluster-template-topology.yaml"), 1);
    assert_clean(
        example!("v0.25.0-e2e-clusterclass-template-docker-in-place.yaml"),
        3,
    );
}

#[test]
fn caprke2_examples_v1beta1_pass() {
    assert_clean(example!("v0.20.0-docker-cluster-template.yaml"), 4);
    // CAPRKE2 v0.25.0's v1beta1 RKE2ControlPlaneTemplate requires machineTemplate.infrastructureRef,
    // which the v0.20.0 example predates: the API server of v0.25.0 rejects it.
    let (covered, problems) = check_stream(example!("v0.20.0-docker-clusterclass-template.yaml"));
    assert_eq!(covered, 3);
    assert_eq!(
        problems,
        [
            "controlplane.cluster.x-k8s.io/v1beta1 RKE2ControlPlaneTemplate from CAPRKE2 v0.25.0: \
          spec.template.spec.machineTemplate.infrastructureRef: is required"
        ]
    );
}

/// The mistakes of CAPRKE2 v0.25.0's own examples that the API server rejects (or, for unknown
/// fields, drops): v1beta1 fields left in v1beta2 objects.
const EXAMPLE_MISTAKES: &[&str] = &[
    "metal3-cluster-template: controlplane.cluster.x-k8s.io/v1beta2 RKE2ControlPlane from CAPRKE2 v0.25.0: spec.version: is required",
    "metal3-cluster-template: cluster.x-k8s.io/v1beta2 MachineDeployment from Cluster API v1.14.0: spec.template.spec.nodeDrainTimeout: is not a field of the schema (fields: bootstrap, clusterName, deletion, failureDomain, infrastructureRef, minReadySeconds, providerID, readinessGates, taints, version)",
    "metal3-cluster-template: bootstrap.cluster.x-k8s.io/v1beta2 RKE2ConfigTemplate from CAPRKE2 v0.25.0: spec.template.spec.agentConfig.version: is not a field of the schema (fields: additionalUserData, airGapped, airGappedChecksum, cisProfile, containerRuntimeEndpoint, dataDir, enableContainerdSElinux, format, imageCredentialProviderConfigMap, kubeProxy, kubelet, kubeletPath, loadBalancerPort, nodeAnnotations, nodeLabels, nodeName, nodeTaints, ntp, podSecurityAdmissionConfigFile, protectKernelDefaults, resolvConf, runtimeImage, snapshotter, systemDefaultRegistry)",
    "cluster-template-docker-move: cluster.x-k8s.io/v1beta2 Cluster from Cluster API v1.14.0: spec.controlPlaneRef.apiGroup: is required",
    "cluster-template-docker-move: cluster.x-k8s.io/v1beta2 Cluster from Cluster API v1.14.0: spec.controlPlaneRef.apiVersion: is not a field of the schema (fields: apiGroup, kind, name)",
    "cluster-template-docker-move: cluster.x-k8s.io/v1beta2 Cluster from Cluster API v1.14.0: spec.infrastructureRef.apiGroup: is required",
    "cluster-template-docker-move: cluster.x-k8s.io/v1beta2 Cluster from Cluster API v1.14.0: spec.infrastructureRef.apiVersion: is not a field of the schema (fields: apiGroup, kind, name)",
    "cluster-template-docker-move: controlplane.cluster.x-k8s.io/v1beta2 RKE2ControlPlane from CAPRKE2 v0.25.0: spec.machineTemplate.spec.infrastructureRef.apiGroup: is required",
    "cluster-template-docker-move: controlplane.cluster.x-k8s.io/v1beta2 RKE2ControlPlane from CAPRKE2 v0.25.0: spec.machineTemplate.spec.infrastructureRef.apiVersion: is not a field of the schema (fields: apiGroup, kind, name)",
    "cluster-template-docker-move: cluster.x-k8s.io/v1beta2 MachineDeployment from Cluster API v1.14.0: spec.template.spec.bootstrap.configRef.apiGroup: is required",
    "cluster-template-docker-move: cluster.x-k8s.io/v1beta2 MachineDeployment from Cluster API v1.14.0: spec.template.spec.bootstrap.configRef.apiVersion: is not a field of the schema (fields: apiGroup, kind, name)",
    "cluster-template-docker-move: cluster.x-k8s.io/v1beta2 MachineDeployment from Cluster API v1.14.0: spec.template.spec.infrastructureRef.apiGroup: is required",
    "cluster-template-docker-move: cluster.x-k8s.io/v1beta2 MachineDeployment from Cluster API v1.14.0: spec.template.spec.infrastructureRef.apiVersion: is not a field of the schema (fields: apiGroup, kind, name)",
    // The AWS templates (not copied here; seen by the folder test).
    "aws_cluster-template-ignition: bootstrap.cluster.x-k8s.io/v1beta2 RKE2ConfigTemplate from CAPRKE2 v0.25.0: spec: is required",
    "aws_cluster-template: cluster.x-k8s.io/v1beta2 MachineDeployment from Cluster API v1.14.0: spec.template.spec.bootstrap.configRef.apiGroup: must match the pattern ^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$",
    "aws_cluster-template: cluster.x-k8s.io/v1beta2 MachineDeployment from Cluster API v1.14.0: spec.template.spec.infrastructureRef.apiGroup: must match the pattern ^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$",
    // A fragment: an RKE2ControlPlane without its rollout strategy.
    "enable-multus_rke2controlplane-test: controlplane.cluster.x-k8s.io/v1beta2 RKE2ControlPlane from CAPRKE2 v0.25.0: spec.rolloutStrategy: is required",
];

/// The expected mistakes of the examples whose file name ends with `name` (`.yaml` removed).
fn mistakes_of(file: &str) -> Vec<String> {
    let stem = file.strip_suffix(".yaml").unwrap_or(file).replace('_', "-");
    EXAMPLE_MISTAKES
        .iter()
        .filter_map(|line| line.split_once(": "))
        .filter(|(name, _)| stem.ends_with(&name.replace('_', "-")))
        .map(|(_, message)| message.to_owned())
        .collect()
}

#[test]
fn caprke2_example_mistakes_are_found() {
    for (file, text) in [
        (
            "v0.25.0-metal3-cluster-template.yaml",
            example!("v0.25.0-metal3-cluster-template.yaml"),
        ),
        (
            "v0.25.0-e2e-cluster-template-docker-move.yaml",
            example!("v0.25.0-e2e-cluster-template-docker-move.yaml"),
        ),
    ] {
        let (covered, problems) = check_stream(text);
        assert_eq!(covered, 4);
        assert_eq!(problems, mistakes_of(file), "{file}");
    }
}

/// Every example of a CAPRKE2 checkout when `RKE2_PAYLOAD_CAPRKE2_EXAMPLES` names a folder of
/// YAML files (e.g. `examples/` and `test/e2e/data/infrastructure/` copied flat); skipped
/// otherwise.
#[test]
fn caprke2_examples_folder_passes_when_given() {
    let Some(folder) = std::env::var_os("RKE2_PAYLOAD_CAPRKE2_EXAMPLES") else {
        return;
    };
    let mut total = 0;
    for entry in std::fs::read_dir(folder).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if name.ends_with(".yaml") {
            let (covered, problems) = check_stream(&std::fs::read_to_string(&path).unwrap());
            total += covered;
            assert_eq!(problems, mistakes_of(&name), "{name}");
        }
    }
    assert!(total > 0);
}

#[test]
fn hand_written_objects_of_every_kind_pass() {
    let infra = json!({"apiGroup": "infrastructure.cluster.x-k8s.io", "kind": "DockerMachine", "name": "m"});
    let bootstrap = json!({"configRef": {"apiGroup": "bootstrap.cluster.x-k8s.io", "kind": "RKE2Config", "name": "m"}});
    let infra_v1 = json!({"apiVersion": "infrastructure.cluster.x-k8s.io/v1beta1", "kind": "DockerMachine", "name": "m"});
    let bootstrap_v1 = json!({"configRef": {"apiVersion": "bootstrap.cluster.x-k8s.io/v1beta1", "kind": "RKE2Config", "name": "m"}});
    let objects = [
        control_plane(),
        json!({"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "Machine", "metadata": {"name": "m"},
            "spec": {"clusterName": "c", "bootstrap": bootstrap, "infrastructureRef": infra, "version": "v1.31.4"}}),
        json!({"apiVersion": "cluster.x-k8s.io/v1beta1", "kind": "Machine", "metadata": {"name": "m"},
            "spec": {"clusterName": "c", "bootstrap": bootstrap_v1, "infrastructureRef": infra_v1}}),
        json!({"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "MachinePool", "metadata": {"name": "p"},
            "spec": {"clusterName": "c", "replicas": 2, "template": {"spec": {"clusterName": "c",
                "bootstrap": bootstrap, "infrastructureRef": infra}}}}),
        json!({"apiVersion": "cluster.x-k8s.io/v1beta1", "kind": "MachinePool", "metadata": {"name": "p"},
            "spec": {"clusterName": "c", "replicas": 2, "template": {"spec": {"clusterName": "c",
                "bootstrap": bootstrap_v1, "infrastructureRef": infra_v1}}}}),
        json!({"apiVersion": "cluster.x-k8s.io/v1beta1", "kind": "MachineDeployment", "metadata": {"name": "d"},
            "spec": {"clusterName": "c", "replicas": 2, "selector": {"matchLabels": {"a": "b"}},
                "template": {"spec": {"clusterName": "c", "bootstrap": bootstrap_v1, "infrastructureRef": infra_v1}}}}),
        json!({"apiVersion": "bootstrap.cluster.x-k8s.io/v1beta2", "kind": "RKE2Config", "metadata": {"name": "b"},
            "spec": {"agentConfig": {"nodeName": "n", "kubelet": {"extraArgs": ["v=2"]}},
                "files": [{"path": "/etc/x", "content": "y"}], "preRKE2Commands": ["true"], "gzipUserData": true},
            "status": {"ready": true, "anything": {"goes": 1}}}),
        json!({"apiVersion": "bootstrap.cluster.x-k8s.io/v1beta1", "kind": "RKE2Config", "metadata": {"name": "b"},
            "spec": {"agentConfig": {"nodeName": "n"}, "files": [{"path": "/etc/x", "content": "y"}]}}),
        json!({"apiVersion": "bootstrap.cluster.x-k8s.io/v1beta1", "kind": "RKE2ConfigTemplate", "metadata": {"name": "b"},
            "spec": {"template": {"spec": {"agentConfig": {}}}}}),
        json!({"apiVersion": "controlplane.cluster.x-k8s.io/v1beta1", "kind": "RKE2ControlPlane", "metadata": {"name": "cp"},
            "spec": {"replicas": 1, "version": "v1.31.4+rke2r1", "rolloutStrategy": {"type": "RollingUpdate"},
                "infrastructureRef": infra_v1, "serverConfig": {"tlsSan": ["x"]}}}),
        json!({"apiVersion": "controlplane.cluster.x-k8s.io/v1beta1", "kind": "RKE2ControlPlaneTemplate", "metadata": {"name": "t"},
            "spec": {"template": {"spec": {"rolloutStrategy": {"type": "RollingUpdate"}}}}}),
    ];
    for object in &objects {
        let problems: Vec<String> = problems_of(object).iter().map(Violation::message).collect();
        assert!(
            problems.is_empty(),
            "{} {}: {problems:#?}",
            object["apiVersion"],
            object["kind"]
        );
    }
}

#[test]
fn misspelt_field_suggests_the_declared_one() {
    let mut object = control_plane();
    let spec = object["spec"].as_object_mut().unwrap();
    let method = spec.remove("registrationMethod").unwrap();
    spec.insert("registrationMehod".to_owned(), method);
    let problems = problems_of(&object);
    assert_eq!(problems.len(), 1, "{problems:#?}");
    assert_eq!(problems[0].pointer(), "spec.registrationMehod");
    let Problem::UnknownField {
        allowed,
        suggestion,
    } = &problems[0].problem
    else {
        panic!("{problems:?}")
    };
    assert_eq!(suggestion.as_deref(), Some("registrationMethod"));
    assert!(allowed.iter().any(|f| f == "serverConfig"));
    assert_eq!(
        problems[0].problem.describe(),
        "is not a field of the schema (did you mean registrationMethod?)"
    );

    let mut object = control_plane();
    object["spec"]["serverConfig"] = json!({"tlsSAN": ["cp.example"]});
    let problems = problems_of(&object);
    assert_eq!(problems.len(), 1, "{problems:#?}");
    assert_eq!(
        problems[0].message(),
        "spec.serverConfig.tlsSAN: is not a field of the schema (did you mean tlsSan?)"
    );
}

#[test]
fn enum_type_and_unknown_version_field() {
    let mut object = control_plane();
    object["spec"]["registrationMethod"] = json!("internal-last");
    object["spec"]["replicas"] = json!("three");
    object["spec"]["agentConfig"]["version"] = json!("v1.31.4+rke2r1");
    let problems = problems_of(&object);
    let messages: Vec<String> = problems.iter().map(Violation::message).collect();
    assert_eq!(problems.len(), 3, "{messages:#?}");
    assert!(
        messages.contains(&"spec.replicas: must be of type integer, not a string".to_owned()),
        "{messages:#?}"
    );
    assert!(messages.contains(
        &"spec.registrationMethod: must be one of: internal-first, internal-only-ips, external-only-ips, address, control-plane-endpoint, \"\"".to_owned()
    ), "{messages:#?}");
    let version = problems
        .iter()
        .find(|v| v.pointer() == "spec.agentConfig.version")
        .expect("reported");
    assert!(
        matches!(&version.problem, Problem::UnknownField { allowed, .. } if allowed.iter().any(|f| f == "nodeName"))
    );
    // No message quotes the values found.
    for message in &messages {
        assert!(
            !message.contains("three") && !message.contains("internal-last"),
            "{message}"
        );
    }
    // v1beta1 of CAPRKE2 v0.25.0: spec.version too (agentConfig.version is gone there as well).
    let mut old = json!({"apiVersion": "controlplane.cluster.x-k8s.io/v1beta1", "kind": "RKE2ControlPlane",
        "spec": {"rolloutStrategy": {"type": "RollingUpdate"}, "version": "v1.31.4+rke2r1"}});
    assert!(problems_of(&old).is_empty(), "{:?}", problems_of(&old));
    old["spec"]["replicas"] = json!(1.5);
    let problems = problems_of(&old);
    assert_eq!(
        problems[0].problem,
        Problem::Type {
            expected: "integer".to_owned(),
            found: "a number"
        }
    );
    old["spec"]["replicas"] = json!(3.0);
    assert!(problems_of(&old).is_empty());
}

#[test]
fn missing_required_and_pattern() {
    let mut object = control_plane();
    object["spec"].as_object_mut().unwrap().remove("version");
    object["spec"]["machineTemplate"]["spec"]["infrastructureRef"]
        .as_object_mut()
        .unwrap()
        .remove("kind");
    let problems = problems_of(&object);
    let messages: Vec<String> = problems.iter().map(Violation::message).collect();
    assert_eq!(
        messages,
        [
            "spec.version: is required",
            "spec.machineTemplate.spec.infrastructureRef.kind: is required"
        ]
    );
    assert_eq!(
        problems[0].problem,
        Problem::Required {
            field: "version".to_owned()
        }
    );

    let mut object = control_plane();
    object["spec"]["version"] = json!("1.31");
    let problems = problems_of(&object);
    assert_eq!(problems.len(), 1);
    assert_eq!(
        problems[0].problem,
        Problem::Pattern {
            pattern: "(v\\d\\.\\d{2}\\.\\d+\\+rke2r\\d)|^$".to_owned()
        }
    );
    assert_eq!(problems[0].pointer(), "spec.version");
}

#[test]
fn metadata_is_checked_loosely_and_status_not_at_all() {
    let mut object = control_plane();
    object["metadata"] =
        json!({"name": 3, "labels": {"a": true}, "annotatons": {}, "finalizers": ["x"]});
    object["status"] = json!({"whatever": [1, 2]});
    let messages: Vec<String> = problems_of(&object)
        .iter()
        .map(Violation::message)
        .collect();
    assert_eq!(
        messages,
        [
            "metadata.name: must be of type string, not an integer",
            "metadata.labels.a: must be of type string, not a boolean",
            "metadata.annotatons: is not a field of the schema (did you mean annotations?)",
        ]
    );
    // A key that is not a plain name is quoted in the path.
    let violation = Violation {
        path: vec![
            PathSeg::Key("metadata".into()),
            PathSeg::Key("a.b/c".into()),
            PathSeg::Index(2),
        ],
        problem: Problem::Required { field: "x".into() },
    };
    assert_eq!(violation.pointer(), "metadata[\"a.b/c\"][2]");
    assert_eq!(
        Violation {
            path: vec![],
            problem: Problem::Required { field: "x".into() }
        }
        .pointer(),
        "(root)"
    );
}

#[test]
fn int_or_string_and_bounds_and_lists() {
    let mut object = control_plane();
    object["spec"]["rolloutStrategy"]["rollingUpdate"]["maxSurge"] = json!("25%");
    assert!(problems_of(&object).is_empty());
    object["spec"]["rolloutStrategy"]["rollingUpdate"]["maxSurge"] = json!(true);
    let problems = problems_of(&object);
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert_eq!(
        problems[0].problem,
        Problem::Type {
            expected: "integer or string".to_owned(),
            found: "a boolean"
        }
    );

    // Cluster v1beta2: names are bounded and patterned.
    let cluster = json!({"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "Cluster", "metadata": {"name": "c"},
        "spec": {"controlPlaneRef": {"apiGroup": "controlplane.cluster.x-k8s.io", "kind": "RKE2ControlPlane", "name": ""}}});
    let problems = problems_of(&cluster);
    assert!(problems.iter().any(|v| v.pointer() == "spec.controlPlaneRef.name"
        && matches!(&v.problem, Problem::Bounds { what } if what == "at least 1 character (found 0)")), "{problems:#?}");
}

#[test]
fn crd_defaults_fill_objects_that_exist() {
    let schema = crd_schema("controlplane.cluster.x-k8s.io/v1beta2", "RKE2ControlPlane").unwrap();
    let defaulted = schema.default_object(control_plane());
    // Nothing absent is invented: the object is unchanged or gains only defaults.
    assert_eq!(defaulted["spec"]["replicas"], 3);
    assert!(schema.cel_rules() > 0);
}

#[test]
fn a_null_the_schema_does_not_allow_is_dropped_not_rejected() {
    // As the API server prunes non-nullable nulls before defaulting: a template patch that
    // renders `preRKE2Commands:` with nothing after it leaves no field, not a type error.
    let schema = crd_schema("controlplane.cluster.x-k8s.io/v1beta2", "RKE2ControlPlane").unwrap();
    let mut object = control_plane();
    object["spec"]["preRKE2Commands"] = Value::Null;
    object["spec"]["serverConfig"]["tlsSan"] = Value::Null;
    assert_eq!(schema.admit(&object), Vec::new());
    let admitted = schema.default_object(object);
    assert!(admitted["spec"].get("preRKE2Commands").is_none());
    // A null inside a list is an item, checked as one.
    let mut object = control_plane();
    object["spec"]["preRKE2Commands"] = json!([null]);
    let problems = schema.admit(&object);
    assert_eq!(problems.len(), 1, "{problems:#?}");
    assert_eq!(problems[0].pointer(), "spec.preRKE2Commands[0]");
}

#[test]
fn what_the_webhooks_set_is_there_before_the_schema_is_checked() {
    // A v1beta2 MachineDeployment without a selector or rollout strategy: Cluster API's
    // webhook sets both (and the labels the selector needs).
    let md = json!({
        "apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "MachineDeployment",
        "metadata": {"name": "md", "namespace": "default"},
        "spec": {"clusterName": "c", "template": {"spec": {
            "clusterName": "c",
            "bootstrap": {"configRef": {"apiGroup": "bootstrap.cluster.x-k8s.io", "kind": "RKE2ConfigTemplate", "name": "md"}},
            "infrastructureRef": {"apiGroup": "infrastructure.cluster.x-k8s.io", "kind": "DockerMachineTemplate", "name": "md"}}}}
    });
    let schema = crd_schema("cluster.x-k8s.io/v1beta2", "MachineDeployment").unwrap();
    assert_eq!(schema.admit(&md), Vec::new());
    let required: Vec<String> = schema
        .validate(&md)
        .iter()
        .map(Violation::pointer)
        .collect();
    assert_eq!(
        required,
        ["spec.selector"],
        "without the webhook's defaults"
    );
    // What the webhook does not fill is still reported.
    let mut without = md.clone();
    without["spec"]["template"]["spec"]
        .as_object_mut()
        .unwrap()
        .remove("infrastructureRef");
    let problems: Vec<String> = schema
        .admit(&without)
        .iter()
        .map(Violation::message)
        .collect();
    assert_eq!(
        problems,
        ["spec.template.spec.infrastructureRef: is required"]
    );
    // A value of the wrong type where a webhook would write is reported, not replaced.
    let mut wrong = md;
    wrong["spec"]["selector"] = json!("all");
    let problems: Vec<String> = schema
        .admit(&wrong)
        .iter()
        .map(Violation::message)
        .collect();
    assert_eq!(
        problems,
        ["spec.selector: must be of type object, not a string"]
    );
}

#[test]
fn the_crds_cel_rules_are_run_on_the_admitted_object() {
    let schema = crd_schema("controlplane.cluster.x-k8s.io/v1beta2", "RKE2ControlPlane").unwrap();
    assert_eq!(schema.cel_rules(), 2);
    let mut both = control_plane();
    both["spec"]["agentConfig"]["additionalUserData"] =
        json!({"data": {"a": "b"}, "config": "#cloud-config\n"});
    both["spec"]["files"][0] = json!({"path": "/etc/x", "contentFrom": {
        "secret": {"name": "s", "key": "k"}, "configMap": {"name": "c", "key": "k"}}});
    let problems = schema.admit(&both);
    let messages: Vec<String> = problems.iter().map(Violation::message).collect();
    assert_eq!(
        messages,
        [
            "spec.agentConfig.additionalUserData: Only config or data could be populated at once (rule: !has(self.data) || !has(self.config))",
            "spec.files[0].contentFrom: Only configMap or secret can be populated at once (rule: !(has(self.secret) && has(self.configMap)))",
        ],
        "{problems:#?}"
    );
    assert!(
        problems
            .iter()
            .all(|v| matches!(v.problem, Problem::Rule { .. }))
    );
    // One of each is admitted.
    let mut one = control_plane();
    one["spec"]["agentConfig"]["additionalUserData"] = json!({"config": "#cloud-config\n"});
    assert!(schema.admit(&one).is_empty(), "{:#?}", schema.admit(&one));
    // A type error blocks the rules, as the API server's hasBlockingErr does.
    both["spec"]["replicas"] = json!("three");
    let blocked = schema.admit(&both);
    assert!(
        !blocked
            .iter()
            .any(|v| matches!(v.problem, Problem::Rule { .. })),
        "{blocked:#?}"
    );
}

#[test]
fn a_reserved_health_check_condition_is_refused_by_the_cluster_crds_rule() {
    let schema = crd_schema("cluster.x-k8s.io/v1beta2", "ClusterClass").unwrap();
    let class = json!({
        "apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "ClusterClass",
        "metadata": {"name": "k", "namespace": "default"},
        "spec": {"controlPlane": {
            "templateRef": {"apiVersion": "controlplane.cluster.x-k8s.io/v1beta2", "kind": "RKE2ControlPlaneTemplate", "name": "t"},
            "healthCheck": {"checks": {"unhealthyMachineConditions": [
                {"type": "Ready", "status": "False", "timeoutSeconds": 300}]}}},
            "infrastructure": {"templateRef": {"apiVersion": "infrastructure.cluster.x-k8s.io/v1beta2", "kind": "DockerClusterTemplate", "name": "i"}}}
    });
    let problems = schema.admit(&class);
    assert!(
        problems.iter().any(
            |v| matches!(&v.problem, Problem::Rule { rule, .. } if rule.contains("'Ready'"))
                && v.pointer()
                    == "spec.controlPlane.healthCheck.checks.unhealthyMachineConditions[0].type"
        ),
        "{problems:#?}"
    );
}
