//! Sprig's string functions: case, trimming and cutting; search, quoting, indentation,
//! replacement, checksums and conversions; base64.

use std::fmt::Write as _;

use base64::Engine as _;
use sha2::Digest as _;

use super::super::limits;
use super::Ty::{Any, Int, Str};
use super::{CallError, Ctx, Func, Value, f, i, out, s, strval, to_float64, to_int64, too_big, v};
use crate::quote::go_quote;

/// Sprig's string functions: case, trimming, cutting.
pub(super) fn sprig_strings(name: &str) -> Option<Func> {
    match name {
        "hello" => f(&[], |_, _| Ok(Value::str("Hello!"))),
        "abbrev" => f(&[Int, Str], |c, a| {
            let (w, t) = (i(&a[0]), s(&a[1]));
            if w < 4 || t.chars().count() <= w as usize {
                return out(c, t.to_owned());
            }
            let keep: String = t.chars().take(w as usize - 3).collect();
            out(c, format!("{keep}..."))
        }),
        "trunc" => f(&[Int, Str], |c, a| {
            let (n, t) = (i(&a[0]), s(&a[1]));
            let len = t.len() as i64;
            let r = if n < 0 && len + n > 0 {
                from_byte(t, (len + n) as usize)
            } else if n >= 0 && len > n {
                to_byte(t, n as usize)
            } else {
                t
            };
            out(c, r.to_owned())
        }),
        "trim" => f(&[Str], |c, a| out(c, s(&a[0]).trim().to_owned())),
        "upper" => f(&[Str], |c, a| out(c, s(&a[0]).to_uppercase())),
        "lower" => f(&[Str], |c, a| out(c, s(&a[0]).to_lowercase())),
        "title" => f(&[Str], |c, a| out(c, title(s(&a[0])))),
        "untitle" => f(&[Str], |c, a| {
            let t = s(&a[0]);
            let mut chars = t.chars();
            let r = match chars.next() {
                Some(first) => first.to_lowercase().chain(chars).collect(),
                None => String::new(),
            };
            out(c, r)
        }),
        "substr" => f(&[Int, Int, Str], |c, a| {
            let (start, end, t) = (i(&a[0]), i(&a[1]), s(&a[2]));
            let len = t.len() as i64;
            let r = if start < 0 {
                if end < 0 || end > len {
                    return Err(CallError::Failed(format!(
                        "runtime error: slice bounds out of range [:{end}] with length {len}"
                    )));
                }
                to_byte(t, end as usize)
            } else if end < 0 || end > len {
                if start > len {
                    return Err(CallError::Failed(format!(
                        "runtime error: slice bounds out of range [{start}:{len}]"
                    )));
                }
                from_byte(t, start as usize)
            } else {
                if start > end {
                    return Err(CallError::Failed(format!(
                        "runtime error: slice bounds out of range [{start}:{end}]"
                    )));
                }
                let t = to_byte(t, end as usize);
                from_byte(t, (start as usize).min(t.len()))
            };
            out(c, r.to_owned())
        }),
        "repeat" => f(&[Int, Str], |c, a| {
            let (n, t) = (i(&a[0]), s(&a[1]));
            if n < 0 {
                return Err(CallError::Failed("strings: negative Repeat count".into()));
            }
            let total = (n as u128) * (t.len() as u128);
            if total > limits::OUTPUT_BYTES as u128 {
                return Err(too_big());
            }
            out(c, t.repeat(n as usize))
        }),
        "trimall" | "trimAll" => f(&[Str, Str], |c, a| {
            let set: Vec<char> = s(&a[0]).chars().collect();
            out(c, s(&a[1]).trim_matches(set.as_slice()).to_owned())
        }),
        "trimSuffix" => f(&[Str, Str], |c, a| {
            let (suf, t) = (s(&a[0]), s(&a[1]));
            out(c, t.strip_suffix(suf).unwrap_or(t).to_owned())
        }),
        "trimPrefix" => f(&[Str, Str], |c, a| {
            let (pre, t) = (s(&a[0]), s(&a[1]));
            out(c, t.strip_prefix(pre).unwrap_or(t).to_owned())
        }),
        "nospace" => f(&[Str], |c, a| {
            out(c, s(&a[0]).chars().filter(|c| !c.is_whitespace()).collect())
        }),
        "snakecase" => f(&[Str], |c, a| out(c, delimited(s(&a[0]), '_'))),
        "kebabcase" => f(&[Str], |c, a| out(c, delimited(s(&a[0]), '-'))),
        "camelcase" => f(&[Str], |c, a| out(c, pascal(s(&a[0])))),
        _ => None,
    }
}

/// Sprig's string search, quoting, indentation, replacement, checksums and conversions.
pub(super) fn sprig_text(name: &str) -> Option<Func> {
    match name {
        "contains" => f(&[Str, Str], |_, a| {
            Ok(Value::Bool(s(&a[1]).contains(s(&a[0]))))
        }),
        "hasPrefix" => f(&[Str, Str], |_, a| {
            Ok(Value::Bool(s(&a[1]).starts_with(s(&a[0]))))
        }),
        "hasSuffix" => f(&[Str, Str], |_, a| {
            Ok(Value::Bool(s(&a[1]).ends_with(s(&a[0]))))
        }),
        "quote" => v(&[], Any, |c, a| joined(c, &a, |x| go_quote(&x))),
        "squote" => v(&[], Any, |c, a| joined(c, &a, |x| format!("'{x}'"))),
        "cat" => v(&[], Any, |c, a| joined(c, &a, |x| x)),
        "indent" => f(&[Int, Str], |c, a| out(c, indent(i(&a[0]), s(&a[1]))?)),
        "nindent" => f(&[Int, Str], |c, a| {
            out(c, format!("\n{}", indent(i(&a[0]), s(&a[1]))?))
        }),
        "replace" => f(&[Str, Str, Str], |c, a| {
            let (old, new, src) = (s(&a[0]), s(&a[1]), s(&a[2]));
            let count = if old.is_empty() {
                src.chars().count() + 1
            } else {
                src.matches(old).count()
            };
            let total = src.len() as u128 + (count as u128) * (new.len() as u128);
            if total > limits::OUTPUT_BYTES as u128 {
                return Err(too_big());
            }
            let r = if old.is_empty() {
                let mut r = String::from(new);
                for ch in src.chars() {
                    r.push(ch);
                    r.push_str(new);
                }
                r
            } else {
                src.replace(old, new)
            };
            out(c, r)
        }),
        "plural" => f(&[Str, Str, Int], |c, a| {
            out(
                c,
                if i(&a[2]) == 1 { s(&a[0]) } else { s(&a[1]) }.to_owned(),
            )
        }),
        "sha1sum" => f(&[Str], |c, a| {
            out(c, hex(&sha1::Sha1::digest(s(&a[0]).as_bytes())))
        }),
        "sha256sum" => f(&[Str], |c, a| {
            out(c, hex(&sha2::Sha256::digest(s(&a[0]).as_bytes())))
        }),
        "sha512sum" => f(&[Str], |c, a| {
            out(c, hex(&sha2::Sha512::digest(s(&a[0]).as_bytes())))
        }),
        "adler32sum" => f(&[Str], |c, a| {
            let (mut x, mut y) = (1u32, 0u32);
            for b in s(&a[0]).bytes() {
                x = (x + u32::from(b)) % 65521;
                y = (y + x) % 65521;
            }
            out(c, ((y << 16) | x).to_string())
        }),
        "toString" => f(&[Any], |c, a| out(c, strval(&a[0])?)),
        "atoi" => f(&[Str], |_, a| {
            Ok(Value::Int(s(&a[0]).parse::<i64>().unwrap_or(0)))
        }),
        "int64" | "int" => f(&[Any], |_, a| Ok(Value::Int(to_int64(&a[0])))),
        "float64" => f(&[Any], |_, a| Ok(Value::Float(to_float64(&a[0])))),
        _ => None,
    }
}

/// Sprig's encodings.
pub(super) fn sprig_encodings(name: &str) -> Option<Func> {
    match name {
        "b64enc" => f(&[Str], |c, a| {
            out(
                c,
                base64::engine::general_purpose::STANDARD.encode(s(&a[0]).as_bytes()),
            )
        }),
        "b64dec" => f(&[Str], |c, a| {
            let r = match base64::engine::general_purpose::STANDARD.decode(s(&a[0]).as_bytes()) {
                Ok(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
                Err(e) => format!(
                    "illegal base64 data ({})",
                    super::super::excerpt(&e.to_string())
                ),
            };
            out(c, r)
        }),
        _ => None,
    }
}

/// `quote`, `squote`, `cat`: the arguments but nils, each as `strval` and then `each`, joined
/// by spaces.
fn joined(c: &mut Ctx, a: &[Value], each: impl Fn(String) -> String) -> Result<Value, CallError> {
    let mut parts = Vec::new();
    for x in a.iter().filter(|x| !matches!(x, Value::Nil)) {
        parts.push(each(strval(x)?));
    }
    out(c, parts.join(" "))
}

/// Sprig's `indent`.
fn indent(spaces: i64, text: &str) -> Result<String, CallError> {
    if spaces < 0 {
        return Err(CallError::Failed("strings: negative Repeat count".into()));
    }
    let lines = text.matches('\n').count() as u128 + 1;
    if (spaces as u128) * lines + text.len() as u128 > limits::OUTPUT_BYTES as u128 {
        return Err(too_big());
    }
    let pad = " ".repeat(spaces as usize);
    Ok(format!("{pad}{}", text.replace('\n', &format!("\n{pad}"))))
}

/// Go's deprecated `strings.Title`: upper-cases the first letter of each word.
fn title(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut prev_letter = false;
    for c in text.chars() {
        if !prev_letter {
            out.extend(c.to_uppercase());
        } else {
            out.push(c);
        }
        prev_letter = c.is_alphanumeric() || c == '_' || c == '\'';
    }
    out
}

/// The words of an identifier-like string (xstrings' splitting, approximately).
fn words(text: &str) -> Vec<String> {
    let mut words: Vec<String> = Vec::new();
    let mut cur = String::new();
    let chars: Vec<char> = text.chars().collect();
    for (n, &c) in chars.iter().enumerate() {
        if !c.is_alphanumeric() {
            if !cur.is_empty() {
                words.push(std::mem::take(&mut cur));
            }
            continue;
        }
        let prev = n.checked_sub(1).and_then(|p| chars.get(p)).copied();
        let next = chars.get(n + 1).copied();
        let boundary = c.is_uppercase()
            && prev.is_some_and(|p| {
                p.is_lowercase()
                    || p.is_ascii_digit()
                    || (p.is_uppercase() && next.is_some_and(char::is_lowercase))
            });
        if boundary && !cur.is_empty() {
            words.push(std::mem::take(&mut cur));
        }
        cur.push(c);
    }
    if !cur.is_empty() {
        words.push(cur);
    }
    words
}

/// `snakecase` / `kebabcase`.
fn delimited(text: &str, sep: char) -> String {
    words(text)
        .iter()
        .map(|w| w.to_lowercase())
        .collect::<Vec<_>>()
        .join(&sep.to_string())
}

/// `camelcase` (xstrings' `ToPascalCase`).
fn pascal(text: &str) -> String {
    words(text)
        .iter()
        .map(|w| {
            let mut chars = w.chars();
            match chars.next() {
                Some(f) => f
                    .to_uppercase()
                    .chain(chars.flat_map(char::to_lowercase))
                    .collect(),
                None => String::new(),
            }
        })
        .collect()
}

/// Lower-case hex of bytes.
fn hex(bytes: &[u8]) -> String {
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        let _ = write!(s, "{b:02x}");
    }
    s
}

/// The prefix of `t` up to byte `n` (rounded down to a character boundary).
fn to_byte(t: &str, mut n: usize) -> &str {
    n = n.min(t.len());
    while !t.is_char_boundary(n) {
        n -= 1;
    }
    &t[..n]
}

/// The suffix of `t` from byte `n` (rounded up to a character boundary).
fn from_byte(t: &str, mut n: usize) -> &str {
    n = n.min(t.len());
    while !t.is_char_boundary(n) {
        n += 1;
    }
    &t[n..]
}
