//! Sprig's sequences, splits and lists: making, joining, sorting, taking apart, picking and
//! dropping items.

use super::super::limits;
use super::Ty::{Any, Int, Str};
use super::{CallError, Ctx, Func, Value, f, i, out, s, strval, to_int64, too_big, v};

/// Sprig's sequences and splits: `seq`, `split`, `splitn`, `splitList`, `toStrings`, `until`, `untilStep`.
pub(super) fn sprig_sequences(name: &str) -> Option<Func> {
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
            split_map(c, go_split(s(&a[1]), s(&a[0]), None))
        }),
        "splitn" => f(&[Str, Int, Str], |c, a| {
            split_map(c, go_split(s(&a[2]), s(&a[0]), Some(i(&a[1]))))
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

/// Sprig's list functions that make, join, sort and take apart lists.
pub(super) fn sprig_lists(name: &str) -> Option<Func> {
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
pub(super) fn sprig_list_sets(name: &str) -> Option<Func> {
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

/// `split` / `splitn`'s result: a map of the parts, keyed `_0`, `_1`, ….
fn split_map(c: &mut Ctx, parts: Vec<&str>) -> Result<Value, CallError> {
    c.charge(parts.len())?;
    let map = parts
        .into_iter()
        .enumerate()
        .map(|(n, p)| (format!("_{n}"), Value::str(p)))
        .collect();
    Ok(Value::map(map))
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
