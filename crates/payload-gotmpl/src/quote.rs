//! Go's `strconv.Quote`, as `%q` and Sprig's `quote` print a string.

/// Go's `strconv.Quote` (`%q`) of a string: what `printf "%q"` and Sprig's `quote` print, and
/// how Go writes a string literal.
///
/// ```
/// assert_eq!(payload_gotmpl::go_quote("a\"b\tc\u{1}"), r#""a\"b\tc\x01""#);
/// ```
pub fn go_quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{7}' => out.push_str("\\a"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{b}' => out.push_str("\\v"),
            c if (c as u32) < 0x20 || c == '\u{7f}' => {
                out.push_str(&format!("\\x{:02x}", c as u32))
            }
            c if (c as u32) < 0x80 => out.push(c),
            c if is_go_printable(c) => out.push(c),
            c if (c as u32) <= 0xffff => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push_str(&format!("\\U{:08x}", c as u32)),
        }
    }
    out.push('"');
    out
}

/// Go's `unicode.IsPrint` for non-ASCII characters, close enough: not a control, format,
/// separator, private-use or unassigned character.
fn is_go_printable(c: char) -> bool {
    let u = c as u32;
    !(c.is_control()
        || c.is_whitespace()
        || (0x200b..=0x200f).contains(&u)
        || (0x2028..=0x202e).contains(&u)
        || (0x2060..=0x206f).contains(&u)
        || u == 0xfeff
        || (0xe000..=0xf8ff).contains(&u)
        || (0xfff0..=0xfffb).contains(&u)
        || u >= 0xf0000)
}
