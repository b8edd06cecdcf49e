//! Micro-benchmarks, one per decoding layer, on the project's fixtures.
//!
//!     cargo bench -p rke2-payload --bench layers

use std::borrow::Cow;
use std::hint::black_box;
use std::path::PathBuf;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use rke2_payload::document::{CloudConfig, Document, Ignition};
use rke2_payload::envelope::for_each_secret;
use rke2_payload::payload::{DeclaredFormat, Payload};
use rke2_payload::report::{InspectOptions, inspect};
use rke2_payload::{DecodeOptions, Envelope, gzip, pki};

fn fixture(name: &str) -> Vec<u8> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../testdata/secrets")
        .join(name);
    std::fs::read(path).expect("fixture")
}

fn layers(c: &mut Criterion) {
    let options = DecodeOptions::default();
    let mut g = c.benchmark_group("layers");

    for name in ["list-all.yaml", "list-all.json"] {
        let input = fixture(name);
        g.throughput(Throughput::Bytes(input.len() as u64));
        g.bench_function(format!("envelope stream {name}"), |b| {
            b.iter(|| {
                let mut n = 0u64;
                for_each_secret(&input[..], &options, |s| {
                    n += s.base64_len();
                    Ok(())
                })
                .expect("stream");
                black_box(n)
            })
        });
        g.bench_function(format!("envelope parse {name}"), |b| {
            b.iter(|| {
                black_box(
                    Envelope::parse(&input, &options)
                        .expect("parse")
                        .secrets
                        .len(),
                )
            })
        });
    }

    let list = fixture("list-all.json");
    let envelope = Envelope::parse(&list, &options).expect("parse");
    let total: u64 = envelope.secrets.iter().map(|s| s.base64_len()).sum();
    g.throughput(Throughput::Bytes(total));
    g.bench_function("base64 values", |b| {
        b.iter(|| {
            for s in &envelope.secrets {
                black_box(s.value().expect("value"));
            }
        })
    });

    let gz_input = fixture("init-cloud-config-gzip-online.yaml");
    let gz = Envelope::parse(&gz_input, &options).expect("gz");
    let value = gz.secrets[0].value().expect("value").into_owned();
    g.throughput(Throughput::Bytes(value.len() as u64));
    g.bench_function("inflate init cloud-config", |b| {
        b.iter(|| black_box(gzip::inflate(&value, 1 << 24).expect("inflate")))
    });

    let cc = String::from_utf8(fixture("init-cloud-config-online.userdata")).expect("utf8");
    g.throughput(Throughput::Bytes(cc.len() as u64));
    g.bench_function("cloud-config init", |b| {
        b.iter(|| black_box(CloudConfig::parse(&cc).expect("parse").files.len()))
    });

    let ign = String::from_utf8(fixture("init-ignition-online.userdata")).expect("utf8");
    g.throughput(Throughput::Bytes(ign.len() as u64));
    g.bench_function("ignition init", |b| {
        b.iter(|| black_box(Ignition::parse(&ign).expect("parse").files.len()))
    });

    let payload = Payload::decode(
        Cow::Borrowed(cc.as_bytes()),
        DeclaredFormat::CloudConfig,
        &options,
    )
    .expect("payload");
    let document = Document::parse(&payload).expect("document");
    let pem: u64 = document.files().iter().map(|f| f.size()).sum();
    g.throughput(Throughput::Bytes(pem));
    g.bench_function("certificates init", |b| {
        b.iter(|| black_box(pki::scan(document.files()).certificates.len()))
    });

    let init = fixture("init-cloud-config-gzip-online.yaml");
    let env = Envelope::parse(&init, &options).expect("init");
    g.throughput(Throughput::Bytes(init.len() as u64));
    g.bench_function("inspect init (gzip cloud-config)", |b| {
        b.iter(|| black_box(inspect(&env.secrets[0], &InspectOptions::default()).expect("inspect")))
    });
    g.finish();
}

criterion_group!(benches, layers);
criterion_main!(benches);
