//! `diff`: exit codes as diff(1)'s, a fixture against itself, pairing, ignores, the outputs, and
//! a template change seen through `render` before and after.

use serde_json::Value;

use crate::common::{cmd, fixtures, scratch, testdata};

#[test]
fn every_fixture_against_itself_is_no_difference() {
    for entry in fixtures() {
        let file = testdata()
            .join("secrets")
            .join(entry["file"].as_str().expect("file"));
        let out = cmd()
            .arg("diff")
            .arg(&file)
            .arg(&file)
            .output()
            .expect("run");
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}: {}{}",
            file.display(),
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(String::from_utf8_lossy(&out.stdout).contains("no differences"));
    }
    // A whole List against itself too.
    let list = testdata().join("secrets/list-all.yaml");
    let out = cmd()
        .arg("diff")
        .arg(&list)
        .arg(&list)
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(0));
}

#[test]
fn differences_exit_1_errors_exit_2() {
    let a = testdata().join("secrets/worker-cloud-config-online.yaml");
    let b = testdata().join("secrets/worker-cloud-config-airgapped.yaml");
    let out = cmd()
        .args(["diff", "-o", "json"])
        .arg(&a)
        .arg(&b)
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(1));
    let doc: Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(doc["schema"], "rke2-payload/diff/v1");
    let pair = &doc["pairs"][0];
    assert_eq!(
        pair["paired_by"], "cluster and role",
        "different names, same cluster and role"
    );
    let areas: Vec<&str> = pair["changes"]
        .as_array()
        .expect("changes")
        .iter()
        .filter_map(|c| c["area"].as_str())
        .collect();
    assert!(
        areas.contains(&"install") && areas.contains(&"command"),
        "{areas:?}"
    );
    let out = cmd()
        .arg("diff")
        .arg(&a)
        .arg(testdata().join("bad/bad-base64.yaml"))
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(String::from_utf8_lossy(&out.stderr).lines().count(), 1);
    let out = cmd().args(["diff", "-", "-"]).output().expect("run");
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn a_template_change_through_render_before_and_after() {
    let before = std::fs::read_to_string(testdata().join("../examples/preview/demo-cluster.yaml"))
        .expect("preview");
    let after = before
        .replace(
            "- max-pods=110\n        nodeLabels",
            "- max-pods=150\n        nodeLabels",
        )
        .replace(
            "net.ipv4.ip_forward = 1",
            "net.ipv4.ip_forward = 1\n        fs.inotify.max_user_watches = 524288",
        );
    assert_ne!(before, after);
    let render = |manifests: &str, seed: &str| {
        let out = cmd()
            .args(["render", "--seed", seed])
            .write_stdin(manifests.to_owned())
            .output()
            .expect("run");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        out.stdout
    };
    let folder = scratch();
    let dir = folder.path();
    // Different seeds: another token and other CAs, as two real clusters would have.
    std::fs::write(dir.join("a.yaml"), render(&before, "1")).expect("write");
    std::fs::write(dir.join("b.yaml"), render(&after, "2")).expect("write");
    let out = cmd()
        .args(["diff", "--ignore", "token,ca", "-o", "json"])
        .arg(dir.join("a.yaml"))
        .arg(dir.join("b.yaml"))
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(1));
    let doc: Value = serde_json::from_slice(&out.stdout).expect("json");
    let pairs = doc["pairs"].as_array().expect("pairs");
    assert_eq!(pairs.len(), 3, "init, join, worker");
    // The generated names are a function of the objects they name, not of the seed: the
    // template change keeps them, so each Secret is paired with its own by name.
    assert!(pairs.iter().all(|p| p["paired_by"] == "name"), "{pairs:#?}");
    let worker = &pairs[2]["changes"];
    let kubelet = worker
        .as_array()
        .expect("changes")
        .iter()
        .find(|c| c["area"] == "config" && c["item"] == "kubelet-arg")
        .expect("kubelet-arg changed on the worker");
    assert_eq!(kubelet["after"], "max-pods=150");
    let cp = pairs[0]["changes"].as_array().expect("changes");
    let sysctl = cp
        .iter()
        .find(|c| c["area"] == "file" && c["item"] == "/etc/sysctl.d/90-rke2.conf")
        .expect("the sysctl file changed on the control plane");
    let unified = sysctl["detail"].as_str().expect("a unified diff");
    assert!(
        unified.contains("+fs.inotify.max_user_watches = 524288"),
        "{unified}"
    );
    // Without the ignores, the token and the CAs differ too, by fingerprint only.
    let out = cmd()
        .args(["diff", "-o", "json"])
        .arg(dir.join("a.yaml"))
        .arg(dir.join("b.yaml"))
        .output()
        .expect("run");
    let doc: Value = serde_json::from_slice(&out.stdout).expect("json");
    let init = doc["pairs"][0]["changes"].as_array().expect("changes");
    assert!(init.iter().any(|c| c["area"] == "token"));
    assert!(init.iter().any(|c| c["area"] == "certificate"));
    // Markdown for a pull-request comment.
    let out = cmd()
        .args(["diff", "--ignore", "token,ca", "-o", "markdown"])
        .arg(dir.join("a.yaml"))
        .arg(dir.join("b.yaml"))
        .output()
        .expect("run");
    let md = String::from_utf8_lossy(&out.stdout);
    assert!(md.starts_with("### Bootstrap data changes"), "{md}");
    assert!(md.contains("| ✏️ | config `kubelet-arg` |"), "{md}");
    assert!(md.contains("```diff"), "{md}");
}

#[test]
fn manifests_are_compared_as_what_caprke2_would_write() {
    let before = std::fs::read_to_string(testdata().join("../examples/preview/demo-cluster.yaml"))
        .expect("preview");
    let after = before.replace(
        "- max-pods=110\n        nodeLabels",
        "- max-pods=150\n        nodeLabels",
    );
    let folder = scratch();
    let dir = folder.path();
    std::fs::write(dir.join("before.yaml"), &before).expect("write");
    std::fs::write(dir.join("after.yaml"), &after).expect("write");
    let out = cmd()
        .args(["diff", "-o", "json"])
        .arg(dir.join("before.yaml"))
        .arg(dir.join("after.yaml"))
        .output()
        .expect("run");
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: Value = serde_json::from_slice(&out.stdout).expect("json");
    let changes: Vec<&Value> = doc["pairs"]
        .as_array()
        .expect("pairs")
        .iter()
        .flat_map(|p| p["changes"].as_array().into_iter().flatten())
        .collect();
    // Rendered with one seed on both sides: the token and the CAs are the same; only the
    // template's change shows (and the size it moves).
    assert!(
        changes
            .iter()
            .all(|c| matches!(c["area"].as_str(), Some("config" | "size"))),
        "{changes:#?}"
    );
    assert!(
        changes
            .iter()
            .any(|c| c["item"] == "kubelet-arg" && c["after"] == "max-pods=150")
    );
    let same = cmd()
        .arg("diff")
        .arg(dir.join("before.yaml"))
        .arg(dir.join("before.yaml"))
        .output()
        .expect("run");
    assert_eq!(same.status.code(), Some(0));
}

#[test]
fn markdown_folds_text_diffs_and_new_orders_line_by_line() {
    let folder = scratch();
    let secret = |runcmd: &str, sysctl: &str| {
        serde_json::json!({
            "kind": "Secret",
            "metadata": {"name": "w", "namespace": "capi"},
            "stringData": {"format": "cloud-config", "value": format!(
                "#cloud-config\nwrite_files:\n- path: /etc/sysctl.d/<b>90.conf\n  content: |\n    a = 1\n    {sysctl}\nruncmd: [{runcmd}]\n"
            )},
        })
        .to_string()
    };
    let (a, b) = (folder.path().join("a.json"), folder.path().join("b.json"));
    std::fs::write(&a, secret("one, two", "b = 1")).expect("write");
    std::fs::write(&b, secret("two, one", "b = 2")).expect("write");
    let out = cmd()
        .args(["diff", "-o", "markdown"])
        .arg(&a)
        .arg(&b)
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(1));
    let page = String::from_utf8_lossy(&out.stdout);
    assert!(
        page.contains("```diff\n--- before\n+++ after\n") && page.contains("\n-b = 1\n+b = 2\n"),
        "{page}"
    );
    // A path from the input opens no HTML tag, in the table or the summary.
    assert!(!page.contains("<b>"), "{page}");
    assert!(
        page.contains("<summary>/etc/sysctl.d/&lt;b&gt;90.conf</summary>"),
        "{page}"
    );
    assert!(
        page.contains("<summary>commands, in their new order</summary>")
            && page.contains("before:\none\ntwo\nafter:\ntwo\none\n"),
        "{page}"
    );
}

/// Fresh CA keys PEM-encode to 1,675 or 1,679 bytes: with `--ignore ca` that is no size change;
/// without it, and for any other growth, it is.
#[test]
fn ignoring_the_cas_ignores_what_key_generation_does_to_the_size() {
    let dir = scratch();
    let secret = |key_len: usize, extra: &str| {
        let key = "A".repeat(key_len);
        let userdata = format!(
            "#cloud-config\nwrite_files:\n- path: /var/lib/rancher/rke2/server/tls/server-ca.key\n  permissions: '0600'\n  content: {key}\nruncmd:\n- echo hi{extra}\n"
        );
        serde_json::json!({"apiVersion": "v1", "kind": "Secret", "type": "cluster.x-k8s.io/secret",
            "metadata": {"name": "cp-0", "namespace": "default"},
            "stringData": {"format": "cloud-config", "value": userdata}})
        .to_string()
    };
    let write = |name: &str, text: String| {
        let path = dir.path().join(name);
        std::fs::write(&path, text).expect("write");
        path
    };
    let a = write("a.json", secret(1675, ""));
    let b = write("b.json", secret(1679, ""));
    let c = write("c.json", secret(1679, " there"));
    let code = |ignore: &str, x: &std::path::Path, y: &std::path::Path| {
        let out = cmd()
            .args(["diff", "--ignore", ignore])
            .arg(x)
            .arg(y)
            .output()
            .expect("run");
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
        )
    };
    let (exit, out) = code("ca", &a, &b);
    assert_eq!(exit, Some(0), "{out}");
    let (exit, out) = code("token", &a, &b);
    assert_eq!(exit, Some(1), "{out}");
    // Another change still shows, and so does its size.
    let (exit, out) = code("ca", &a, &c);
    assert_eq!(exit, Some(1), "{out}");
    assert!(out.contains("size"), "{out}");
}
