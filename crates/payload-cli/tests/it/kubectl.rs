//! kubectl's habits on every subcommand: `-o FORMAT`, `-n`, `--name NS/NAME`, `-l`, `--cluster-name`,
//! `-f`, `-A`, `--to-file`; a broken Secret in a List is an item of its own and exit 2; BOM and
//! YAML flow style read everywhere.

use serde_json::Value;

use crate::common::*;

/// The subcommands that read Secrets.
const READERS: [&str; 6] = ["decode", "inspect", "size", "lint", "encode", "redact"];

fn list() -> String {
    testdata()
        .join("secrets/list-all.yaml")
        .display()
        .to_string()
}

fn run(args: &[&str], stdin: Option<&[u8]>) -> std::process::Output {
    let mut c = cmd();
    c.args(args);
    if let Some(input) = stdin {
        c.write_stdin(input.to_vec());
    }
    c.output().expect("run")
}

fn json(args: &[&str]) -> Value {
    let out = run(args, None);
    assert!(
        out.status.code().is_some_and(|c| c < 2),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("JSON")
}

#[test]
fn every_reader_shows_the_same_selection_flags_with_the_same_meaning() {
    for sub in READERS {
        let out = run(&[sub, "--help"], None);
        let help = String::from_utf8_lossy(&out.stdout);
        for flag in [
            "-n, --namespace <NAMESPACE>",
            "--name <NAME>",
            "-l, --selector <SELECTOR>",
            "--cluster-name <NAME>",
            "-f, --filename <FILE>",
            "-A, --all-namespaces",
        ] {
            assert!(help.contains(flag), "{sub} --help lacks {flag}:\n{help}");
        }
        if sub != "redact" {
            assert!(help.contains("-o, --output <FORMAT>"), "{sub}: -o");
        }
        if matches!(sub, "decode" | "encode" | "redact") {
            assert!(help.contains("--to-file <FILE>"), "{sub}: --to-file");
        }
    }
    for sub in ["inspect", "size", "lint", "clouds"] {
        let out = run(&[sub, "-o", "nonsense"], None);
        assert_eq!(out.status.code(), Some(2), "{sub}");
        assert!(String::from_utf8_lossy(&out.stderr).contains("possible values"));
    }
}

#[test]
fn namespace_name_labels_and_cluster_pick_secrets_everywhere() {
    let file = list();
    let all = secret_names(&json(&["inspect", &file, "-o", "json"]));
    assert!(all.len() > 3, "{all:?}");
    let first = all[0].clone();
    let (ns, name) = first.split_once('/').expect("ns/name");
    // The same picks, spelled three ways.
    for args in [
        vec!["-n", ns, "--name", name],
        vec!["--name", first.as_str()],
        vec!["-f", file.as_str(), "-n", ns, "--name", name],
    ] {
        let mut full = vec!["inspect", "-o", "json"];
        if !args.contains(&"-f") {
            full.push(&file);
        }
        full.extend(args.iter().copied());
        assert_eq!(
            secret_names(&json(&full)),
            std::slice::from_ref(&first),
            "{full:?}"
        );
        for sub in ["size", "lint"] {
            let mut full = vec![sub, "-o", "json", file.as_str()];
            full.extend(args.iter().copied().filter(|a| *a != "-f" && *a != file));
            assert_eq!(
                secret_names(&json(&full)),
                std::slice::from_ref(&first),
                "{full:?}"
            );
        }
    }
    // Every Secret of the fixtures carries the cluster label `demo`.
    let demo = secret_names(&json(&[
        "size",
        &file,
        "-o",
        "json",
        "--cluster-name",
        "demo",
    ]));
    assert_eq!(demo, all);
    let labelled = secret_names(&json(&[
        "lint",
        &file,
        "-o",
        "json",
        "-l",
        "cluster.x-k8s.io/cluster-name in (demo, other),!no-such-label",
    ]));
    assert_eq!(labelled, all);
    assert_eq!(
        secret_names(&json(&["inspect", &file, "-o", "json", "-A"])),
        all,
        "-A is every namespace"
    );
    // A selector that picks nothing is exit 2 with one sentence.
    for sub in READERS {
        for pick in [
            &["-n", "nowhere"][..],
            &["--cluster-name", "other"],
            &["-l", "tier=cp"],
        ] {
            let mut args = vec![sub, file.as_str()];
            args.extend(pick);
            let out = run(&args, None);
            assert_eq!(out.status.code(), Some(2), "{args:?}");
            assert!(out.stdout.is_empty(), "{args:?}");
            let err = String::from_utf8_lossy(&out.stderr);
            assert!(err.contains("no bootstrap Secret"), "{args:?}: {err}");
        }
    }
    // A bad selector is a usage error that says where.
    let out = run(&["inspect", &file, "-l", "tier in (cp"], None);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("label selector"));
    // -n is the namespace now: the old `-n NAME` finds no namespace of that name.
    let out = run(&["decode", &file, "-n", name], None);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn decode_encode_and_redact_pick_one_and_write_it_where_asked() {
    let file = list();
    let all = secret_names(&json(&["inspect", &file, "-o", "json"]));
    let (ns, name) = all[1].split_once('/').expect("ns/name");
    let userdata = run(&["decode", &file, "-n", ns, "--name", name], None);
    assert!(userdata.status.success());
    let raw = run(&["decode", &file, "--name", &all[1], "-o", "raw"], None);
    assert!(raw.status.success());
    let encoded = run(
        &[
            "encode",
            &file,
            "-n",
            ns,
            "--name",
            name,
            "--no-gzip",
            "-o",
            "json",
        ],
        None,
    );
    assert!(encoded.status.success());
    let secret: Value = serde_json::from_slice(&encoded.stdout).expect("a JSON Secret");
    assert_eq!(secret["metadata"]["name"], name);
    // redact with a selector writes only what it picks, redacted (the first control plane:
    // token, CA keys).
    let (ns, name) = all[0].split_once('/').expect("ns/name");
    let redacted = run(&["redact", &file, "-n", ns, "--name", name], None);
    assert!(
        redacted.status.success(),
        "{}",
        String::from_utf8_lossy(&redacted.stderr)
    );
    let text = String::from_utf8_lossy(&redacted.stdout);
    assert!(text.contains(&format!("name: {name}")), "{text}");
    assert_eq!(text.matches("kind: Secret").count(), 1, "{text}");
    let token = |input: Option<&[u8]>| {
        let out = match input {
            Some(bytes) => run(
                &["inspect", "-", "-o", "json", "--show-secrets"],
                Some(bytes),
            ),
            None => run(
                &[
                    "inspect",
                    &file,
                    "--name",
                    &all[0],
                    "-o",
                    "json",
                    "--show-secrets",
                ],
                None,
            ),
        };
        let doc: Value = serde_json::from_slice(&out.stdout).expect("JSON");
        doc["secrets"][0]["rke2"]["token"]
            .as_str()
            .map(str::to_owned)
    };
    let before = token(None).expect("the first control plane has a token");
    assert_eq!(token(Some(&redacted.stdout)).as_deref(), Some("REDACTED"));
    assert!(!text.contains(&before));
    let cluster = run(&["redact", &file, "--cluster-name", "demo"], None);
    assert!(cluster.status.success());
    assert_eq!(
        String::from_utf8_lossy(&cluster.stdout)
            .matches("kind: Secret")
            .count(),
        all.len(),
        "the bootstrap Secrets of the cluster"
    );
}

/// A List of three Secrets whose middle one cannot be read (`how` breaks it).
fn broken_list(json: bool, how: &str) -> Vec<u8> {
    let text = std::fs::read_to_string(testdata().join("secrets/list-all.json")).expect("list");
    let mut doc: Value = serde_json::from_str(&text).expect("JSON");
    let items = doc["items"].as_array_mut().expect("items");
    let mut bootstrap: Vec<Value> = items
        .iter()
        .filter(|i| i["data"].get("value").is_some() && i["data"].get("format").is_some())
        .take(3)
        .cloned()
        .collect();
    bootstrap[1]["metadata"]["name"] = "broken".into();
    match how {
        "base64" => bootstrap[1]["data"]["value"] = "!!! not base64".into(),
        "gzip" => bootstrap[1]["data"]["value"] = b64([0x1f, 0x8b, 8, 0, 1, 2, 3]).into(),
        _ => bootstrap[1]["data"] = 5.into(),
    }
    *items = bootstrap;
    if json {
        serde_json::to_vec_pretty(&doc).expect("JSON")
    } else {
        // kubectl's YAML shape: a List with an items block sequence.
        let yaml = serde_saphyr::to_string(&doc).expect("YAML");
        yaml.into_bytes()
    }
}

#[test]
fn a_broken_secret_in_the_middle_is_reported_and_the_rest_go_on() {
    for (json_input, how) in [
        (true, "base64"),
        (false, "gzip"),
        (true, "shape"),
        (false, "shape"),
    ] {
        let input = broken_list(json_input, how);
        let case = format!("{} {how}", if json_input { "JSON" } else { "YAML" });
        for (sub, format) in [
            ("inspect", "text"),
            ("inspect", "json"),
            ("inspect", "yaml"),
            ("size", "text"),
            ("size", "json"),
            ("size", "yaml"),
            ("size", "junit"),
            ("lint", "text"),
            ("lint", "json"),
            ("lint", "yaml"),
            ("lint", "sarif"),
            ("lint", "github"),
            ("lint", "gitlab"),
            ("lint", "junit"),
        ] {
            // SARIF locates every result in a file: standard input is named.
            let mut args = vec![sub, "-", "-o", format];
            if format == "sarif" {
                args.extend(["--stdin-filename", "list.yaml"]);
            }
            let out = run(&args, Some(&input));
            let stdout = String::from_utf8_lossy(&out.stdout);
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert_eq!(
                out.status.code(),
                Some(2),
                "{case} {sub} {format}: {stderr}"
            );
            assert_eq!(stderr.trim_end().lines().count(), 1, "{stderr}");
            assert!(stderr.contains("broken"), "{case} {sub} {format}: {stderr}");
            assert!(stdout.contains("broken"), "{case} {sub} {format}: the item");
            // The two good Secrets are there, after the broken one too.
            let good = stdout.matches("demo-").count();
            assert!(good >= 2, "{case} {sub} {format}: {stdout}");
            match format {
                "json" | "sarif" | "gitlab" => {
                    let doc: Value = serde_json::from_slice(&out.stdout).expect("JSON");
                    if sub != "lint" || format == "json" {
                        let items = doc["secrets"].as_array().expect("secrets");
                        assert_eq!(items.len(), 3, "{case} {sub}");
                        assert!(items[1]["error"]["message"].is_string(), "{case} {sub}");
                    }
                }
                "yaml" => {
                    let doc: Value = serde_saphyr::from_str(&stdout).expect("YAML");
                    assert_eq!(doc["secrets"].as_array().map(Vec::len), Some(3));
                    assert!(doc["secrets"][1]["error"]["message"].is_string());
                }
                "junit" => assert!(stdout.contains("<error "), "{stdout}"),
                _ => {}
            }
        }
    }
}

#[test]
fn yaml_output_is_the_json_output() {
    let file = list();
    for sub in ["inspect", "size", "lint"] {
        let from_json = json(&[sub, &file, "-o", "json"]);
        let out = run(&[sub, &file, "-o", "yaml"], None);
        let from_yaml: Value =
            serde_saphyr::from_str(&String::from_utf8_lossy(&out.stdout)).expect("YAML");
        assert_eq!(from_yaml, from_json, "{sub}");
    }
    let clouds: Value = serde_saphyr::from_str(&String::from_utf8_lossy(
        &run(&["clouds", "-o", "yaml"], None).stdout,
    ))
    .expect("YAML");
    assert_eq!(clouds, json(&["clouds", "-o", "json"]));
}

#[test]
fn byte_order_marks_and_flow_style_read_everywhere() {
    let list = std::fs::read(testdata().join("secrets/list-all.json")).expect("list");
    let mut bom = "\u{feff}".as_bytes().to_vec();
    bom.extend_from_slice(&list);
    let plain = json(&[
        "inspect",
        "-o",
        "json",
        &testdata()
            .join("secrets/list-all.json")
            .display()
            .to_string(),
    ]);
    let out = run(&["inspect", "-", "-o", "json"], Some(&bom));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        serde_json::from_slice::<Value>(&out.stdout).expect("JSON"),
        plain
    );
    let one = std::fs::read_to_string(testdata().join("secrets/join-cloud-config-online.yaml"))
        .expect("fixture");
    let value: Value = serde_saphyr::from_str(&one).expect("YAML");
    // `{apiVersion: v1, data: {…}, …}`: YAML flow style, not JSON.
    let flow = format!("{}\n", flow_yaml(&value));
    assert!(flow.starts_with("{apiVersion: "), "{}", &flow[..40]);
    for sub in READERS {
        for input in [&bom, flow.as_bytes()] {
            let name_args: &[&str] = if *input == bom {
                &["--name", "demo-control-plane-4fplp"]
            } else {
                &[]
            };
            let mut args = vec![sub, "-"];
            args.extend(name_args);
            let out = run(&args, Some(input));
            assert!(
                out.status.code().is_some_and(|c| c < 2),
                "{sub}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
    }
}

/// A JSON value in YAML flow style, keys unquoted.
fn flow_yaml(value: &Value) -> String {
    match value {
        Value::Object(map) => {
            let parts: Vec<String> = map
                .iter()
                .map(|(k, v)| format!("{k}: {}", flow_yaml(v)))
                .collect();
            format!("{{{}}}", parts.join(", "))
        }
        Value::Array(items) => {
            let parts: Vec<String> = items.iter().map(flow_yaml).collect();
            format!("[{}]", parts.join(", "))
        }
        Value::String(s) => serde_json::to_string(s).expect("string"),
        other => other.to_string(),
    }
}
