//! `--from-cluster` through the real kubectl, against a local stand-in of the Kubernetes API
//! (`standin`) that serves the Secrets of `testdata/secrets/list-all.json`; the kubectl plugin's name in
//! its usage; no input on a terminal is a hint, not a wait.

use std::io::Read as _;

use serde_json::Value;

use crate::common::*;
use crate::standin::{Refusals, StandIn, have_kubectl, run_in};

/// The Secrets of the fixture list.
fn fixture_secrets() -> Vec<Value> {
    let text = std::fs::read_to_string(testdata().join("secrets/list-all.json")).expect("fixture");
    let list: Value = serde_json::from_str(&text).expect("JSON");
    list["items"].as_array().expect("items").clone()
}

/// `secrets[].namespace/name` of a JSON report.
fn names(out: &std::process::Output) -> Vec<String> {
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "JSON ({e}): {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    doc["secrets"]
        .as_array()
        .expect("secrets")
        .iter()
        .map(|s| {
            format!(
                "{}/{}",
                s["namespace"].as_str().unwrap_or("-"),
                s["name"].as_str().unwrap_or("-")
            )
        })
        .collect()
}

#[test]
fn from_cluster_reads_the_secrets_through_kubectl_with_the_selection_flags() {
    if !have_kubectl() {
        return;
    }
    let dir = scratch();
    let api = StandIn::start(fixture_secrets(), Refusals::default());
    let kubeconfig = api.kubeconfig(dir.path());
    let kubeconfig = kubeconfig.to_str().expect("path");
    // The same report as from the file, for every reader.
    let from_file = cmd()
        .args(["inspect", "-o", "json"])
        .arg(testdata().join("secrets/list-all.json"))
        .output()
        .expect("run");
    let from_cluster = run_in(
        dir.path(),
        &[
            "inspect",
            "--from-cluster",
            "--kubeconfig",
            kubeconfig,
            "--context",
            "stand-in",
            "-A",
            "-o",
            "json",
        ],
    );
    assert!(
        from_cluster.status.success(),
        "{}",
        String::from_utf8_lossy(&from_cluster.stderr)
    );
    assert_eq!(names(&from_cluster), names(&from_file));
    assert!(!names(&from_cluster).is_empty());
    let requests = api.requests_for("secrets");
    assert!(
        requests.iter().any(|r| r.starts_with("/api/v1/secrets?")
            && r.contains("fieldSelector=type%3Dcluster.x-k8s.io%2Fsecret")),
        "{requests:?}"
    );
    // One namespace and one cluster: kubectl asks for exactly that.
    let out = run_in(
        dir.path(),
        &[
            "lint",
            "--from-cluster",
            "--kubeconfig",
            kubeconfig,
            "--context",
            "stand-in",
            "-n",
            "default",
            "--cluster-name",
            "demo",
            "-o",
            "json",
        ],
    );
    assert!(
        out.status.code().is_some_and(|c| c < 2),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let requests = api.requests_for("secrets");
    let last = requests.last().expect("a request");
    assert!(
        last.starts_with("/api/v1/namespaces/default/secrets?"),
        "{last}"
    );
    assert!(
        last.contains("labelSelector=cluster.x-k8s.io%2Fcluster-name%3Ddemo"),
        "{last}"
    );
    // One Secret by NAMESPACE/NAME: a get, and decode writes its user data.
    let name = names(&from_file)[1].clone();
    let out = run_in(
        dir.path(),
        &[
            "decode",
            "--from-cluster",
            "--kubeconfig",
            kubeconfig,
            "--context",
            "stand-in",
            "--name",
            &name,
        ],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!out.stdout.is_empty());
    let (ns, secret) = name.split_once('/').expect("ns/name");
    assert_eq!(
        api.requests_for("secrets").last().map(String::as_str),
        Some(format!("/api/v1/namespaces/{ns}/secrets/{secret}").as_str())
    );
    // size and redact stream the same input.
    for sub in [&["size", "--cloud", "aws"][..], &["redact"][..]] {
        let mut args = sub.to_vec();
        args.extend([
            "--from-cluster",
            "--kubeconfig",
            kubeconfig,
            "--context",
            "stand-in",
            "-A",
        ]);
        let out = run_in(dir.path(), &args);
        assert!(
            out.status.code().is_some_and(|c| c < 2),
            "{sub:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(!out.stdout.is_empty(), "{sub:?}");
    }
}

#[test]
fn without_n_or_a_kubectl_reads_the_context_s_namespace() {
    if !have_kubectl() {
        return;
    }
    let dir = scratch();
    // Every third Secret moved to the namespace `capi` (the context `stand-in-capi`'s).
    let mut secrets = fixture_secrets();
    for secret in secrets.iter_mut().step_by(3) {
        secret["metadata"]["namespace"] = "capi".into();
    }
    let api = StandIn::start(secrets, Refusals::default());
    let kubeconfig = api.kubeconfig(dir.path());
    let kubeconfig = kubeconfig.to_str().expect("path");
    let all = names(&run_in(
        dir.path(),
        &[
            "inspect",
            "--from-cluster",
            "--kubeconfig",
            kubeconfig,
            "--context",
            "stand-in",
            "-A",
            "-o",
            "json",
        ],
    ));
    let in_capi: Vec<String> = all
        .iter()
        .filter(|n| n.starts_with("capi/"))
        .cloned()
        .collect();
    assert!(!in_capi.is_empty() && in_capi.len() < all.len(), "{all:?}");
    let inspect = |context: &str, more: &[&str]| {
        let mut args = vec![
            "inspect",
            "--from-cluster",
            "--kubeconfig",
            kubeconfig,
            "--context",
            context,
            "-o",
            "json",
        ];
        args.extend(more);
        let out = run_in(dir.path(), &args);
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        (
            names(&out),
            api.requests_for("secrets").pop().expect("asked"),
        )
    };
    // The context's namespace, as `kubectl get secrets` reads it.
    let (read, asked) = inspect("stand-in-capi", &[]);
    assert_eq!(read, in_capi);
    assert!(
        asked.starts_with("/api/v1/namespaces/capi/secrets?"),
        "{asked}"
    );
    // A context without one: `default`.
    let (read, asked) = inspect("stand-in", &[]);
    assert!(read.iter().all(|n| n.starts_with("default/")), "{read:?}");
    assert!(
        asked.starts_with("/api/v1/namespaces/default/secrets?"),
        "{asked}"
    );
    // -n and -A over the context's.
    let (read, _) = inspect("stand-in", &["-n", "capi"]);
    assert_eq!(read, in_capi);
    let (read, asked) = inspect("stand-in-capi", &["-A"]);
    assert_eq!(read, all);
    assert!(asked.starts_with("/api/v1/secrets?"), "{asked}");
    // A bare --name is a get in the context's namespace, or found in every one with -A.
    let one = in_capi[0].split_once('/').expect("ns/name").1;
    let (read, asked) = inspect("stand-in-capi", &["--name", one]);
    assert_eq!(read, [in_capi[0].clone()]);
    assert_eq!(asked, format!("/api/v1/namespaces/capi/secrets/{one}"));
    let (read, asked) = inspect("stand-in", &["--name", one, "-A"]);
    assert_eq!(read, [in_capi[0].clone()]);
    assert!(
        asked.starts_with("/api/v1/secrets?") && asked.contains("metadata.name%3D"),
        "{asked}"
    );
}

#[test]
fn what_kubectl_refuses_is_one_sentence_and_exit_2() {
    if !have_kubectl() {
        return;
    }
    let dir = scratch();
    let api = StandIn::start(
        fixture_secrets(),
        Refusals {
            forbidden: vec!["secrets"],
            ..Refusals::default()
        },
    );
    let kubeconfig = api.kubeconfig(dir.path());
    let out = run_in(
        dir.path(),
        &[
            "inspect",
            "--from-cluster",
            "--kubeconfig",
            kubeconfig.to_str().expect("path"),
            "--context",
            "stand-in",
        ],
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("kubectl exited with 1") && err.contains("forbidden"),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1, "{err}");
    // A kubectl that is not there.
    let out = cmd()
        .env("KUBECTL", dir.path().join("no-kubectl"))
        .args(["inspect", "--from-cluster"])
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("install kubectl"));
}

#[test]
fn as_a_kubectl_plugin_it_is_named_kubectl_rke2_payload() {
    let plugin = assert_cmd::cargo::cargo_bin("kubectl-rke2_payload");
    for args in [&["--help"][..], &["inspect", "--help"][..]] {
        let out = std::process::Command::new(&plugin)
            .args(args)
            .output()
            .expect("run");
        let help = String::from_utf8_lossy(&out.stdout);
        let usage = help
            .lines()
            .find(|l| l.starts_with("Usage: "))
            .expect("a usage line");
        assert!(usage.starts_with("Usage: kubectl rke2-payload"), "{usage}");
    }
    let out = cmd().arg("--help").output().expect("run");
    assert!(String::from_utf8_lossy(&out.stdout).contains("Usage: rke2-payload [OPTIONS]"));
    // Through kubectl itself, when it is here: `kubectl rke2-payload` finds the plugin on PATH.
    if have_kubectl() {
        let dir = plugin.parent().expect("bin dir").to_owned();
        let path = std::env::join_paths(std::iter::once(dir).chain(std::env::split_paths(
            &std::env::var_os("PATH").unwrap_or_default(),
        )))
        .expect("PATH");
        let out = std::process::Command::new("kubectl")
            .env("PATH", path)
            .args(["rke2-payload", "inspect", "--help"])
            .output()
            .expect("run kubectl");
        let help = String::from_utf8_lossy(&out.stdout);
        assert!(
            help.contains("Usage: kubectl rke2-payload inspect"),
            "{help}{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

#[test]
fn no_input_on_a_terminal_is_a_hint_and_exit_2() {
    // `script` gives the command a terminal for standard input (util-linux).
    if !have_tool("script", &["--version"], "Debian's bsdutils") {
        return;
    }
    let plugin = assert_cmd::cargo::cargo_bin("kubectl-rke2_payload");
    for sub in [
        "inspect", "lint", "decode", "size", "redact", "encode", "doctor",
    ] {
        let mut child = std::process::Command::new("script")
            .args(["-qec", &format!("{} {sub}", plugin.display()), "/dev/null"])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .expect("run script");
        // Nothing is typed: a hang would wait on this pipe, which stays open.
        let stdin = child.stdin.take();
        let started = std::time::Instant::now();
        let status = loop {
            if let Some(status) = child.try_wait().expect("wait") {
                break status;
            }
            assert!(
                started.elapsed().as_secs() < 30,
                "{sub} waits for input on a terminal"
            );
            std::thread::sleep(std::time::Duration::from_millis(50));
        };
        drop(stdin);
        let mut out = String::new();
        child
            .stdout
            .take()
            .expect("stdout")
            .read_to_string(&mut out)
            .expect("read");
        assert_eq!(status.code(), Some(2), "{sub}: {out}");
        assert!(
            out.contains("no input: standard input is a terminal"),
            "{sub}: {out}"
        );
        assert!(
            out.contains(&format!("| kubectl rke2-payload {sub})")),
            "{sub}: {out}"
        );
    }
}
