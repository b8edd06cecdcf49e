//! Every generated fixture decodes to exactly the user data its generator rendered, with the
//! sizes, format and compression its index records (computed by the generator, independently).

use std::path::PathBuf;

use crate::sha256_hex;
use rke2_payload::{Compression, DecodeOptions, Envelope, Format, Selector};
use serde_json::Value;

fn testdata() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../testdata")
}

fn index() -> Vec<Value> {
    let text = std::fs::read_to_string(testdata().join("secrets/INDEX.json")).expect("index");
    serde_json::from_str(&text).expect("index is JSON")
}

fn single_fixtures() -> Vec<Value> {
    index()
        .into_iter()
        .filter(|e| e["kind"] == "Secret")
        .collect()
}

#[test]
fn every_single_secret_decodes_exactly() {
    let options = DecodeOptions::default();
    let fixtures = single_fixtures();
    assert!(fixtures.len() >= 30, "only {} fixtures", fixtures.len());
    for entry in fixtures {
        let file = entry["file"].as_str().expect("file");
        let input = std::fs::read(testdata().join("secrets").join(file)).expect(file);
        let envelope = Envelope::parse(&input, &options).unwrap_or_else(|e| panic!("{file}: {e}"));
        assert_eq!(envelope.secrets.len(), 1, "{file}");
        let secret = &envelope.secrets[0];
        assert_eq!(secret.name(), entry["name"].as_str(), "{file}");
        assert_eq!(secret.namespace(), entry["namespace"].as_str(), "{file}");
        assert_eq!(secret.cluster(), entry["cluster"].as_str(), "{file}");
        if let Some(b64) = entry["base64_bytes"].as_u64() {
            assert_eq!(secret.base64_len(), b64, "{file}: base64 bytes");
        }
        let payload = secret
            .decode(&options)
            .unwrap_or_else(|e| panic!("{file}: {e}"));
        assert_eq!(
            payload.value().len() as u64,
            entry["value_bytes"].as_u64().expect("value_bytes"),
            "{file}: value bytes"
        );
        assert_eq!(
            sha256_hex(payload.value()),
            entry["value_sha256"].as_str().expect("value_sha256"),
            "{file}: value"
        );
        let expected = std::fs::read(
            testdata()
                .join("secrets")
                .join(entry["userdata_file"].as_str().expect("userdata_file")),
        )
        .expect("userdata file");
        assert!(payload.userdata() == expected, "{file}: user data differs");
        assert_eq!(
            sha256_hex(payload.userdata()),
            entry["userdata_sha256"].as_str().expect("sha"),
            "{file}"
        );
        let format = match entry["format"].as_str() {
            Some("cloud-config") => Format::CloudConfig,
            Some("ignition") => Format::Ignition,
            other => panic!("{file}: format {other:?}"),
        };
        assert_eq!(payload.format(), format, "{file}");
        assert!(!payload.format_mismatch(), "{file}");
        let gzip = entry["gzip"].as_bool().expect("gzip");
        assert_eq!(payload.compression().is_gzip(), gzip, "{file}");
        if gzip {
            let expected = match format {
                Format::CloudConfig => Compression::Gzip,
                _ => Compression::IgnitionWrapper { gzip: true },
            };
            assert_eq!(payload.compression(), expected, "{file}");
        }
    }
}

#[test]
fn lists_and_multi_document_streams() {
    let options = DecodeOptions::default();
    for entry in index().into_iter().filter(|e| e["kind"] != "Secret") {
        let file = entry["file"].as_str().expect("file");
        let input = std::fs::read(testdata().join("secrets").join(file)).expect(file);
        let envelope = Envelope::parse(&input, &options).unwrap_or_else(|e| panic!("{file}: {e}"));
        let items = entry["items"].as_array().expect("items");
        let bootstrap: Vec<&Value> = items.iter().filter(|i| i["bootstrap"] == true).collect();
        assert_eq!(envelope.secrets.len(), bootstrap.len(), "{file}");
        assert_eq!(
            envelope.skipped_secrets,
            items.len() - bootstrap.len(),
            "{file}: skipped"
        );
        for item in bootstrap {
            let name = format!(
                "{}/{}",
                item["namespace"].as_str().expect("ns"),
                item["name"].as_str().expect("name")
            );
            let secret = envelope
                .select(&Selector::default().with_name(&name).expect(&name))
                .expect(&name);
            let payload = secret.decode(&options).expect(&name);
            // The same Secret as its single-file fixture: same user data.
            let fixture = item["fixture"].as_str().expect("fixture");
            let single = std::fs::read(testdata().join("secrets").join(fixture)).expect(fixture);
            let single = Envelope::parse(&single, &options).expect(fixture);
            let single = single.secrets[0].decode(&options).expect(fixture);
            assert!(payload.userdata() == single.userdata(), "{file}: {name}");
        }
    }
}
