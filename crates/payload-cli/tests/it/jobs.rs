//! Streaming on several threads gives the same output, byte for byte, as on one: the pool only
//! starts for inputs larger than one batch, so the inputs here are the fixture List repeated.

use crate::common::{cmd, testdata};
use serde_json::Value;

/// The fixture List's items (bootstrap Secrets and others) repeated `times`, as one JSON List.
fn big_json(times: usize) -> String {
    let text = std::fs::read_to_string(testdata().join("secrets/list-all.json")).expect("list");
    let list: Value = serde_json::from_str(&text).expect("JSON");
    let items = list["items"].as_array().expect("items");
    let mut all = Vec::new();
    for i in 0..times {
        for item in items {
            let mut item = item.clone();
            let name = format!("{}-{i}", item["metadata"]["name"].as_str().unwrap_or("x"));
            item["metadata"]["name"] = Value::String(name);
            all.push(item);
        }
    }
    serde_json::json!({"apiVersion": "v1", "kind": "List", "items": all}).to_string()
}

/// The fixture YAML List repeated `times` as a multi-document stream.
fn big_yaml(times: usize) -> String {
    let text = std::fs::read_to_string(testdata().join("secrets/list-all.yaml")).expect("list");
    vec![text; times].join("---\n")
}

fn run(args: &[&str], input: &str, jobs: &str) -> (Option<i32>, Vec<u8>) {
    let out = cmd()
        .args(args)
        .args(["--jobs", jobs, "-"])
        .write_stdin(input.to_owned())
        .output()
        .expect("run");
    (out.status.code(), out.stdout)
}

#[test]
fn every_command_gives_the_same_output_on_one_thread_and_on_several() {
    for (what, input) in [("JSON", big_json(4)), ("YAML", big_yaml(4))] {
        for args in [
            &["inspect", "--output", "json"][..],
            &["inspect"],
            &["size", "--output", "json"],
            &["size", "--output", "junit"],
            &["lint", "--output", "json"],
        ] {
            let one = run(args, &input, "1");
            assert!(one.1.len() > 10_000, "{what} {args:?}: little output");
            for jobs in ["2", "3"] {
                let many = run(args, &input, jobs);
                assert_eq!(one.0, many.0, "{what} {args:?} --jobs {jobs}: exit code");
                assert!(
                    one.1 == many.1,
                    "{what} {args:?} --jobs {jobs}: output differs"
                );
            }
        }
        // Every bootstrap Secret of the 4 copies is there.
        let (_, json) = run(&["inspect", "--output", "json"], &input, "2");
        let doc: Value = serde_json::from_slice(&json).expect("JSON");
        let secrets = doc["secrets"].as_array().expect("secrets").len();
        assert_eq!(secrets % 4, 0, "{what}: {secrets}");
        assert!(secrets >= 4 * 25, "{what}: {secrets}");
    }
}
