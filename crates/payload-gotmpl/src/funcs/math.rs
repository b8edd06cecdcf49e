//! Sprig's arithmetic, and the conversions of its arguments as `cast.ToInt64` and
//! `cast.ToFloat64` do them.

use super::super::value::{go_parse_float, go_parse_int};
use super::Ty::{self, Any, Int};
use super::{CallError, Func, Value, f, i, v};

/// Sprig's arithmetic (arguments converted as `cast.ToInt64` / `cast.ToFloat64` do).
pub(super) fn sprig_arithmetic(name: &str) -> Option<Func> {
    match name {
        "add1" => f(&[Any], |_, a| {
            Ok(Value::Int(to_int64(&a[0]).wrapping_add(1)))
        }),
        "add" => v(&[], Any, |_, a| {
            Ok(Value::Int(
                a.iter().fold(0i64, |acc, x| acc.wrapping_add(to_int64(x))),
            ))
        }),
        "sub" => f(&[Any, Any], |_, a| {
            Ok(Value::Int(to_int64(&a[0]).wrapping_sub(to_int64(&a[1]))))
        }),
        "div" => f(&[Any, Any], |_, a| divide(&a, i64::wrapping_div)),
        "mod" => f(&[Any, Any], |_, a| divide(&a, i64::wrapping_rem)),
        "mul" => v(&[Any], Any, |_, a| {
            Ok(Value::Int(a[1..].iter().fold(to_int64(&a[0]), |acc, x| {
                acc.wrapping_mul(to_int64(x))
            })))
        }),
        "biggest" | "max" => v(&[Any], Any, |_, a| {
            Ok(Value::Int(a.iter().map(to_int64).max().unwrap_or(0)))
        }),
        "min" => v(&[Any], Any, |_, a| {
            Ok(Value::Int(a.iter().map(to_int64).min().unwrap_or(0)))
        }),
        "maxf" => v(&[Any], Any, |_, a| {
            Ok(Value::Float(
                a[1..]
                    .iter()
                    .fold(to_float64(&a[0]), |m, x| go_max(m, to_float64(x))),
            ))
        }),
        "minf" => v(&[Any], Any, |_, a| {
            Ok(Value::Float(
                a[1..]
                    .iter()
                    .fold(to_float64(&a[0]), |m, x| go_min(m, to_float64(x))),
            ))
        }),
        "ceil" => f(&[Any], |_, a| Ok(Value::Float(to_float64(&a[0]).ceil()))),
        "floor" => f(&[Any], |_, a| Ok(Value::Float(to_float64(&a[0]).floor()))),
        "round" => v(&[Any, Int], Ty::Float, |_, a| {
            let round_on = match a.get(2) {
                Some(Value::Float(r)) => *r,
                _ => 0.5,
            };
            let val = to_float64(&a[0]);
            let pow = 10f64.powf(i(&a[1]) as f64);
            let digit = pow * val;
            let frac = digit.fract();
            let r = if frac >= round_on {
                digit.ceil()
            } else {
                digit.floor()
            };
            Ok(Value::Float(r / pow))
        }),
        _ => None,
    }
}

/// `div` / `mod` of two arguments, Go's panic on a zero divisor.
fn divide(a: &[Value], op: fn(i64, i64) -> i64) -> Result<Value, CallError> {
    let d = to_int64(&a[1]);
    if d == 0 {
        return Err(CallError::Failed(
            "runtime error: integer divide by zero".into(),
        ));
    }
    Ok(Value::Int(op(to_int64(&a[0]), d)))
}

/// `cast.ToInt64`: numbers truncate, strings parse (base prefixes, `3.0`), bools are 1/0,
/// anything else is 0.
pub(crate) fn to_int64(v: &Value) -> i64 {
    match v {
        Value::Int(i) => *i,
        Value::Float(f) => {
            if f.is_nan() {
                i64::MIN
            } else {
                *f as i64
            }
        }
        Value::Bool(b) => i64::from(*b),
        Value::Str(s) => {
            let t = trim_zero_decimal(s);
            go_parse_int(t).unwrap_or(0)
        }
        _ => 0,
    }
}

/// cast's `trimZeroDecimal`: `"3.00"` → `"3"`.
fn trim_zero_decimal(s: &str) -> &str {
    if let Some((int, frac)) = s.split_once('.')
        && !int.is_empty()
        && !frac.is_empty()
        && frac.bytes().all(|b| b == b'0')
    {
        return int;
    }
    s
}

/// `cast.ToFloat64`.
pub(crate) fn to_float64(v: &Value) -> f64 {
    match v {
        Value::Int(i) => *i as f64,
        Value::Float(f) => *f,
        Value::Bool(b) => f64::from(u8::from(*b)),
        Value::Str(s) => go_parse_float(s)
            .or_else(|| go_parse_int(s).map(|i| i as f64))
            .unwrap_or(0.0),
        _ => 0.0,
    }
}

/// Go's `math.Max`.
fn go_max(a: f64, b: f64) -> f64 {
    if a.is_nan() || b.is_nan() {
        f64::NAN
    } else {
        a.max(b)
    }
}

/// Go's `math.Min`.
fn go_min(a: f64, b: f64) -> f64 {
    if a.is_nan() || b.is_nan() {
        f64::NAN
    } else {
        a.min(b)
    }
}
