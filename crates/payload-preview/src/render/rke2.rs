//! `config.yaml`, `registries.yaml` and the files CAPRKE2 generates for them, from the
//! `RKE2ControlPlane` server config and an `RKE2Config` agent config (CAPRKE2 v0.25
//! `pkg/rke2/config.go` and `registries.go`: key order, which fields become which key, which
//! referenced object becomes which file).

use serde_json::Value;

use super::resolve::Resolver;
use super::yaml::{Node, Style, to_string};
use crate::manifests::{Ref, flag, sorted_map, str_at, string, strings};

/// One entry of `write_files` / `storage.files`, as CAPRKE2's `File` type holds it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct File {
    pub(crate) path: String,
    pub(crate) owner: String,
    pub(crate) permissions: String,
    pub(crate) encoding: String,
    pub(crate) content: String,
}

impl File {
    pub(crate) fn new(path: &str, content: String, permissions: &str) -> File {
        File {
            path: path.to_owned(),
            owner: OWNER.to_owned(),
            permissions: permissions.to_owned(),
            encoding: String::new(),
            content,
        }
    }
}

pub(crate) const OWNER: &str = "root:root";
pub(crate) const CONFIG_PATH: &str = "/etc/rancher/rke2/config.yaml";
pub(crate) const REGISTRIES_PATH: &str = "/etc/rancher/rke2/registries.yaml";
const CLOUD_PROVIDER_CONFIG: &str = "/etc/rancher/rke2/cloud-provider-config";
const ENCRYPTION_CONFIG: &str = "/var/lib/rancher/rke2/server/cred/encryption-config.json";
pub(crate) const CIS_SCRIPT_PATH: &str = "/opt/rke2-cis-script.sh";

/// What the agent part of the config needs.
pub(crate) struct AgentInput<'a> {
    /// `spec.agentConfig` of the RKE2Config.
    pub(crate) agent: &'a Value,
    pub(crate) namespace: &'a str,
    pub(crate) server: Option<&'a str>,
    pub(crate) token: &'a str,
    /// From the RKE2ControlPlane's server config (workers get them too).
    pub(crate) cloud_provider_name: String,
    pub(crate) cloud_provider_config_map: Option<Ref>,
    pub(crate) owner: &'a str,
}

/// One `config.yaml` key and its value, in CAPRKE2's struct order.
type Pairs = Vec<(&'static str, Node)>;

fn push_str(pairs: &mut Pairs, key: &'static str, value: String) {
    if !value.is_empty() {
        pairs.push((key, Node::Str(value)));
    }
}

fn push_list(pairs: &mut Pairs, key: &'static str, values: Vec<String>) {
    if !values.is_empty() {
        pairs.push((key, Node::Seq(values.into_iter().map(Node::Str).collect())));
    }
}

fn push_bool(pairs: &mut Pairs, key: &'static str, value: bool) {
    if value {
        pairs.push((key, Node::Bool(true)));
    }
}

/// `k=v` (env) or `k:v` (mount) entries of a component's map, sorted.
fn component_map(value: &Value, path: &[&str], separator: char) -> Vec<String> {
    sorted_map(value, path)
        .into_iter()
        .filter(|(k, _)| !k.is_empty())
        .map(|(k, v)| format!("{k}{separator}{v}"))
        .collect()
}

/// The agent keys and the files they bring.
pub(crate) fn agent_config(
    input: &AgentInput<'_>,
    resolver: &mut Resolver<'_>,
) -> (Pairs, Vec<File>) {
    let a = input.agent;
    let ns = input.namespace;
    let mut pairs = Pairs::new();
    let mut files = Vec::new();
    let mut profile = String::new();
    if let Some(cis) = str_at(a, &["cisProfile"]).filter(|p| !p.is_empty()) {
        files.push(File::new(
            CIS_SCRIPT_PATH,
            super::cis::SCRIPT.to_owned(),
            "0700",
        ));
        resolver.note_generated("the CIS node preparation script (a stand-in of the same size)");
        profile = cis.to_owned();
    }
    let mut cloud_provider_config = String::new();
    if let Some(r) = &input.cloud_provider_config_map {
        let text = resolver.config_map(
            input.owner,
            r,
            "cloud-config",
            "spec.serverConfig.cloudProviderConfigMap",
            600,
        );
        cloud_provider_config = CLOUD_PROVIDER_CONFIG.to_owned();
        files.push(File::new(CLOUD_PROVIDER_CONFIG, text, "0644"));
    }
    let mut credential_config = String::new();
    let mut credential_bin_dir = String::new();
    if let Some(r) = Ref::at(a, &["imageCredentialProviderConfigMap"], ns) {
        let field = "spec.agentConfig.imageCredentialProviderConfigMap";
        let text = resolver.config_map(input.owner, &r, "credential-config.yaml", field, 400);
        credential_bin_dir =
            resolver.config_map(input.owner, &r, "credential-provider-binaries", field, 30);
        credential_config = "/etc/rancher/rke2/credential-config.yaml".to_owned();
        files.push(File::new(&credential_config, text, "0644"));
    }
    let mut resolv_conf = String::new();
    if let Some(r) = Ref::at(a, &["resolvConf"], ns) {
        let text = resolver.config_map(
            input.owner,
            &r,
            "resolv.conf",
            "spec.agentConfig.resolvConf",
            100,
        );
        resolv_conf = "/etc/rancher/rke2/resolv.conf".to_owned();
        files.push(File::new(&resolv_conf, text, "0644"));
    }

    push_str(
        &mut pairs,
        "container-runtime-endpoint",
        string(a, &["containerRuntimeEndpoint"]),
    );
    push_str(&mut pairs, "cloud-provider-config", cloud_provider_config);
    push_str(
        &mut pairs,
        "cloud-provider-name",
        input.cloud_provider_name.clone(),
    );
    push_str(&mut pairs, "data-dir", string(a, &["dataDir"]));
    push_str(
        &mut pairs,
        "image-credential-provider-config",
        credential_config,
    );
    push_str(
        &mut pairs,
        "image-credential-provider-bin-dir",
        credential_bin_dir,
    );
    push_list(
        &mut pairs,
        "kube-proxy-arg",
        strings(a, &["kubeProxy", "extraArgs"]),
    );
    push_list(
        &mut pairs,
        "kube-proxy-extra-env",
        component_map(a, &["kubeProxy", "extraEnv"], '='),
    );
    push_list(
        &mut pairs,
        "kube-proxy-extra-mount",
        component_map(a, &["kubeProxy", "extraMounts"], ':'),
    );
    push_str(
        &mut pairs,
        "kube-proxy-image",
        string(a, &["kubeProxy", "overrideImage"]),
    );
    push_list(
        &mut pairs,
        "kubelet-arg",
        strings(a, &["kubelet", "extraArgs"]),
    );
    push_str(&mut pairs, "kubelet-path", string(a, &["kubeletPath"]));
    if let Some(port) = a
        .get("loadBalancerPort")
        .and_then(Value::as_i64)
        .filter(|p| *p != 0)
    {
        pairs.push(("lb-server-port", Node::Int(port)));
    }
    push_list(&mut pairs, "node-label", strings(a, &["nodeLabels"]));
    push_list(&mut pairs, "node-taint", strings(a, &["nodeTaints"]));
    push_str(&mut pairs, "profile", profile);
    push_bool(
        &mut pairs,
        "protect-kernel-defaults",
        flag(a, &["protectKernelDefaults"]),
    );
    push_str(
        &mut pairs,
        "pod-security-admission-config-file",
        string(a, &["podSecurityAdmissionConfigFile"]),
    );
    push_str(&mut pairs, "resolv-conf", resolv_conf);
    push_str(&mut pairs, "runtime-image", string(a, &["runtimeImage"]));
    push_bool(&mut pairs, "selinux", flag(a, &["enableContainerdSElinux"]));
    push_str(
        &mut pairs,
        "server",
        input.server.unwrap_or_default().to_owned(),
    );
    push_str(&mut pairs, "snapshotter", string(a, &["snapshotter"]));
    push_str(&mut pairs, "token", input.token.to_owned());
    push_str(
        &mut pairs,
        "system-default-registry",
        string(a, &["systemDefaultRegistry"]),
    );
    (pairs, files)
}

/// What the server part needs besides the RKE2ControlPlane's `spec.serverConfig`.
pub(crate) struct ServerInput<'a> {
    pub(crate) server_config: &'a Value,
    pub(crate) namespace: &'a str,
    pub(crate) cluster: &'a Value,
    pub(crate) endpoint_host: &'a str,
    pub(crate) owner: &'a str,
}

/// The server keys (after the agent keys) and the files they bring.
pub(crate) fn server_config(
    input: &ServerInput<'_>,
    resolver: &mut Resolver<'_>,
) -> (Pairs, Vec<File>) {
    let s = input.server_config;
    // The referenced objects in CAPRKE2's order (which is the order placeholders are drawn).
    let mut files = Vec::new();
    let audit_policy_file = audit_policy(input, resolver, &mut files);
    if let Some(r) = Ref::at(s, &["cloudProviderConfigMap"], input.namespace) {
        let text = resolver.config_map(
            input.owner,
            &r,
            "cloud-config",
            "spec.serverConfig.cloudProviderConfigMap",
            600,
        );
        files.push(File::new(CLOUD_PROVIDER_CONFIG, text, "0644"));
    }
    let backup = crate::manifests::at(s, &["etcd", "backupConfig"])
        .cloned()
        .unwrap_or(Value::Null);
    let s3_pairs = etcd_s3(input, &backup, resolver, &mut files);
    let encryption_provider = secrets_encryption(input, resolver, &mut files);
    let datastore = datastore(input, resolver, &mut files);

    let mut p = Pairs::new();
    general_keys(&mut p, s, audit_policy_file);
    etcd_keys(&mut p, s, &backup, s3_pairs);
    component_keys(&mut p, s);
    // The endpoint host is appended last, always (even when listed, even when empty).
    let mut tls_san = strings(s, &["tlsSan"]);
    tls_san.push(input.endpoint_host.to_owned());
    p.push((
        "tls-san",
        Node::Seq(tls_san.into_iter().map(Node::Str).collect()),
    ));
    push_bool(&mut p, "embedded-registry", flag(s, &["embeddedRegistry"]));
    push_bool(
        &mut p,
        "supervisor-metrics",
        flag(s, &["supervisorMetrics"]),
    );
    p.extend(datastore);
    push_str(&mut p, "secrets-encryption-provider", encryption_provider);
    let network = |which: &str| {
        strings(
            input.cluster,
            &["spec", "clusterNetwork", which, "cidrBlocks"],
        )
        .join(",")
    };
    push_str(&mut p, "cluster-cidr", network("pods"));
    push_str(&mut p, "service-cidr", network("services"));
    (p, files)
}

/// The audit policy file of `auditPolicySecret`; its path, or empty.
fn audit_policy(
    input: &ServerInput<'_>,
    resolver: &mut Resolver<'_>,
    files: &mut Vec<File>,
) -> String {
    let Some(r) = Ref::at(input.server_config, &["auditPolicySecret"], input.namespace) else {
        return String::new();
    };
    let text = resolver.secret_text(
        input.owner,
        &r,
        "audit-policy.yaml",
        "spec.serverConfig.auditPolicySecret",
        1500,
    );
    let path = "/etc/rancher/rke2/audit-policy.yaml".to_owned();
    files.push(File::new(&path, text, "0644"));
    path
}

/// The `etcd-s3*` keys of `etcd.backupConfig.s3`, and the endpoint CA's file.
fn etcd_s3(
    input: &ServerInput<'_>,
    backup: &Value,
    resolver: &mut Resolver<'_>,
    files: &mut Vec<File>,
) -> Pairs {
    let (ns, owner) = (input.namespace, input.owner);
    let mut s3_pairs = Pairs::new();
    let Some(s3) = backup.get("s3").filter(|v| v.is_object()) else {
        return s3_pairs;
    };
    s3_pairs.push(("etcd-s3", Node::Bool(true)));
    let (mut access, mut secret) = (String::new(), String::new());
    if let Some(r) = Ref::at(s3, &["s3CredentialSecret"], ns) {
        let field = "spec.serverConfig.etcd.backupConfig.s3.s3CredentialSecret";
        access = resolver.secret_text(owner, &r, "aws_access_key_id", field, 20);
        secret = resolver.secret_text(owner, &r, "aws_secret_access_key", field, 40);
    }
    push_str(&mut s3_pairs, "etcd-s3-access-key", access);
    push_str(&mut s3_pairs, "etcd-s3-bucket", string(s3, &["bucket"]));
    push_str(&mut s3_pairs, "etcd-s3-endpoint", string(s3, &["endpoint"]));
    let mut endpoint_ca = String::new();
    if let Some(r) = Ref::at(s3, &["endpointCAsecret"], ns) {
        let field = "spec.serverConfig.etcd.backupConfig.s3.endpointCAsecret";
        let text = resolver.secret_text(owner, &r, "ca.pem", field, 1100);
        endpoint_ca = "/etc/rancher/rke2/etcd-s3-ca.crt".to_owned();
        files.push(File::new(&endpoint_ca, text, "0640"));
    }
    push_str(&mut s3_pairs, "etcd-s3-endpoint-ca", endpoint_ca);
    push_str(&mut s3_pairs, "etcd-s3-folder", string(s3, &["folder"]));
    push_str(&mut s3_pairs, "etcd-s3-region", string(s3, &["region"]));
    push_str(&mut s3_pairs, "etcd-s3-secret-key", secret);
    push_bool(
        &mut s3_pairs,
        "etcd-s3-skip-ssl-verify",
        !flag(s3, &["enforceSslVerify"]),
    );
    s3_pairs
}

/// The encryption configuration file of `secretsEncryption`; its provider, or empty.
fn secrets_encryption(
    input: &ServerInput<'_>,
    resolver: &mut Resolver<'_>,
    files: &mut Vec<File>,
) -> String {
    let Some(enc) = input
        .server_config
        .get("secretsEncryption")
        .filter(|v| v.is_object())
    else {
        return String::new();
    };
    let provider = string(enc, &["provider"]);
    let key = match Ref::at(enc, &["encryptionKeySecret"], input.namespace) {
        Some(r) => resolver.secret_bytes(
            input.owner,
            &r,
            "encryptionKey",
            "spec.serverConfig.secretsEncryption.encryptionKeySecret",
            32,
        ),
        None => Vec::new(),
    };
    let content = format!(
        concat!(
            r#"{{"kind":"EncryptionConfiguration","apiVersion":"apiserver.config.k8s.io/v1","#,
            r#""resources":[{{"resources":["secrets"],"providers":[{{"{}":{{"keys":[{{"name":"enckey","secret":"{}"}}]}}}},"#,
            r#"{{"identity":{{}}}}]}}]}}"#
        ),
        provider,
        rke2_payload::to_base64(&key)
    );
    files.push(File::new(ENCRYPTION_CONFIG, content, "0400"));
    provider
}

/// The `datastore-*` keys of `externalDatastoreSecret`, and their files.
fn datastore(input: &ServerInput<'_>, resolver: &mut Resolver<'_>, files: &mut Vec<File>) -> Pairs {
    let mut datastore = Pairs::new();
    let Some(r) = Ref::at(
        input.server_config,
        &["externalDatastoreSecret"],
        input.namespace,
    ) else {
        return datastore;
    };
    let field = "spec.serverConfig.externalDatastoreSecret";
    let endpoint = resolver.secret_text(input.owner, &r, "endpoint", field, 60);
    push_str(&mut datastore, "datastore-endpoint", endpoint);
    if let Some(ca) = resolver.optional_secret_text(&r, "ca.pem") {
        let path = "/etc/rancher/rke2/datastore-ca.crt";
        push_str(&mut datastore, "datastore-cafile", path.to_owned());
        files.push(File::new(path, ca, "0640"));
    }
    if let Some(cert) = resolver.optional_secret_text(&r, "cert.pem") {
        let key = resolver.secret_text(input.owner, &r, "key.pem", field, 1700);
        let (cert_path, key_path) = (
            "/etc/rancher/rke2/datastore-cert.crt",
            "/etc/rancher/rke2/datastore-key.crt",
        );
        push_str(&mut datastore, "datastore-certfile", cert_path.to_owned());
        files.push(File::new(cert_path, cert, "0640"));
        push_str(&mut datastore, "datastore-keyfile", key_path.to_owned());
        files.push(File::new(key_path, key, "0640"));
    }
    datastore
}

/// The keys from `advertise-address` to `disable-scheduler`.
fn general_keys(p: &mut Pairs, s: &Value, audit_policy_file: String) {
    let cni = match (flag(s, &["cniMultusEnable"]), string(s, &["cni"])) {
        (true, cni) => vec!["multus".to_owned(), cni],
        (false, cni) if !cni.is_empty() => vec![cni],
        _ => Vec::new(),
    };
    let kubernetes_components = strings(s, &["disableComponents", "kubernetesComponents"]);
    let disabled = |c: &str| kubernetes_components.iter().any(|k| k == c);
    push_str(p, "advertise-address", string(s, &["advertiseAddress"]));
    push_str(p, "audit-policy-file", audit_policy_file);
    push_str(p, "bind-address", string(s, &["bindAddress"]));
    push_list(p, "cni", cni);
    let ccm = s
        .get("cloudControllerManager")
        .cloned()
        .unwrap_or(Value::Null);
    push_list(
        p,
        "cloud-controller-manager-extra-env",
        component_map(&ccm, &["extraEnv"], '='),
    );
    push_list(
        p,
        "cloud-controller-manager-extra-mount",
        component_map(&ccm, &["extraMounts"], ':'),
    );
    push_str(p, "cluster-dns", string(s, &["clusterDNS"]));
    push_str(p, "cluster-domain", string(s, &["clusterDomain"]));
    push_bool(p, "disable-cloud-controller", disabled("cloudController"));
    push_list(
        p,
        "disable",
        strings(s, &["disableComponents", "pluginComponents"]),
    );
    push_bool(p, "disable-kube-proxy", disabled("kubeProxy"));
    push_bool(p, "disable-scheduler", disabled("scheduler"));
}

/// The `etcd-*` keys: the custom config, snapshots, S3.
fn etcd_keys(p: &mut Pairs, s: &Value, backup: &Value, s3_pairs: Pairs) {
    let etcd_custom = crate::manifests::at(s, &["etcd", "customConfig"])
        .cloned()
        .unwrap_or(Value::Null);
    push_list(p, "etcd-arg", strings(&etcd_custom, &["extraArgs"]));
    push_list(
        p,
        "etcd-extra-env",
        component_map(&etcd_custom, &["extraEnv"], '='),
    );
    push_list(
        p,
        "etcd-extra-mount",
        component_map(&etcd_custom, &["extraMounts"], ':'),
    );
    push_str(p, "etcd-image", string(&etcd_custom, &["overrideImage"]));
    if let Some(disable) = backup
        .get("disableAutomaticSnapshots")
        .and_then(Value::as_bool)
    {
        p.push(("etcd-disable-snapshots", Node::Bool(disable)));
    }
    push_bool(
        p,
        "etcd-expose-metrics",
        flag(s, &["etcd", "exposeMetrics"]),
    );
    p.extend(s3_pairs);
    push_str(p, "etcd-snapshot-dir", string(backup, &["directory"]));
    push_str(p, "etcd-snapshot-name", string(backup, &["snapshotName"]));
    push_str(p, "etcd-snapshot-retention", string(backup, &["retention"]));
    push_str(
        p,
        "etcd-snapshot-schedule-cron",
        string(backup, &["scheduleCron"]),
    );
}

/// The ingress controller, the control plane components' keys and the node port range.
fn component_keys(p: &mut Pairs, s: &Value) {
    push_list(p, "ingress-controller", strings(s, &["ingressController"]));
    const COMPONENTS: [(&str, [&str; 4]); 3] = [
        (
            "kubeAPIServer",
            [
                "kube-apiserver-arg",
                "kube-apiserver-extra-env",
                "kube-apiserver-extra-mount",
                "kube-apiserver-image",
            ],
        ),
        (
            "kubeControllerManager",
            [
                "kube-controller-manager-arg",
                "kube-controller-manager-extra-env",
                "kube-controller-manager-extra-mount",
                "kube-controller-manager-image",
            ],
        ),
        (
            "kubeScheduler",
            [
                "kube-scheduler-arg",
                "kube-scheduler-extra-env",
                "kube-scheduler-extra-mount",
                "kube-scheduler-image",
            ],
        ),
    ];
    for (field, [arg, env, mount, image]) in COMPONENTS {
        let c = s.get(field).cloned().unwrap_or(Value::Null);
        push_list(p, arg, strings(&c, &["extraArgs"]));
        push_list(p, env, component_map(&c, &["extraEnv"], '='));
        push_list(p, mount, component_map(&c, &["extraMounts"], ':'));
        push_str(p, image, string(&c, &["overrideImage"]));
    }
    push_str(
        p,
        "service-node-port-range",
        string(s, &["serviceNodePortRange"]),
    );
}

/// `config.yaml` for the pairs, as yaml.v3 with indent 2 writes the struct.
pub(crate) fn config_yaml(pairs: Pairs) -> String {
    let node = Node::Map(pairs.into_iter().map(|(k, v)| (k.to_owned(), v)).collect());
    to_string(&node, Style::V3)
}

/// `registries.yaml` and the registry TLS files, from `spec.privateRegistriesConfig`.
pub(crate) fn registries(
    spec: &Value,
    namespace: &str,
    owner: &str,
    resolver: &mut Resolver<'_>,
) -> (String, Vec<File>) {
    let registry = spec
        .get("privateRegistriesConfig")
        .cloned()
        .unwrap_or(Value::Null);
    let mut files = Vec::new();
    let mut mirrors = serde_json::Map::new();
    for (name, mirror) in registry
        .get("mirrors")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
    {
        let mut m = serde_json::Map::new();
        m.insert(
            "endpoint".to_owned(),
            match mirror.get("endpoint") {
                Some(Value::Array(e)) if !e.is_empty() => Value::Array(e.clone()),
                _ => Value::Null,
            },
        );
        if let Some(Value::Object(rewrite)) = mirror.get("rewrite")
            && !rewrite.is_empty()
        {
            m.insert("rewrite".to_owned(), Value::Object(rewrite.clone()));
        }
        mirrors.insert(name.clone(), Value::Object(m));
    }
    let mut configs: Option<serde_json::Map<String, Value>> = None;
    let mut names: Vec<(&String, &Value)> = registry
        .get("configs")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .collect();
    names.sort_by(|a, b| a.0.cmp(b.0));
    if names.len() > 1 {
        resolver.only_one_registry_config(owner, names.len());
    }
    for (name, config) in names {
        let mut rc = serde_json::Map::new();
        if let Some(tls_config) = config
            .get("tls")
            .filter(|t| t.as_object().is_some_and(|m| !m.is_empty()))
        {
            let r = Ref::at(tls_config, &["tlsConfigSecret"], namespace).unwrap_or(Ref {
                name: String::new(),
                namespace: namespace.to_owned(),
            });
            let mut tls = serde_json::Map::new();
            for (key, field) in [
                ("tls.crt", "cert_file"),
                ("tls.key", "key_file"),
                ("ca.crt", "ca_file"),
            ] {
                if let Some(content) = resolver.registry_tls(owner, &r, key) {
                    let path = format!("/etc/rancher/rke2/tls/{key}");
                    files.push(File {
                        path: path.clone(),
                        owner: String::new(),
                        permissions: String::new(),
                        encoding: String::new(),
                        content,
                    });
                    tls.insert(field.to_owned(), Value::String(path));
                }
            }
            if flag(config, &["tls", "insecureSkipVerify"]) {
                tls.insert("insecure_skip_verify".to_owned(), Value::Bool(true));
            }
            rc.insert("tls".to_owned(), Value::Object(tls));
        }
        if let Some(r) = Ref::at(config, &["authSecret"], namespace) {
            let Some(entries) = resolver.registry_auth(owner, &r) else {
                // CAPRKE2 returns an empty registry (and no files) and goes on.
                let empty = serde_json::json!({"configs": null, "mirrors": null});
                return (
                    to_string(&Node::from_json_sorted(&empty), Style::V2),
                    Vec::new(),
                );
            };
            let mut auth = serde_json::Map::new();
            for (key, field) in entries {
                auth.insert(field.to_owned(), Value::String(key));
            }
            rc.insert("auth".to_owned(), Value::Object(auth));
        }
        // CAPRKE2 re-creates the map for every entry: only the last one survives.
        let mut only = serde_json::Map::new();
        only.insert(name.clone(), Value::Object(rc));
        configs = Some(only);
    }
    let mut doc = serde_json::Map::new();
    doc.insert("mirrors".to_owned(), Value::Object(mirrors));
    doc.insert(
        "configs".to_owned(),
        configs.map_or(Value::Null, Value::Object),
    );
    let text = to_string(&Node::from_json_sorted(&Value::Object(doc)), Style::V2);
    (text, files)
}
