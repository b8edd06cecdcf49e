//! The values a template computes with: Go's `interface{}` as JSON decoding and Sprig make them.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::rc::Rc;

use super::limits;

/// A Go map, shared: Sprig's `set`, `unset` and `merge` change it in place, as Go maps do.
pub(crate) type Map = Rc<RefCell<Dict>>;

/// The entries of a map (dropped without recursion, see [`drain`]).
#[derive(Debug, Default)]
pub(crate) struct Dict(pub(crate) BTreeMap<String, Value>);

/// The items of a list (dropped without recursion, see [`drain`]).
#[derive(Debug, Default)]
pub(crate) struct Seq(pub(crate) Vec<Value>);

/// Drops nested values one by one: a template can nest lists thousands deep
/// (`$x = list $x` in a range), which a recursive drop would overflow the stack on.
fn drain(mut stack: Vec<Value>) {
    while let Some(v) = stack.pop() {
        match v {
            Value::List(rc) => {
                if let Ok(mut seq) = Rc::try_unwrap(rc) {
                    stack.append(&mut seq.0);
                }
            }
            Value::Map(rc) => {
                if let Ok(cell) = Rc::try_unwrap(rc) {
                    let mut dict = cell.into_inner();
                    stack.extend(std::mem::take(&mut dict.0).into_values());
                }
            }
            _ => {}
        }
    }
}

impl Drop for Seq {
    fn drop(&mut self) {
        drain(std::mem::take(&mut self.0));
    }
}

impl Drop for Dict {
    fn drop(&mut self) {
        drain(std::mem::take(&mut self.0).into_values().collect());
    }
}

/// A value of the template: the Go types that JSON decoding, literals and Sprig produce.
#[derive(Debug, Clone)]
pub(crate) enum Value {
    /// Go's invalid `reflect.Value`: a missing map key (printed `<no value>`).
    Missing,
    /// A nil `interface{}` (JSON `null`; printed `<nil>` inside a list, a map or `print`'s
    /// arguments; a pipeline's nil result is [`Value::Missing`], as Go digs into interfaces).
    Nil,
    /// A Go `bool`.
    Bool(bool),
    /// A Go `int` / `int64` (literals, `len`, Sprig arithmetic).
    Int(i64),
    /// A Go `float64` (every JSON number).
    Float(f64),
    /// A Go `string`.
    Str(Rc<str>),
    /// A Go slice (`[]interface{}`, `[]string`, `[]int`).
    List(Rc<Seq>),
    /// A Go `map[string]interface{}` (iterated in key order, as Go's `range`, `fmt` and JSON do).
    Map(Map),
}

impl Value {
    /// A string value.
    pub(crate) fn str(s: impl Into<Rc<str>>) -> Self {
        Value::Str(s.into())
    }

    /// A list value.
    pub(crate) fn list(items: Vec<Value>) -> Self {
        Value::List(Rc::new(Seq(items)))
    }

    /// A map value.
    pub(crate) fn map(entries: BTreeMap<String, Value>) -> Self {
        Value::Map(Rc::new(RefCell::new(Dict(entries))))
    }

    /// The value of JSON-decoded data, as Go's `json.Unmarshal` into `interface{}` makes it.
    pub(crate) fn from_json(json: &serde_json::Value) -> Self {
        Self::from_json_depth(json, 0)
    }

    /// [`Value::from_json`], cut off (as `nil`) below [`limits::VALUE_DEPTH`].
    fn from_json_depth(json: &serde_json::Value, depth: usize) -> Self {
        if depth > limits::VALUE_DEPTH {
            return Value::Nil;
        }
        match json {
            serde_json::Value::Null => Value::Nil,
            serde_json::Value::Bool(b) => Value::Bool(*b),
            serde_json::Value::Number(n) => Value::Float(n.as_f64().unwrap_or(0.0)),
            serde_json::Value::String(s) => Value::str(s.as_str()),
            serde_json::Value::Array(items) => Value::list(
                items
                    .iter()
                    .map(|v| Self::from_json_depth(v, depth + 1))
                    .collect(),
            ),
            serde_json::Value::Object(entries) => Value::map(
                entries
                    .iter()
                    .map(|(k, v)| (k.clone(), Self::from_json_depth(v, depth + 1)))
                    .collect(),
            ),
        }
    }

    /// Go's name of the value's dynamic type, as error messages print it.
    pub(crate) fn type_name(&self) -> &'static str {
        match self {
            Value::Missing => "invalid",
            Value::Nil => "interface {}",
            Value::Bool(_) => "bool",
            Value::Int(_) => "int",
            Value::Float(_) => "float64",
            Value::Str(_) => "string",
            Value::List(_) => "[]interface {}",
            Value::Map(_) => "map[string]interface {}",
        }
    }

    /// Go's reflect kind name (Sprig's messages print it).
    pub(crate) fn kind_name(&self) -> &'static str {
        match self {
            Value::Missing => "invalid",
            Value::Nil => "interface",
            Value::Bool(_) => "bool",
            Value::Int(_) => "int",
            Value::Float(_) => "float64",
            Value::Str(_) => "string",
            Value::List(_) => "slice",
            Value::Map(_) => "map",
        }
    }

    /// Go's `Missing` becomes `nil` when passed to a function's `interface{}` parameter.
    pub(crate) fn into_interface(self) -> Self {
        match self {
            Value::Missing => Value::Nil,
            other => other,
        }
    }

    /// Go's `template.IsTrue`: false, 0, nil, and empty strings, lists and maps are false.
    pub(crate) fn truth(&self) -> bool {
        match self {
            Value::Missing | Value::Nil => false,
            Value::Bool(b) => *b,
            Value::Int(i) => *i != 0,
            Value::Float(f) => *f != 0.0,
            Value::Str(s) => !s.is_empty(),
            Value::List(l) => !l.0.is_empty(),
            Value::Map(m) => m.try_borrow().is_ok_and(|m| !m.0.is_empty()),
        }
    }

    /// Sprig's `empty` (the same as Go's falsity for these types).
    pub(crate) fn is_empty(&self) -> bool {
        !self.truth()
    }

    /// The string, if the value is one.
    pub(crate) fn as_str(&self) -> Option<&str> {
        match self {
            Value::Str(s) => Some(s),
            _ => None,
        }
    }

    /// Go's `reflect.DeepEqual` on these values.
    pub(crate) fn deep_equal(&self, other: &Value) -> bool {
        self.deep_equal_depth(other, 0)
    }

    /// [`Value::deep_equal`] at `depth` (unequal past [`limits::VALUE_DEPTH`]).
    fn deep_equal_depth(&self, other: &Value, depth: usize) -> bool {
        if depth > limits::VALUE_DEPTH {
            return false;
        }
        match (self, other) {
            (Value::Missing | Value::Nil, Value::Missing | Value::Nil) => true,
            (Value::Bool(a), Value::Bool(b)) => a == b,
            (Value::Int(a), Value::Int(b)) => a == b,
            (Value::Float(a), Value::Float(b)) => a == b,
            (Value::Str(a), Value::Str(b)) => a == b,
            (Value::List(a), Value::List(b)) => {
                Rc::ptr_eq(a, b)
                    || (a.0.len() == b.0.len()
                        && a.0
                            .iter()
                            .zip(b.0.iter())
                            .all(|(x, y)| x.deep_equal_depth(y, depth + 1)))
            }
            (Value::Map(a), Value::Map(b)) => {
                if Rc::ptr_eq(a, b) {
                    return true;
                }
                let (Ok(a), Ok(b)) = (a.try_borrow(), b.try_borrow()) else {
                    return false;
                };
                a.0.len() == b.0.len()
                    && a.0
                        .iter()
                        .zip(b.0.iter())
                        .all(|((ka, va), (kb, vb))| ka == kb && va.deep_equal_depth(vb, depth + 1))
            }
            _ => false,
        }
    }
}

/// Printing or encoding went deeper than [`limits::VALUE_DEPTH`] (a map that holds itself).
#[derive(Debug)]
pub(crate) struct TooDeep;

/// Go's `fmt` `%v` of the value (`print`, `{{ . }}`): `[a b]`, `map[k:v]`, `<nil>`.
pub(crate) fn format_v(value: &Value, out: &mut String) -> Result<(), TooDeep> {
    format_v_depth(value, out, 0)
}

/// [`format_v`] at `depth`.
fn format_v_depth(value: &Value, out: &mut String, depth: usize) -> Result<(), TooDeep> {
    if depth > limits::VALUE_DEPTH || out.len() > limits::OUTPUT_BYTES {
        return Err(TooDeep);
    }
    match value {
        Value::Missing => out.push_str("<no value>"),
        Value::Nil => out.push_str("<nil>"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Int(i) => {
            let _ = write!(out, "{i}");
        }
        Value::Float(f) => out.push_str(&format_float_g(*f)),
        Value::Str(s) => out.push_str(s),
        Value::List(items) => {
            out.push('[');
            for (i, item) in items.0.iter().enumerate() {
                if i > 0 {
                    out.push(' ');
                }
                format_v_depth(item, out, depth + 1)?;
            }
            out.push(']');
        }
        Value::Map(map) => {
            out.push_str("map[");
            let map = map.try_borrow().map_err(|_| TooDeep)?;
            for (i, (k, v)) in map.0.iter().enumerate() {
                if i > 0 {
                    out.push(' ');
                }
                out.push_str(k);
                out.push(':');
                format_v_depth(v, out, depth + 1)?;
            }
            out.push(']');
        }
    }
    Ok(())
}

/// The value as a string, the way `%v` prints it (errors only past the depth limit).
pub(crate) fn to_v_string(value: &Value) -> Result<String, TooDeep> {
    let mut out = String::new();
    format_v(value, &mut out)?;
    Ok(out)
}

/// The shortest decimal digits of `f` (finite, non-zero, positive) and the exponent `e` such
/// that `f = 0.d1d2d3... × 10^e`.
pub(crate) fn shortest_digits(f: f64) -> (String, i32) {
    // Rust's `{:e}` prints the shortest round-tripping digits: "1.2345e6".
    let s = format!("{:e}", f.abs());
    let (mantissa, exp) = s.split_once('e').unwrap_or((s.as_str(), "0"));
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    let exp: i32 = exp.parse().unwrap_or(0);
    (digits, exp + 1)
}

/// Go's `fmt` `%v` of a `float64`: `strconv.FormatFloat(f, 'g', -1, 64)`, the shortest digits,
/// in exponent form when the exponent is below -4 or at least 6 (so 1000000 prints `1e+06`).
pub(crate) fn format_float_g(f: f64) -> String {
    if f.is_nan() {
        return "NaN".into();
    }
    if f.is_infinite() {
        return if f > 0.0 {
            "+Inf".into()
        } else {
            "-Inf".into()
        };
    }
    if f == 0.0 {
        return if f.is_sign_negative() {
            "-0".into()
        } else {
            "0".into()
        };
    }
    let (digits, dp) = shortest_digits(f);
    let exp = dp - 1;
    let neg = if f < 0.0 { "-" } else { "" };
    if !(-4..6).contains(&exp) {
        format!("{neg}{}", exp_form(&digits, exp))
    } else {
        format!("{neg}{}", fixed_form(&digits, dp))
    }
}

/// `d.ddde±XX` (at least two exponent digits), as Go's `%e` of the shortest digits.
pub(crate) fn exp_form(digits: &str, exp: i32) -> String {
    let mut out = String::new();
    let mut chars = digits.chars();
    out.push(chars.next().unwrap_or('0'));
    let rest: String = chars.collect();
    if !rest.is_empty() {
        out.push('.');
        out.push_str(&rest);
    }
    let sign = if exp < 0 { '-' } else { '+' };
    let _ = write!(out, "e{sign}{:02}", exp.unsigned_abs());
    out
}

/// The digits placed around the decimal point at `dp` (no exponent).
fn fixed_form(digits: &str, dp: i32) -> String {
    if dp <= 0 {
        let zeros = "0".repeat(dp.unsigned_abs() as usize);
        format!("0.{zeros}{digits}")
    } else {
        let dp = dp as usize;
        if digits.len() <= dp {
            format!("{digits}{}", "0".repeat(dp - digits.len()))
        } else {
            format!("{}.{}", &digits[..dp], &digits[dp..])
        }
    }
}

/// How [`to_json`] writes.
#[derive(Clone, Copy)]
pub(crate) struct JsonStyle {
    /// Escape `<`, `>` and `&` as Go's `json.Marshal` does (not `toRawJson`).
    pub(crate) escape_html: bool,
    /// Indent by two spaces per level (`toPrettyJson`).
    pub(crate) pretty: bool,
}

/// Go's `encoding/json` of the value; `None` where Go's marshalling fails (NaN, infinity, or
/// deeper than the limit).
pub(crate) fn to_json(value: &Value, style: JsonStyle) -> Option<String> {
    let mut out = String::new();
    json_depth(value, style, &mut out, 0)?;
    Some(out)
}

/// [`to_json`] at `depth`.
fn json_depth(value: &Value, style: JsonStyle, out: &mut String, depth: usize) -> Option<()> {
    if depth > limits::VALUE_DEPTH || out.len() > limits::OUTPUT_BYTES {
        return None;
    }
    let newline = |out: &mut String, level: usize| {
        if style.pretty {
            out.push('\n');
            for _ in 0..level {
                out.push_str("  ");
            }
        }
    };
    match value {
        Value::Missing | Value::Nil => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Int(i) => {
            let _ = write!(out, "{i}");
        }
        Value::Float(f) => out.push_str(&json_float(*f)?),
        Value::Str(s) => json_string(s, style.escape_html, out),
        Value::List(items) => {
            out.push('[');
            for (i, item) in items.0.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                newline(out, depth + 1);
                json_depth(item, style, out, depth + 1)?;
            }
            if !items.0.is_empty() {
                newline(out, depth);
            }
            out.push(']');
        }
        Value::Map(map) => {
            let map = map.try_borrow().ok()?;
            out.push('{');
            for (i, (k, v)) in map.0.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                newline(out, depth + 1);
                json_string(k, style.escape_html, out);
                out.push(':');
                if style.pretty {
                    out.push(' ');
                }
                json_depth(v, style, out, depth + 1)?;
            }
            if !map.0.is_empty() {
                newline(out, depth);
            }
            out.push('}');
        }
    }
    Some(())
}

/// Go's `encoding/json` float: fixed notation unless below 1e-6 or at least 1e21, then `1e+21`
/// / `1e-7` (no exponent padding).
fn json_float(f: f64) -> Option<String> {
    if !f.is_finite() {
        return None;
    }
    let abs = f.abs();
    if abs != 0.0 && !(1e-6..1e21).contains(&abs) {
        let (digits, dp) = shortest_digits(f);
        let exp = dp - 1;
        let s = exp_form(&digits, exp);
        // Go trims "e-07" to "e-7".
        let s = s.replace("e-0", "e-").replace("e+0", "e+");
        return Some(if f < 0.0 { format!("-{s}") } else { s });
    }
    if f == 0.0 {
        return Some(if f.is_sign_negative() {
            "-0".into()
        } else {
            "0".into()
        });
    }
    // Rust's Display is the shortest round-trip digits in fixed notation.
    Some(format!("{f}"))
}

/// A JSON string as Go writes it.
fn json_string(s: &str, escape_html: bool, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '<' | '>' | '&' if escape_html => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            '\u{2028}' | '\u{2029}' => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

/// Go's `strconv.ParseInt(s, 0, 64)`: sign, base prefix (`0x`, `0o`, `0b`, leading `0` for
/// octal) and underscores between digits.
pub(crate) fn go_parse_int(s: &str) -> Option<i64> {
    let (neg, body) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    let lower = body.to_ascii_lowercase();
    let (radix, digits, prefixed) = if let Some(d) = lower.strip_prefix("0x") {
        (16, d, true)
    } else if let Some(d) = lower.strip_prefix("0o") {
        (8, d, true)
    } else if let Some(d) = lower.strip_prefix("0b") {
        (2, d, true)
    } else if lower.len() > 1 && lower.starts_with('0') {
        (8, &lower[1..], true)
    } else {
        (10, lower.as_str(), false)
    };
    if digits.is_empty()
        || digits.starts_with('_') && !prefixed
        || digits.ends_with('_')
        || digits.contains("__")
    {
        return None;
    }
    if digits.contains('_') && !prefixed && radix == 10 && digits.starts_with('_') {
        return None;
    }
    let clean: String = digits.chars().filter(|&c| c != '_').collect();
    if clean.is_empty() || !clean.chars().all(|c| c.is_digit(radix)) {
        return None;
    }
    let magnitude = u64::from_str_radix(&clean, radix).ok()?;
    if neg {
        if magnitude == 1 << 63 {
            Some(i64::MIN)
        } else {
            i64::try_from(magnitude).ok().map(|m| -m)
        }
    } else {
        i64::try_from(magnitude).ok()
    }
}

/// Go's `strconv.ParseFloat(s, 64)` for decimal literals (and `inf`/`nan` words).
pub(crate) fn go_parse_float(s: &str) -> Option<f64> {
    let clean: String = s.chars().filter(|&c| c != '_').collect();
    let lower = clean.to_ascii_lowercase();
    let unsigned = lower.trim_start_matches(['+', '-']);
    if unsigned.starts_with("0x") {
        return None;
    }
    if matches!(unsigned, "inf" | "infinity" | "nan") {
        return lower.parse().ok();
    }
    if !unsigned.starts_with(|c: char| c.is_ascii_digit() || c == '.') {
        return None;
    }
    lower.parse().ok()
}
