//! Helpers shared by the command-line tests.
#![allow(dead_code)]

use sha2::Digest as _;

use std::path::{Path, PathBuf};
use std::process::Command as Process;

use assert_cmd::Command;
use serde_json::Value;

/// Whether `program` runs here (`args` exit 0); under CI it must (`.ci/run` installs it, from
/// `package`). Otherwise the caller skips, and standard error says so.
pub(crate) fn have_tool(program: &str, args: &[&str], package: &str) -> bool {
    let found = Process::new(program)
        .args(args)
        .output()
        .is_ok_and(|o| o.status.success());
    assert!(
        found || std::env::var_os("CI").is_none(),
        "{program} is missing under CI ({package})"
    );
    if !found {
        eprintln!("{program} is not installed: the tests that need it are skipped");
    }
    found
}

/// The project's `testdata/`.
pub(crate) fn testdata() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../testdata")
}

/// A folder of the test's own, removed with everything in it when the value is dropped (also
/// when the test fails).
pub(crate) fn scratch() -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix("rke2-payload-test-")
        .tempdir()
        .expect("a temporary folder")
}

/// A path named `name` in a folder of its own; the folder goes when the value is dropped.
pub(crate) struct TempPath {
    path: PathBuf,
    _dir: tempfile::TempDir,
}

impl std::ops::Deref for TempPath {
    type Target = Path;
    fn deref(&self) -> &Path {
        &self.path
    }
}

impl AsRef<Path> for TempPath {
    fn as_ref(&self) -> &Path {
        &self.path
    }
}

impl AsRef<std::ffi::OsStr> for TempPath {
    fn as_ref(&self) -> &std::ffi::OsStr {
        self.path.as_os_str()
    }
}

/// A path named `name` in a new folder of its own (nothing is written there yet).
pub(crate) fn temp_path(name: &str) -> TempPath {
    let dir = scratch();
    TempPath {
        path: dir.path().join(name),
        _dir: dir,
    }
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

/// How many bootstrap Secrets `list-all.yaml` holds (the generator's index says).
pub(crate) fn bootstrap_in_list() -> usize {
    let text = std::fs::read_to_string(testdata().join("secrets/INDEX.json")).expect("index");
    let all: Vec<Value> = serde_json::from_str(&text).expect("json");
    let list = all
        .iter()
        .find(|e| e["file"] == "list-all.yaml")
        .expect("the List in the index");
    list["bootstrap_count"].as_u64().expect("bootstrap_count") as usize
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
        panic!("{program} is not installed, but CI=true requires it (.ci/run installs it)");
    }
    found
}

/// Checks user data with the real validator of its format: `ignition-validate` for Ignition,
/// `cloud-init schema` for cloud-config (after the `## template: jinja` line, which it does not
/// read). Returns whether a validator ran (none is installed outside CI).
pub(crate) fn assert_valid(format: &str, bytes: &[u8], what: &str) -> bool {
    use std::sync::OnceLock;
    static IGNITION: OnceLock<Option<String>> = OnceLock::new();
    static CLOUD_INIT: OnceLock<Option<String>> = OnceLock::new();
    let ignition = format == "ignition";
    let program = if ignition {
        IGNITION.get_or_init(|| validator("ignition-validate"))
    } else {
        CLOUD_INIT.get_or_init(|| validator("cloud-init"))
    };
    let Some(program) = program else {
        return false;
    };
    let target = temp_path("userdata");
    let body = if ignition {
        bytes
    } else {
        bytes.strip_prefix(b"## template: jinja\n").unwrap_or(bytes)
    };
    std::fs::write(&target, body).expect("write");
    let mut run = Process::new(program);
    if !ignition {
        run.args(["schema", "-c"]);
    }
    let out = run.arg(&target).output().expect("validator");
    assert!(
        out.status.success(),
        "{what}: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    true
}

/// Lowercase hex SHA-256 of `bytes`, as the reports print fingerprints.
pub(crate) fn sha256_hex(bytes: &[u8]) -> String {
    sha2::Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Standard padded base64, written here so the tests do not lean on the code under test.
pub(crate) fn b64(bytes: impl AsRef<[u8]>) -> String {
    const T: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let bytes = bytes.as_ref();
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(T[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// `namespace/name` of each item of a report's `secrets` (`-` for a missing part).
pub(crate) fn secret_names(doc: &serde_json::Value) -> Vec<String> {
    doc["secrets"]
        .as_array()
        .expect("secrets")
        .iter()
        .map(|s| {
            format!(
                "{}/{}",
                s["namespace"].as_str().unwrap_or("-"),
                s["name"].as_str().unwrap_or("-")
            )
        })
        .collect()
}
