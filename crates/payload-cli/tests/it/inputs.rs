//! One reader of objects at the door: several files, folders, JSON sequences, live dumps told
//! from templates, other providers' bootstrap Secrets passed over, and no input annotation that
//! switches a gate off.

use base64::Engine as _;
use serde_json::{Value, json};

use crate::common::{cmd, scratch, testdata};

/// Every object of a YAML fixture (documents and List items), as JSON values.
fn objects(path: &std::path::Path) -> Vec<Value> {
    let text = std::fs::read_to_string(path).expect("fixture");
    let docs: Vec<Value> = serde_saphyr::from_multiple(&text).expect("YAML");
    docs.into_iter()
        .filter(|d| d.is_object())
        .flat_map(|d| match d.get("items") {
            Some(Value::Array(items)) => items.clone(),
            _ => vec![d],
        })
        .collect()
}

/// `object` as the API server returns it: a uid, a resource version, a creation time.
fn live(mut object: Value, n: usize) -> Value {
    let meta = object["metadata"].as_object_mut().expect("metadata");
    meta.insert(
        "uid".into(),
        json!(format!("0b8c6f0e-0000-4000-8000-{n:012}")),
    );
    meta.insert("resourceVersion".into(), json!(n.to_string()));
    meta.insert("creationTimestamp".into(), json!("2026-01-01T00:00:00Z"));
    object
}

/// A live dump of cluster `demo` (`kubectl get cluster,rke2controlplane,rke2config,secret
/// -o json`): its manifests as live objects with a status, a live RKE2Config, the real
/// bootstrap Secret owned by it, and the cluster's token Secret.
fn live_dump() -> Value {
    let mut items = Vec::new();
    let manifests = testdata().join("manifests/init-cloud-config-online.yaml");
    for (n, object) in objects(&manifests).into_iter().enumerate() {
        let mut object = live(object, n);
        object["status"] = json!({"initialization": {"provisioned": true}});
        items.push(object);
    }
    let secret = objects(&testdata().join("secrets/init-cloud-config-online.yaml")).remove(0);
    let name = secret["metadata"]["name"]
        .as_str()
        .expect("a name")
        .to_owned();
    items.push(live(
        json!({
            "apiVersion": "bootstrap.cluster.x-k8s.io/v1beta2",
            "kind": "RKE2Config",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {},
            "status": {"dataSecretName": name},
        }),
        90,
    ));
    let mut secret = live(secret, 91);
    secret["metadata"]["ownerReferences"] = json!([{
        "apiVersion": "bootstrap.cluster.x-k8s.io/v1beta2",
        "kind": "RKE2Config", "name": name, "uid": "u", "controller": true,
    }]);
    items.push(secret);
    items.push(live(
        json!({
            "apiVersion": "v1", "kind": "Secret", "type": "cluster.x-k8s.io/secret",
            "metadata": {"name": "demo-token", "namespace": "default",
                         "labels": {"cluster.x-k8s.io/cluster-name": "demo"}},
            "data": {"value": "c2VjcmV0LXRva2Vu"},
        }),
        92,
    ));
    json!({"apiVersion": "v1", "kind": "List", "items": items, "metadata": {"resourceVersion": ""}})
}

/// The names of the Secrets `inspect -o json` reports for these arguments (exit 0 asserted).
fn inspected(args: &[&std::ffi::OsStr]) -> Vec<String> {
    let out = cmd()
        .arg("inspect")
        .args(args)
        .args(["-o", "json"])
        .output()
        .expect("runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    doc["secrets"]
        .as_array()
        .expect("secrets")
        .iter()
        .map(|s| s["name"].as_str().unwrap_or_default().to_owned())
        .collect()
}

#[test]
fn a_live_dump_is_answered_from_its_real_secrets_and_nothing_that_exists_is_rendered() {
    let dir = scratch();
    let dump = dir.path().join("dump.json");
    let value = live_dump();
    std::fs::write(&dump, serde_json::to_vec_pretty(&value).expect("JSON")).expect("write");
    let real = value["items"]
        .as_array()
        .expect("items")
        .iter()
        .find(|o| o["metadata"]["ownerReferences"][0]["kind"] == "RKE2Config")
        .and_then(|o| o["metadata"]["name"].as_str())
        .expect("the bootstrap Secret")
        .to_owned();
    assert_eq!(inspected(&[dump.as_os_str()]), std::slice::from_ref(&real));
    // `--name` picks the real Secret in every reader.
    for sub in ["inspect", "size", "lint"] {
        cmd()
            .args([sub, "--name", &real])
            .arg(&dump)
            .assert()
            .success();
    }
    cmd()
        .args(["decode", "--name", &real])
        .arg(&dump)
        .assert()
        .success()
        .stdout(predicates::str::contains("#cloud-config"));
    // The same dump as YAML, and as kubectl's watch stream (one JSON object after another).
    let yaml = dir.path().join("dump.yaml");
    std::fs::write(&yaml, serde_saphyr::to_string(&value).expect("YAML")).expect("write");
    assert_eq!(inspected(&[yaml.as_os_str()]), std::slice::from_ref(&real));
    let stream = dir.path().join("watch.json");
    let text: String = value["items"]
        .as_array()
        .expect("items")
        .iter()
        .map(|o| serde_json::to_string_pretty(o).expect("JSON") + "\n")
        .collect();
    std::fs::write(&stream, text).expect("write");
    assert_eq!(
        inspected(&[stream.as_os_str()]),
        std::slice::from_ref(&real)
    );
}

#[test]
fn templates_are_previewed_only_where_no_secret_of_the_input_answers_them() {
    let manifests = testdata().join("manifests/init-cloud-config-online.yaml");
    let secret = testdata().join("secrets/init-cloud-config-online.yaml");
    // The templates alone: a preview.
    let previewed = inspected(&[manifests.as_os_str()]);
    assert_eq!(previewed.len(), 1);
    // With the cluster's real Secret beside them: the real one, and the output says so.
    let both = cmd()
        .arg("inspect")
        .arg(&manifests)
        .arg(&secret)
        .args(["-o", "json"])
        .output()
        .expect("runs");
    assert!(both.status.success());
    let doc: Value = serde_json::from_slice(&both.stdout).expect("JSON");
    let names: Vec<&str> = doc["secrets"]
        .as_array()
        .expect("secrets")
        .iter()
        .filter_map(|s| s["name"].as_str())
        .collect();
    assert_eq!(names, ["demo-control-plane-c8flt"]);
    assert_ne!(previewed[0], names[0]);
    let told = String::from_utf8_lossy(&both.stderr);
    assert!(
        told.contains("1 bootstrap Secret(s) read as the input holds them"),
        "{told}"
    );
    assert!(told.contains("1 preview(s) left out"), "{told}");
}

/// A bootstrap Secret of CAPRKE2's type holding kubeadm's cloud-config (CABPK's shape).
fn kubeadm_secret(owned: bool) -> Value {
    let userdata = "#cloud-config\nwrite_files:\n- path: /run/kubeadm/kubeadm.yaml\n  owner: root:root\n  permissions: '0640'\n  content: |\n    apiVersion: kubeadm.k8s.io/v1beta4\n    kind: InitConfiguration\nruncmd:\n- 'kubeadm init --config /run/kubeadm/kubeadm.yaml  && echo success > /run/cluster-api/bootstrap-success.complete'\n";
    let b64 = |s: &str| base64::engine::general_purpose::STANDARD.encode(s);
    let mut secret = json!({
        "apiVersion": "v1", "kind": "Secret", "type": "cluster.x-k8s.io/secret",
        "metadata": {"name": "kcp-abcde", "namespace": "default",
                     "labels": {"cluster.x-k8s.io/cluster-name": "kcp"}},
        "data": {"format": b64("cloud-config"), "value": b64(userdata)},
    });
    if owned {
        secret["metadata"]["ownerReferences"] = json!([{
            "apiVersion": "bootstrap.cluster.x-k8s.io/v1beta1", "kind": "KubeadmConfig",
            "name": "kcp-abcde", "uid": "u", "controller": true,
        }]);
    }
    secret
}

#[test]
fn another_providers_bootstrap_secret_is_skipped_and_counted_not_an_rke2_error() {
    let dir = scratch();
    let rke2 = testdata().join("secrets/worker-cloud-config-online.yaml");
    for owned in [true, false] {
        let path = dir.path().join(format!("kubeadm-{owned}.json"));
        std::fs::write(&path, kubeadm_secret(owned).to_string()).expect("write");
        for sub in ["inspect", "size", "lint"] {
            let out = cmd().arg(sub).arg(&path).output().expect("runs");
            assert_eq!(out.status.code(), Some(0), "{sub} owned={owned}");
            let err = String::from_utf8_lossy(&out.stderr);
            assert!(
                err.contains("skipped 1 bootstrap Secret(s) of other providers"),
                "{sub}: {err}"
            );
            assert!(!String::from_utf8_lossy(&out.stdout).contains("rke2-config-missing"));
        }
        // Beside an RKE2 Secret: that one is reported, the other counted in the document.
        let out = cmd()
            .args(["lint", "-o", "json"])
            .arg(&path)
            .arg(&rke2)
            .output()
            .expect("runs");
        assert_eq!(out.status.code(), Some(0));
        let doc: Value = serde_json::from_slice(&out.stdout).expect("JSON");
        assert_eq!(doc["secrets"].as_array().map(Vec::len), Some(1));
        let skipped = &doc["skipped"][0];
        assert_eq!(skipped["name"], "kcp-abcde");
        let provider = if owned { "KubeadmConfig" } else { "kubeadm" };
        assert_eq!(skipped["provider"], provider);
        let out = cmd()
            .args(["inspect", "-o", "json"])
            .arg(&path)
            .arg(&rke2)
            .output()
            .expect("runs");
        let doc: Value = serde_json::from_slice(&out.stdout).expect("JSON");
        assert_eq!(doc["skipped_other_providers"][0]["provider"], provider);
    }
}

/// A cloud-config Secret of about 28 KB: over the 16 KB of EC2 user data and Linode.
fn big_secret(annotation: Option<&str>) -> Value {
    let mut userdata = String::from(
        "#cloud-config\nwrite_files:\n- path: /etc/rancher/rke2/config.yaml\n  content: |\n    server: https://cp.example:9345\n",
    );
    for i in 0..120 {
        userdata.push_str(&format!(
            "- path: /etc/extra/{i}.conf\n  content: {}\n",
            "x".repeat(220)
        ));
    }
    let mut secret = json!({
        "apiVersion": "v1", "kind": "Secret", "type": "cluster.x-k8s.io/secret",
        "metadata": {"name": "big", "namespace": "default"},
        "stringData": {"format": "cloud-config", "value": userdata},
    });
    if let Some(text) = annotation {
        secret["metadata"]["annotations"] = json!({"rke2-payload/rendered-from": text});
    }
    secret
}

#[test]
fn an_annotation_of_the_input_never_switches_the_size_gate_off() {
    let dir = scratch();
    let plain = dir.path().join("plain.json");
    let forged = dir.path().join("forged.json");
    let claim = r#"{"file":"x.yaml","object":"RKE2ControlPlane d/x","line":1,"delivery":{"cloud":"docker","reason":"forged"}}"#;
    std::fs::write(&plain, big_secret(None).to_string()).expect("write");
    std::fs::write(&forged, big_secret(Some(claim)).to_string()).expect("write");
    let verdicts = |args: &[&std::ffi::OsStr]| -> (Option<i32>, Vec<String>) {
        let out = cmd()
            .arg("size")
            .args(args)
            .args(["-o", "json"])
            .output()
            .expect("runs");
        let doc: Value = serde_json::from_slice(&out.stdout).expect("JSON");
        let clouds = doc["secrets"][0]["clouds"]
            .as_array()
            .expect("clouds")
            .iter()
            .map(|c| c["cloud"].as_str().unwrap_or_default().to_owned())
            .collect();
        (out.status.code(), clouds)
    };
    let (code, clouds) = verdicts(&[plain.as_os_str()]);
    assert_eq!(code, Some(1));
    assert!(clouds.iter().any(|c| c == "aws-user-data"));
    assert_eq!(verdicts(&[forged.as_os_str()]), (code, clouds.clone()));
    // Asked to read it, the annotation adds its path and takes no target away.
    let (asked, with_path) = verdicts(&[forged.as_os_str(), "--from-render".as_ref()]);
    assert_eq!(asked, Some(1));
    assert_eq!(with_path[0], "docker");
    assert!(clouds.iter().all(|c| with_path.contains(c)));
    // `lint` alike: its size check is not switched off either.
    for args in [
        vec![forged.as_os_str()],
        vec![forged.as_os_str(), "--from-render".as_ref()],
    ] {
        cmd()
            .args([
                "lint",
                "--cloud-init-schema",
                "none",
                "--cloud",
                "aws-user-data",
            ])
            .args(&args)
            .assert()
            .code(1);
    }
}

#[test]
fn several_files_folders_and_json_sequences_are_one_input_in_every_reader() {
    let dir = scratch();
    let secrets = testdata().join("secrets");
    let init = secrets.join("init-cloud-config-online.yaml");
    let worker = secrets.join("worker-cloud-config-online.yaml");
    let mut sequence = String::new();
    for path in [&init, &worker] {
        for object in objects(path) {
            sequence.push_str(&object.to_string());
            sequence.push('\n');
        }
    }
    let seq = dir.path().join("seq.json");
    std::fs::write(&seq, &sequence).expect("write");
    let folder = dir.path().join("folder");
    std::fs::create_dir_all(folder.join("nested")).expect("mkdir");
    std::fs::copy(&init, folder.join("a.yaml")).expect("copy");
    std::fs::copy(&worker, folder.join("nested/b.yaml")).expect("copy");
    std::fs::write(folder.join("notes.txt"), "not read").expect("write");
    let want = ["demo-control-plane-c8flt", "demo-md-0-zsj7q-kmq7r"];
    assert_eq!(inspected(&[init.as_os_str(), worker.as_os_str()]), want);
    assert_eq!(
        inspected(&[
            "-f".as_ref(),
            init.as_os_str(),
            "-f".as_ref(),
            worker.as_os_str()
        ]),
        want
    );
    assert_eq!(inspected(&[folder.as_os_str()]), want);
    assert_eq!(inspected(&[seq.as_os_str()]), want);
    for input in [
        vec![init.as_os_str(), worker.as_os_str()],
        vec![folder.as_os_str()],
        vec![seq.as_os_str()],
    ] {
        for sub in [
            &["size", "-o", "json"][..],
            &["lint", "-o", "json", "--cloud-init-schema", "none"],
        ] {
            let out = cmd().args(sub).args(&input).output().expect("runs");
            let doc: Value = serde_json::from_slice(&out.stdout).expect("JSON");
            assert_eq!(
                doc["secrets"].as_array().map(Vec::len),
                Some(2),
                "{sub:?} {input:?}"
            );
        }
        cmd()
            .args(["decode", "--name", "demo-md-0-zsj7q-kmq7r"])
            .args(&input)
            .assert()
            .success()
            .stdout(predicates::str::contains("#cloud-config"));
        cmd()
            .args([
                "encode",
                "--name",
                "demo-control-plane-c8flt",
                "--gzip",
                "--emit",
                "value",
            ])
            .args(&input)
            .assert()
            .success();
        // Redacted, the Secrets still read, and the token is gone.
        let out = cmd().arg("redact").args(&input).output().expect("runs");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let redacted = dir.path().join("redacted");
        std::fs::write(&redacted, &out.stdout).expect("write");
        assert_eq!(inspected(&[redacted.as_os_str()]), want);
    }
    // A name both inputs hold is ambiguous; a folder without manifests is an error that says so.
    cmd()
        .args(["decode", "--name", "demo-md-0-zsj7q-kmq7r"])
        .arg(&worker)
        .arg(&worker)
        .assert()
        .code(2)
        .stderr(predicates::str::contains("2 bootstrap Secrets match"));
    let empty = dir.path().join("empty");
    std::fs::create_dir_all(&empty).expect("mkdir");
    cmd()
        .arg("inspect")
        .arg(&empty)
        .assert()
        .code(2)
        .stderr(predicates::str::contains(
            "holds no .yaml, .yml or .json file",
        ));
}

#[test]
fn diff_takes_a_folder_or_a_json_sequence_on_either_side() {
    let dir = scratch();
    let secrets = testdata().join("secrets");
    let before = dir.path().join("before");
    std::fs::create_dir_all(&before).expect("mkdir");
    for name in [
        "init-cloud-config-online.yaml",
        "worker-cloud-config-online.yaml",
    ] {
        std::fs::copy(secrets.join(name), before.join(name)).expect("copy");
    }
    let mut sequence = String::new();
    for name in [
        "init-cloud-config-online.yaml",
        "worker-cloud-config-online.yaml",
    ] {
        for object in objects(&secrets.join(name)) {
            sequence.push_str(&object.to_string());
            sequence.push('\n');
        }
    }
    let after = dir.path().join("after.json");
    std::fs::write(&after, sequence).expect("write");
    // The same two Secrets on both sides: nothing differs, exit 0.
    let out = cmd()
        .args(["diff", "-o", "json"])
        .arg(&before)
        .arg(&after)
        .output()
        .expect("runs");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(
        report["pairs"].as_array().map(Vec::len),
        Some(2),
        "{report}"
    );
    // One Secret fewer on the right: it differs, exit 1.
    cmd()
        .arg("diff")
        .arg(&before)
        .arg(secrets.join("init-cloud-config-online.yaml"))
        .assert()
        .code(1);
}
