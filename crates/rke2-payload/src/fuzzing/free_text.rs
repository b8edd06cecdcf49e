//! The free-text property: a secret planted in any position of any grammar of free text that
//! the masking reads (shell words, argv, `KEY=value`, INI, `.netrc`, `.pgpass`, XML, URLs,
//! comments, JWTs) is gone from every decoded layer of `redact`'s output and from the reports,
//! or `redact` refused.

use crate::codec::b64;
use crate::envelope::Envelope;
use crate::facts::Facts;
use crate::payload::Format;
use crate::reports::inspect::{InspectOptions, payload_report};
use crate::reports::lint::{LintOptions, lint_payload};

use super::{assert_redacted, cloud_config, ignition_config, options, planted_secret, shape};

/// The grammars: (name, whether any word there is secret whatever it looks like, the text
/// with `{}` where the secret goes).
pub(super) const GRAMMARS: &[(&str, bool, &str)] = &[
    (
        "curl -u",
        true,
        "curl -fsS -u admin:{} https://api.example.com/v1",
    ),
    (
        "curl --user=",
        true,
        "curl --user=admin:{} https://api.example.com",
    ),
    (
        "htpasswd -b",
        true,
        "htpasswd -b /etc/nginx/.htpasswd admin {}",
    ),
    ("htpasswd -bn", true, "htpasswd -bnB admin '{}' > /etc/x"),
    ("vault login", true, "vault login -no-print {}"),
    (
        "openssl pass:",
        true,
        "openssl enc -d -aes-256-cbc -pass pass:{} -in a -out b",
    ),
    ("unzip -P", true, "unzip -o -P {} /tmp/a.zip -d /opt"),
    ("7z -p", true, "7z x -p{} /tmp/a.7z"),
    ("redis-cli -a", true, "redis-cli -h cache -a {} ping"),
    (
        "docker login -p",
        true,
        "docker login -u bot -p {} registry.example.com",
    ),
    (
        "echo | --password-stdin",
        true,
        "echo '{}' | nerdctl login -u bot --password-stdin r.io",
    ),
    ("echo | chpasswd", true, "echo \"ops:{}\" | chpasswd"),
    (
        "sh -c mysql",
        true,
        "sh -c 'mysql -uroot -p{} -e \"select 1\"'",
    ),
    (
        "mount -o",
        true,
        "mount -t cifs //srv/s /mnt -o username=u,password={},vers=3.0",
    ),
    (
        "--from-literal",
        true,
        "kubectl create secret generic x --from-literal=key={}",
    ),
    ("--token", true, "rke2 agent --token {} --debug"),
    ("KEY_PASSWORD=", true, "export APP_PASSWORD={}"),
    (
        ".netrc",
        true,
        "machine git.example.com login bot password {}",
    ),
    (".pgpass", true, "db.example.com:5432:app:app:{}"),
    (
        "XML",
        true,
        "<server><id>r</id><password>{}</password></server>",
    ),
    ("INI", true, "db_password = {}"),
    (
        "URL password",
        true,
        "git clone https://bot:{}@git.example.com/r.git",
    ),
    (
        "URL query",
        true,
        "curl 'https://x.example.com/api?page=2&access_token={}'",
    ),
    (
        "URL path",
        false,
        "curl -X POST https://hooks.example.com/services/{}",
    ),
    ("URL user", false, "git clone https://{}@github.com/o/r.git"),
    ("bare word", false, "echo {} > /etc/app/id"),
    ("KEY=", false, "APP_ID_VALUE={}"),
    ("comment", false, "# the old one was {}"),
    (
        "JWT",
        false,
        "curl -H 'X-Auth: eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0.{}' https://x",
    ),
    ("argv", true, "[curl, -u, \"admin:{}\", https://x]"),
];

/// Characters a password may hold that a naive parser reads as structure.
const TRICKY: &[u8] = b"#?@:/%!&;";

/// The property; `false` when the input builds no case or `redact` refused.
pub(super) fn planted(data: &[u8]) -> bool {
    let [grammar, weak, tricky, place, gzip_value, rest @ ..] = data else {
        return false;
    };
    let (name, positional, text) = GRAMMARS[usize::from(*grammar) % GRAMMARS.len()];
    // A random-looking secret: letters and digits mixed (the input's letters alone may spell
    // a word, which is public where no place makes it secret).
    let Some(random) = planted_secret(rest).map(|s| format!("{s}7Qx3")) else {
        return false;
    };
    // Where a word is secret by its place, it may look like anything: a lower-case word.
    let secret = if positional && weak % 2 == 1 {
        let word: String = rest
            .iter()
            .take(12)
            .map(|b| char::from(b'a' + b % 26))
            .collect();
        format!("pw{word}")
    } else if name.starts_with("URL password") && tricky % 2 == 1 {
        let c = char::from(TRICKY[usize::from(*tricky / 2) % TRICKY.len()]);
        let mid = random.len() / 2;
        format!("{}{c}{}", &random[..mid], &random[mid..])
    } else {
        random
    };
    let line = text.replace("{}", &secret);
    // The argv form is a cloud-config `runcmd` item; every other line goes anywhere.
    let place = if line.starts_with('[') { 0 } else { *place };
    let (files, commands, fmt) = match place % 4 {
        0 => (vec![], vec![line.clone()], Format::CloudConfig),
        1 => (
            vec![("/opt/setup.sh", format!("#!/bin/sh\nset -e\n{line}\n"))],
            vec![],
            Format::CloudConfig,
        ),
        2 => (
            vec![("/etc/app/app.conf", format!("{line}\n"))],
            vec![],
            Format::Ignition,
        ),
        _ => (vec![], vec![line.clone()], Format::Ignition),
    };
    let mut all_files = vec![(
        "/etc/rancher/rke2/config.yaml",
        "server: https://cp.example:9345\ntoken: plainToken1234\n".to_owned(),
    )];
    all_files.extend(files);
    let userdata = match fmt {
        Format::CloudConfig => {
            let mut text = cloud_config(&all_files, &[], place / 4);
            if line.starts_with('[') || !commands.is_empty() {
                // A runcmd item as written (argv form stays a YAML list).
                text.push_str(&format!("- {line}\n"));
            }
            text
        }
        Format::Ignition => ignition_config(&all_files, &commands, place / 4),
    };
    let value = crate::encode::compress(userdata.as_bytes(), fmt, gzip_value % 2 == 1);
    let input = serde_json::json!({"apiVersion": "v1", "kind": "Secret",
        "metadata": {"name": "fuzz", "namespace": "d"},
        "data": {"format": b64::encode(fmt.as_str().as_bytes()), "value": b64::encode(&value)}})
    .to_string();
    reports_hide(input.as_bytes(), &secret, name);
    let Ok(out) = crate::redact::redact(
        input.as_bytes(),
        &crate::redact::RedactOptions::new().with_decode(options()),
    ) else {
        return false;
    };
    assert_redacted(&out, &secret, name, &shape(&userdata, fmt), fmt);
    true
}

/// The reports (inspect's JSON, lint's messages) show no part of the secret.
fn reports_hide(input: &[u8], secret: &str, grammar: &str) {
    let options = options();
    let Ok(envelope) = Envelope::parse(input, &options) else {
        return;
    };
    for s in &envelope.secrets {
        let Ok(payload) = s.decode(&options) else {
            continue;
        };
        let facts = Facts::read(&payload);
        for f in lint_payload(&facts, &payload, None, &LintOptions::default()) {
            assert!(
                !f.message.contains(secret),
                "lint shows the secret ({grammar})"
            );
        }
        let report = payload_report(
            s,
            &payload,
            facts,
            &InspectOptions::new().with_decode(options.clone()),
        );
        let json = serde_json::to_string(&report).unwrap_or_default();
        assert!(
            !json.contains(secret),
            "inspect shows the secret ({grammar})"
        );
    }
}
