//! The masking of a `List` one item at a time ([`crate::envelope::cut`]): each item's tree
//! alone, its changes written in its place, so that the List's tree is never held whole.
//!
//! It gives what the whole text's masking gives ([`super::whole`]) or nothing: the same
//! objects are masked in the same order by the same [`Objects`], each item reads alone as it
//! reads in the List (the cut's argument; the items' counts are added up against the whole
//! text's limits, their nesting counted from where they stand), and each item's changes are
//! written in place exactly as the whole text's would be. What the whole reading could do
//! otherwise gives `None`, and the caller masks the whole text, which then says why it
//! refuses, or writes the List again in flow style: an item that does not read, a refusal, a
//! change that cannot be written in place, an output that is not cut as the input was.

use super::Objects;
use crate::codec::tree::{self, Node};
use crate::envelope::cut::{Items, list_items};
use crate::error::Syntax;
use crate::sensitive::mask;

/// The List masked item by item: the text written again and what the masking found; `None`
/// when the whole text must be masked instead.
pub(super) fn mask(text: &str, items: &Items, mut objects: Objects) -> Option<(String, Objects)> {
    let around = tree::parse_part(&items.around(text), text.len(), 0).ok()?;
    // A List as the whole masking reads one: `items` and a kind that is a List or none.
    let [list] = around.docs.as_slice() else {
        return None;
    };
    let kind = list.get("kind").and_then(Node::as_str).unwrap_or("");
    if !(kind.ends_with("List") || kind.is_empty()) {
        return None;
    }
    // In YAML an item read alone is a sequence of one, one level down from the List; the
    // whole has one sequence where `items:` alone reads a null. In JSON an item is the object
    // itself, two levels down.
    let depth = match items.syntax {
        Syntax::Yaml => 1,
        Syntax::Json => 2,
    };
    let (mut nodes, mut bytes) = (around.nodes, around.bytes);
    let mut out = String::with_capacity(text.len());
    let mut written = Vec::with_capacity(items.ranges.len());
    out.push_str(items.gap(text, None));
    for (i, range) in items.ranges.iter().enumerate() {
        let item_text = &text[range.clone()];
        let part = tree::parse_part(item_text, text.len(), depth).ok()?;
        nodes = nodes.saturating_add(part.nodes);
        bytes = bytes.saturating_add(part.bytes);
        let item = match (items.syntax, part.docs.as_slice()) {
            (Syntax::Yaml, [Node::Seq(one)]) if one.len() == 1 => {
                nodes -= 1;
                &one[0]
            }
            (Syntax::Json, [node]) => node,
            _ => return None,
        };
        objects.object(item).ok()?;
        let changes = std::mem::take(&mut objects.changes);
        let start = out.len();
        if changes.is_empty() {
            out.push_str(item_text);
        } else {
            out.push_str(&mask::write_in_place(item_text, &part.docs, changes)?);
        }
        written.push(start..out.len());
        out.push_str(items.gap(text, Some(i)));
    }
    let (max_nodes, max_bytes) = tree::limits(text.len());
    if nodes > max_nodes || bytes > max_bytes {
        return None;
    }
    // The output is cut where its items were written: it reads as its items do.
    let again = list_items(&out)?;
    (again.syntax == items.syntax && again.ranges == written).then_some((out, objects))
}
