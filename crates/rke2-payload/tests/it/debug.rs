//! No `Debug` output of a public type shows a secret value: each is built from a payload with a
//! secret in every place the library reads, and formatted with `{:?}` and `{:#?}`.

use rke2_payload::{
    DecodeOptions, Envelope, InspectOptions, Inspector, LintOptions, Linter, SizeOptions, Sizer,
    StreamError, for_each_secret,
};

const PLANTED: &[&str] = &[
    "t0kenValue1234",
    "agentT0ken5678",
    "kubeletTok3n",
    "pgPassw0rd",
    "s3Secr3tKey",
    "regPassw0rd",
    "envPassw0rd",
    "MIIEsecretkeybody",
];

fn leaky() -> Vec<u8> {
    let userdata = "#cloud-config\nwrite_files:\n\
        - path: /etc/rancher/rke2/config.yaml\n  content: |\n    server: https://cp:9345\n    token: t0kenValue1234\n    agent-token: agentT0ken5678\n    kubelet-arg:\n    - --token=kubeletTok3n\n    datastore-endpoint: postgres://u:pgPassw0rd@db/x\n    etcd-s3-secret-key: s3Secr3tKey\n\
        - path: /etc/rancher/rke2/registries.yaml\n  content: |\n    configs:\n      r:\n        auth:\n          password: regPassw0rd\n\
        - path: /var/lib/rancher/rke2/server/tls/server-ca.key\n  content: |\n    -----BEGIN RSA PRIVATE KEY-----\n    MIIEsecretkeybody\n    -----END RSA PRIVATE KEY-----\n\
        runcmd:\n- DB_PASSWORD=envPassw0rd /opt/run.sh\n- curl -sfL https://get.rke2.io | sh -\n";
    serde_json::json!({"apiVersion": "v1", "kind": "List", "items": [
        {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "w", "namespace": "d"},
         "stringData": {"format": "cloud-config", "value": userdata}},
        {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "other", "namespace": "d"},
         "stringData": {"password": "regPassw0rd"}}]})
    .to_string()
    .into_bytes()
}

fn assert_clean(what: &str, value: &impl std::fmt::Debug) {
    for text in [format!("{value:?}"), format!("{value:#?}")] {
        for planted in PLANTED {
            assert!(!text.contains(planted), "{what} shows {planted}: {text}");
        }
    }
}

#[test]
fn debug_of_every_public_type_hides_secret_values() {
    let input = leaky();
    let options = DecodeOptions::default();
    let envelope = Envelope::parse(&input, &options).expect("parse");
    assert_clean("Envelope", &envelope);
    let secret = &envelope.secrets[0];
    assert_clean("BootstrapSecret", secret);
    let payload = secret.decode(&options).expect("decode");
    assert_clean("Payload", &payload);
    assert!(
        payload
            .userdata_text()
            .is_some_and(|t| t.contains("t0kenValue1234"))
    );

    let inspector = Inspector::new(InspectOptions::default());
    assert_clean("Inspector", &inspector);
    let report = inspector.inspect(secret).expect("inspect");
    assert_clean("SecretReport", &report);
    assert!(
        report.payload.rke2.token_sha256.is_some(),
        "the token was read"
    );
    assert_clean("Install", &report.payload.install);
    assert_clean(
        "Certificate and keys",
        &(&report.payload.certificates, &report.payload.keys),
    );
    let (json, _) = inspector.inspect_json(secret).expect("json");
    let json = String::from_utf8(json).expect("UTF-8");
    assert_clean("inspect JSON", &json);

    let sizer = Sizer::new(SizeOptions::new().with_decode(options.clone()));
    assert_clean("SizeReport", &sizer.measure(secret).expect("size"));
    let linter = Linter::new(LintOptions::new().with_decode(options.clone()));
    assert_clean("Linter", &linter);
    assert_clean(
        "LintReport",
        &linter
            .lint_stream(&input[..], &rke2_payload::Selector::default(), 1)
            .expect("lint"),
    );

    // Errors, and a stream stopped by its sink.
    let broken = br#"{"kind": "Secret", "metadata": {"name": "b"},
        "data": {"format": "Y2xvdWQtY29uZmln", "value": "t0kenValue1234!!"}}"#;
    let envelope = Envelope::parse(broken, &options).expect("parse");
    let error = envelope.secrets[0]
        .decode(&options)
        .expect_err("not base64");
    assert_clean("Error", &error);
    assert_clean("Error (Display)", &error.to_string());
    let stopped = for_each_secret(&input[..], &options, |_| Err("stop"));
    assert!(matches!(stopped, Err(StreamError::Sink("stop"))));
    assert_clean("StreamError", &stopped);
    let refused = rke2_payload::redact(
        b"Content-Type: multipart/mixed; boundary=x\n\n--x\n\ntoken: t0kenValue1234\n--x--\n",
        &rke2_payload::RedactOptions::new().with_decode(options.clone()),
    )
    .expect_err("refused");
    assert_clean("RedactError", &refused);
    assert_clean("RedactError (Display)", &refused.to_string());
}
