//! The masked document written back: each change at its place, or the whole in flow style,
//! checked to read as the masked tree.

use std::collections::HashMap;
use std::ops::Range;

use crate::codec::tree::{self, Edit, Node};

use super::{Change, PLACEHOLDER, text};

/// `text` with each span replaced by the placeholder.
pub(super) fn splice(text: &str, spans: &[Range<usize>]) -> String {
    text::replace_spans(text, spans, |_| PLACEHOLDER.to_owned())
}

/// The text with the changes written at their places, or the documents written again in flow
/// style; `None` when neither reads back as the masked tree.
pub(crate) fn write(text: &str, docs: &[Node], changes: Vec<Change>) -> Option<String> {
    // One change per span: two decisions on one value (an anchor reached twice) keep the
    // placeholder if either masked it whole.
    let mut by_span: Vec<Change> = Vec::with_capacity(changes.len());
    let mut index: HashMap<(usize, usize), usize> = HashMap::with_capacity(changes.len());
    for change in changes {
        match index.get(&(change.span.start, change.span.end)) {
            Some(&i) => {
                let existing = &mut by_span[i];
                if existing.value != change.value && change.value == PLACEHOLDER {
                    existing.value = change.value;
                } else if existing.value != change.value && existing.value != PLACEHOLDER {
                    existing.value = PLACEHOLDER.to_owned();
                }
            }
            None => {
                index.insert((change.span.start, change.span.end), by_span.len());
                by_span.push(change);
            }
        }
    }
    let lookup = |span: &Range<usize>| {
        index
            .get(&(span.start, span.end))
            .map(|&i| by_span[i].value.clone())
    };
    let in_place: Option<Vec<Edit>> = by_span
        .iter()
        .map(|c| {
            tree::scalar_text(
                c.style,
                c.column,
                &c.value,
                text.get(c.span.clone()).unwrap_or(""),
            )
            .map(|t| Edit {
                span: c.span.clone(),
                text: t,
            })
        })
        .collect();
    if let Some(mut edits) = in_place {
        let out = tree::apply(text, &mut edits);
        if reads_as(&out, docs, &lookup) {
            return Some(out);
        }
    }
    // Written again: the comment lines that head the text (`#cloud-config`), then each
    // document in flow style.
    let head: String = text
        .split_inclusive('\n')
        .take_while(|l| l.starts_with('#') || l.trim().is_empty())
        .collect();
    let mut out = head;
    for (i, doc) in docs.iter().enumerate() {
        if i > 0 {
            out.push_str("---\n");
        }
        out.push_str(&tree::to_flow(doc, &lookup));
        out.push('\n');
    }
    reads_as(&out, docs, &lookup).then_some(out)
}

/// Whether `text` parses to `docs` with each changed scalar holding its new value.
fn reads_as(text: &str, docs: &[Node], lookup: &dyn Fn(&Range<usize>) -> Option<String>) -> bool {
    let Ok(again) = tree::parse(text) else {
        return false;
    };
    again.len() == docs.len() && docs.iter().zip(&again).all(|(a, b)| same(a, b, lookup))
}

pub(super) fn same(
    old: &Node,
    new: &Node,
    lookup: &dyn Fn(&Range<usize>) -> Option<String>,
) -> bool {
    match (old, new) {
        (Node::Scalar { value, span, .. }, Node::Scalar { value: v2, .. }) => match lookup(span) {
            Some(expected) => *v2 == expected,
            None => value == v2 && old.is_plain_non_string() == new.is_plain_non_string(),
        },
        (Node::Seq(a), Node::Seq(b)) => {
            a.len() == b.len() && a.iter().zip(b).all(|(x, y)| same(x, y, lookup))
        }
        (Node::Map(a), Node::Map(b)) => {
            a.len() == b.len()
                && a.iter()
                    .zip(b)
                    .all(|((k1, v1), (k2, v2))| same(k1, k2, lookup) && same(v1, v2, lookup))
        }
        _ => false,
    }
}
