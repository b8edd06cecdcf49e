//! The check of a `List` one item at a time ([`crate::envelope::cut`]): the checks of the whole
//! text ([`super::compared`]), in its order, with one item of each side read at a time, so that
//! neither side is held read whole.
//!
//! Read whole, both sides are parsed first, then compared key by key (the List's own keys in
//! order, its items among them where `items` stands), then every string of the output is
//! searched. Here each side's List without its items is parsed, then the items, each side's
//! item `i` alone; a difference found stops the comparing but not the reading (a later item
//! that does not read would have stopped the whole reader first). Anything that the whole
//! reading could take differently (the sides cut otherwise, a part that does not read alone,
//! counts that near the reader's limits) gives `None`, and the caller reads the whole.

use std::rc::Rc;

use serde_json::{Map, Value};

use super::{
    Known, Leftovers, Refusal, changed, compare, key_path, masked_from, parse_all_within, strings,
    yaml_budget,
};
use crate::envelope::cut::{Items, list_items};
use crate::error::Syntax;

/// [`super::compared`] of a `List` item by item; `None` when it must be read whole.
pub(super) fn compared(input: &str, output: &str, known: &Known) -> Option<Result<(), Refusal>> {
    let (before, after) = (
        Side::new(input, list_items(input)?)?,
        Side::new(output, list_items(output)?)?,
    );
    if before.items.syntax != after.items.syntax
        || before.items.ranges.len() != after.items.ranges.len()
    {
        return None;
    }
    if let Err(changed) = compare_list(&before, &after)? {
        return Some(Err(changed));
    }
    let mut search = Leftovers::new(known);
    let root: Rc<str> = Rc::from("document 1");
    for (key, value) in &after.around {
        let path = key_path(&root, key);
        search.text(&path, key, false);
        if key == "items" {
            for i in 0..after.items.ranges.len() {
                let item = after.item(i)?;
                let at = super::deeper(&path, format_args!("[{i}]"));
                strings(&item, &at, 0, &mut |p, t, e| search.text(p, t, e));
            }
        } else {
            strings(value, &path, 0, &mut |p, t, e| search.text(p, t, e));
        }
    }
    Some(search.found.map_or(Ok(()), Err))
}

/// One side: its text, its items, the List around them read.
struct Side<'t> {
    text: &'t str,
    items: Items,
    around: Map<String, Value>,
}

impl<'t> Side<'t> {
    fn new(text: &'t str, items: Items) -> Option<Self> {
        // Read whole, a JSON text is read as JSON only if it is JSON throughout (a text the
        // scanner cuts and serde_json refuses, such as a comma before `]`, is read as YAML).
        if items.syntax == Syntax::Json {
            let trimmed = text.trim_start_matches(['\u{feff}', ' ', '\t', '\r', '\n']);
            serde_json::from_str::<serde::de::IgnoredAny>(trimmed).ok()?;
        }
        let around = items.around(text);
        let value = match items.syntax {
            Syntax::Json => serde_json::from_str(&around).ok()?,
            Syntax::Yaml => match parse_all_within(&around, text.len())?.as_mut_slice() {
                [doc] => std::mem::take(doc),
                _ => return None,
            },
        };
        let Value::Object(around) = value else {
            return None;
        };
        // Where the items stood: `items:` with no value, or `[]`.
        match (items.syntax, around.get("items")) {
            (Syntax::Yaml, Some(Value::Null)) => {}
            (Syntax::Json, Some(Value::Array(a))) if a.is_empty() => {}
            _ => return None,
        }
        Some(Side {
            text,
            items,
            around,
        })
    }

    /// Item `i`, read alone under the whole text's limits.
    fn item(&self, i: usize) -> Option<Value> {
        let text = &self.text[self.items.ranges[i].clone()];
        match self.items.syntax {
            Syntax::Json => serde_json::from_str(text).ok(),
            Syntax::Yaml => match parse_all_within(text, self.text.len())?.as_mut_slice() {
                [Value::Array(one)] if one.len() == 1 => one.pop(),
                _ => None,
            },
        }
    }
}

/// Nodes and the deepest nesting of a value (a key is a node).
fn count(value: &Value, depth: usize, counts: &mut (usize, usize)) {
    counts.0 += 1;
    counts.1 = counts.1.max(depth);
    match value {
        Value::Array(items) => items.iter().for_each(|v| count(v, depth + 1, counts)),
        Value::Object(map) => map.values().for_each(|v| {
            counts.0 += 1;
            count(v, depth + 1, counts);
        }),
        _ => {}
    }
}

/// Whether a text of `len` bytes that reads to `counts` is far from every limit of the
/// whole-text reader ([`yaml_budget`]), so that reading it whole would read it alike.
fn far_from_limits(counts: (usize, usize), len: usize) -> bool {
    let budget = yaml_budget(len);
    let (nodes, deepest) = counts;
    // Events: at most two a node, and the stream's and the document's.
    nodes.saturating_mul(3).saturating_add(64) <= budget.max_nodes.min(budget.max_events)
        && deepest.saturating_add(8) <= budget.max_depth
}

/// The List's keys compared in order, its items where `items` stands, as [`compare`] compares
/// the whole; every item of both sides is read, also past a difference. `None` when a part
/// does not read, or the counts near the limits.
fn compare_list(before: &Side<'_>, after: &Side<'_>) -> Option<Result<(), Refusal>> {
    let (x, y) = (&before.around, &after.around);
    let mut path = String::from("document 1");
    let mut first: Option<Refusal> = None;
    if x.len() != y.len()
        || !x
            .keys()
            .zip(y.keys())
            .all(|(a, b)| a == b || masked_from(a, b))
    {
        first = Some(changed(&path));
    }
    let (mut counts_x, mut counts_y) = ((0, 0), (0, 0));
    count(&Value::Object(x.clone()), 0, &mut counts_x);
    count(&Value::Object(y.clone()), 0, &mut counts_y);
    for ((key, va), vb) in x.iter().zip(y.values()) {
        let len = path.len();
        path.push('.');
        path.push_str(&crate::codec::text::shorten(key, 60));
        if key == "items" {
            for i in 0..before.items.ranges.len() {
                let (p, q) = (before.item(i)?, after.item(i)?);
                // Where it stands in the whole: in the items' list, in the List.
                count(&p, 2, &mut counts_x);
                count(&q, 2, &mut counts_y);
                if first.is_none() {
                    let at = path.len();
                    path.push_str(&format!("[{i}]"));
                    first = compare(&p, &q, &mut path, 0).err();
                    path.truncate(at);
                }
            }
        } else if first.is_none() {
            first = compare(va, vb, &mut path, 0).err();
        }
        path.truncate(len);
    }
    if !far_from_limits(counts_x, before.text.len()) || !far_from_limits(counts_y, after.text.len())
    {
        return None;
    }
    Some(first.map_or(Ok(()), Err))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The item by item check finds what the whole check finds: the same refusal, at the
    /// same place, or none.
    #[test]
    fn the_item_by_item_check_finds_what_the_whole_check_finds() {
        let path = crate::testdata::crate_data().join("secrets/list-all.yaml");
        let input = std::fs::read_to_string(path).expect("list-all.yaml");
        let output = String::from_utf8(
            crate::redact::redact(input.as_bytes(), &crate::redact::RedactOptions::new())
                .expect("redacted"),
        )
        .expect("text");
        let uid = "38bffcb5-c407-5745-9fa4-3e09ca66bb28";
        let mut known = Known::default();
        known.add("Zq8vK2mLp4XwT9nBnever");
        let mut leaky = Known::default();
        leaky.add(uid);
        let changed_type =
            output.replacen("  type: cluster.x-k8s.io/secret\n", "  type: Opaque\n", 2);
        let changed_kind = output.replacen("\nkind: List\n", "\nkind: Lisx\n", 1);
        let longer = output.replacen("\nkind: List\n", "\n- kind: Secret\nkind: List\n", 1);
        for (name, out, known, found) in [
            ("as written", output.as_str(), &known, None),
            ("a secret left", &output, &leaky, Some("items[0].metadata")),
            (
                "a type changed",
                &changed_type,
                &known,
                Some("items[0].type"),
            ),
            (
                "the List changed",
                &changed_kind,
                &known,
                Some("document 1.kind"),
            ),
            ("an item more", &longer, &known, None),
        ] {
            let full = || {
                let budget = super::super::budget(input.len());
                super::super::INFLATE_BUDGET.with(|b| b.set(Some(budget)));
            };
            full();
            let whole = super::super::compared(input.as_bytes(), out.as_bytes(), known, false);
            full();
            match compared(&input, out, known) {
                Some(items) => {
                    assert_eq!(items, whole, "{name}");
                    let text = format!("{items:?}");
                    assert!(
                        found.is_some_and(|f| text.contains(f)) || items.is_ok(),
                        "{name}: {text}"
                    );
                }
                None => assert!(found.is_none() && whole.is_err(), "{name}: {whole:?}"),
            }
        }
    }
}
