//! Entry points shared by the fuzz targets under `fuzz/` and by the regression tests that run
//! every saved corpus file with plain `cargo test`. Each one must return without panicking, in
//! bounded time and memory, for any input; the differential and round-trip entries assert.
//!
//! Behind the `fuzzing` feature: these functions panic by design when a property breaks.

mod free_text;

use std::borrow::Cow;

use crate::codec::text::{is_unsafe_char, terminal_safe};
use crate::codec::{b64, dataurl, gzip};
use crate::document::{CloudConfig, Content, File, Ignition};
use crate::envelope::Envelope;
use crate::facts::rke2::{self, Rke2Config};
use crate::facts::{Facts, pki};
use crate::options::DecodeOptions;
use crate::payload::{DeclaredFormat, Format, Payload, ignition_gzip_wrapper};
use crate::reports::diff::DiffOptions;
use crate::reports::inspect::{InspectOptions, payload_report};
use crate::reports::lint::{ClusterFacts, LintOptions, Member, lint_cluster, lint_payload};
use crate::reports::size::{SizeOptions, measure};

/// Small caps so the fuzzer explores instead of inflating.
fn options() -> DecodeOptions {
    DecodeOptions::default().with_max_inflated(1 << 20)
}

/// A fuzz entry point.
pub type Target = fn(&[u8]);

/// Every fuzz target by name, for the regression tests.
pub const TARGETS: &[(&str, Target)] = &[
    ("envelope", envelope),
    ("payload", payload),
    ("cloudconfig", cloudconfig),
    ("ignition", ignition),
    ("dataurl", data_url),
    ("pki", pem),
    ("rke2_config", rke2_config),
    ("inspect", inspect),
    ("stream", stream),
    ("roundtrip", roundtrip),
    ("redact", redact),
    ("convert", convert),
    ("terminal", terminal),
    ("diff", diff),
    ("free_text", free_text),
];

/// Free text: a secret planted in any position of any grammar the masking reads is gone from
/// every decoded layer of `redact`'s output and from the reports, or `redact` refused.
pub fn free_text(data: &[u8]) {
    free_text::planted(data);
}

/// The Secret envelope (YAML, JSON, List, multi-document), then each value's payload.
pub fn envelope(data: &[u8]) {
    let options = options();
    if let Ok(envelope) = Envelope::parse(data, &options) {
        for secret in &envelope.secrets {
            let _ = secret.declared_format();
            let _ = secret.decode(&options);
        }
    }
}

/// Differential: the streaming reader (with its kubectl fast path and JSON item splitter) hands
/// over the same Secrets as the in-memory parser, at the same lines, whenever both succeed; and
/// where the parser refuses the input, the stream does not read it all as sound (it refuses it,
/// or hands over an object it could not read).
pub fn stream(data: &[u8]) {
    const BOM: &[u8] = "\u{feff}".as_bytes();
    let options = options();
    let mut streamed: Vec<_> = Vec::new();
    let mut broken = false;
    let s = crate::envelope::for_each_secret(data, &options, |secret| {
        broken |= secret.is_broken();
        streamed.push((
            secret.id().clone(),
            secret.base64_len(),
            secret.value().ok().map(Cow::into_owned),
            secret.line(),
        ));
        Ok::<(), std::convert::Infallible>(())
    });
    let envelope = match Envelope::parse(data, &options) {
        Ok(envelope) => envelope,
        // (A byte-order mark that starts a later document is YAML, which the parser refuses in
        // a stream of documents but reads in a document alone, as the stream hands it over.)
        Err(crate::error::Error::Syntax { .. })
            if !data
                .get(1..)
                .unwrap_or_default()
                .windows(3)
                .any(|w| w == BOM) =>
        {
            assert!(
                s.is_err() || broken,
                "the stream read what the parser refuses"
            );
            return;
        }
        Err(_) => return,
    };
    if s.is_err() {
        return;
    }
    let parsed: Vec<_> = envelope
        .secrets
        .iter()
        .map(|s| {
            (
                s.id().clone(),
                s.base64_len(),
                s.value().ok().map(Cow::into_owned),
                s.line(),
            )
        })
        .collect();
    // Where the parser cannot point at a value's line (a value it had to copy: quoted, a block
    // scalar), the stream names the object's first line instead.
    for (streamed, parsed) in streamed.iter_mut().zip(&parsed) {
        if parsed.3.is_none() {
            streamed.3 = None;
        }
    }
    assert_eq!(streamed, parsed, "stream and parse disagree");
}

/// Payload sniffing, inflate and the Ignition wrapper, under every declared format.
pub fn payload(data: &[u8]) {
    for declared in [
        DeclaredFormat::CloudConfig,
        DeclaredFormat::Ignition,
        DeclaredFormat::Empty,
        DeclaredFormat::Missing,
    ] {
        let _ = Payload::decode(Cow::Borrowed(data), declared, &options());
    }
    let _ = gzip::inflate(data, 1 << 20);
}

/// cloud-config and its `write_files` encodings; the fast path against the full parser.
pub fn cloudconfig(data: &[u8]) {
    if let Ok(text) = std::str::from_utf8(data) {
        let _ = CloudConfig::parse(text);
        CloudConfig::check_fast_path(text);
    }
}

/// Ignition configs and their `data:` URLs.
pub fn ignition(data: &[u8]) {
    if let Ok(text) = std::str::from_utf8(data) {
        let _ = Ignition::parse(text);
    }
}

/// `data:` URLs.
pub fn data_url(data: &[u8]) {
    if let Ok(text) = std::str::from_utf8(data) {
        let _ = dataurl::decode(text);
    }
}

/// PEM blocks and X.509 / key summaries.
pub fn pem(data: &[u8]) {
    let file = File {
        path: "/var/lib/rancher/rke2/server/tls/server-ca.crt".to_owned(),
        mode: None,
        owner: None,
        encoding: None,
        content: Content::Inline(data.to_vec()),
        append: false,
    };
    let _ = pki::scan([&file]);
}

/// The RKE2 `config.yaml`; where the fast path reads it, the full parser must read the same.
pub fn rke2_config(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Some(fast) = rke2::fast_map(text)
        && rke2::full_map(text).as_ref() != Some(&fast)
    {
        // Keys only: the values may be a token (the fuzzer keeps the input).
        let keys: Vec<&String> = fast.keys().collect();
        panic!(
            "the fast path and the parser differ on a {}-byte config with keys {keys:?}",
            text.len()
        );
    }
    if let Ok(config) = Rke2Config::parse(text) {
        let _ = config.provider_id();
        let _ = config.datastore_endpoint_redacted();
    }
}

/// The whole pipeline: envelope, payload, document, RKE2 facts, PKI, report, size, lint.
pub fn inspect(data: &[u8]) {
    let options = options();
    let Ok(envelope) = Envelope::parse(data, &options) else {
        return;
    };
    let inspect = InspectOptions::new().with_decode(options.clone());
    let mut read = Vec::new();
    for secret in &envelope.secrets {
        let Ok(payload) = secret.decode(&options) else {
            continue;
        };
        let facts = Facts::read(&payload);
        let size = measure(secret, &payload, None, &SizeOptions::default());
        let _ = lint_payload(&facts, &payload, Some(&size), &LintOptions::default());
        read.push((secret, ClusterFacts::of(&facts)));
        let _ = payload_report(secret, &payload, facts, &inspect);
    }
    let members: Vec<Member<'_>> = read
        .iter()
        .map(|(secret, facts)| Member {
            name: secret.name(),
            namespace: secret.namespace(),
            cluster: secret.cluster(),
            facts,
        })
        .collect();
    let _ = lint_cluster(&members);
}

/// Encode → decode round trips that must give back the input.
pub fn roundtrip(data: &[u8]) {
    let level = u32::from(data.first().copied().unwrap_or(6) % 10);
    let compressed = gzip::deflate(data, level);
    assert_eq!(
        gzip::inflate(&compressed, u64::MAX).as_deref(),
        Ok(data),
        "gzip round trip"
    );
    let text = b64::encode(data);
    assert_eq!(b64::decode(&text).as_deref(), Ok(data), "base64 round trip");
    let url = format!("data:,{}", dataurl::percent_encode(data));
    assert_eq!(
        dataurl::decode(&url).as_deref(),
        Ok(data),
        "data URL round trip"
    );
    let url = format!("data:;base64,{text}");
    assert_eq!(
        dataurl::decode(&url).as_deref(),
        Ok(data),
        "base64 data URL round trip"
    );
    // The Ignition wrapper gives back any inner config.
    let inner = format!(
        r#"{{"ignition":{{"version":"3.3.0"}},"storage":{{"files":[{{"path":"/x","contents":{{"source":"data:;base64,{text}"}}}}]}}}}"#
    );
    let wrapper = ignition_gzip_wrapper(inner.as_bytes());
    let payload = Payload::decode(Cow::Owned(wrapper), DeclaredFormat::Ignition, &options())
        .expect("the wrapper this crate writes decodes");
    assert_eq!(
        payload.userdata(),
        inner.as_bytes(),
        "Ignition wrapper round trip"
    );
}

/// Where a planted secret can stand in a payload, in the order the fuzz input picks them.
const PLACES: &[&str] = &[
    "config-token",
    "kubelet-arg",
    "datastore",
    "s3-secret",
    "registry-password",
    "env-file",
    "unit-environment",
    "command-assignment",
    "command-bearer",
    "url-userinfo",
    "docker-auth",
    "cloud-init-password",
    "private-key",
    "ini-password",
    "quoted-key",
    "spaced-key",
    "explicit-key",
    "escaped-key",
    "escaped-value",
    "binary-value",
    "list-value",
    "map-value",
    "alias-key",
    "drop-in",
    "double-slash-path",
    "unknown-key",
    "argv-token",
    "short-flag",
    "mysql-password",
    "token-file",
    "node-password",
    "openssh-key",
    "age-key",
    "folded-value",
];

/// Redaction: a payload built from the input with a secret in a place and an encoding the input
/// picks (cloud-config or Ignition; plain, base64 or gzip contents; gzip or not). `redact` either
/// refuses or writes an output in which the secret is found nowhere: not in its text, not in the
/// user data it decodes to, not in any file of that user data.
pub fn redact(data: &[u8]) {
    redact_planted(data);
}

/// [`redact`], telling whether the payload was redacted (and checked) rather than refused or
/// not built.
fn redact_planted(data: &[u8]) -> bool {
    let [place, encoding, format, gzip_value, rest @ ..] = data else {
        return false;
    };
    let Some(secret) = planted_secret(rest) else {
        return false;
    };
    let place = PLACES[usize::from(*place) % PLACES.len()];
    let (files, commands) = plant(place, &secret);
    let (fmt, userdata) = if format % 2 == 0 {
        (
            Format::CloudConfig,
            cloud_config(&files, &commands, *encoding),
        )
    } else {
        (
            Format::Ignition,
            ignition_config(&files, &commands, *encoding),
        )
    };
    let value = crate::encode::compress(userdata.as_bytes(), fmt, gzip_value % 2 == 1);
    let input = serde_json::json!({"apiVersion": "v1", "kind": "Secret",
        "metadata": {"name": "fuzz", "namespace": "d"},
        "data": {"format": b64::encode(fmt.as_str().as_bytes()), "value": b64::encode(&value)}})
    .to_string();
    let Ok(out) = crate::redact::redact(
        input.as_bytes(),
        &crate::redact::RedactOptions::new().with_decode(options()),
    ) else {
        return false;
    };
    // The age key is planted in upper case (Bech32 is case-insensitive).
    let secret = if place == "age-key" {
        secret.to_ascii_uppercase()
    } else {
        secret
    };
    assert_redacted(&out, &secret, place, &shape(&userdata, fmt), fmt);
    true
}

/// A secret of 8 to 26 letters and digits made from the input (`None` when it is too short).
fn planted_secret(rest: &[u8]) -> Option<String> {
    let secret: String = rest
        .iter()
        .map(|b| {
            char::from(
                b"abcdefghijkmnopqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789"[usize::from(*b) % 57],
            )
        })
        .take(24)
        .collect();
    (secret.len() >= 6).then(|| format!("Zq{secret}"))
}

/// The files (`config.yaml` first) and commands of a payload with `secret` at `place`.
fn plant(place: &str, secret: &str) -> (Vec<(&'static str, String)>, Vec<String>) {
    let config_token = if place == "config-token" {
        secret
    } else {
        "plainToken1234"
    };
    let mut config = format!("server: https://cp.example:9345\ntoken: {config_token}\n");
    let mut files: Vec<(&str, String)> = Vec::new();
    let mut commands = vec!["curl -sfL https://get.rke2.io | sh -".to_owned()];
    match place {
        "kubelet-arg" => config.push_str(&format!("kubelet-arg:\n- --token={secret}\n")),
        "datastore" => {
            config.push_str(&format!("datastore-endpoint: postgres://u:{secret}@db/x\n"))
        }
        "s3-secret" => config.push_str(&format!("etcd-s3-secret-key: {secret}\n")),
        "registry-password" => files.push((
            "/etc/rancher/rke2/registries.yaml",
            format!("configs:\n  r:\n    auth:\n      password: {secret}\n"),
        )),
        "env-file" => files.push(("/etc/default/app", format!("APP_PASSWORD={secret}\n"))),
        "unit-environment" => files.push((
            "/etc/systemd/system/app.service",
            format!("[Service]\nEnvironment=APP_SECRET={secret}\n"),
        )),
        "command-assignment" => commands.push(format!("RKE2_TOKEN={secret} /opt/run.sh")),
        "command-bearer" => commands.push(format!(
            "curl -H \"Authorization: Bearer {secret}\" https://x"
        )),
        "url-userinfo" => commands.push(format!("curl http://user:{secret}@proxy:3128/")),
        "docker-auth" => files.push((
            "/root/.docker/config.json",
            format!("{{\"auths\":{{\"r\":{{\"auth\":\"{secret}\"}}}}}}"),
        )),
        "cloud-init-password" => files.push(("/etc/app.conf", format!("passwd: {secret}\n"))),
        "ini-password" => files.push((
            "/etc/kubernetes/cloud.conf",
            format!("[Global]\nusername = admin\npassword = {secret}\n"),
        )),
        "quoted-key" => config.push_str(&format!("'token': {secret}\n")),
        "spaced-key" => config.push_str(&format!("agent-token : {secret}\n")),
        "explicit-key" => config.push_str(&format!("? agent-token\n: {secret}\n")),
        "escaped-key" => config.push_str(&format!("\"\\x74oken\": {secret}\n")),
        "escaped-value" => {
            let escaped: String = secret
                .chars()
                .map(|c| format!("\\x{:02x}", u32::from(c)))
                .collect();
            config.push_str(&format!("agent-token: \"{escaped}\"\n"));
        }
        "binary-value" => config.push_str(&format!(
            "agent-token: !!binary {}\n",
            b64::encode(secret.as_bytes())
        )),
        "list-value" => config.push_str(&format!("agent-token: [{secret}]\n")),
        "map-value" => config.push_str(&format!("agent-token: {{a: {secret}}}\n")),
        "alias-key" => config.push_str(&format!("t: {secret}\ncni: {secret}\n")),
        "unknown-key" => config.push_str(&format!("my-flag: {secret}\n")),
        "drop-in" => files.push((
            "/etc/rancher/rke2/config.yaml.d/50-x.yaml",
            format!("token: {secret}\n"),
        )),
        "double-slash-path" => files.push((
            "/etc/rancher/rke2//config.yaml",
            format!("token: {secret}\n"),
        )),
        "argv-token" => commands.push(format!("rke2 agent --token {secret} --debug")),
        "short-flag" => commands.push(format!("rke2 agent -t {secret}")),
        "mysql-password" => commands.push(format!("mysql -uroot -p{secret} db")),
        "token-file" => files.push((
            "/var/lib/rancher/rke2/server/agent-token",
            format!("{secret}\n"),
        )),
        "node-password" => files.push(("/etc/rancher/node/password", format!("{secret}\n"))),
        "openssh-key" => files.push((
            "/home/ops/.ssh/deploy",
            format!(
                "-----BEGIN OPENSSH PRIVATE KEY-----\n{secret}\n-----END OPENSSH PRIVATE KEY-----\n"
            ),
        )),
        "age-key" => files.push((
            "/etc/sops/age.txt",
            format!("AGE-SECRET-KEY-1{}\n", secret.to_ascii_uppercase()),
        )),
        "folded-value" => config.push_str(&format!(
            "agent-token: \"{}\\\n  {}\"\n",
            &secret[..secret.len() / 2],
            &secret[secret.len() / 2..]
        )),
        "private-key" => files.push((
            "/var/lib/rancher/rke2/server/tls/server-ca.key",
            format!("-----BEGIN RSA PRIVATE KEY-----\n{secret}\n-----END RSA PRIVATE KEY-----\n"),
        )),
        _ => {}
    }
    files.insert(0, ("/etc/rancher/rke2/config.yaml", config));
    (files, commands)
}

/// A cloud-config writing the files in the encoding `encoding` picks and running the commands.
fn cloud_config(files: &[(&str, String)], commands: &[String], encoding: u8) -> String {
    let mut text = String::from("#cloud-config\nwrite_files:\n");
    for (path, content) in files {
        match encoding % 3 {
            0 => {
                text.push_str(&format!("- path: {path}\n  content: |\n"));
                for line in content.lines() {
                    text.push_str(&format!("    {line}\n"));
                }
            }
            1 => text.push_str(&format!(
                "- path: {path}\n  encoding: b64\n  content: {}\n",
                b64::encode(content.as_bytes())
            )),
            _ => text.push_str(&format!(
                "- path: {path}\n  encoding: gz+b64\n  content: {}\n",
                b64::encode(&gzip::deflate(content.as_bytes(), 6))
            )),
        }
    }
    text.push_str("runcmd:\n");
    for c in commands {
        text.push_str(&format!("- {}\n", serde_json::Value::String(c.clone())));
    }
    text
}

/// An Ignition config writing the files and a script of the commands, in the encoding
/// `encoding` picks.
fn ignition_config(files: &[(&str, String)], commands: &[String], encoding: u8) -> String {
    let source = |content: &str| match encoding % 3 {
        0 => format!("data:,{}", dataurl::percent_encode(content.as_bytes())),
        1 => format!("data:;base64,{}", b64::encode(content.as_bytes())),
        _ => format!(
            "data:;base64,{}",
            b64::encode(&gzip::deflate(content.as_bytes(), 6))
        ),
    };
    let compression = if encoding % 3 == 2 { "gzip" } else { "" };
    let mut script = String::from("#!/bin/sh\n");
    for c in commands {
        script.push_str(c);
        script.push('\n');
    }
    let mut entries: Vec<serde_json::Value> = files
        .iter()
        .map(|(path, content)| {
            serde_json::json!({"path": path, "mode": 384,
            "contents": {"source": source(content), "compression": compression}})
        })
        .collect();
    entries.push(
        serde_json::json!({"path": "/etc/rke2-install.sh", "mode": 448,
        "contents": {"source": source(&script), "compression": compression}}),
    );
    serde_json::json!({"ignition": {"version": "3.3.0"}, "storage": {"files": entries},
        "systemd": {"units": [{"name": "rke2-install.service", "enabled": true,
            "contents": "[Service]\nType=oneshot\nExecStart=/etc/rke2-install.sh\n[Install]\nWantedBy=multi-user.target\n"}]}})
    .to_string()
}

/// Asserts that `secret` is nowhere in redact's output `out`: not in its text, nor in the user
/// data it decodes to, nor in a file of that (read by two parsers); and that the user data
/// kept the shape `planted_shape` of the planted one.
fn assert_redacted(out: &[u8], secret: &str, place: &str, planted_shape: &str, fmt: Format) {
    let text = String::from_utf8_lossy(out);
    assert!(
        !text.contains(secret),
        "the secret ({place}) survives in the Secret text"
    );
    let Ok(envelope) = Envelope::parse(out, &options()) else {
        panic!("redact wrote what it cannot read again");
    };
    for s in &envelope.secrets {
        let payload = s
            .decode(&options())
            .expect("redact wrote a payload that decodes");
        let userdata = String::from_utf8_lossy(payload.userdata());
        assert!(
            !userdata.contains(secret),
            "the secret ({place}) survives in the user data"
        );
        if let Ok(document) = crate::document::Document::parse(&payload) {
            for file in document.files() {
                let bytes = String::from_utf8_lossy(file.bytes().unwrap_or_default());
                assert!(
                    !bytes.contains(secret),
                    "the secret ({place}) survives in {}",
                    file.path
                );
                // A YAML file read by another parser: no string of it holds the secret.
                if let Ok(value) = serde_saphyr::from_str::<serde_json::Value>(&bytes) {
                    assert!(
                        !strings(&value).iter().any(|s| s.contains(secret)),
                        "the secret ({place}) survives in a value of {}",
                        file.path
                    );
                }
            }
        }
        // The structure of the user data is unchanged: the same keys and list lengths.
        assert_eq!(
            planted_shape,
            shape(&userdata, fmt),
            "redact changed the structure ({place})"
        );
    }
}

/// Every string of a value, keys included.
fn strings(value: &serde_json::Value) -> Vec<String> {
    match value {
        serde_json::Value::String(s) => vec![s.clone()],
        serde_json::Value::Array(items) => items.iter().flat_map(strings).collect(),
        serde_json::Value::Object(map) => map
            .iter()
            .flat_map(|(k, v)| std::iter::once(k.clone()).chain(strings(v)))
            .collect(),
        _ => Vec::new(),
    }
}

/// The shape of user data: its keys and list lengths, with every scalar left out.
fn shape(userdata: &str, format: Format) -> String {
    fn walk(value: &serde_json::Value, out: &mut String) {
        match value {
            serde_json::Value::Array(items) => {
                out.push_str(&format!("[{}", items.len()));
                items.iter().for_each(|i| walk(i, out));
                out.push(']');
            }
            serde_json::Value::Object(map) => {
                out.push('{');
                for (k, v) in map {
                    out.push_str(k);
                    out.push(':');
                    walk(v, out);
                }
                out.push('}');
            }
            _ => out.push('.'),
        }
    }
    let value = match format {
        Format::CloudConfig => serde_saphyr::from_str::<serde_json::Value>(userdata).ok(),
        Format::Ignition => serde_json::from_str::<serde_json::Value>(userdata).ok(),
    };
    let mut out = String::new();
    if let Some(value) = value {
        walk(&value, &mut out);
    }
    out
}

/// Conversion: whatever a payload is, converting it to the other format either names what cannot
/// be carried over or gives user data that decodes as that format; and once converted there and
/// back, converting again changes nothing (a conversion keeps what it carried).
pub fn convert(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    for declared in [DeclaredFormat::CloudConfig, DeclaredFormat::Ignition] {
        let Ok(payload) = Payload::decode(Cow::Borrowed(text.as_bytes()), declared, &options())
        else {
            continue;
        };
        let to = match payload.format() {
            Format::CloudConfig => Format::Ignition,
            Format::Ignition => Format::CloudConfig,
        };
        let step = |payload: &Payload<'_>, to: Format| -> Option<Vec<u8>> {
            let converted = crate::encode::convert::convert(payload, to).ok()??;
            let back = Payload::decode(
                Cow::Owned(converted.clone()),
                DeclaredFormat::Missing,
                &options(),
            )
            .expect("a conversion decodes");
            assert_eq!(back.format(), to, "a conversion has the target format");
            crate::document::Document::parse(&back).expect("a conversion reads as its format");
            Some(converted)
        };
        let decode = |bytes: &[u8]| {
            Payload::decode(
                Cow::Owned(bytes.to_vec()),
                DeclaredFormat::Missing,
                &options(),
            )
            .expect("a conversion decodes")
        };
        let from = payload.format();
        let Some(there) = step(&payload, to) else {
            continue;
        };
        // There and back, then once more: the second time round nothing changes.
        let Some(back) = step(&decode(&there), from) else {
            continue;
        };
        let there_again = step(&decode(&back), to).expect("what converted back converts again");
        let back_again = step(&decode(&there_again), from).expect("and back again");
        assert_eq!(
            String::from_utf8_lossy(&back_again),
            String::from_utf8_lossy(&back),
            "a second round trip changes the conversion"
        );
    }
}

/// The terminal renderer: no character that can drive a terminal comes out of it, and text
/// without one is unchanged.
pub fn terminal(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let safe = terminal_safe(&text);
    assert!(
        !safe.chars().any(is_unsafe_char),
        "an unsafe character got through"
    );
    if !text.chars().any(is_unsafe_char) {
        assert_eq!(safe, text, "safe text changed");
    }
}

/// `diff`: the input is two inputs (cut at the first `0xFF` byte, else in half). Never panics;
/// each side against itself differs in nothing; the report has no token of either side.
pub fn diff(data: &[u8]) {
    let (a, b) = match memchr::memchr(0xFF, data) {
        Some(i) => (&data[..i], &data[i + 1..]),
        None => data.split_at(data.len() / 2),
    };
    let options = DiffOptions {
        decode: options(),
        ..DiffOptions::default()
    };
    for side in [a, b] {
        if let Ok(report) = crate::reports::diff::diff(side, side, &options) {
            assert!(
                !report.differs(),
                "a side differs from itself: {:?}",
                report
                    .pairs
                    .iter()
                    .flat_map(|p| p.changes.iter().map(|c| (&c.area, &c.item, &c.kind)))
                    .collect::<Vec<_>>()
            );
        }
    }
    let Ok(report) = crate::reports::diff::diff(a, b, &options) else {
        return;
    };
    // What the report shows of values (`item` names a path or key, which the input chose).
    let mut shown = serde_json::to_value(&report).expect("a report serializes");
    if let Some(pairs) = shown["pairs"].as_array_mut() {
        for pair in pairs {
            for change in pair["changes"].as_array_mut().into_iter().flatten() {
                if let Some(change) = change.as_object_mut() {
                    change.remove("item");
                }
            }
        }
    }
    let json = shown.to_string();
    for side in [a, b] {
        let Ok(envelope) = Envelope::parse(side, &options.decode) else {
            continue;
        };
        for secret in &envelope.secrets {
            let Ok(payload) = secret.decode(&options.decode) else {
                continue;
            };
            let facts = Facts::read(&payload);
            if let Some(token) = facts.config.as_ref().and_then(|c| c.token.as_ref())
                // A token of its own shape (a word could be in the report for other reasons).
                && token.expose().len() >= 16
                && token.expose().bytes().all(|b| b.is_ascii_hexdigit())
            {
                assert!(
                    !json.contains(token.expose()),
                    "a token reaches the diff report"
                );
            }
        }
    }
}

/// Every saved fuzz input (`fuzz/regressions/<target>/`) and every fixture runs through the same
/// function its fuzz target calls, so plain `cargo test` guards them without nightly tools.
#[cfg(test)]
mod tests {
    use std::path::{Path, PathBuf};

    use super::TARGETS;

    /// The repository's root; `None` from a packaged crate, which carries neither
    /// `fuzz/regressions/` nor the repository's `testdata/` (the tests then skip, saying so).
    fn root(what: &str) -> Option<PathBuf> {
        crate::testdata::repository(what)
    }

    fn files(dir: &Path) -> Vec<PathBuf> {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return Vec::new();
        };
        let mut out: Vec<PathBuf> = entries
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| p.is_file())
            // `.gitkeep` keeps a folder in git; it is not an input.
            .filter(|p| {
                !p.file_name()
                    .is_some_and(|n| n.to_string_lossy().starts_with('.'))
            })
            .collect();
        out.sort();
        out
    }

    /// The redaction property on every place a secret is planted, in every format, encoding
    /// and compression the target picks (and a few secrets each).
    #[test]
    fn redact_hides_every_planted_secret_in_every_encoding() {
        for place in 0..super::PLACES.len() {
            for encoding in 0..3u8 {
                for format in 0..2u8 {
                    for gzip in 0..2u8 {
                        for seed in [7u8, 91, 200] {
                            let mut data = vec![
                                u8::try_from(place).expect("few places"),
                                encoding,
                                format,
                                gzip,
                            ];
                            data.extend((0..24u8).map(|i| seed.wrapping_mul(i).wrapping_add(i)));
                            assert!(
                                super::redact_planted(&data),
                                "refused: place {}, encoding {encoding}, format {format}, gzip {gzip}",
                                super::PLACES[place]
                            );
                        }
                    }
                }
            }
        }
    }

    /// The free-text property on every grammar, weak and random secrets, tricky characters in
    /// a URL's password, every place and compression: redacted, never refused.
    #[test]
    fn free_text_hides_every_planted_secret_in_every_grammar() {
        for grammar in 0..super::free_text::GRAMMARS.len() {
            // Tricky characters matter in a URL's password only.
            let name = super::free_text::GRAMMARS[grammar].0;
            let trickies = if name == "URL password" { 18 } else { 2 };
            for weak in 0..2u8 {
                for tricky in 0..trickies {
                    for place in 0..8u8 {
                        let mut data = vec![
                            u8::try_from(grammar).expect("few grammars"),
                            weak,
                            tricky,
                            place,
                            place % 2,
                        ];
                        data.extend((0..24u8).map(|i| tricky.wrapping_mul(31).wrapping_add(i)));
                        assert!(
                            super::free_text::planted(&data),
                            "refused: {}, weak {weak}, tricky {tricky}, place {place}",
                            super::free_text::GRAMMARS[grammar].0
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn saved_crashes_and_corpus_files_stay_fixed() {
        let Some(root) = root("the saved fuzz inputs (fuzz/regressions/)") else {
            return;
        };
        let mut empty = Vec::new();
        let mut ran = 0;
        for (name, target) in TARGETS {
            let saved = files(&root.join("fuzz/regressions").join(name));
            if saved.is_empty() {
                empty.push(*name);
            }
            for file in saved {
                let data = std::fs::read(&file).expect("read");
                target(&data);
                ran += 1;
            }
        }
        assert!(
            empty.is_empty(),
            "no saved input for the fuzz targets {empty:?} under fuzz/regressions/"
        );
        eprintln!("{ran} saved fuzz inputs");
    }

    #[test]
    fn every_fixture_through_every_target() {
        let Some(root) = root("the repository's fixtures (testdata/) through the fuzz targets")
        else {
            return;
        };
        let mut inputs = files(&root.join("testdata/secrets"));
        inputs.extend(files(&root.join("testdata/bad")));
        inputs.extend(files(&root.join("testdata/gen/keys")));
        inputs.extend(files(&root.join("testdata/manifests")));
        assert!(inputs.len() > 60);
        for file in &inputs {
            let data = std::fs::read(file).expect("read");
            for (name, target) in TARGETS {
                // The round trip compresses; keep it to the smaller inputs.
                if *name == "roundtrip" && data.len() > 64 << 10 {
                    continue;
                }
                target(&data);
            }
        }
    }
}
