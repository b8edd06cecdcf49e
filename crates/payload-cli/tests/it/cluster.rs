//! `--from-cluster` through the real kubectl, against a local stand-in of the Kubernetes API
//! that serves the Secrets of `testdata/secrets/list-all.json`; the kubectl plugin's name in
//! its usage; no input on a terminal is a hint, not a wait.

use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};

use crate::common::*;

/// Whether kubectl is here; under CI it must be (`.ci/run` installs it).
fn have_kubectl() -> bool {
    let found = std::process::Command::new("kubectl")
        .args(["version", "--client"])
        .output()
        .is_ok_and(|o| o.status.success());
    assert!(
        found || std::env::var_os("CI").is_none(),
        "kubectl is missing under CI (Debian's kubernetes-client)"
    );
    if !found {
        eprintln!("kubectl is not installed: the --from-cluster tests are skipped");
    }
    found
}

/// A stand-in of the API server's Secrets: discovery, list (every namespace or one, with
/// `fieldSelector` on `type` and `metadata.name` and `labelSelector` equalities), get. Every
/// request's path and query is kept.
struct StandIn {
    port: u16,
    requests: Arc<Mutex<Vec<String>>>,
}

impl StandIn {
    /// Serves `secrets` (a `SecretList`'s items); `forbidden`: every Secrets request is 403.
    fn start(secrets: Vec<Value>, forbidden: bool) -> StandIn {
        let listener = TcpListener::bind("127.0.0.1:0").expect("a local port");
        let port = listener.local_addr().expect("address").port();
        let requests = Arc::new(Mutex::new(Vec::new()));
        let seen = Arc::clone(&requests);
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                serve(stream, &secrets, forbidden, &seen);
            }
        });
        StandIn { port, requests }
    }

    /// A kubeconfig for it (context `stand-in`), in `dir`.
    fn kubeconfig(&self, dir: &std::path::Path) -> std::path::PathBuf {
        let path = dir.join("kubeconfig");
        std::fs::write(
            &path,
            format!(
                "apiVersion: v1\nkind: Config\nclusters:\n- name: stand-in\n  cluster: {{server: \"http://127.0.0.1:{}\"}}\nusers:\n- name: tester\n  user: {{token: not-a-real-token}}\ncontexts:\n- name: stand-in\n  context: {{cluster: stand-in, user: tester}}\n- name: other\n  context: {{cluster: nowhere, user: tester}}\ncurrent-context: other\n",
                self.port
            ),
        )
        .expect("write the kubeconfig");
        path
    }

    fn secret_requests(&self) -> Vec<String> {
        self.requests
            .lock()
            .expect("requests")
            .iter()
            .filter(|r| r.contains("/secrets"))
            .cloned()
            .collect()
    }
}

/// Percent-decoding of a query value (`%2F`, `+`).
fn unescape(s: &str) -> String {
    let mut out = Vec::new();
    let mut bytes = s.bytes();
    while let Some(b) = bytes.next() {
        match b {
            b'%' => {
                let hex: String = bytes.by_ref().take(2).map(char::from).collect();
                out.push(u8::from_str_radix(&hex, 16).unwrap_or(b'?'));
            }
            b'+' => out.push(b' '),
            b => out.push(b),
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Whether a Secret passes `k=v,k=v` (fields: `type`, `metadata.name`, `metadata.namespace`).
fn fields_match(secret: &Value, selector: &str) -> bool {
    selector.split(',').filter(|t| !t.is_empty()).all(|term| {
        let (key, want) = term.split_once('=').unwrap_or((term, ""));
        let got = match key {
            "type" => secret["type"].as_str(),
            "metadata.name" => secret["metadata"]["name"].as_str(),
            "metadata.namespace" => secret["metadata"]["namespace"].as_str(),
            _ => None,
        };
        got == Some(want)
    })
}

/// Whether a Secret's labels pass `k=v,k=v`.
fn labels_match(secret: &Value, selector: &str) -> bool {
    selector.split(',').filter(|t| !t.is_empty()).all(|term| {
        let (key, want) = term.split_once('=').unwrap_or((term, ""));
        secret["metadata"]["labels"][key].as_str() == Some(want)
    })
}

fn respond(stream: &mut TcpStream, status: &str, body: &Value) {
    let body = body.to_string();
    let _ = write!(
        stream,
        "HTTP/1.1 {status}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
}

fn serve(mut stream: TcpStream, secrets: &[Value], forbidden: bool, seen: &Mutex<Vec<String>>) {
    let mut reader = BufReader::new(stream.try_clone().expect("clone"));
    let mut line = String::new();
    if reader.read_line(&mut line).is_err() {
        return;
    }
    // The headers, up to the blank line (GET requests have no body).
    loop {
        let mut header = String::new();
        match reader.read_line(&mut header) {
            Ok(0) | Err(_) => break,
            Ok(_) if header == "\r\n" || header == "\n" => break,
            Ok(_) => {}
        }
    }
    let target = line.split_whitespace().nth(1).unwrap_or("").to_owned();
    seen.lock().expect("requests").push(target.clone());
    let (path, query) = target.split_once('?').unwrap_or((&target, ""));
    let param = |name: &str| {
        query
            .split('&')
            .filter_map(|kv| kv.split_once('='))
            .find(|(k, _)| *k == name)
            .map(|(_, v)| unescape(v))
            .unwrap_or_default()
    };
    let segments: Vec<&str> = path.trim_matches('/').split('/').collect();
    match segments.as_slice() {
        ["api"] => respond(
            &mut stream,
            "200 OK",
            &json!({"kind": "APIVersions", "versions": ["v1"],
                "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": "127.0.0.1"}]}),
        ),
        ["apis"] => respond(
            &mut stream,
            "200 OK",
            &json!({"kind": "APIGroupList", "apiVersion": "v1", "groups": []}),
        ),
        ["api", "v1"] => respond(
            &mut stream,
            "200 OK",
            &json!({"kind": "APIResourceList", "groupVersion": "v1", "resources": [
                {"name": "secrets", "singularName": "secret", "namespaced": true, "kind": "Secret", "verbs": ["get", "list"]}]}),
        ),
        ["api", "v1", rest @ ..] if rest.contains(&"secrets") && forbidden => respond(
            &mut stream,
            "403 Forbidden",
            &json!({"kind": "Status", "apiVersion": "v1", "status": "Failure", "reason": "Forbidden", "code": 403,
                "message": "secrets is forbidden: User \"tester\" cannot list resource \"secrets\""}),
        ),
        ["api", "v1", rest @ ..] => {
            let (namespace, name) = match rest {
                ["secrets"] => (None, None),
                ["namespaces", ns, "secrets"] => (Some(*ns), None),
                ["namespaces", ns, "secrets", name] => (Some(*ns), Some(*name)),
                _ => {
                    respond(
                        &mut stream,
                        "404 Not Found",
                        &json!({"kind": "Status", "code": 404}),
                    );
                    return;
                }
            };
            let picked: Vec<Value> = secrets
                .iter()
                .filter(|s| namespace.is_none_or(|ns| s["metadata"]["namespace"] == ns))
                .filter(|s| name.is_none_or(|n| s["metadata"]["name"] == n))
                .filter(|s| fields_match(s, &param("fieldSelector")))
                .filter(|s| labels_match(s, &param("labelSelector")))
                .cloned()
                .collect();
            if name.is_some() {
                match picked.first() {
                    Some(one) => respond(&mut stream, "200 OK", one),
                    None => respond(
                        &mut stream,
                        "404 Not Found",
                        &json!({"kind": "Status", "apiVersion": "v1", "status": "Failure", "reason": "NotFound", "code": 404,
                            "message": "secrets not found"}),
                    ),
                }
            } else {
                respond(
                    &mut stream,
                    "200 OK",
                    &json!({"kind": "SecretList", "apiVersion": "v1", "metadata": {"resourceVersion": "1"}, "items": picked}),
                );
            }
        }
        _ => respond(
            &mut stream,
            "404 Not Found",
            &json!({"kind": "Status", "code": 404}),
        ),
    }
}

/// The Secrets of the fixture list.
fn fixture_secrets() -> Vec<Value> {
    let text = std::fs::read_to_string(testdata().join("secrets/list-all.json")).expect("fixture");
    let list: Value = serde_json::from_str(&text).expect("JSON");
    list["items"].as_array().expect("items").clone()
}

/// Runs the tool with kubectl's cache in `home`.
fn run_in(home: &std::path::Path, args: &[&str]) -> std::process::Output {
    cmd()
        .env("HOME", home)
        .env("KUBECACHEDIR", home.join("cache"))
        .env_remove("KUBECONFIG")
        .args(args)
        .output()
        .expect("run")
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
    let api = StandIn::start(fixture_secrets(), false);
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
    let requests = api.secret_requests();
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
            "--cluster",
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
    let requests = api.secret_requests();
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
        api.secret_requests().last().map(String::as_str),
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
fn what_kubectl_refuses_is_one_sentence_and_exit_2() {
    if !have_kubectl() {
        return;
    }
    let dir = scratch();
    let api = StandIn::start(fixture_secrets(), true);
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
    let have_script = std::process::Command::new("script")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    assert!(
        have_script || std::env::var_os("CI").is_none(),
        "script (util-linux) is missing under CI"
    );
    if !have_script {
        return;
    }
    let plugin = assert_cmd::cargo::cargo_bin("kubectl-rke2_payload");
    for sub in ["inspect", "lint", "decode", "size", "redact", "encode"] {
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
        assert!(out.contains("kubectl rke2-payload inspect"), "{sub}: {out}");
    }
}
