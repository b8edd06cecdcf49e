//! YAML (and JSON, which YAML reads) as a tree whose scalars know where they stand in the text,
//! so that a value can be replaced in place and everything else keeps its bytes.
//!
//! Used by `redact`: the tree is what a secret is decided on (quoting, escapes, tags, anchors and
//! multi-line scalars resolved by the parser), and the spans are where the decision is written
//! back. Aliases are expanded as copies that keep the anchored node's spans, so an edit of a
//! value reached through an alias lands on the anchor. Expansion is bounded (nodes, bytes,
//! depth): an alias bomb is an error, not a hang.

use std::ops::Range;

use serde_saphyr::granit_parser::{Event, Parser, ScalarStyle, Span};

/// The most nodes the documents of one text may expand to, at least (a larger text may hold a
/// node for every two of its bytes).
const MAX_NODES: usize = 500_000;
/// The most bytes of scalar text they may expand to (aliases repeating long text), at least (a
/// larger text may expand to twice its length).
const MAX_BYTES: usize = 64 << 20;
/// The deepest nesting.
const MAX_DEPTH: usize = 256;

/// How a scalar was written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Style {
    /// Unquoted.
    Plain,
    /// `'…'`.
    Single,
    /// `"…"`.
    Double,
    /// `|`.
    Literal,
    /// `>`.
    Folded,
}

/// One node of a document.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Node {
    /// A scalar: its value as the parser resolved it, how it was written, its tag (handle and
    /// suffix, as `tag:yaml.org,2002:binary`), where its text is, and the column it starts at.
    Scalar {
        /// The value, escapes and folding resolved.
        value: String,
        /// How it was written.
        style: Style,
        /// Its full tag, if one was written.
        tag: Option<String>,
        /// The bytes of its text (for a block scalar: the content lines, not the header).
        span: Range<usize>,
        /// The column its text starts at (a block scalar's indentation).
        column: usize,
    },
    /// A sequence.
    Seq(Vec<Node>),
    /// A mapping, in order (a key given twice is kept twice).
    Map(Vec<(Node, Node)>),
}

impl Node {
    /// The value of a scalar.
    pub(crate) fn as_str(&self) -> Option<&str> {
        match self {
            Node::Scalar { value, .. } => Some(value),
            _ => None,
        }
    }

    /// The value under `key` in a mapping (the last, when given twice, as most readers take).
    pub(crate) fn get(&self, key: &str) -> Option<&Node> {
        match self {
            Node::Map(entries) => entries
                .iter()
                .rev()
                .find(|(k, _)| k.as_str() == Some(key))
                .map(|(_, v)| v),
            _ => None,
        }
    }

    /// Whether this scalar is plain and reads as something other than a string (a boolean, a
    /// null or a number, in YAML 1.1 or 1.2): such a value carries no secret text.
    pub(crate) fn is_plain_non_string(&self) -> bool {
        match self {
            Node::Scalar {
                value,
                style: Style::Plain,
                tag: None,
                ..
            } => plain_kind(value) != PlainKind::String,
            _ => false,
        }
    }

    /// Whether this scalar is a plain boolean or null (YAML 1.1 or 1.2).
    pub(crate) fn is_plain_bool_or_null(&self) -> bool {
        match self {
            Node::Scalar {
                value,
                style: Style::Plain,
                tag: None,
                ..
            } => matches!(plain_kind(value), PlainKind::Bool | PlainKind::Null),
            _ => false,
        }
    }
}

/// What a plain scalar resolves to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PlainKind {
    /// `true`, `yes`, `off`, …
    Bool,
    /// `~`, `null`, empty.
    Null,
    /// An integer or a float.
    Number,
    /// Anything else.
    String,
}

/// What a plain scalar resolves to under YAML 1.1 (PyYAML, what cloud-init reads) or 1.2 (what
/// Go and Rust readers use): the wider answer of the two.
pub(crate) fn plain_kind(value: &str) -> PlainKind {
    let lower = value.to_ascii_lowercase();
    if matches!(lower.as_str(), "" | "~" | "null") {
        return PlainKind::Null;
    }
    if matches!(
        lower.as_str(),
        "true" | "false" | "yes" | "no" | "on" | "off" | "y" | "n"
    ) {
        return PlainKind::Bool;
    }
    let digits = lower.trim_start_matches(['+', '-']).replace(['_', ':'], "");
    let number = !digits.is_empty()
        && (digits.bytes().all(|b| b.is_ascii_digit())
            || digits
                .strip_prefix("0x")
                .is_some_and(|h| !h.is_empty() && h.bytes().all(|b| b.is_ascii_hexdigit()))
            || digits
                .strip_prefix("0o")
                .is_some_and(|h| !h.is_empty() && h.bytes().all(|b| (b'0'..=b'7').contains(&b)))
            || digits
                .strip_prefix("0b")
                .is_some_and(|h| !h.is_empty() && h.bytes().all(|b| b == b'0' || b == b'1'))
            || matches!(digits.as_str(), ".inf" | ".nan")
            || digits.parse::<f64>().is_ok_and(|_| {
                digits.bytes().any(|b| b.is_ascii_digit())
                    && digits
                        .bytes()
                        .all(|b| b.is_ascii_digit() || matches!(b, b'.' | b'e' | b'+' | b'-'))
            }));
    if number {
        PlainKind::Number
    } else {
        PlainKind::String
    }
}

/// Why a text did not read as a tree: the parser's message (no input text) and where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TreeError {
    /// What went wrong, scrubbed of input text.
    pub(crate) message: String,
    /// The 1-based line it went wrong on.
    pub(crate) line: usize,
    /// Whether the text is not YAML (rather than YAML this reader declines or a limit).
    pub(crate) syntax: bool,
}

impl std::fmt::Display for TreeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} (line {})", self.message, self.line)
    }
}

/// Every document of `text`, aliases expanded.
///
/// # Errors
/// When the text is not YAML, or expands past the reading limits.
pub(crate) fn parse(text: &str) -> Result<Vec<Node>, TreeError> {
    parse_part(text, text.len(), 0).map(|part| part.docs)
}

/// What reading a part of a larger text gave: its documents, and what was counted against the
/// limits (nodes and scalar bytes).
#[derive(Debug)]
pub(crate) struct Part {
    /// The documents.
    pub(crate) docs: Vec<Node>,
    /// Nodes read.
    pub(crate) nodes: usize,
    /// Bytes of scalar text read.
    pub(crate) bytes: usize,
}

/// The limits on nodes and scalar bytes of a text of `len` bytes.
pub(crate) fn limits(len: usize) -> (usize, usize) {
    (MAX_NODES.max(len / 2), MAX_BYTES.max(len.saturating_mul(2)))
}

/// [`parse`] of a part of a text of `whole` bytes (an item of a `List`) whose top nodes stand at
/// nesting `depth` in it: under the limits of the whole text, nesting counted as in it. The
/// whole reads as its parts do only if the parts' counts together are within the whole's
/// limits ([`limits`]): the caller adds them up.
///
/// # Errors
/// As [`parse`].
pub(crate) fn parse_part(text: &str, whole: usize, depth: usize) -> Result<Part, TreeError> {
    let (max_nodes, max_bytes) = limits(whole);
    let mut reader = Reader {
        events: Parser::new_from_str(text),
        anchors: Vec::new(),
        nodes: 0,
        bytes: 0,
        line: 1,
        max_nodes,
        max_bytes,
    };
    let mut docs = Vec::new();
    let done = |docs, reader: &Reader<'_>| {
        Ok(Part {
            docs,
            nodes: reader.nodes,
            bytes: reader.bytes,
        })
    };
    loop {
        match reader.next()? {
            None | Some((Event::StreamEnd, _)) => return done(docs, &reader),
            Some((Event::DocumentStart(..), _)) => {
                let Some(first) = reader.next()? else {
                    return done(docs, &reader);
                };
                if matches!(first.0, Event::DocumentEnd) {
                    docs.push(Node::Scalar {
                        value: String::new(),
                        style: Style::Plain,
                        tag: None,
                        span: first.1.start.byte_offset().unwrap_or(0)
                            ..first.1.start.byte_offset().unwrap_or(0),
                        column: 0,
                    });
                    continue;
                }
                let node = reader.node(first, depth)?;
                docs.push(node);
                // The document's end.
                reader.next()?;
                reader.anchors.clear();
            }
            Some(_) => {}
        }
    }
}

struct Reader<'a> {
    events: Parser<'a, serde_saphyr::granit_parser::StrInput<'a>>,
    anchors: Vec<(usize, Node)>,
    nodes: usize,
    bytes: usize,
    line: usize,
    max_nodes: usize,
    max_bytes: usize,
}

/// Whether a parser event is data: anchors' names and comments are presentation, not nodes
/// (every event reader of the crate skips the others).
pub(crate) fn is_data(event: &Event<'_>) -> bool {
    matches!(
        event,
        Event::StreamStart
            | Event::StreamEnd
            | Event::DocumentStart(..)
            | Event::DocumentEnd
            | Event::Alias(..)
            | Event::Scalar(..)
            | Event::SequenceStart(..)
            | Event::SequenceEnd
            | Event::MappingStart(..)
            | Event::MappingEnd
    )
}

impl<'a> Reader<'a> {
    fn next(&mut self) -> Result<Option<(Event<'a>, Span)>, TreeError> {
        loop {
            match self.events.next_event() {
                None => return Ok(None),
                Some(Err(e)) => {
                    let line = e.marker().line();
                    return Err(TreeError {
                        message: super::text::parser_message(&e.to_string()),
                        line,
                        syntax: true,
                    });
                }
                Some(Ok((event, span))) => {
                    self.line = span.start.line();
                    if is_data(&event) {
                        return Ok(Some((event, span)));
                    }
                }
            }
        }
    }

    fn limit(&self, what: &str) -> TreeError {
        TreeError {
            message: format!(
                "the YAML exceeds a reading limit ({what}): an alias bomb, or an input too large to read safely"
            ),
            line: self.line,
            syntax: false,
        }
    }

    fn count(&mut self, node: &Node) -> Result<(), TreeError> {
        let (n, b) = size(node);
        self.nodes = self.nodes.saturating_add(n);
        self.bytes = self.bytes.saturating_add(b);
        if self.nodes > self.max_nodes {
            return Err(self.limit("nodes"));
        }
        if self.bytes > self.max_bytes {
            return Err(self.limit("bytes"));
        }
        Ok(())
    }

    fn node(&mut self, (event, span): (Event<'a>, Span), depth: usize) -> Result<Node, TreeError> {
        if depth > MAX_DEPTH {
            return Err(self.limit("nesting"));
        }
        match event {
            Event::Scalar(value, style, anchor, tag) => {
                let start = span.start.byte_offset().unwrap_or(0);
                let end = span.end.byte_offset().unwrap_or(start);
                let node = Node::Scalar {
                    value: value.into_owned(),
                    style: match style {
                        ScalarStyle::Plain => Style::Plain,
                        ScalarStyle::SingleQuoted => Style::Single,
                        ScalarStyle::DoubleQuoted => Style::Double,
                        ScalarStyle::Literal => Style::Literal,
                        ScalarStyle::Folded => Style::Folded,
                    },
                    tag: tag.map(|t| t.to_string()),
                    span: start..end,
                    column: span.start.col(),
                };
                self.count(&node)?;
                if anchor > 0 {
                    self.anchors.push((anchor, node.clone()));
                }
                Ok(node)
            }
            Event::Alias(id) => {
                let node = self
                    .anchors
                    .iter()
                    .rev()
                    .find(|(a, _)| *a == id)
                    .map(|(_, n)| n.clone())
                    .ok_or_else(|| TreeError {
                        message: "an alias names no anchor".to_owned(),
                        line: self.line,
                        syntax: true,
                    })?;
                self.count(&node)?;
                Ok(node)
            }
            Event::SequenceStart(_, anchor, _) => {
                let mut items = Vec::new();
                loop {
                    let event = self.next()?.ok_or_else(|| self.limit("end of input"))?;
                    if matches!(event.0, Event::SequenceEnd) {
                        break;
                    }
                    items.push(self.node(event, depth + 1)?);
                }
                let node = Node::Seq(items);
                self.nodes = self.nodes.saturating_add(1);
                if anchor > 0 {
                    self.anchors.push((anchor, node.clone()));
                }
                Ok(node)
            }
            Event::MappingStart(_, anchor, _) => {
                let mut entries = Vec::new();
                loop {
                    let event = self.next()?.ok_or_else(|| self.limit("end of input"))?;
                    if matches!(event.0, Event::MappingEnd) {
                        break;
                    }
                    let key = self.node(event, depth + 1)?;
                    // A merge key takes keys from elsewhere: what a key is would no longer be
                    // what is written beside it (cloud-init's reader expands it; this one does
                    // not, so it refuses).
                    if matches!(&key, Node::Scalar { value, style: Style::Plain, tag: None, .. } if value == "<<")
                    {
                        return Err(TreeError {
                            message: "a merge key (<<), which is not read here".to_owned(),
                            line: self.line,
                            syntax: false,
                        });
                    }
                    let value_event = self.next()?.ok_or_else(|| self.limit("end of input"))?;
                    let value = self.node(value_event, depth + 1)?;
                    entries.push((key, value));
                }
                let node = Node::Map(entries);
                self.nodes = self.nodes.saturating_add(1);
                if anchor > 0 {
                    self.anchors.push((anchor, node.clone()));
                }
                Ok(node)
            }
            _ => Err(TreeError {
                message: "an unexpected YAML event".to_owned(),
                line: self.line,
                syntax: true,
            }),
        }
    }
}

/// Nodes and scalar bytes of a tree.
fn size(node: &Node) -> (usize, usize) {
    match node {
        Node::Scalar { value, .. } => (1, value.len()),
        Node::Seq(items) => items.iter().fold((1, 0), |(n, b), i| {
            let (a, c) = size(i);
            (n.saturating_add(a), b.saturating_add(c))
        }),
        Node::Map(entries) => entries.iter().fold((1, 0), |(n, b), (k, v)| {
            let (a, c) = size(k);
            let (d, e) = size(v);
            (
                n.saturating_add(a).saturating_add(d),
                b.saturating_add(c).saturating_add(e),
            )
        }),
    }
}

/// A replacement of one scalar's text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Edit {
    /// The bytes replaced.
    pub(crate) span: Range<usize>,
    /// What stands there instead.
    pub(crate) text: String,
}

/// The text a scalar written as `style` at `column` takes to hold `value` in place of its own
/// span, or `None` when it cannot be written there (the document is written again instead).
pub(crate) fn scalar_text(
    style: Style,
    column: usize,
    value: &str,
    original: &str,
) -> Option<String> {
    match style {
        Style::Plain if plain_safe(value) || plain_like(original, value) => Some(value.to_owned()),
        Style::Plain | Style::Single | Style::Double => Some(quoted(value)),
        Style::Literal => {
            let mut out = literal(column, value)?;
            // The blank lines that close the original block stay (they are not part of the
            // value under the default chomping, but they are part of the text).
            if let Some(last) = original.rfind(|c: char| !c.is_whitespace())
                && let Some(eol) = original[last..].find('\n')
            {
                out.push_str(&original[last + eol + 1..]);
            }
            Some(out)
        }
        Style::Folded => None,
    }
}

/// A double-quoted scalar (JSON's escapes are a subset of YAML's).
pub(crate) fn quoted(value: &str) -> String {
    let mut out = serde_json::to_string(value).unwrap_or_else(|_| "\"\"".to_owned());
    // DEL and the C1 controls are not printable in YAML: escape them too.
    if out
        .chars()
        .any(|c| c == '\u{7f}' || ('\u{80}'..='\u{9f}').contains(&c))
    {
        out = out
            .chars()
            .map(|c| {
                if c == '\u{7f}' || ('\u{80}'..='\u{9f}').contains(&c) {
                    format!("\\u{:04x}", u32::from(c))
                } else {
                    c.to_string()
                }
            })
            .collect();
    }
    out
}

/// Whether a value can stand as a plain scalar anywhere (block or flow) and read as the same
/// string.
fn plain_safe(value: &str) -> bool {
    !value.is_empty()
        && value
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_./@+=~%".contains(&b) || b == b':')
        && !value.contains(": ")
        && !value.ends_with(':')
        && value
            .bytes()
            .next()
            .is_some_and(|b| b.is_ascii_alphanumeric() || b == b'/' || b == b'.')
        && plain_kind(value) == PlainKind::String
}

/// Whether a one-line plain scalar can hold `value` in its place: every character of it but
/// letters and digits was in the original (a part replaced by a word), so nothing new can end
/// or change the scalar.
fn plain_like(original: &str, value: &str) -> bool {
    !original.contains('\n')
        && !value.contains('\n')
        && !value.starts_with([' ', '\t'])
        && !value.ends_with([' ', '\t', ':'])
        && value
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || original.contains(c))
        && plain_kind(value) == PlainKind::String
}

/// The content lines of a literal block scalar at `column`, or `None` when the value cannot be
/// written so (its first line starts with a space, or it holds a carriage return or a tab at a
/// line's start).
fn literal(column: usize, value: &str) -> Option<String> {
    if value.starts_with([' ', '\n']) || value.contains('\r') || value.is_empty() {
        return None;
    }
    let indent = " ".repeat(column);
    let mut out = String::with_capacity(value.len() + 16);
    // The span starts at the first line's text: its indentation is before it.
    for (i, line) in value.split_inclusive('\n').enumerate() {
        if line == "\n" {
            out.push('\n');
        } else {
            if line.starts_with('\t') {
                return None;
            }
            if i > 0 {
                out.push_str(&indent);
            }
            out.push_str(line);
        }
    }
    if !out.ends_with('\n') {
        out.push('\n');
    }
    Some(out)
}

/// `text` with each edit applied (edits must not overlap; the first of two that do wins).
pub(crate) fn apply(text: &str, edits: &mut [Edit]) -> String {
    edits.sort_by_key(|e| (e.span.start, e.span.end));
    let mut out = String::with_capacity(text.len());
    let mut cursor = 0;
    for edit in edits.iter() {
        if edit.span.start < cursor || edit.span.end > text.len() {
            continue;
        }
        let (Some(before), true) = (
            text.get(cursor..edit.span.start),
            text.is_char_boundary(edit.span.end),
        ) else {
            continue;
        };
        out.push_str(before);
        out.push_str(&edit.text);
        cursor = edit.span.end;
    }
    out.push_str(text.get(cursor..).unwrap_or(""));
    out
}

/// A document written again in flow style (what YAML and JSON readers alike take), with
/// `replace` giving each scalar's new value by its span: plain scalars that read as another type
/// (booleans, numbers) keep their text so that they keep their type, every string is written
/// double-quoted.
pub(crate) fn to_flow(node: &Node, replace: &dyn Fn(&Range<usize>) -> Option<String>) -> String {
    let mut out = String::new();
    write_flow(node, replace, &mut out);
    out
}

fn write_flow(node: &Node, replace: &dyn Fn(&Range<usize>) -> Option<String>, out: &mut String) {
    match node {
        Node::Scalar {
            value,
            style,
            tag,
            span,
            ..
        } => {
            if let Some(tag) = tag {
                out.push_str("!<");
                out.push_str(tag);
                out.push_str("> ");
            }
            match replace(span) {
                Some(new) => out.push_str(&quoted(&new)),
                None if *style == Style::Plain
                    && plain_kind(value) != PlainKind::String
                    && !value.contains([',', '[', ']', '{', '}', '#', ' ', '\n']) =>
                {
                    if value.is_empty() {
                        out.push_str("null");
                    } else {
                        out.push_str(value);
                    }
                }
                None => out.push_str(&quoted(value)),
            }
        }
        Node::Seq(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_flow(item, replace, out);
            }
            out.push(']');
        }
        Node::Map(entries) => {
            out.push('{');
            for (i, (k, v)) in entries.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                match k {
                    // `<<` stays a merge key.
                    Node::Scalar {
                        value,
                        style: Style::Plain,
                        tag: None,
                        ..
                    } if value == "<<" => out.push_str("<<"),
                    _ => write_flow(k, replace, out),
                }
                out.push_str(": ");
                write_flow(v, replace, out);
            }
            out.push('}');
        }
    }
}

/// A mapping key that is not a string: what an object's keys must be (Kubernetes objects,
/// JSON), found where a reader of objects refused one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct KeyProblem {
    /// The mapping the key is in, as a path from its document's top (`spec.a[0].b`; empty for
    /// the top itself); a key that does not look like a name is `…`, so no input text but
    /// names is quoted.
    pub(crate) field: String,
    /// Whether the key is null (written empty, `~` or `null`) rather than a mapping or a list.
    pub(crate) null: bool,
    /// The 1-based line of the key in the text, when it is a scalar.
    pub(crate) line: Option<usize>,
}

/// Every mapping key of `text` that is not a string, in document order (`[]` when the text does
/// not read as a tree).
pub(crate) fn key_problems(text: &str) -> Vec<KeyProblem> {
    let mut out = Vec::new();
    for doc in parse(text).unwrap_or_default() {
        walk_keys(&doc, &mut String::new(), text, &mut out);
    }
    out
}

fn walk_keys(node: &Node, path: &mut String, text: &str, out: &mut Vec<KeyProblem>) {
    match node {
        Node::Scalar { .. } => {}
        Node::Seq(items) => {
            for (i, item) in items.iter().enumerate() {
                let len = path.len();
                path.push_str(&format!("[{i}]"));
                walk_keys(item, path, text, out);
                path.truncate(len);
            }
        }
        Node::Map(entries) => {
            for (key, value) in entries {
                let name = match key {
                    Node::Scalar {
                        value: k,
                        style,
                        tag,
                        span,
                        ..
                    } => {
                        let null_tag = tag.as_deref() == Some("tag:yaml.org,2002:null");
                        let null_plain = *style == Style::Plain
                            && tag.is_none()
                            && plain_kind(k) == PlainKind::Null;
                        if null_tag || null_plain {
                            out.push(KeyProblem {
                                field: path.clone(),
                                null: true,
                                line: Some(
                                    text.get(..span.start)
                                        .map_or(0, |t| t.matches('\n').count())
                                        + 1,
                                ),
                            });
                            None
                        } else {
                            Some(k.as_str())
                        }
                    }
                    _ => {
                        out.push(KeyProblem {
                            field: path.clone(),
                            null: false,
                            line: None,
                        });
                        None
                    }
                };
                let Some(name) = name else { continue };
                let len = path.len();
                if !path.is_empty() {
                    path.push('.');
                }
                let named = !name.is_empty()
                    && name.len() <= 63
                    && name.bytes().all(|b| {
                        b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'/')
                    });
                path.push_str(if named { name } else { "…" });
                walk_keys(value, path, text, out);
                path.truncate(len);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scalars(node: &Node, out: &mut Vec<(String, Style, String)>, text: &str) {
        match node {
            Node::Scalar {
                value, style, span, ..
            } => out.push((value.clone(), *style, text[span.clone()].to_owned())),
            Node::Seq(items) => items.iter().for_each(|i| scalars(i, out, text)),
            Node::Map(entries) => entries.iter().for_each(|(k, v)| {
                scalars(k, out, text);
                scalars(v, out, text);
            }),
        }
    }

    #[test]
    fn spans_cover_each_style() {
        let text =
            "a: |\n  l1\n  l2\nb: \"x\\ty\"\n? c\n: plain\n  folded\nd: &x [1, {e: f}]\ng: *x\n";
        let docs = parse(text).expect("parses");
        let mut out = Vec::new();
        scalars(&docs[0], &mut out, text);
        assert_eq!(
            out[1],
            ("l1\nl2\n".into(), Style::Literal, "l1\n  l2\n".into())
        );
        assert_eq!(out[3], ("x\ty".into(), Style::Double, "\"x\\ty\"".into()));
        assert_eq!(out[5].0, "plain folded");
        // The alias copies the anchored nodes with their spans.
        assert_eq!(docs[0].get("g"), docs[0].get("d"));
    }

    #[test]
    fn edits_and_flow_keep_what_is_not_replaced() {
        let text = "#cloud-config\nk: v # note\nlock: false\nn: 0600\nl: |\n  a\n  b\n";
        let docs = parse(text).expect("parses");
        let Some(Node::Scalar {
            span,
            style,
            column,
            ..
        }) = docs[0].get("l")
        else {
            panic!("scalar")
        };
        let new =
            scalar_text(*style, *column, "a\nREDACTED\n", &text[span.clone()]).expect("literal");
        let out = apply(
            text,
            &mut [Edit {
                span: span.clone(),
                text: new,
            }],
        );
        assert_eq!(
            out,
            "#cloud-config\nk: v # note\nlock: false\nn: 0600\nl: |\n  a\n  REDACTED\n"
        );
        let flow = to_flow(&docs[0], &|_| None);
        // `n` keeps its text: in YAML 1.1 it reads as a boolean, as it did before.
        assert_eq!(
            flow,
            "{\"k\": \"v\", \"lock\": false, n: 0600, \"l\": \"a\\nb\\n\"}"
        );
    }

    #[test]
    fn alias_bombs_are_refused() {
        let mut text = String::from("a: &a [x, x, x, x, x, x, x, x, x, x]\n");
        for i in 0..8 {
            let prev = if i == 0 {
                "a".to_owned()
            } else {
                format!("b{}", i - 1)
            };
            text.push_str(&format!(
                "b{i}: &b{i} [*{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}]\n"
            ));
        }
        assert!(parse(&text).is_err());
    }

    #[test]
    fn plain_kinds() {
        assert_eq!(plain_kind("false"), PlainKind::Bool);
        assert_eq!(plain_kind("0600"), PlainKind::Number);
        assert_eq!(plain_kind("1.5e3"), PlainKind::Number);
        assert_eq!(plain_kind("~"), PlainKind::Null);
        assert_eq!(plain_kind("REDACTED"), PlainKind::String);
        assert_eq!(plain_kind("e"), PlainKind::String);
    }
}
