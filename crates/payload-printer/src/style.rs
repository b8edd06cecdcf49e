//! Text for people: the styles of the text layouts, and the helpers every text printer uses to
//! show input safely and numbers readably.
//!
//! The text printers write these styles as ANSI escapes, always; whether they reach a terminal
//! is the caller's choice (see the crate's "Colour" section).

use std::borrow::Cow;

use anstyle::{AnsiColor, Style};

/// Headings.
pub const BOLD: Style = Style::new().bold();
/// Secondary text.
pub const DIM: Style = Style::new().dimmed();
/// Errors.
pub const ERROR: Style = AnsiColor::Red.on_default().bold();
/// Warnings.
pub const WARN: Style = AnsiColor::Yellow.on_default();
/// Notes.
pub const INFO: Style = AnsiColor::Cyan.on_default();
/// Good news.
pub const OK: Style = AnsiColor::Green.on_default();

/// A number with its thousands grouped, as the text layouts show byte counts.
///
/// ```
/// use payload_printer::style::group;
///
/// assert_eq!(group(16384), "16,384");
/// assert_eq!(group(999), "999");
/// ```
pub fn group(n: u64) -> String {
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
pub fn short_hash(hex: &str) -> &str {
    &hex[..16.min(hex.len())]
}

/// Text from the input, safe for a terminal: control, bidi and invisible characters become
/// visible escapes (`\x1b`, `\u{202e}`); see [`rke2_payload::terminal_safe`].
///
/// ```
/// use payload_printer::style::safe;
///
/// assert_eq!(safe("kube-system"), "kube-system");
/// assert_eq!(safe("a\u{1b}[2J"), "a\\x1b[2J");
/// ```
pub fn safe(text: &str) -> Cow<'_, str> {
    rke2_payload::terminal_safe(text)
}

/// A place in a file as the reports name it: `file:line`, or `file` when the line is not
/// known; terminal-safe.
pub(crate) fn file_line(file: &str, line: Option<u64>) -> String {
    match line {
        Some(line) => format!("{}:{line}", safe(file)),
        None => safe(file).into_owned(),
    }
}

/// A Secret as people read its name: `namespace/name` (or `name`), terminal-safe; `unnamed`
/// when it has no name (bare user data, an object that could not be read).
///
/// ```
/// use payload_printer::style::secret_title;
///
/// assert_eq!(secret_title(Some("ns"), Some("w-1"), "user data"), "ns/w-1");
/// assert_eq!(secret_title(None, None, "user data"), "user data");
/// ```
pub fn secret_title(namespace: Option<&str>, name: Option<&str>, unnamed: &str) -> String {
    match (namespace, name) {
        (Some(ns), Some(name)) => format!("{}/{}", safe(ns), safe(name)),
        (None, Some(name)) => safe(name).into_owned(),
        _ => unnamed.to_owned(),
    }
}

/// Where a finding points, as text follows its message: ` [path] (line L, column C)`.
pub fn finding_at(f: &rke2_payload::Finding) -> String {
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

/// The style and word of a severity in the text layouts.
pub(crate) fn severity_label(severity: rke2_payload::Severity) -> (Style, &'static str) {
    match severity {
        rke2_payload::Severity::Error => (ERROR, "error"),
        rke2_payload::Severity::Warning => (WARN, "warning"),
        _ => (INFO, "info"),
    }
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
