//! Sprig's dictionary functions.

use std::collections::BTreeMap;
use std::rc::Rc;

use super::super::limits;
use super::Ty::{Any, Map, Str};
use super::{CallError, Func, Value, busy, f, s, strval, v};

/// Sprig's dictionary functions.
pub(super) fn sprig_dicts(name: &str) -> Option<Func> {
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

/// `f` of a map argument's entries (a nil map has none).
fn with_map<T>(v: &Value, f: impl FnOnce(&BTreeMap<String, Value>) -> T) -> Result<T, CallError> {
    match v {
        Value::Map(m) => Ok(f(&m.try_borrow().map_err(|_| busy())?.0)),
        _ => Ok(f(&BTreeMap::new())),
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
