//! A ClusterClass linted on its own, and the findings of a topology expansion placed where
//! their author wrote the value: the class's reference, variable, JSON patch or template, the
//! Cluster's topology field.

use rke2_payload::{Check, Finding};

use payload_preview::{Preview, RenderOptions, Source, render};

/// A ClusterClass, its templates (the worker's bootstrap template named by `worker`) and
/// `patches` (items of `spec.patches`, indented as such) and `variables` likewise.
fn class(worker: &str, variables: &str, patches: &str) -> String {
    format!(
        r#"apiVersion: cluster.x-k8s.io/v1beta2
kind: ClusterClass
metadata: {{name: rke2, namespace: fleet}}
spec:
  controlPlane:
    templateRef: {{apiVersion: controlplane.cluster.x-k8s.io/v1beta2, kind: RKE2ControlPlaneTemplate, name: cp}}
  infrastructure:
    templateRef: {{apiVersion: infrastructure.cluster.x-k8s.io/v1beta2, kind: DockerClusterTemplate, name: infra}}
  workers:
    machineDeployments:
    - class: general
      bootstrap:
        templateRef: {{apiVersion: bootstrap.cluster.x-k8s.io/v1beta2, kind: RKE2ConfigTemplate, name: {worker}}}
      infrastructure:
        templateRef: {{apiVersion: infrastructure.cluster.x-k8s.io/v1beta2, kind: DockerMachineTemplate, name: machine}}
  variables:
{variables}  patches:
{patches}---
apiVersion: controlplane.cluster.x-k8s.io/v1beta2
kind: RKE2ControlPlaneTemplate
metadata: {{name: cp, namespace: fleet}}
spec:
  template:
    spec:
      rolloutStrategy: {{type: RollingUpdate, rollingUpdate: {{maxSurge: 1}}}}
      serverConfig:
        cni: calico
---
apiVersion: infrastructure.cluster.x-k8s.io/v1beta2
kind: DockerClusterTemplate
metadata: {{name: infra, namespace: fleet}}
spec: {{template: {{spec: {{}}}}}}
---
apiVersion: infrastructure.cluster.x-k8s.io/v1beta2
kind: DockerMachineTemplate
metadata: {{name: machine, namespace: fleet}}
spec: {{template: {{spec: {{}}}}}}
---
apiVersion: bootstrap.cluster.x-k8s.io/v1beta2
kind: RKE2ConfigTemplate
metadata: {{name: worker, namespace: fleet}}
spec:
  template:
    spec:
      agentConfig: {{}}
"#
    )
}

const CNI: &str = "  - name: cni\n    required: true\n    schema: {openAPIV3Schema: {type: string, default: canal}}\n";
const CNI_PATCH: &str = "  - name: cni\n    definitions:\n    - selector: {apiVersion: controlplane.cluster.x-k8s.io/v1beta2, kind: RKE2ControlPlaneTemplate, matchResources: {controlPlane: true}}\n      jsonPatches:\n      - {op: replace, path: /spec/template/spec/serverConfig/cni, valueFrom: {variable: cni}}\n";

fn lint(text: &str) -> Preview {
    let sources = [Source {
        name: "class.yaml",
        bytes: text.as_bytes(),
    }];
    render(&sources, &RenderOptions::new().with_seed(1)).expect("a class alone is linted")
}

/// The 1-based line of the only line of `text` that holds `needle`.
fn line_of(text: &str, needle: &str) -> u64 {
    let lines: Vec<usize> = text
        .lines()
        .enumerate()
        .filter(|(_, l)| l.contains(needle))
        .map(|(i, _)| i + 1)
        .collect();
    assert_eq!(lines.len(), 1, "{needle} on lines {lines:?}");
    lines[0] as u64
}

/// (check, file:line, message) of every finding.
fn placed(preview: &Preview) -> Vec<(Check, String, String)> {
    preview
        .findings
        .iter()
        .map(|f: &Finding| {
            let site = f.manifest.as_ref().expect("every finding is placed");
            (
                f.check,
                format!("{}:{}", site.file, site.line.unwrap_or(0)),
                f.message.clone(),
            )
        })
        .collect()
}

#[test]
fn a_sound_class_alone_is_linted_clean_and_nothing_is_rendered() {
    let text = class("worker", CNI, CNI_PATCH);
    let preview = lint(&text);
    assert!(preview.secrets.is_empty());
    assert_eq!(preview.classes, ["ClusterClass fleet/rke2"]);
    assert_eq!(placed(&preview), []);
}

#[test]
fn a_missing_template_is_placed_at_the_class_s_reference() {
    let text = class("wroker", CNI, CNI_PATCH);
    let found = placed(&lint(&text));
    assert_eq!(found.len(), 1, "{found:?}");
    let (check, at, message) = &found[0];
    assert_eq!(*check, Check::ManifestMissingReference);
    assert_eq!(
        *at,
        format!("class.yaml:{}", line_of(&text, "name: wroker"))
    );
    assert!(
        message.starts_with("ClusterClass fleet/rke2: spec.workers.machineDeployments[0].bootstrap.templateRef names RKE2ConfigTemplate fleet/wroker, which is not in the input"),
        "{message}"
    );
}

#[test]
fn variable_schemas_and_defaults_are_checked_as_the_webhook_does() {
    let variables = "  - name: cni\n    required: true\n    schema:\n      openAPIV3Schema:\n        type: string\n        enum: [calico, cilium]\n        default: flannel\n  - name: sans\n    required: false\n    schema:\n      openAPIV3Schema:\n        type: object\n        properties:\n          port: {type: integer, minimum: 1, default: 0}\n  - name: broken\n    required: false\n    schema: {openAPIV3Schema: {type: string, pattern: \"(\"}}\n";
    let text = class("worker", variables, CNI_PATCH);
    let found = placed(&lint(&text));
    let at = |needle: &str| format!("class.yaml:{}", line_of(&text, needle));
    assert_eq!(
        found,
        [
            (
                Check::TopologyClassRefused,
                at("default: flannel"),
                "ClusterClass fleet/rke2: variable cni: the default of openAPIV3Schema must be one of: calico, cilium: the ClusterClass webhook refuses the class".to_owned()
            ),
            (
                Check::TopologyClassRefused,
                at("port: {type: integer"),
                "ClusterClass fleet/rke2: variable sans: the default of openAPIV3Schema.properties.port must be at least 1: the ClusterClass webhook refuses the class".to_owned()
            ),
            (
                Check::TopologyClassRefused,
                at("pattern:"),
                "ClusterClass fleet/rke2: variable broken: its schema does not compile (pattern ( cannot be compiled: error: unclosed group): the ClusterClass webhook refuses the class".to_owned()
            ),
        ],
    );
}

#[test]
fn json_patches_the_webhook_refuses_are_placed_at_the_json_patch() {
    let patches = "  - name: many\n    definitions:\n    - selector: {apiVersion: controlplane.cluster.x-k8s.io/v1beta2, kind: RKE2ControlPlaneTemplate, matchResources: {controlPlane: true}}\n      jsonPatches:\n      - {op: add, path: /metadata/labels/x, value: y}\n      - {op: remove, path: /spec/template/spec/files/1}\n      - {op: add, path: /spec/template/spec/files/2, value: {}}\n      - {op: add, path: /spec/template/spec/b, valueFrom: {variable: undefined.field}}\n      - {op: replace, path: /spec/template/spec/c}\n      - {op: add, path: /spec/template/spec/d, valueFrom: {variable: builtin.cluster.name}}\n";
    let text = class("worker", CNI, patches);
    let found = placed(&lint(&text));
    let at = |needle: &str| format!("class.yaml:{}", line_of(&text, needle));
    let expected = [
        (
            at("/metadata/labels/x"),
            "path /metadata/labels/x is not under /spec",
        ),
        (
            at("files/1"),
            "path /spec/template/spec/files/1 indexes an array, which remove may not",
        ),
        (
            at("files/2"),
            "path /spec/template/spec/files/2 adds at an array index other than 0 (prepend) or - (append)",
        ),
        (
            at("undefined.field"),
            "valueFrom.variable undefined.field names a variable the class does not define",
        ),
        (at("spec/c}"), "it sets neither value nor valueFrom"),
    ];
    let expected: Vec<(Check, String, String)> = expected
        .iter()
        .enumerate()
        .map(|(k, (at, what))| {
            (
                Check::TopologyClassRefused,
                at.clone(),
                format!("ClusterClass fleet/rke2: patch many, definitions[0].jsonPatches[{k}]: {what}: the ClusterClass webhook refuses the class"),
            )
        })
        .collect();
    assert_eq!(found, expected);
}

#[test]
fn a_patch_path_the_template_lacks_fails_the_expansion_at_the_patch() {
    // Admitted (the webhook does not look at the templates), but the topology controller
    // fails to apply it for every Cluster of the class.
    let patch = CNI_PATCH.replace("serverConfig/cni", "serverConfig/cnii");
    let text = class("worker", CNI, &patch);
    let found = placed(&lint(&text));
    assert_eq!(
        found,
        [(
            Check::TopologyExpansionFails,
            format!("class.yaml:{}", line_of(&text, "serverConfig/cnii")),
            "ClusterClass fleet/rke2 (expanded for a Cluster that sets none of its variables): patch cni of ClusterClass fleet/rke2 on RKE2ControlPlaneTemplate fleet/cp: path /spec/template/spec/serverConfig/cnii does not exist in the template; the cluster is not expanded".to_owned()
        )]
    );
    // A required variable without a default: no Cluster that sets none is admitted, so the
    // class is not expanded (its patches need the Cluster's values).
    let text = class("worker", &CNI.replace(", default: canal", ""), &patch);
    assert_eq!(placed(&lint(&text)), []);
}

#[test]
fn a_value_a_patch_writes_is_checked_where_it_lands_and_placed_at_the_patch() {
    // The default is a string the variable allows and the CRD does not.
    let text = class("worker", &CNI.replace("canal", "flannel"), CNI_PATCH);
    let found = placed(&lint(&text));
    assert_eq!(found.len(), 1, "{found:?}");
    let (check, at, message) = &found[0];
    assert_eq!(*check, Check::ManifestSchema);
    assert_eq!(
        *at,
        format!("class.yaml:{}", line_of(&text, "serverConfig/cni,"))
    );
    assert!(
        message.contains("spec.serverConfig.cni: must be one of: none, calico, canal, cilium (written by patch cni of ClusterClass fleet/rke2)"),
        "{message}"
    );
    // A config value a patch writes (nodeName is never used): at the patch too; the same
    // value in the template is reported once, on the template.
    let patch = "  - name: node-name\n    definitions:\n    - selector: {apiVersion: bootstrap.cluster.x-k8s.io/v1beta2, kind: RKE2ConfigTemplate, matchResources: {machineDeploymentClass: {names: [general]}}}\n      jsonPatches:\n      - {op: add, path: /spec/template/spec/agentConfig/nodeName, value: fixed}\n";
    let text = class("worker", CNI, patch);
    let found = placed(&lint(&text));
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].0, Check::ManifestNodeNameIgnored);
    assert_eq!(
        found[0].1,
        format!("class.yaml:{}", line_of(&text, "agentConfig/nodeName"))
    );
    assert!(
        found[0]
            .2
            .ends_with("(written by patch node-name of ClusterClass fleet/rke2)")
    );
}

/// A Cluster of the class (in its own file) at `version`.
fn cluster(version: &str) -> String {
    format!(
        "apiVersion: cluster.x-k8s.io/v1beta2\nkind: Cluster\nmetadata: {{name: demo, namespace: fleet}}\nspec:\n  controlPlaneEndpoint: {{host: demo.example.com, port: 6443}}\n  topology:\n    classRef: {{name: rke2}}\n    version: {version}\n    controlPlane: {{replicas: 1}}\n    workers:\n      machineDeployments:\n      - {{class: general, name: md-0}}\n"
    )
}

/// The findings of the class and the Cluster, each file named as such.
fn findings_of(class: &str, cluster: &str) -> Vec<(Check, String, String)> {
    let sources = [
        Source {
            name: "class.yaml",
            bytes: class.as_bytes(),
        },
        Source {
            name: "cluster.yaml",
            bytes: cluster.as_bytes(),
        },
    ];
    let preview = render(&sources, &RenderOptions::new().with_seed(1)).expect("renders");
    assert!(preview.classes.is_empty(), "the Cluster uses the class");
    placed(&preview)
}

#[test]
fn findings_about_an_expanded_object_are_placed_where_its_author_wrote_the_value() {
    // A value a patch wrote: at the JSON patch in the class, not at the Cluster.
    let text = class("worker", &CNI.replace("canal", "flannel"), CNI_PATCH);
    let found = findings_of(&text, &cluster("v1.34.1+rke2r1"));
    let schema: Vec<&(Check, String, String)> = found
        .iter()
        .filter(|(c, _, _)| *c == Check::ManifestSchema)
        .collect();
    assert_eq!(schema.len(), 1, "{found:?}");
    assert_eq!(
        schema[0].1,
        format!("class.yaml:{}", line_of(&text, "serverConfig/cni,"))
    );
    assert!(
        schema[0]
            .2
            .contains("(written by patch cni of ClusterClass fleet/rke2)")
    );
    // A patch that fails for this Cluster: at the JSON patch.
    let patch = CNI_PATCH.replace("serverConfig/cni", "serverConfig/cnii");
    let text = class("worker", CNI, &patch);
    let found = findings_of(&text, &cluster("v1.34.1+rke2r1"));
    assert_eq!(
        found,
        [(
            Check::TopologyExpansionFails,
            format!("class.yaml:{}", line_of(&text, "serverConfig/cnii")),
            "Cluster fleet/demo: patch cni of ClusterClass fleet/rke2 on RKE2ControlPlaneTemplate fleet/cp: path /spec/template/spec/serverConfig/cnii does not exist in the template; the cluster is not expanded".to_owned()
        )]
    );
    // What the controller sets from the Cluster (the version): at the Cluster's field;
    // what the template holds (the registration method): at the template's field.
    let text = class("worker", CNI, CNI_PATCH).replace(
        "      serverConfig:\n        cni: calico\n",
        "      registrationMethod: address\n      serverConfig:\n        cni: calico\n",
    );
    let cluster = cluster("v1.34.1");
    let found = findings_of(&text, &cluster);
    let at = |check: Check| {
        let hits: Vec<&(Check, String, String)> =
            found.iter().filter(|(c, _, _)| *c == check).collect();
        assert_eq!(hits.len(), 1, "{check:?} in {found:?}");
        assert!(
            hits[0].2.starts_with("RKE2ControlPlane fleet/demo-"),
            "{}",
            hits[0].2
        );
        hits[0].1.clone()
    };
    assert_eq!(
        at(Check::ManifestVersionPattern),
        format!("cluster.yaml:{}", line_of(&cluster, "version: v1.34.1"))
    );
    assert_eq!(
        at(Check::ManifestRegistrationAddressMissing),
        format!(
            "class.yaml:{}",
            line_of(&text, "registrationMethod: address")
        )
    );
}
