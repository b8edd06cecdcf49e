//! Micro-benchmarks of the public entry points, layer by layer, on the project's fixtures.
//!
//!     cargo bench -p rke2-payload --bench layers

use std::hint::black_box;
use std::path::PathBuf;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use rke2_payload::{
    DecodeOptions, Envelope, InspectOptions, Inspector, LintOptions, Linter, SizeOptions, Sizer,
    for_each_secret,
};

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
                    Ok::<(), std::convert::Infallible>(())
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
    let value_len = gz.secrets[0].value().expect("value").len();
    g.throughput(Throughput::Bytes(value_len as u64));
    g.bench_function("decode (base64, inflate) init cloud-config", |b| {
        b.iter(|| {
            black_box(
                gz.secrets[0]
                    .decode(&options)
                    .expect("decode")
                    .userdata()
                    .len(),
            )
        })
    });

    // Bare user data: the document, the RKE2 facts and the certificates, without the envelope.
    for name in [
        "init-cloud-config-online.userdata",
        "init-ignition-online.userdata",
    ] {
        let userdata = fixture(name);
        let env = Envelope::parse(&userdata, &options).expect("user data");
        g.throughput(Throughput::Bytes(userdata.len() as u64));
        g.bench_function(format!("inspect {name}"), |b| {
            b.iter(|| {
                // A new inspector each time: nothing is kept between iterations.
                let inspector = Inspector::new(InspectOptions::new());
                black_box(inspector.inspect(&env.secrets[0]).expect("inspect"))
            })
        });
    }

    let init = fixture("init-cloud-config-gzip-online.yaml");
    let env = Envelope::parse(&init, &options).expect("init");
    g.throughput(Throughput::Bytes(init.len() as u64));
    g.bench_function("inspect init (gzip cloud-config)", |b| {
        b.iter(|| {
            let inspector = Inspector::new(InspectOptions::new());
            black_box(inspector.inspect(&env.secrets[0]).expect("inspect"))
        })
    });
    g.bench_function("size init (gzip cloud-config)", |b| {
        b.iter(|| {
            // A new sizer each time: nothing is kept between iterations.
            let sizer = Sizer::new(SizeOptions::new().with_decode(options.clone()));
            black_box(sizer.measure(&env.secrets[0]).expect("size"))
        })
    });
    g.bench_function("lint init (gzip cloud-config)", |b| {
        b.iter(|| {
            let linter = Linter::new(LintOptions::new().with_decode(options.clone()));
            black_box(
                linter
                    .lint_stream(&init[..], &rke2_payload::Selector::default(), 1)
                    .expect("lint"),
            )
        })
    });
    g.finish();
}

criterion_group!(benches, layers);
criterion_main!(benches);
