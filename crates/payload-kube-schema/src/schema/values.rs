//! What values are, for validation: their type in messages, numbers as the schema shows them,
//! JSON equality and a canonical text of it, and the nearest declared name to an unknown one.

use std::fmt::Write as _;

use serde_json::Value;

use super::MAX_DEPTH;

/// What a JSON value is, for messages.
pub(super) fn found(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(n) if is_integer(n) => "an integer",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// An integer as Go's JSON sees one: any number without a fractional part.
pub(super) fn is_integer(number: &serde_json::Number) -> bool {
    number.is_i64()
        || number.is_u64()
        || number
            .as_f64()
            .is_some_and(|f| f.is_finite() && f.fract() == 0.0)
}

/// A number of the schema, without a trailing `.0`.
pub(super) fn show_number(value: f64) -> String {
    if value.fract() == 0.0 && value.abs() < 1e15 {
        format!("{value:.0}")
    } else {
        value.to_string()
    }
}

/// "1 character", "3 items".
pub(super) fn count(n: u64, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// JSON equality as the API server compares (numbers by value, objects regardless of order).
pub(super) fn json_eq(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => match (x.as_i64(), y.as_i64()) {
            (Some(x), Some(y)) => x == y,
            _ => x.as_f64() == y.as_f64(),
        },
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(x, y)| json_eq(x, y))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| json_eq(v, w)))
        }
        _ => a == b,
    }
}

/// A text equal for values [`json_eq`] calls equal (for finding duplicates in linear time).
pub(super) fn canonical(value: &Value, out: &mut String, depth: usize) {
    if depth > MAX_DEPTH {
        out.push('…');
        return;
    }
    match value {
        Value::Null => out.push('n'),
        Value::Bool(b) => out.push(if *b { 't' } else { 'f' }),
        Value::Number(n) => {
            let as_integer = n.as_f64().filter(|f| f.fract() == 0.0 && f.abs() < 9.0e15);
            let _ = match (n.as_i64(), as_integer) {
                (Some(i), _) => write!(out, "#{i}"),
                #[expect(
                    clippy::cast_possible_truncation,
                    reason = "an integral value below 2^53"
                )]
                (None, Some(f)) => write!(out, "#{}", f as i64),
                (None, None) => write!(out, "#{:?}", n.as_f64().unwrap_or(f64::NAN)),
            };
        }
        Value::String(s) => {
            out.push('"');
            out.push_str(&s.replace('\\', "\\\\").replace('"', "\\\""));
            out.push('"');
        }
        Value::Array(items) => {
            out.push('[');
            for item in items {
                canonical(item, out, depth + 1);
                out.push(',');
            }
            out.push(']');
        }
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            out.push('{');
            for key in keys {
                canonical(&Value::String(key.clone()), out, depth + 1);
                out.push(':');
                if let Some(v) = map.get(key) {
                    canonical(v, out, depth + 1);
                }
                out.push(',');
            }
            out.push('}');
        }
    }
}

/// The declared name nearest to an unknown one, when it is close enough to be a typo.
pub(crate) fn nearest<'a>(
    unknown: &str,
    names: impl IntoIterator<Item = &'a str>,
) -> Option<String> {
    if unknown.len() > 64 {
        return None;
    }
    let wanted: Vec<char> = unknown.to_lowercase().chars().collect();
    let mut best: Option<(usize, &str)> = None;
    for name in names {
        let candidate: Vec<char> = name.to_lowercase().chars().collect();
        let distance = edit_distance(&wanted, &candidate);
        let limit = (wanted.len().max(candidate.len()) / 4).clamp(1, 3);
        if distance <= limit && best.is_none_or(|(d, _)| distance < d) {
            best = Some((distance, name));
        }
    }
    best.map(|(_, name)| name.to_owned())
}

/// Optimal string alignment distance (Levenshtein with adjacent transpositions).
fn edit_distance(a: &[char], b: &[char]) -> usize {
    let width = b.len() + 1;
    let mut rows = vec![0usize; (a.len() + 1) * width];
    for (j, cell) in rows.iter_mut().take(width).enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        rows[i * width] = i;
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut best = (rows[(i - 1) * width + j] + 1)
                .min(rows[i * width + j - 1] + 1)
                .min(rows[(i - 1) * width + j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                best = best.min(rows[(i - 2) * width + j - 2] + 1);
            }
            rows[i * width + j] = best;
        }
    }
    rows[a.len() * width + b.len()]
}
