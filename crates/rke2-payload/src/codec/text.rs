//! Text for messages: parser messages scrubbed of input, strings shortened on a char boundary,
//! and text made safe for a terminal.

use std::borrow::Cow;

/// Removes quoted input text from a parser message, so that an error about a line holding a
/// token never repeats the token.
///
/// Double-quoted spans (how serde and the parsers quote values) become `"…"`. Backtick spans
/// (how serde names fields) are kept when they look like a key name.
pub(crate) fn scrub(message: &str) -> String {
    let message = plain_words(message);
    let mut out = String::with_capacity(message.len());
    let mut rest = message.as_ref();
    while let Some(start) = rest.find(['"', '`']) {
        let quote = rest.as_bytes()[start] as char;
        out.push_str(&rest[..start]);
        let after = &rest[start + 1..];
        match after.find(quote) {
            Some(end) => {
                let inner = &after[..end];
                // serde quotes a value it rejects in backticks too (`invalid type: integer
                // `123``): after a value's kind, the span is input, not a key name.
                let value = ["integer ", "floating point ", "boolean ", "char "]
                    .iter()
                    .any(|kind| out.ends_with(kind));
                let looks_like_key = quote == '`'
                    && !value
                    && inner.len() <= 40
                    && inner
                        .bytes()
                        .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'));
                out.push(quote);
                out.push_str(if looks_like_key { inner } else { "…" });
                out.push(quote);
                rest = &after[end + 1..];
            }
            None => {
                out.push('…');
                rest = "";
            }
        }
    }
    out.push_str(rest);
    // Parser messages sometimes span lines (snippets); keep the first line only.
    match out.split_once('\n') {
        Some((first, _)) => first.trim_end().to_owned(),
        None => out,
    }
}

/// What the YAML reader's message says in words when a null stands where a string must
/// (serde's own words are advice to a programmer).
pub(crate) const NULL_FOR_STRING: &str =
    "a null (written empty, ~ or null) stands where a string must";
/// … and when a mapping or a list does.
pub(crate) const COLLECTION_FOR_STRING: &str = "a mapping or a list stands where a string must";

/// The YAML parser's messages that name its own types, said in words: a budget breach
/// (`budget breached: Nodes { nodes: 250001 }`) and a duplicate key (`…, set DuplicateKeyPolicy
/// in Options if acceptable`).
fn plain_words(message: &str) -> Cow<'_, str> {
    let mut out = Cow::Borrowed(message);
    if let Some(at) = out.find("budget breached: ") {
        let rest = &out[at + "budget breached: ".len()..];
        let kind: String = rest.chars().take_while(char::is_ascii_alphabetic).collect();
        let (inner, after) = match (rest.find('{'), rest.find('}')) {
            (Some(open), Some(close)) if open < close => {
                (&rest[open + 1..close], &rest[close + 1..])
            }
            _ => ("", &rest[kind.len()..]),
        };
        let n: String = inner.chars().filter(char::is_ascii_digit).collect();
        let what = match kind.as_str() {
            "Nodes" => format!("at {n} nodes once its aliases are expanded"),
            "Aliases" => format!("at {n} alias references"),
            "Anchors" => format!("at {n} anchors"),
            "Depth" => format!("at {n} levels of nesting"),
            "Documents" => format!("at {n} documents"),
            "Events" => format!("at {n} parser events"),
            _ => "while reading".to_owned(),
        };
        out = Cow::Owned(format!(
            "{}the YAML exceeds a reading limit {what} (an alias bomb, or an input too large to read safely){after}",
            &message[..at]
        ));
    }
    // serde's advice to the programmer, when a null stands where a string is read (a key
    // written empty, `~` or `null`, or a variable substituted by nothing), and the parser's
    // words for a mapping or a list there.
    for (serde, words) in [
        (
            "cannot deserialize null into string; use Option<String>",
            NULL_FOR_STRING,
        ),
        ("expected string scalar", COLLECTION_FOR_STRING),
    ] {
        if out.contains(serde) {
            out = Cow::Owned(out.replace(serde, words));
        }
    }
    if out.contains(", set DuplicateKeyPolicy in Options if acceptable") {
        let text = out
            .replace(", set DuplicateKeyPolicy in Options if acceptable", "")
            .replace(
                "duplicate mapping key: ",
                "a key appears twice in one mapping: ",
            )
            .replace(
                "duplicate mapping key",
                "a key appears twice in one mapping",
            );
        out = Cow::Owned(text);
    }
    out
}

/// A parser's message for an error: scrubbed of input text, without the position the parser
/// appends (errors carry it separately).
///
/// Double-quoted spans (how serde and the parsers quote values) become `"…"`; backtick spans
/// are kept when they look like a key name; only the first line is kept; the YAML parser's
/// own type names are said in words.
///
/// ```
/// use rke2_payload::codec::parser_message;
///
/// let message = "invalid type: string \"hunter2hunter2\", expected `port` at line 3 column 7";
/// assert_eq!(parser_message(message), "invalid type: string \"…\", expected `port`");
/// ```
pub fn parser_message(message: &str) -> String {
    let message = scrub(message);
    match message.find(" at line ") {
        Some(i) => message[..i].to_owned(),
        None => message,
    }
}

/// Shortens a string for an error message, on a char boundary.
pub(crate) fn shorten(s: &str, max: usize) -> String {
    if s.len() <= max {
        return s.to_owned();
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &s[..end])
}

/// Whether a character must not reach a terminal as it is: C0 and C1 controls, DEL, the bidi
/// controls (U+061C, U+200E–U+200F, U+202A–U+202E, U+2066–U+2069), and the invisible
/// characters that move or hide text (U+00AD, U+180E, U+200B–U+200D, U+2028–U+2029,
/// U+2060–U+2065, U+FEFF, U+FFF9–U+FFFB, the tags U+E0000–U+E007F).
pub(crate) fn is_unsafe_char(c: char) -> bool {
    matches!(c,
        '\u{0}'..='\u{1f}' | '\u{7f}'..='\u{9f}'
        | '\u{ad}'
        | '\u{61c}'
        | '\u{180e}'
        | '\u{200b}'..='\u{200f}'
        | '\u{2028}'..='\u{202e}'
        | '\u{2060}'..='\u{2069}'
        | '\u{feff}'
        | '\u{fff9}'..='\u{fffb}'
        | '\u{e0000}'..='\u{e007f}')
}

/// `text` with every character that could drive a terminal (C0 and C1 controls, DEL, bidi
/// controls, invisible line and format characters) written as
/// a visible escape: `\n`, `\r`, `\t`, `\x1b`, `\u{202e}`. Text without one is borrowed.
///
/// ```
/// use rke2_payload::terminal_safe;
/// assert_eq!(terminal_safe("ok"), "ok");
/// assert_eq!(terminal_safe("a\u{1b}[2Jb\u{202e}c\n"), "a\\x1b[2Jb\\u{202e}c\\n");
/// ```
pub fn terminal_safe(text: &str) -> Cow<'_, str> {
    if !text.chars().any(is_unsafe_char) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x80 && is_unsafe_char(c) => {
                out.push_str(&format!("\\x{:02x}", c as u32));
            }
            c if is_unsafe_char(c) => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parser_types_are_said_in_words() {
        assert_eq!(
            scrub("budget breached: Nodes { nodes: 250001 } at line 6, column 18"),
            "the YAML exceeds a reading limit at 250001 nodes once its aliases are expanded (an alias bomb, or an input too large to read safely) at line 6, column 18"
        );
        assert_eq!(
            scrub(
                "duplicate mapping key: name, set DuplicateKeyPolicy in Options if acceptable at line 4"
            ),
            "a key appears twice in one mapping: name at line 4"
        );
    }

    #[test]
    fn scrub_hides_quoted_data_but_keeps_key_names() {
        let m =
            scrub("invalid type: string \"461787c003ec7e4777dc92ebbc7d2686xx\", expected `value`");
        assert!(!m.contains("461787c0"), "{m}");
        assert!(m.contains("`value`"), "{m}");
        assert_eq!(scrub("unterminated \"abc"), "unterminated …");
        assert_eq!(
            scrub("invalid type: integer `987654321`, expected a string"),
            "invalid type: integer `…`, expected a string"
        );
        assert_eq!(
            scrub("unknown field `passwordHash`, expected `name`"),
            "unknown field `passwordHash`, expected `name`"
        );
        assert_eq!(scrub("line one\nsnippet with secret"), "line one");
    }

    #[test]
    fn nothing_that_drives_a_terminal_survives() {
        for c in (0u32..0x11_0000).filter_map(char::from_u32) {
            let text = format!("a{c}b");
            let safe = terminal_safe(&text);
            assert!(!safe.chars().any(is_unsafe_char), "U+{:04X}", c as u32);
            assert_eq!(
                matches!(safe, Cow::Borrowed(_)),
                !is_unsafe_char(c),
                "U+{:04X}",
                c as u32
            );
        }
        assert_eq!(
            terminal_safe("\u{7f}\u{85}\u{2066}"),
            "\\x7f\\u{85}\\u{2066}"
        );
    }

    #[test]
    fn shorten_respects_char_boundaries() {
        assert_eq!(shorten("ééé", 3), "é…");
        assert_eq!(shorten("abc", 3), "abc");
    }
}
