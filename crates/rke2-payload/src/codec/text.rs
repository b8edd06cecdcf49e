//! Text for messages: parser messages scrubbed of input, strings shortened on a char boundary.

/// Removes quoted input text from a parser message, so that an error about a line holding a
/// token never repeats the token.
///
/// Double-quoted spans (how serde and the parsers quote values) become `"…"`. Backtick spans
/// (how serde names fields) are kept when they look like a key name.
pub(crate) fn scrub(message: &str) -> String {
    let mut out = String::with_capacity(message.len());
    let mut rest = message;
    while let Some(start) = rest.find(['"', '`']) {
        let quote = rest.as_bytes()[start] as char;
        out.push_str(&rest[..start]);
        let after = &rest[start + 1..];
        match after.find(quote) {
            Some(end) => {
                let inner = &after[..end];
                let looks_like_key = quote == '`'
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

/// A parser's message for an error: scrubbed of input text, without the position the parser
/// appends (errors carry it separately).
pub(crate) fn parser_message(message: &str) -> String {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scrub_hides_quoted_data_but_keeps_key_names() {
        let m =
            scrub("invalid type: string \"461787c003ec7e4777dc92ebbc7d2686xx\", expected `value`");
        assert!(!m.contains("461787c0"), "{m}");
        assert!(m.contains("`value`"), "{m}");
        assert_eq!(scrub("unterminated \"abc"), "unterminated …");
        assert_eq!(scrub("line one\nsnippet with secret"), "line one");
    }

    #[test]
    fn shorten_respects_char_boundaries() {
        assert_eq!(shorten("ééé", 3), "é…");
        assert_eq!(shorten("abc", 3), "abc");
    }
}
