//! `rke2-payload lint`: each check fires on a payload that has the fault and stays quiet on one
//! that does not; CAPRKE2's clean payloads lint clean.

use crate::common::*;

use serde_json::Value;

fn userdata(name: &str) -> String {
    std::fs::read_to_string(testdata().join("secrets").join(name)).expect(name)
}

const WORKER: &str = "worker-cloud-config-online.userdata";
const JOIN: &str = "join-cloud-config-online.userdata";
const INIT: &str = "init-cloud-config-online.userdata";

/// A bootstrap Secret holding `text` in `stringData`.
fn secret(name: &str, format: &str, text: &str) -> String {
    let body: String = text.lines().map(|l| format!("    {l}\n")).collect();
    format!(
        "apiVersion: v1\nkind: Secret\ntype: cluster.x-k8s.io/secret\nmetadata:\n  name: {name}\n  namespace: default\n  labels:\n    cluster.x-k8s.io/cluster-name: demo\nstringData:\n  format: {format}\n  value: |\n{body}"
    )
}

/// Runs lint on YAML input; returns (exit code, JSON document).
fn lint(input: &str, args: &[&str]) -> (i32, Value) {
    let out = cmd()
        .args(["lint", "-", "--output", "json"])
        .args(args)
        .write_stdin(input.to_owned())
        .output()
        .expect("run");
    let code = out.status.code().expect("code");
    assert!(
        code != 2,
        "lint failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    (code, serde_json::from_slice(&out.stdout).expect("json"))
}

fn ids(doc: &Value, secret: usize) -> Vec<String> {
    doc["secrets"][secret]["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .map(|f| f["id"].as_str().expect("id").to_owned())
        .collect()
}

/// Asserts `id` fires on `bad` and not on `good` (single-Secret inputs).
/// `Ok` when check `id` fires on `bad` and not on `good`; else what it did.
fn fires(id: &str, bad: &str, good: &str) -> Result<(), String> {
    let (_, doc) = lint(bad, &[]);
    if !ids(&doc, 0).iter().any(|i| i == id) {
        return Err(format!("{id} did not fire: {:?}", ids(&doc, 0)));
    }
    let (_, doc) = lint(good, &[]);
    if ids(&doc, 0).iter().any(|i| i == id) {
        return Err(format!("{id} fired on the good payload"));
    }
    Ok(())
}

#[test]
fn clean_caprke2_payloads_lint_clean() {
    let index: Vec<Value> = serde_json::from_str(&userdata("INDEX.json")).expect("index");
    for entry in index.iter().filter(|e| e["kind"] == "Secret") {
        let file = entry["file"].as_str().expect("file");
        // The planted upstream faults, each with its own test below.
        if file.contains("checksum") || file.contains("empty-format") || file.contains("extras") {
            continue;
        }
        // CAPRKE2's unit test writes `list: [data]` as arbitrary data: a top-level key current
        // cloud-init's schema does not have (22.4's allowed any).
        if file.contains("arbitrary-data") {
            let out = cmd()
                .args(["lint", "--output", "json"])
                .arg(testdata().join("secrets").join(file))
                .output()
                .expect("run");
            let doc: Value = serde_json::from_slice(&out.stdout).expect("json");
            let findings = doc["secrets"][0]["findings"].to_string();
            assert_eq!(doc["summary"]["warnings"], 1, "{doc}");
            assert!(
                findings.contains("schema (bundled) rejects /: Additional properties are not allowed ('list' was unexpected)"),
                "{findings}"
            );
            continue;
        }
        let out = cmd()
            .args(["lint", "--output", "json"])
            .arg(testdata().join("secrets").join(file))
            .output()
            .expect("run");
        assert_eq!(out.status.code(), Some(0), "{file}");
        let doc: Value = serde_json::from_slice(&out.stdout).expect("json");
        assert_eq!(doc["summary"]["errors"], 0, "{file}: {doc}");
        assert_eq!(doc["summary"]["warnings"], 0, "{file}: {doc}");
    }
    // The whole cluster together: the cross-Secret checks agree too (the only errors are the
    // invalid YAML CAPRKE2 writes with airGappedChecksum).
    let out = cmd()
        .args(["lint", "--output", "json"])
        .arg(testdata().join("secrets/list-all.json"))
        .output()
        .expect("run");
    let doc: Value = serde_json::from_slice(&out.stdout).expect("json");
    let invalid = fixtures()
        .iter()
        .filter(|e| e["yaml_valid"] == false && e["container"] == "yaml")
        .count();
    assert!(invalid >= 1);
    assert_eq!(doc["summary"]["errors"], invalid, "{doc}");
    assert_eq!(out.status.code(), Some(1));
}

#[test]
fn format_checks() {
    let worker = userdata(WORKER);
    assert_eq!(
        Ok(()),
        fires(
            "format-mismatch",
            &secret("w", "ignition", &worker),
            &secret("w", "cloud-config", &worker),
        )
    );
    assert_eq!(
        Ok(()),
        fires(
            "format-empty",
            &secret("w", "\"\"", &worker),
            &secret("w", "cloud-config", &worker),
        )
    );
}

#[test]
fn yaml_and_schema_checks() {
    let worker = userdata(WORKER);
    let checksum = worker.replace(
        "runcmd:\n",
        "runcmd:\n  - [[ $(sha256sum /opt/rke2-artifacts/sha256sum*.txt | awk '{print $1}') == abcd ]] || exit 1\n",
    );
    let (code, doc) = lint(&secret("w", "cloud-config", &checksum), &[]);
    assert_eq!(code, 1);
    let f = doc["secrets"][0]["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .find(|f| f["id"] == "cloud-config-invalid-yaml")
        .expect("finding")
        .clone();
    assert!(
        f["line"].as_u64().is_some() && f["column"].as_u64().is_some(),
        "{f}"
    );
    let no_path = worker.replace("write_files:\n", "write_files:\n-   content: orphan\n");
    assert_eq!(
        Ok(()),
        fires(
            "cloud-config-schema",
            &secret("w", "cloud-config", &no_path),
            &secret("w", "cloud-config", &worker),
        )
    );
}

#[test]
fn ignition_checks() {
    let ign = userdata("worker-ignition-online.userdata");
    let doc: Value = serde_json::from_str(&ign).expect("ignition");
    let mut dup = doc.clone();
    let files = dup["storage"]["files"].as_array_mut().expect("files");
    let first = files[1].clone();
    files.push(first);
    assert_eq!(
        Ok(()),
        fires(
            "ignition-invalid",
            &secret("w", "ignition", &dup.to_string()),
            &secret("w", "ignition", &ign),
        )
    );
}

#[test]
fn server_checks() {
    let worker = userdata(WORKER);
    let join = userdata(JOIN);
    let init = userdata(INIT);
    assert_eq!(
        Ok(()),
        fires(
            "server-port",
            &secret("w", "cloud-config", &worker.replace(":9345", ":6443")),
            &secret("w", "cloud-config", &worker),
        )
    );
    assert_eq!(
        Ok(()),
        fires(
            "server-port",
            &secret(
                "w",
                "cloud-config",
                &worker.replace("https://10.0.1.10:9345", "http://10.0.1.10:9345"),
            ),
            &secret("w", "cloud-config", &worker),
        )
    );
    assert_eq!(
        Ok(()),
        fires(
            "server-on-init",
            &secret(
                "i",
                "cloud-config",
                &init.replace(
                    "      token: ",
                    "      server: https://10.0.1.10:9345\n      token: ",
                ),
            ),
            &secret("i", "cloud-config", &init),
        )
    );
    assert_eq!(
        Ok(()),
        fires(
            "server-missing",
            &secret(
                "w",
                "cloud-config",
                &worker.replace("      server: https://10.0.1.10:9345\n", ""),
            ),
            &secret("w", "cloud-config", &worker),
        )
    );
    // A join through a DNS name missing from tls-san; a node IP (IP-based registration) is fine.
    assert_eq!(
        Ok(()),
        fires(
            "tls-san-missing-server-host",
            &secret(
                "j",
                "cloud-config",
                &join.replace("10.0.1.10", "rke2.example.net"),
            ),
            &secret("j", "cloud-config", &join),
        )
    );
    // CAPRKE2 appends the endpoint host even when it is empty.
    assert_eq!(
        Ok(()),
        fires(
            "tls-san-missing-server-host",
            &secret(
                "i",
                "cloud-config",
                &init.replace(
                    "        - demo-apiserver.example.internal\n",
                    "        - \"\"\n",
                ),
            ),
            &secret("i", "cloud-config", &init),
        )
    );
    let (_, doc) = lint(
        &secret(
            "j",
            "cloud-config",
            &join.replace("10.0.1.10", "demo.example.com"),
        ),
        &[],
    );
    assert!(!ids(&doc, 0).contains(&"tls-san-missing-server-host".to_owned()));
}

#[test]
fn install_checks() {
    let worker = userdata(WORKER);
    assert_eq!(
        Ok(()),
        fires(
            "version-format",
            &secret(
                "w",
                "cloud-config",
                &worker.replace("v1.32.5+rke2r1", "1.32"),
            ),
            &secret("w", "cloud-config", &worker),
        )
    );
    assert_eq!(
        Ok(()),
        fires(
            "version-format",
            &secret(
                "w",
                "cloud-config",
                &worker.replace("INSTALL_RKE2_VERSION=v1.32.5+rke2r1 ", ""),
            ),
            &secret("w", "cloud-config", &worker),
        )
    );
    // A version written out that is no release fails the gate (the installer finds no such
    // release); a release candidate is a release; a missing one, or one filled in at boot,
    // is a warning.
    let severity = |version: &str| -> (i32, Vec<String>) {
        let (code, doc) = lint(
            &secret(
                "w",
                "cloud-config",
                &worker.replace("v1.32.5+rke2r1", version),
            ),
            &[],
        );
        let found = doc["secrets"][0]["findings"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|f| f["id"] == "version-format")
            .map(|f| f["severity"].as_str().unwrap_or("").to_owned())
            .collect();
        (code, found)
    };
    for bad in [
        "v1.32.5",
        "v1.32.5+rke2r1+rke2r1",
        "1.32.5+rke2r1",
        "v1.32.05+rke2r1",
    ] {
        assert_eq!(severity(bad), (1, vec!["error".to_owned()]), "{bad}");
    }
    assert_eq!(severity("v1.33.0-rc1+rke2r1"), (0, vec![]));
    assert_eq!(severity("${RKE2_VERSION}"), (0, vec!["warning".to_owned()]));
    let airgapped = userdata("worker-cloud-config-airgapped.userdata");
    assert_eq!(
        Ok(()),
        fires(
            "egress-required",
            &secret("w", "cloud-config", &worker),
            &secret("w", "cloud-config", &airgapped),
        )
    );
    assert_eq!(
        Ok(()),
        fires(
            "airgap-no-checksum",
            &secret("w", "cloud-config", &airgapped),
            &secret(
                "w",
                "cloud-config",
                &userdata("worker-cloud-config-checksum.userdata"),
            ),
        )
    );
    let (_, doc) = lint(&secret("w", "cloud-config", &airgapped), &[]);
    assert!(
        !ids(&doc, 0).contains(&"version-format".to_owned()),
        "air-gapped has no version"
    );
}

#[test]
fn node_and_file_checks() {
    let worker = userdata(WORKER);
    let no_provider = worker
        .replace("      cloud-provider-name: external\n", "")
        .replace(
            "        - provider-id=aws:///eu-west-1a/i-0abc43df7747e3ee1\n",
            "",
        );
    assert_eq!(
        Ok(()),
        fires(
            "provider-id-missing",
            &secret("w", "cloud-config", &no_provider),
            &secret("w", "cloud-config", &worker),
        )
    );
    assert_eq!(
        Ok(()),
        fires(
            "bare-kubectl",
            &secret(
                "w",
                "cloud-config",
                &worker.replace("runcmd:\n", "runcmd:\n  - 'kubectl apply -f /tmp/x.yaml'\n"),
            ),
            &secret(
                "w",
                "cloud-config",
                &worker.replace(
                    "runcmd:\n",
                    "runcmd:\n  - '/var/lib/rancher/rke2/bin/kubectl apply -f /tmp/x.yaml'\n",
                ),
            ),
        )
    );
    // The finding names the command by its place: a command may carry a credential.
    let (_, doc) = lint(
        &secret(
            "w",
            "cloud-config",
            &worker.replace(
                "runcmd:\n",
                "runcmd:\n  - 'kubectl --token=s3cr3t-value get nodes'\n",
            ),
        ),
        &[],
    );
    assert!(ids(&doc, 0).contains(&"bare-kubectl".to_owned()));
    assert!(!doc.to_string().contains("s3cr3t-value"), "{doc}");
    // runcmd is one script: an earlier PATH holds for the lines after it (as a line, a step
    // of one, a line of a script), but not one written into a file nor one set for one command.
    for (first, bare) in [
        ("export PATH=$PATH:/var/lib/rancher/rke2/bin", false),
        (
            "export PATH=$PATH:/var/lib/rancher/rke2/bin && echo ok",
            false,
        ),
        (
            "set -e\\nexport PATH=$PATH:/var/lib/rancher/rke2/bin",
            false,
        ),
        (
            "echo 'export PATH=$PATH:/var/lib/rancher/rke2/bin' >> /root/.bashrc",
            true,
        ),
        ("PATH=/var/lib/rancher/rke2/bin:$PATH kubectl version", true),
    ] {
        let (_, doc) = lint(
            &secret(
                "w",
                "cloud-config",
                &worker.replace(
                    "runcmd:\n",
                    &format!("runcmd:\n  - \"{first}\"\n  - 'kubectl get nodes'\n"),
                ),
            ),
            &[],
        );
        assert_eq!(
            ids(&doc, 0).contains(&"bare-kubectl".to_owned()),
            bare,
            "{first}: {doc}"
        );
    }
    let init = userdata(INIT);
    assert_eq!(
        Ok(()),
        fires(
            "key-permissions",
            &secret(
                "i",
                "cloud-config",
                &init.replacen("permissions: '0600'", "permissions: '0644'", 1),
            ),
            &secret("i", "cloud-config", &init),
        )
    );
    let dup = worker.replace(
        "write_files:\n",
        "write_files:\n-   path: /etc/rancher/rke2/registries.yaml\n    content: |\n      mirrors: {}\n",
    );
    assert_eq!(
        Ok(()),
        fires(
            "duplicate-path",
            &secret("w", "cloud-config", &dup),
            &secret("w", "cloud-config", &worker),
        )
    );
    // The generated CAs are valid until 2035: quiet by default, a warning with a long horizon.
    let init_secret = secret("i", "cloud-config", &init);
    let (_, doc) = lint(&init_secret, &[]);
    assert!(!ids(&doc, 0).contains(&"cert-expiry".to_owned()));
    let (code, doc) = lint(&init_secret, &["--cert-expiry-days", "20000"]);
    assert_eq!(
        ids(&doc, 0).iter().filter(|i| *i == "cert-expiry").count(),
        4
    );
    assert_eq!(code, 0, "a warning alone does not fail");
    let (code, _) = lint(
        &init_secret,
        &["--cert-expiry-days", "20000", "--deny", "warnings"],
    );
    assert_eq!(code, 1);
    let (code, doc) = lint(
        &init_secret,
        &[
            "--cert-expiry-days",
            "20000",
            "--deny",
            "warnings",
            "--allow",
            "cert-expiry",
        ],
    );
    assert_eq!(code, 0);
    assert!(!ids(&doc, 0).contains(&"cert-expiry".to_owned()));
}

#[test]
fn payload_not_utf8_is_info() {
    let out = cmd()
        .args(["lint", "--output", "json"])
        .arg(testdata().join("secrets/worker-cloud-config-gzip-online.yaml"))
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(0));
    let doc: Value = serde_json::from_slice(&out.stdout).expect("json");
    let f = &doc["secrets"][0]["findings"];
    assert!(f.to_string().contains("payload-not-utf8"), "{f}");
    let (_, doc) = lint(&secret("w", "cloud-config", &userdata(WORKER)), &[]);
    assert!(!ids(&doc, 0).contains(&"payload-not-utf8".to_owned()));
}

#[test]
fn cluster_checks() {
    let init = userdata(INIT);
    let join = userdata(JOIN);
    let worker = userdata(WORKER);
    let token = "a3e30ef46c156fb7b1fa288ed16d6ffe";
    let cluster = |join: &str, worker: &str| {
        format!(
            "{}---\n{}---\n{}",
            secret("init", "cloud-config", &init),
            secret("join", "cloud-config", join),
            secret("worker", "cloud-config", worker)
        )
    };
    let (code, doc) = lint(&cluster(&join, &worker), &[]);
    assert_eq!(code, 0, "{doc}");

    let (code, doc) = lint(
        &cluster(
            &join,
            &worker.replace(token, "0123456789abcdef0123456789abcdef"),
        ),
        &[],
    );
    assert_eq!(code, 1);
    assert!(ids(&doc, 2).contains(&"token-mismatch".to_owned()));
    assert!(!ids(&doc, 1).contains(&"token-mismatch".to_owned()));

    // An agent may join with the servers' agent-token instead; a server may not.
    let agent_token = "fedcba9876543210fedcba9876543210";
    let with_agent_token = init.replace(
        &format!("      token: {token}\n"),
        &format!("      token: {token}\n      agent-token: {agent_token}\n"),
    );
    assert_ne!(with_agent_token, init);
    let text = format!(
        "{}---\n{}---\n{}",
        secret("init", "cloud-config", &with_agent_token),
        secret("join", "cloud-config", &join.replace(token, agent_token)),
        secret(
            "worker",
            "cloud-config",
            &worker.replace(token, agent_token)
        )
    );
    let (_, doc) = lint(&text, &[]);
    assert!(
        !ids(&doc, 2).contains(&"token-mismatch".to_owned()),
        "{doc}"
    );
    assert!(ids(&doc, 1).contains(&"token-mismatch".to_owned()), "{doc}");

    let (_, doc) = lint(
        &cluster(&join, &worker.replace("10.0.1.10", "rke2.example.net")),
        &[],
    );
    assert!(
        ids(&doc, 2).contains(&"join-host-not-in-san".to_owned()),
        "{doc}"
    );
    let (_, doc) = lint(
        &cluster(&join, &worker.replace("10.0.1.10", "demo.example.com")),
        &[],
    );
    assert!(!ids(&doc, 2).contains(&"join-host-not-in-san".to_owned()));

    // K10 tokens: the CA hash is the SHA-256 of the server CA certificate file.
    let inspector = rke2_payload::Inspector::new(rke2_payload::InspectOptions::new());
    let envelope =
        rke2_payload::Envelope::parse(init.as_bytes(), &inspector.options().decode).expect("init");
    let report = inspector.inspect(&envelope.secrets[0]).expect("init");
    let hash = report
        .payload
        .files
        .iter()
        .find(|f| f.path.ends_with("/server/tls/server-ca.crt"))
        .and_then(|f| f.sha256.clone())
        .expect("server CA");
    let k10 = |hash: &str| format!("K10{hash}::server:{token}");
    let with_token =
        |text: &str, t: &str| text.replace(&format!("token: {token}"), &format!("token: {t}"));
    let good = k10(&hash);
    let bad = k10(&"0".repeat(64));
    let cluster_k10 = |t: &str| {
        format!(
            "{}---\n{}",
            secret("init", "cloud-config", &with_token(&init, &good)),
            secret("worker", "cloud-config", &with_token(&worker, t))
        )
    };
    let (_, doc) = lint(&cluster_k10(&good), &[]);
    assert!(!ids(&doc, 1).contains(&"token-ca-hash".to_owned()), "{doc}");
    let (_, doc) = lint(&cluster_k10(&bad), &[]);
    assert!(ids(&doc, 1).contains(&"token-ca-hash".to_owned()), "{doc}");
    // The token never shows, even in a finding.
    assert!(!doc.to_string().contains(token));
}

#[test]
fn cloud_size_checks_and_sarif() {
    let file = testdata().join("secrets/init-cloud-config-extras.yaml");
    let run = |args: &[&str]| {
        cmd()
            .arg("lint")
            .arg(&file)
            .args(args)
            .output()
            .expect("run")
    };
    let out = run(&["--output", "json", "--cloud", "aws-user-data"]);
    let doc: Value = serde_json::from_slice(&out.stdout).expect("json");
    assert!(doc.to_string().contains("size-over-limit"));
    assert_eq!(out.status.code(), Some(1));
    let out = run(&["--output", "json", "--cloud", "azure"]);
    let doc: Value = serde_json::from_slice(&out.stdout).expect("json");
    assert!(!doc.to_string().contains("size-over-limit"));

    let out = run(&["--output", "sarif"]);
    let sarif: Value = serde_json::from_slice(&out.stdout).expect("sarif json");
    assert_eq!(sarif["version"], "2.1.0");
    let run0 = &sarif["runs"][0];
    assert_eq!(run0["tool"]["driver"]["name"], "rke2-payload");
    let rules: Vec<&str> = run0["tool"]["driver"]["rules"]
        .as_array()
        .expect("rules")
        .iter()
        .filter_map(|r| r["id"].as_str())
        .collect();
    for result in run0["results"].as_array().expect("results") {
        let id = result["ruleId"].as_str().expect("ruleId");
        assert!(rules.contains(&id), "{id} has no rule");
        assert!(["error", "warning", "note"].contains(&result["level"].as_str().expect("level")));
        assert!(result["message"]["text"].is_string());
        assert!(result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"].is_string());
    }
    assert!(!run0["results"].as_array().expect("results").is_empty());
}

#[test]
fn cloud_config_schema_own_rules_and_cloud_init_schema() {
    let worker = userdata(WORKER);
    let bad = secret(
        "w",
        "cloud-config",
        &format!("{worker}ntp: [a]\nusers: 5\n").replace(
            "write_files:\n",
            "write_files:\n-   path: /etc/x\n    bogus: 1\n    content: x\n",
        ),
    );
    // Own rules only: the ntp shape is caught without cloud-init installed.
    let (_, doc) = lint(&bad, &["--cloud-init-schema", "none"]);
    let messages = doc["secrets"][0]["findings"].to_string();
    assert!(messages.contains("ntp must be a mapping"), "{messages}");
    assert!(!messages.contains("cloud-init's schema"), "{messages}");

    // By default, the schema bundled with the tool, named by its cloud-init release.
    let (_, doc) = lint(&bad, &[]);
    let messages = doc["secrets"][0]["findings"].to_string();
    let bundled = format!(
        "cloud-init {}'s schema (bundled) rejects",
        rke2_payload::BUNDLED_CLOUD_INIT_VERSION
    );
    assert!(
        messages.contains(&format!("{bundled} /write_files/0")),
        "{messages}"
    );
    assert!(
        messages.contains(&format!("{bundled} /users")),
        "{messages}"
    );

    let installed = std::path::Path::new(rke2_payload::CLOUD_INIT_SCHEMA_PATHS[0]).is_file();
    if !installed {
        assert_ne!(
            std::env::var("CI").as_deref(),
            Ok("true"),
            "CI=true needs cloud-init's schema (apt-get install cloud-init)"
        );
        return;
    }
    let (_, doc) = lint(&bad, &["--cloud-init-schema", "installed"]);
    let messages = doc["secrets"][0]["findings"].to_string();
    // The finding names the schema it used (its cloud-init version and file).
    assert!(messages.contains("'s schema ("), "{messages}");
    assert!(
        messages.contains(rke2_payload::CLOUD_INIT_SCHEMA_PATHS[0]),
        "{messages}"
    );
    assert!(messages.contains(" rejects /write_files/0"), "{messages}");
    assert!(messages.contains("/users"), "{messages}");
    // A comment line after the first key changes nothing.
    let commented = secret(
        "w",
        "cloud-config",
        &format!("{worker}# a comment\nntp: [a]\n# another\nusers: 5\n"),
    );
    let (_, doc) = lint(&commented, &["--cloud-init-schema", "installed"]);
    let messages = doc["secrets"][0]["findings"].to_string();
    assert!(messages.contains(" rejects /users"), "{messages}");
    // A deprecated key cloud-init accepts is a deprecation, not a rejection.
    let deprecated = secret("w", "cloud-config", &format!("{worker}apt_update: true\n"));
    let (_, doc) = lint(&deprecated, &["--cloud-init-schema", "installed"]);
    let messages = doc["secrets"][0]["findings"].to_string();
    assert!(
        messages.contains("accepts /apt_update but marks it deprecated"),
        "{messages}"
    );
    assert!(!messages.contains(" rejects "), "{messages}");
    let (_, doc) = lint(&secret("w", "cloud-config", &worker), &[]);
    assert!(!doc.to_string().contains("cloud-config-schema"), "{doc}");
    let out = cmd()
        .args(["lint", "-", "--cloud-init-schema", "/nonexistent.json"])
        .write_stdin(worker)
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn github_gitlab_and_junit_outputs_carry_every_finding() {
    let list = testdata().join("secrets/list-all.yaml");
    let json = cmd()
        .args(["lint", "--output", "json", "--cloud-init-schema", "none"])
        .arg(&list)
        .output()
        .expect("run");
    let doc: Value = serde_json::from_slice(&json.stdout).expect("JSON");
    let findings: Vec<(String, String)> = doc["secrets"]
        .as_array()
        .expect("secrets")
        .iter()
        .flat_map(|s| {
            let who = format!(
                "{}/{}",
                s["namespace"].as_str().unwrap_or(""),
                s["name"].as_str().unwrap_or("")
            );
            s["findings"]
                .as_array()
                .expect("findings")
                .iter()
                .map(move |f| (who.clone(), f["id"].as_str().expect("id").to_owned()))
                .collect::<Vec<_>>()
        })
        .collect();
    assert!(!findings.is_empty());
    let run = |format: &str| {
        let out = cmd()
            .args(["lint", "--output", format, "--cloud-init-schema", "none"])
            .arg(&list)
            .output()
            .expect("run");
        assert_eq!(
            out.status.code(),
            json.status.code(),
            "{format}: same exit code"
        );
        String::from_utf8(out.stdout).expect("UTF-8")
    };
    // GitHub: one workflow command per finding, naming the input file, the check and the Secret,
    // most severe first and at most ten a level (the tenth counting the rest); the step summary
    // has every finding.
    let severity_of = |id: &str| {
        doc["secrets"]
            .as_array()
            .into_iter()
            .flatten()
            .flat_map(|s| s["findings"].as_array().into_iter().flatten())
            .find(|f| f["id"] == id)
            .and_then(|f| f["severity"].as_str())
            .unwrap_or("")
            .to_owned()
    };
    let mut expected: Vec<Option<&(String, String)>> = Vec::new();
    for level in ["error", "warning", "info"] {
        let of_level: Vec<&(String, String)> = findings
            .iter()
            .filter(|(_, id)| severity_of(id) == level)
            .collect();
        if of_level.len() > 10 {
            expected.extend(of_level[..9].iter().map(|f| Some(*f)));
            expected.push(None);
        } else {
            expected.extend(of_level.into_iter().map(Some));
        }
    }
    let github = run("github");
    let lines: Vec<&str> = github.lines().collect();
    assert_eq!(lines.len(), expected.len(), "{github}");
    for (line, expected) in lines.iter().zip(&expected) {
        assert!(
            ["::error ", "::warning ", "::notice "]
                .iter()
                .any(|p| line.starts_with(p)),
            "{line}"
        );
        match expected {
            Some((who, id)) => {
                assert!(
                    line.contains("file=") && line.contains(&format!("title={id} (")),
                    "{line}"
                );
                assert!(line.contains(who.as_str()), "{line}");
            }
            None => assert!(
                line.contains("more findings of this level are not annotated"),
                "{line}"
            ),
        }
    }
    // GitLab: one issue per finding, fingerprints unique, severities GitLab knows.
    let gitlab: Value = serde_json::from_str(&run("gitlab")).expect("JSON");
    let issues = gitlab.as_array().expect("an array");
    assert_eq!(issues.len(), findings.len());
    let mut prints = std::collections::HashSet::new();
    for issue in issues {
        assert!(
            prints.insert(
                issue["fingerprint"]
                    .as_str()
                    .expect("fingerprint")
                    .to_owned()
            )
        );
        assert!(matches!(
            issue["severity"].as_str(),
            Some("info" | "minor" | "major" | "critical" | "blocker")
        ));
        assert!(
            issue["location"]["path"].is_string() && issue["location"]["lines"]["begin"].is_u64()
        );
        assert!(issue["check_name"].is_string() && issue["description"].is_string());
    }
    // JUnit: a failed test case per error or warning.
    let junit = run("junit");
    let failing = doc["secrets"]
        .as_array()
        .expect("secrets")
        .iter()
        .flat_map(|s| s["findings"].as_array().expect("findings").iter())
        .filter(|f| matches!(f["severity"].as_str(), Some("error" | "warning")))
        .count();
    assert_eq!(junit.matches("<failure ").count(), failing);
    assert!(junit.contains(&format!("failures=\"{failing}\"")));
    assert_eq!(
        junit.matches("<testsuite ").count(),
        doc["secrets"].as_array().expect("s").len()
    );
}

#[test]
fn what_is_fetched_at_boot_is_reported_not_read() {
    // Ignition's own documentation shape: a config replaced by one fetched over HTTP.
    let replaced = r#"{"ignition":{"version":"3.0.0","config":{"replace":{"source":"http://example.com/config.json","verification":{"hash":"sha512-00"}}}}}"#;
    let remote_file = r#"{"ignition":{"version":"3.3.0"},"storage":{"files":[{"path":"/var/asset","contents":{"source":"https://example.com/asset"}}]}}"#;
    for (input, says, missing_config) in [
        (
            replaced,
            "ignition.config.replace fetches a config at boot from http://example.com/config.json",
            false,
        ),
        (
            remote_file,
            "fetched at boot from https://example.com/asset",
            true,
        ),
    ] {
        let out = cmd()
            .args(["lint", "-o", "json"])
            .write_stdin(input)
            .output()
            .expect("run");
        let doc: Value = serde_json::from_slice(&out.stdout).expect("json");
        let findings = doc["secrets"][0]["findings"]
            .as_array()
            .expect("findings")
            .clone();
        let remote: Vec<&Value> = findings
            .iter()
            .filter(|f| f["id"] == "remote-content")
            .collect();
        assert_eq!(remote.len(), 1, "{findings:?}");
        assert!(
            remote[0]["message"]
                .as_str()
                .expect("message")
                .contains(says),
            "{remote:?}"
        );
        // A replaced config may write config.yaml itself: not reported missing then.
        assert_eq!(
            findings.iter().any(|f| f["id"] == "rke2-config-missing"),
            missing_config,
            "{findings:?}"
        );
    }
}

#[test]
fn jinja_syntax_is_jinja_s_own_verdict() {
    // cloud-init's own Jinja (python3-jinja2, a dependency of Debian's cloud-init).
    let Some(python) = validator("cloud-init").map(|_| "/usr/bin/python3") else {
        return;
    };
    let verdict = |text: &str| {
        let out = std::process::Command::new(python)
            .args([
                "-c",
                "import sys, jinja2\nt = sys.stdin.read()\nenv = jinja2.Environment()\ntry:\n    toks = [k for (_, k, _) in env.lex(t)]\n    env.parse(t)\nexcept jinja2.TemplateSyntaxError:\n    print('fails'); sys.exit()\nprint('drops' if 'comment_begin' in toks else 'ok')\n",
            ])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .and_then(|mut child| {
                use std::io::Write as _;
                child.stdin.take().expect("stdin").write_all(text.as_bytes())?;
                child.wait_with_output()
            })
            .expect("python3 with jinja2");
        String::from_utf8_lossy(&out.stdout).trim().to_owned()
    };
    for body in [
        "runcmd:\n  - echo {{ v1.local_hostname }}\n",
        "write_files:\n  - path: /var/lib/rancher/rke2/server/manifests/x.yaml\n    content: |\n      name: {{ .Release.Name }}\n",
        "runcmd:\n  - 'n=${#arr[@]}; echo $n'\n",
        "runcmd:\n  - 'echo {{ v1.x'\n",
        "runcmd:\n  - \"{% raw %}docker inspect --format '{{ .State.Running }}' x{% endraw %}\"\n",
        "runcmd:\n  - 'echo {$x} ${HOME} {}'\n",
        "runcmd:\n  - \"docker inspect --format '{{ $x := 1 }}' y\"\n",
    ] {
        let text = format!("## template: jinja\n#cloud-config\n{body}");
        let (_, doc) = lint(&secret("w", "cloud-config", &text), &[]);
        let flagged = ids(&doc, 0).contains(&"jinja-syntax".to_owned());
        assert_eq!(flagged, verdict(&text) != "ok", "{body}: {doc}");
    }
}

/// A bootstrap Secret of cluster `demo` in `default` whose `config.yaml` holds `config`.
fn secret_with_config(name: &str, config: &str) -> String {
    let indented: String = config.lines().map(|l| format!("        {l}\n")).collect();
    format!(
        "apiVersion: v1\nkind: Secret\nmetadata:\n  name: {name}\n  namespace: default\n  labels: {{cluster.x-k8s.io/cluster-name: demo}}\ntype: cluster.x-k8s.io/secret\nstringData:\n  format: cloud-config\n  value: |\n    #cloud-config\n    write_files:\n    - path: /etc/rancher/rke2/config.yaml\n      permissions: '0600'\n      content: |\n{indented}    runcmd:\n    - 'curl -sfL https://get.rke2.io | INSTALL_RKE2_VERSION=v1.32.5+rke2r1 sh -s - server'\n    - 'systemctl enable --now rke2-server.service'\n"
    )
}

/// The check ids `lint -o json` finds on `input`, with its exit code.
fn ids_of(input: &str) -> (Option<i32>, Vec<String>) {
    let out = cmd()
        .args(["lint", "-o", "json", "-"])
        .write_stdin(input.to_owned())
        .output()
        .expect("run");
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)));
    let ids = doc["secrets"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|s| s["findings"].as_array().into_iter().flatten())
        .filter_map(|f| f["id"].as_str().map(str::to_owned))
        .collect();
    (out.status.code(), ids)
}

#[test]
fn overlapping_pod_and_service_cidrs_are_a_warning() {
    let init = "token: abcdef0123456789\ntls-san:\n  - lb.example.com\n";
    // A pod network over RKE2's default service network: RKE2 starts, the pods in the
    // service range are unreachable. A warning, not a refusal.
    let pods = format!("{init}cluster-cidr: 10.43.0.0/16\n");
    let (_, doc) = lint(&secret_with_config("cp-a", &pods), &[]);
    let overlap: Vec<&Value> = doc["secrets"][0]["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .filter(|f| f["id"] == "cidr-overlap")
        .collect();
    assert_eq!(overlap.len(), 1, "{doc}");
    assert_eq!(overlap[0]["severity"], "warning", "{doc}");
    let apart = format!("{init}cluster-cidr: 10.44.0.0/16\nservice-cidr: 10.45.0.0/16\n");
    assert!(
        !ids_of(&secret_with_config("cp-a", &apart))
            .1
            .contains(&"cidr-overlap".to_owned())
    );
    // Dual stack: the IPv6 networks are compared with each other only.
    let dual = format!(
        "{init}cluster-cidr: 10.42.0.0/16,2001:cafe:42::/56\nservice-cidr: 10.43.0.0/16,2001:cafe:42::/112\n"
    );
    let (_, ids) = ids_of(&secret_with_config("cp-a", &dual));
    assert_eq!(
        ids.iter().filter(|i| *i == "cidr-overlap").count(),
        1,
        "{ids:?}"
    );
}

#[test]
fn a_secret_without_the_format_key_capr_ke2_always_writes_is_a_warning() {
    let config = "token: abcdef0123456789\nserver: https://10.0.0.1:9345\n";
    let with = secret_with_config("w", config);
    assert!(!ids_of(&with).1.contains(&"format-missing".to_owned()));
    let without = with.replace("  format: cloud-config\n", "");
    let (code, ids) = ids_of(&without);
    assert!(ids.contains(&"format-missing".to_owned()), "{ids:?}");
    // A warning: exit 0 unless --deny warnings.
    assert_eq!(code, Some(0), "{ids:?}");
}

/// A join payload cut short on a base64 boundary still decodes: cut before its `server` line it
/// must not read as a first control plane, and cut anywhere before the install step it must
/// fail the gate.
#[test]
fn a_payload_cut_short_is_not_an_init_node_and_fails() {
    use base64::Engine as _;
    let b64 = base64::engine::general_purpose::STANDARD;
    let join = userdata(JOIN);
    for (marker, role) in [("server:", Value::Null), ("runcmd:", Value::from("server"))] {
        let at = join.find(marker).expect(marker);
        // A whole number of base64 quanta: the value decodes cleanly.
        let kept = &join.as_bytes()[..at / 3 * 3];
        let cut = format!(
            "apiVersion: v1\nkind: Secret\ntype: cluster.x-k8s.io/secret\nmetadata: {{name: demo-cp-x, namespace: default, labels: {{cluster.x-k8s.io/cluster-name: demo}}}}\ndata:\n  format: {}\n  value: {}\n",
            b64.encode("cloud-config"),
            b64.encode(kept)
        );
        let (code, doc) = lint(&cut, &[]);
        assert_eq!(code, 1, "{marker}: {doc}");
        let secret = &doc["secrets"][0];
        assert_eq!(secret["role"], role, "{marker}: {doc}");
        let ids: Vec<&str> = secret["findings"]
            .as_array()
            .expect("findings")
            .iter()
            .filter_map(|f| f["id"].as_str())
            .collect();
        assert!(ids.contains(&"rke2-not-started"), "{marker}: {ids:?}");
        assert!(!ids.contains(&"server-missing"), "{marker}: {ids:?}");
    }
    // The whole payload: started, no such finding.
    let (_, doc) = lint(&secret("w", "cloud-config", &join), &[]);
    assert!(!doc.to_string().contains("rke2-not-started"), "{doc}");
}

#[test]
fn a_version_that_is_no_release_is_shown_as_written() {
    let worker = userdata(WORKER);
    let odd = worker.replace(
        "INSTALL_RKE2_VERSION=v1.32.5+rke2r1",
        "INSTALL_RKE2_VERSION=v1.34.2+rke2r1+rke2r1",
    );
    assert_ne!(odd, worker, "the fixture installs v1.32.5+rke2r1");
    let (_, doc) = lint(&secret("w", "cloud-config", &odd), &[]);
    let text = doc.to_string();
    assert!(
        text.contains("INSTALL_RKE2_VERSION=v1.34.2+rke2r1+rke2r1 is not an RKE2 release of the form v1.32.5+rke2r1"),
        "{text}"
    );
    assert!(!text.contains("sha256:"), "{text}");
}

/// CAPZ writes `/etc/kubernetes/azure.json` empty, then with its content: intended, an info;
/// two different contents stay a warning.
#[test]
fn a_placeholder_written_empty_then_filled_is_an_info() {
    let worker = userdata(WORKER);
    let with = |first: &str, second: &str| {
        worker.replace(
            "write_files:\n",
            &format!(
                "write_files:\n-   path: /etc/kubernetes/azure.json\n    content: {first}\n-   path: /etc/kubernetes/azure.json\n{second}"
            ),
        )
    };
    let severity = |text: &str| {
        let (_, doc) = lint(&secret("w", "cloud-config", text), &[]);
        doc["secrets"][0]["findings"]
            .as_array()
            .expect("findings")
            .iter()
            .find(|f| f["id"] == "duplicate-path")
            .map(|f| {
                (
                    f["severity"].as_str().unwrap_or("").to_owned(),
                    f["message"].as_str().unwrap_or("").to_owned(),
                )
            })
    };
    let (level, message) = severity(&with(
        "''",
        "    content: '{\"cloud\": \"AzurePublicCloud\"}'\n",
    ))
    .expect("found");
    assert_eq!(level, "info", "{message}");
    assert!(message.contains("empty first"), "{message}");
    let (level, _) = severity(&with("a", "    content: b\n    append: true\n")).expect("found");
    assert_eq!(level, "info");
    let (level, _) = severity(&with("a", "    content: b\n")).expect("found");
    assert_eq!(level, "warning");
}
