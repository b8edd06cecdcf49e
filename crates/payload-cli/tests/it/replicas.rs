//! MachineDeployment replicas carry the same payload, which `inspect`, `size` and `lint` read once: a
//! replica's report must be exactly what the command prints for that Secret on its own.

use crate::common::{cmd, testdata};
use serde_json::Value;

/// The fixture List's items, each followed by `copies` replicas: renamed, in another namespace,
/// labelled with another cluster.
fn with_replicas(copies: usize) -> String {
    let text = std::fs::read_to_string(testdata().join("secrets/list-all.json")).expect("list");
    let list: Value = serde_json::from_str(&text).expect("JSON");
    let mut all = Vec::new();
    for item in list["items"].as_array().expect("items") {
        all.push(item.clone());
        for i in 0..copies {
            all.push(replica(item, i));
        }
    }
    serde_json::json!({"apiVersion": "v1", "kind": "List", "items": all}).to_string()
}

fn replica(item: &Value, i: usize) -> Value {
    let mut item = item.clone();
    let name = format!(
        "{}-replica-{i}",
        item["metadata"]["name"].as_str().unwrap_or("x")
    );
    item["metadata"]["name"] = Value::String(name);
    item["metadata"]["namespace"] = Value::String(format!("team-{i}"));
    if let Some(labels) = item["metadata"]["labels"].as_object_mut() {
        labels.insert(
            "cluster.x-k8s.io/cluster-name".into(),
            format!("\"quoted\" cluster {i}").into(),
        );
    }
    item
}

fn secrets(args: &[&str], input: String) -> Vec<Value> {
    let out = cmd()
        .args(args)
        .args(["--jobs", "2", "-"])
        .write_stdin(input)
        .output()
        .expect("run");
    assert!(
        out.status.code().is_some_and(|c| c <= 1),
        "{args:?}: {out:?}"
    );
    let doc: Value = serde_json::from_slice(&out.stdout).expect("JSON output");
    doc["secrets"].as_array().expect("secrets").clone()
}

#[test]
fn a_replica_s_report_is_the_report_of_that_secret_alone() {
    let text = std::fs::read_to_string(testdata().join("secrets/list-all.json")).expect("list");
    let list: Value = serde_json::from_str(&text).expect("JSON");
    let items = list["items"].as_array().expect("items");
    for args in [
        &["inspect", "--output", "json"][..],
        &["size", "--output", "json"],
    ] {
        let together = secrets(args, with_replicas(2));
        let mut compared = 0;
        // The Secrets holding bootstrap data (a `format` key); the others are skipped.
        for item in items
            .iter()
            .filter(|item| item["data"].get("format").is_some())
        {
            for i in 0..2 {
                let alone = secrets(args, replica(item, i).to_string());
                let want = alone.first().expect("one report");
                let got = together
                    .iter()
                    .find(|s| s["name"] == want["name"])
                    .expect("the replica is reported");
                assert_eq!(got, want, "{args:?} {}", want["name"]);
                assert_eq!(want["namespace"], format!("team-{i}"));
                if args[0] == "inspect" {
                    assert_eq!(want["cluster"], format!("\"quoted\" cluster {i}"));
                }
                compared += 1;
            }
        }
        assert!(compared >= 60, "{args:?}: {compared}");
    }
}

/// `lint` reads each payload once too, but what it finds across a cluster (a joining node whose
/// token differs from the first control plane's) belongs to each Secret, by its own cluster.
#[test]
fn lint_findings_of_a_replica_follow_its_own_cluster() {
    let text = std::fs::read_to_string(testdata().join("secrets/list-all.json")).expect("list");
    let list: Value = serde_json::from_str(&text).expect("JSON");
    let userdata =
        std::fs::read_to_string(testdata().join("secrets/join-cloud-config-online.userdata"))
            .expect("userdata");
    assert!(userdata.contains("token: a3e30ef46c156fb7b1fa288ed16d6ffe"));
    let other = userdata.replace(
        "token: a3e30ef46c156fb7b1fa288ed16d6ffe",
        "token: not-the-cluster-token",
    );
    // The same payload three times: two Secrets in the fixtures' cluster, one in a cluster with
    // no first control plane to compare with.
    let mutant = |name: &str, cluster: &str| {
        serde_json::json!({
            "apiVersion": "v1", "kind": "Secret", "type": "cluster.x-k8s.io/secret",
            "metadata": {"name": name, "namespace": "default",
                         "labels": {"cluster.x-k8s.io/cluster-name": cluster}},
            "stringData": {"format": "cloud-config", "value": other},
        })
    };
    let mut items = list["items"].as_array().expect("items").clone();
    items.push(mutant("mutant-a", "demo"));
    items.push(mutant("mutant-b", "elsewhere"));
    items.push(mutant("mutant-c", "demo"));
    let input = serde_json::json!({"apiVersion": "v1", "kind": "List", "items": items});
    let linted = secrets(&["lint", "--output", "json"], input.to_string());
    let ids = |name: &str| -> Vec<String> {
        let secret = linted
            .iter()
            .find(|s| s["name"] == name)
            .unwrap_or_else(|| panic!("{name} is reported"));
        secret["findings"]
            .as_array()
            .expect("findings")
            .iter()
            .map(|f| f["id"].as_str().expect("id").to_owned())
            .collect()
    };
    let mismatch = "token-mismatch".to_owned();
    assert!(ids("mutant-a").contains(&mismatch), "{:?}", ids("mutant-a"));
    assert!(ids("mutant-c").contains(&mismatch), "{:?}", ids("mutant-c"));
    assert!(
        !ids("mutant-b").contains(&mismatch),
        "{:?}",
        ids("mutant-b")
    );
    // Apart from the cluster checks, the three read the same (`egress-required` is said once
    // per cluster, on its first Secret that installs online: none of the mutants in `demo`, the
    // only Secret of `elsewhere`).
    assert!(ids("mutant-b").contains(&"egress-required".to_owned()));
    let without = |name: &str| -> Vec<String> {
        ids(name)
            .into_iter()
            .filter(|id| *id != mismatch && id != "egress-required")
            .collect()
    };
    assert!(!ids("mutant-a").contains(&"egress-required".to_owned()));
    assert_eq!(without("mutant-a"), without("mutant-b"));
    assert_eq!(without("mutant-a"), without("mutant-c"));
    let b = linted.iter().find(|s| s["name"] == "mutant-b").expect("b");
    assert_eq!(b["cluster"], "elsewhere");
}
