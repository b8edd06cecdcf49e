//! Go's `fmt` verbs for `printf`: `%v %s %d %q %t %f %e %g %x %X %o %b %c %%` with flags
//! `- + # 0 space`, width and precision; mismatches print as Go does (`%!d(string=x)`).

use std::fmt::Write as _;

use super::limits;
use super::value::{self, Value};
use crate::quote::go_quote;

/// One parsed verb's flags.
#[derive(Default, Clone, Copy)]
struct Spec {
    /// `-`
    minus: bool,
    /// `+`
    plus: bool,
    /// `#`
    sharp: bool,
    /// `0`
    zero: bool,
    /// ` `
    space: bool,
    /// The width.
    width: Option<usize>,
    /// The precision.
    prec: Option<usize>,
}

/// Go's `fmt.Sprintf`; `None` when the result would exceed the output limit.
pub(crate) fn sprintf(format: &str, args: &[Value]) -> Option<String> {
    let mut out = String::new();
    let mut next = 0usize;
    let mut chars = format.chars().peekable();
    while let Some(c) = chars.next() {
        if out.len() > limits::OUTPUT_BYTES {
            return None;
        }
        if c != '%' {
            out.push(c);
            continue;
        }
        let mut spec = Spec::default();
        while let Some(&f) = chars.peek() {
            match f {
                '-' => spec.minus = true,
                '+' => spec.plus = true,
                '#' => spec.sharp = true,
                '0' => spec.zero = true,
                ' ' => spec.space = true,
                _ => break,
            }
            chars.next();
        }
        let number = |chars: &mut std::iter::Peekable<std::str::Chars<'_>>| {
            let mut n: Option<usize> = None;
            while let Some(&d) = chars.peek() {
                let Some(d) = d.to_digit(10) else { break };
                n = Some(n.unwrap_or(0).saturating_mul(10).saturating_add(d as usize));
                chars.next();
            }
            n
        };
        spec.width = number(&mut chars);
        if chars.peek() == Some(&'.') {
            chars.next();
            spec.prec = Some(number(&mut chars).unwrap_or(0));
        }
        if spec.width.unwrap_or(0) > limits::OUTPUT_BYTES || spec.prec.unwrap_or(0) > 10_000 {
            return None;
        }
        let Some(verb) = chars.next() else {
            out.push_str("%!(NOVERB)");
            break;
        };
        if verb == '%' {
            out.push('%');
            continue;
        }
        let Some(arg) = args.get(next) else {
            let _ = write!(out, "%!{verb}(MISSING)");
            continue;
        };
        next += 1;
        let text = format_one(verb, spec, arg)?;
        out.push_str(&text);
    }
    if next < args.len() {
        out.push_str("%!(EXTRA ");
        for (i, a) in args[next..].iter().enumerate() {
            if i > 0 {
                out.push_str(", ");
            }
            let shown = value::to_v_string(a).ok()?;
            match a {
                Value::Nil | Value::Missing => out.push_str("<nil>"),
                _ => {
                    let _ = write!(out, "{}={shown}", a.type_name());
                }
            }
        }
        out.push(')');
    }
    (out.len() <= limits::OUTPUT_BYTES).then_some(out)
}

/// Pads `body` to the width (zero padding after the sign for numbers).
fn pad(spec: Spec, body: String, numeric: bool) -> String {
    let Some(width) = spec.width else { return body };
    let len = body.chars().count();
    if len >= width {
        return body;
    }
    let fill = width - len;
    if spec.minus {
        return format!("{body}{}", " ".repeat(fill));
    }
    if spec.zero && numeric {
        let (sign, digits) = match body.strip_prefix(['-', '+', ' ']) {
            Some(rest) => (&body[..1], rest),
            None => ("", body.as_str()),
        };
        return format!("{sign}{}{digits}", "0".repeat(fill));
    }
    if spec.zero {
        return format!("{}{body}", "0".repeat(fill));
    }
    format!("{}{body}", " ".repeat(fill))
}

/// The sign prefix of a non-negative number under `+` / ` `.
fn sign(spec: Spec, negative: bool) -> &'static str {
    if negative {
        "-"
    } else if spec.plus {
        "+"
    } else if spec.space {
        " "
    } else {
        ""
    }
}

/// Formats one argument with one verb.
fn format_one(verb: char, spec: Spec, arg: &Value) -> Option<String> {
    let bad = |arg: &Value| -> Option<String> {
        Some(match arg {
            Value::Nil | Value::Missing => format!("%!{verb}(<nil>)"),
            _ => format!(
                "%!{verb}({}={})",
                arg.type_name(),
                value::to_v_string(arg).ok()?
            ),
        })
    };
    if verb == 'T' {
        // The dynamic type (Go keeps `int64` and `[]string` apart, this evaluator does not).
        let name = match arg {
            Value::Nil | Value::Missing => "<nil>",
            other => other.type_name(),
        };
        return Some(pad(spec, name.to_owned(), false));
    }
    match arg {
        Value::List(items) if verb != 'v' || spec.width.is_some() => {
            // fmt applies the verb to each element.
            let mut parts = Vec::with_capacity(items.0.len());
            for item in &items.0 {
                parts.push(format_one(verb, spec, item)?);
            }
            return Some(format!("[{}]", parts.join(" ")));
        }
        Value::Map(map) if verb != 'v' || spec.width.is_some() => {
            let map = map.try_borrow().ok()?;
            let mut parts = Vec::with_capacity(map.0.len());
            for (k, v) in &map.0 {
                parts.push(format!(
                    "{}:{}",
                    format_one(verb, spec, &Value::str(k.as_str()))?,
                    format_one(verb, spec, v)?
                ));
            }
            return Some(format!("map[{}]", parts.join(" ")));
        }
        _ => {}
    }
    let text = match (verb, arg) {
        ('v', Value::Float(f)) if spec.prec.is_some() => float_g(*f, spec),
        ('v', Value::Int(i)) => format!("{}{}", sign(spec, *i < 0), i.unsigned_abs()),
        ('v', Value::Float(f)) => {
            let s = value::format_float_g(f.abs());
            format!("{}{s}", sign(spec, f.is_sign_negative()))
        }
        ('v', Value::Str(s)) | ('s', Value::Str(s)) => truncate(s, spec.prec),
        ('v', other) => value::to_v_string(other).ok()?,
        ('s', Value::Bool(_) | Value::Int(_) | Value::Float(_) | Value::Nil | Value::Missing) => {
            return bad(arg);
        }
        ('q', Value::Str(s)) => {
            if spec.sharp && !s.contains('`') {
                format!("`{s}`")
            } else {
                go_quote(&truncate(s, spec.prec))
            }
        }
        ('q', Value::Int(i)) => match u32::try_from(*i).ok().and_then(char::from_u32) {
            Some(c) => format!(
                "'{}'",
                go_quote(&c.to_string())
                    .trim_matches('"')
                    .replace("\\\"", "\"")
            ),
            None => "'\u{fffd}'".to_owned(),
        },
        ('t', Value::Bool(b)) => b.to_string(),
        ('d', Value::Int(i)) => {
            let digits = i.unsigned_abs().to_string();
            let digits = match spec.prec {
                Some(p) if digits.len() < p => format!("{}{digits}", "0".repeat(p - digits.len())),
                _ => digits,
            };
            format!("{}{digits}", sign(spec, *i < 0))
        }
        ('x' | 'X' | 'o' | 'b', Value::Int(i)) => {
            let m = i.unsigned_abs();
            let digits = match verb {
                'x' => format!("{m:x}"),
                'X' => format!("{m:X}"),
                'o' => format!("{m:o}"),
                _ => format!("{m:b}"),
            };
            let prefix = match (spec.sharp, verb) {
                (true, 'x') => "0x",
                (true, 'X') => "0X",
                (true, 'o') => "0",
                (true, 'b') => "0b",
                _ => "",
            };
            format!("{}{prefix}{digits}", sign(spec, *i < 0))
        }
        ('c', Value::Int(i)) => u32::try_from(*i)
            .ok()
            .and_then(char::from_u32)
            .unwrap_or('\u{fffd}')
            .to_string(),
        ('x' | 'X', Value::Str(s)) => {
            let mut h = String::new();
            for b in s.bytes() {
                if verb == 'x' {
                    let _ = write!(h, "{b:02x}");
                } else {
                    let _ = write!(h, "{b:02X}");
                }
            }
            h
        }
        ('f' | 'F', Value::Float(f)) => {
            let p = spec.prec.unwrap_or(6);
            let s = format!("{:.p$}", f.abs());
            format!("{}{s}", sign(spec, f.is_sign_negative()))
        }
        ('e' | 'E', Value::Float(f)) => {
            let p = spec.prec.unwrap_or(6);
            let s = go_exp(*f, p, spec);
            if verb == 'E' { s.to_uppercase() } else { s }
        }
        ('g' | 'G', Value::Float(f)) => {
            let s = float_g(*f, spec);
            if verb == 'G' { s.to_uppercase() } else { s }
        }
        _ => return bad(arg),
    };
    let numeric = matches!(arg, Value::Int(_) | Value::Float(_)) && verb != 'c' && verb != 'q';
    Some(pad(spec, text, numeric))
}

/// `%e` with `p` digits after the point, Go style (`1.500000e+00`).
fn go_exp(f: f64, p: usize, spec: Spec) -> String {
    if !f.is_finite() {
        return value::format_float_g(f);
    }
    let s = format!("{:.p$e}", f.abs());
    let (mantissa, exp) = s.split_once('e').unwrap_or((s.as_str(), "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let esign = if exp < 0 { '-' } else { '+' };
    format!(
        "{}{mantissa}e{esign}{:02}",
        sign(spec, f.is_sign_negative()),
        exp.unsigned_abs()
    )
}

/// `%g` (and `%.Ng`): shortest, or `N` significant digits.
fn float_g(f: f64, spec: Spec) -> String {
    let s = match spec.prec {
        None => value::format_float_g(f.abs()),
        Some(p) => {
            let p = p.max(1);
            if f == 0.0 || !f.is_finite() {
                value::format_float_g(f.abs())
            } else {
                let e = format!("{:.*e}", p - 1, f.abs());
                let (mantissa, exp) = e.split_once('e').unwrap_or((e.as_str(), "0"));
                let exp: i32 = exp.parse().unwrap_or(0);
                let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
                let digits = digits.trim_end_matches('0');
                let digits = if digits.is_empty() { "0" } else { digits };
                if exp < -4 || exp >= p as i32 {
                    value::exp_form(digits, exp)
                } else {
                    let v: f64 = format!("{mantissa}e{exp}").parse().unwrap_or(0.0);
                    let decimals = (digits.len() as i32 - exp - 1).max(0) as usize;
                    format!("{v:.decimals$}")
                }
            }
        }
    };
    format!("{}{s}", sign(spec, f.is_sign_negative()))
}

/// `s` cut to `prec` characters.
fn truncate(s: &str, prec: Option<usize>) -> String {
    match prec {
        Some(p) => s.chars().take(p).collect(),
        None => s.to_owned(),
    }
}
