//! A local stand-in of the Kubernetes API server for the real kubectl: discovery of the core
//! group and of Cluster API's, CAPRKE2's and clusterctl's groups, list (every namespace or one,
//! `fieldSelector` on `type`, `metadata.name` and `metadata.namespace`, `labelSelector`
//! equalities) and get of the objects it is given, each under its kind's resource; resources
//! it refuses (403, as RBAC does) and groups it does not serve (404). Every request's path and
//! query is kept.

use std::io::{BufRead as _, BufReader, Write as _};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};

/// Whether kubectl is here; under CI it must be (`.ci/run` installs it).
pub(crate) fn have_kubectl() -> bool {
    crate::common::have_tool(
        "kubectl",
        &["version", "--client"],
        "Debian's kubernetes-client",
    )
}

/// A resource the stand-in serves: its group, the versions it serves (the preferred first),
/// plural name and kind.
struct Resource {
    group: &'static str,
    versions: &'static [&'static str],
    plural: &'static str,
    kind: &'static str,
    namespaced: bool,
}

const RESOURCES: &[Resource] = &[
    Resource {
        group: "",
        versions: &["v1"],
        plural: "secrets",
        kind: "Secret",
        namespaced: true,
    },
    Resource {
        group: "cluster.x-k8s.io",
        versions: &["v1beta2", "v1beta1"],
        plural: "clusters",
        kind: "Cluster",
        namespaced: true,
    },
    Resource {
        group: "cluster.x-k8s.io",
        versions: &["v1beta2", "v1beta1"],
        plural: "machines",
        kind: "Machine",
        namespaced: true,
    },
    Resource {
        group: "controlplane.cluster.x-k8s.io",
        versions: &["v1beta2", "v1beta1"],
        plural: "rke2controlplanes",
        kind: "RKE2ControlPlane",
        namespaced: true,
    },
    Resource {
        group: "bootstrap.cluster.x-k8s.io",
        versions: &["v1beta2", "v1beta1"],
        plural: "rke2configs",
        kind: "RKE2Config",
        namespaced: true,
    },
    Resource {
        group: "clusterctl.cluster.x-k8s.io",
        versions: &["v1alpha3"],
        plural: "providers",
        kind: "Provider",
        namespaced: true,
    },
    Resource {
        group: "infrastructure.cluster.x-k8s.io",
        versions: &["v1beta2", "v1beta1"],
        plural: "awsmachines",
        kind: "AWSMachine",
        namespaced: true,
    },
    Resource {
        group: "infrastructure.cluster.x-k8s.io",
        versions: &["v1alpha2"],
        plural: "linodemachines",
        kind: "LinodeMachine",
        namespaced: true,
    },
    Resource {
        group: "infrastructure.cluster.x-k8s.io",
        versions: &["v1alpha2"],
        plural: "linodeclusters",
        kind: "LinodeCluster",
        namespaced: true,
    },
];

/// What the stand-in refuses.
#[derive(Default, Clone)]
pub(crate) struct Refusals {
    /// Resources (plural names) every request for which is 403 Forbidden.
    pub(crate) forbidden: Vec<&'static str>,
    /// Groups the server does not serve (absent from discovery).
    pub(crate) unserved: Vec<&'static str>,
}

/// The stand-in, serving on a local port until the test ends.
pub(crate) struct StandIn {
    port: u16,
    requests: Arc<Mutex<Vec<String>>>,
}

impl StandIn {
    /// Serves `objects`, each under the resource of its group and kind.
    pub(crate) fn start(objects: Vec<Value>, refusals: Refusals) -> StandIn {
        let listener = TcpListener::bind("127.0.0.1:0").expect("a local port");
        let port = listener.local_addr().expect("address").port();
        let requests = Arc::new(Mutex::new(Vec::new()));
        let seen = Arc::clone(&requests);
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                serve(stream, &objects, &refusals, &seen);
            }
        });
        StandIn { port, requests }
    }

    /// A kubeconfig for it (context `stand-in`, without a namespace, and `stand-in-capi`,
    /// whose namespace is `capi`; the current context is another, unreachable one), in
    /// `dir`.
    pub(crate) fn kubeconfig(&self, dir: &std::path::Path) -> std::path::PathBuf {
        let path = dir.join("kubeconfig");
        std::fs::write(
            &path,
            format!(
                "apiVersion: v1\nkind: Config\nclusters:\n- name: stand-in\n  cluster: {{server: \"http://127.0.0.1:{}\"}}\nusers:\n- name: tester\n  user: {{token: not-a-real-token}}\ncontexts:\n- name: stand-in\n  context: {{cluster: stand-in, user: tester}}\n- name: stand-in-capi\n  context: {{cluster: stand-in, user: tester, namespace: capi}}\n- name: other\n  context: {{cluster: nowhere, user: tester}}\ncurrent-context: other\n",
                self.port
            ),
        )
        .expect("write the kubeconfig");
        path
    }

    /// Runs the tool's `args[0]` subcommand with `--from-cluster` against the stand-in (its
    /// kubeconfig written in `home`, context `stand-in`), then the rest of `args`.
    pub(crate) fn run(&self, home: &std::path::Path, args: &[&str]) -> std::process::Output {
        let kubeconfig = self.kubeconfig(home);
        let kubeconfig = kubeconfig.to_str().expect("a UTF-8 path");
        let mut all = vec![args[0], "--from-cluster", "--kubeconfig", kubeconfig];
        all.extend(["--context", "stand-in"]);
        all.extend(&args[1..]);
        run_in(home, &all)
    }

    /// The requests for `plural` (`secrets`, `machines`), in order.
    pub(crate) fn requests_for(&self, plural: &str) -> Vec<String> {
        let needle = format!("/{plural}");
        self.requests
            .lock()
            .expect("requests")
            .iter()
            .filter(|r| r.split('?').next().is_some_and(|p| p.contains(&needle)))
            .cloned()
            .collect()
    }
}

/// Runs the tool with kubectl's cache in `home`.
pub(crate) fn run_in(home: &std::path::Path, args: &[&str]) -> std::process::Output {
    crate::common::cmd()
        .env("HOME", home)
        .env("KUBECACHEDIR", home.join("cache"))
        .env_remove("KUBECONFIG")
        .args(args)
        .output()
        .expect("run")
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

/// Whether an object passes `k=v,k=v` (fields: `type`, `metadata.name`, `metadata.namespace`).
fn fields_match(object: &Value, selector: &str) -> bool {
    selector.split(',').filter(|t| !t.is_empty()).all(|term| {
        let (key, want) = term.split_once('=').unwrap_or((term, ""));
        let got = match key {
            "type" => object["type"].as_str(),
            "metadata.name" => object["metadata"]["name"].as_str(),
            "metadata.namespace" => object["metadata"]["namespace"].as_str(),
            _ => None,
        };
        got == Some(want)
    })
}

/// Whether an object's labels pass `k=v,k=v`.
fn labels_match(object: &Value, selector: &str) -> bool {
    selector.split(',').filter(|t| !t.is_empty()).all(|term| {
        let (key, want) = term.split_once('=').unwrap_or((term, ""));
        object["metadata"]["labels"][key].as_str() == Some(want)
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

fn not_found(stream: &mut TcpStream, what: &str) {
    respond(
        stream,
        "404 Not Found",
        &json!({"kind": "Status", "apiVersion": "v1", "status": "Failure", "reason": "NotFound", "code": 404,
            "message": format!("{what} not found")}),
    );
}

/// The group of an object's `apiVersion` (`""` for the core group).
fn group_of(object: &Value) -> &str {
    object["apiVersion"]
        .as_str()
        .and_then(|a| a.rsplit_once('/'))
        .map_or("", |(g, _)| g)
}

fn discovery(stream: &mut TcpStream, segments: &[&str], refusals: &Refusals) -> bool {
    let served = |r: &&Resource| !refusals.unserved.contains(&r.group);
    let list = |group: &str, version: &str| -> Value {
        let resources: Vec<Value> = RESOURCES
            .iter()
            .filter(served)
            .filter(|r| r.group == group && r.versions.contains(&version))
            .map(|r| json!({"name": r.plural, "singularName": r.kind.to_lowercase(), "namespaced": r.namespaced,
                "kind": r.kind, "verbs": ["get", "list"]}))
            .collect();
        let group_version = if group.is_empty() {
            version.to_owned()
        } else {
            format!("{group}/{version}")
        };
        json!({"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": group_version, "resources": resources})
    };
    match segments {
        ["api"] => respond(
            stream,
            "200 OK",
            &json!({"kind": "APIVersions", "versions": ["v1"],
                "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": "127.0.0.1"}]}),
        ),
        ["api", "v1"] => respond(stream, "200 OK", &list("", "v1")),
        ["apis"] => {
            let mut groups: Vec<Value> = Vec::new();
            for r in RESOURCES
                .iter()
                .filter(served)
                .filter(|r| !r.group.is_empty())
            {
                let versions: Vec<Value> = r
                    .versions
                    .iter()
                    .map(|v| json!({"groupVersion": format!("{}/{v}", r.group), "version": v}))
                    .collect();
                // A group's versions are those of all its resources, the first's preferred.
                if let Some(group) = groups.iter_mut().find(|g| g["name"] == r.group) {
                    if let Some(known) = group["versions"].as_array_mut() {
                        for v in versions {
                            if !known.contains(&v) {
                                known.push(v);
                            }
                        }
                    }
                    continue;
                }
                groups.push(json!({"name": r.group, "preferredVersion": versions[0].clone(), "versions": versions}));
            }
            respond(
                stream,
                "200 OK",
                &json!({"kind": "APIGroupList", "apiVersion": "v1", "groups": groups}),
            );
        }
        ["apis", group, version] => {
            if RESOURCES
                .iter()
                .filter(served)
                .any(|r| r.group == *group && r.versions.contains(version))
            {
                respond(stream, "200 OK", &list(group, version));
            } else {
                not_found(stream, "the server could not find the requested resource");
            }
        }
        _ => return false,
    }
    true
}

fn serve(mut stream: TcpStream, objects: &[Value], refusals: &Refusals, seen: &Mutex<Vec<String>>) {
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
    if discovery(&mut stream, &segments, refusals) {
        return;
    }
    // /api/v1/... or /apis/GROUP/VERSION/...
    let (group, rest) = match segments.as_slice() {
        ["api", "v1", rest @ ..] => ("", rest),
        ["apis", group, _, rest @ ..] => (*group, rest),
        _ => return not_found(&mut stream, "the path"),
    };
    let (namespace, plural, name) = match rest {
        [plural] => (None, *plural, None),
        ["namespaces", ns, plural] => (Some(*ns), *plural, None),
        ["namespaces", ns, plural, name] => (Some(*ns), *plural, Some(*name)),
        _ => return not_found(&mut stream, "the path"),
    };
    let Some(resource) = RESOURCES
        .iter()
        .find(|r| r.group == group && r.plural == plural && !refusals.unserved.contains(&r.group))
    else {
        return not_found(&mut stream, plural);
    };
    if refusals.forbidden.contains(&plural) {
        let scope = namespace.map_or(" at the cluster scope".to_owned(), |ns| {
            format!(" in the namespace \"{ns}\"")
        });
        let group_text = if group.is_empty() {
            String::new()
        } else {
            format!(" in API group \"{group}\"")
        };
        return respond(
            &mut stream,
            "403 Forbidden",
            &json!({"kind": "Status", "apiVersion": "v1", "status": "Failure", "reason": "Forbidden", "code": 403,
                "message": format!("{plural}{} is forbidden: User \"tester\" cannot list resource \"{plural}\"{group_text}{scope}",
                    if group.is_empty() { String::new() } else { format!(".{group}") })}),
        );
    }
    let picked: Vec<Value> = objects
        .iter()
        .filter(|o| group_of(o) == resource.group && o["kind"] == resource.kind)
        .filter(|o| namespace.is_none_or(|ns| o["metadata"]["namespace"] == ns))
        .filter(|o| name.is_none_or(|n| o["metadata"]["name"] == n))
        .filter(|o| fields_match(o, &param("fieldSelector")))
        .filter(|o| labels_match(o, &param("labelSelector")))
        .cloned()
        .collect();
    if name.is_some() {
        match picked.first() {
            Some(one) => respond(&mut stream, "200 OK", one),
            None => not_found(&mut stream, plural),
        }
    } else {
        let api_version = if group.is_empty() {
            "v1".to_owned()
        } else {
            format!("{group}/{}", resource.versions[0])
        };
        respond(
            &mut stream,
            "200 OK",
            &json!({"kind": format!("{}List", resource.kind), "apiVersion": api_version,
                "metadata": {"resourceVersion": "1"}, "items": picked}),
        );
    }
}
