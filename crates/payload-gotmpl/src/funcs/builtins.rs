//! Go's builtin functions (`text/template`'s `builtins`): the logic and comparison functions,
//! `len`, `index`, the `print` family and the escapers.

use std::fmt::Write as _;

use super::super::fmt::sprintf;
use super::super::{limits, value};
use super::Ty::{Any, Str, Val};
use super::{CallError, Ctx, Func, Imp, Value, busy, f, out, s, too_big, v};

/// Go's builtin functions (`text/template`'s `builtins`).
pub(super) fn go_builtins(name: &str) -> Option<Func> {
    match name {
        "and" | "or" => Some(Func {
            params: &[Val],
            variadic: Some(Val),
            imp: Imp::AndOr(name == "or"),
        }),
        "not" => f(&[Val], |_, a| Ok(Value::Bool(!a[0].truth()))),
        "len" => f(&[Val], builtin_len),
        "index" => v(&[Val], Val, builtin_index),
        "print" => v(&[], Any, |c, a| out(c, sprint(&a, false)?)),
        "println" => v(&[], Any, |c, a| out(c, sprint(&a, true)?)),
        "printf" => v(&[Str], Any, |c, a| {
            let text = sprintf(s(&a[0]), &a[1..]).ok_or_else(too_big)?;
            out(c, text)
        }),
        "eq" => v(&[Val], Val, builtin_eq),
        "ne" => f(&[Val, Val], |_, a| Ok(Value::Bool(!eq(&a[0], &a[1])?))),
        "lt" => f(&[Val, Val], |_, a| Ok(Value::Bool(lt(&a[0], &a[1])?))),
        "le" => f(&[Val, Val], |_, a| {
            Ok(Value::Bool(lt(&a[0], &a[1])? || eq(&a[0], &a[1])?))
        }),
        "gt" => f(&[Val, Val], |_, a| {
            Ok(Value::Bool(!(lt(&a[0], &a[1])? || eq(&a[0], &a[1])?)))
        }),
        "ge" => f(&[Val, Val], |_, a| Ok(Value::Bool(!lt(&a[0], &a[1])?))),
        "html" => v(&[], Any, |c, a| out(c, html_escape(&eval_args(&a)?))),
        "js" => v(&[], Any, |c, a| out(c, js_escape(&eval_args(&a)?))),
        "urlquery" => v(&[], Any, |c, a| out(c, url_query(&eval_args(&a)?))),
        _ => None,
    }
}

/// Go's `fmt.Sprint` (`println`: `fmt.Sprintln`) of template arguments.
fn sprint(args: &[Value], ln: bool) -> Result<String, CallError> {
    let mut out = String::new();
    for (n, a) in args.iter().enumerate() {
        let is_str = matches!(a, Value::Str(_));
        let prev_str = n > 0 && matches!(args[n - 1], Value::Str(_));
        if n > 0 && (ln || (!is_str && !prev_str)) {
            out.push(' ');
        }
        value::format_v(a, &mut out).map_err(|_| too_big())?;
        if out.len() > limits::OUTPUT_BYTES {
            return Err(too_big());
        }
    }
    if ln {
        out.push('\n');
    }
    Ok(out)
}

/// Go's `evalArgs` for `html`, `js`, `urlquery`.
fn eval_args(args: &[Value]) -> Result<String, CallError> {
    if let [Value::Str(s)] = args {
        return Ok(s.to_string());
    }
    sprint(args, false)
}

/// Go's `template.HTMLEscapeString`.
fn html_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\0' => out.push('\u{fffd}'),
            '"' => out.push_str("&#34;"),
            '\'' => out.push_str("&#39;"),
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            c => out.push(c),
        }
    }
    out
}

/// Go's `template.JSEscapeString`.
fn js_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\'' => out.push_str("\\'"),
            '"' => out.push_str("\\\""),
            '<' => out.push_str("\\u003C"),
            '>' => out.push_str("\\u003E"),
            '&' => out.push_str("\\u0026"),
            '=' => out.push_str("\\u003D"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04X}", c as u32);
            }
            c => out.push(c),
        }
    }
    out
}

/// Go's `url.QueryEscape`.
fn url_query(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                out.push(char::from(b))
            }
            b' ' => out.push('+'),
            b => {
                let _ = write!(out, "%{b:02X}");
            }
        }
    }
    out
}

/// Go's `len`.
fn builtin_len(_: &mut Ctx, a: Vec<Value>) -> Result<Value, CallError> {
    let n = match &a[0] {
        Value::Str(s) => s.len(),
        Value::List(l) => l.0.len(),
        Value::Map(m) => m.try_borrow().map_err(|_| busy())?.0.len(),
        Value::Missing | Value::Nil => return Err(CallError::Failed("len of nil pointer".into())),
        other => {
            return Err(CallError::Failed(format!(
                "len of type {}",
                other.type_name()
            )));
        }
    };
    Ok(Value::Int(n as i64))
}

/// Go's `index`: lists and strings by integer, maps by string (a missing key is `nil`).
fn builtin_index(_: &mut Ctx, a: Vec<Value>) -> Result<Value, CallError> {
    let mut item = a[0].clone();
    if matches!(item, Value::Missing | Value::Nil) {
        return Err(CallError::Failed("index of untyped nil".into()));
    }
    for idx in &a[1..] {
        item = match &item {
            Value::List(_) | Value::Str(_) => {
                let len = match &item {
                    Value::List(l) => l.0.len(),
                    Value::Str(s) => s.len(),
                    _ => 0,
                };
                let x = match idx {
                    Value::Int(x) => *x,
                    Value::Missing | Value::Nil => {
                        return Err(CallError::Failed(
                            "cannot index slice/array with nil".into(),
                        ));
                    }
                    other => {
                        return Err(CallError::Failed(format!(
                            "cannot index slice/array with type {}",
                            other.type_name()
                        )));
                    }
                };
                if x < 0 || x as u64 >= len as u64 {
                    return Err(CallError::Failed(format!("index out of range: {x}")));
                }
                match &item {
                    Value::List(l) => l.0[x as usize].clone(),
                    Value::Str(s) => Value::Int(i64::from(s.as_bytes()[x as usize])),
                    _ => Value::Nil,
                }
            }
            Value::Map(m) => {
                let key = match idx {
                    Value::Str(k) => k.clone(),
                    Value::Missing | Value::Nil => {
                        return Err(CallError::Failed(
                            "value is nil; should be of type string".into(),
                        ));
                    }
                    other => {
                        return Err(CallError::Failed(format!(
                            "value has type {}; should be string",
                            other.type_name()
                        )));
                    }
                };
                m.try_borrow()
                    .map_err(|_| busy())?
                    .0
                    .get(&*key)
                    .cloned()
                    .unwrap_or(Value::Nil)
            }
            Value::Missing | Value::Nil => {
                return Err(CallError::Failed("index of nil pointer".into()));
            }
            other => {
                return Err(CallError::Failed(format!(
                    "can't index item of type {}",
                    other.type_name()
                )));
            }
        };
    }
    Ok(item)
}

/// Go's comparison kinds.
#[derive(PartialEq, Eq, Clone, Copy)]
enum Kind {
    /// Not a basic kind (lists, maps) or no value.
    Invalid,
    /// bool
    Bool,
    /// int
    Int,
    /// float64
    Float,
    /// string
    Str,
}

/// Go's `basicKind`.
fn kind(v: &Value) -> Kind {
    match v {
        Value::Bool(_) => Kind::Bool,
        Value::Int(_) => Kind::Int,
        Value::Float(_) => Kind::Float,
        Value::Str(_) => Kind::Str,
        _ => Kind::Invalid,
    }
}

/// Whether a value is valid once its interface is unwrapped.
fn valid(v: &Value) -> bool {
    !matches!(v, Value::Missing | Value::Nil)
}

/// Go's `eq` of two values.
fn eq(a: &Value, b: &Value) -> Result<bool, CallError> {
    let (ka, kb) = (kind(a), kind(b));
    if ka != kb {
        if valid(a) && valid(b) {
            return Err(CallError::Failed(
                "incompatible types for comparison".into(),
            ));
        }
        return Ok(false);
    }
    Ok(match (a, b) {
        (Value::Bool(x), Value::Bool(y)) => x == y,
        (Value::Int(x), Value::Int(y)) => x == y,
        (Value::Float(x), Value::Float(y)) => x == y,
        (Value::Str(x), Value::Str(y)) => x == y,
        // Go prints the values too; a variable's value may be a secret, so only types are said:
        // both when they differ, the second's when they are the same.
        (Value::List(_) | Value::Map(_), Value::List(_) | Value::Map(_)) => {
            let (ta, tb) = (a.type_name(), b.type_name());
            return Err(CallError::Failed(if ta == tb {
                format!("non-comparable type {tb}")
            } else {
                format!("non-comparable types {ta} and {tb}")
            }));
        }
        _ => !valid(a) && !valid(b),
    })
}

/// Go's `eq arg1 arg2...`: true if `arg1` equals any of the others.
fn builtin_eq(_: &mut Ctx, a: Vec<Value>) -> Result<Value, CallError> {
    if a.len() < 2 {
        return Err(CallError::Failed("missing argument for comparison".into()));
    }
    for b in &a[1..] {
        if eq(&a[0], b)? {
            return Ok(Value::Bool(true));
        }
    }
    Ok(Value::Bool(false))
}

/// Go's `lt`.
fn lt(a: &Value, b: &Value) -> Result<bool, CallError> {
    let (ka, kb) = (kind(a), kind(b));
    if ka == Kind::Invalid || kb == Kind::Invalid {
        return Err(CallError::Failed("invalid type for comparison".into()));
    }
    if ka != kb {
        return Err(CallError::Failed(
            "incompatible types for comparison".into(),
        ));
    }
    match (a, b) {
        (Value::Int(x), Value::Int(y)) => Ok(x < y),
        (Value::Float(x), Value::Float(y)) => Ok(x < y),
        (Value::Str(x), Value::Str(y)) => Ok(x < y),
        _ => Err(CallError::Failed("invalid type for comparison".into())),
    }
}
