//! `doctor` on the dumps of `crates/payload-doctor/tests/data/dumps/` (written from Cluster
//! API's and CAPRKE2's types, one per broken link, healthy ones of both API versions, several
//! clusters per dump, missing kinds), from the files and through the real kubectl against the
//! local stand-in of the API server; RBAC refusals, kinds the server does not serve, a kubectl
//! that fails.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::common::*;
use crate::standin::{Refusals, StandIn, have_kubectl, run_in};

fn dumps() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../payload-doctor/tests/data/dumps")
}

/// What a dump should give: per cluster, the first broken link and the object it names.
struct Expected {
    dump: String,
    clusters: Vec<Value>,
    /// Clusters of another control plane, to be left alone.
    ignored: Vec<Value>,
    exit: i32,
    secrets: Vec<String>,
}

fn expectations() -> Vec<Expected> {
    let text = std::fs::read_to_string(dumps().join("expected.json")).expect("expected.json");
    let doc: Value = serde_json::from_str(&text).expect("JSON");
    doc["files"]
        .as_object()
        .expect("files")
        .iter()
        .map(|(dump, e)| Expected {
            dump: dump.clone(),
            clusters: e["clusters"].as_array().expect("clusters").clone(),
            ignored: e["ignored_clusters"]
                .as_array()
                .cloned()
                .unwrap_or_default(),
            exit: e["exit"]
                .as_i64()
                .and_then(|c| i32::try_from(c).ok())
                .expect("exit"),
            secrets: e["secrets"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|s| s.as_str().map(str::to_owned))
                .collect(),
        })
        .collect()
}

fn json_of(out: &std::process::Output, what: &str) -> Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{what}: JSON ({e}): {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

/// Checks a diagnosis against what the dump should give.
fn check(doc: &Value, code: Option<i32>, e: &Expected, how: &str) {
    assert_eq!(doc["schema"], "rke2-payload/doctor/v1", "{how}");
    for want in &e.clusters {
        let (ns, name) = (&want["namespace"], &want["cluster"]);
        let got = doc["clusters"]
            .as_array()
            .expect("clusters")
            .iter()
            .find(|c| &c["namespace"] == ns && &c["name"] == name)
            .unwrap_or_else(|| panic!("{how}: no cluster {ns}/{name} in {doc}"));
        assert_eq!(
            got["first_broken"],
            want["first_broken"],
            "{how}: {ns}/{name}: {}",
            serde_json::to_string_pretty(&got["links"]).unwrap_or_default()
        );
        if let Some(object) = want["object"]
            .as_str()
            .filter(|_| !want["first_broken"].is_null())
        {
            let link = got["links"]
                .as_array()
                .expect("links")
                .iter()
                .find(|l| l["id"] == got["first_broken"])
                .expect("the broken link");
            let named = format!(
                "{} {}/{}",
                link["object"]["kind"].as_str().unwrap_or(""),
                link["object"]["namespace"].as_str().unwrap_or(""),
                link["object"]["name"].as_str().unwrap_or("")
            );
            assert_eq!(named, object, "{how}: {ns}/{name}: {link}");
        }
        for warning in want["warnings"].as_array().into_iter().flatten() {
            assert!(
                got["links"]
                    .as_array()
                    .expect("links")
                    .iter()
                    .any(|l| &l["id"] == warning && l["state"] == "warning"),
                "{how}: {ns}/{name}: no warning {warning}"
            );
        }
    }
    for left in &e.ignored {
        let skipped = doc["skipped_clusters"]
            .as_array()
            .expect("skipped_clusters");
        assert!(
            skipped
                .iter()
                .any(|s| s["namespace"] == left["namespace"] && s["name"] == left["cluster"]),
            "{how}: {left} is not left alone: {skipped:?}"
        );
    }
    assert_eq!(code, Some(e.exit), "{how}");
}

/// Every output format of a diagnosis, none of which holds a secret of the dump.
fn no_secret_in_any_format(input: &Path, e: &Expected) {
    for format in ["text", "json", "yaml", "junit", "github"] {
        let out = cmd()
            .args(["doctor", "-o", format])
            .arg(input)
            .output()
            .expect("run");
        let all = [out.stdout.as_slice(), out.stderr.as_slice()].concat();
        let text = String::from_utf8_lossy(&all);
        for secret in &e.secrets {
            assert!(
                !text.contains(secret.as_str()),
                "{}: {format} shows a secret",
                e.dump
            );
        }
        assert!(
            out.status.code().is_some_and(|c| c < 2),
            "{}: {format}: {text}",
            e.dump
        );
    }
}

#[test]
fn each_dump_gives_its_first_broken_link_and_exit_code() {
    let all = expectations();
    assert!(all.len() >= 17, "{} dumps", all.len());
    for e in &all {
        let input = dumps().join(&e.dump);
        let out = cmd()
            .args(["doctor", "-o", "json"])
            .arg(&input)
            .output()
            .expect("run");
        check(&json_of(&out, &e.dump), out.status.code(), e, &e.dump);
        no_secret_in_any_format(&input, e);
    }
}

/// The objects of a dump (a file or a folder), its Lists flattened.
fn objects_of(path: &Path) -> Vec<Value> {
    let mut files = vec![path.to_owned()];
    if path.is_dir() {
        files = std::fs::read_dir(path)
            .expect("folder")
            .map(|e| e.expect("entry").path())
            .filter(|p| p.extension().is_some_and(|x| x == "yaml" || x == "json"))
            .collect();
    }
    let mut out = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(&file).expect("dump");
        let docs: Vec<Value> = if text.trim_start().starts_with('{') {
            vec![serde_json::from_str(&text).expect("JSON")]
        } else {
            serde_saphyr::from_multiple(&text).expect("YAML")
        };
        for doc in docs {
            match doc["items"].as_array() {
                Some(items) => out.extend(items.iter().cloned()),
                None if !doc.is_null() => out.push(doc),
                None => {}
            }
        }
    }
    out
}

#[test]
fn through_kubectl_each_dump_gives_the_same_answer_with_one_get_per_kind() {
    if !have_kubectl() {
        return;
    }
    let dir = scratch();
    for e in expectations() {
        let api = StandIn::start(objects_of(&dumps().join(&e.dump)), Refusals::default());
        let out = api.run(dir.path(), &["doctor", "-A", "-o", "json"]);
        let how = format!("{} through kubectl", e.dump);
        check(&json_of(&out, &how), out.status.code(), &e, &how);
        for plural in [
            "clusters",
            "machines",
            "rke2controlplanes",
            "rke2configs",
            "secrets",
            "providers",
        ] {
            let asked: Vec<String> = api
                .requests_for(plural)
                .into_iter()
                .filter(|r| !r.starts_with("/apis?") && r.contains(&format!("/{plural}")))
                .collect();
            assert_eq!(asked.len(), 1, "{how}: {plural}: {asked:?}");
        }
    }
}

#[test]
fn what_the_user_may_not_read_is_unknown_with_kubectls_sentence() {
    if !have_kubectl() {
        return;
    }
    let dir = scratch();
    let e = expectations()
        .into_iter()
        .find(|e| e.dump == "healthy-v1beta2.yaml")
        .expect("a healthy dump");
    let api = StandIn::start(
        objects_of(&dumps().join(&e.dump)),
        Refusals {
            forbidden: vec!["secrets"],
            unserved: vec!["clusterctl.cluster.x-k8s.io"],
        },
    );
    let kubeconfig = api.kubeconfig(dir.path());
    let out = api.run(dir.path(), &["doctor", "-A", "-o", "json"]);
    let doc = json_of(&out, "refused");
    // Nothing is broken by what could not be read: exit 0, the links say unknown.
    assert_eq!(out.status.code(), Some(0), "{doc}");
    let unread = doc["unread"].as_array().expect("unread");
    let reasons: Vec<(&str, &str)> = unread
        .iter()
        .map(|u| {
            (
                u["resource"].as_str().unwrap_or(""),
                u["reason"].as_str().unwrap_or(""),
            )
        })
        .collect();
    assert!(reasons.contains(&("secrets", "refused")), "{reasons:?}");
    assert!(
        reasons.contains(&("providers.clusterctl.cluster.x-k8s.io", "not-served")),
        "{reasons:?}"
    );
    for c in doc["clusters"].as_array().expect("clusters") {
        let token = c["links"]
            .as_array()
            .expect("links")
            .iter()
            .find(|l| l["id"] == "token-secret")
            .expect("link");
        assert_eq!(token["state"], "unknown");
        assert!(
            token["seen"]
                .as_str()
                .is_some_and(|s| s.contains("forbidden")),
            "{token}"
        );
    }
    // A kubectl that cannot reach its server fails the command: one sentence, exit 2.
    let out = run_in(
        dir.path(),
        &[
            "doctor",
            "--from-cluster",
            "--kubeconfig",
            kubeconfig.to_str().expect("path"),
            "--context",
            "other",
        ],
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("kubectl"), "{err}");
}

#[test]
fn a_dump_that_does_not_read_or_holds_no_rke2_cluster_is_exit_2() {
    let dir = scratch();
    let bad = dir.path().join("bad.yaml");
    std::fs::write(&bad, "kind: List\nitems: [\n").expect("write");
    let out = cmd().arg("doctor").arg(&bad).output().expect("run");
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
    let empty = dir.path().join("empty.yaml");
    std::fs::write(
        &empty,
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n",
    )
    .expect("write");
    // No RKE2 cluster (none in the input, or none the selection names) is an input error: a
    // gate never passes on nothing.
    let out = cmd().arg("doctor").arg(&empty).output().expect("run");
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
    assert!(String::from_utf8_lossy(&out.stderr).contains("no RKE2 cluster in the input"));
    let out = cmd()
        .args(["doctor", "--cluster-name", "no-such-cluster"])
        .arg(dumps().join("healthy-v1beta2.yaml"))
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("matching --cluster-name no-such-cluster"),
        "{err}"
    );
}

#[test]
fn size_from_the_cluster_measures_the_path_each_machine_s_infrastructure_names() {
    if !have_kubectl() {
        return;
    }
    let dir = scratch();
    let mut objects = objects_of(&dumps().join("healthy-v1beta2.yaml"));
    // Each Machine's AWSMachine, with the data in EC2 user data (16 KB), not Secrets Manager.
    let machines: Vec<Value> = objects
        .iter()
        .filter(|o| o["kind"] == "Machine")
        .cloned()
        .collect();
    for m in &machines {
        objects.push(serde_json::json!({
            "apiVersion": "infrastructure.cluster.x-k8s.io/v1beta2", "kind": "AWSMachine",
            "metadata": {"name": m["spec"]["infrastructureRef"]["name"], "namespace": m["metadata"]["namespace"]},
            "spec": {"cloudInit": {"insecureSkipSecretsManager": true}, "instanceType": "m6i.large"}
        }));
    }
    let size = |refusals: Refusals| {
        let api = StandIn::start(objects.clone(), refusals);
        // A namespace with no bootstrap Secret is an input error, as for every reader.
        let none = api.run(dir.path(), &["size", "-n", "nowhere"]);
        assert_eq!(
            none.status.code(),
            Some(2),
            "{}",
            String::from_utf8_lossy(&none.stderr)
        );
        let out = api.run(dir.path(), &["size", "-A", "-o", "json"]);
        let doc = json_of(&out, "size");
        (
            doc,
            String::from_utf8_lossy(&out.stderr).into_owned(),
            api.requests_for("awsmachines"),
        )
    };
    let (doc, _, asked) = size(Refusals::default());
    assert_eq!(asked.len(), 1, "{asked:?}");
    let secrets = doc["secrets"].as_array().expect("secrets");
    assert_eq!(secrets.len(), machines.len(), "{doc}");
    for s in secrets {
        let clouds: Vec<&str> = s["clouds"]
            .as_array()
            .expect("clouds")
            .iter()
            .filter_map(|v| v["cloud"].as_str())
            .collect();
        assert_eq!(clouds, ["aws-user-data"], "{s}");
        let path = s["clouds"][0]["path"].as_str().unwrap_or("");
        assert!(path.contains("the live AWSMachine"), "{path}");
    }
    // Without the infrastructure kind, every platform, and standard error says why.
    let (doc, err, _) = size(Refusals {
        unserved: vec!["infrastructure.cluster.x-k8s.io"],
        ..Refusals::default()
    });
    assert!(err.contains("not read"), "{err}");
    let clouds = doc["secrets"][0]["clouds"]
        .as_array()
        .expect("clouds")
        .len();
    assert!(clouds > 1, "{doc}");
}

#[test]
fn size_from_the_cluster_follows_the_cluster_s_infrastructure_where_the_path_depends_on_it() {
    if !have_kubectl() {
        return;
    }
    let dir = scratch();
    let base = objects_of(&dumps().join("healthy-v1beta2.yaml"));
    let group = "infrastructure.cluster.x-k8s.io";
    // Linode Machines; the Clusters' LinodeCluster with or without an object store.
    let with_store = |store: bool| -> Vec<Value> {
        let mut objects = Vec::new();
        for o in &base {
            let mut o = o.clone();
            if o["kind"] == "Machine" || o["kind"] == "Cluster" {
                let kind = if o["kind"] == "Machine" {
                    "LinodeMachine"
                } else {
                    "LinodeCluster"
                };
                let name = format!("{}-linode", o["metadata"]["name"].as_str().unwrap_or(""));
                o["spec"]["infrastructureRef"] =
                    serde_json::json!({"apiGroup": group, "kind": kind, "name": name});
                let mut spec = serde_json::json!({"region": "us-ord"});
                if store && kind == "LinodeCluster" {
                    spec["objectStore"] = serde_json::json!({"credentialsRef": {"name": "bucket"}});
                }
                objects.push(serde_json::json!({
                    "apiVersion": format!("{group}/v1alpha2"), "kind": kind,
                    "metadata": {"name": name, "namespace": o["metadata"]["namespace"]},
                    "spec": spec,
                }));
            }
            objects.push(o);
        }
        objects
    };
    let judged = |objects: Vec<Value>, refusals: Refusals| -> (Vec<String>, Vec<String>, String) {
        let api = StandIn::start(objects, refusals);
        let out = api.run(dir.path(), &["size", "-A", "-o", "json"]);
        let doc = json_of(&out, "size");
        let clouds = doc["secrets"]
            .as_array()
            .expect("secrets")
            .iter()
            .flat_map(|s| s["clouds"].as_array().cloned().unwrap_or_default())
            .filter_map(|c| c["cloud"].as_str().map(str::to_owned))
            .collect();
        (
            clouds,
            api.requests_for("linodeclusters"),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let clouds = |objects: Vec<Value>| {
        let (clouds, asked, _) = judged(objects, Refusals::default());
        (clouds, asked)
    };
    let (without, _) = clouds(with_store(false));
    assert!(
        !without.is_empty() && without.iter().all(|c| c == "linode"),
        "{without:?}"
    );
    let (with, asked) = clouds(with_store(true));
    assert_eq!(asked.len(), 1, "the LinodeClusters read once: {asked:?}");
    assert!(
        !with.is_empty() && with.iter().all(|c| c == "linode-object-store"),
        "{with:?}"
    );
    // The LinodeClusters not readable: the Machines' path, and standard error says so (not
    // "every platform").
    let (forbidden, _, err) = judged(
        with_store(true),
        Refusals {
            forbidden: vec!["linodeclusters"],
            ..Refusals::default()
        },
    );
    assert!(
        !forbidden.is_empty() && forbidden.iter().all(|c| c == "linode"),
        "{forbidden:?}"
    );
    assert!(
        err.contains("not read") && err.contains("without what the cluster's infrastructure adds"),
        "{err}"
    );
}
