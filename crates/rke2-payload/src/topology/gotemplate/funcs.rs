//! The functions: Go's `text/template` builtins (`funcs.go`) and Sprig v3.3.0's hermetic map
//! (`functions.go`), each with the Go parameter types that decide what `text/template` accepts.
//! Sprig's `slice` replaces Go's builtin, as a `Funcs` entry does.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::rc::Rc;

use base64::Engine as _;
use sha2::Digest as _;

use super::fmt::sprintf;
use super::limits;
use super::value::{self, JsonStyle, Value, go_parse_float, go_parse_int};
use crate::codec::text::go_quote;

/// A Go parameter type, as far as `text/template`'s argument checks care.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Ty {
    /// `interface{}`: anything; a missing value becomes `nil`.
    Any,
    /// `reflect.Value` (builtins): anything, a missing value stays missing.
    Val,
    /// `string`
    Str,
    /// `int`
    Int,
    /// `bool`
    Bool,
    /// `float64`
    Float,
    /// `map[string]interface{}`
    Map,
}

impl Ty {
    /// Go's name of the type.
    pub(crate) fn go_name(self) -> &'static str {
        match self {
            Ty::Any => "interface {}",
            Ty::Val => "reflect.Value",
            Ty::Str => "string",
            Ty::Int => "int",
            Ty::Bool => "bool",
            Ty::Float => "float64",
            Ty::Map => "map[string]interface {}",
        }
    }
}

/// How a function failed.
#[derive(Debug)]
pub(crate) enum CallError {
    /// The function returned an error or panicked: `error calling NAME: ...`.
    Failed(String),
    /// A message printed as is (limits).
    Plain(String),
    /// Not implemented here.
    #[allow(
        dead_code,
        reason = "the refusal every unimplemented Sprig function is to use"
    )]
    Unsupported,
}

/// The budget shared by the functions of one execution.
#[derive(Debug, Default)]
pub(crate) struct Ctx {
    /// Bytes (and list items) produced so far.
    work: usize,
}

impl Ctx {
    /// Charges `n` units of work, failing past the limit.
    fn charge(&mut self, n: usize) -> Result<(), CallError> {
        if n > limits::OUTPUT_BYTES {
            return Err(CallError::Plain(format!(
                "a function's result would exceed {} bytes",
                limits::OUTPUT_BYTES
            )));
        }
        self.work = self.work.saturating_add(n);
        if self.work > limits::WORK_BYTES {
            return Err(CallError::Plain(format!(
                "the template's functions produce more than {} bytes",
                limits::WORK_BYTES
            )));
        }
        Ok(())
    }
}

/// An implementation.
type Native = fn(&mut Ctx, Vec<Value>) -> Result<Value, CallError>;

/// How a function runs.
#[derive(Clone, Copy)]
pub(crate) enum Imp {
    /// A plain function of its evaluated arguments.
    Native(Native),
    /// `and` (false) / `or` (true): short-circuit evaluation.
    AndOr(bool),
    /// Sprig has it; this evaluator does not.
    Unsupported,
}

/// A function: its fixed parameters, its variadic parameter, its implementation.
#[derive(Clone, Copy)]
pub(crate) struct Func {
    /// The fixed parameters.
    pub(crate) params: &'static [Ty],
    /// The type of the `...` parameter, if any.
    pub(crate) variadic: Option<Ty>,
    /// The implementation.
    pub(crate) imp: Imp,
}

/// Sprig's `nonhermeticFunctions`, which `HermeticTxtFuncMap` deletes.
const NONHERMETIC: &[&str] = &[
    "date",
    "date_in_zone",
    "date_modify",
    "now",
    "htmlDate",
    "htmlDateInZone",
    "dateInZone",
    "dateModify",
    "randAlphaNum",
    "randAlpha",
    "randAscii",
    "randNumeric",
    "randBytes",
    "uuidv4",
    "env",
    "expandenv",
    "getHostByName",
];

/// Sprig functions that exist in the hermetic map but are not implemented here.
const UNSUPPORTED: &[&str] = &[
    "ago",
    "duration",
    "durationRound",
    "must_date_modify",
    "mustDateModify",
    "mustToDate",
    "toDate",
    "unixEpoch",
    "abbrevboth",
    "initials",
    "swapcase",
    "shuffle",
    "wrap",
    "wrapWith",
    "toDecimal",
    "addf",
    "add1f",
    "subf",
    "divf",
    "mulf",
    "randInt",
    "deepCopy",
    "mustDeepCopy",
    "typeOf",
    "typeIs",
    "typeIsLike",
    "kindOf",
    "kindIs",
    "deepEqual",
    "osBase",
    "osClean",
    "osDir",
    "osExt",
    "osIsAbs",
    "b32enc",
    "b32dec",
    "pluck",
    "chunk",
    "mustChunk",
    "bcrypt",
    "htpasswd",
    "genPrivateKey",
    "derivePassword",
    "buildCustomCert",
    "genCA",
    "genCAWithKey",
    "genSelfSignedCert",
    "genSelfSignedCertWithKey",
    "genSignedCert",
    "genSignedCertWithKey",
    "encryptAES",
    "decryptAES",
    "semver",
    "semverCompare",
    "regexMatch",
    "mustRegexMatch",
    "regexFindAll",
    "mustRegexFindAll",
    "regexFind",
    "mustRegexFind",
    "regexReplaceAll",
    "mustRegexReplaceAll",
    "regexReplaceAllLiteral",
    "mustRegexReplaceAllLiteral",
    "regexSplit",
    "mustRegexSplit",
    "regexQuoteMeta",
    "urlParse",
    "urlJoin",
    "call",
];

/// Whether `name` is one of Sprig's non-hermetic functions (undefined under Cluster API).
pub(crate) fn is_nonhermetic(name: &str) -> bool {
    NONHERMETIC.contains(&name)
}

/// Whether `name` is a function of Cluster API's template (implemented or not): Go's builtins
/// and the hermetic Sprig functions, or, for a naming template, Go's builtins alone.
pub(crate) fn is_defined(name: &str, sprig: bool) -> bool {
    if sprig {
        lookup(name).is_some()
    } else {
        GO_BUILTINS.contains(&name)
    }
}

/// The functions of Go's `text/template` itself, all a naming template has.
const GO_BUILTINS: &[&str] = &[
    "and", "call", "html", "index", "slice", "js", "len", "not", "or", "print", "printf",
    "println", "urlquery", "eq", "ge", "gt", "le", "lt", "ne",
];

/// Shorthands for the table.
use Ty::{Any, Bool, Int, Map, Str, Val};

/// A fixed-arity function.
const fn f(params: &'static [Ty], imp: Native) -> Option<Func> {
    Some(Func {
        params,
        variadic: None,
        imp: Imp::Native(imp),
    })
}

/// A variadic function.
const fn v(params: &'static [Ty], rest: Ty, imp: Native) -> Option<Func> {
    Some(Func {
        params,
        variadic: Some(rest),
        imp: Imp::Native(imp),
    })
}

/// The function named `name`, if Cluster API's template has one.
pub(crate) fn lookup(name: &str) -> Option<Func> {
    if UNSUPPORTED.contains(&name) {
        return Some(Func {
            params: &[],
            variadic: Some(Any),
            imp: Imp::Unsupported,
        });
    }
    go_builtins(name)
        .or_else(|| sprig_strings(name))
        .or_else(|| sprig_text(name))
        .or_else(|| sprig_sequences(name))
        .or_else(|| sprig_arithmetic(name))
        .or_else(|| sprig_lists(name))
        .or_else(|| sprig_list_sets(name))
        .or_else(|| sprig_flow(name))
        .or_else(|| sprig_paths(name))
        .or_else(|| sprig_encodings(name))
        .or_else(|| sprig_dicts(name))
}

/// Go's builtin functions (`text/template`'s `builtins`).
fn go_builtins(name: &str) -> Option<Func> {
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

/// Sprig's string functions: case, trimming, cutting.
fn sprig_strings(name: &str) -> Option<Func> {
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
fn sprig_text(name: &str) -> Option<Func> {
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
        "quote" => v(&[], Any, |c, a| {
            let mut parts = Vec::new();
            for x in a.iter().filter(|x| !matches!(x, Value::Nil)) {
                parts.push(go_quote(&strval(x)?));
            }
            out(c, parts.join(" "))
        }),
        "squote" => v(&[], Any, |c, a| {
            let mut parts = Vec::new();
            for x in a.iter().filter(|x| !matches!(x, Value::Nil)) {
                parts.push(format!("'{}'", strval(x)?));
            }
            out(c, parts.join(" "))
        }),
        "cat" => v(&[], Any, |c, a| {
            let mut parts = Vec::new();
            for x in a.iter().filter(|x| !matches!(x, Value::Nil)) {
                parts.push(strval(x)?);
            }
            out(c, parts.join(" "))
        }),
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

/// Sprig's sequences and splits: `seq`, `split`, `splitn`, `splitList`, `toStrings`, `until`, `untilStep`.
fn sprig_sequences(name: &str) -> Option<Func> {
    match name {
        "seq" => v(&[], Int, |c, a| {
            let p: Vec<i64> = a.iter().map(i).collect();
            let list = match p.as_slice() {
                [] => return out(c, String::new()),
                [end] => {
                    let inc = if *end < 1 { -1 } else { 1 };
                    until_step(1, end + inc, inc)?
                }
                [start, end] => {
                    let step = if end < start { -1 } else { 1 };
                    until_step(*start, end + step, step)?
                }
                [start, step, end] => {
                    let inc = if end < start { -1 } else { 1 };
                    if end < start && *step > 0 {
                        return out(c, String::new());
                    }
                    until_step(*start, end + inc, *step)?
                }
                _ => return out(c, String::new()),
            };
            let text: Vec<String> = list.iter().map(ToString::to_string).collect();
            out(c, text.join(" "))
        }),
        "split" => f(&[Str, Str], |c, a| {
            let parts = go_split(s(&a[1]), s(&a[0]), None);
            c.charge(parts.len())?;
            let map = parts
                .into_iter()
                .enumerate()
                .map(|(n, p)| (format!("_{n}"), Value::str(p)))
                .collect();
            Ok(Value::map(map))
        }),
        "splitn" => f(&[Str, Int, Str], |c, a| {
            let parts = go_split(s(&a[2]), s(&a[0]), Some(i(&a[1])));
            c.charge(parts.len())?;
            let map = parts
                .into_iter()
                .enumerate()
                .map(|(n, p)| (format!("_{n}"), Value::str(p)))
                .collect();
            Ok(Value::map(map))
        }),
        "splitList" => f(&[Str, Str], |c, a| {
            let parts = go_split(s(&a[1]), s(&a[0]), None);
            c.charge(parts.len())?;
            Ok(Value::list(parts.into_iter().map(Value::str).collect()))
        }),
        "toStrings" => f(&[Any], |c, a| {
            let items = strslice(&a[0])?;
            c.charge(items.len())?;
            Ok(Value::list(items.into_iter().map(Value::str).collect()))
        }),
        "until" => f(&[Int], |c, a| {
            let n = i(&a[0]);
            let l = until_step(0, n, if n < 0 { -1 } else { 1 })?;
            c.charge(l.len())?;
            Ok(Value::list(l.into_iter().map(Value::Int).collect()))
        }),
        "untilStep" => f(&[Int, Int, Int], |c, a| {
            let l = until_step(i(&a[0]), i(&a[1]), i(&a[2]))?;
            c.charge(l.len())?;
            Ok(Value::list(l.into_iter().map(Value::Int).collect()))
        }),
        _ => None,
    }
}

/// Sprig's arithmetic (arguments converted as `cast.ToInt64` / `cast.ToFloat64` do).
fn sprig_arithmetic(name: &str) -> Option<Func> {
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
        "div" => f(&[Any, Any], |_, a| {
            let d = to_int64(&a[1]);
            if d == 0 {
                return Err(CallError::Failed(
                    "runtime error: integer divide by zero".into(),
                ));
            }
            Ok(Value::Int(to_int64(&a[0]).wrapping_div(d)))
        }),
        "mod" => f(&[Any, Any], |_, a| {
            let d = to_int64(&a[1]);
            if d == 0 {
                return Err(CallError::Failed(
                    "runtime error: integer divide by zero".into(),
                ));
            }
            Ok(Value::Int(to_int64(&a[0]).wrapping_rem(d)))
        }),
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

/// Sprig's list functions that make, join, sort and take apart lists.
fn sprig_lists(name: &str) -> Option<Func> {
    match name {
        "join" => f(&[Str, Any], |c, a| {
            let items = strslice(&a[1])?;
            let sep = s(&a[0]);
            let total: usize = items.iter().map(String::len).sum::<usize>()
                + sep.len().saturating_mul(items.len());
            if total > limits::OUTPUT_BYTES {
                return Err(too_big());
            }
            out(c, items.join(sep))
        }),
        "sortAlpha" => f(&[Any], |c, a| {
            let mut items = match &a[0] {
                Value::List(_) => strslice(&a[0])?,
                other => vec![strval(other)?],
            };
            items.sort();
            c.charge(items.len())?;
            Ok(Value::list(items.into_iter().map(Value::str).collect()))
        }),
        "list" | "tuple" => v(&[], Any, |c, a| {
            c.charge(a.len())?;
            Ok(Value::list(a))
        }),
        "append" | "push" | "mustAppend" | "mustPush" => f(&[Any, Any], |c, a| {
            let mut items = list_of(&a[0], "Cannot push on type")?;
            c.charge(items.len() + 1)?;
            items.push(a[1].clone());
            Ok(Value::list(items))
        }),
        "prepend" | "mustPrepend" => f(&[Any, Any], |c, a| {
            let items = list_of(&a[0], "Cannot prepend on type")?;
            c.charge(items.len() + 1)?;
            let mut r = vec![a[1].clone()];
            r.extend(items);
            Ok(Value::list(r))
        }),
        "first" | "mustFirst" => f(&[Any], |_, a| {
            let items = list_ref(&a[0], "Cannot find first on type")?;
            Ok(items.first().cloned().unwrap_or(Value::Nil))
        }),
        "last" | "mustLast" => f(&[Any], |_, a| {
            let items = list_ref(&a[0], "Cannot find last on type")?;
            Ok(items.last().cloned().unwrap_or(Value::Nil))
        }),
        "rest" | "mustRest" => f(&[Any], |c, a| {
            let items = list_ref(&a[0], "Cannot find rest on type")?;
            c.charge(items.len())?;
            Ok(Value::list(
                items.get(1..).map(<[Value]>::to_vec).unwrap_or_default(),
            ))
        }),
        "initial" | "mustInitial" => f(&[Any], |c, a| {
            let items = list_ref(&a[0], "Cannot find initial on type")?;
            c.charge(items.len())?;
            let n = items.len().saturating_sub(1);
            Ok(Value::list(items[..n].to_vec()))
        }),
        "reverse" | "mustReverse" => f(&[Any], |c, a| {
            let mut items = list_of(&a[0], "Cannot find reverse on type")?;
            c.charge(items.len())?;
            items.reverse();
            Ok(Value::list(items))
        }),
        _ => None,
    }
}

/// Sprig's list functions that pick or drop items: `uniq`, `without`, `has`, `compact`, `slice`, `concat`.
fn sprig_list_sets(name: &str) -> Option<Func> {
    match name {
        "uniq" | "mustUniq" => f(&[Any], |c, a| {
            let items = list_ref(&a[0], "Cannot find uniq on type")?;
            c.charge(items.len().saturating_mul(items.len()) / 16 + items.len())?;
            let mut r: Vec<Value> = Vec::new();
            for x in items {
                if !r.iter().any(|y| y.deep_equal(x)) {
                    r.push(x.clone());
                }
            }
            Ok(Value::list(r))
        }),
        "without" | "mustWithout" => v(&[Any], Any, |c, a| {
            let items = list_ref(&a[0], "Cannot find without on type")?;
            c.charge(items.len().saturating_mul(a.len()) / 16 + items.len())?;
            let omit = &a[1..];
            Ok(Value::list(
                items
                    .iter()
                    .filter(|x| !omit.iter().any(|o| o.deep_equal(x)))
                    .cloned()
                    .collect(),
            ))
        }),
        "has" | "mustHas" => f(&[Any, Any], |c, a| {
            if matches!(a[1], Value::Nil) {
                return Ok(Value::Bool(false));
            }
            let items = list_ref(&a[1], "Cannot find has on type")?;
            c.charge(items.len() / 16)?;
            Ok(Value::Bool(items.iter().any(|x| x.deep_equal(&a[0]))))
        }),
        "compact" | "mustCompact" => f(&[Any], |c, a| {
            let items = list_ref(&a[0], "Cannot compact on type")?;
            c.charge(items.len())?;
            Ok(Value::list(
                items.iter().filter(|x| !x.is_empty()).cloned().collect(),
            ))
        }),
        "slice" | "mustSlice" => v(&[Any], Any, |c, a| {
            let items = match &a[0] {
                Value::List(l) => &l.0,
                other => {
                    return Err(CallError::Failed(format!(
                        "list should be type of slice or array but {}",
                        other.kind_name()
                    )));
                }
            };
            if items.is_empty() {
                return Ok(Value::Nil);
            }
            let start = a.get(1).map_or(0, to_int64);
            let end = a.get(2).map_or(items.len() as i64, to_int64);
            if start < 0 || end < start || end as usize > items.len() {
                return Err(CallError::Failed(format!(
                    "reflect: slice index out of range [{start}:{end}] with capacity {}",
                    items.len()
                )));
            }
            c.charge((end - start) as usize)?;
            Ok(Value::list(items[start as usize..end as usize].to_vec()))
        }),
        "concat" => v(&[], Any, |c, a| {
            let mut r = Vec::new();
            for l in &a {
                match l {
                    Value::List(items) => {
                        c.charge(items.0.len())?;
                        r.extend(items.0.iter().cloned());
                    }
                    other => {
                        return Err(CallError::Failed(format!(
                            "Cannot concat type {} as list",
                            other.kind_name()
                        )));
                    }
                }
            }
            Ok(if r.is_empty() {
                Value::Nil
            } else {
                Value::list(r)
            })
        }),
        _ => None,
    }
}

/// Sprig's defaults, JSON and flow functions.
fn sprig_flow(name: &str) -> Option<Func> {
    match name {
        "default" => v(&[Any], Any, |_, a| {
            Ok(match a.get(1) {
                Some(given) if !given.is_empty() => given.clone(),
                _ => a[0].clone(),
            })
        }),
        "empty" => f(&[Any], |_, a| Ok(Value::Bool(a[0].is_empty()))),
        "coalesce" => v(&[], Any, |_, a| {
            Ok(a.into_iter().find(|x| !x.is_empty()).unwrap_or(Value::Nil))
        }),
        "all" => v(&[], Any, |_, a| {
            Ok(Value::Bool(a.iter().all(|x| !x.is_empty())))
        }),
        "any" => v(&[], Any, |_, a| {
            Ok(Value::Bool(a.iter().any(|x| !x.is_empty())))
        }),
        "ternary" => f(&[Any, Any, Bool], |_, a| {
            Ok(if matches!(a[2], Value::Bool(true)) {
                a[0].clone()
            } else {
                a[1].clone()
            })
        }),
        "fromJson" => f(&[Str], |_, a| {
            Ok(serde_json::from_str::<serde_json::Value>(s(&a[0]))
                .map_or(Value::Nil, |j| Value::from_json(&j)))
        }),
        "mustFromJson" => f(&[Str], |_, a| {
            match serde_json::from_str::<serde_json::Value>(s(&a[0])) {
                Ok(j) => Ok(Value::from_json(&j)),
                Err(e) => Err(CallError::Failed(super::excerpt(&e.to_string()))),
            }
        }),
        "toJson" => f(&[Any], |c, a| json(c, &a[0], true, false, false)),
        "mustToJson" => f(&[Any], |c, a| json(c, &a[0], true, false, true)),
        "toPrettyJson" => f(&[Any], |c, a| json(c, &a[0], true, true, false)),
        "mustToPrettyJson" => f(&[Any], |c, a| json(c, &a[0], true, true, true)),
        "toRawJson" | "mustToRawJson" => f(&[Any], |c, a| json(c, &a[0], false, false, true)),
        "fail" => f(&[Str], |_, a| {
            Err(CallError::Failed(super::excerpt(s(&a[0]))))
        }),
        _ => None,
    }
}

/// Sprig's path functions (Go's `path`, slash-separated).
fn sprig_paths(name: &str) -> Option<Func> {
    match name {
        "base" => f(&[Str], |c, a| out(c, path_base(s(&a[0])))),
        "dir" => f(&[Str], |c, a| out(c, path_dir(s(&a[0])))),
        "clean" => f(&[Str], |c, a| out(c, path_clean(s(&a[0])))),
        "ext" => f(&[Str], |c, a| {
            let t = s(&a[0]);
            let ext = t
                .rfind(['.', '/'])
                .filter(|&p| t.as_bytes()[p] == b'.')
                .map_or("", |p| &t[p..]);
            out(c, ext.to_owned())
        }),
        "isAbs" => f(&[Str], |_, a| Ok(Value::Bool(s(&a[0]).starts_with('/')))),
        _ => None,
    }
}

/// Sprig's encodings.
fn sprig_encodings(name: &str) -> Option<Func> {
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
                Err(e) => format!("illegal base64 data ({})", super::excerpt(&e.to_string())),
            };
            out(c, r)
        }),
        _ => None,
    }
}

/// Sprig's dictionary functions.
fn sprig_dicts(name: &str) -> Option<Func> {
    match name {
        "dict" => v(&[], Any, |c, a| {
            c.charge(a.len())?;
            let mut map = BTreeMap::new();
            for pair in a.chunks(2) {
                let key = strval(&pair[0])?;
                map.insert(key, pair.get(1).cloned().unwrap_or_else(|| Value::str("")));
            }
            Ok(Value::map(map))
        }),
        "get" => f(&[Map, Str], |_, a| {
            Ok(with_map(&a[0], |m| m.get(s(&a[1])).cloned())?.unwrap_or_else(|| Value::str("")))
        }),
        "set" => f(&[Map, Str, Any], |_, a| {
            let Value::Map(m) = &a[0] else {
                return Err(CallError::Failed("assignment to entry in nil map".into()));
            };
            m.try_borrow_mut()
                .map_err(|_| busy())?
                .0
                .insert(s(&a[1]).to_owned(), a[2].clone());
            Ok(a[0].clone())
        }),
        "unset" => f(&[Map, Str], |_, a| {
            if let Value::Map(m) = &a[0] {
                m.try_borrow_mut().map_err(|_| busy())?.0.remove(s(&a[1]));
            }
            Ok(a[0].clone())
        }),
        "hasKey" => f(&[Map, Str], |_, a| {
            Ok(Value::Bool(with_map(&a[0], |m| m.contains_key(s(&a[1])))?))
        }),
        "keys" => v(&[], Map, |c, a| {
            let mut keys = Vec::new();
            for d in &a {
                keys.extend(with_map(d, |m| m.keys().cloned().collect::<Vec<_>>())?);
            }
            keys.sort();
            c.charge(keys.len())?;
            Ok(Value::list(keys.into_iter().map(Value::str).collect()))
        }),
        "values" => f(&[Map], |c, a| {
            let vals = with_map(&a[0], |m| m.values().cloned().collect::<Vec<_>>())?;
            c.charge(vals.len())?;
            Ok(Value::list(vals))
        }),
        "pick" => v(&[Map], Str, |c, a| {
            let picked = with_map(&a[0], |m| {
                a[1..]
                    .iter()
                    .filter_map(|k| m.get_key_value(s(k)).map(|(k, v)| (k.clone(), v.clone())))
                    .collect::<BTreeMap<_, _>>()
            })?;
            c.charge(picked.len())?;
            Ok(Value::map(picked))
        }),
        "omit" => v(&[Map], Str, |c, a| {
            let kept = with_map(&a[0], |m| {
                m.iter()
                    .filter(|(k, _)| !a[1..].iter().any(|o| s(o) == k.as_str()))
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect::<BTreeMap<_, _>>()
            })?;
            c.charge(kept.len())?;
            Ok(Value::map(kept))
        }),
        "merge" | "mustMerge" => v(&[Map], Map, |_, a| merge_all(&a, false)),
        "mergeOverwrite" | "mustMergeOverwrite" => v(&[Map], Map, |_, a| merge_all(&a, true)),
        "dig" => v(&[], Any, |_, a| {
            if a.len() < 3 {
                return Err(CallError::Failed(
                    "dig needs at least three arguments".into(),
                ));
            }
            let n = a.len();
            let default = a[n - 2].clone();
            let mut cur = a[n - 1].clone();
            for (idx, k) in a[..n - 2].iter().enumerate() {
                let Value::Str(k) = k else {
                    return Err(CallError::Failed(format!(
                        "interface conversion: interface {{}} is {}, not string",
                        k.type_name()
                    )));
                };
                let Value::Map(m) = &cur else {
                    return Err(CallError::Failed(format!(
                        "interface conversion: interface {{}} is {}, not map[string]interface {{}}",
                        cur.type_name()
                    )));
                };
                let next = m.try_borrow().map_err(|_| busy())?.0.get(&**k).cloned();
                match next {
                    None => return Ok(default),
                    Some(v) if idx == n - 3 => return Ok(v),
                    Some(v) => cur = v,
                }
            }
            Ok(default)
        }),
        _ => None,
    }
}

/// The string argument (the checks guarantee the type).
fn s(v: &Value) -> &str {
    v.as_str().unwrap_or("")
}

/// The int argument (the checks guarantee the type).
fn i(v: &Value) -> i64 {
    match v {
        Value::Int(i) => *i,
        _ => 0,
    }
}

/// A string result, charged to the budget.
fn out(c: &mut Ctx, text: String) -> Result<Value, CallError> {
    c.charge(text.len())?;
    Ok(Value::str(text))
}

/// The result-too-large error.
fn too_big() -> CallError {
    CallError::Plain(format!(
        "a function's result would exceed {} bytes",
        limits::OUTPUT_BYTES
    ))
}

/// A map borrowed while being changed (only through a map that holds itself).
fn busy() -> CallError {
    CallError::Failed("concurrent map access".into())
}

/// `f` of a map argument's entries (a nil map has none).
fn with_map<T>(v: &Value, f: impl FnOnce(&BTreeMap<String, Value>) -> T) -> Result<T, CallError> {
    match v {
        Value::Map(m) => Ok(f(&m.try_borrow().map_err(|_| busy())?.0)),
        _ => Ok(f(&BTreeMap::new())),
    }
}

/// The items of a list argument, or Sprig's error.
fn list_ref<'v>(v: &'v Value, what: &str) -> Result<&'v [Value], CallError> {
    match v {
        Value::List(l) => Ok(&l.0),
        Value::Nil => Err(CallError::Failed(
            "runtime error: invalid memory address or nil pointer dereference".into(),
        )),
        other => Err(CallError::Failed(format!("{what} {}", other.kind_name()))),
    }
}

/// A copy of a list argument's items.
fn list_of(v: &Value, what: &str) -> Result<Vec<Value>, CallError> {
    list_ref(v, what).map(<[Value]>::to_vec)
}

/// Sprig's `strval`: strings as they are, anything else as `%v`.
fn strval(v: &Value) -> Result<String, CallError> {
    match v {
        Value::Str(s) => Ok(s.to_string()),
        other => value::to_v_string(other)
            .map_err(|_| CallError::Plain("the value nests too deeply to print".into())),
    }
}

/// Sprig's `strslice`: list items as strings, nils dropped; a scalar as a one-item list.
fn strslice(v: &Value) -> Result<Vec<String>, CallError> {
    match v {
        Value::List(items) => items
            .0
            .iter()
            .filter(|x| !matches!(x, Value::Nil | Value::Missing))
            .map(strval)
            .collect(),
        Value::Nil | Value::Missing => Ok(Vec::new()),
        other => Ok(vec![strval(other)?]),
    }
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

/// Sprig's `untilStep`, bounded by [`limits::SEQUENCE`].
fn until_step(start: i64, stop: i64, step: i64) -> Result<Vec<i64>, CallError> {
    let mut v = Vec::new();
    let too_long =
        || CallError::Plain(format!("a sequence longer than {} items", limits::SEQUENCE));
    if stop < start {
        if step >= 0 {
            return Ok(v);
        }
        let mut x = start;
        while x > stop {
            if v.len() >= limits::SEQUENCE {
                return Err(too_long());
            }
            v.push(x);
            x = match x.checked_add(step) {
                Some(n) => n,
                None => break,
            };
        }
        return Ok(v);
    }
    if step <= 0 {
        return Ok(v);
    }
    let mut x = start;
    while x < stop {
        if v.len() >= limits::SEQUENCE {
            return Err(too_long());
        }
        v.push(x);
        x = match x.checked_add(step) {
            Some(n) => n,
            None => break,
        };
    }
    Ok(v)
}

/// Go's `strings.Split` / `strings.SplitN`.
fn go_split<'a>(s: &'a str, sep: &str, n: Option<i64>) -> Vec<&'a str> {
    if n == Some(0) {
        return Vec::new();
    }
    let limit = n.filter(|&n| n > 0).map(|n| n as usize);
    if sep.is_empty() {
        let mut parts: Vec<&str> = Vec::new();
        let mut rest = s;
        while let Some(c) = rest.chars().next() {
            if limit.is_some_and(|l| parts.len() + 1 == l) {
                break;
            }
            let (head, tail) = rest.split_at(c.len_utf8());
            parts.push(head);
            rest = tail;
        }
        if !rest.is_empty() {
            parts.push(rest);
        }
        return parts;
    }
    match limit {
        Some(l) => s.splitn(l, sep).collect(),
        None => s.split(sep).collect(),
    }
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

/// `toJson` and friends; a failing marshal gives "" unless `must`.
fn json(
    c: &mut Ctx,
    v: &Value,
    escape_html: bool,
    pretty: bool,
    must: bool,
) -> Result<Value, CallError> {
    match value::to_json(
        v,
        JsonStyle {
            escape_html,
            pretty,
        },
    ) {
        Some(text) => out(c, text),
        None if must => Err(CallError::Failed("json: unsupported value".into())),
        None => out(c, String::new()),
    }
}

/// `merge` / `mergeOverwrite` (mergo) into the first map, which is changed and returned.
fn merge_all(a: &[Value], overwrite: bool) -> Result<Value, CallError> {
    let Value::Map(dst) = &a[0] else {
        return Ok(Value::str(""));
    };
    for src in &a[1..] {
        let Value::Map(src) = src else { continue };
        if Rc::ptr_eq(dst, src) {
            continue;
        }
        let src = src.try_borrow().map_err(|_| busy())?.0.clone();
        let mut d = dst.try_borrow_mut().map_err(|_| busy())?;
        merge_into(&mut d.0, &src, overwrite, 0)?;
    }
    Ok(a[0].clone())
}

/// mergo's deep merge of `src` into `dst`.
fn merge_into(
    dst: &mut BTreeMap<String, Value>,
    src: &BTreeMap<String, Value>,
    overwrite: bool,
    depth: usize,
) -> Result<(), CallError> {
    if depth > limits::VALUE_DEPTH {
        return Err(CallError::Failed("maps nest too deeply to merge".into()));
    }
    for (k, sv) in src {
        match (dst.get(k), sv) {
            (Some(Value::Map(dm)), Value::Map(sm)) if !Rc::ptr_eq(dm, sm) => {
                let sm = sm.try_borrow().map_err(|_| busy())?.0.clone();
                let dm = dm.clone();
                let mut d = dm.try_borrow_mut().map_err(|_| busy())?;
                merge_into(&mut d.0, &sm, overwrite, depth + 1)?;
            }
            (Some(dv), _) if !dv.is_empty() && (!overwrite || sv.is_empty()) => {}
            _ => {
                dst.insert(k.clone(), sv.clone());
            }
        }
    }
    Ok(())
}

/// Go's `path.Clean`.
fn path_clean(p: &str) -> String {
    if p.is_empty() {
        return ".".into();
    }
    let rooted = p.starts_with('/');
    let mut parts: Vec<&str> = Vec::new();
    for seg in p.split('/') {
        match seg {
            "" | "." => {}
            ".." => {
                if parts.last().is_some_and(|l| *l != "..") {
                    parts.pop();
                } else if !rooted {
                    parts.push("..");
                }
            }
            s => parts.push(s),
        }
    }
    let joined = parts.join("/");
    match (rooted, joined.is_empty()) {
        (true, _) => format!("/{joined}"),
        (false, true) => ".".into(),
        (false, false) => joined,
    }
}

/// Go's `path.Base`.
fn path_base(p: &str) -> String {
    if p.is_empty() {
        return ".".into();
    }
    let t = p.trim_end_matches('/');
    if t.is_empty() {
        return "/".into();
    }
    t.rsplit('/').next().unwrap_or(t).to_owned()
}

/// Go's `path.Dir`.
fn path_dir(p: &str) -> String {
    let dir = match p.rfind('/') {
        Some(i) => &p[..=i],
        None => "",
    };
    path_clean(dir)
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
        // Go prints the values too; a variable's value may be a secret, so only types are said.
        (Value::List(_), Value::Map(_)) | (Value::Map(_), Value::List(_)) => {
            return Err(CallError::Failed(format!(
                "non-comparable types {} and {}",
                a.type_name(),
                b.type_name(),
            )));
        }
        (Value::List(_) | Value::Map(_), Value::List(_) | Value::Map(_)) => {
            return Err(CallError::Failed(format!(
                "non-comparable type {}",
                b.type_name()
            )));
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
