//! What the YAML readers share: the characters a YAML stream may hold (the hand-written fast
//! paths check it first), and the repair of the unquoted sequence item CAPRKE2 writes for
//! `airGappedChecksum` (the cloud-config reader and `redact` read the document as repaired).

/// Whether every character may stand in a YAML stream (tab and line feed are the only control
/// characters allowed here; carriage returns are left to the full parser).
pub(crate) fn yaml_printable(text: &str) -> bool {
    // Printable ASCII, tab and line feed, 64 bytes at a time (a check without an early exit,
    // which the compiler turns into vector instructions): a Secret's base64 is most of its text.
    let bytes = text.as_bytes();
    let mut at = 0;
    for chunk in bytes.chunks_exact(64) {
        let plain = chunk.iter().fold(true, |ok, &b| {
            ok & ((b.wrapping_sub(0x20) < 0x5f) | (b == b'\t') | (b == b'\n'))
        });
        if !plain {
            break;
        }
        at += 64;
    }
    // The rest byte by byte while it is ASCII, then character by character.
    for (i, &b) in bytes[at..].iter().enumerate() {
        if b >= 0x80 {
            return !text[at + i..].chars().any(|c| {
                (c.is_control() && c != '\t' && c != '\n')
                    || matches!(c, '\u{feff}' | '\u{fffe}' | '\u{ffff}')
            });
        }
        if (b < 0x20 && b != b'\t' && b != b'\n') || b == 0x7f {
            return false;
        }
    }
    true
}

/// Finds the unquoted sequence item that most likely broke the parse (the error is often reported
/// a line or more after it), and quotes its value. Returns the 1-based line and column of the
/// item's value, and the repaired text.
pub(crate) fn quote_item_near(text: &str, error_line: u64) -> Option<(u64, u64, String)> {
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let last = usize::try_from(error_line).ok()?.min(lines.len());
    let item = |l: &str| -> Option<(usize, char)> {
        let body = l.trim_end_matches(['\n', '\r']);
        let indent = body.len() - body.trim_start().len();
        let rest = body.trim_start().strip_prefix("- ")?;
        let first = rest.trim_start().chars().next()?;
        Some((indent + 2 + (rest.len() - rest.trim_start().len()), first))
    };
    // Nearest item above the error whose value starts with a flow or indicator character.
    let candidate = (last.saturating_sub(12)..last)
        .rev()
        .find(|&i| item(lines[i]).is_some_and(|(_, c)| "[{*&!%@`|>".contains(c)))
        .or_else(|| {
            let i = last.checked_sub(1)?;
            item(lines[i])
                .filter(|(_, c)| !matches!(c, '\'' | '"'))
                .map(|_| i)
        })?;
    let (column, _) = item(lines[candidate])?;
    let mut out = String::with_capacity(text.len() + 16);
    for (i, l) in lines.iter().enumerate() {
        if i == candidate {
            let body = l.trim_end_matches(['\n', '\r']);
            out.push_str(&body[..column]);
            out.push('\'');
            out.push_str(&body[column..].replace('\'', "''"));
            out.push('\'');
            out.push_str(&l[body.len()..]);
        } else {
            out.push_str(l);
        }
    }
    Some((candidate as u64 + 1, column as u64 + 1, out))
}

/// The text with unquoted sequence items quoted until it parses (at most `MAX_REPAIRS`), or
/// `None` when no repair makes it read.
pub(crate) fn repaired(text: &str, mut error_line: usize) -> Option<String> {
    let mut current = text.to_owned();
    for _ in 0..MAX_REPAIRS {
        let (_, _, fixed) = quote_item_near(&current, error_line as u64)?;
        match super::tree::parse(&fixed) {
            Ok(_) => return Some(fixed),
            Err(e) => {
                error_line = e.line;
                current = fixed;
            }
        }
    }
    None
}

/// The most items quoted to read one document.
const MAX_REPAIRS: usize = 32;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn printable_is_decided_character_by_character_past_ascii() {
        for (text, printable) in [
            ("kind: Secret\n\tdata: x", true),
            ("a\rb", false),
            ("a\u{7f}", false),
            ("caf\u{e9} \u{2603}", true),
            ("\u{e9}\u{85}", false),
            ("x\u{feff}", false),
            ("\u{e9}\u{1}", false),
            ("", true),
            ("x".repeat(200).as_str(), true),
        ] {
            let by_char = !text.chars().any(|c| {
                (c.is_control() && c != '\t' && c != '\n')
                    || matches!(c, '\u{feff}' | '\u{fffe}' | '\u{ffff}')
            });
            assert_eq!(yaml_printable(text), printable, "{text:?}");
            assert_eq!(by_char, printable, "{text:?}");
        }
        // Past whole 64-byte chunks, and a bad byte inside one.
        let long = "abc\tdef\n".repeat(40);
        assert!(yaml_printable(&long));
        for bad in ["\r", "\u{7f}", "\u{85}", "\u{feff}"] {
            for at in [0, 63, 64, 100, long.len()] {
                let text = format!("{}{bad}{}", &long[..at], &long[at..]);
                assert!(!yaml_printable(&text), "{bad:?} at {at}");
            }
        }
        assert!(yaml_printable(&format!("{long}caf\u{e9}{long}")));
    }
}
