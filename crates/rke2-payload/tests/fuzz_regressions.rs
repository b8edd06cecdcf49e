//! Every saved fuzz input (`fuzz/regressions/<target>/`) and every fixture runs through the same
//! function its fuzz target calls, so plain `cargo test` guards them without nightly tools.

use std::path::{Path, PathBuf};

use rke2_payload::fuzzing::TARGETS;

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
    let mut ran = 0;
    for (name, target) in TARGETS {
        for file in files(&root().join("fuzz/regressions").join(name)) {
            let data = std::fs::read(&file).expect("read");
            target(&data);
            ran += 1;
        }
    }
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
