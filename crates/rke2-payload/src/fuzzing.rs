//! Entry points shared by the fuzz targets under `fuzz/` and by the regression tests that run
//! every saved corpus file with plain `cargo test`. Each one must return without panicking, in
//! bounded time and memory, for any input; the differential and round-trip entries assert.
//!
//! Behind the `fuzzing` feature: these functions panic by design when a property breaks.

use std::borrow::Cow;

use crate::codec::{b64, dataurl, gzip};
use crate::document::{CloudConfig, Content, File, Ignition};
use crate::envelope::Envelope;
use crate::facts::rke2::{self, Rke2Config};
use crate::facts::{Facts, pki};
use crate::options::DecodeOptions;
use crate::payload::{DeclaredFormat, Payload, ignition_gzip_wrapper};
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
];

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
/// over the same Secrets as the in-memory parser whenever both succeed.
pub fn stream(data: &[u8]) {
    let options = options();
    let mut streamed = Vec::new();
    let s = crate::envelope::for_each_secret(data, &options, |secret| {
        streamed.push((
            secret.id().clone(),
            secret.base64_len(),
            secret.value().ok().map(Cow::into_owned),
        ));
        Ok::<(), std::convert::Infallible>(())
    });
    let Ok(envelope) = Envelope::parse(data, &options) else {
        return;
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
            )
        })
        .collect();
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
    let inspect = InspectOptions {
        decode: options.clone(),
        show_secrets: false,
    };
    let mut read = Vec::new();
    for secret in &envelope.secrets {
        let Ok(payload) = secret.decode(&options) else {
            continue;
        };
        let facts = Facts::read(&payload);
        let size = measure(secret, &payload, &SizeOptions::default());
        let _ = lint_payload(&facts, &payload, Some(&size), &LintOptions::default());
        read.push((secret, ClusterFacts::of(&facts)));
        let _ = payload_report(secret, &payload, facts, &inspect);
    }
    let members: Vec<Member<'_>> = read
        .iter()
        .map(|(secret, facts)| Member {
            name: secret.name(),
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

/// Every saved fuzz input (`fuzz/regressions/<target>/`) and every fixture runs through the same
/// function its fuzz target calls, so plain `cargo test` guards them without nightly tools.
#[cfg(test)]
mod tests {
    use std::path::{Path, PathBuf};

    use super::TARGETS;

    fn root() -> PathBuf {
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
    }

    fn files(dir: &Path) -> Vec<PathBuf> {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return Vec::new();
        };
        let mut out: Vec<PathBuf> = entries
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| p.is_file())
            .collect();
        out.sort();
        out
    }

    #[test]
    fn saved_crashes_and_corpus_files_stay_fixed() {
        let mut empty = Vec::new();
        let mut ran = 0;
        for (name, target) in TARGETS {
            let saved = files(&root().join("fuzz/regressions").join(name));
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
        let mut inputs = files(&root().join("testdata/secrets"));
        inputs.extend(files(&root().join("testdata/bad")));
        inputs.extend(files(&root().join("testdata/gen/keys")));
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
