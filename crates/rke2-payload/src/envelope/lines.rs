//! The gate of the streaming YAML splitter: which lines are in the shape `kubectl get -o yaml`
//! writes, where cutting a `List` into its items by indentation is provably the parser's cut.
//!
//! # The shape
//!
//! A line is in shape when it is one of:
//!
//! - blank (spaces only), or a comment (spaces, then `#`);
//! - a node line: `key: scalar`, `key:` or `key: |` (a block scalar header: `|` or `>`, at
//!   most one of `-` `+`, at most one indentation digit), after spaces and at most one `- `;
//!   or `- scalar`. The key is plain, made of ASCII letters, digits and `-_./` (not
//!   starting with `-` or `.`), and at most 512 bytes long (the parser refuses an implicit key
//!   over 1,024 characters). A scalar is double- or single-quoted and closed exactly at the
//!   end of the line, or plain and starting with none of YAML's indicators
//!   (`-?:,[]{}#&*!|>'"%@` and the backquote) nor a space or a tab;
//! - the content of a block scalar: after a header whose key is at column `p`, the lines
//!   indented more than `p` and at least as much as the first of them (or as the indentation
//!   digit says), and the blank lines among them, taken without looking inside;
//!
//! and, after a line that ended with a scalar (or after a block scalar's content), the next line
//! that is not blank or a comment is indented no more than that scalar's key (or its `-`). A
//! block scalar must not start with a blank line (kubectl writes an indentation digit then),
//! and `- ...` is out (dedented with its item it would read as a document end).
//!
//! The gate knows nothing of a `List`: the splitter adds that a line of an item indented one
//! column more than the items' `-` (not where the item's keys are) is out too.
//!
//! Everything else is out: tabs in indentation or before a value, anchors, aliases, tags, flow
//! collections, quoted or plain scalars that go on to the next line, complex and quoted keys,
//! directives, a `-` alone or twice. The splitter hands the document from such a line on to the
//! full parser ([`super::stream`]). The kubectl fast path ([`super::fast`]) reads only objects
//! all of whose lines are in, with the same definition of a key and a block scalar header
//! ([`key_value`], [`block_header`]), and checks what the shape leaves open (a mapping's keys
//! at one column, no key twice, no `: ` or comment in a plain scalar it reads).
//!
//! # Why the cut is the parser's
//!
//! Take a line `L` indented `d` or less, `d` being the column of the items' `-`, and all lines
//! of the document before it in shape. Nothing the lines before `L` opened is still open at
//! `L`, so it starts a new token at its first character:
//!
//! - a quoted scalar in shape closes on its line; no flow collection is ever opened (a `[` or
//!   `{` inside a plain scalar is text in block context), nor a node's properties;
//! - a plain scalar goes on only on lines indented more than the block collection that holds
//!   it (the column of its key, or of its `-`); the gate refuses any such line, and every
//!   collection inside an item is at column `d + 2` or more;
//! - block scalar content is indented more than its key, at `d + 2` or more inside an item, so
//!   `L` is not content (nor is `items:` at column 0 in the lines before the items);
//! - a comment opens nothing, and ends a plain scalar; document markers at column 0 are seen
//!   before the gate and always end the document.
//!
//! So `L` at column `d` starting with `- ` is an entry of a block sequence at column `d`, and
//! the only one open there is the items' sequence (the splitter refuses other lines of an item
//! indented less than `d + 2`): it starts a new item. Any other `L` ends the items (or is an
//! error, which reading the lines around the items reports). An item's lines, less `d + 2`
//! columns, read alone as they read in the list: every node line and content line of the item
//! is indented `d + 2` or more, so relative indentation is kept, and blank and comment lines
//! lose only spaces that YAML does not read (fewer than a block scalar's content indentation).

/// What a line is to the splitter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Line {
    /// Blank, a comment, or block scalar content: part of whatever holds it, never a cut.
    Inner,
    /// A node line at this indentation; `dash` if it starts with `- `.
    Node { indent: usize, dash: bool },
    /// Outside the shape.
    Out,
}

/// What the lines so far ask of the next one.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
enum After {
    /// Nothing (`key:` ended the line: its value, if any, is on the lines below).
    #[default]
    Any,
    /// A scalar ended the line: the next node line is indented at most this much.
    AtMost(usize),
    /// A block scalar: the column of its key, and of its content once known.
    Block {
        parent: usize,
        content: Option<usize>,
    },
}

/// Classifies the lines of one document, in order.
#[derive(Debug, Default)]
pub(crate) struct Gate {
    after: After,
}

/// The longest key in shape, in bytes (all ASCII): well within the 1,024 characters YAML allows
/// an implicit key (the parser refuses a longer one), and above the longest name Kubernetes
/// takes as a key (a 253-byte prefix, `/`, a 63-byte name). A longer key is left to the parser.
const MAX_KEY: usize = 512;

/// Whether `b` may be part of a key in shape.
fn is_key_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'/')
}

impl Gate {
    /// Starts afresh (a new document).
    pub(crate) fn reset(&mut self) {
        self.after = After::Any;
    }

    /// Classifies one line, without its line break.
    pub(crate) fn feed(&mut self, line: &[u8]) -> Line {
        let at = line.iter().take_while(|&&b| b == b' ').count();
        let rest = &line[at..];
        if let After::Block { parent, content } = self.after {
            if rest.iter().all(u8::is_ascii_whitespace) {
                return if content.is_some() {
                    Line::Inner
                } else {
                    Line::Out
                };
            }
            if at > parent && content.is_none_or(|c| at >= c) {
                self.after = After::Block {
                    parent,
                    content: Some(content.unwrap_or(at)),
                };
                return Line::Inner;
            }
            // The block scalar is over, as a scalar on one line would be.
            self.after = After::AtMost(parent);
        }
        match rest.first() {
            // A comment that is not printable UTF-8 is the parser's to refuse.
            Some(b'#')
                if !std::str::from_utf8(rest).is_ok_and(crate::codec::yaml::yaml_printable) =>
            {
                Line::Out
            }
            None | Some(b'#') => Line::Inner,
            Some(_) => self.node(at, rest),
        }
    }

    /// A line that is not blank, a comment or content: a node line in shape, or out.
    fn node(&mut self, at: usize, rest: &[u8]) -> Line {
        if let After::AtMost(max) = self.after
            && at > max
        {
            return Line::Out;
        }
        let (column, dash, text) = match rest.strip_prefix(b"- ") {
            Some(text) => (at + 2, true, text),
            None => (at, false, rest),
        };
        let after = if let Some((_, value)) = key_value(text) {
            if value.is_empty() {
                After::Any
            } else if let Some(digit) = block_header(value) {
                After::Block {
                    parent: column,
                    content: digit.map(|d| column + d),
                }
            } else if scalar(value) {
                After::AtMost(column)
            } else {
                return Line::Out;
            }
        } else if dash && scalar(text) && !text.starts_with(b"...") {
            // (`...` alone, dedented to column 0 with its item, would end the document.)
            After::AtMost(at)
        } else {
            return Line::Out;
        };
        self.after = after;
        Line::Node { indent: at, dash }
    }
}

/// Whether every line of one document (without a lone `\r`) is in the shape.
#[cfg(test)]
pub(crate) fn in_shape(text: &[u8]) -> bool {
    let mut gate = Gate::default();
    text.split(|&b| b == b'\n')
        .all(|line| gate.feed(line.strip_suffix(b"\r").unwrap_or(line)) != Line::Out)
}

/// `key:` in shape (at most [`MAX_KEY`] bytes), then the end of the line or a space: the key's
/// length, and the value after the spaces that follow (empty for `key:`).
pub(super) fn key_value(text: &[u8]) -> Option<(usize, &[u8])> {
    let key = text.iter().take_while(|&&b| is_key_byte(b)).count();
    if key == 0
        || key > MAX_KEY
        || matches!(text[0], b'-' | b'.')
        || text.get(key) != Some(&b':')
        || text.get(key + 1).is_some_and(|&b| b != b' ')
    {
        return None;
    }
    let value = &text[key + 1..];
    let spaces = value.iter().take_while(|&&b| b == b' ').count();
    Some((key, &value[spaces..]))
}

/// YAML's indicators: a plain scalar in shape starts with none of them.
pub(super) const INDICATORS: &[u8] = b"-?:,[]{}#&*!|>'\"%@`";

/// A block scalar header in shape: `Some` with its indentation digit, if any.
pub(super) fn block_header(value: &[u8]) -> Option<Option<usize>> {
    let (&first, hints) = value.split_first()?;
    if !matches!(first, b'|' | b'>') || hints.len() > 2 {
        return None;
    }
    let digits = hints.iter().filter(|b| (b'1'..=b'9').contains(b)).count();
    let chomps = hints.iter().filter(|b| matches!(b, b'-' | b'+')).count();
    if digits > 1 || chomps > 1 || digits + chomps != hints.len() {
        return None;
    }
    Some(
        hints
            .iter()
            .find(|b| b.is_ascii_digit())
            .map(|&d| usize::from(d - b'0')),
    )
}

/// Whether a value is a scalar in shape: quoted and closed exactly at the end of the line, or
/// plain and starting with no indicator (what follows cannot open anything: a plain scalar is
/// text up to a comment, and `: ` in it is an error the parser reports).
fn scalar(value: &[u8]) -> bool {
    match value.first() {
        Some(&q @ (b'"' | b'\'')) => quoted_end(value, q) == Some(value.len()),
        Some(&b) => !INDICATORS.contains(&b) && b != b' ' && b != b'\t',
        None => false,
    }
}

/// Where the quoted scalar that `value` starts with ends (exclusive), if on this line.
fn quoted_end(value: &[u8], quote: u8) -> Option<usize> {
    let mut i = 1;
    loop {
        let found = if quote == b'"' {
            memchr::memchr2(b'"', b'\\', value.get(i..)?)?
        } else {
            memchr::memchr(b'\'', value.get(i..)?)?
        };
        let at = i + found;
        match value[at] {
            b'\\' => i = at + 2,
            b'\'' if value.get(at + 1) == Some(&b'\'') => i = at + 2,
            _ => return Some(at + 1),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{Gate, Line, MAX_KEY};

    /// The class of each line of `text`: `n` node, `i` inner, `o` out (and after that, `-`).
    fn classes(text: &str) -> String {
        let mut gate = Gate::default();
        let mut out = false;
        text.lines()
            .map(|l| {
                if out {
                    return '-';
                }
                match gate.feed(l.as_bytes()) {
                    Line::Node { .. } => 'n',
                    Line::Inner => 'i',
                    Line::Out => {
                        out = true;
                        'o'
                    }
                }
            })
            .collect()
    }

    #[test]
    fn the_kubectl_shape_is_in() {
        let list = "apiVersion: v1\nitems:\n- apiVersion: v1\n  data:\n    value: IyMg\n  kind: Secret\n  metadata:\n    annotations:\n      note: |\n        free: [ { \" ' & *\n\n        more\n    creationTimestamp: \"2026-01-01T00:00:00Z\"\n    finalizers:\n    - a/b\n    name: x\n    uid: 'a''b'\n  stringData:\n    v: |2-\n        leading spaces\n  type: Opaque\n# a comment\nkind: List\nmetadata:\n  resourceVersion: \"\"\n";
        assert_eq!(classes(list), "nnnnnnnnniiinnnnnnnininnn");
    }

    #[test]
    fn what_can_run_on_is_out() {
        for text in [
            "- a: \"x\n",
            "- a: 'x''\n",
            "- a: \"x\\\"\n",
            "- a: [1,\n",
            "- a: {x: 1}\n",
            "- a: &x 1\n",
            "- a: *x\n",
            "- a: !!str 1\n",
            "- &x a: 1\n",
            "- ? a\n",
            "- \"a\": 1\n",
            "- a: \tb\n",
            "\t- a: b\n",
            "-\ta: b\n",
            "-\n",
            "- - a\n",
            "%YAML 1.2\n",
            "- a: | # c\n",
            "- a: |22\n",
            "- a: \"x\" # c\n",
        ] {
            assert!(classes(text).ends_with('o'), "{text:?}: {}", classes(text));
        }
    }

    #[test]
    fn a_key_longer_than_the_parser_takes_is_out() {
        let key = |n: usize| "k".repeat(n);
        assert_eq!(classes(&format!("{}: v\n", key(MAX_KEY))), "n");
        assert_eq!(classes(&format!("- {}: v\n", key(MAX_KEY))), "n");
        // 1,025 characters: the parser refuses it as a key.
        for n in [MAX_KEY + 1, 1025] {
            assert_eq!(classes(&format!("{}: v\n", key(n))), "o");
            assert_eq!(classes(&format!("- a: 1\n  {}:\n", key(n))), "no");
        }
    }

    #[test]
    fn a_one_line_scalar_is_closed_on_its_line_or_plain() {
        for (scalar, ok) in [
            ("\"a\\\"b\"", true),
            ("\"a\\\"", false),
            ("\"a\\\\\"", true),
            ("\"\\é\"", true),
            ("\"a\" ", false),
            ("\"a\"b\"", false),
            ("\"", false),
            ("'a''b'", true),
            ("'a'''", true),
            ("'a''", false),
            ("''''", true),
            ("'''", false),
            ("'", false),
            ("'a'b'", false),
            ("plain text", true),
            ("plain: text", true),
            (" plain", false),
            ("&a x", false),
            ("", false),
        ] {
            assert_eq!(super::scalar(scalar.as_bytes()), ok, "{scalar:?}");
        }
    }

    #[test]
    fn a_scalar_continued_below_its_key_is_out() {
        assert_eq!(classes("- a: x\n    y\n"), "no");
        assert_eq!(classes("- a: x\n\n   # c\n   y\n"), "niio");
        assert_eq!(classes("- x\n  y\n"), "no");
        assert_eq!(classes("- a: \"x\"\n    b: 1\n"), "no");
        // Back at the key's column or less: a new node.
        assert_eq!(classes("- a: x\n  b: y\n- c\n"), "nnn");
        // A nested node below `key:`.
        assert_eq!(classes("- a:\n    b: y\n  c:\n  - d\n"), "nnnn");
    }

    #[test]
    fn block_scalar_content_is_taken_whole_and_ends_where_the_parser_ends_it() {
        assert_eq!(
            classes("- a: |\n    \"x\n\n    - y\n  b: 1\n- c\n"),
            "niiinn"
        );
        // Less indented than its first line: over, and then a node deeper than the key is out.
        assert_eq!(classes("- a: >-\n      x\n    y: 1\n"), "nio");
        // An empty block scalar: the next key is not content.
        assert_eq!(classes("- a: |\n  b: \"x\"\n"), "nn");
        // An indentation digit: content from that column, blank lines or not.
        assert_eq!(classes("- a: |1\n\n    x\n   y\n- b\n"), "niiin");
        // A block scalar that starts with a blank line.
        assert_eq!(classes("- a: |\n\n    x\n"), "no-");
    }
}
