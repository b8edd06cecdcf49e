//! A `List` cut into its items where they stand in the text (not dedented, unlike the
//! streaming splitter's chunks), for a reader that works on one item at a time and writes the
//! text back in place (`redact`, which so holds one item's tree at a time, not the List's).
//!
//! - YAML: one document every line of which is in the kubectl shape ([`super::lines`]), with
//!   `items:` once at column 0 and its items at column 0 (`- `), as `kubectl get -o yaml`
//!   writes a List. By the shape's argument, an item's lines (from its `- ` to the next item or
//!   the next key at column 0) read alone as a sequence of that one item, as they read in the
//!   List; what is left of the text reads as the List with `items:` and no value.
//! - JSON: the items the structural scanner finds ([`super::chunks`]) in a top-level object
//!   with the key `items` once; what is left reads as the List with `"items": []`.
//!
//! Anything else is `None`, and the caller reads the text whole.

use std::ops::Range;

use super::chunks::{JsonItems, Piece};
use super::lines::{Gate, Line};
use crate::error::Syntax;

/// The items of a `List`, where they stand in its text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Items {
    /// The syntax of the text.
    pub(crate) syntax: Syntax,
    /// The bytes of each item, in order (a YAML item from its `- `; a JSON item from its
    /// `{`).
    pub(crate) ranges: Vec<Range<usize>>,
}

impl Items {
    /// The text without its items (and, in JSON, without the commas between them): the
    /// `List` around them.
    pub(crate) fn around(&self, text: &str) -> String {
        let (Some(first), Some(last)) = (self.ranges.first(), self.ranges.last()) else {
            return text.to_owned();
        };
        let mut out = String::with_capacity(first.start + text.len() - last.end);
        out.push_str(&text[..first.start]);
        out.push_str(&text[last.end..]);
        out
    }

    /// The text between item `i` and the next (after the last: to the end of the text), and
    /// before the first (for `i` = `None`).
    pub(crate) fn gap<'t>(&self, text: &'t str, i: Option<usize>) -> &'t str {
        let start = i.map_or(0, |i| self.ranges[i].end);
        let end = i
            .map_or(Some(0), |i| i.checked_add(1))
            .and_then(|next| self.ranges.get(next))
            .map_or(text.len(), |r| r.start);
        &text[start..end]
    }
}

/// The items of `text` if it is a `List` in one of the two shapes, with at least one item.
pub(crate) fn list_items(text: &str) -> Option<Items> {
    let body = text.trim_start_matches([' ', '\t', '\r', '\n']);
    let (syntax, ranges) = if body.starts_with('{') {
        (Syntax::Json, json(text)?)
    } else {
        (Syntax::Yaml, yaml(text)?)
    };
    let items = Items { syntax, ranges };
    if items.ranges.is_empty() || (syntax == Syntax::Json && !items_key_once(&items.around(text))) {
        return None;
    }
    Some(items)
}

/// Where the YAML items are so far.
#[derive(Clone, Copy, PartialEq, Eq)]
enum State {
    /// Before `items:`.
    Before,
    /// Right after `items:`.
    Pending,
    /// Among the items.
    In,
    /// After them.
    After,
}

fn yaml(text: &str) -> Option<Vec<Range<usize>>> {
    // A line break of another kind, or a byte-order mark: left to the whole reader.
    if text.contains('\r') || text.starts_with('\u{feff}') {
        return None;
    }
    let mut gate = Gate::default();
    let mut state = State::Before;
    let mut ranges: Vec<Range<usize>> = Vec::new();
    let mut at = 0;
    for line in text.split_inclusive('\n') {
        let start = at;
        at += line.len();
        let body = line.strip_suffix('\n').unwrap_or(line);
        // Document markers and directives: not one document in the shape.
        if body.starts_with("---") || body.starts_with("...") || body.starts_with('%') {
            return None;
        }
        let (indent, dash) = match gate.feed(body.as_bytes()) {
            Line::Out => return None,
            Line::Node { indent, dash } => (indent, dash),
            Line::Inner => {
                // Blank, a comment or block scalar content: part of the item it is in.
                if state == State::In
                    && let Some(last) = ranges.last_mut()
                {
                    last.end = at;
                }
                continue;
            }
        };
        // `items` as a key at the top level: once, with its value on the lines below.
        let items_key = indent == 0 && !dash && body.starts_with("items:");
        let empty_items_key = items_key && body["items:".len()..].trim().is_empty();
        state = match state {
            State::Before if empty_items_key => State::Pending,
            State::Before if items_key || (indent == 0 && dash) => return None,
            State::Pending if indent == 0 && dash => {
                ranges.push(start..at);
                State::In
            }
            State::Pending => return None,
            State::In if indent == 0 && dash => {
                ranges.push(start..at);
                State::In
            }
            // Not where an item's keys are: the parser decides (see the streaming splitter).
            State::In if indent == 1 => return None,
            State::In | State::After if indent == 0 && (dash || items_key) => return None,
            State::In if indent == 0 => State::After,
            State::In => {
                if let Some(last) = ranges.last_mut() {
                    last.end = at;
                }
                State::In
            }
            other => other,
        };
    }
    matches!(state, State::In | State::After).then_some(ranges)
}

fn json(text: &str) -> Option<Vec<Range<usize>>> {
    let mut split = JsonItems::new(text.as_bytes(), usize::MAX);
    let mut ranges = Vec::new();
    let mut around = false;
    loop {
        match split.next_piece().ok()? {
            // Items of a second value of a sequence: not one List.
            Piece::Item(..) if around => return None,
            Piece::Item(offset, _, bytes) => {
                let start = usize::try_from(offset).ok()?;
                ranges.push(start..start + bytes.len());
            }
            Piece::Around(..) => around = true,
            Piece::End => return Some(ranges),
            Piece::Whole(_) | Piece::Object(..) => return None,
        }
    }
}

/// Whether a JSON object has the key `items` exactly once (a key given twice is read as its
/// last value by one reader, its first by another: such a List is read whole).
fn items_key_once(around: &str) -> bool {
    struct Count(usize);
    impl<'de> serde::Deserialize<'de> for Count {
        fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            struct V;
            impl<'de> serde::de::Visitor<'de> for V {
                type Value = Count;
                fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                    f.write_str("an object")
                }
                fn visit_map<A: serde::de::MapAccess<'de>>(
                    self,
                    mut map: A,
                ) -> Result<Count, A::Error> {
                    let mut n = 0;
                    while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
                        n += usize::from(key == "items");
                        map.next_value::<serde::de::IgnoredAny>()?;
                    }
                    Ok(Count(n))
                }
            }
            d.deserialize_map(V)
        }
    }
    serde_json::from_str::<Count>(around).is_ok_and(|c| c.0 == 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cut(text: &str) -> Option<(Vec<&str>, String)> {
        let items = list_items(text)?;
        let parts = items.ranges.iter().map(|r| &text[r.clone()]).collect();
        Some((parts, items.around(text)))
    }

    #[test]
    fn a_yaml_list_is_cut_at_its_items() {
        let text = "apiVersion: v1\nitems:\n- a: 1\n  b: |\n    x\n\n    y\n  # c\n- c: [1\nkind: List\nmetadata: {}\n";
        assert_eq!(cut(text), None, "a flow collection is out of the shape");
        let text = "apiVersion: v1\nitems:\n- a: 1\n  b: |\n    x\n\n    y\n  # c\n- c: 3\nkind: List\nmetadata:\n  resourceVersion: \"\"\n";
        let (parts, around) = cut(text).expect("cut");
        assert_eq!(
            parts,
            ["- a: 1\n  b: |\n    x\n\n    y\n  # c\n", "- c: 3\n"]
        );
        assert_eq!(
            around,
            "apiVersion: v1\nitems:\nkind: List\nmetadata:\n  resourceVersion: \"\"\n"
        );
        // What the whole reader is left: no items, items not at column 0, `items` twice,
        // a document marker, a carriage return, a line at the column after the items' `-`.
        for text in [
            "apiVersion: v1\nkind: List\n",
            "items:\n  - a: 1\n",
            "items:\n- a: 1\nitems:\n- b: 2\n",
            "items: x\nitems:\n- a: 1\n",
            "---\nitems:\n- a: 1\n",
            "items:\r\n- a: 1\r\n",
            "items:\n- a: 1\n b: 2\n",
            "- a: 1\nitems:\n- b: 2\n",
        ] {
            assert_eq!(cut(text), None, "{text:?}");
        }
    }

    #[test]
    fn a_json_list_is_cut_at_its_items() {
        let text = "{\"apiVersion\": \"v1\", \"items\": [{\"a\": \"]\"}, {\"b\": [2]}], \"kind\": \"List\"}";
        let items = list_items(text).expect("cut");
        assert_eq!(items.syntax, Syntax::Json);
        let parts: Vec<&str> = items.ranges.iter().map(|r| &text[r.clone()]).collect();
        assert_eq!(parts, ["{\"a\": \"]\"}", "{\"b\": [2]}"]);
        assert_eq!(items.gap(text, Some(0)), ", ");
        assert_eq!(
            items.around(text),
            "{\"apiVersion\": \"v1\", \"items\": [], \"kind\": \"List\"}"
        );
        for text in [
            "{\"items\": [], \"kind\": \"List\"}",
            "{\"items\": 1, \"items\": [{\"a\": 1}]}",
            "{\"items\": [{\"a\": 1}], \"items\": []}",
            "{\"kind\": \"Secret\"}",
            "[{\"a\": 1}]",
        ] {
            assert_eq!(list_items(text), None, "{text}");
        }
    }
}
