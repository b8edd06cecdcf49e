//! What the hand-written YAML fast paths share: the characters a YAML stream may hold.

/// Whether every character may stand in a YAML stream (tab and line feed are the only control
/// characters allowed here; carriage returns are left to the full parser).
pub(crate) fn yaml_printable(text: &str) -> bool {
    !text.chars().any(|c| {
        (c.is_control() && c != '\t' && c != '\n')
            || matches!(c, '\u{feff}' | '\u{fffe}' | '\u{ffff}')
    })
}
