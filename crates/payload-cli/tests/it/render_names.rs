//! What `render` answers about the Secrets CAPRKE2 writes: none for machines whose
//! infrastructure template is missing, the names the controllers generate (cut at 63
//! characters), placeholders and names that are the same on every render, one name per Secret
//! across `render`, `lint` and `size`, and one line per fact.

use serde_json::Value;

use crate::common::{cmd, scratch, secret_names};

/// A cluster with its infrastructure: `{cp}` is the name the control plane's
/// `infrastructureRef` gives (its template is `demo-control-plane`), `{md}` the workers'.
const CLUSTER: &str = "apiVersion: cluster.x-k8s.io/v1beta2
kind: Cluster
metadata: {name: demo, namespace: default}
spec:
  controlPlaneEndpoint: {host: demo.example.com, port: 6443}
  controlPlaneRef: {apiGroup: controlplane.cluster.x-k8s.io, kind: RKE2ControlPlane, name: demo-control-plane}
  infrastructureRef: {apiGroup: infrastructure.cluster.x-k8s.io, kind: DockerCluster, name: demo}
---
apiVersion: infrastructure.cluster.x-k8s.io/v1beta2
kind: DockerCluster
metadata: {name: demo, namespace: default}
spec: {}
---
apiVersion: controlplane.cluster.x-k8s.io/v1beta2
kind: RKE2ControlPlane
metadata: {name: demo-control-plane, namespace: default}
spec:
  version: v1.32.5+rke2r1
  replicas: 3
  rolloutStrategy: {type: RollingUpdate}
  machineTemplate:
    spec:
      infrastructureRef:
        apiGroup: infrastructure.cluster.x-k8s.io
        kind: DockerMachineTemplate
        name: {cp}
---
apiVersion: infrastructure.cluster.x-k8s.io/v1beta2
kind: DockerMachineTemplate
metadata: {name: demo-control-plane, namespace: default}
spec: {template: {spec: {}}}
---
apiVersion: infrastructure.cluster.x-k8s.io/v1beta2
kind: DockerMachineTemplate
metadata: {name: demo-md-0, namespace: default}
spec: {template: {spec: {}}}
---
apiVersion: bootstrap.cluster.x-k8s.io/v1beta2
kind: RKE2ConfigTemplate
metadata: {name: demo-md-0, namespace: default}
spec: {template: {spec: {}}}
---
apiVersion: cluster.x-k8s.io/v1beta2
kind: MachineDeployment
metadata: {name: demo-md-0, namespace: default}
spec:
  clusterName: demo
  replicas: 2
  template:
    spec:
      clusterName: demo
      version: v1.32.5+rke2r1
      bootstrap:
        configRef: {apiGroup: bootstrap.cluster.x-k8s.io, kind: RKE2ConfigTemplate, name: demo-md-0}
      infrastructureRef: {apiGroup: infrastructure.cluster.x-k8s.io, kind: DockerMachineTemplate, name: {md}}
";

fn cluster(cp: &str, md: &str) -> String {
    CLUSTER.replace("{cp}", cp).replace("{md}", md)
}

/// `render`'s exit code, its List's items and its standard error.
fn render(manifests: &str, args: &[&str]) -> (Option<i32>, Vec<Value>, String) {
    let out = cmd()
        .arg("render")
        .args(args)
        .args(["-o", "json"])
        .write_stdin(manifests.to_owned())
        .output()
        .expect("run");
    let items = serde_json::from_slice::<Value>(&out.stdout)
        .ok()
        .and_then(|doc| doc["items"].as_array().cloned())
        .unwrap_or_default();
    (
        out.status.code(),
        items,
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn names(items: &[Value]) -> Vec<String> {
    items
        .iter()
        .map(|s| s["metadata"]["name"].as_str().expect("a name").to_owned())
        .collect()
}

/// `lint -o json` of `manifests`: its exit code and report.
fn lint(manifests: &str) -> (Option<i32>, Value) {
    let out = cmd()
        .args(["lint", "-o", "json"])
        .write_stdin(manifests.to_owned())
        .output()
        .expect("run");
    let doc = serde_json::from_slice(&out.stdout).expect("lint -o json is JSON");
    (out.status.code(), doc)
}

/// The line of `needle` (its first) in `text`, 1-based.
fn line_of(text: &str, needle: &str) -> u64 {
    let i = text.lines().position(|l| l.contains(needle)).expect(needle);
    u64::try_from(i + 1).expect("small")
}

#[test]
fn a_control_plane_whose_infrastructure_template_is_missing_gets_no_secret_and_fails() {
    // CAPRKE2's OpenStack example makes this mistake: `-controlplane` for `-control-plane`.
    let whole = cluster("demo-control-plane", "demo-md-0");
    let (code, items, stderr) = render(&whole, &[]);
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(items.len(), 3, "init, join, worker");
    let typo = cluster("demo-controlplane", "demo-md-0");
    let (code, items, stderr) = render(&typo, &[]);
    // Nothing renders: exit 2, as when nothing of an input renders.
    assert_eq!(code, Some(2), "{stderr}");
    // Nor a worker's: CAPRKE2 writes a worker's data once the control plane has initialized,
    // which it never does.
    assert_eq!(names(&items), Vec::<String>::new());
    assert!(
        stderr.contains("nothing was rendered: CAPRKE2 writes no bootstrap Secret"),
        "{stderr}"
    );
    // One error that names the field, the template and where the reference is written.
    let field = line_of(&typo, "      infrastructureRef:");
    let error = stderr
        .lines()
        .find(|l| l.contains("manifest-infrastructure-template-missing"))
        .unwrap_or_else(|| panic!("{stderr}"));
    assert!(error.starts_with("rke2-payload: error: "), "{error}");
    assert!(
        error.contains("spec.machineTemplate.spec.infrastructureRef names DockerMachineTemplate default/demo-controlplane"),
        "{error}"
    );
    assert!(
        error.contains("demo-control-plane, demo-md-0"),
        "the candidates: {error}"
    );
    assert!(
        error.ends_with(&format!("(standard input:{field})")),
        "{error}"
    );
    // lint says the same, once, located at the field, and fails.
    let (code, doc) = lint(&typo);
    assert_eq!(code, Some(1));
    let found: Vec<&Value> = doc["manifests"]
        .as_array()
        .expect("manifests")
        .iter()
        .filter(|f| f["id"] == "manifest-infrastructure-template-missing")
        .collect();
    assert_eq!(found.len(), 1, "{doc:#}");
    assert_eq!(found[0]["severity"], "error");
    assert_eq!(found[0]["manifest"]["line"], field);
    assert_eq!(
        found[0]["manifest"]["object"],
        "RKE2ControlPlane default/demo-control-plane"
    );
    assert_eq!(secret_names(&doc).len(), 0, "no Secret to lint");

    // A MachineDeployment's: no worker Secret (its MachineSet deletes the RKE2Config).
    let (code, items, stderr) = render(&cluster("demo-control-plane", "demo-md-O"), &[]);
    assert_eq!(code, Some(1), "{stderr}");
    assert_eq!(names(&items).len(), 2, "init and join: {:?}", names(&items));
    assert!(stderr.contains("MachineDeployment default/demo-md-0: spec.template.spec.infrastructureRef names DockerMachineTemplate default/demo-md-O"), "{stderr}");
}

#[test]
fn a_control_plane_linted_alone_is_rendered_as_if_its_template_exists() {
    // No infrastructure object at all: a fragment, not a whole cluster, so nothing is judged.
    let fragment = "apiVersion: controlplane.cluster.x-k8s.io/v1beta2
kind: RKE2ControlPlane
metadata: {name: rke2cp-test, namespace: webhook-test}
spec:
  replicas: 3
  version: v1.32.5+rke2r1
  rolloutStrategy: {type: RollingUpdate}
  machineTemplate:
    spec:
      infrastructureRef: {apiGroup: infrastructure.cluster.x-k8s.io, kind: DockerMachineTemplate, name: controlplane}
";
    let (code, items, stderr) = render(fragment, &[]);
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(items.len(), 2, "init and join");
    assert!(
        !stderr.contains("manifest-infrastructure-template-missing"),
        "{stderr}"
    );
    let (_, doc) = lint(fragment);
    assert!(
        !doc.to_string()
            .contains("manifest-infrastructure-template-missing")
    );
}

#[test]
fn long_names_are_the_names_the_controllers_generate() {
    // A 63-character Cluster (the longest Cluster API takes) and objects named after it.
    let name = format!("c{}", "x".repeat(62));
    let long = cluster("demo-control-plane", "demo-md-0").replace("demo", &name);
    let (code, items, stderr) = render(&long, &[]);
    assert_eq!(code, Some(0), "{stderr}");
    let written = names(&items);
    assert_eq!(written.len(), 3);
    let random = |s: &str| {
        s.len() == 5
            && s.bytes()
                .all(|b| b"bcdfghjklmnpqrstvwxz2456789".contains(&b))
    };
    for n in &written {
        // Each cut to 58 bytes of its base, then five random characters: 63.
        assert_eq!(n.len(), 63, "{n}");
        assert!(random(&n[58..]), "{n}");
        assert!(n.starts_with(&name[..58]), "{n}");
    }
    assert_ne!(written[0], written[1], "two control planes, two names");
    for item in &items {
        // The label is the Cluster's name, which the webhook keeps to 63 characters.
        assert_eq!(
            item["metadata"]["labels"]["cluster.x-k8s.io/cluster-name"],
            name.as_str()
        );
        // The owner reference names the RKE2Config the Secret is named after.
        assert_eq!(
            item["metadata"]["ownerReferences"][0]["name"],
            item["metadata"]["name"]
        );
    }
    // A short name keeps the controllers' dashes: `<rcp>-xxxxx`, `<md>-xxxxx-yyyyy`.
    let (_, items, _) = render(&cluster("demo-control-plane", "demo-md-0"), &[]);
    let written = names(&items);
    assert!(written[0].starts_with("demo-control-plane-") && random(&written[0][19..]));
    let worker = &written[2];
    assert!(worker.starts_with("demo-md-0-"), "{worker}");
    assert!(random(&worker[10..15]) && &worker[15..16] == "-" && random(&worker[16..]));

    // One character more and Cluster API's webhook refuses the Cluster.
    let too_long = cluster("demo-control-plane", "demo-md-0").replace("demo", &format!("{name}y"));
    let (code, _, stderr) = render(&too_long, &[]);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(
        stderr.contains("error: manifest-cluster-name-invalid: Cluster default/")
            && stderr.contains("metadata.name is 64 characters and longer than 63"),
        "{stderr}"
    );
}

/// A cluster whose Secrets reference objects the input lacks: placeholders stand in for a file
/// from a Secret (CAPZ's `azure.json`), the etcd backup's S3 keys and a registry's credentials.
fn with_placeholders() -> String {
    cluster("demo-control-plane", "demo-md-0").replace(
        "  rolloutStrategy: {type: RollingUpdate}\n",
        "  rolloutStrategy: {type: RollingUpdate}
  files:
  - path: /etc/kubernetes/azure.json
    permissions: \"0644\"
    contentFrom:
      secret: {name: demo-control-plane-azure-json, key: control-plane-azure.json}
  privateRegistriesConfig:
    configs:
      registry.example.com:
        authSecret: {name: registry-auth}
  serverConfig:
    etcd:
      backupConfig:
        s3:
          bucket: backups
          endpoint: s3.example.com
          s3CredentialSecret: {name: etcd-s3}
",
    )
}

#[test]
fn two_renders_compare_equal_but_for_the_token_and_the_cas() {
    let manifests = with_placeholders();
    let dir = scratch();
    let mut files = Vec::new();
    for (i, args) in [&["--seed", "1"][..], &["--seed", "2"][..], &[][..]]
        .iter()
        .enumerate()
    {
        let out = cmd()
            .arg("render")
            .args(*args)
            .write_stdin(manifests.clone())
            .output()
            .expect("run");
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains("manifest-missing-reference"), "{stderr}");
        let path = dir.path().join(format!("{i}.yaml"));
        std::fs::write(&path, &out.stdout).expect("write");
        files.push(path);
    }
    let diff = |a: &std::path::Path, b: &std::path::Path, ignore: bool| {
        let mut c = cmd();
        c.arg("diff").arg(a).arg(b).args(["-o", "json"]);
        if ignore {
            c.args(["--ignore", "token,ca"]);
        }
        let out = c.output().expect("run");
        let doc: Value = serde_json::from_slice(&out.stdout).expect("diff -o json is JSON");
        (out.status.code(), doc)
    };
    for other in &files[1..] {
        let (code, doc) = diff(&files[0], other, true);
        assert_eq!(code, Some(0), "{doc:#}");
        let pairs = doc["pairs"].as_array().expect("pairs");
        assert_eq!(pairs.len(), 3);
        // Paired by name: the names are the same on every render.
        assert!(pairs.iter().all(|p| p["paired_by"] == "name"), "{doc:#}");
        assert!(
            pairs
                .iter()
                .all(|p| p["changes"].as_array().is_some_and(Vec::is_empty)),
            "{doc:#}"
        );
        // And the diff can tell them apart: the token differs without the ignore.
        let (code, doc) = diff(&files[0], other, false);
        assert_eq!(code, Some(1), "{doc:#}");
    }
    // One Secret's key, one placeholder: the first control plane and a joining one read the
    // same S3 keys.
    let out = cmd()
        .args(["inspect", "-o", "json", "--show-secrets"])
        .arg(&files[0])
        .output()
        .expect("run");
    let report: Value = serde_json::from_slice(&out.stdout).expect("json");
    let key = |i: usize| report["secrets"][i]["rke2"]["etcd_s3"]["secret_key_sha256"].clone();
    assert!(key(0).is_string(), "{:#}", report["secrets"][0]["rke2"]);
    assert_eq!(key(0), key(1));
}

#[test]
fn render_lint_and_size_name_the_same_secrets() {
    let manifests = with_placeholders();
    let (_, items, _) = render(&manifests, &[]);
    let rendered: Vec<String> = names(&items)
        .into_iter()
        .map(|n| format!("default/{n}"))
        .collect();
    assert_eq!(rendered.len(), 3);
    let (_, linted) = lint(&manifests);
    assert_eq!(secret_names(&linted), rendered);
    let out = cmd()
        .args(["size", "-o", "json"])
        .write_stdin(manifests)
        .output()
        .expect("run");
    let sized: Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(secret_names(&sized), rendered);
}

#[test]
fn a_fact_of_a_cluster_is_one_finding_and_one_line() {
    // Three Secrets installing online: one egress-required, on the first, counting them.
    let manifests = cluster("demo-control-plane", "demo-md-0");
    let (_, doc) = lint(&manifests);
    let egress: Vec<(usize, &Value)> = doc["secrets"]
        .as_array()
        .expect("secrets")
        .iter()
        .enumerate()
        .flat_map(|(i, s)| {
            s["findings"]
                .as_array()
                .expect("findings")
                .iter()
                .filter(|f| f["id"] == "egress-required")
                .map(move |f| (i, f))
        })
        .collect();
    assert_eq!(egress.len(), 1, "{doc:#}");
    assert_eq!(egress[0].0, 0);
    let message = egress[0].1["message"].as_str().expect("message");
    assert!(
        message.contains("the nodes of 3 Secrets of cluster default/demo"),
        "{message}"
    );
    // SARIF: one result for it.
    let out = cmd()
        .args(["lint", "-o", "sarif", "-"])
        .write_stdin(manifests.clone())
        .output()
        .expect("run");
    let sarif: Value = serde_json::from_slice(&out.stdout).expect("SARIF");
    let results = sarif["runs"][0]["results"].as_array().expect("results");
    assert_eq!(
        results
            .iter()
            .filter(|r| r["ruleId"] == "egress-required")
            .count(),
        1
    );
    // Two clusters: one each.
    let two = format!("{manifests}---\n{}", manifests.replace("demo", "other"));
    let (_, doc) = lint(&two);
    let count = doc.to_string().matches("\"egress-required\"").count();
    assert_eq!(count, 2, "{doc:#}");

    // render: a note is counted on one line, an error keeps its own line.
    let no_endpoint = manifests.replace(
        "  controlPlaneEndpoint: {host: demo.example.com, port: 6443}\n",
        "",
    );
    let (code, _, stderr) = render(&no_endpoint, &[]);
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(
        stderr.trim_end(),
        "rke2-payload: 1 note(s) about the manifests (manifest-control-plane-endpoint-missing): rke2-payload lint shows them"
    );
}
