//! The JSON patch applier against Go itself: a table of patches applied by [`apply`] and by
//! `github.com/evanphx/json-patch/v5` with its default options, as Cluster API applies a
//! ClusterClass patch (`tests/go/jsonpatch/main.go`, built here with `go build`); the patched
//! documents must be equal as JSON, or both sides must fail.
//!
//! Where the applier differs on purpose, the case is listed in [`KNOWN`] with the reason, and
//! the test fails if a listed case stops differing, so the list stays true.
//!
//! Go and the json-patch sources come from Debian's `golang-go` and
//! `golang-github-evanphx-json-patch-dev` (built in GOPATH mode, offline, against
//! `/usr/share/gocode`). Without them the test prints a skip line and passes, except under
//! `CI=true`, where it fails.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::{Value, json};

use super::{Op, apply};

/// The documents the cases start from.
const SPEC: &str = r#"{"spec": {"a": [1, 2, 3], "b": {"x": 1, "y": [{"n": "p"}, {"n": "q"}]},
    "s": "text", "z": null}, "a/b": 1, "c~d": 2, "": 3, "1": "one"}"#;

/// (name, patch) applied to [`SPEC`].
const CASES: &[(&str, &str)] = &[
    // add
    (
        "add_member",
        r#"[{"op": "add", "path": "/spec/c", "value": 1}]"#,
    ),
    (
        "add_existing_member_replaces",
        r#"[{"op": "add", "path": "/spec/s", "value": "new"}]"#,
    ),
    (
        "add_array_index",
        r#"[{"op": "add", "path": "/spec/a/1", "value": 9}]"#,
    ),
    (
        "add_array_first",
        r#"[{"op": "add", "path": "/spec/a/0", "value": 0}]"#,
    ),
    (
        "add_array_dash_appends",
        r#"[{"op": "add", "path": "/spec/a/-", "value": 4}]"#,
    ),
    (
        "add_array_index_length_appends",
        r#"[{"op": "add", "path": "/spec/a/3", "value": 4}]"#,
    ),
    (
        "add_array_past_the_end",
        r#"[{"op": "add", "path": "/spec/a/5", "value": 4}]"#,
    ),
    (
        "add_array_negative_index",
        r#"[{"op": "add", "path": "/spec/a/-1", "value": 9}]"#,
    ),
    (
        "add_array_negative_first",
        r#"[{"op": "add", "path": "/spec/a/-3", "value": 9}]"#,
    ),
    (
        "add_array_negative_too_far",
        r#"[{"op": "add", "path": "/spec/a/-5", "value": 9}]"#,
    ),
    (
        "add_array_leading_zero",
        r#"[{"op": "add", "path": "/spec/a/01", "value": 9}]"#,
    ),
    (
        "add_missing_parent",
        r#"[{"op": "add", "path": "/spec/nope/x", "value": 1}]"#,
    ),
    (
        "add_under_a_scalar",
        r#"[{"op": "add", "path": "/spec/s/x", "value": 1}]"#,
    ),
    (
        "add_under_null",
        r#"[{"op": "add", "path": "/spec/z/x", "value": 1}]"#,
    ),
    (
        "add_nested_value",
        r#"[{"op": "add", "path": "/spec/c", "value": {"d": [1, {"e": null}], "f": "g"}}]"#,
    ),
    (
        "add_null",
        r#"[{"op": "add", "path": "/spec/c", "value": null}]"#,
    ),
    ("add_without_value", r#"[{"op": "add", "path": "/spec/c"}]"#),
    (
        "add_root",
        r#"[{"op": "add", "path": "", "value": {"k": 1}}]"#,
    ),
    (
        "add_dash_key_of_an_object",
        r#"[{"op": "add", "path": "/spec/b/-", "value": 1}]"#,
    ),
    (
        "add_into_array_of_objects",
        r#"[{"op": "add", "path": "/spec/b/y/1/m", "value": "r"}]"#,
    ),
    // Escaped pointers.
    (
        "escaped_slash",
        r#"[{"op": "replace", "path": "/a~1b", "value": 10}]"#,
    ),
    (
        "escaped_tilde",
        r#"[{"op": "replace", "path": "/c~0d", "value": 20}]"#,
    ),
    (
        "escape_order",
        r#"[{"op": "add", "path": "/spec/~01", "value": "tilde-one"}]"#,
    ),
    (
        "empty_key",
        r#"[{"op": "replace", "path": "/", "value": 30}]"#,
    ),
    (
        "numeric_key_of_an_object",
        r#"[{"op": "replace", "path": "/1", "value": "uno"}]"#,
    ),
    // remove
    ("remove_member", r#"[{"op": "remove", "path": "/spec/s"}]"#),
    (
        "remove_array_item",
        r#"[{"op": "remove", "path": "/spec/a/0"}]"#,
    ),
    (
        "remove_array_negative",
        r#"[{"op": "remove", "path": "/spec/a/-1"}]"#,
    ),
    (
        "remove_missing",
        r#"[{"op": "remove", "path": "/spec/nope"}]"#,
    ),
    (
        "remove_array_dash",
        r#"[{"op": "remove", "path": "/spec/a/-"}]"#,
    ),
    (
        "remove_array_past_the_end",
        r#"[{"op": "remove", "path": "/spec/a/3"}]"#,
    ),
    ("remove_root", r#"[{"op": "remove", "path": ""}]"#),
    (
        "remove_null_member",
        r#"[{"op": "remove", "path": "/spec/z"}]"#,
    ),
    // replace
    (
        "replace_member",
        r#"[{"op": "replace", "path": "/spec/b/x", "value": {"now": "an object"}}]"#,
    ),
    (
        "replace_missing",
        r#"[{"op": "replace", "path": "/spec/nope", "value": 1}]"#,
    ),
    (
        "replace_array_item",
        r#"[{"op": "replace", "path": "/spec/a/2", "value": "three"}]"#,
    ),
    (
        "replace_array_negative",
        r#"[{"op": "replace", "path": "/spec/a/-1", "value": "last"}]"#,
    ),
    (
        "replace_array_past_the_end",
        r#"[{"op": "replace", "path": "/spec/a/3", "value": 4}]"#,
    ),
    (
        "replace_array_dash",
        r#"[{"op": "replace", "path": "/spec/a/-", "value": 4}]"#,
    ),
    (
        "replace_null_member",
        r#"[{"op": "replace", "path": "/spec/z", "value": "set"}]"#,
    ),
    (
        "replace_root",
        r#"[{"op": "replace", "path": "", "value": [1]}]"#,
    ),
    // Sequences: in order, all or nothing.
    (
        "sequence_in_order",
        r#"[{"op": "add", "path": "/spec/c", "value": []}, {"op": "add", "path": "/spec/c/-", "value": 1},
           {"op": "add", "path": "/spec/c/0", "value": 0}, {"op": "remove", "path": "/spec/a"},
           {"op": "replace", "path": "/spec/c/1", "value": "one"}]"#,
    ),
    (
        "sequence_fails_whole",
        r#"[{"op": "add", "path": "/spec/c", "value": 1}, {"op": "remove", "path": "/spec/nope"}]"#,
    ),
    ("empty_patch", "[]"),
    // move, copy and test (not in a ClusterClass: its webhook allows add, replace and remove).
    (
        "move_member",
        r#"[{"op": "move", "from": "/spec/s", "path": "/spec/t"}]"#,
    ),
    (
        "move_missing",
        r#"[{"op": "move", "from": "/spec/nope", "path": "/spec/t"}]"#,
    ),
    (
        "copy_member",
        r#"[{"op": "copy", "from": "/spec/b", "path": "/spec/c"}]"#,
    ),
    (
        "copy_missing",
        r#"[{"op": "copy", "from": "/spec/nope", "path": "/spec/c"}]"#,
    ),
    (
        "test_equal",
        r#"[{"op": "test", "path": "/spec/a", "value": [1, 2, 3]}]"#,
    ),
    (
        "test_unequal",
        r#"[{"op": "test", "path": "/spec/a", "value": [1, 2]}]"#,
    ),
    // Malformed operations.
    ("unknown_op", r#"[{"op": "frob", "path": "/spec/s"}]"#),
    (
        "path_without_slash",
        r#"[{"op": "add", "path": "spec/c", "value": 1}]"#,
    ),
    (
        "index_overflow",
        r#"[{"op": "add", "path": "/spec/a/99999999999999999999", "value": 1}]"#,
    ),
    (
        "index_not_a_number",
        r#"[{"op": "replace", "path": "/spec/a/x", "value": 1}]"#,
    ),
];

/// The cases where the applier and Go differ: (name, why). Each must still differ. Cluster
/// API's ClusterClass webhook (`validateJSONPatches`) admits only `add`, `replace` and
/// `remove`, paths that start with `/spec/`, and no array index but `0` and `-` in an `add`
/// (none in `replace` and `remove`), so none of these reaches the applier from a ClusterClass
/// the API server accepted.
const KNOWN: &[(&str, &str)] = &[
    (
        "add_array_negative_index",
        "evanphx counts a negative add index from the length plus one (-1 appends), the applier from the length (-1 inserts before the last); the webhook admits no negative index",
    ),
    (
        "add_array_negative_first",
        "as add_array_negative_index (-3 of three items is before the second with evanphx)",
    ),
    (
        "add_root",
        "the applier sets the whole document for an add at the root, evanphx refuses it; the webhook admits only paths under /spec/",
    ),
    (
        "replace_root",
        "the applier sets the whole document; evanphx v5.2 (Debian's) refuses, later v5 releases replace it with an object or an array; the webhook admits only paths under /spec/",
    ),
    (
        "path_without_slash",
        "the applier refuses a path that does not start with /, evanphx ignores its first token (spec/c adds c at the root); the webhook admits only paths under /spec/",
    ),
    (
        "move_member",
        "move is refused: a ClusterClass patch may only add, replace and remove (its webhook says so)",
    ),
    (
        "copy_member",
        "copy is refused: a ClusterClass patch may only add, replace and remove",
    ),
    (
        "test_equal",
        "test is refused: a ClusterClass patch may only add, replace and remove",
    ),
];

/// What one side made of a case.
#[derive(Debug, Clone, PartialEq)]
enum Outcome {
    /// The patched document.
    Doc(Value),
    /// An error, with its message.
    Error(String),
}

impl Outcome {
    /// Equal documents (as JSON values), or both errors.
    fn agrees(&self, other: &Outcome) -> bool {
        match (self, other) {
            (Outcome::Doc(a), Outcome::Doc(b)) => a == b,
            (Outcome::Error(_), Outcome::Error(_)) => true,
            _ => false,
        }
    }
}

/// A line on standard error that the test harness does not capture.
fn say(line: &str) {
    use std::io::Write as _;
    let _ = writeln!(std::io::stderr(), "{line}");
}

/// Builds the Go applier into `dir`.
fn build_go(dir: &Path) -> Result<PathBuf, String> {
    crate::testdata::build_go(dir, "jsonpatch", "golang-github-evanphx-json-patch-dev")
}

/// Runs `cases` ({doc, patch}) through the Go applier.
fn run_go(binary: &Path, cases: &[Value]) -> Vec<Outcome> {
    let mut child = Command::new(binary)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the Go applier starts");
    let input = serde_json::to_vec(cases).expect("the cases are JSON");
    {
        use std::io::Write as _;
        let mut stdin = child.stdin.take().expect("stdin");
        stdin.write_all(&input).expect("the cases are written");
    }
    let output = child.wait_with_output().expect("the Go applier ends");
    assert!(
        output.status.success(),
        "the Go applier fails: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let results: Vec<Value> =
        serde_json::from_slice(&output.stdout).expect("the Go applier writes JSON");
    results
        .into_iter()
        .map(|r| match (r.get("doc"), r.get("error")) {
            (Some(doc), _) => Outcome::Doc(doc.clone()),
            (_, Some(Value::String(e))) => Outcome::Error(e.clone()),
            _ => panic!("a result of the Go applier is neither a document nor an error: {r}"),
        })
        .collect()
}

/// The operations of a patch as the applier takes them (`from` has no place: move and copy
/// are refused by name).
fn ops(patch: &Value) -> Vec<Op> {
    patch
        .as_array()
        .expect("a patch is an array")
        .iter()
        .map(|op| Op {
            op: op["op"].as_str().unwrap_or_default().to_owned(),
            path: op["path"].as_str().unwrap_or_default().to_owned(),
            value: op.get("value").cloned(),
        })
        .collect()
}

#[test]
fn the_table_is_large_and_its_names_unique() {
    assert!(CASES.len() >= 30, "{} cases", CASES.len());
    let mut names: Vec<&str> = CASES.iter().map(|c| c.0).collect();
    names.sort_unstable();
    names.dedup();
    assert_eq!(names.len(), CASES.len(), "a case name is used twice");
    for (known, _) in KNOWN {
        assert!(names.contains(known), "KNOWN names no case {known}");
    }
}

#[test]
fn applies_as_evanphx_json_patch() {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let binary = match build_go(dir.path()) {
        Ok(binary) => binary,
        Err(why) => {
            assert!(
                !std::env::var("CI").is_ok_and(|v| v == "true"),
                "CI=true and the Go cross-check cannot run: {why}"
            );
            return say(&format!(
                "skipped: the Go cross-check of the JSON patch applier: {why}"
            ));
        }
    };
    let doc: Value = serde_json::from_str(SPEC).expect("SPEC is JSON");
    let patches: Vec<Value> = CASES
        .iter()
        .map(|(name, p)| serde_json::from_str(p).unwrap_or_else(|e| panic!("{name}: {e}")))
        .collect();
    let input: Vec<Value> = patches
        .iter()
        .map(|patch| json!({"doc": doc, "patch": patch}))
        .collect();
    let go = run_go(&binary, &input);
    assert_eq!(go.len(), CASES.len(), "one Go result per case");
    let mut wrong = Vec::new();
    let mut agreed = 0;
    for (((name, text), patch), go) in CASES.iter().zip(&patches).zip(&go) {
        let mut patched = doc.clone();
        let ours = match apply(&mut patched, &ops(patch)) {
            Ok(()) => Outcome::Doc(patched),
            Err(e) => {
                assert_eq!(patched, doc, "{name}: a failed patch changes nothing");
                Outcome::Error(e.what)
            }
        };
        let known = KNOWN.iter().find(|(k, _)| k == name);
        match (ours.agrees(go), known) {
            (true, None) => agreed += 1,
            (false, Some(_)) => {}
            (true, Some((_, why))) => wrong.push(format!(
                "{name}: listed as a known difference ({why}) but both give {ours:?}: remove it from KNOWN"
            )),
            (false, None) => wrong.push(format!(
                "{name}: {text}\n    the applier: {ours:?}\n    Go:          {go:?}"
            )),
        }
    }
    say(&format!(
        "JSON patch applier against evanphx/json-patch: {} cases, {agreed} identical, {} known differences",
        CASES.len(),
        KNOWN.len()
    ));
    assert!(wrong.is_empty(), "\n{}", wrong.join("\n"));
}
