//! YAML as Go's `gopkg.in/yaml.v3` (`SetIndent(2)`) and `sigs.k8s.io/yaml` (yaml.v2 style)
//! write it: the scalar style each picks for a string, block mappings and sequences.
//!
//! CAPRKE2 writes `config.yaml` with yaml.v3, `registries.yaml` with sigs.k8s.io/yaml, and
//! re-encodes `additionalUserData` with yaml.v3; a preview is byte-for-byte only if these rules
//! are the same.

use serde_json::Value;

/// A YAML value in the order it is written (Go sorts map keys; callers do, where Go does).
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Node {
    Null,
    Bool(bool),
    Int(i64),
    /// A number written as it was read (floats, big integers).
    Number(String),
    Str(String),
    Seq(Vec<Node>),
    Map(Vec<(String, Node)>),
}

impl Node {
    /// A JSON value as Go's `map[string]interface{}` holds it: maps sorted by key.
    pub(crate) fn from_json_sorted(value: &Value) -> Node {
        match value {
            Value::Null => Node::Null,
            Value::Bool(b) => Node::Bool(*b),
            Value::Number(n) => n
                .as_i64()
                .map_or_else(|| Node::Number(n.to_string()), Node::Int),
            Value::String(s) => Node::Str(s.clone()),
            Value::Array(items) => Node::Seq(items.iter().map(Node::from_json_sorted).collect()),
            Value::Object(map) => {
                let mut pairs: Vec<(String, Node)> = map
                    .iter()
                    .map(|(k, v)| (k.clone(), Node::from_json_sorted(v)))
                    .collect();
                pairs.sort_by(|a, b| a.0.cmp(&b.0));
                Node::Map(pairs)
            }
        }
    }
}

/// Which Go library's layout.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Style {
    /// yaml.v3 with `SetIndent(2)`: sequences in a mapping are indented (`key:\n  - a`).
    V3,
    /// sigs.k8s.io/yaml (yaml.v2): sequences in a mapping are not (`key:\n- a`).
    V2,
}

/// The document for `node` (a top-level mapping or sequence), ending in a line break; `{}` or
/// `[]` for an empty one.
pub(crate) fn to_string(node: &Node, style: Style) -> String {
    let mut out = String::new();
    match node {
        Node::Map(pairs) if !pairs.is_empty() => write_map(&mut out, pairs, 0, style),
        Node::Seq(items) if !items.is_empty() => write_seq(&mut out, items, 0, style),
        other => {
            out.push_str(&inline(other, 0));
            out.push('\n');
        }
    }
    out
}

fn write_map(out: &mut String, pairs: &[(String, Node)], indent: usize, style: Style) {
    for (key, value) in pairs {
        push_indent(out, indent);
        out.push_str(&scalar(key, indent));
        out.push(':');
        write_value_after_key(out, value, indent, style);
    }
}

fn write_value_after_key(out: &mut String, value: &Node, indent: usize, style: Style) {
    match value {
        Node::Map(pairs) if !pairs.is_empty() => {
            out.push('\n');
            write_map(out, pairs, indent + 2, style);
        }
        Node::Seq(items) if !items.is_empty() => {
            out.push('\n');
            let at = if style == Style::V3 {
                indent + 2
            } else {
                indent
            };
            write_seq(out, items, at, style);
        }
        other => {
            out.push(' ');
            out.push_str(&inline(other, indent + 2));
            out.push('\n');
        }
    }
}

fn write_seq(out: &mut String, items: &[Node], indent: usize, style: Style) {
    for item in items {
        push_indent(out, indent);
        out.push('-');
        match item {
            Node::Map(pairs) if !pairs.is_empty() => {
                // The first pair on the dash's line, the others under it.
                let mut first = true;
                for (key, value) in pairs {
                    if first {
                        out.push(' ');
                        first = false;
                    } else {
                        push_indent(out, indent + 2);
                    }
                    out.push_str(&scalar(key, indent + 2));
                    out.push(':');
                    write_value_after_key(out, value, indent + 2, style);
                }
            }
            Node::Seq(inner) if !inner.is_empty() => {
                out.push('\n');
                write_seq(out, inner, indent + 2, style);
            }
            other => {
                out.push(' ');
                out.push_str(&inline(other, indent + 2));
                out.push('\n');
            }
        }
    }
}

fn push_indent(out: &mut String, n: usize) {
    out.extend(std::iter::repeat_n(' ', n));
}

/// A value written after `key: ` or `- `; block scalars continue at `indent`.
fn inline(node: &Node, indent: usize) -> String {
    match node {
        Node::Null => "null".to_owned(),
        Node::Bool(b) => b.to_string(),
        Node::Int(i) => i.to_string(),
        Node::Number(n) => n.clone(),
        Node::Str(s) => scalar(s, indent),
        Node::Seq(_) => "[]".to_owned(),
        Node::Map(_) => "{}".to_owned(),
    }
}

/// A string scalar in the style go-yaml picks: plain when it reads back as the same string,
/// double-quoted when it would read as something else (a number, a bool, null, a timestamp),
/// single-quoted when plain is not allowed (indicators, `: `, ` #`, surrounding spaces), a
/// literal block for text with line breaks, double-quoted for the rest.
pub(crate) fn scalar(s: &str, indent: usize) -> String {
    if s.contains('\n') {
        return literal(s, indent);
    }
    if resolves_to_non_string(s) {
        return double_quoted(s);
    }
    if plain_allowed(s) {
        return s.to_owned();
    }
    if s.chars().all(|c| (' '..='~').contains(&c)) {
        return format!("'{}'", s.replace('\'', "''"));
    }
    double_quoted(s)
}

fn literal(s: &str, indent: usize) -> String {
    let trailing = s.len() - s.trim_end_matches('\n').len();
    let chomp = match trailing {
        0 => "-",
        1 => "",
        _ => "+",
    };
    let lead = if s.starts_with(' ') { "2" } else { "" };
    let mut out = format!("|{lead}{chomp}");
    let body = s.strip_suffix('\n').unwrap_or(s);
    for line in body.split('\n') {
        out.push('\n');
        if !line.is_empty() {
            out.extend(std::iter::repeat_n(' ', indent));
            out.push_str(line);
        }
    }
    out
}

fn double_quoted(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            '\n' => out.push_str("\\n"),
            c if (c as u32) < 0x20 || c == '\u{7f}' => {
                out.push_str(&format!("\\x{:02X}", c as u32));
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// Whether go-yaml would read `s`, written plain, as something other than a string (YAML 1.1
/// and 1.2 forms: go-yaml quotes both so that old readers agree).
pub(crate) fn resolves_to_non_string(s: &str) -> bool {
    matches!(
        s,
        "" | "~"
            | "null"
            | "Null"
            | "NULL"
            | "true"
            | "True"
            | "TRUE"
            | "false"
            | "False"
            | "FALSE"
            | "y"
            | "Y"
            | "yes"
            | "Yes"
            | "YES"
            | "n"
            | "N"
            | "no"
            | "No"
            | "NO"
            | "on"
            | "On"
            | "ON"
            | "off"
            | "Off"
            | "OFF"
            | ".inf"
            | ".Inf"
            | ".INF"
            | "+.inf"
            | "+.Inf"
            | "+.INF"
            | "-.inf"
            | "-.Inf"
            | "-.INF"
            | ".nan"
            | ".NaN"
            | ".NAN"
    ) || is_int(s)
        || is_float(s)
        || is_base60(s)
        || is_timestamp(s)
}

fn strip_sign(s: &str) -> &str {
    s.strip_prefix(['-', '+']).unwrap_or(s)
}

fn is_int(s: &str) -> bool {
    let body = strip_sign(s);
    let all = |t: &str, f: fn(char) -> bool| !t.is_empty() && t.chars().all(|c| c == '_' || f(c));
    if body == "0" {
        return true;
    }
    if let Some(hex) = body.strip_prefix("0x") {
        return all(hex, |c| c.is_ascii_hexdigit());
    }
    if let Some(oct) = body.strip_prefix("0o") {
        return all(oct, |c| ('0'..='7').contains(&c));
    }
    if let Some(bin) = body.strip_prefix("0b") {
        return all(bin, |c| c == '0' || c == '1');
    }
    if let Some(oct) = body.strip_prefix('0') {
        return all(oct, |c| ('0'..='7').contains(&c));
    }
    body.starts_with(|c: char| c.is_ascii_digit() && c != '0') && all(body, |c| c.is_ascii_digit())
}

fn is_float(s: &str) -> bool {
    // [-+]?(\.[0-9]+|[0-9][0-9_]*(\.[0-9_]*)?)([eE][-+]?[0-9]+)?
    let body = strip_sign(s);
    let (mantissa, exponent) = match body.find(['e', 'E']) {
        Some(at) => (&body[..at], Some(&body[at + 1..])),
        None => (body, None),
    };
    let mantissa_ok = if let Some(frac) = mantissa.strip_prefix('.') {
        !frac.is_empty() && frac.chars().all(|c| c.is_ascii_digit())
    } else {
        let (int, frac) = match mantissa.split_once('.') {
            Some((i, f)) => (i, Some(f)),
            None => (mantissa, None),
        };
        int.starts_with(|c: char| c.is_ascii_digit())
            && int.chars().all(|c| c.is_ascii_digit() || c == '_')
            && frac.is_none_or(|f| f.chars().all(|c| c.is_ascii_digit() || c == '_'))
    };
    let exponent_ok = exponent.is_none_or(|e| {
        let e = strip_sign(e);
        !e.is_empty() && e.chars().all(|c| c.is_ascii_digit())
    });
    mantissa_ok && exponent_ok
}

fn is_base60(s: &str) -> bool {
    // [-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?
    let body = strip_sign(s);
    let (body, _frac) = match body.split_once('.') {
        Some((b, f)) if f.chars().all(|c| c.is_ascii_digit() || c == '_') => (b, Some(f)),
        Some(_) => return false,
        None => (body, None),
    };
    let mut parts = body.split(':');
    let Some(head) = parts.next() else {
        return false;
    };
    if !head.starts_with(|c: char| c.is_ascii_digit())
        || !head.chars().all(|c| c.is_ascii_digit() || c == '_')
    {
        return false;
    }
    let mut any = false;
    for part in parts {
        any = true;
        let ok = match part.as_bytes() {
            [d] => d.is_ascii_digit(),
            [a, b] => (b'0'..=b'5').contains(a) && b.is_ascii_digit(),
            _ => false,
        };
        if !ok {
            return false;
        }
    }
    any
}

fn is_timestamp(s: &str) -> bool {
    // [0-9]{4}-[0-9]{1,2}-[0-9]{1,2}([Tt ].*)?
    let b = s.as_bytes();
    if b.len() < 8 || !b[..4].iter().all(u8::is_ascii_digit) || b[4] != b'-' {
        return false;
    }
    let rest = &s[5..];
    let month_len = rest.bytes().take_while(u8::is_ascii_digit).count();
    if !(1..=2).contains(&month_len) || rest.as_bytes().get(month_len) != Some(&b'-') {
        return false;
    }
    let rest = &rest[month_len + 1..];
    let day_len = rest.bytes().take_while(u8::is_ascii_digit).count();
    if !(1..=2).contains(&day_len) {
        return false;
    }
    match rest.as_bytes().get(day_len) {
        None => true,
        Some(b'T' | b't' | b' ') => true,
        Some(_) => false,
    }
}

/// libyaml's analysis for a single-line scalar in block context.
fn plain_allowed(s: &str) -> bool {
    if s.is_empty() || s.starts_with(' ') || s.ends_with(' ') || s.contains('\t') {
        return false;
    }
    let first = s.as_bytes()[0];
    let second = s.as_bytes().get(1).copied();
    if b"-?:,[]{}#&*!|>'\"%@`".contains(&first)
        && !(b"-?:".contains(&first) && second.is_some_and(|c| c != b' '))
    {
        return false;
    }
    if s.contains(": ") || s.contains(" #") || s.ends_with(':') {
        return false;
    }
    s.chars()
        .all(|c| (' '..='~').contains(&c) || (c as u32) > 0xA0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scalars_are_styled_as_go_yaml_styles_them() {
        for (s, want) in [
            ("10", "\"10\""),
            ("*/15 * * * *", "'*/15 * * * *'"),
            ("calico", "calico"),
            ("https://10.0.1.10:9345", "https://10.0.1.10:9345"),
            ("robot$ci", "robot$ci"),
            (
                "registry.example.internal:5000",
                "registry.example.internal:5000",
            ),
            (
                "eviction-hard=memory.available<500Mi",
                "eviction-hard=memory.available<500Mi",
            ),
            ("yes", "\"yes\""),
            ("1e5", "\"1e5\""),
            ("0777", "\"0777\""),
            ("12:30", "\"12:30\""),
            ("2026-01-01", "\"2026-01-01\""),
            ("", "\"\""),
            ("a: b", "'a: b'"),
            ("-x", "-x"),
            ("- x", "'- x'"),
            ("it's", "it's"),
            ("#x", "'#x'"),
        ] {
            assert_eq!(scalar(s, 2), want, "{s}");
        }
    }

    #[test]
    fn both_layouts() {
        let node = Node::Map(vec![
            (
                "cni".to_owned(),
                Node::Seq(vec![Node::Str("calico".to_owned())]),
            ),
            (
                "users".to_owned(),
                Node::Seq(vec![Node::Map(vec![
                    ("groups".to_owned(), Node::Str("wheel".to_owned())),
                    ("name".to_owned(), Node::Str("ops".to_owned())),
                ])]),
            ),
            ("empty".to_owned(), Node::Map(vec![])),
            ("none".to_owned(), Node::Null),
        ]);
        assert_eq!(
            to_string(&node, Style::V3),
            "cni:\n  - calico\nusers:\n  - groups: wheel\n    name: ops\nempty: {}\nnone: null\n"
        );
        assert_eq!(
            to_string(&node, Style::V2),
            "cni:\n- calico\nusers:\n- groups: wheel\n  name: ops\nempty: {}\nnone: null\n"
        );
        assert_eq!(to_string(&Node::Map(vec![]), Style::V3), "{}\n");
        assert_eq!(
            to_string(
                &Node::Map(vec![("a".to_owned(), Node::Str("x\ny\n".to_owned()))]),
                Style::V3
            ),
            "a: |\n  x\n  y\n"
        );
    }
}
