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
    let changes = Changes::new(changes);
    let lookup = |span: &Range<usize>| changes.value(span);
    if let Some(out) = in_place(text, docs, &changes, &lookup) {
        return Some(out);
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

/// The text with the changes written at their places, if it reads back as the masked tree
/// (`None`: [`write`] would write the documents again in flow style).
pub(crate) fn write_in_place(text: &str, docs: &[Node], changes: Vec<Change>) -> Option<String> {
    let changes = Changes::new(changes);
    in_place(text, docs, &changes, &|span| changes.value(span))
}

/// The changes, one per span: two decisions on one value (an anchor reached twice) keep the
/// placeholder if either masked it whole.
struct Changes {
    by_span: Vec<Change>,
    index: HashMap<(usize, usize), usize>,
}

impl Changes {
    fn new(changes: Vec<Change>) -> Self {
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
        Changes { by_span, index }
    }

    /// The new value of the scalar at `span`, if it changed.
    fn value(&self, span: &Range<usize>) -> Option<String> {
        self.index
            .get(&(span.start, span.end))
            .map(|&i| self.by_span[i].value.clone())
    }
}

/// Each change written at its place, if every one can be and the result reads as the masked
/// tree.
fn in_place(
    text: &str,
    docs: &[Node],
    changes: &Changes,
    lookup: &dyn Fn(&Range<usize>) -> Option<String>,
) -> Option<String> {
    let mut edits: Vec<Edit> = changes
        .by_span
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
        .collect::<Option<_>>()?;
    let out = tree::apply(text, &mut edits);
    drop(edits);
    reads_as(&out, docs, lookup).then_some(out)
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
