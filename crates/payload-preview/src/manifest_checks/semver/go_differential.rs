//! The version check against Go itself: a table of versions judged by [`refusal`] and by the
//! webhooks' own rule (`tests/go/semver/main.go`: a `v`, then `github.com/blang/semver/v4`'s
//! `Parse`, from Debian's `golang-github-blang-semver-dev`, built in GOPATH mode, offline). Both
//! must accept or both refuse each version. Without Go the test prints a skip line and passes,
//! except under `CI=true`, where it fails.

use std::io::Write as _;
use std::process::{Command, Stdio};

use super::refusal;

/// Versions a template may hold, the ones users write and the edges of the grammar.
const VERSIONS: &[&str] = &[
    "v1.32.5+rke2r1",
    "v1.34.2+rke2r1+rke2r1",
    "v1.34.2",
    "1.34.2",
    "v1.34",
    "v1",
    "v",
    "V1.34.2",
    "v01.34.2",
    "v1.034.2",
    "v1.34.02",
    "v0.0.0",
    "v1.34.2-rc.1",
    "v1.34.2-rc.01",
    "v1.34.2-0",
    "v1.34.2-00",
    "v1.34.2-rc..1",
    "v1.34.2-",
    "v1.34.2+",
    "v1.34.2+rke2r1.",
    "v1.34.2+.rke2r1",
    "v1.34.2+rke2_r1",
    "v1.34.2+rke2-r1",
    "v1.34.2-rc.1+rke2r1",
    "v1.34.2-rc+1-x",
    "v1.34.2-a-b.c-d",
    "v1.34.2 ",
    " v1.34.2",
    "v1.34.2+rke2r1 ",
    "v1.34.2.1",
    "v1.34.2-rc.1.2.3",
    "v18446744073709551615.0.0",
    "v18446744073709551616.0.0",
    "v1.-1.2",
    "v1.+1.2",
    "v1.34.2+ü",
    "v1.34.2-ü",
    "v${KUBERNETES_VERSION}",
    "v1.32.5+rke2r1-x",
];

#[test]
fn judges_versions_as_cluster_api_s_webhooks() {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let built = crate::testdata::build_go(dir.path(), "semver", "golang-github-blang-semver-dev");
    let binary = match built {
        Ok(binary) => binary,
        Err(why) => {
            assert!(
                !std::env::var("CI").is_ok_and(|v| v == "true"),
                "CI=true and the Go cross-check cannot run: {why}"
            );
            let _ = writeln!(
                std::io::stderr(),
                "skipped: the Go cross-check of the version check: {why}"
            );
            return;
        }
    };
    let mut child = Command::new(&binary)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("the Go program starts");
    {
        let mut stdin = child.stdin.take().expect("stdin");
        for v in VERSIONS {
            writeln!(stdin, "{v}").expect("a version is written");
        }
    }
    let output = child.wait_with_output().expect("the Go program ends");
    let go: Vec<String> = String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(str::to_owned)
        .collect();
    assert_eq!(go.len(), VERSIONS.len(), "one Go verdict per version");
    let wrong: Vec<String> = VERSIONS
        .iter()
        .zip(&go)
        .filter(|(v, go)| (go.as_str() == "ok") != refusal(v).is_none())
        .map(|(v, go)| format!("{v:?}: Go says {go:?}, the check {:?}", refusal(v)))
        .collect();
    assert!(wrong.is_empty(), "{wrong:#?}");
}
