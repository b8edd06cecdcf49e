//! YAML read as cloud-init reads it: PyYAML's `SafeLoader`, YAML 1.1 scalar rules.
//!
//! serde-saphyr reads YAML 1.2, where `0o600` is an integer and `yes` a string; cloud-init
//! (PyYAML) reads `0o600` as a string, `0600` as the octal integer 384, `yes`/`on`/`off` as
//! booleans, `1:30` as the sexagesimal integer 90 and `1e5` (no dot) as a string. Checking a
//! cloud-config against cloud-init's JSON schema needs the values cloud-init sees, so this reader
//! walks the parser's events and resolves plain scalars with PyYAML's implicit resolvers.
//!
//! Aliases are expanded with a node budget (an alias bomb is an error, not a hang).

use serde_json::{Map, Number, Value};
use serde_saphyr::granit_parser::{Event, Parser, ScalarStyle, Tag};

/// The most nodes a document may expand to.
const MAX_NODES: usize = 250_000;
/// The deepest nesting.
const MAX_DEPTH: usize = 256;

/// The first document of `text` as PyYAML's `safe_load` gives it, as JSON (timestamps and
/// binary stay text; `.inf`/`.nan` become strings, which JSON has no numbers for). `Ok(None)`
/// for an empty stream.
///
/// # Errors
/// The parser's message (scrubbed of input text) when the text is not YAML, or when it
/// expands past the node budget or nests too deeply.
pub(crate) fn first_document(text: &str) -> Result<Option<Value>, String> {
    let mut reader = Reader {
        events: Parser::new_from_str(text),
        anchors: Vec::new(),
        nodes: 0,
    };
    loop {
        match reader.next()? {
            None | Some(Event::StreamEnd) => return Ok(None),
            Some(Event::DocumentStart(..)) => {
                let Some(first) = reader.next()? else {
                    return Ok(None);
                };
                if matches!(first, Event::DocumentEnd) {
                    return Ok(Some(Value::Null));
                }
                return reader.node(first, 0).map(Some);
            }
            Some(_) => {}
        }
    }
}

struct Reader<'a> {
    events: Parser<'a, serde_saphyr::granit_parser::StrInput<'a>>,
    /// Anchored nodes by id (aliases refer to the most recent definition).
    anchors: Vec<(usize, Value)>,
    nodes: usize,
}

impl<'a> Reader<'a> {
    fn next(&mut self) -> Result<Option<Event<'a>>, String> {
        loop {
            match self.events.next_event() {
                None => return Ok(None),
                Some(Err(e)) => return Err(super::text::parser_message(&e.to_string())),
                // Anchors' names and comments are presentation, not nodes (a comment read as a
                // node made the whole document unreadable here).
                Some(Ok((event, _))) => {
                    if super::tree::is_data(&event) {
                        return Ok(Some(event));
                    }
                }
            }
        }
    }

    fn count(&mut self, n: usize) -> Result<(), String> {
        self.nodes = self.nodes.saturating_add(n);
        if self.nodes > MAX_NODES {
            return Err(format!(
                "the YAML exceeds a reading limit at {MAX_NODES} nodes once its aliases are expanded (an alias bomb, or an input too large to read safely)"
            ));
        }
        Ok(())
    }

    fn node(&mut self, event: Event<'a>, depth: usize) -> Result<Value, String> {
        if depth > MAX_DEPTH {
            return Err(format!("the YAML nests deeper than {MAX_DEPTH} levels"));
        }
        self.count(1)?;
        match event {
            Event::Scalar(text, style, anchor, tag) => {
                let value = scalar(&text, style, tag.as_deref());
                self.remember(anchor, &value);
                Ok(value)
            }
            Event::SequenceStart(_, anchor, _) => {
                let mut items = Vec::new();
                loop {
                    match self.next()? {
                        Some(Event::SequenceEnd) => break,
                        Some(e) => items.push(self.node(e, depth + 1)?),
                        None => return Err("the YAML ends inside a sequence".to_owned()),
                    }
                }
                let value = Value::Array(items);
                self.remember(anchor, &value);
                Ok(value)
            }
            Event::MappingStart(_, anchor, _) => {
                let mut map = Map::new();
                loop {
                    let key = match self.next()? {
                        Some(Event::MappingEnd) => break,
                        Some(e) => self.node(e, depth + 1)?,
                        None => return Err("the YAML ends inside a mapping".to_owned()),
                    };
                    let value = match self.next()? {
                        Some(e) => self.node(e, depth + 1)?,
                        None => return Err("the YAML ends inside a mapping".to_owned()),
                    };
                    // A merge key folds the mapping(s) in, as PyYAML does.
                    if key == Value::String("<<".to_owned()) {
                        let merged: Vec<Value> = match value {
                            Value::Array(items) => items,
                            other => vec![other],
                        };
                        for m in merged {
                            if let Value::Object(m) = m {
                                for (k, v) in m {
                                    map.entry(k).or_insert(v);
                                }
                            }
                        }
                        continue;
                    }
                    // PyYAML: the last of a repeated key wins.
                    map.insert(key_text(&key), value);
                }
                let value = Value::Object(map);
                self.remember(anchor, &value);
                Ok(value)
            }
            Event::Alias(id) => {
                let value = self
                    .anchors
                    .iter()
                    .rev()
                    .find(|(a, _)| *a == id)
                    .map(|(_, v)| v.clone())
                    .ok_or_else(|| "an alias refers to no anchor".to_owned())?;
                // Its text counts too (a node per 64 bytes): a long string repeated by many
                // aliases is an alias bomb of few nodes.
                self.count(size(&value).saturating_add(text_bytes(&value) / 64))?;
                Ok(value)
            }
            _ => Err("unexpected YAML structure".to_owned()),
        }
    }

    fn remember(&mut self, anchor: usize, value: &Value) {
        if anchor != 0 {
            self.anchors.push((anchor, value.clone()));
        }
    }
}

/// How many nodes a value holds (what expanding an alias to it costs).
fn size(value: &Value) -> usize {
    match value {
        Value::Array(items) => 1 + items.iter().map(size).sum::<usize>(),
        Value::Object(map) => 1 + map.values().map(size).sum::<usize>(),
        _ => 1,
    }
}

/// How many bytes of text a value holds.
fn text_bytes(value: &Value) -> usize {
    match value {
        Value::String(s) => s.len(),
        Value::Array(items) => items.iter().map(text_bytes).sum(),
        Value::Object(map) => map.iter().map(|(k, v)| k.len() + text_bytes(v)).sum(),
        _ => 0,
    }
}

/// A mapping key as the text JSON needs (Python's `str()` of what PyYAML made of it).
fn key_text(key: &Value) -> String {
    match key {
        Value::String(s) => s.clone(),
        Value::Bool(true) => "True".to_owned(),
        Value::Bool(false) => "False".to_owned(),
        Value::Null => "None".to_owned(),
        other => other.to_string(),
    }
}

fn scalar(text: &str, style: ScalarStyle, tag: Option<&Tag>) -> Value {
    if let Some(tag) = tag {
        return match tag.core_suffix() {
            Some("str" | "binary" | "timestamp") => Value::String(text.to_owned()),
            Some("null") => Value::Null,
            Some("bool") => {
                bool_of(text).map_or_else(|| Value::String(text.to_owned()), Value::Bool)
            }
            Some("int") => int_of(text).unwrap_or_else(|| Value::String(text.to_owned())),
            Some("float") => float_of(text).unwrap_or_else(|| Value::String(text.to_owned())),
            _ => plain(text),
        };
    }
    match style {
        ScalarStyle::Plain => plain(text),
        _ => Value::String(text.to_owned()),
    }
}

/// PyYAML's implicit resolvers (bool, float, int, null; a timestamp stays text).
fn plain(text: &str) -> Value {
    if matches!(text, "" | "~" | "null" | "Null" | "NULL") {
        return Value::Null;
    }
    if let Some(b) = bool_of(text) {
        return Value::Bool(b);
    }
    if let Some(i) = int_of(text) {
        return i;
    }
    if let Some(f) = float_of(text) {
        return f;
    }
    Value::String(text.to_owned())
}

fn bool_of(text: &str) -> Option<bool> {
    match text {
        "yes" | "Yes" | "YES" | "true" | "True" | "TRUE" | "on" | "On" | "ON" => Some(true),
        "no" | "No" | "NO" | "false" | "False" | "FALSE" | "off" | "Off" | "OFF" => Some(false),
        _ => None,
    }
}

fn split_sign(text: &str) -> (bool, &str) {
    match text.as_bytes().first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, text),
    }
}

/// `[-+]?(0b[01_]+|0[0-7_]+|(0|[1-9][0-9_]*)|0x[0-9a-fA-F_]+|[1-9][0-9_]*(:[0-5]?[0-9])+)`.
fn int_of(text: &str) -> Option<Value> {
    let (negative, body) = split_sign(text);
    if body.is_empty() {
        return None;
    }
    let digits =
        |s: &str, ok: fn(char) -> bool| !s.is_empty() && s.chars().all(|c| c == '_' || ok(c));
    let clean = |s: &str| s.replace('_', "");
    let magnitude: Option<i128> = if let Some(bin) = body.strip_prefix("0b") {
        digits(bin, |c| c == '0' || c == '1')
            .then(|| i128::from_str_radix(&clean(bin), 2).ok())
            .flatten()
    } else if let Some(hex) = body.strip_prefix("0x") {
        digits(hex, |c| c.is_ascii_hexdigit())
            .then(|| i128::from_str_radix(&clean(hex), 16).ok())
            .flatten()
    } else if body == "0" {
        Some(0)
    } else if let Some(oct) = body.strip_prefix('0') {
        digits(oct, |c| ('0'..='7').contains(&c))
            .then(|| i128::from_str_radix(&clean(oct), 8).ok())
            .flatten()
    } else if body.contains(':') {
        let mut parts = body.split(':');
        let head = parts.next()?;
        if !(head.starts_with(|c: char| ('1'..='9').contains(&c))
            && digits(head, |c| c.is_ascii_digit()))
        {
            return None;
        }
        let mut value: i128 = clean(head).parse().ok()?;
        for part in parts {
            let ok = match part.as_bytes() {
                [d] => d.is_ascii_digit(),
                [a, b] => (b'0'..=b'5').contains(a) && b.is_ascii_digit(),
                _ => false,
            };
            if !ok {
                return None;
            }
            value = value
                .checked_mul(60)?
                .checked_add(part.parse::<i128>().ok()?)?;
        }
        Some(value)
    } else if body.starts_with(|c: char| ('1'..='9').contains(&c))
        && digits(body, |c| c.is_ascii_digit())
    {
        clean(body).parse().ok()
    } else {
        None
    };
    let magnitude = magnitude?;
    let value = if negative { -magnitude } else { magnitude };
    Some(match i64::try_from(value) {
        Ok(v) => Value::Number(Number::from(v)),
        // Python ints have no bound; JSON numbers do: past i64, a float is the nearest.
        Err(_) => {
            Number::from_f64(value as f64).map_or(Value::String(text.to_owned()), Value::Number)
        }
    })
}

/// `[-+]?([0-9][0-9_]*)\.[0-9_]*([eE][-+][0-9]+)?`, `\.[0-9][0-9_]*([eE][-+][0-9]+)?`,
/// sexagesimal floats, `[-+]?\.inf`, `\.nan` (those two as text: JSON has no number for them).
fn float_of(text: &str) -> Option<Value> {
    let (negative, body) = split_sign(text);
    if matches!(body, ".inf" | ".Inf" | ".INF")
        || (!negative && text == body && matches!(body, ".nan" | ".NaN" | ".NAN"))
    {
        return Some(Value::String(text.to_owned()));
    }
    let (mantissa, exponent) = match body.find(['e', 'E']) {
        Some(at) => (&body[..at], Some(&body[at + 1..])),
        None => (body, None),
    };
    if let Some(e) = exponent {
        let (sign, digits) = e.split_at(e.len().min(1));
        if !matches!(sign, "+" | "-")
            || digits.is_empty()
            || !digits.bytes().all(|b| b.is_ascii_digit())
        {
            return None;
        }
    }
    let ok = if mantissa.contains(':') {
        // Sexagesimal float: [0-9][0-9_]*(:[0-5]?[0-9])+\.[0-9_]*
        let (whole, frac) = mantissa.rsplit_once('.')?;
        let mut parts = whole.split(':');
        let head_ok = parts.next().is_some_and(|h| {
            h.starts_with(|c: char| c.is_ascii_digit())
                && h.chars().all(|c| c.is_ascii_digit() || c == '_')
        });
        let rest_ok = parts.all(|p| match p.as_bytes() {
            [d] => d.is_ascii_digit(),
            [a, b] => (b'0'..=b'5').contains(a) && b.is_ascii_digit(),
            _ => false,
        });
        if exponent.is_some()
            || !head_ok
            || !rest_ok
            || !frac.chars().all(|c| c.is_ascii_digit() || c == '_')
        {
            return None;
        }
        let mut value = 0f64;
        for p in whole.split(':') {
            value = value * 60.0 + p.replace('_', "").parse::<f64>().ok()?;
        }
        let frac: f64 = format!("0.{}", frac.replace('_', ""))
            .parse()
            .unwrap_or(0.0);
        let v = if negative {
            -(value + frac)
        } else {
            value + frac
        };
        return Number::from_f64(v).map(Value::Number);
    } else if let Some(frac) = mantissa.strip_prefix('.') {
        frac.starts_with(|c: char| c.is_ascii_digit())
            && frac.chars().all(|c| c.is_ascii_digit() || c == '_')
    } else {
        match mantissa.split_once('.') {
            Some((whole, frac)) => {
                whole.starts_with(|c: char| c.is_ascii_digit())
                    && whole.chars().all(|c| c.is_ascii_digit() || c == '_')
                    && frac.chars().all(|c| c.is_ascii_digit() || c == '_')
            }
            None => false,
        }
    };
    if !ok {
        return None;
    }
    let v: f64 = text.replace('_', "").parse().ok()?;
    Number::from_f64(v).map(Value::Number)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_strings_repeated_by_aliases_are_a_bomb() {
        let long = "x".repeat(20_000);
        let text = format!(
            "foo: &x \"{long}\"\nbar: [{}]\n",
            vec!["*x"; 8000].join(", ")
        );
        assert!(first_document(&text).is_err());
        // A few short aliases are fine.
        assert!(first_document("a: &x [1, 2]\nb: *x\nc: *x\n").is_ok());
    }

    fn one(text: &str) -> Value {
        first_document(&format!("v: {text}\n")).unwrap().unwrap()["v"].clone()
    }

    #[test]
    fn scalars_resolve_as_pyyaml_resolves_them() {
        assert_eq!(one("0o600"), Value::String("0o600".into()));
        assert_eq!(one("0600"), Value::from(384));
        assert_eq!(one("'0600'"), Value::String("0600".into()));
        assert_eq!(one("yes"), Value::Bool(true));
        assert_eq!(one("Off"), Value::Bool(false));
        assert_eq!(one("y"), Value::String("y".into()));
        assert_eq!(one("1:30"), Value::from(90));
        assert_eq!(one("1e5"), Value::String("1e5".into()));
        assert_eq!(one("1.0e+5"), Value::from(100000.0));
        assert_eq!(one("0x1F"), Value::from(31));
        assert_eq!(one("1_000"), Value::from(1000));
        assert_eq!(one("~"), Value::Null);
        assert_eq!(one("!!str 12"), Value::String("12".into()));
        assert_eq!(one("2026-01-01"), Value::String("2026-01-01".into()));
        assert_eq!(one("|\n  x\n"), Value::String("x\n".into()));
    }

    #[test]
    fn structure_aliases_and_merges() {
        let v = first_document("a: &x {k: 1}\nb: *x\nc:\n  <<: *x\n  j: 2\nyes: 3\n")
            .unwrap()
            .unwrap();
        assert_eq!(v["b"]["k"], 1);
        assert_eq!(v["c"]["k"], 1);
        assert_eq!(v["c"]["j"], 2);
        assert_eq!(v["True"], 3);
        assert_eq!(first_document("").unwrap(), None);
    }

    #[test]
    fn comments_are_not_nodes() {
        let text = "#cloud-config\nruncmd: []\n# a comment\nwrite_files: # inline\n  # inside\n  - path: /a # after\n    # between\n    mode: 0600\n";
        let v = first_document(text).unwrap().unwrap();
        assert_eq!(v["runcmd"], serde_json::json!([]));
        assert_eq!(v["write_files"][0]["path"], "/a");
        assert_eq!(v["write_files"][0]["mode"], 384);
    }

    #[test]
    fn an_alias_bomb_is_an_error() {
        let mut bomb = String::from("a0: &a0 [x,x,x,x,x,x,x,x,x]\n");
        for i in 1..10 {
            let refs = vec![format!("*a{}", i - 1); 9].join(",");
            bomb.push_str(&format!("a{i}: &a{i} [{refs}]\n"));
        }
        let err = first_document(&bomb).unwrap_err();
        assert!(err.contains("reading limit"), "{err}");
        assert!(first_document("a: [").is_err());
    }
}
