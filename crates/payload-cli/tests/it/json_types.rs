//! The JSON documents read back into the library's own types, and write again as they were:
//! an embedding tool can use `rke2_payload`'s report types on our output.

use serde_json::Value;

use crate::common::*;

fn output(args: &[&str]) -> Vec<u8> {
    let out = cmd().args(args).output().expect("run");
    assert!(
        matches!(out.status.code(), Some(0 | 1)),
        "{args:?}: {out:?}"
    );
    out.stdout
}

/// `bytes` read as `T` and written again give the same JSON value.
fn round_trip<T: serde::de::DeserializeOwned + serde::Serialize>(bytes: &[u8], what: &str) -> T {
    let typed: T = serde_json::from_slice(bytes).unwrap_or_else(|e| panic!("{what}: {e}"));
    let again = serde_json::to_value(&typed).expect("JSON");
    let original: Value = serde_json::from_slice(bytes).expect("JSON");
    assert_eq!(again, original, "{what}");
    typed
}

#[test]
fn inspect_size_and_lint_json_read_back_into_the_library_types() {
    for file in [
        "secrets/list-all.json",
        "secrets/list-all.yaml",
        "secrets/init-ignition-extras.yaml",
    ] {
        let path = testdata().join(file);
        let path = path.to_str().expect("path");
        for show in [&[][..], &["--show-secrets"][..]] {
            let mut args = vec!["inspect", "--output", "json", path];
            args.extend(show);
            let report: rke2_payload::InspectReport =
                round_trip(&output(&args), &format!("inspect {file}"));
            assert!(!report.secrets.is_empty());
        }
        let size: rke2_payload::SizeDocument = round_trip(
            &output(&["size", "--output", "json", path]),
            &format!("size {file}"),
        );
        assert_eq!(size.schema, rke2_payload::SIZE_SCHEMA);
        let lint: rke2_payload::LintReport = round_trip(
            &output(&[
                "lint",
                "--output",
                "json",
                "--cloud-init-schema",
                "none",
                path,
            ]),
            &format!("lint {file}"),
        );
        // Every finding names a check of the table.
        for f in lint.secrets.iter().flat_map(|s| &s.findings) {
            assert_eq!(rke2_payload::Check::from_id(f.id()), Some(f.check));
        }
    }
}
