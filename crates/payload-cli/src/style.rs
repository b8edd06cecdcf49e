//! Shared pieces of the text output: styles (stripped by anstream when not on a terminal or when
//! `NO_COLOR` is set) and number formatting.

use anstyle::{AnsiColor, Style};

/// Headings.
pub(crate) const BOLD: Style = Style::new().bold();
/// Secondary text.
pub(crate) const DIM: Style = Style::new().dimmed();
/// Errors.
pub(crate) const ERROR: Style = AnsiColor::Red.on_default().bold();
/// Warnings.
pub(crate) const WARN: Style = AnsiColor::Yellow.on_default();
/// Notes.
pub(crate) const INFO: Style = AnsiColor::Cyan.on_default();
/// Good news.
pub(crate) const OK: Style = AnsiColor::Green.on_default();

/// `16384` → `16,384`.
pub(crate) fn group(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// The first 16 hex digits of a hash, for people.
pub(crate) fn short_hash(hex: &str) -> &str {
    &hex[..16.min(hex.len())]
}

/// Text from the input, safe for a terminal: control, bidi and invisible characters become
/// visible escapes (`\x1b`, `\u{202e}`).
pub(crate) fn safe(text: &str) -> std::borrow::Cow<'_, str> {
    rke2_payload::terminal_safe(text)
}

/// A Secret as people read its name: `namespace/name` (or `name`), terminal-safe; `unnamed`
/// when it has no name (bare user data, an object that could not be read).
pub(crate) fn secret_title(namespace: Option<&str>, name: Option<&str>, unnamed: &str) -> String {
    match (namespace, name) {
        (Some(ns), Some(name)) => format!("{}/{}", safe(ns), safe(name)),
        (None, Some(name)) => safe(name).into_owned(),
        _ => unnamed.to_owned(),
    }
}

/// JSON or XML output made free of the characters [`safe`] escapes in text. In JSON they can
/// only stand inside strings (JSON escapes C0 itself), where `\uXXXX` means the same character;
/// in XML a character reference (`&#x202E;`) does. Output without them is borrowed.
pub(crate) fn escape_unsafe(bytes: &[u8], xml: bool) -> std::borrow::Cow<'_, [u8]> {
    // Every character to escape outside C0 is DEL or starts with one of these UTF-8 lead bytes
    // (C1 and U+00AD: C2; U+061C: D8; U+180E: E1; U+200B–U+206F: E2; U+FEFF, U+FFF9–FFFB: EF;
    // tags: F3). XML has no C0 left (see `xml`).
    let suspect = memchr::memchr3(0xc2, 0xe2, 0xef, bytes).is_some()
        || memchr::memchr3(0x7f, 0xd8, 0xe1, bytes).is_some()
        || memchr::memchr(0xf3, bytes).is_some();
    if !suspect {
        return std::borrow::Cow::Borrowed(bytes);
    }
    // Output this tool writes is UTF-8; anything else is read lossily rather than passed on.
    let text = String::from_utf8_lossy(bytes);
    let mut out = String::with_capacity(text.len() + 64);
    for c in text.chars() {
        let unsafe_char =
            rke2_payload::terminal_safe(c.encode_utf8(&mut [0; 4])).len() > c.len_utf8();
        match c {
            '\n' | '\r' | '\t' => out.push(c),
            c if unsafe_char && xml => out.push_str(&format!("&#x{:X};", c as u32)),
            c if unsafe_char => {
                let mut units = [0u16; 2];
                for unit in c.encode_utf16(&mut units) {
                    out.push_str(&format!("\\u{unit:04x}"));
                }
            }
            c => out.push(c),
        }
    }
    std::borrow::Cow::Owned(out.into_bytes())
}

/// `text` for XML (JUnit): escaped, and terminal-safe (control, bidi and invisible characters as
/// visible escapes, so none is left to strip).
pub(crate) fn xml(text: &str) -> String {
    let text = safe(text);
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            c => out.push(c),
        }
    }
    out
}

/// A JSON value as YAML (block style), free of the characters [`safe`] escapes: the emitter
/// writes those only inside double-quoted scalars, as `\u` escapes that mean the same
/// character.
pub(crate) fn yaml(value: &serde_json::Value) -> anyhow::Result<String> {
    let text = serde_saphyr::to_string(value)?;
    Ok(match escape_unsafe(text.as_bytes(), false) {
        std::borrow::Cow::Borrowed(_) => text,
        std::borrow::Cow::Owned(bytes) => String::from_utf8(bytes)?,
    })
}

/// Where a finding points, as text follows its message: ` [path] (line L, column C)`.
pub(crate) fn finding_at(f: &rke2_payload::Finding) -> String {
    let mut at = String::new();
    if let Some(p) = &f.path {
        at.push_str(&format!(" [{}]", safe(p)));
    }
    if let Some(l) = f.line {
        at.push_str(&format!(" (line {l}"));
        if let Some(c) = f.column {
            at.push_str(&format!(", column {c}"));
        }
        at.push(')');
    }
    at
}

#[cfg(test)]
mod tests {
    use super::yaml;

    #[test]
    fn json_and_xml_keep_their_meaning_without_unsafe_characters() {
        let json =
            serde_json::to_vec(&serde_json::json!({"p": "a\u{1b}[2J\u{202e}b\u{85}"})).unwrap();
        let clean = super::escape_unsafe(&json, false);
        let text = std::str::from_utf8(&clean).unwrap();
        assert!(
            !text.chars().any(|c| c.is_control() || c == '\u{202e}'),
            "{text}"
        );
        let back: serde_json::Value = serde_json::from_slice(&clean).unwrap();
        assert_eq!(back["p"], "a\u{1b}[2J\u{202e}b\u{85}");
        assert_eq!(
            super::escape_unsafe(b"{\"a\":1}\n", false).as_ref(),
            b"{\"a\":1}\n"
        );
        assert_eq!(
            super::escape_unsafe("<a>\u{202e}</a>\n".as_bytes(), true).as_ref(),
            b"<a>&#x202E;</a>\n"
        );
    }

    #[test]
    fn group_thousands() {
        assert_eq!(super::group(0), "0");
        assert_eq!(super::group(999), "999");
        assert_eq!(super::group(16384), "16,384");
        assert_eq!(super::group(1048576), "1,048,576");
    }

    #[test]
    fn yaml_reads_back_and_shows_no_control_character() {
        let value = serde_json::json!({
            "name": "a\u{1b}[31mred\u{202e}x\u{7}",
            "plain": "text: with # and 'quotes'",
            "n": 3,
            "list": ["x", null, true],
        });
        let text = yaml(&value).expect("yaml");
        assert!(
            !text
                .chars()
                .any(|c| c.is_control() && c != '\n' || c == '\u{202e}'),
            "{text:?}"
        );
        let back: serde_json::Value = serde_saphyr::from_str(&text).expect("reads back");
        assert_eq!(back, value, "{text}");
    }
}
