//! The RKE2 layer: `/etc/rancher/rke2/config.yaml`, the node's role, and the install step.

use serde_json::Value;

use crate::document::{Command, Document};
use crate::sensitive::SecretValue;

/// Where CAPRKE2 writes the RKE2 configuration.
pub(crate) const CONFIG_PATH: &str = "/etc/rancher/rke2/config.yaml";

/// The port RKE2 servers accept joins on.
pub(crate) const SUPERVISOR_PORT: u16 = 9345;

/// What the node becomes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum Role {
    /// The first control plane: no `server` to join, carries the cluster CAs.
    Init,
    /// A control plane joining an existing one.
    Server,
    /// A worker (RKE2 agent).
    Agent,
}

impl Role {
    /// `init`, `server` or `agent`.
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Init => "init",
            Role::Server => "server",
            Role::Agent => "agent",
        }
    }
}

/// `config.yaml`, with the keys this tool knows typed and every other key kept.
///
/// Its `Debug` output shows secrets as fingerprints and other keys by name only.
#[derive(Clone, Default)]
pub(crate) struct Rke2Config {
    /// `server`: the URL to join (absent on the first control plane).
    pub server: Option<String>,
    /// `token`.
    pub token: Option<SecretValue>,
    /// `agent-token`.
    pub agent_token: Option<SecretValue>,
    /// `tls-san`.
    pub tls_san: Vec<String>,
    /// `cluster-cidr`.
    pub cluster_cidr: Option<String>,
    /// `service-cidr`.
    pub service_cidr: Option<String>,
    /// `cni`.
    pub cni: Vec<String>,
    /// `ingress-controller`: the packaged ingress controllers to deploy, the first the default
    /// class (CAPRKE2 after v0.25: `serverConfig.ingressController`).
    pub ingress_controller: Vec<String>,
    /// `node-name`.
    pub node_name: Option<String>,
    /// `node-ip`.
    pub node_ip: Vec<String>,
    /// `node-label`.
    pub node_label: Vec<String>,
    /// `node-taint`.
    pub node_taint: Vec<String>,
    /// `kubelet-arg`.
    pub kubelet_arg: Vec<String>,
    /// `cloud-provider-name`.
    pub cloud_provider_name: Option<String>,
    /// `profile` (CIS).
    pub profile: Option<String>,
    /// The etcd S3 backup settings.
    pub etcd_s3: Option<EtcdS3>,
    /// `datastore-endpoint` (may embed a password).
    pub datastore_endpoint: Option<SecretValue>,
    /// Every other key with its value, in file order.
    pub other: Vec<(String, Value)>,
}

impl std::fmt::Debug for Rke2Config {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Rke2Config")
            .field("server", &self.server)
            .field("token", &self.token)
            .field("agent_token", &self.agent_token)
            .field("tls_san", &self.tls_san)
            .field("cluster_cidr", &self.cluster_cidr)
            .field("service_cidr", &self.service_cidr)
            .field("cni", &self.cni)
            .field("ingress_controller", &self.ingress_controller)
            .field("provider_id", &self.provider_id())
            .field("cloud_provider_name", &self.cloud_provider_name)
            .field("etcd_s3", &self.etcd_s3)
            .field("datastore_endpoint", &self.datastore_endpoint_redacted())
            .field(
                "other",
                &self.other.iter().map(|(k, _)| k).collect::<Vec<_>>(),
            )
            .finish_non_exhaustive()
    }
}

/// etcd snapshot upload to S3.
#[derive(Debug, Clone, Default)]
pub(crate) struct EtcdS3 {
    /// `etcd-s3`.
    pub enabled: bool,
    /// `etcd-s3-bucket`.
    pub bucket: Option<String>,
    /// `etcd-s3-endpoint`.
    pub endpoint: Option<String>,
    /// `etcd-s3-region`.
    pub region: Option<String>,
    /// `etcd-s3-folder`.
    pub folder: Option<String>,
    /// `etcd-s3-access-key`.
    pub access_key: Option<SecretValue>,
    /// `etcd-s3-secret-key`.
    pub secret_key: Option<SecretValue>,
}

/// How RKE2 is installed at first boot.
///
/// Its `Debug` output shows a fingerprint of the command line, not the line: a command can
/// carry a password or a token this library does not know as one.
#[derive(Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[non_exhaustive]
pub struct Install {
    /// `true` for the air-gapped install (`INSTALL_RKE2_ARTIFACT_PATH`), `false` for
    /// `curl … get.rke2.io`.
    pub airgapped: bool,
    /// `INSTALL_RKE2_VERSION`, when set and not empty.
    pub version: Option<String>,
    /// Whether the install line sets `INSTALL_RKE2_VERSION` at all (possibly empty).
    pub version_set: bool,
    /// `server` or `agent`, from `INSTALL_RKE2_TYPE` or the install arguments.
    pub install_type: Role,
    /// The SHA-256 the artifacts are checked against, when a checksum line precedes the install.
    pub checksum: Option<String>,
    /// The install command line.
    pub command: String,
}

impl std::fmt::Debug for Install {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Install")
            .field("airgapped", &self.airgapped)
            .field("version", &self.version)
            .field("version_set", &self.version_set)
            .field("install_type", &self.install_type)
            .field("checksum", &self.checksum)
            .field(
                "command",
                &crate::codec::digest::LineFingerprint(&self.command),
            )
            .finish()
    }
}

/// Error reading `config.yaml`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{path} is not valid YAML: {message}")]
pub(crate) struct ConfigError {
    /// The file.
    pub path: String,
    /// What is wrong (scrubbed of values).
    pub message: String,
}

impl Rke2Config {
    /// Reads a `config.yaml` text.
    pub(crate) fn parse(text: &str) -> Result<Self, ConfigError> {
        match fast_map(text) {
            Some(map) => Ok(Self::from_map(map)),
            None => Self::parse_full(text),
        }
    }

    /// Reads a `config.yaml` text with the full YAML parser.
    fn parse_full(text: &str) -> Result<Self, ConfigError> {
        let mut options = serde_saphyr::Options::default();
        options.with_snippet = false;
        let value: Option<Value> =
            serde_saphyr::from_str_with_options(text, options).map_err(|e| ConfigError {
                path: CONFIG_PATH.to_owned(),
                message: {
                    let m = crate::codec::text::scrub(&e.to_string());
                    match e.location() {
                        Some(l) if !m.contains(" at line ") => {
                            format!("{m} at line {}, column {}", l.line(), l.column())
                        }
                        _ => m,
                    }
                },
            })?;
        let map = match value {
            Some(Value::Object(map)) => map,
            None | Some(Value::Null) => return Ok(Rke2Config::default()),
            Some(_) => {
                return Err(ConfigError {
                    path: CONFIG_PATH.to_owned(),
                    message: "the top level is not a mapping".to_owned(),
                });
            }
        };
        Ok(Self::from_map(map))
    }

    fn from_map(map: serde_json::Map<String, Value>) -> Self {
        let mut config = Rke2Config::default();
        let mut s3 = EtcdS3::default();
        let mut has_s3 = false;
        for (key, value) in map {
            match key.as_str() {
                "server" => config.server = string(&value),
                "token" => config.token = string(&value).map(SecretValue::new),
                "agent-token" => config.agent_token = string(&value).map(SecretValue::new),
                "tls-san" => config.tls_san = list(&value),
                "cluster-cidr" => config.cluster_cidr = string(&value),
                "service-cidr" => config.service_cidr = string(&value),
                "cni" => config.cni = list(&value),
                "ingress-controller" => config.ingress_controller = list(&value),
                "node-name" => config.node_name = string(&value),
                "node-ip" => config.node_ip = list(&value),
                "node-label" => config.node_label = list(&value),
                "node-taint" => config.node_taint = list(&value),
                "kubelet-arg" => config.kubelet_arg = list(&value),
                "cloud-provider-name" => config.cloud_provider_name = string(&value),
                "profile" => config.profile = string(&value),
                "datastore-endpoint" => {
                    config.datastore_endpoint = string(&value).map(SecretValue::new)
                }
                "etcd-s3" => {
                    has_s3 = true;
                    s3.enabled = matches!(value, Value::Bool(true))
                        || string(&value).is_some_and(|s| s == "true");
                }
                "etcd-s3-bucket" => (has_s3, s3.bucket) = (true, string(&value)),
                "etcd-s3-endpoint" => (has_s3, s3.endpoint) = (true, string(&value)),
                "etcd-s3-region" => (has_s3, s3.region) = (true, string(&value)),
                "etcd-s3-folder" => (has_s3, s3.folder) = (true, string(&value)),
                "etcd-s3-access-key" => {
                    (has_s3, s3.access_key) = (true, string(&value).map(SecretValue::new))
                }
                "etcd-s3-secret-key" => {
                    (has_s3, s3.secret_key) = (true, string(&value).map(SecretValue::new))
                }
                _ => config.other.push((key, value)),
            }
        }
        if has_s3 {
            config.etcd_s3 = Some(s3);
        }
        config
    }

    /// The `provider-id=` value inside `kubelet-arg`.
    pub(crate) fn provider_id(&self) -> Option<&str> {
        self.kubelet_arg
            .iter()
            .find_map(|a| a.trim_start_matches('-').strip_prefix("provider-id="))
    }

    /// Whether `kubelet-arg` hands the node to an external cloud provider
    /// (`cloud-provider=external`), whose controller sets the provider ID.
    pub(crate) fn external_cloud_provider(&self) -> bool {
        self.kubelet_arg.iter().any(|a| {
            a.trim_start_matches('-')
                .strip_prefix("cloud-provider=")
                .is_some_and(|v| v.trim_matches(['"', '\'']) == "external")
        })
    }

    /// The files `token-file` and `agent-token-file` name: their contents are the tokens.
    pub(crate) fn token_files(&self) -> impl Iterator<Item = &str> {
        self.other
            .iter()
            .filter(|(k, _)| matches!(k.as_str(), "token-file" | "agent-token-file"))
            .filter_map(|(_, v)| v.as_str())
    }

    /// Every secret value in the config, for redaction.
    pub(crate) fn secrets(&self) -> Vec<&SecretValue> {
        let mut out: Vec<&SecretValue> = Vec::new();
        out.extend(&self.token);
        out.extend(&self.agent_token);
        out.extend(&self.datastore_endpoint);
        if let Some(s3) = &self.etcd_s3 {
            out.extend(&s3.access_key);
            out.extend(&s3.secret_key);
        }
        out
    }

    /// `datastore-endpoint` with any password replaced by `<redacted>`.
    pub(crate) fn datastore_endpoint_redacted(&self) -> Option<String> {
        let endpoint = self.datastore_endpoint.as_ref()?.expose();
        Some(redact_userinfo(endpoint))
    }
}

/// A fast path for the `config.yaml` yaml.v3 writes: `key: scalar` and `key:` followed by
/// `- scalar` items, scalars quoted or plain strings, `true`/`false`, and plain decimal
/// integers. Anything else (`None`) goes to the full parser; a differential test holds the
/// two together.
pub(crate) fn fast_map(text: &str) -> Option<serde_json::Map<String, Value>> {
    if !crate::codec::yaml::yaml_printable(text) {
        return None;
    }
    let mut map = serde_json::Map::new();
    let mut list: Option<(String, usize, Vec<Value>)> = None;
    for line in text.split('\n') {
        if line.bytes().all(|b| b == b' ') {
            continue;
        }
        if line.contains(['\t', '\r', '#']) {
            return None;
        }
        let indent = line.len() - line.trim_start_matches(' ').len();
        let content = &line[indent..];
        if let Some(item) = content.strip_prefix("- ") {
            let (_, dash, items) = list.as_mut()?;
            if *dash == usize::MAX {
                *dash = indent;
            } else if *dash != indent {
                return None;
            }
            items.push(scalar_value(item)?);
            continue;
        }
        if indent != 0 {
            return None;
        }
        if let Some((key, _, items)) = list.take()
            && (items.is_empty() || map.insert(key, Value::Array(items)).is_some())
        {
            return None;
        }
        let (key, value) = match content.split_once(": ") {
            Some((k, v)) => (k, Some(v)),
            None => (content.strip_suffix(':')?, None),
        };
        if key.is_empty()
            || !key
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
            // A key YAML reads as something else than its text (`NULL`, `true`, `1e3`).
            || !matches!(scalar_value(key), Some(Value::String(ref s)) if s == key)
        {
            return None;
        }
        match value {
            Some(v) => {
                if map.insert(key.to_owned(), scalar_value(v)?).is_some() {
                    return None;
                }
            }
            None => list = Some((key.to_owned(), usize::MAX, Vec::new())),
        }
    }
    if let Some((key, _, items)) = list.take()
        && (items.is_empty() || map.insert(key, Value::Array(items)).is_some())
    {
        return None;
    }
    Some(map)
}

/// The mapping the full parser reads of a config (empty for an empty document), `None` when it
/// refuses it or reads something else: the reference the fast path is checked against (tests,
/// fuzzing), and what `diff` compares when the fast path gives up.
pub(crate) fn full_map(text: &str) -> Option<serde_json::Map<String, Value>> {
    let mut options = serde_saphyr::Options::default();
    options.with_snippet = false;
    match serde_saphyr::from_str_with_options::<Option<Value>>(text, options).ok()? {
        Some(Value::Object(map)) => Some(map),
        None | Some(Value::Null) => Some(serde_json::Map::new()),
        Some(_) => None,
    }
}

/// One scalar of the fast path's subset.
fn scalar_value(raw: &str) -> Option<Value> {
    if raw.is_empty() || raw != raw.trim_matches(' ') {
        return None;
    }
    if let Some(body) = raw.strip_prefix('\'') {
        let body = body.strip_suffix('\'')?;
        if body.replace("''", "").contains('\'') {
            return None;
        }
        return Some(Value::String(body.replace("''", "'")));
    }
    if let Some(body) = raw.strip_prefix('"') {
        let body = body.strip_suffix('"')?;
        // Escapes other than none at all: leave them to the parser.
        if body.contains(['\\', '"']) {
            return None;
        }
        return Some(Value::String(body.to_owned()));
    }
    match raw {
        "true" => return Some(Value::Bool(true)),
        "false" => return Some(Value::Bool(false)),
        _ => {}
    }
    if raw.bytes().all(|b| b.is_ascii_digit()) {
        if raw.len() > 1 && raw.starts_with('0') {
            return None;
        }
        return raw.parse::<u64>().ok().map(Value::from);
    }
    let first = raw.as_bytes()[0];
    let prefix = |p: &str| {
        raw.get(..p.len())
            .is_some_and(|r| r.eq_ignore_ascii_case(p))
    };
    let special = b"-?:,[]{}#&*!|>'\"%@`+.".contains(&first)
        || raw.contains(": ")
        || raw.ends_with(':')
        || ["null", "~", "yes", "no", "on", "off", "y", "n", "true", "false"]
            .iter()
            .any(|word| raw.eq_ignore_ascii_case(word))
        || raw.parse::<f64>().is_ok()
        || prefix("0x")
        || prefix("0o")
        // A leading digit could start a number in some notation (YAML 1.1 or 1.2: `1_000`,
        // `1:20`, `0b101`, `0o17`, `0x1F`, `1e3`, `2001-12-14`), unless a character none of
        // them has (`/` in a CIDR, `f` in a hex token such as `6f24…`) settles it. Hex digits
        // count only after `0x`, which is refused above.
        || (raw.as_bytes()[0].is_ascii_digit()
            && raw
                .bytes()
                .all(|b| b.is_ascii_digit() || b"._+-:xXoObBeEtTzZ".contains(&b)));
    (!special).then(|| Value::String(raw.to_owned()))
}

/// `scheme://user:password@host` → `scheme://user:<redacted>@host`.
fn redact_userinfo(url: &str) -> String {
    let Some(at) = url.rfind('@') else {
        return url.to_owned();
    };
    let start = url.find("://").map_or(0, |i| i + 3);
    if start > at {
        return url.to_owned();
    }
    let userinfo = &url[start..at];
    match userinfo.split_once(':') {
        Some((user, _)) => format!("{}{user}:<redacted>{}", &url[..start], &url[at..]),
        None => url.to_owned(),
    }
}

fn string(value: &Value) -> Option<String> {
    match value {
        Value::String(s) => Some(s.clone()),
        Value::Null => None,
        Value::Array(_) | Value::Object(_) => None,
        other => Some(other.to_string()),
    }
}

/// A list value; RKE2 also accepts a comma-separated string.
fn list(value: &Value) -> Vec<String> {
    match value {
        Value::Array(items) => items.iter().filter_map(string).collect(),
        Value::String(s) => s
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_owned)
            .collect(),
        Value::Null => Vec::new(),
        other => string(other).into_iter().collect(),
    }
}

/// Finds the install step among the first-boot commands.
pub(crate) fn install(commands: &[Command]) -> Option<Install> {
    let index = commands.iter().position(|c| {
        c.line.contains("get.rke2.io")
            || c.line.contains("INSTALL_RKE2_ARTIFACT_PATH")
            || c.line.contains("/opt/install.sh")
    })?;
    let line = &commands[index].line;
    let airgapped = !line.contains("get.rke2.io");
    let env = |name: &str| -> Option<String> {
        let start = line.find(&format!("{name}="))? + name.len() + 1;
        let rest = &line[start..];
        let value: String = if let Some(quoted) = rest.strip_prefix('"') {
            quoted.split('"').next().unwrap_or("").to_owned()
        } else if let Some(quoted) = rest.strip_prefix('\'') {
            quoted.split('\'').next().unwrap_or("").to_owned()
        } else if rest.starts_with(char::is_whitespace) {
            String::new()
        } else {
            rest.split_whitespace().next().unwrap_or("").to_owned()
        };
        Some(value)
    };
    let version = env("INSTALL_RKE2_VERSION");
    let install_type = match env("INSTALL_RKE2_TYPE").as_deref() {
        Some("agent") => Role::Agent,
        Some(_) => Role::Server,
        None if line.contains("sh -s - server") || line.contains("sh -s - server ") => Role::Server,
        None => Role::Server,
    };
    let checksum = commands[..index].iter().rev().find_map(|c| {
        (c.line.contains("sha256sum") && c.line.contains("==")).then(|| {
            c.line
                .split("==")
                .nth(1)
                .and_then(|rest| rest.split_whitespace().next())
                .unwrap_or("")
                .trim_matches(['"', '\''])
                .to_owned()
        })
    });
    Some(Install {
        airgapped,
        version_set: version.is_some(),
        version: version.filter(|v| !v.is_empty()),
        install_type,
        checksum,
        command: line.clone(),
    })
}

/// Whether the payload installs or starts RKE2 at all: an install step, or a command that
/// enables or starts `rke2-server` or `rke2-agent`. A CAPRKE2 payload always does; one that
/// does not was cut short or written by hand.
pub(crate) fn starts(install: Option<&Install>, document: &Document) -> bool {
    install.is_some()
        || document.commands().iter().any(|c| {
            (c.line.contains("rke2-server") || c.line.contains("rke2-agent"))
                && (c.line.contains("enable") || c.line.contains("start"))
                && !c.line.contains("mask")
        })
}

/// The node's role: from the install step and the services enabled, then from `config.yaml`
/// and whether the payload carries the cluster CA (`ca`). A config without `server` is the
/// first control plane only on positive evidence (a service or install of the server type,
/// the CA, or server-only keys): a join payload cut short before its `server` line is not
/// read as one (`None`).
pub(crate) fn role(
    config: Option<&Rke2Config>,
    install: Option<&Install>,
    document: &Document,
    ca: bool,
) -> Option<Role> {
    let enables = |service: &str| {
        document.commands().iter().any(|c| {
            c.line.contains(service)
                && (c.line.contains("enable") || c.line.contains("start"))
                && !c.line.contains("mask")
        })
    };
    let agent = install
        .map(|i| i.install_type == Role::Agent)
        .unwrap_or(false)
        || (enables("rke2-agent") && !enables("rke2-server"));
    let server = install
        .map(|i| i.install_type == Role::Server)
        .unwrap_or(false)
        || enables("rke2-server");
    let joins = config.is_some_and(|c| c.server.as_deref().is_some_and(|s| !s.is_empty()));
    match (agent, server) {
        (true, _) => Some(Role::Agent),
        (false, true) if joins => Some(Role::Server),
        (false, true) => Some(Role::Init),
        (false, false) => {
            let config = config?;
            let server_keys = !config.tls_san.is_empty()
                || !config.cni.is_empty()
                || config.cluster_cidr.is_some();
            match (joins, server_keys || ca) {
                (false, true) => Some(Role::Init),
                (false, false) => None,
                (true, true) => Some(Role::Server),
                (true, false) => Some(Role::Agent),
            }
        }
    }
}

/// The host of a join URL such as `https://[fd00::a]:9345` (`fd00::a`), and its port.
pub(crate) fn server_host_port(url: &str) -> Option<(String, Option<u16>)> {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    let authority = rest.split(['/', '?', '#']).next()?;
    let authority = authority.rsplit_once('@').map_or(authority, |(_, a)| a);
    if let Some(v6) = authority.strip_prefix('[') {
        let (host, after) = v6.split_once(']')?;
        let port = after.strip_prefix(':').and_then(|p| p.parse().ok());
        return Some((host.to_owned(), port));
    }
    match authority.rsplit_once(':') {
        Some((host, port)) => Some((host.to_owned(), port.parse().ok())),
        None => Some((authority.to_owned(), None)),
    }
}

/// The CA hash inside a `K10<hash>::<user>:<password>` token, if it has that shape.
pub(crate) fn token_ca_hash(token: &str) -> Option<&str> {
    let rest = token.strip_prefix("K10")?;
    let (hash, _) = rest.split_once("::")?;
    (hash.len() == 64 && hash.bytes().all(|b| b.is_ascii_hexdigit())).then_some(hash)
}

#[cfg(test)]
mod tests {
    use super::*;

    const INIT: &str = "cloud-provider-name: external\ntoken: 461787c003ec7e4777dc92ebbc7d2686\ncni:\n  - calico\ndisable:\n  - rke2-ingress-nginx\netcd-snapshot-retention: \"10\"\ntls-san:\n  - demo.example.com\n  - demo-apiserver.example.internal\ncluster-cidr: 10.42.0.0/16\nservice-cidr: 10.43.0.0/16\nkubelet-arg:\n  - provider-id=aws:///eu-west-1a/i-0abc\netcd-s3: true\netcd-s3-access-key: AKIAEXAMPLE\netcd-s3-secret-key: wJalrXUtnFEMI\ndatastore-endpoint: postgres://rke2:hunter22@db:5432/rke2\n";

    #[test]
    fn reads_config_yaml() {
        let c = Rke2Config::parse(INIT).unwrap();
        assert_eq!(c.server, None);
        assert_eq!(
            c.token.as_ref().unwrap().expose(),
            "461787c003ec7e4777dc92ebbc7d2686"
        );
        assert_eq!(
            c.tls_san,
            ["demo.example.com", "demo-apiserver.example.internal"]
        );
        assert_eq!(c.cni, ["calico"]);
        assert_eq!(c.cluster_cidr.as_deref(), Some("10.42.0.0/16"));
        assert_eq!(c.provider_id(), Some("aws:///eu-west-1a/i-0abc"));
        let s3 = c.etcd_s3.as_ref().unwrap();
        assert!(s3.enabled);
        assert_eq!(s3.access_key.as_ref().unwrap().expose(), "AKIAEXAMPLE");
        assert_eq!(
            c.datastore_endpoint_redacted().as_deref(),
            Some("postgres://rke2:<redacted>@db:5432/rke2")
        );
        assert_eq!(c.secrets().len(), 4);
        assert!(
            c.other
                .iter()
                .any(|(k, v)| k == "etcd-snapshot-retention" && v == "10")
        );
        assert!(!format!("{c:?}").contains("461787c0"));
        assert!(!format!("{c:?}").contains("hunter22"));
    }

    /// A control plane's `config.yaml` as CAPRKE2's `main` writes it: `ingress-controller`
    /// between `etcd-snapshot-schedule-cron` and `kube-apiserver-arg`, traefik disabled.
    const MAIN_BRANCH: &str = "cloud-provider-name: external\ntoken: 461787c003ec7e4777dc92ebbc7d2686\ncni:\n  - calico\ndisable:\n  - rke2-traefik\n  - rke2-traefik-crd\netcd-snapshot-retention: \"10\"\netcd-snapshot-schedule-cron: '*/15 * * * *'\ningress-controller:\n  - ingress-nginx\nkube-apiserver-arg:\n  - audit-log-maxage=30\ntls-san:\n  - demo.example.com\n";

    #[test]
    fn reads_the_ingress_controller_of_caprke2_main() {
        // The fast path reads it (the full parser would too: see the differential test).
        let map = fast_map(MAIN_BRANCH).expect("the fast path reads CAPRKE2's config.yaml");
        assert_eq!(Some(&map), full_map(MAIN_BRANCH).as_ref());
        let c = Rke2Config::parse(MAIN_BRANCH).unwrap();
        assert_eq!(c.ingress_controller, ["ingress-nginx"]);
        assert_eq!(c.cni, ["calico"]);
        assert_eq!(c.tls_san, ["demo.example.com"]);
        // `disable` stays a list among the other keys, whatever components it names.
        let other = |key: &str| c.other.iter().find(|(k, _)| k == key).map(|(_, v)| v);
        assert_eq!(
            other("disable"),
            Some(&serde_json::json!(["rke2-traefik", "rke2-traefik-crd"]))
        );
        assert_eq!(
            other("kube-apiserver-arg"),
            Some(&serde_json::json!(["audit-log-maxage=30"]))
        );
        assert!(other("ingress-controller").is_none());
        // RKE2 also takes a comma-separated string; an absent key is an empty list.
        let c = Rke2Config::parse("ingress-controller: traefik,ingress-nginx\n").unwrap();
        assert_eq!(c.ingress_controller, ["traefik", "ingress-nginx"]);
        assert!(
            Rke2Config::parse(INIT)
                .unwrap()
                .ingress_controller
                .is_empty()
        );
    }

    /// Differential: where the fast path reads a config, the full parser reads the same.
    #[test]
    fn fast_path_agrees_with_the_full_parser() {
        let index = include_str!("../../tests/data/secrets/INDEX.json");
        let index: Vec<Value> = serde_json::from_str(index).unwrap();
        let mut configs: Vec<String> = index
            .iter()
            .filter_map(|e| e["config_yaml"].as_str().map(str::to_owned))
            .collect();
        configs.push(INIT.to_owned());
        configs.push(MAIN_BRANCH.to_owned());
        configs.push(
            "a: 007\nb: '1'\nc: \"x\\ty\"\nd: 1.5\ne: yes\nf:\n- x\n- 2\ng: [1]\n".to_owned(),
        );
        configs.push(
            "h: 10.42.0.0/16\ni: 1_000\nj: 1:20\nk: 123abcz\nl: 1e3\nm: 0x1F\nn: 10.0.1.10\n"
                .to_owned(),
        );
        // Tokens and names that start with a digit: strings unless some notation makes them a
        // number, a date or a time.
        let digits = "token: 6f241d83c195c0921f1857dc23911099\na: 0b101\nb: 0o17\nc: 1.5e3\n\
             d: 6e10\ne: 1e+3\nf: 09\ng: 1.\nh: 1__2\ni: 2001-12-14\n\
             j: 2001-12-14t21:59:43.10-05:00\nk: 12:30:45\nl: 0xffz\nm: 9a\nn: 1f\no: 0b12\n\
             p: 7d3e5\nq: 1E5\nr: 1d\ns: 4c2-x\n";
        // One config per line, so that one line the fast path refuses does not hide the others.
        configs.extend(digits.lines().map(|l| format!("{l}\n")));
        for hex in [
            "token: 6f241d83c195c0921f1857dc23911099\n",
            "m: 9a\n",
            "s: 4c2-x\n",
        ] {
            assert!(fast_map(hex).is_some(), "{hex}");
        }
        // Keys YAML reads as null, a boolean or a number (found by fuzzing).
        configs
            .extend(["NULL: x\n", "true: x\n", "1e3: x\n", "~: x\n", "007: x\n"].map(String::from));
        let swaps = [
            " ", ":", "'", "\"", "#", "-", "\n", "0", "1", "y", "~", "[", ".",
        ];
        let (mut fast, mut total) = (0, 0);
        for (n, text) in configs.iter().enumerate() {
            let mut variants = vec![text.clone()];
            for (k, (at, c)) in text
                .char_indices()
                .enumerate()
                .filter(|(k, _)| (k + n) % 3 == 0)
            {
                let mut t = text.clone();
                t.replace_range(at..at + c.len_utf8(), swaps[k % swaps.len()]);
                variants.push(t);
            }
            for t in variants {
                total += 1;
                if let Some(map) = fast_map(&t) {
                    fast += 1;
                    assert_eq!(Some(map), full_map(&t), "{t}");
                }
            }
        }
        assert!(fast > 50, "{fast} of {total}");
    }

    #[test]
    fn debug_shows_a_fingerprint_of_command_lines() {
        let line = "curl -sfL https://get.rke2.io | REGISTRY_PASSWORD=hunter22 sh -s - server";
        let command = Command {
            line: line.to_owned(),
            origin: "runcmd".to_owned(),
        };
        let install = install(std::slice::from_ref(&command)).unwrap();
        for shown in [
            format!("{command:?}"),
            format!("{install:?}"),
            format!("{install:#?}"),
        ] {
            assert!(!shown.contains("hunter22"), "{shown}");
            assert!(!shown.contains("get.rke2.io"), "{shown}");
            assert!(
                shown.contains(&format!("<{} bytes, sha256:", line.len())),
                "{shown}"
            );
        }
        assert!(format!("{command:?}").contains("runcmd"));
        assert!(format!("{install:?}").contains("install_type: Server"));
    }

    #[test]
    fn install_steps() {
        let cmd = |line: &str| Command {
            line: line.to_owned(),
            origin: "runcmd".to_owned(),
        };
        let online = install(&[cmd(
            "curl -sfL https://get.rke2.io | INSTALL_RKE2_VERSION=v1.32.5+rke2r1 INSTALL_RKE2_TYPE=\"agent\" sh -s -",
        )])
        .unwrap();
        assert!(!online.airgapped);
        assert_eq!(online.version.as_deref(), Some("v1.32.5+rke2r1"));
        assert_eq!(online.install_type, Role::Agent);
        let air = install(&[
            cmd("[[ $(sha256sum /opt/rke2-artifacts/sha256sum*.txt | awk '{print $1}') == abcd ]] || exit 1"),
            cmd("INSTALL_RKE2_ARTIFACT_PATH=/opt/rke2-artifacts sh /opt/install.sh"),
        ])
        .unwrap();
        assert!(air.airgapped);
        assert_eq!(air.version, None);
        assert!(!air.version_set);
        assert_eq!(air.checksum.as_deref(), Some("abcd"));
        assert_eq!(air.install_type, Role::Server);
        let empty = install(&[cmd(
            "curl -sfL https://get.rke2.io | INSTALL_RKE2_VERSION= sh -s - server",
        )])
        .unwrap();
        assert!(empty.version_set);
        assert_eq!(empty.version, None);
        assert!(install(&[cmd("echo hi")]).is_none());
    }

    #[test]
    fn hosts_ports_and_tokens() {
        assert_eq!(
            server_host_port("https://[fd00::a]:9345"),
            Some(("fd00::a".into(), Some(9345)))
        );
        assert_eq!(
            server_host_port("https://10.0.1.10:9345"),
            Some(("10.0.1.10".into(), Some(9345)))
        );
        assert_eq!(
            server_host_port("https://cp.example.com"),
            Some(("cp.example.com".into(), None))
        );
        let hash = "a".repeat(64);
        assert_eq!(
            token_ca_hash(&format!("K10{hash}::server:secret")),
            Some(hash.as_str())
        );
        assert_eq!(token_ca_hash("461787c003ec7e4777dc92ebbc7d2686"), None);
    }
}
