//! Helpers shared by the command-line tests.
#![allow(dead_code)]

use std::path::PathBuf;
use std::process::Command as Process;

use assert_cmd::Command;
use serde_json::Value;

/// The project's `testdata/`.
pub(crate) fn testdata() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../testdata")
}

/// The `rke2-payload` binary.
pub(crate) fn cmd() -> Command {
    Command::cargo_bin("rke2-payload").expect("binary")
}

/// The single-Secret entries of the fixture generator's index.
pub(crate) fn fixtures() -> Vec<Value> {
    let text = std::fs::read_to_string(testdata().join("secrets/INDEX.json")).expect("index");
    let all: Vec<Value> = serde_json::from_str(&text).expect("json");
    all.into_iter().filter(|e| e["kind"] == "Secret").collect()
}

/// The path of an external validator, if installed; under `CI=true` a missing one fails.
pub(crate) fn validator(program: &str) -> Option<String> {
    let found = Process::new("sh")
        .args(["-c", &format!("command -v {program}")])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned());
    if found.is_none() && std::env::var("CI").as_deref() == Ok("true") {
        panic!(
            "{program} is not installed, but CI=true requires it (apt-get install ignition cloud-init)"
        );
    }
    found
}
