//! `diff` against the generator's own record: for every pair of fixture variants, the
//! differences the diff names are exactly those between the facts the generator wrote into
//! `testdata/secrets/INDEX.json` for the two (format, compression, role, server, tls-san,
//! version, files, certificates, commands, the `format` key). Settings are checked on their own.

use std::collections::BTreeSet;
use std::path::PathBuf;

use rke2_payload::{Area, Change, DiffOptions, Ignore, diff};
use serde_json::Value;

fn testdata() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../testdata")
}

fn fixtures() -> Vec<(Value, Vec<u8>)> {
    let text = std::fs::read_to_string(testdata().join("secrets/INDEX.json")).expect("index");
    let index: Vec<Value> = serde_json::from_str(&text).expect("json");
    index
        .into_iter()
        .filter(|e| e["kind"] == "Secret" && e["container"] == "yaml")
        .map(|e| {
            let bytes = std::fs::read(
                testdata()
                    .join("secrets")
                    .join(e["file"].as_str().expect("file")),
            )
            .expect("fixture");
            (e, bytes)
        })
        .collect()
}

const CONFIG: &str = "/etc/rancher/rke2/config.yaml";

/// What the generator's facts say differs, as (area, item, kind) triples.
fn expected(a: &Value, b: &Value) -> BTreeSet<(String, String, String)> {
    let mut out = BTreeSet::new();
    let mut add = |area: &str, item: &str, kind: &str| {
        out.insert((area.to_owned(), item.to_owned(), kind.to_owned()));
    };
    if a["format"] != b["format"] {
        add("format", "", "changed");
    }
    // What the `format` key says, apart from what the content is.
    if a["declared_format"] != b["declared_format"] {
        add("format-key", "", "changed");
    }
    let compression = |e: &Value| (e["gzip"].as_bool(), e["ignition_wrapper"].as_bool());
    if compression(a) != compression(b) {
        add("compression", "", "changed");
    }
    if a["role"] != b["role"] {
        add("role", "", "changed");
    }
    let kind = |x: &Value, y: &Value| match (x.is_null(), y.is_null()) {
        (true, false) => "added",
        (false, true) => "removed",
        _ => "changed",
    };
    if a["server"] != b["server"] {
        add("server", "", kind(&a["server"], &b["server"]));
    }
    if a["version"] != b["version"] {
        add("version", "", kind(&a["version"], &b["version"]));
    }
    let sans = |e: &Value| -> Vec<String> {
        e["tls_san"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|s| s.as_str().map(str::to_owned))
            .collect()
    };
    let (sa, sb) = (sans(a), sans(b));
    for s in sb.iter().filter(|s| !sa.contains(s)) {
        add("tls-san", s, "added");
    }
    for s in sa.iter().filter(|s| !sb.contains(s)) {
        add("tls-san", s, "removed");
    }
    // Files, by path (config.yaml's content is compared key by key, not as a file).
    let files = |e: &Value| -> Vec<(String, Value, Value, Value)> {
        e["files"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|f| {
                (
                    f["path"].as_str().unwrap_or_default().to_owned(),
                    f["mode"].clone(),
                    f["owner"].clone(),
                    f["sha256"].clone(),
                )
            })
            .collect()
    };
    let (fa, fb) = (files(a), files(b));
    for f in &fb {
        if f.0 != CONFIG && !fa.iter().any(|g| g.0 == f.0) {
            add("file", &f.0, "added");
        }
    }
    for f in &fa {
        match fb.iter().find(|g| g.0 == f.0) {
            None if f.0 != CONFIG => add("file", &f.0, "removed"),
            Some(g) if f.1 != g.1 || f.2 != g.2 || (f.3 != g.3 && f.0 != CONFIG) => {
                add("file", &f.0, "changed")
            }
            _ => {}
        }
    }
    // Certificates, by path and fingerprint.
    let certs = |e: &Value| -> Vec<(String, Value)> {
        e["certificates"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|c| {
                (
                    c["path"].as_str().unwrap_or_default().to_owned(),
                    c["sha256"].clone(),
                )
            })
            .collect()
    };
    let (ca, cb) = (certs(a), certs(b));
    for c in &cb {
        if !ca.iter().any(|d| d.0 == c.0) {
            add("certificate", &c.0, "added");
        }
    }
    for c in &ca {
        match cb.iter().find(|d| d.0 == c.0) {
            None => add("certificate", &c.0, "removed"),
            Some(d) if d.1 != c.1 => add("certificate", &c.0, "changed"),
            _ => {}
        }
    }
    out
}

fn named(changes: &[Change]) -> BTreeSet<(String, String, String)> {
    changes
        .iter()
        .filter(|c| {
            !matches!(
                c.area,
                Area::Command
                    | Area::Config
                    | Area::Install
                    | Area::Size
                    | Area::Token
                    | Area::Setting
            )
        })
        .map(|c| (c.area.to_string(), c.item.clone(), c.kind.to_string()))
        .collect()
}

#[test]
fn every_pair_of_variants_names_what_the_generator_put_between_them() {
    let all = fixtures();
    assert!(all.len() >= 30, "{} fixtures", all.len());
    let options = DiffOptions::default();
    let mut compared = 0;
    for (a, abytes) in &all {
        for (b, bbytes) in &all {
            let report = diff(abytes, bbytes, &options).expect("diff");
            let (sa, sb) = (
                a["file"].as_str().unwrap_or_default(),
                b["file"].as_str().unwrap_or_default(),
            );
            assert_eq!(
                report.pairs.len(),
                1,
                "{sa} vs {sb}: one Secret each, one pair"
            );
            let changes = &report.pairs[0].changes;
            assert_eq!(named(changes), expected(a, b), "{sa} vs {sb}: {changes:#?}");
            // Commands: the generator's lists equal exactly when the diff names none.
            let commands_differ = changes.iter().any(|c| c.area == Area::Command);
            assert_eq!(
                commands_differ,
                a["commands"] != b["commands"],
                "{sa} vs {sb}: {changes:#?}"
            );
            // The same token everywhere: never a token change; sizes change with the value.
            assert!(
                !changes.iter().any(|c| c.area == Area::Token),
                "{sa} vs {sb}"
            );
            let size_changed = changes
                .iter()
                .any(|c| c.area == Area::Size && c.item.is_empty());
            assert_eq!(
                size_changed,
                a["value_bytes"] != b["value_bytes"],
                "{sa} vs {sb}"
            );
            if sa == sb {
                assert!(!report.differs(), "{sa} against itself: {changes:#?}");
            }
            // No secret value reaches the report.
            let json = serde_json::to_string(&report).expect("json");
            let token = a["token"].as_str().expect("token");
            assert!(
                !json.contains(token),
                "{sa} vs {sb}: the token is in the diff"
            );
            compared += 1;
        }
    }
    assert!(compared > 900, "{compared} pairs");
}

#[test]
fn ignores_and_secret_values() {
    let all = fixtures();
    let init = |stem: &str| {
        all.iter()
            .find(|(e, _)| e["file"] == format!("{stem}.yaml"))
            .map(|(_, b)| b.clone())
            .expect("fixture")
    };
    let a = init("init-cloud-config-online");
    // Another token and another CA: the same Secret otherwise.
    let text = String::from_utf8(a.clone()).expect("text");
    let value = text
        .lines()
        .find_map(|l| l.trim().strip_prefix("value: "))
        .expect("value");
    let userdata = {
        use base64::Engine as _;
        String::from_utf8(
            base64::engine::general_purpose::STANDARD
                .decode(value)
                .expect("b64"),
        )
        .expect("utf-8")
    };
    let token = all[0].0["token"].as_str().expect("token");
    let changed = userdata.replace(token, "0123456789abcdef0123456789abcdef");
    let b = {
        use base64::Engine as _;
        text.replace(
            value,
            &base64::engine::general_purpose::STANDARD.encode(changed.as_bytes()),
        )
    };
    let report = diff(&a, b.as_bytes(), &DiffOptions::default()).expect("diff");
    let changes = &report.pairs[0].changes;
    let token_change = changes
        .iter()
        .find(|c| c.area == Area::Token)
        .expect("the token changed");
    assert!(
        token_change
            .before
            .as_deref()
            .is_some_and(|f| f.starts_with("sha256:"))
    );
    let json = serde_json::to_string(&report).expect("json");
    assert!(
        !json.contains(token) && !json.contains("0123456789abcdef0123456789abcdef"),
        "{json}"
    );
    let mut options = DiffOptions::default();
    options.ignore = vec![Ignore::Token];
    let report = diff(&a, b.as_bytes(), &options).expect("diff");
    assert!(!report.differs(), "{:#?}", report.pairs[0].changes);
}

#[test]
fn credentials_in_commands_config_and_files_are_masked() {
    let secret = |bearer: &str, password: &str| {
        format!(
            r##"{{"kind": "Secret", "metadata": {{"name": "w", "namespace": "capi"}}, "stringData": {{"format": "cloud-config", "value": "#cloud-config\nwrite_files:\n- path: /etc/rancher/rke2/config.yaml\n  content: |\n    kube-apiserver-arg:\n      - --oidc-issuer-url=https://u:{password}@idp.example.com\n- path: /etc/app.env\n  content: |\n    DB_PASSWORD={password}\nruncmd:\n- \"curl -H 'Authorization: Bearer {bearer}' https://x\"\n"}}}}"##
        )
    };
    let (a, b) = (
        secret("aaaa1111bbbb2222cccc", "hunter2hunter2"),
        secret("dddd3333eeee4444ffff", "swordfish99"),
    );
    let report = diff(a.as_bytes(), b.as_bytes(), &DiffOptions::default()).expect("diff");
    assert!(report.differs());
    let json = serde_json::to_string(&report).expect("json");
    for secret in [
        "aaaa1111bbbb2222cccc",
        "dddd3333eeee4444ffff",
        "hunter2hunter2",
        "swordfish99",
    ] {
        assert!(!json.contains(secret), "{secret} in {json}");
    }
}

/// A Secret of the given format whose value is `userdata` (as `stringData`).
fn secret_of(format: &str, userdata: &str) -> Vec<u8> {
    serde_json::to_vec(&serde_json::json!({
        "kind": "Secret",
        "metadata": {"name": "w", "namespace": "capi"},
        "stringData": {"format": format, "value": userdata},
    }))
    .expect("json")
}

fn changes_of(a: &[u8], b: &[u8], ignore: &[Ignore]) -> Vec<Change> {
    let mut options = DiffOptions::default();
    options.ignore = ignore.to_vec();
    let report = diff(a, b, &options).expect("diff");
    assert_eq!(report.pairs.len(), 1);
    report.pairs[0].changes.clone()
}

fn triples(changes: &[Change]) -> Vec<(String, String, String)> {
    changes
        .iter()
        .filter(|c| c.area != Area::Size)
        .map(|c| (c.area.to_string(), c.item.clone(), c.kind.to_string()))
        .collect()
}

fn t(area: &str, item: &str, kind: &str) -> (String, String, String) {
    (area.to_owned(), item.to_owned(), kind.to_owned())
}

#[test]
fn every_other_cloud_config_key_is_compared() {
    let before = "#cloud-config\nhostname: a\nntp:\n  servers: [ntp1.example.com]\nusers:\n- name: ops\n  ssh_authorized_keys: [ssh-ed25519 AAAAkey1 ops]\n  hashed_passwd: $6$salt$hashONE\nchpasswd:\n  list: |\n    ops:plainpass1\nwrite_files:\n- path: /etc/a.conf\n  content: x\n  defer: true\nmounts:\n- [/dev/sdb, /data]\n";
    let after = "#cloud-config\nhostname: b\nntp:\n  servers: [ntp2.example.com]\nusers:\n- name: ops\n  ssh_authorized_keys: [ssh-ed25519 AAAAkey2 ops]\n  hashed_passwd: $6$salt$hashTWO\nchpasswd:\n  list: |\n    ops:plainpass2\nwrite_files:\n- path: /etc/a.conf\n  content: x\n  append: true\nmounts:\n- [/dev/sdc, /data]\npackages: [curl]\n";
    let (a, b) = (
        secret_of("cloud-config", before),
        secret_of("cloud-config", after),
    );
    let changes = changes_of(&a, &b, &[]);
    let mut got = triples(&changes);
    got.sort();
    let mut want = vec![
        t("setting", "hostname", "changed"),
        t("setting", "ntp.servers", "changed"),
        t("setting", "users[ops].ssh_authorized_keys", "changed"),
        t("setting", "users[ops].hashed_passwd", "changed"),
        t("setting", "chpasswd.list", "changed"),
        t("setting", "write_files[/etc/a.conf].defer", "removed"),
        t("setting", "write_files[/etc/a.conf].append", "added"),
        t("setting", "mounts", "changed"),
        t("setting", "packages", "added"),
    ];
    want.sort();
    assert_eq!(got, want, "{changes:#?}");
    let ntp = changes
        .iter()
        .find(|c| c.item == "ntp.servers")
        .expect("ntp");
    assert_eq!(ntp.after.as_deref(), Some(r#"["ntp2.example.com"]"#));
    // Password hashes and chpasswd's list by fingerprint only.
    let json = serde_json::to_string(&changes).expect("json");
    for secret in ["hashONE", "hashTWO", "plainpass1", "plainpass2"] {
        assert!(!json.contains(secret), "{secret} in {json}");
    }
    assert!(changes_of(&a, &a, &[]).is_empty());
}

#[test]
fn every_other_ignition_field_is_compared() {
    let config = |unit_type: &str, device: &str, user: Option<&str>| {
        let mut v = serde_json::json!({
            "ignition": {"version": "3.3.0"},
            "storage": {
                "files": [{"path": "/etc/x", "mode": 420, "overwrite": true,
                           "contents": {"source": "data:,x"}}],
                "filesystems": [{"path": "/opt", "device": device, "format": "xfs"}],
            },
            "systemd": {"units": [{"name": "a.service", "enabled": true,
                "contents": format!("[Service]\nType={unit_type}\nExecStart=/bin/true\n")}]},
        });
        if let Some(user) = user {
            v["passwd"] = serde_json::json!({"users": [{"name": user,
                "passwordHash": "$6$x$secrethash", "sshAuthorizedKeys": ["ssh-ed25519 AAAA k"]}]});
        }
        secret_of("ignition", &v.to_string())
    };
    let a = config("oneshot", "/dev/sdb", None);
    let b = config("forking", "/dev/sdc", Some("core"));
    let changes = changes_of(&a, &b, &[]);
    let mut got = triples(&changes);
    got.sort();
    assert_eq!(
        got,
        vec![
            t("setting", "passwd", "added"),
            t("setting", "storage.filesystems[/opt].device", "changed"),
            t("setting", "systemd.units[a.service].contents", "changed"),
        ],
        "{changes:#?}"
    );
    let unit = changes
        .iter()
        .find(|c| c.item == "systemd.units[a.service].contents")
        .expect("unit");
    let detail = unit.detail.as_deref().expect("a unified diff");
    assert!(
        detail.contains("-Type=oneshot") && detail.contains("+Type=forking"),
        "{detail}"
    );
    let user = changes.iter().find(|c| c.item == "passwd").expect("passwd");
    let shown = user.after.as_deref().expect("after");
    assert!(
        shown.contains("core") && shown.contains("ssh-ed25519 AAAA k"),
        "{shown}"
    );
    assert!(!shown.contains("secrethash"), "{shown}");
}

#[test]
fn the_format_key_bundles_commands_and_flags() {
    let cc = "#cloud-config\nruncmd: [a, b, c]\n";
    // The same content declared as Ignition: the key changed, nothing else.
    let changes = changes_of(
        &secret_of("cloud-config", cc),
        &secret_of("ignition", cc),
        &[],
    );
    assert_eq!(triples(&changes), vec![t("format-key", "", "changed")]);
    // A command added and two swapped: one added, one reordered (not removed and added again).
    let changes = changes_of(
        &secret_of("cloud-config", cc),
        &secret_of("cloud-config", "#cloud-config\nruncmd: [a, c, b, d]\n"),
        &[],
    );
    assert_eq!(
        triples(&changes),
        vec![t("command", "", "added"), t("command", "", "reordered")],
        "{changes:#?}"
    );
    // config.yaml values RKE2 reads into the same flag are the same.
    let config = |body: &str| {
        secret_of(
            "cloud-config",
            &format!(
                "#cloud-config\nwrite_files:\n- path: /etc/rancher/rke2/config.yaml\n  content: |\n{}\n",
                body.lines()
                    .map(|l| format!("    {l}"))
                    .collect::<Vec<_>>()
                    .join("\n")
            ),
        )
    };
    let changes = changes_of(
        &config("cni: calico\netcd-snapshot-retention: \"10\"\ntls-san: a,b"),
        &config("cni: [calico]\netcd-snapshot-retention: 10\ntls-san: [a, b]"),
        &[],
    );
    assert!(triples(&changes).is_empty(), "{changes:#?}");
}

#[test]
fn ignores_leave_out_the_churn_only() {
    let join = |token: &str, mode: &str| {
        secret_of(
            "cloud-config",
            &format!(
                "#cloud-config\nwrite_files:\n- path: /etc/rancher/rke2/config.yaml\n  content: |\n    token: {token}\n- path: /opt/join.sh\n  content: |\n    export RKE2_TOKEN={token}\n    echo {token} > /tmp/t\n- path: /var/lib/rancher/rke2/server/tls/server-ca.key\n  permissions: '{mode}'\n  content: x\n"
            ),
        )
    };
    let (a, b) = (
        join("K10aaaaaaaaaaaaaaaaaaaa", "0600"),
        join("K10bbbbbbbbbbbbbbbbbbbb", "0600"),
    );
    // Without the ignore: the token, and the script by a diff in which both sides are masked
    // alike.
    let changes = changes_of(&a, &b, &[]);
    let script = changes
        .iter()
        .find(|c| c.item == "/opt/join.sh")
        .expect("the script changed");
    let json = serde_json::to_string(&changes).expect("json");
    assert!(
        !json.contains("aaaaaaaa") && !json.contains("bbbbbbbb"),
        "{json}"
    );
    let detail = script.detail.as_deref().unwrap_or_default();
    // Both sides masked alike, the texts are the same: it says so.
    assert!(detail.starts_with("only secret values differ"), "{detail}");
    // With it: nothing, the token inside the script too.
    assert!(changes_of(&a, &b, &[Ignore::Token]).is_empty());
    // `--ignore ca` leaves out a CA's content, not its mode.
    let c = join("K10aaaaaaaaaaaaaaaaaaaa", "0644");
    let changes = changes_of(&a, &c, &[Ignore::Ca]);
    assert_eq!(
        triples(&changes),
        vec![t(
            "file",
            "/var/lib/rancher/rke2/server/tls/server-ca.key",
            "changed"
        )],
        "{changes:#?}"
    );
}

#[test]
fn ini_passwords_are_masked() {
    let conf = |pw: &str| {
        secret_of(
            "cloud-config",
            &format!(
                "#cloud-config\nwrite_files:\n- path: /etc/kubernetes/cloud.conf\n  content: |\n    [Global]\n    username = admin\n    password = {pw}\n    region = r1\n"
            ),
        )
    };
    let changes = changes_of(&conf("inipw1secret"), &conf("inipw2secret"), &[]);
    let json = serde_json::to_string(&changes).expect("json");
    assert!(
        !json.contains("inipw1") && !json.contains("inipw2"),
        "{json}"
    );
    // A unified diff whose changed line shows the value by its fingerprint.
    let file = changes
        .iter()
        .find(|c| c.item == "/etc/kubernetes/cloud.conf")
        .expect("the file changed");
    let detail = file.detail.as_deref().expect("a diff");
    assert!(
        detail.contains("-password = sha256:") && detail.contains("+password = sha256:"),
        "{detail}"
    );
}

#[test]
fn private_files_are_compared_by_fingerprint() {
    let file = |mode: &str, body: &str| {
        secret_of(
            "cloud-config",
            &format!(
                "#cloud-config\nwrite_files:\n- path: /etc/app/credential\n  permissions: '{mode}'\n  content: {body}\n"
            ),
        )
    };
    let changes = changes_of(
        &file("0600", "3f9a0c11d2e4"),
        &file("0600", "77b1e0aa9c02"),
        &[],
    );
    let json = serde_json::to_string(&changes).expect("json");
    assert!(json.contains("a private file"), "{json}");
    assert!(
        !json.contains("3f9a0c11d2e4") && !json.contains("77b1e0aa9c02"),
        "{json}"
    );
    // Readable by all: a unified diff.
    let changes = changes_of(&file("0644", "one"), &file("0644", "two"), &[]);
    let detail = changes[0].detail.as_deref().expect("detail");
    assert!(
        detail.contains("-one") && detail.contains("+two"),
        "{detail}"
    );
}

#[test]
fn settings_that_hold_secrets_are_fingerprinted() {
    let ignition = |header: &str, key: &str, pw: &str| {
        secret_of(
            "ignition",
            &serde_json::json!({
                "ignition": {"version": "3.3.0", "config": {"merge": [{"source": "https://x/c.ign",
                    "httpHeaders": [{"name": "Authorization", "value": header}]}]}},
                "storage": {"files": [{"path": "/etc/x", "contents": {"source": "data:,x"}}]},
                "app": {"password": pw, "activation-key": key},
            })
            .to_string(),
        )
    };
    let changes = changes_of(
        &ignition("Bearer OLDs3cr3tTok", "OLDactKey99", "pw-one-1"),
        &ignition("Bearer NEWs3cr3tTok", "NEWactKey99", "pw-two-2"),
        &[],
    );
    assert!(!changes.is_empty());
    let json = serde_json::to_string(&changes).expect("json");
    for secret in ["s3cr3tTok", "actKey99", "pw-one", "pw-two"] {
        assert!(!json.contains(secret), "{secret} in {json}");
    }
    // A secret-named key that is a mapping on one side and text on the other.
    let cc = |v: &str| {
        secret_of(
            "cloud-config",
            &format!("#cloud-config\nmy_app:\n  password: {v}\n"),
        )
    };
    let changes = changes_of(&cc("{file: /etc/pw}"), &cc("hunter2plain"), &[]);
    let json = serde_json::to_string(&changes).expect("json");
    assert!(
        json.contains("my_app.password") && !json.contains("hunter2plain"),
        "{json}"
    );
    // A unit that differs only in the token, under --ignore token.
    let unit = |token: &str| {
        secret_of(
            "ignition",
            &serde_json::json!({
                "ignition": {"version": "3.3.0"},
                "storage": {"files": [{"path": "/etc/rancher/rke2/config.yaml",
                    "contents": {"source": format!("data:,token%3A%20{token}%0A")}}]},
                "systemd": {"units": [{"name": "join.service",
                    "contents": format!("[Service]\nEnvironment=T={token}\n")}]},
            })
            .to_string(),
        )
    };
    let (a, b) = (
        unit("K10aaaaaaaaaaaaaaaaaaaa"),
        unit("K10bbbbbbbbbbbbbbbbbbbb"),
    );
    assert!(triples(&changes_of(&a, &b, &[Ignore::Token])).is_empty());
    assert!(!triples(&changes_of(&a, &b, &[])).is_empty());
}

#[test]
fn a_secret_that_contains_the_other_side_s_is_hidden_whole() {
    let join = |token: &str| {
        secret_of(
            "cloud-config",
            &format!(
                "#cloud-config\nwrite_files:\n- path: /etc/rancher/rke2/config.yaml\n  content: |\n    token: {token}\n- path: /opt/t.sh\n  content: |\n    echo {token}\n"
            ),
        )
    };
    let changes = changes_of(&join("sharedpart"), &join("sharedpartNEWSECRETSUFFIX"), &[]);
    let json = serde_json::to_string(&changes).expect("json");
    assert!(!json.contains("NEWSECRETSUFFIX"), "{json}");
}

/// Repeated entries, as before the lookups by path and by line: a path's last entry is what
/// the node gets (compared with the other side's last), each entry of a path only one side
/// has is one change, and commands are multisets whose common lines are then compared in order.
#[test]
fn repeated_files_and_commands() {
    let before = "#cloud-config\nwrite_files:\n- path: /etc/a\n  content: old\n- path: /etc/gone\n  content: x\n- path: /etc/a\n  content: same\n- path: /etc/gone\n  content: y\n- path: /etc/b\n  content: one\nruncmd:\n- echo x\n- echo x\n- echo y\n- echo w\n";
    let after = "#cloud-config\nwrite_files:\n- path: /etc/b\n  content: two\n- path: /etc/new\n  content: z\n- path: /etc/a\n  content: same\n- path: /etc/b\n  content: one\nruncmd:\n- echo w\n- echo x\n- echo z\n- echo y\n";
    let (a, b) = (
        secret_of("cloud-config", before),
        secret_of("cloud-config", after),
    );
    let changes = changes_of(&a, &b, &[]);
    let got: Vec<_> = triples(&changes)
        .into_iter()
        .filter(|(area, ..)| area == "file" || area == "command")
        .collect();
    assert_eq!(
        got,
        [
            t("file", "/etc/new", "added"),
            t("file", "/etc/gone", "removed"),
            t("file", "/etc/gone", "removed"),
            t("command", "", "removed"),
            t("command", "", "added"),
            t("command", "", "reordered"),
        ],
        "{changes:#?}"
    );
    let commands: Vec<_> = changes
        .iter()
        .filter(|c| c.area == Area::Command)
        .map(|c| (c.before.as_deref(), c.after.as_deref()))
        .collect();
    assert_eq!(
        &commands[..2],
        [(Some("echo x"), None), (None, Some("echo z"))]
    );
    let order = changes
        .iter()
        .find(|c| c.area == Area::Command && c.before.is_none() && c.after.is_none())
        .and_then(|c| c.detail.as_deref());
    assert_eq!(
        order,
        Some("before:\necho x\necho y\necho w\nafter:\necho w\necho x\necho y")
    );
}

/// Secrets are paired by namespace and name in input order, also when a name repeats: the
/// first of the other side not yet taken.
#[test]
fn repeated_names_pair_in_order() {
    let doc = |name: &str, command: &str| {
        format!(
            "kind: Secret\nmetadata: {{name: {name}, namespace: capi}}\nstringData:\n  format: cloud-config\n  value: \"#cloud-config\\nruncmd: [{command}]\\n\"\n"
        )
    };
    let before = [doc("w", "one"), doc("v", "v"), doc("w", "two")].join("---\n");
    let after = [doc("w", "one"), doc("w", "two"), doc("v", "v")].join("---\n");
    let report = diff(before.as_bytes(), after.as_bytes(), &DiffOptions::default()).expect("diff");
    assert_eq!(report.pairs.len(), 3);
    assert!(!report.differs(), "{:#?}", report.pairs);
    let swapped = [doc("w", "two"), doc("v", "v"), doc("w", "one")].join("---\n");
    let report = diff(
        before.as_bytes(),
        swapped.as_bytes(),
        &DiffOptions::default(),
    )
    .expect("diff");
    assert_eq!(
        report
            .pairs
            .iter()
            .filter(|p| !p.changes.is_empty())
            .count(),
        2
    );
}
