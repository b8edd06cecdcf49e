//! A ClusterClass linted on its own (a folder of a class and its templates, no Cluster), and
//! the findings of a topology expansion placed in the author's files: the class's reference,
//! variable, JSON patch or template, never a generated object's name at the Cluster's line.

use std::path::Path;

use serde_json::Value;

use crate::common::*;

/// The project's ClusterClass example without its Cluster: (the ClusterClass, its templates).
fn class_and_templates() -> (String, String) {
    let example = std::fs::read_to_string(testdata().join("../examples/preview/clusterclass.yaml"))
        .expect("the example");
    let cluster = example
        .rfind("---\napiVersion: cluster.x-k8s.io/v1beta2\nkind: Cluster\n")
        .expect("the example's Cluster");
    let first = example.find("---\n").expect("documents");
    (
        example[..first].to_owned(),
        example[first + 4..cluster].to_owned(),
    )
}

/// A repository (a `.git` folder) with the class at `classes/class.yaml` and its templates at
/// `classes/templates.yaml`.
fn repository(class: &str, templates: &str) -> tempfile::TempDir {
    let dir = scratch();
    std::fs::create_dir(dir.path().join(".git")).expect("a .git folder");
    std::fs::create_dir(dir.path().join("classes")).expect("classes");
    std::fs::write(dir.path().join("classes/class.yaml"), class).expect("class");
    std::fs::write(dir.path().join("classes/templates.yaml"), templates).expect("templates");
    dir
}

fn run_in(dir: &Path, args: &[&str]) -> (Option<i32>, String, String) {
    let out = cmd()
        .current_dir(dir)
        .env_remove("GITHUB_WORKSPACE")
        .env("NO_COLOR", "1")
        .args(args)
        .output()
        .expect("run");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The 1-based line of the only line of `text` that holds `needle`.
fn line_of(text: &str, needle: &str) -> u64 {
    let lines: Vec<usize> = text
        .lines()
        .enumerate()
        .filter(|(_, l)| l.contains(needle))
        .map(|(i, _)| i + 1)
        .collect();
    assert_eq!(lines.len(), 1, "{needle}: {lines:?}");
    lines[0] as u64
}

/// The 1-based line of the last line holding `key` at or above the line of `needle`.
fn line_above(text: &str, needle: &str, key: &str) -> u64 {
    let below = line_of(text, needle) as usize;
    let lines: Vec<&str> = text.lines().take(below).collect();
    let at = lines
        .iter()
        .rposition(|l| l.contains(key))
        .expect("the key");
    at as u64 + 1
}

/// (id, file, line) of every manifest finding of `lint -o json`.
fn json_places(out: &str) -> Vec<(String, String, u64)> {
    let doc: Value = serde_json::from_str(out).unwrap_or_else(|_| panic!("{out}"));
    // No findings: no `manifests` key.
    doc["manifests"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|f| {
            (
                f["id"].as_str().expect("id").to_owned(),
                f["manifest"]["file"].as_str().expect("file").to_owned(),
                f["manifest"]["line"].as_u64().expect("line"),
            )
        })
        .collect()
}

/// (rule, uri, line) of every SARIF result.
fn sarif_places(out: &str) -> Vec<(String, String, u64)> {
    let doc: Value = serde_json::from_str(out).unwrap_or_else(|_| panic!("{out}"));
    doc["runs"][0]["results"]
        .as_array()
        .expect("results")
        .iter()
        .map(|r| {
            let location = &r["locations"][0]["physicalLocation"];
            (
                r["ruleId"].as_str().expect("rule").to_owned(),
                location["artifactLocation"]["uri"]
                    .as_str()
                    .expect("uri")
                    .to_owned(),
                location["region"]["startLine"].as_u64().expect("line"),
            )
        })
        .collect()
}

#[test]
fn a_clusterclass_alone_is_linted_not_refused() {
    let (class, templates) = class_and_templates();
    let repo = repository(&class, &templates);
    // A folder of the class and its templates: clean, exit 0, nothing rendered.
    let (code, out, err) = run_in(repo.path(), &["lint", "classes", "-o", "json"]);
    assert_eq!(code, Some(0), "{out}{err}");
    assert_eq!(json_places(&out), [], "{out}");
    assert!(
        err.contains("ClusterClass default/rke2-aws checked on its own"),
        "{err}"
    );
    // render has nothing to write for a class alone: exit 2, one sentence naming the class.
    let (code, _, err) = run_in(repo.path(), &["render", "classes"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("no Cluster of the input uses ClusterClass default/rke2-aws"),
        "{err}"
    );
    // A file that does not read is still exit 2.
    std::fs::write(
        repo.path().join("classes/broken.yaml"),
        "kind: ClusterClass\n: [\n",
    )
    .expect("write");
    let (code, _, err) = run_in(repo.path(), &["lint", "classes"]);
    assert_eq!(code, Some(2), "{err}");
}

#[test]
fn a_clusterclass_s_mistakes_are_placed_in_the_class_and_its_templates() {
    let (class, templates) = class_and_templates();
    // A worker template the input lacks, a variable default its schema refuses, a patch the
    // webhook admits but whose path the template lacks.
    let bootstrap = "kind: RKE2ConfigTemplate\n          name: rke2-aws-worker\n";
    let class = class
        .replacen(
            bootstrap,
            "kind: RKE2ConfigTemplate\n          name: rke2-aws-wroker\n",
            1,
        )
        .replacen(
            "        type: string\n        default: calico\n",
            "        type: string\n        default: calico\n        enum: [calico, cilium]\n",
            1,
        );
    let bad_default = class.replace("default: calico\n", "default: flannel\n");
    let repo = repository(&bad_default, &templates);
    let (code, out, err) = run_in(repo.path(), &["lint", "classes", "-o", "json"]);
    assert_eq!(code, Some(1), "{out}{err}");
    let file = "classes/class.yaml";
    // The reference at its `templateRef`, the default at its `default`.
    assert_eq!(
        json_places(&out),
        [
            (
                "manifest-missing-reference".to_owned(),
                file.to_owned(),
                line_above(&bad_default, "name: rke2-aws-wroker", "templateRef:")
            ),
            (
                "topology-class-refused".to_owned(),
                file.to_owned(),
                line_of(&bad_default, "default: flannel")
            ),
        ],
        "{out}"
    );
    let (code, out, err) = run_in(repo.path(), &["lint", "classes", "-o", "sarif"]);
    assert_eq!(code, Some(1), "{err}");
    // SARIF lists errors first.
    assert_eq!(
        sarif_places(&out),
        [
            (
                "topology-class-refused".to_owned(),
                file.to_owned(),
                line_of(&bad_default, "default: flannel")
            ),
            (
                "manifest-missing-reference".to_owned(),
                file.to_owned(),
                line_above(&bad_default, "name: rke2-aws-wroker", "templateRef:")
            ),
        ]
    );
    // The class admitted and its templates found: expanded for a Cluster that sets none of
    // its variables, its patch fails at the JSON patch.
    let class = class
        .replace("name: rke2-aws-wroker\n", "name: rke2-aws-worker\n")
        .replace("        enum: [calico, cilium]\n", "")
        .replace(
            "path: /spec/template/spec/serverConfig/cni\n",
            "path: /spec/template/spec/serverConfig/cni/name\n",
        );
    let repo = repository(&class, &templates);
    let (code, out, err) = run_in(repo.path(), &["lint", "classes", "-o", "sarif"]);
    assert_eq!(code, Some(1), "{err}");
    // The JSON patch's item starts at its `op`, the line above its `path`.
    assert_eq!(
        sarif_places(&out),
        [(
            "topology-expansion-fails".to_owned(),
            file.to_owned(),
            line_of(&class, "serverConfig/cni/name") - 1
        )]
    );
}

#[test]
fn an_expanded_object_s_finding_is_placed_at_the_patch_that_wrote_it() {
    let (class, templates) = class_and_templates();
    let repo = repository(&class, &templates);
    let cluster = "apiVersion: cluster.x-k8s.io/v1beta2\nkind: Cluster\nmetadata: {name: demo, namespace: default}\nspec:\n  controlPlaneEndpoint: {host: demo.example.com, port: 6443}\n  topology:\n    classRef: {name: rke2-aws}\n    version: v1.34.1+rke2r1\n    variables:\n    - {name: cni, value: flannel}\n    workers:\n      machineDeployments:\n      - {class: general, name: md-0}\n";
    std::fs::write(repo.path().join("cluster.yaml"), cluster).expect("cluster");
    // The JSON patch's item starts at its `op`, the line above its `path`.
    let patch_line = line_of(&class, "path: /spec/template/spec/serverConfig/cni") - 1;
    let (code, out, err) = run_in(
        repo.path(),
        &["lint", "classes", "cluster.yaml", "-o", "json"],
    );
    assert_eq!(code, Some(1), "{out}{err}");
    let doc: Value = serde_json::from_str(&out).expect("json");
    let schema: Vec<&Value> = doc["manifests"]
        .as_array()
        .expect("manifests")
        .iter()
        .filter(|f| f["id"] == "manifest-schema")
        .collect();
    assert_eq!(schema.len(), 1, "{out}");
    // The generated object's name stays in the message; the place is the patch.
    let message = schema[0]["message"].as_str().expect("message");
    assert!(
        message.starts_with("RKE2ControlPlane default/demo-"),
        "{message}"
    );
    assert!(message.contains("(written by patch cni of ClusterClass default/rke2-aws)"));
    assert_eq!(schema[0]["manifest"]["file"], "classes/class.yaml", "{out}");
    assert_eq!(schema[0]["manifest"]["line"], patch_line, "{out}");
    let (_, out, err) = run_in(
        repo.path(),
        &["lint", "classes", "cluster.yaml", "-o", "sarif"],
    );
    let places = sarif_places(&out);
    assert!(
        places.contains(&(
            "manifest-schema".to_owned(),
            "classes/class.yaml".to_owned(),
            patch_line
        )),
        "{places:?}{err}"
    );
}
