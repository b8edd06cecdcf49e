//! Where the objects of an input are written: the line of each object and of each of its
//! fields, read with the span tree (`codec::tree`), so that a finding about a manifest can name
//! the line of the field it is about. The objects are those [`super::objects`] returns, in the
//! same order.

use std::sync::Arc;

use crate::codec::tree::{self, Node};

/// One step of the path to a field of an object ([`ObjectPlaces::line_of`]): a mapping's key
/// or a sequence's index.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FieldStep<'a> {
    /// The value under a key of a mapping.
    Key(&'a str),
    /// The item at an index (from 0) of a sequence.
    Index(usize),
}

/// Where the fields of one object of an input are written ([`object_places`]). Its `Debug`
/// output shows the object's line, never its content (manifests hold Secrets).
#[derive(Clone)]
pub struct ObjectPlaces {
    node: Node,
    line_starts: Arc<[usize]>,
}

impl std::fmt::Debug for ObjectPlaces {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ObjectPlaces")
            .field("first_line", &self.first_line())
            .finish_non_exhaustive()
    }
}

impl ObjectPlaces {
    /// The 1-based line of a byte offset of the text.
    fn line_at(&self, offset: usize) -> u64 {
        self.line_starts.partition_point(|&s| s <= offset) as u64
    }

    /// The 1-based line of the object's first key (of the object itself if it has none).
    pub fn first_line(&self) -> u64 {
        self.line_at(first_offset(&self.node).unwrap_or(0))
    }

    /// The 1-based line of the deepest step of `path` that is written: the field (its key) or
    /// the item itself, or, where the path leaves what is written (a required field that is
    /// missing), the last field on the way that is. A key written twice is found at its last
    /// place, as readers take the last.
    pub fn line_of(&self, path: &[FieldStep<'_>]) -> u64 {
        let mut node = &self.node;
        let mut offset = first_offset(node).unwrap_or(0);
        for step in path {
            let next = match (step, node) {
                (FieldStep::Key(key), Node::Map(entries)) => entries
                    .iter()
                    .rev()
                    .find(|(k, _)| k.as_str() == Some(*key))
                    .map(|(k, v)| (first_offset(k), v)),
                (FieldStep::Index(i), Node::Seq(items)) => {
                    items.get(*i).map(|item| (first_offset(item), item))
                }
                _ => None,
            };
            let Some((at, child)) = next else { break };
            offset = at.unwrap_or(offset);
            node = child;
        }
        self.line_at(offset)
    }
}

/// The offset of the first scalar written in a node.
fn first_offset(node: &Node) -> Option<usize> {
    match node {
        Node::Scalar { span, .. } => Some(span.start),
        Node::Map(entries) => entries.first().and_then(|(k, _)| first_offset(k)),
        Node::Seq(items) => items.first().and_then(first_offset),
    }
}

/// Where every object of `text` is written: YAML documents and `List` items, in the order
/// [`objects`](super::objects) gives them; `None` when the text does not read so (then no
/// object has places). A caller pairs them with the objects only when both count the same.
///
/// ```
/// use rke2_payload::{FieldStep, object_places};
///
/// let text = "kind: List\nitems:\n- kind: Cluster\n  spec:\n    paused: true\n- kind: Machine\n";
/// let places = object_places(text).expect("YAML");
/// assert_eq!(places.len(), 2);
/// assert_eq!(places[0].first_line(), 3);
/// assert_eq!(places[0].line_of(&[FieldStep::Key("spec"), FieldStep::Key("paused")]), 5);
/// // A field that is not written: the line of the last one on the way that is.
/// assert_eq!(places[0].line_of(&[FieldStep::Key("spec"), FieldStep::Key("replicas")]), 4);
/// assert_eq!(places[1].first_line(), 6);
/// ```
pub fn object_places(text: &str) -> Option<Vec<ObjectPlaces>> {
    fn flatten(node: Node, out: &mut Vec<Node>) {
        let kind = node.get("kind").and_then(Node::as_str);
        let is_list = kind.is_some_and(|k| k.ends_with("List"))
            || (kind.is_none() && node.get("items").is_some());
        if !is_list {
            out.push(node);
            return;
        }
        if let Node::Map(entries) = node
            && let Some((_, Node::Seq(items))) = entries
                .into_iter()
                .rev()
                .find(|(k, _)| k.as_str() == Some("items"))
        {
            for item in items {
                flatten(item, out);
            }
        }
    }
    let docs = tree::parse(text).ok()?;
    let mut nodes = Vec::new();
    for doc in docs {
        // Empty documents are no objects (the object reader skips them too).
        if matches!(&doc, Node::Scalar { value, .. } if value.is_empty() || value == "~" || value == "null")
        {
            continue;
        }
        flatten(doc, &mut nodes);
    }
    let line_starts: Arc<[usize]> = std::iter::once(0)
        .chain(memchr::memchr_iter(b'\n', text.as_bytes()).map(|i| i + 1))
        .collect();
    Some(
        nodes
            .into_iter()
            .map(|node| ObjectPlaces {
                node,
                line_starts: Arc::clone(&line_starts),
            })
            .collect(),
    )
}
