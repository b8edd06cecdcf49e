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

#[cfg(test)]
mod tests {
    #[test]
    fn group_thousands() {
        assert_eq!(super::group(0), "0");
        assert_eq!(super::group(999), "999");
        assert_eq!(super::group(16384), "16,384");
        assert_eq!(super::group(1048576), "1,048,576");
    }
}
