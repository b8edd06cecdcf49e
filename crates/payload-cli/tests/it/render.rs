//! `render`: the differential test against the fixture generator (every variant restated as
//! manifests renders to the user data the generator wrote), the pipes into `size`, `lint` and
//! `inspect`, the real validators on every rendered payload, and what is generated.

use serde_json::Value;

use crate::common::{assert_valid, cmd, scratch, testdata};

/// The generator's record of every variant it restated as manifests.
fn variants() -> Vec<Value> {
    let text = std::fs::read_to_string(testdata().join("manifests/INDEX.json")).expect("index");
    serde_json::from_str(&text).expect("json")
}

fn render(args: &[&str]) -> Vec<u8> {
    let out = cmd().arg("render").args(args).output().expect("run");
    assert!(
        out.status.success(),
        "render {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

/// The List `render` wrote, as JSON.
fn list(args: &[&str]) -> Vec<Value> {
    let mut args = args.to_vec();
    args.extend(["-o", "json"]);
    let doc: Value = serde_json::from_slice(&render(&args)).expect("render -o json is JSON");
    assert_eq!(doc["kind"], "List");
    doc["items"].as_array().expect("items").clone()
}

fn b64(text: &Value) -> Vec<u8> {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD
        .decode(text.as_str().expect("a string"))
        .expect("base64")
}

/// The user data of one rendered Secret, through `decode`.
fn decoded(secret: &Value) -> Vec<u8> {
    let out = cmd()
        .arg("decode")
        .write_stdin(serde_json::to_vec(secret).expect("json"))
        .output()
        .expect("run");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

/// Ignition configs that mean the same: the same JSON once every file's `data:` URL is
/// decoded (the gzip bytes of a source may differ between compressors).
fn same_ignition(a: &[u8], b: &[u8]) -> Result<(), String> {
    fn normalise(bytes: &[u8]) -> Value {
        let mut doc: Value = serde_json::from_slice(bytes).expect("Ignition JSON");
        for file in doc["storage"]["files"].as_array_mut().into_iter().flatten() {
            let contents = &mut file["contents"];
            let source = contents["source"].as_str().unwrap_or_default().to_owned();
            let gz = contents["compression"] == "gzip";
            let (head, data) = source.split_once(',').expect("a data URL");
            let mut bytes = if head.ends_with(";base64") {
                b64(&Value::String(data.to_owned()))
            } else {
                percent_decode(data)
            };
            if gz {
                use std::io::Read as _;
                let mut out = Vec::new();
                flate2::read::GzDecoder::new(&bytes[..])
                    .read_to_end(&mut out)
                    .expect("gzip");
                bytes = out;
            }
            contents["source"] = Value::String(String::from_utf8_lossy(&bytes).into_owned());
            contents["compression"] = Value::Null;
        }
        doc
    }
    let (a, b) = (normalise(a), normalise(b));
    if a == b {
        Ok(())
    } else {
        Err(format!("{a:#}\n!=\n{b:#}"))
    }
}

fn percent_decode(text: &str) -> Vec<u8> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            out.push(u8::from_str_radix(&text[i + 1..i + 3], 16).expect("hex"));
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    out
}

#[test]
fn every_generator_variant_renders_to_the_user_data_the_generator_wrote() {
    let variants = variants();
    assert!(variants.len() >= 30, "{} variants", variants.len());
    for v in &variants {
        let stem = v["stem"].as_str().expect("stem");
        let manifest = testdata().join(v["manifest"].as_str().expect("manifest"));
        let role = v["role"].as_str().expect("role");
        let items = list(&[
            manifest.to_str().expect("utf-8"),
            "--seed",
            "1",
            "--role",
            role,
        ]);
        assert_eq!(items.len(), 1, "{stem}: one Secret for --role {role}");
        let secret = &items[0];
        let name = secret["metadata"]["name"].as_str().expect("name");
        let prefix = v["secret_name_prefix"].as_str().expect("prefix");
        assert!(
            name.starts_with(prefix),
            "{stem}: {name} starts with {prefix}"
        );
        assert_eq!(secret["type"], "cluster.x-k8s.io/secret", "{stem}");
        assert_eq!(
            secret["metadata"]["labels"]["cluster.x-k8s.io/cluster-name"], "demo",
            "{stem}"
        );
        assert_eq!(
            secret["metadata"]["ownerReferences"][0]["kind"],
            "RKE2Config"
        );
        let format = v["format"].as_str().expect("format");
        assert_eq!(b64(&secret["data"]["format"]), format.as_bytes(), "{stem}");
        let value = b64(&secret["data"]["value"]);
        let gzip = v["gzip"].as_bool().expect("gzip");
        match (format, gzip) {
            ("cloud-config", true) => assert!(value.starts_with(&[0x1f, 0x8b]), "{stem}: raw gzip"),
            ("ignition", true) => assert!(
                String::from_utf8_lossy(&value).contains("\"compression\":\"gzip\""),
                "{stem}: the gzip wrapper"
            ),
            _ => assert!(!value.starts_with(&[0x1f, 0x8b]), "{stem}: not gzipped"),
        }
        let want = std::fs::read(testdata().join(v["userdata"].as_str().expect("userdata")))
            .expect("the generator's user data");
        let got = decoded(secret);
        if format == "cloud-config" {
            assert!(
                got == want,
                "{stem}: rendered cloud-config differs from the generator's\n--- rendered\n{}\n--- generator\n{}",
                String::from_utf8_lossy(&got),
                String::from_utf8_lossy(&want)
            );
        } else {
            if let Err(diff) = same_ignition(&got, &want) {
                panic!("{stem}: rendered Ignition means something else:\n{diff}");
            }
            let ratio = got.len() as f64 / want.len() as f64;
            assert!(
                (0.99..=1.01).contains(&ratio),
                "{stem}: {} vs {} bytes",
                got.len(),
                want.len()
            );
        }
        // The airGappedChecksum line makes CAPRKE2's cloud-config invalid YAML, by design.
        if !String::from_utf8_lossy(&got).contains("\n  - [[ $(sha256sum") {
            assert_valid(format, &got, stem);
        }
    }
}

#[test]
fn the_default_renders_init_join_and_a_worker_per_machine_deployment() {
    let manifest = testdata().join("manifests/join-cloud-config-online.yaml");
    let items = list(&[manifest.to_str().expect("utf-8"), "--seed", "1"]);
    let roles: Vec<String> = items
        .iter()
        .map(|s| {
            let text = String::from_utf8(decoded(s)).expect("text");
            if !text.contains("server: https://") {
                "init".to_owned()
            } else if text.contains("INSTALL_RKE2_TYPE=\"agent\"") {
                "worker".to_owned()
            } else {
                "join".to_owned()
            }
        })
        .collect();
    assert_eq!(
        roles,
        ["init", "join"],
        "3 replicas: init and join, no worker"
    );
    // Every Secret says it is a preview, from what, and what was generated.
    for s in &items {
        let annotations = &s["metadata"]["annotations"];
        assert!(
            annotations["rke2-payload/preview"]
                .as_str()
                .expect("preview")
                .contains("generated:")
        );
        assert!(
            annotations["rke2-payload/source"]
                .as_str()
                .expect("source")
                .starts_with("RKE2ControlPlane default/demo-control-plane in ")
        );
    }
    let worker = testdata().join("manifests/worker-cloud-config-online.yaml");
    let items = list(&[worker.to_str().expect("utf-8"), "--seed", "1"]);
    assert_eq!(items.len(), 2, "init and one worker");
    assert!(
        items[1]["metadata"]["name"]
            .as_str()
            .expect("name")
            .starts_with("demo-md-0-")
    );
}

const MINIMAL: &str = "apiVersion: cluster.x-k8s.io/v1beta2
kind: Cluster
metadata: {name: demo, namespace: capi}
spec:
  controlPlaneEndpoint: {host: demo.example.com, port: 6443}
  controlPlaneRef: {apiGroup: controlplane.cluster.x-k8s.io, kind: RKE2ControlPlane, name: demo-cp}
---
apiVersion: controlplane.cluster.x-k8s.io/v1beta2
kind: RKE2ControlPlane
metadata: {name: demo-cp, namespace: capi}
spec:
  version: v1.32.5+rke2r1
  replicas: 1
  registrationMethod: internal-first
  rolloutStrategy: {type: RollingUpdate}
  serverConfig:
    auditPolicySecret: {name: audit-policy}
  machineTemplate:
    spec:
      infrastructureRef: {apiGroup: infrastructure.cluster.x-k8s.io, kind: DockerMachineTemplate, name: demo-cp}
---
apiVersion: bootstrap.cluster.x-k8s.io/v1beta2
kind: RKE2ConfigTemplate
metadata: {name: demo-md, namespace: capi}
spec:
  template:
    spec:
      agentConfig:
        format: ignition
      gzipUserData: true
---
apiVersion: cluster.x-k8s.io/v1beta2
kind: MachineDeployment
metadata: {name: demo-md, namespace: capi}
spec:
  clusterName: demo
  template:
    spec:
      clusterName: demo
      version: v1.32.5+rke2r1
      bootstrap:
        configRef: {apiGroup: bootstrap.cluster.x-k8s.io, kind: RKE2ConfigTemplate, name: demo-md}
      infrastructureRef: {apiGroup: infrastructure.cluster.x-k8s.io, kind: DockerMachineTemplate, name: demo-md}
";

#[test]
fn generated_values_are_fresh_unless_seeded_and_real_in_size() {
    let run = |extra: &[&str]| {
        let out = cmd()
            .arg("render")
            .args(extra)
            .write_stdin(MINIMAL)
            .output()
            .expect("run");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        out
    };
    let a = run(&["--seed", "7"]);
    let b = run(&["--seed", "7"]);
    assert_eq!(a.stdout, b.stdout, "a seed makes the output repeatable");
    let c = run(&[]);
    let d = run(&[]);
    assert_ne!(
        c.stdout, d.stdout,
        "without a seed the token and keys are fresh"
    );
    // The placeholder is named on standard error, and the IP-based registration method's
    // server is said to be made up.
    let stderr = String::from_utf8_lossy(&a.stderr);
    assert!(stderr.contains("manifest-missing-reference"), "{stderr}");
    assert!(stderr.contains("Secret capi/audit-policy"), "{stderr}");
    let doc: Value = serde_saphyr::from_slice(&a.stdout).expect("YAML");
    let items = doc["items"].as_array().expect("items");
    assert_eq!(items.len(), 2);
    let preview = items[1]["metadata"]["annotations"]["rke2-payload/preview"]
        .as_str()
        .expect("preview");
    assert!(preview.contains("192.0.2.10"), "{preview}");
    // The init payload: four fresh CA pairs of CAPRKE2's shape, the token 32 hex characters.
    let out = cmd()
        .args(["inspect", "-o", "json", "--show-secrets"])
        .write_stdin(a.stdout.clone())
        .output()
        .expect("run");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: Value = serde_json::from_slice(&out.stdout).expect("json");
    let init = &report["secrets"][0];
    let certs = init["certificates"].as_array().expect("certificates");
    assert_eq!(certs.len(), 4, "{init:#}");
    for c in certs {
        assert_eq!(c["subject"], "CN=kubernetes", "{c:#}");
        assert_eq!(c["is_ca"], true, "{c:#}");
    }
    let token = init["rke2"]["token"].as_str().expect("token shown");
    assert!(
        token.len() == 32 && token.bytes().all(|b| b.is_ascii_hexdigit()),
        "{token}"
    );
    // A placeholder of the size asked for.
    let small = run(&["--seed", "7", "--placeholder-bytes", "10"]);
    let big = run(&["--seed", "7", "--placeholder-bytes", "5000"]);
    assert!(big.stdout.len() > small.stdout.len() + 4000);
    // The worker is Ignition in the gzip wrapper, and valid.
    let worker = decoded(&serde_json::to_value(&items[1]).expect("json"));
    assert!(worker.starts_with(b"{\"ignition\""));
    assert_valid("ignition", &worker, "the minimal worker");
}

#[test]
fn a_gate_is_one_pipe() {
    let manifest =
        std::fs::read(testdata().join("manifests/init-cloud-config-extras.yaml")).expect("read");
    let out = cmd()
        .args(["render", "--seed", "1", "-"])
        .write_stdin(manifest)
        .output()
        .expect("run");
    assert!(out.status.success());
    // size --cloud aws-user-data: the init payload with everything is over 16 KiB raw: exit 1.
    let size = cmd()
        .args(["size", "--cloud", "aws-user-data"])
        .write_stdin(out.stdout.clone())
        .output()
        .expect("run");
    let text = String::from_utf8_lossy(&size.stdout);
    assert_eq!(size.status.code(), Some(1), "{text}");
    assert!(
        text.contains("does not fit") || text.contains("over"),
        "{text}"
    );
    // Asked to (`--from-render`), lint reports the manifest findings the preview carries,
    // under their ids; without it, no annotation of its input changes the report.
    let plain = cmd()
        .args(["lint", "-o", "json"])
        .write_stdin(out.stdout.clone())
        .output()
        .expect("run");
    let plain: Value = serde_json::from_slice(&plain.stdout).expect("json");
    assert!(plain.get("manifests").is_none(), "{plain}");
    let lint = cmd()
        .args(["lint", "--from-render", "-o", "json"])
        .write_stdin(out.stdout)
        .output()
        .expect("run");
    let report: Value = serde_json::from_slice(&lint.stdout).expect("json");
    // Manifest findings are the report's, once each; the Secrets' are their payloads'.
    let ids: Vec<&str> = report["manifests"]
        .as_array()
        .expect("manifests")
        .iter()
        .filter_map(|f| f["id"].as_str())
        .collect();
    assert!(
        ids.contains(&"manifest-additional-user-data-dropped"),
        "{ids:?}"
    );
    assert!(
        ids.contains(&"manifest-registration-address-not-in-tls-san"),
        "{ids:?}"
    );
}

#[test]
fn lint_reads_manifests_directly() {
    let manifest = testdata().join("manifests/init-cloud-config-extras.yaml");
    let out = cmd()
        .args(["lint", "-o", "json"])
        .arg(&manifest)
        .output()
        .expect("run");
    let report: Value = serde_json::from_slice(&out.stdout).expect("json");
    let secrets = report["secrets"].as_array().expect("secrets");
    assert_eq!(secrets.len(), 1, "the rendered init Secret");
    let ids: Vec<&str> = report["manifests"]
        .as_array()
        .expect("manifests")
        .iter()
        .filter_map(|f| f["id"].as_str())
        .collect();
    assert!(
        ids.contains(&"manifest-additional-user-data-dropped"),
        "{ids:?}"
    );
    // Located at the object in the manifest file, once.
    let dropped: Vec<&Value> = report["manifests"]
        .as_array()
        .expect("manifests")
        .iter()
        .filter(|f| f["id"] == "manifest-additional-user-data-dropped")
        .collect();
    assert_eq!(dropped.len(), 1, "{dropped:?}");
    assert!(
        dropped[0]["manifest"]["file"]
            .as_str()
            .is_some_and(|f| f.ends_with("init-cloud-config-extras.yaml")),
        "{dropped:?}"
    );
    assert!(
        dropped[0]["manifest"]["line"].as_u64().is_some(),
        "{dropped:?}"
    );
    assert!(
        !secrets[0]["findings"]
            .to_string()
            .contains("manifest-additional-user-data-dropped")
    );
}

/// One manifest check: the objects, and the check id that must (or must not) be found.
fn lint_ids(manifests: &str) -> Vec<String> {
    let out = cmd()
        .args(["lint", "-o", "json"])
        .write_stdin(manifests.to_owned())
        .output()
        .expect("run");
    let report: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|_| panic!("{}", String::from_utf8_lossy(&out.stderr)));
    let mut ids: Vec<String> = report["secrets"]
        .as_array()
        .expect("secrets")
        .iter()
        .flat_map(|s| s["findings"].as_array().cloned().unwrap_or_default())
        .chain(report["manifests"].as_array().cloned().unwrap_or_default())
        .filter_map(|f| f["id"].as_str().map(str::to_owned))
        .collect();
    ids.sort();
    ids.dedup();
    ids
}

#[test]
fn the_guide_s_manifest_checks() {
    let clean = lint_ids(MINIMAL);
    for id in [
        "manifest-version-pattern",
        "manifest-registration-address-missing",
        "manifest-node-name-ignored",
        "manifest-cluster-network-ignored",
        "manifest-unsubstituted-variable",
    ] {
        assert!(
            !clean.iter().any(|c| c == id),
            "{id} on the clean input: {clean:?}"
        );
    }
    let cases: [(&str, &str, &str); 10] = [
        (
            "version: v1.32.5+rke2r1",
            "version: v1.32.5",
            "manifest-version-pattern",
        ),
        (
            "registrationMethod: internal-first",
            "registrationMethod: address",
            "manifest-registration-address-missing",
        ),
        (
            "registrationMethod: internal-first",
            "registrationMethod: address\n  registrationAddress: 10.0.0.100",
            "manifest-registration-address-not-in-tls-san",
        ),
        (
            "        format: ignition",
            "        format: ignition\n        nodeName: worker",
            "manifest-node-name-ignored",
        ),
        (
            "spec:\n  controlPlaneEndpoint",
            "spec:\n  clusterNetwork: {serviceDomain: corp.internal}\n  controlPlaneEndpoint",
            "manifest-cluster-network-ignored",
        ),
        (
            "        format: ignition",
            "        format: cloud-config\n        additionalUserData:\n          config: |\n            #cloud-config\n            runcmd: [reboot]",
            "manifest-additional-user-data-dropped",
        ),
        (
            "{host: demo.example.com, port: 6443}",
            "{host: '', port: 0}",
            "manifest-control-plane-endpoint-missing",
        ),
        (
            "        format: ignition",
            "        format: ignition\n        airGapped: true",
            "manifest-airgap-no-checksum",
        ),
        (
            "version: v1.32.5+rke2r1",
            "version: ${KUBERNETES_VERSION}",
            "manifest-unsubstituted-variable",
        ),
        (
            "    auditPolicySecret: {name: audit-policy}",
            "    auditPolicySecret: {name: audit-policy}\n    ingressController: [traefik]\n    disableComponents: {pluginComponents: [rke2-traefik, rke2-traefik-crd]}",
            "ingress-controller-disabled",
        ),
    ];
    // RKE2's own cluster domain and port change nothing.
    let ids = lint_ids(&MINIMAL.replacen(
        "spec:\n  controlPlaneEndpoint",
        "spec:\n  clusterNetwork: {serviceDomain: cluster.local, apiServerPort: 6443}\n  controlPlaneEndpoint",
        1,
    ));
    assert!(
        !ids.iter().any(|c| c == "manifest-cluster-network-ignored"),
        "{ids:?}"
    );
    // Asking for a controller, or disabling another, is no finding.
    let ids = lint_ids(&MINIMAL.replacen(
        "    auditPolicySecret: {name: audit-policy}",
        "    auditPolicySecret: {name: audit-policy}\n    ingressController: [traefik]\n    disableComponents: {pluginComponents: [rke2-ingress-nginx]}",
        1,
    ));
    assert!(
        !ids.iter().any(|c| c == "ingress-controller-disabled"),
        "{ids:?}"
    );
    for (from, to, id) in cases {
        assert!(MINIMAL.contains(from), "{from}");
        let ids = lint_ids(&MINIMAL.replacen(from, to, 1));
        assert!(
            ids.iter().any(|c| c == id),
            "{id} not found after {to:?}: {ids:?}"
        );
    }
}

#[test]
fn what_render_cannot_read_is_one_sentence_and_exit_2() {
    for (input, says) in [
        (&b"\x89PNG\r\n\x1a\n\x00\x00"[..], "rendering the manifests"),
        (
            b"kind: ConfigMap\nmetadata: {name: x}\n",
            "no RKE2ControlPlane",
        ),
        (b"a: [\n", "rendering the manifests"),
    ] {
        let out = cmd()
            .arg("render")
            .write_stdin(input.to_vec())
            .output()
            .expect("run");
        assert_eq!(out.status.code(), Some(2));
        assert!(out.stdout.is_empty());
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        assert!(stderr.contains(says), "{stderr}");
    }
    // Ignition with a file written twice: CAPRKE2 fails; so does render, saying why.
    let twice = MINIMAL.replace(
        "      gzipUserData: true",
        "      gzipUserData: true\n      files:\n      - {path: /etc/a, content: x}\n      - {path: /etc/a, content: y}",
    );
    let out = cmd()
        .args(["render", "--role", "worker"])
        .write_stdin(twice)
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("manifest-render-fails") && stderr.contains("/etc/a is written twice"),
        "{stderr}"
    );
}

#[test]
fn a_rendered_file_is_private() {
    use std::os::unix::fs::PermissionsExt as _;
    let dir = scratch();
    let target = dir.path().join("preview.yaml");
    let out = cmd()
        .args(["render", "--seed", "1", "--to-file"])
        .arg(&target)
        .write_stdin(MINIMAL)
        .output()
        .expect("run");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.stdout.is_empty());
    let mode = std::fs::metadata(&target)
        .expect("written")
        .permissions()
        .mode()
        & 0o777;
    assert_eq!(mode, 0o600);
}

/// The variables of the example templates, as a pipeline would fill them.
const VARS: &[(&str, &str)] = &[
    ("CLUSTER_NAME", "demo"),
    ("NAMESPACE", "default"),
    ("KUBERNETES_VERSION", "v1.32.5+rke2r1"),
    ("CONTROL_PLANE_MACHINE_COUNT", "3"),
    ("WORKER_MACHINE_COUNT", "2"),
    ("AWS_REGION", "eu-west-1"),
    ("AWS_SSH_KEY_NAME", "ops"),
    ("DNS_ZONE", "example.com"),
    ("CONTROL_PLANE_MACHINE_TYPE", "m6i.large"),
    ("WORKER_MACHINE_TYPE", "m6i.xlarge"),
    ("ETCD_S3_ACCESS_KEY_ID", "AKIAIOSFODNN7EXAMPLE"),
    (
        "ETCD_S3_SECRET_ACCESS_KEY",
        "wJalrXUtnFEMIK7MDENGbPxRfiCYEXAMPLEKEY",
    ),
    ("CONTROL_PLANE_ENDPOINT_IP", "10.20.0.10"),
    (
        "RKE2_ARTIFACTS_SHA256",
        "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
    ),
    ("NTP_SERVER", "ntp.example.internal"),
    ("REGISTRY", "registry.example.internal:5000"),
    ("REGISTRY_USERNAME", "robot"),
    ("REGISTRY_PASSWORD", "s3cr3t-registry-password"),
];

fn substitute(template: &str) -> String {
    let mut out = template.to_owned();
    for (name, value) in VARS {
        out = out.replace(&format!("${{{name}}}"), value);
    }
    assert!(!out.contains("${"), "a variable is left: {out}");
    out
}

#[test]
fn the_example_templates_render_fit_and_lint_clean() {
    let root = testdata().join("..");
    let aws =
        std::fs::read_to_string(root.join("examples/templates/aws-rke2.yaml")).expect("template");
    let preview =
        std::fs::read_to_string(root.join("examples/preview/demo-cluster.yaml")).expect("preview");
    let body: String = preview.lines().skip(2).map(|l| format!("{l}\n")).collect();
    assert_eq!(
        body,
        substitute(&aws),
        "examples/preview/demo-cluster.yaml is the AWS template, filled"
    );
    for (template, format, gzip_roles) in [
        ("aws-rke2.yaml", "cloud-config", 2),
        ("flatcar-ignition.yaml", "ignition", 2),
    ] {
        let text = substitute(
            &std::fs::read_to_string(root.join("examples/templates").join(template))
                .expect("template"),
        );
        let out = cmd()
            .args(["render", "--seed", "1", "-o", "json"])
            .write_stdin(text.clone())
            .output()
            .expect("run");
        assert!(
            out.status.success(),
            "{template}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let doc: Value = serde_json::from_slice(&out.stdout).expect("json");
        let items = doc["items"].as_array().expect("items");
        assert_eq!(items.len(), 3, "{template}: init, join, one worker");
        let mut gzipped = 0;
        for item in items {
            assert_eq!(
                b64(&item["data"]["format"]),
                format.as_bytes(),
                "{template}"
            );
            let value = b64(&item["data"]["value"]);
            gzipped += usize::from(
                value.starts_with(&[0x1f, 0x8b])
                    || String::from_utf8_lossy(&value)
                        .contains("{\"replace\":{\"compression\":\"gzip\""),
            );
            let userdata = decoded(item);
            assert_valid(format, &userdata, template);
        }
        assert_eq!(
            gzipped, gzip_roles,
            "{template}: the control planes are gzipped, the worker not"
        );
        for gate in [
            &["size", "--cloud", "aws-user-data"][..],
            &["lint", "--cloud", "aws-user-data"][..],
        ] {
            let out = cmd()
                .args(gate)
                .write_stdin(out.stdout.clone())
                .output()
                .expect("run");
            assert_eq!(
                out.status.code(),
                Some(0),
                "{template} | {gate:?}: {}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
        }
    }
}

#[test]
fn v1beta1_objects_render_as_their_v1beta2_forms() {
    let v1beta1 = "apiVersion: cluster.x-k8s.io/v1beta1
kind: Cluster
metadata: {name: old, namespace: capi}
spec:
  controlPlaneEndpoint: {host: old.example.com, port: 6443}
  controlPlaneRef: {apiVersion: controlplane.cluster.x-k8s.io/v1beta1, kind: RKE2ControlPlane, name: old-cp}
---
apiVersion: controlplane.cluster.x-k8s.io/v1beta1
kind: RKE2ControlPlane
metadata: {name: old-cp, namespace: capi}
spec:
  replicas: 1
  version: v1.30.4+rke2r1
  rolloutStrategy: {type: RollingUpdate}
  agentConfig:
    cisProfile: cis-1.23
  machineTemplate:
    infrastructureRef: {apiVersion: infrastructure.cluster.x-k8s.io/v1beta1, kind: DockerMachineTemplate, name: old-cp}
---
apiVersion: bootstrap.cluster.x-k8s.io/v1beta1
kind: RKE2ConfigTemplate
metadata: {name: old-md, namespace: capi}
spec:
  template:
    spec:
      agentConfig: {}
---
apiVersion: cluster.x-k8s.io/v1beta1
kind: MachineDeployment
metadata: {name: old-md, namespace: capi}
spec:
  clusterName: old
  template:
    spec:
      clusterName: old
      version: v1.30.4+rke2r1
      bootstrap:
        configRef: {apiVersion: bootstrap.cluster.x-k8s.io/v1beta1, kind: RKE2ConfigTemplate, name: old-md}
      infrastructureRef: {apiVersion: infrastructure.cluster.x-k8s.io/v1beta1, kind: DockerMachineTemplate, name: old-md}
";
    let out = cmd()
        .args(["render", "--seed", "2", "-o", "json"])
        .write_stdin(v1beta1)
        .output()
        .expect("run");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: Value = serde_json::from_slice(&out.stdout).expect("json");
    let items = doc["items"].as_array().expect("items");
    assert_eq!(items.len(), 2);
    let init = String::from_utf8(decoded(&items[0])).expect("text");
    assert!(
        init.contains("INSTALL_RKE2_VERSION=v1.30.4+rke2r1 sh -s - server"),
        "{init}"
    );
    assert!(
        init.contains("profile: cis-1.23") && init.contains("/opt/rke2-cis-script.sh"),
        "{init}"
    );
    let worker = String::from_utf8(decoded(&items[1])).expect("text");
    assert!(
        worker.contains("server: https://old.example.com:9345"),
        "{worker}"
    );
    // A CIS profile CAPRKE2 refuses for the version: no Secret, and the reason.
    let refused = v1beta1.replace("cisProfile: cis-1.23", "cisProfile: cis-1.6");
    let out = cmd()
        .args(["render", "--role", "init"])
        .write_stdin(refused)
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("manifest-render-fails") && stderr.contains("cis-1.6"),
        "{stderr}"
    );
}

#[test]
fn clusters_of_one_input_share_the_generated_cas() {
    let two = format!("{MINIMAL}---\n{}", MINIMAL.replace("demo", "other"));
    let items = {
        let out = cmd()
            .args(["render", "--seed", "3", "--role", "init", "-o", "json"])
            .write_stdin(two)
            .output()
            .expect("run");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let doc: Value = serde_json::from_slice(&out.stdout).expect("json");
        doc["items"].as_array().expect("items").clone()
    };
    assert_eq!(items.len(), 2);
    let note = |i: usize| {
        items[i]["metadata"]["annotations"]["rke2-payload/preview"]
            .as_str()
            .expect("note")
            .to_owned()
    };
    assert!(
        note(0).contains("4 CA key pairs (RSA-2048, CN=kubernetes)"),
        "{}",
        note(0)
    );
    assert!(
        note(1).contains("the same as another cluster's"),
        "{}",
        note(1)
    );
    assert_eq!(
        items[1]["metadata"]["labels"]["cluster.x-k8s.io/cluster-name"],
        "other"
    );
}

#[test]
fn butane_additional_config_is_merged_into_the_ignition_worker() {
    let with_butane = MINIMAL.replace(
        "        format: ignition\n",
        "        format: ignition\n        additionalUserData:\n          config: |\n            variant: fcos\n            version: 1.4.0\n            systemd:\n              units:\n              - name: test.service\n                enabled: true\n                contents: |\n                  [Unit]\n                  Description=test\n                  [Service]\n                  ExecStart=/usr/bin/true\n                  [Install]\n                  WantedBy=multi-user.target\n            storage:\n              files:\n              - path: /etc/motd\n                mode: 0644\n                contents:\n                  inline: managed by Cluster API\n            passwd:\n              users:\n              - name: ops\n                ssh_authorized_keys: [ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGxyz ops]\n",
    );
    assert_ne!(with_butane, MINIMAL);
    let out = cmd()
        .args(["render", "--seed", "4", "--role", "worker", "-o", "json"])
        .write_stdin(with_butane)
        .output()
        .expect("run");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!String::from_utf8_lossy(&out.stderr).contains("manifest-butane-not-merged"));
    let doc: Value = serde_json::from_slice(&out.stdout).expect("json");
    let userdata = decoded(&doc["items"][0]);
    let ign: Value = serde_json::from_slice(&userdata).expect("Ignition");
    let units: Vec<&str> = ign["systemd"]["units"]
        .as_array()
        .expect("units")
        .iter()
        .filter_map(|u| u["name"].as_str())
        .collect();
    assert_eq!(units, ["rke2-install.service", "test.service"]);
    let files: Vec<&str> = ign["storage"]["files"]
        .as_array()
        .expect("files")
        .iter()
        .filter_map(|f| f["path"].as_str())
        .collect();
    assert_eq!(files.last(), Some(&"/etc/motd"), "{files:?}");
    assert_eq!(ign["passwd"]["users"][0]["name"], "ops");
    assert_valid("ignition", &userdata, "the worker with Butane merged");
}

/// `inspect -o json` of what `render --seed 1 ARGS` writes for the manifests (which must
/// render).
fn rendered_report(manifests: &str, args: &[&str]) -> Value {
    let out = cmd()
        .args(["render", "--seed", "1"])
        .args(args)
        .write_stdin(manifests.to_owned())
        .output()
        .expect("run");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report = cmd()
        .args(["inspect", "-o", "json", "-"])
        .write_stdin(out.stdout)
        .output()
        .expect("run");
    serde_json::from_slice(&report.stdout).expect("json")
}

/// The config.yaml facts of each rendered Secret: (role, server, tls-san).
fn rendered_facts(manifests: &str, args: &[&str]) -> Vec<(String, Value, Value)> {
    let report = rendered_report(manifests, args);
    report["secrets"]
        .as_array()
        .expect("secrets")
        .iter()
        .map(|s| {
            (
                s["role"].as_str().unwrap_or_default().to_owned(),
                s["rke2"]["server"].clone(),
                s["rke2"]["tls_san"].clone(),
            )
        })
        .collect()
}

#[test]
fn an_endpoint_the_provider_fills_in_is_one_placeholder_for_tls_san_and_join_server() {
    // The endpoint left to the infrastructure provider, nodes joining through it (the default).
    let manifests = MINIMAL
        .replacen(
            "  controlPlaneEndpoint: {host: demo.example.com, port: 6443}\n",
            "",
            1,
        )
        .replacen("  registrationMethod: internal-first\n", "", 1);
    let facts = rendered_facts(&manifests, &[]);
    let init = facts.iter().find(|f| f.0 == "init").expect("init");
    assert!(
        init.2
            .as_array()
            .is_some_and(|s| s.iter().any(|h| h == "192.0.2.10") && !s.iter().any(|h| h == "")),
        "{facts:?}"
    );
    for (role, server, _) in facts.iter().filter(|f| f.0 != "init") {
        assert_eq!(server, "https://192.0.2.10:9345", "{role}");
    }
    let ids = lint_ids(&manifests);
    for id in ["tls-san-missing-server-host", "join-host-not-in-san"] {
        assert!(!ids.iter().any(|c| c == id), "{id}: {ids:?}");
    }
    // `--server` names the endpoint too: in tls-san, and the join server.
    let facts = rendered_facts(&manifests, &["--server", "lb.example.net"]);
    let init = facts.iter().find(|f| f.0 == "init").expect("init");
    assert!(
        init.2
            .as_array()
            .is_some_and(|s| s.iter().any(|h| h == "lb.example.net")),
        "{facts:?}"
    );
    for (_, server, _) in facts.iter().filter(|f| f.0 != "init") {
        assert_eq!(server, "https://lb.example.net:9345");
    }
}

#[test]
fn without_a_version_caprke2_writes_nothing() {
    let manifests = MINIMAL.replacen("version: v1.32.5+rke2r1", "version: ''", 1);
    assert_ne!(manifests, MINIMAL);
    let out = cmd()
        .args(["render", "--seed", "1", "--role", "init"])
        .write_stdin(manifests.clone())
        .output()
        .expect("run");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("manifest-render-fails") && stderr.contains("spec.version is required"),
        "{stderr}"
    );
    assert!(
        !String::from_utf8_lossy(&out.stdout).contains("INSTALL_RKE2_VERSION="),
        "a Secret was written"
    );
}

#[test]
fn a_machine_pool_renders_the_rke2_config_it_names() {
    let manifests = format!(
        "{MINIMAL}---
apiVersion: cluster.x-k8s.io/v1beta2
kind: MachinePool
metadata: {{name: pool, namespace: capi}}
spec:
  clusterName: demo
  template:
    spec:
      clusterName: demo
      version: v1.31.9+rke2r1
      bootstrap:
        configRef: {{apiGroup: bootstrap.cluster.x-k8s.io, kind: RKE2Config, name: pool-config}}
      infrastructureRef: {{apiGroup: infrastructure.cluster.x-k8s.io, kind: DockerMachinePool, name: pool}}
---
apiVersion: bootstrap.cluster.x-k8s.io/v1beta2
kind: RKE2Config
metadata: {{name: pool-config, namespace: capi}}
spec:
  agentConfig:
    nodeLabels: [pool=yes]
"
    );
    let report = rendered_report(&manifests, &["--role", "worker"]);
    let secrets = report["secrets"].as_array().expect("secrets");
    // The MachineDeployment's worker, and one for the pool: named after its RKE2Config, with
    // the pool's version and the config's labels (not a second worker of the config alone).
    assert_eq!(secrets.len(), 2, "{report}");
    let pool = secrets
        .iter()
        .find(|s| s["name"] == "pool-config")
        .expect("the pool's Secret");
    assert_eq!(pool["install"]["version"], "v1.31.9+rke2r1", "{pool}");
    assert!(
        pool["rke2"]["node_label"].to_string().contains("pool=yes"),
        "{pool}"
    );
}

#[test]
fn an_auth_secret_without_its_keys_empties_registries_yaml_as_caprke2_does() {
    let manifests = format!(
        "{}---
apiVersion: v1
kind: Secret
metadata: {{name: reg-auth, namespace: capi}}
stringData: {{user: admin, pass: admin}}
",
        MINIMAL.replacen(
            "    auditPolicySecret: {name: audit-policy}",
            "    auditPolicySecret: {name: audit-policy}\n  privateRegistriesConfig:\n    mirrors:\n      docker.io: {endpoint: [https://mirror.example.com]}\n    configs:\n      mirror.example.com:\n        authSecret: {name: reg-auth}",
            1,
        )
    );
    assert!(manifests.contains("privateRegistriesConfig"));
    let out = cmd()
        .args(["render", "--seed", "1", "--role", "init"])
        .write_stdin(manifests)
        .output()
        .expect("run");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("neither username and password nor identity-token"),
        "{stderr}"
    );
    let userdata = cmd()
        .args(["decode", "-"])
        .write_stdin(out.stdout)
        .output()
        .expect("run");
    let text = String::from_utf8_lossy(&userdata.stdout);
    assert!(
        text.contains("configs: null\n      mirrors: null\n"),
        "{text}"
    );
    assert!(!text.contains("mirror.example.com"), "{text}");
}

#[test]
fn a_standalone_rke2_config_takes_its_machine_s_version() {
    let manifests = format!(
        "{MINIMAL}---
apiVersion: cluster.x-k8s.io/v1beta2
kind: Machine
metadata: {{name: m1, namespace: capi}}
spec:
  clusterName: demo
  version: v1.31.1+rke2r1
  bootstrap:
    configRef: {{apiGroup: bootstrap.cluster.x-k8s.io, kind: RKE2Config, name: m1-config}}
  infrastructureRef: {{apiGroup: infrastructure.cluster.x-k8s.io, kind: DockerMachine, name: m1}}
---
apiVersion: bootstrap.cluster.x-k8s.io/v1beta2
kind: RKE2Config
metadata: {{name: m1-config, namespace: capi}}
spec: {{}}
"
    );
    let report = rendered_report(&manifests, &["--role", "worker"]);
    let config = report["secrets"]
        .as_array()
        .expect("secrets")
        .iter()
        .find(|s| s["name"] == "m1-config")
        .expect("the config's Secret");
    assert_eq!(config["install"]["version"], "v1.31.1+rke2r1", "{config}");
}
