//! Sprig's defaults, JSON and flow functions.

use super::super::value::{self, JsonStyle};
use super::Ty::{Any, Bool, Str};
use super::{CallError, Ctx, Func, Value, f, out, s, v};

/// Sprig's defaults, JSON and flow functions.
pub(super) fn sprig_flow(name: &str) -> Option<Func> {
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
                Err(e) => Err(CallError::Failed(super::super::excerpt(&e.to_string()))),
            }
        }),
        "toJson" => f(&[Any], |c, a| json(c, &a[0], true, false, false)),
        "mustToJson" => f(&[Any], |c, a| json(c, &a[0], true, false, true)),
        "toPrettyJson" => f(&[Any], |c, a| json(c, &a[0], true, true, false)),
        "mustToPrettyJson" => f(&[Any], |c, a| json(c, &a[0], true, true, true)),
        "toRawJson" | "mustToRawJson" => f(&[Any], |c, a| json(c, &a[0], false, false, true)),
        "fail" => f(&[Str], |_, a| {
            Err(CallError::Failed(super::super::excerpt(s(&a[0]))))
        }),
        _ => None,
    }
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
