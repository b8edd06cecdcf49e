//! CAPRKE2's `main` branch (after v0.25.0): config.yaml's `ingress-controller` list and the
//! traefik components in `disable`, `dbus.service` in the Ignition install unit, and the
//! `rke.cattle.io/machine-plan` Secrets (Rancher system-agent plans, which its in-place updates
//! write to) listed among the bootstrap Secrets. Each main-branch fixture reads as its v0.25.0
//! counterpart does, plus what main adds.

use crate::common::*;

use serde_json::Value;

const CONTROL_PLANE: &str = "join-cloud-config-main-branch.yaml";
const WORKER: &str = "worker-ignition-main-branch.yaml";
const LISTS: [&str; 2] = ["list-main-branch.yaml", "list-main-branch.json"];

/// The generator's index entry of a file.
fn entry(file: &str) -> Value {
    let text = std::fs::read_to_string(testdata().join("secrets/INDEX.json")).expect("index");
    let all: Vec<Value> = serde_json::from_str(&text).expect("json");
    all.into_iter()
        .find(|e| e["file"] == file)
        .unwrap_or_else(|| panic!("{file} is not in the index"))
}

/// The fixture of CAPRKE2 v0.25.0 that a main-branch fixture restates.
fn counterpart(file: &str) -> String {
    entry(file)["v0_25_counterpart"]
        .as_str()
        .expect("v0_25_counterpart")
        .to_owned()
}

/// Runs a subcommand on a fixture (JSON output); returns the exit code and the document.
fn run_json(subcommand: &str, file: &str) -> (i32, Value) {
    let out = cmd()
        .arg(subcommand)
        .arg(testdata().join("secrets").join(file))
        .args(["--output", "json"])
        .output()
        .expect("run");
    let code = out.status.code().expect("code");
    assert_ne!(
        code,
        2,
        "{subcommand} {file}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    (code, serde_json::from_slice(&out.stdout).expect("json"))
}

fn inspect(file: &str) -> Value {
    let (code, doc) = run_json("inspect", file);
    assert_eq!(code, 0, "{file}");
    doc
}

fn inspect_text(file: &str) -> String {
    let out = cmd()
        .args(["inspect", "--color", "never"])
        .arg(testdata().join("secrets").join(file))
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(0), "{file}");
    String::from_utf8(out.stdout).expect("utf8")
}

/// The ids of a report's findings.
fn finding_ids(report: &Value) -> Vec<&str> {
    report["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .map(|f| f["id"].as_str().expect("id"))
        .collect()
}

/// The value of a text row (`  ingress       ingress-nginx`).
fn row<'t>(text: &'t str, key: &str) -> Option<&'t str> {
    text.lines().find_map(|l| {
        l.trim_start()
            .strip_prefix(key)
            .filter(|rest| rest.starts_with(' '))
            .map(str::trim)
    })
}

#[test]
fn the_ingress_controller_is_a_fact_and_traefik_reads_as_disabled() {
    let want = entry(CONTROL_PLANE);
    let doc = inspect(CONTROL_PLANE);
    let s = &doc["secrets"][0];
    let r = &s["rke2"];
    assert_eq!(s["role"], "server");
    assert_eq!(r["ingress_controller"], want["ingress_controller"]);
    assert_eq!(
        r["ingress_controller"],
        serde_json::json!(["ingress-nginx"])
    );
    // `disable` is reported as every other disabled component list is: a list among the other
    // keys, whatever it names; `ingress-controller` is read, not left among them.
    assert_eq!(r["other"]["disable"], want["disable"]);
    assert_eq!(
        r["other"]["disable"],
        serde_json::json!(["rke2-traefik", "rke2-traefik-crd"])
    );
    assert!(r["other"].get("ingress-controller").is_none(), "{r}");
    assert_eq!(
        r["other"]["kube-apiserver-arg"],
        serde_json::json!(["audit-log-maxage=30"])
    );

    // The v0.25.0 control plane: no ingress controller set (the key is omitted), nginx disabled.
    let old = inspect(&counterpart(CONTROL_PLANE));
    let o = &old["secrets"][0];
    assert!(
        o["rke2"].get("ingress_controller").is_none(),
        "{}",
        o["rke2"]
    );
    assert_eq!(
        o["rke2"]["other"]["disable"],
        serde_json::json!(["rke2-ingress-nginx"])
    );
    // Nothing in the new keys or components is a problem of its own.
    assert_eq!(finding_ids(s), finding_ids(o));
    assert_eq!(s["install"], o["install"]);

    // Text: one `ingress` row, after `network`; none where the key is absent.
    let text = inspect_text(CONTROL_PLANE);
    assert_eq!(row(&text, "ingress"), Some("ingress-nginx"), "{text}");
    let network = text.find("\n  network ").expect("network row");
    assert!(text.find("\n  ingress ").expect("ingress row") > network);
    let old_text = inspect_text(&counterpart(CONTROL_PLANE));
    assert_eq!(row(&old_text, "ingress"), None, "{old_text}");
    assert_eq!(row(&text, "network"), row(&old_text, "network"));
}

#[test]
fn the_main_branch_install_unit_is_read_as_the_v0_25_one() {
    let want = entry(WORKER);
    // The fixture is main's: its install unit waits for D-Bus.
    let userdata: Value = serde_json::from_slice(
        &std::fs::read(
            testdata()
                .join("secrets")
                .join(want["userdata_file"].as_str().unwrap()),
        )
        .expect("userdata"),
    )
    .expect("Ignition JSON");
    let unit = &userdata["systemd"]["units"][0];
    assert_eq!(unit["name"], "rke2-install.service");
    assert_eq!(unit["contents"], want["install_unit"]);
    let contents = unit["contents"].as_str().expect("contents");
    assert!(contents.contains("\nWants=network-online.target dbus.service\n"));
    assert!(contents.contains("\nAfter=network-online.target network.target dbus.service\n"));

    let new = inspect(WORKER);
    let old = inspect(&counterpart(WORKER));
    let (n, o) = (&new["secrets"][0], &old["secrets"][0]);
    assert_eq!(n["role"], "agent");
    assert_eq!(n["role"], o["role"]);
    assert_eq!(n["install"], o["install"]);
    assert!(!n["install"].is_null());
    // The same commands, in order, from the same script.
    assert_eq!(n["commands"], o["commands"]);
    assert_eq!(n["commands"][0]["origin"], "/etc/rke2-install.sh");
    let paths = |s: &Value| -> Vec<Value> {
        s["files"]
            .as_array()
            .expect("files")
            .iter()
            .map(|f| f["path"].clone())
            .collect()
    };
    assert_eq!(paths(n), paths(o));
    assert_eq!(finding_ids(n), finding_ids(o));
    assert!(n["rke2"].get("ingress_controller").is_none());

    // Converted to cloud-config, the unit's script stays the file it is, run by the same
    // runcmd, and inspect reads the same commands through it.
    let runcmd = |file: &str| -> String {
        let out = cmd()
            .args(["encode", "--to", "cloud-config", "--emit", "value"])
            .arg(testdata().join("secrets").join(file))
            .output()
            .expect("run");
        assert_eq!(
            out.status.code(),
            Some(0),
            "{file}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let text = String::from_utf8(out.stdout).expect("utf8");
        text.split_once("\nruncmd:\n")
            .unwrap_or_else(|| panic!("{file}: no runcmd in {text}"))
            .1
            .to_owned()
    };
    let converted = runcmd(WORKER);
    assert!(
        converted.contains("bash /etc/rke2-install.sh"),
        "{converted}"
    );
    assert_eq!(converted, runcmd(&counterpart(WORKER)));
    let commands = |file: &str| -> Vec<Value> {
        let cc = cmd()
            .args(["encode", "--to", "cloud-config"])
            .arg(testdata().join("secrets").join(file))
            .output()
            .expect("run");
        let out = cmd()
            .args(["inspect", "-o", "json", "-"])
            .write_stdin(cc.stdout)
            .output()
            .expect("run");
        let report: Value = serde_json::from_slice(&out.stdout).expect("json");
        let secret = report["secrets"].get(0).cloned().unwrap_or(report);
        secret["commands"]
            .as_array()
            .expect("commands")
            .iter()
            .map(|c| c["line"].clone())
            .collect()
    };
    let lines = commands(WORKER);
    assert!(
        lines
            .iter()
            .any(|l| l == "systemctl enable --now rke2-agent.service"),
        "{lines:?}"
    );
    assert_eq!(lines, commands(&counterpart(WORKER)));
}

#[test]
fn machine_plans_are_skipped_and_counted_never_read() {
    for list in LISTS {
        let want = entry(list);
        let items = want["items"].as_array().expect("items");
        let plans: Vec<&Value> = items
            .iter()
            .filter(|i| i["type"] == "rke.cattle.io/machine-plan")
            .collect();
        assert_eq!(plans.len(), 2, "{list}");
        // One of them carries `value` and `format` keys holding cloud-config.
        assert!(plans.iter().any(|p| p["has_value_key"] == true));
        assert!(plans.iter().all(|p| p["bootstrap"] == false));
        let bootstrap: Vec<&Value> = items.iter().filter(|i| i["bootstrap"] == true).collect();
        assert_eq!(
            bootstrap.len() as u64,
            want["bootstrap_count"].as_u64().unwrap()
        );

        // inspect: the bootstrap Secrets only, the plans counted as skipped, exit 0.
        let doc = inspect(list);
        let names: Vec<&Value> = doc["secrets"]
            .as_array()
            .expect("secrets")
            .iter()
            .map(|s| &s["name"])
            .collect();
        let want_names: Vec<&Value> = bootstrap.iter().map(|i| &i["name"]).collect();
        assert_eq!(names, want_names, "{list}");
        assert_eq!(doc["skipped_secrets"], 2, "{list}");
        assert_eq!(doc["skipped_objects"], 0, "{list}");
        // Each bootstrap Secret reads as its single-file fixture.
        for (secret, item) in doc["secrets"].as_array().unwrap().iter().zip(&bootstrap) {
            let single = inspect(item["fixture"].as_str().expect("fixture"));
            assert_eq!(secret, &single["secrets"][0], "{list}");
        }
        let text = inspect_text(list);
        assert!(
            text.contains("skipped: 2 Secret(s) without bootstrap data, 0 other object(s)"),
            "{text}"
        );
        assert!(!text.contains("machine-plan"), "{list}: {text}");

        // lint: no finding names a plan; the plans are not errors.
        let (code, doc) = run_json("lint", list);
        assert_eq!(code, 0, "{list}: {doc}");
        assert_eq!(doc["summary"]["errors"], 0, "{list}: {doc}");
        assert_eq!(doc["summary"]["warnings"], 0, "{list}: {doc}");
        assert_eq!(doc["secrets"].as_array().map(Vec::len), Some(2), "{list}");
        assert!(!doc.to_string().contains("machine-plan"), "{list}: {doc}");

        // A plan is never picked as a bootstrap Secret, even by its name.
        for plan in &plans {
            let name = format!(
                "{}/{}",
                plan["namespace"].as_str().unwrap(),
                plan["name"].as_str().unwrap()
            );
            let out = cmd()
                .args(["decode", "--name", &name])
                .arg(testdata().join("secrets").join(list))
                .output()
                .expect("run");
            assert_eq!(out.status.code(), Some(2), "{list}: {name}");
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert!(
                stderr.contains(&format!(
                    "no bootstrap Secret named {name} in the input (2 bootstrap Secret(s) read)"
                )),
                "{stderr}"
            );
        }
    }
}

#[test]
fn redact_replaces_every_value_of_a_machine_plan() {
    let list = testdata().join("secrets/list-main-branch.yaml");
    let text = std::fs::read_to_string(&list).expect("list");
    let out = cmd().arg("redact").arg(&list).output().expect("run");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let redacted = String::from_utf8(out.stdout).expect("utf8");
    // Every plan value of the input (the plans carry install instructions) is gone.
    let plan_values: Vec<&str> = text
        .lines()
        .filter_map(|l| {
            let l = l.trim_start();
            ["plan: ", "applied-plan: ", "applied-checksum: "]
                .iter()
                .find_map(|k| l.strip_prefix(k))
        })
        .collect();
    assert_eq!(plan_values.len(), 6);
    for value in plan_values {
        assert!(!redacted.contains(value), "a plan value survived redaction");
    }
    assert_eq!(
        redacted.matches("type: rke.cattle.io/machine-plan").count(),
        2
    );
}

#[test]
fn lint_finds_on_the_main_branch_fixtures_what_it_finds_on_v0_25() {
    for file in [CONTROL_PLANE, WORKER] {
        let (code, doc) = run_json("lint", file);
        let (old_code, old) = run_json("lint", &counterpart(file));
        assert_eq!(code, 0, "{file}: {doc}");
        assert_eq!(code, old_code, "{file}");
        assert_eq!(doc["summary"]["errors"], 0, "{file}: {doc}");
        assert_eq!(doc["summary"]["warnings"], 0, "{file}: {doc}");
        assert_eq!(
            finding_ids(&doc["secrets"][0]),
            finding_ids(&old["secrets"][0]),
            "{file}"
        );
    }
}
