//! A `List` read item by item is redacted exactly as read whole: the same bytes, or the same
//! refusal.

use super::*;
use crate::envelope::cut::list_items;
use crate::options::DecodeOptions;

fn list_yaml() -> String {
    let path = crate::testdata::crate_data().join("secrets/list-all.yaml");
    std::fs::read_to_string(path).expect("list-all.yaml")
}

/// `list` with `item` (YAML lines of one item, `- ` first) added as its last item.
fn with_item(list: &str, item: &str) -> String {
    list.replacen("\nkind: List\n", &format!("\n{item}kind: List\n"), 1)
}

/// Whether the masking read `input` item by item (rather than handing it to the whole reading).
fn read_by_item(input: &str) -> bool {
    // (An input the envelope reader refuses never reaches the masking.)
    let Ok(envelope) = Envelope::parse(input.as_bytes(), &DecodeOptions::default()) else {
        return false;
    };
    let objects = Objects {
        bootstrap: envelope
            .secrets
            .iter()
            .map(|s| {
                let name = |n: Option<&str>| n.unwrap_or("").to_owned();
                (name(s.namespace()), name(s.name()))
            })
            .collect(),
        ..Objects::default()
    };
    list_items(input).is_some_and(|items| list::mask(input, &items, objects).is_some())
}

/// Both readings give the same result; the item by item one was used when `by_item` says so.
/// Redacts `input` item by item and whole, and asserts both give the same (and whether it is
/// read by item).
fn same_both_ways(name: &str, input: &str, by_item: bool) {
    let options = RedactOptions::new();
    let show = |r: Result<Vec<u8>, RedactError>| r.map_err(|e| e.to_string());
    let items = show(redact_with(input.as_bytes(), &options, true));
    let whole = show(redact_with(input.as_bytes(), &options, false));
    assert!(items == whole, "{name}: {items:?} != {whole:?}");
    assert_eq!(read_by_item(input), by_item, "{name}");
}

#[test]
fn a_list_read_item_by_item_is_redacted_as_read_whole() {
    let yaml = list_yaml();
    same_both_ways("list-all.yaml", &yaml, true);
    // A comment holding a secret one of the Secrets has (the join token).
    let commented = yaml.replacen(
        "  type: Opaque\n",
        "  # the join token is a3e30ef46c156fb7b1fa288ed16d6ffe\n  type: Opaque\n",
        1,
    );
    same_both_ways("a secret in a comment", &commented, true);
    assert!(
        !String::from_utf8(redact(commented.as_bytes(), &RedactOptions::new()).unwrap())
            .unwrap()
            .contains("a3e30ef46c156fb7b1fa288ed16d6ffe")
    );
    // A value that cannot be written in place (folded): the whole List in flow style.
    let folded = with_item(
        &yaml,
        "- kind: Secret\n  metadata:\n    name: folded\n  stringData:\n    password: >\n      Zq8vK2mLp4XwT9nBfolded\n",
    );
    same_both_ways("a folded secret", &folded, false);
    // A payload that cannot be masked: the same refusal.
    let refused = with_item(
        &yaml,
        "- kind: Secret\n  metadata:\n    name: merge\n  type: cluster.x-k8s.io/secret\n  stringData:\n    format: cloud-config\n    value: |\n      #cloud-config\n      write_files:\n      - path: /etc/rancher/rke2/config.yaml\n        content: |\n          base: &b {token: Zq8vK2mLp4XwT9nB}\n          <<: *b\n",
    );
    same_both_ways("a refusal", &refused, false);
    assert!(redact(refused.as_bytes(), &RedactOptions::new()).is_err());
    // Fields of the List itself, items not at column 0, a second `items`: read whole.
    let annotated = yaml.replacen(
        "metadata:\n  resourceVersion: \"\"\n",
        "metadata:\n  annotations:\n    password: Zq8vK2mLp4XwT9nBlist\n  resourceVersion: \"\"\n",
        1,
    );
    same_both_ways("the List's annotations", &annotated, true);
    let indented: String = yaml
        .lines()
        .map(|l| match l {
            "apiVersion: v1" | "items:" | "kind: List" | "metadata:" => format!("{l}\n"),
            _ if !l.starts_with("  resourceVersion") || l.len() > 20 => format!("  {l}\n"),
            _ => format!("{l}\n"),
        })
        .collect();
    same_both_ways("items indented", &indented, false);
    let twice = format!("{yaml}items:\n- a\n");
    same_both_ways("items twice", &twice, false);
}

#[test]
fn a_json_list_read_item_by_item_is_redacted_as_read_whole() {
    let Some(root) = crate::testdata::repository("the JSON List fixture") else {
        return;
    };
    let json = std::fs::read_to_string(root.join("testdata/secrets/list-all.json")).unwrap();
    same_both_ways("list-all.json", &json, true);
    let redacted = redact(json.as_bytes(), &RedactOptions::new()).expect("redacted");
    assert_ne!(redacted, json.as_bytes());
    let value: serde_json::Value = serde_json::from_str(&json).unwrap();
    let compact = serde_json::to_string(&value).unwrap();
    same_both_ways("compact", &compact, true);
    let twice = compact.replacen("{\"apiVersion\"", "{\"items\": [], \"apiVersion\"", 1);
    same_both_ways("items twice", &twice, false);
    // Read whole, a key given twice is refused, whichever reader would win.
    assert!(redact(twice.as_bytes(), &RedactOptions::new()).is_err());
}
