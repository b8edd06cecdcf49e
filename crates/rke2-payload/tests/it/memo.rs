//! `Inspector` and `Sizer` read each distinct payload once; what they answer must be what
//! a fresh one and a fresh measure make of every Secret, whether it was read or copied; and a
//! `Linter` lints one Secret as it lints a stream of it alone.

use std::path::PathBuf;

use rke2_payload::{
    DecodeOptions, Envelope, InspectOptions, Inspector, LintOptions, Linter, Selector, SizeOptions,
    Sizer,
};
use serde_json::Value;

fn testdata() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../testdata")
}

/// The fixture List with a copy of every Secret after it: renamed, in another namespace and
/// cluster, with the same payload.
fn doubled_list() -> Vec<u8> {
    let text = std::fs::read_to_string(testdata().join("secrets/list-all.json")).expect("list");
    let mut list: Value = serde_json::from_str(&text).expect("JSON");
    let items = list["items"].as_array().expect("items").clone();
    let mut out = Vec::new();
    for item in items {
        out.push(item.clone());
        let mut copy = item.clone();
        let name = copy["metadata"]["name"].as_str().expect("name").to_owned();
        copy["metadata"]["name"] = Value::from(format!("{name}-replica"));
        copy["metadata"]["namespace"] = Value::from("elsewhere");
        if let Some(labels) = copy["metadata"]["labels"].as_object_mut() {
            labels.insert("cluster.x-k8s.io/cluster-name".into(), "other".into());
        }
        out.push(copy);
    }
    list["items"] = Value::Array(out);
    serde_json::to_vec(&list).expect("JSON")
}

/// The same report, or the same error.
fn assert_same(
    want: Result<Value, rke2_payload::Error>,
    got: Result<Value, rke2_payload::Error>,
    id: &str,
) {
    match (want, got) {
        (Ok(want), Ok(got)) => assert_eq!(want, got, "{id}"),
        (Err(want), Err(got)) => assert_eq!(want.to_string(), got.to_string(), "{id}"),
        (want, got) => panic!("{id}: {want:?} vs {got:?}"),
    }
}

#[test]
fn an_inspector_answers_what_a_fresh_one_makes_of_every_secret() {
    let input = doubled_list();
    for show_secrets in [false, true] {
        let options = InspectOptions::new().with_show_secrets(show_secrets);
        let envelope = Envelope::parse(&input, &options.decode).expect("parse");
        assert!(envelope.secrets.len() >= 60, "{}", envelope.secrets.len());
        let inspector = Inspector::new(options.clone());
        for secret in &envelope.secrets {
            let want = Inspector::new(options.clone())
                .inspect(secret)
                .map(|r| serde_json::to_value(r).expect("JSON"));
            let got = inspector
                .inspect(secret)
                .map(|r| serde_json::to_value(r).expect("JSON"));
            assert_same(want, got, &secret.id().to_string());
        }
    }
}

#[test]
fn a_copy_carries_its_own_secret_s_name_namespace_and_cluster() {
    let input = doubled_list();
    let options = DecodeOptions::default();
    let envelope = Envelope::parse(&input, &options).expect("parse");
    let inspector = Inspector::default();
    let first = inspector.inspect(&envelope.secrets[0]).expect("inspect");
    let copy = inspector.inspect(&envelope.secrets[1]).expect("inspect");
    assert_eq!(
        copy.name.as_deref(),
        Some(format!("{}-replica", first.name.as_deref().expect("name")).as_str())
    );
    assert_eq!(copy.namespace.as_deref(), Some("elsewhere"));
    assert_eq!(copy.cluster.as_deref(), Some("other"));
    assert_eq!(
        serde_json::to_value(&copy.payload.files).expect("JSON"),
        serde_json::to_value(&first.payload.files).expect("JSON")
    );
}

/// What a sizer that never saw another Secret makes of each one is what one shared by all of
/// them answers.
#[test]
fn a_sizer_answers_what_measure_makes_of_every_secret() {
    let input = doubled_list();
    let decode = DecodeOptions::default();
    let envelope = Envelope::parse(&input, &decode).expect("parse");
    for contributors in [false, true] {
        let options = SizeOptions::new()
            .with_contributors(contributors)
            .with_decode(decode.clone());
        let sizer = Sizer::new(options.clone());
        for secret in &envelope.secrets {
            let want = Sizer::new(options.clone())
                .measure(secret)
                .map(|r| serde_json::to_value(r).expect("JSON"));
            let got = sizer
                .measure(secret)
                .map(|r| serde_json::to_value(r).expect("JSON"));
            assert_same(want, got, &secret.id().to_string());
        }
    }
}

/// `Linter::lint` of one Secret is the stream's report of an input holding only it.
#[test]
fn a_linter_lints_one_secret_as_the_stream_of_it_alone() {
    let text = std::fs::read_to_string(testdata().join("secrets/list-all.json")).expect("list");
    let list: Value = serde_json::from_str(&text).expect("JSON");
    let linter = Linter::new(LintOptions::new().with_now(1_767_225_600));
    let mut compared = 0;
    for item in list["items"].as_array().expect("items") {
        let alone = serde_json::to_vec(item).expect("JSON");
        // The list's Secrets that carry no bootstrap data do not read alone.
        let Ok(envelope) = Envelope::parse(&alone, &linter.options().decode) else {
            continue;
        };
        let Some(secret) = envelope.secrets.first() else {
            continue;
        };
        let one = serde_json::to_value(linter.lint(secret).expect("lint")).expect("JSON");
        let streamed = linter
            .lint_stream(&alone[..], &Selector::default(), 1)
            .expect("lint");
        assert_eq!(
            one,
            serde_json::to_value(&streamed.secrets[0]).expect("JSON"),
            "{}",
            secret.id()
        );
        compared += 1;
    }
    assert!(compared >= 10, "{compared}");
}
