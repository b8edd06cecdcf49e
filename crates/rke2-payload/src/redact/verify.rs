//! The check of what `redact` wrote, by readers other than the ones that decided what to mask:
//! the envelope reader and the payload decoder the tool reads every input with, and
//! serde-saphyr and serde_json for every layer (the masking read the text with its own span
//! tree). Each layer is peeled the same way on both sides: base64, gzip, `data:` URLs, YAML or
//! JSON documents inside strings.
//!
//! Two requirements, either failing refuses:
//! - **Nothing but secrets changed**: the same documents, keys in the same order, lists of the
//!   same length, values of the same type; every string equal to the input's, or the input's
//!   with parts replaced by the placeholder (a masked number may become the placeholder).
//! - **No secret is left**: no secret value the masking found appears in any string of any
//!   decoded layer of the output, nor any 12-character window of a long one that is secret by
//!   its content (one made of public words is looked for whole).

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};
use std::rc::Rc;

use serde_json::Value;
use sha2::{Digest, Sha256};

use super::Refusal;
use crate::codec::{b64, dataurl, gzip};
use crate::envelope::Envelope;
use crate::options::DecodeOptions;
use crate::sensitive::PLACEHOLDER;
use crate::sensitive::mask::Known;

mod list;

/// How deep layers are peeled (a string in a file in a data URL in a config in a Secret …).
const MAX_LAYERS: usize = 10;
/// The most bytes one peeled layer may inflate to.
const INFLATE_CAP: u64 = 64 << 20;
/// The window of a long secret that must not be left either.
const WINDOW: usize = 12;

/// Checks the output of `redact` against its input.
pub(super) fn output(
    input: &[u8],
    output: &[u8],
    known: &Known,
    options: &DecodeOptions,
    bare: bool,
) -> Result<(), Refusal> {
    within_budget(input.len(), || {
        decodes(output, options)?;
        compared(input, output, known, bare)
    })
}

/// [`output`] of a `List` redacted item by item: checked item by item ([`list`]), as the whole
/// text is, when both sides are cut alike; else as the whole text.
pub(super) fn output_list(
    input: &str,
    output: &str,
    known: &Known,
    options: &DecodeOptions,
) -> Result<(), Refusal> {
    within_budget(input.len(), || {
        decodes(output.as_bytes(), options)?;
        list::compared(input, output, known).unwrap_or_else(|| {
            // Read whole from the start, with the whole budget.
            INFLATE_BUDGET.with(|b| b.set(Some(budget(input.len()))));
            compared(input.as_bytes(), output.as_bytes(), known, false)
        })
    })
}

/// What every layer of both sides together may inflate to: sixteen times the input, at least
/// 256 MiB.
fn budget(input_len: usize) -> u64 {
    (input_len as u64).saturating_mul(16).max(256 << 20)
}

/// Runs a check within the inflate budget: refuses when it ran out, whatever the check found.
fn within_budget(
    input_len: usize,
    check: impl FnOnce() -> Result<(), Refusal>,
) -> Result<(), Refusal> {
    let budget = budget(input_len);
    INFLATE_BUDGET.with(|b| b.set(Some(budget)));
    let result = check();
    let exhausted = INFLATE_BUDGET.with(std::cell::Cell::get).is_none();
    INFLATE_BUDGET.with(|b| b.set(None));
    if exhausted {
        return Err(Refusal::Unreadable {
            part: "the redacted output".to_owned(),
            why: format!("its layers inflate past {budget} bytes"),
        });
    }
    result
}

/// The output reads as any input does: every Secret's value decodes.
fn decodes(output: &[u8], options: &DecodeOptions) -> Result<(), Refusal> {
    let envelope = Envelope::parse(output, options).map_err(|_| Refusal::Leftover {
        where_: "the redacted input does not read".to_owned(),
    })?;
    for secret in &envelope.secrets {
        secret.decode(options).map_err(|_| Refusal::Changed {
            where_: format!("{}, whose value no longer decodes", secret.id()),
        })?;
    }
    Ok(())
}

/// Both sides read whole: the same documents, and no secret left in any string.
fn compared(input: &[u8], output: &[u8], known: &Known, bare: bool) -> Result<(), Refusal> {
    let before = documents(input, bare).ok_or_else(|| Refusal::Unreadable {
        part: "the input".to_owned(),
        why: "it does not read as YAML or JSON".to_owned(),
    })?;
    let after = documents(output, bare).ok_or_else(|| Refusal::Leftover {
        where_: "the redacted input does not read as YAML or JSON".to_owned(),
    })?;
    if before.len() != after.len() {
        return Err(Refusal::Changed {
            where_: "the number of documents".to_owned(),
        });
    }
    let mut path = String::new();
    for (i, (a, b)) in before.iter().zip(&after).enumerate() {
        path.clear();
        path.push_str(&format!("document {}", i + 1));
        compare(a, b, &mut path, 0)?;
    }
    drop(before);
    // Every string of every layer, searched as it is peeled (no copy of them all is kept).
    // The walk goes on past a secret found, peeling what it would have peeled: whether the
    // layers fit the inflate budget is decided on all of them, as before.
    let mut search = Leftovers::new(known);
    for (i, doc) in after.iter().enumerate() {
        strings(
            doc,
            &Rc::from(format!("document {}", i + 1)),
            0,
            &mut |path, text, encoded| search.text(path, text, encoded),
        );
    }
    search.found.map_or(Ok(()), Err)
}

/// The documents of a whole input: YAML (JSON read as YAML by another parser than the
/// masking's), or bare user data as one string.
fn documents(bytes: &[u8], bare: bool) -> Option<Vec<Value>> {
    if bare {
        let peeled = gunzip(bytes)?;
        return Some(vec![Value::String(
            String::from_utf8_lossy(&peeled).into_owned(),
        )]);
    }
    let text = std::str::from_utf8(bytes).ok()?;
    parse_all(text)
}

fn parse_all(text: &str) -> Option<Vec<Value>> {
    parse_all_within(text, text.len())
}

/// [`parse_all`] of a part of a text of `whole` bytes (an item of a `List`), under the limits
/// of the whole.
fn parse_all_within(text: &str, whole: usize) -> Option<Vec<Value>> {
    let trimmed = text.trim_start_matches(['\u{feff}', ' ', '\t', '\r', '\n']);
    if trimmed.starts_with(['{', '['])
        && let Ok(v) = serde_json::from_str::<Value>(trimmed)
    {
        return Some(vec![v]);
    }
    let mut options = serde_saphyr::Options::default();
    options.with_snippet = false;
    options.ignore_binary_tag_for_string = true;
    options.budget = Some(yaml_budget(whole));
    let docs: Vec<Option<Value>> =
        serde_saphyr::from_str_multiple_with_options(text, options).ok()?;
    Some(docs.into_iter().map(|d| d.unwrap_or(Value::Null)).collect())
}

/// Limits that grow with the text (a fleet's List), as the masking's reader's do.
fn yaml_budget(len: usize) -> serde_saphyr::Budget {
    let mut budget = serde_saphyr::Budget::default();
    budget.max_events = budget.max_events.max(len);
    budget.max_nodes = budget.max_nodes.max(len / 2);
    budget.max_total_scalar_bytes = budget.max_total_scalar_bytes.max(len.saturating_mul(2));
    budget.max_documents = budget.max_documents.max(len / 64);
    budget
}

/// A string that holds a document of its own (a cloud-config, a `config.yaml`, an Ignition
/// config): its collections, or `None` when it is plain text. CAPRKE2's unquoted
/// `airGappedChecksum` item is read as the cloud-config reader repairs it.
fn parse_document(text: &str) -> Option<Vec<Value>> {
    if !text.contains(['\n', '{', '[']) {
        return None;
    }
    let docs = parse_all(text).or_else(|| {
        let first_error = crate::codec::tree::parse(text).err()?;
        let fixed = crate::codec::yaml::repaired(text, first_error.line)?;
        parse_all(&fixed)
    })?;
    docs.iter()
        .any(|d| matches!(d, Value::Object(_) | Value::Array(_)))
        .then_some(docs)
}

fn changed(path: &str) -> Refusal {
    Refusal::Changed {
        where_: crate::codec::text::shorten(path, 200),
    }
}

fn compare(a: &Value, b: &Value, path: &mut String, depth: usize) -> Result<(), Refusal> {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            // The same keys in the same order (a key that held a secret, masked in place).
            if x.len() != y.len()
                || !x
                    .keys()
                    .zip(y.keys())
                    .all(|(a, b)| a == b || masked_from(a, b))
            {
                return Err(changed(path));
            }
            for ((k, va), vb) in x.iter().zip(y.values()) {
                let len = path.len();
                path.push('.');
                path.push_str(&crate::codec::text::shorten(k, 60));
                compare(va, vb, path, depth)?;
                path.truncate(len);
            }
            Ok(())
        }
        (Value::Array(x), Value::Array(y)) => {
            if x.len() != y.len() {
                return Err(changed(path));
            }
            for (i, (va, vb)) in x.iter().zip(y).enumerate() {
                let len = path.len();
                path.push_str(&format!("[{i}]"));
                compare(va, vb, path, depth)?;
                path.truncate(len);
            }
            Ok(())
        }
        (Value::String(x), Value::String(y)) => compare_text(x, y, path, depth),
        (Value::Number(_), Value::String(y)) if y == PLACEHOLDER => Ok(()),
        (x, y) if x == y => Ok(()),
        _ => Err(changed(path)),
    }
}

fn compare_text(a: &str, b: &str, path: &mut String, depth: usize) -> Result<(), Refusal> {
    if a == b {
        return Ok(());
    }
    if depth >= MAX_LAYERS {
        return if masked_from(a, b) {
            Ok(())
        } else {
            Err(changed(path))
        };
    }
    // A value masked whole and encoded again (`data` of a Secret).
    if peel(b).is_some_and(|y| y == PLACEHOLDER.as_bytes()) {
        return Ok(());
    }
    // An encoded layer on both sides: compared decoded.
    if let (Some(x), Some(y)) = (peel(a), peel(b))
        && let (Ok(x), Ok(y)) = (std::str::from_utf8(&x), std::str::from_utf8(&y))
    {
        return compare_text(x, y, path, depth + 1);
    }
    if masked_from(a, b) {
        return Ok(());
    }
    // A document inside the string: compared value by value.
    if let (Some(x), Some(y)) = (parse_document(a), parse_document(b))
        && x.len() == y.len()
    {
        for (va, vb) in x.iter().zip(&y) {
            compare(va, vb, path, depth + 1)?;
        }
        return Ok(());
    }
    Err(changed(path))
}

/// Whether `b` is `a` with some parts replaced by the placeholder (or, masked strictly, by
/// the placeholder with the line count and fingerprint of what it replaced).
fn masked_from(a: &str, b: &str) -> bool {
    if !b.contains(PLACEHOLDER) {
        return false;
    }
    if b.contains(" line") && b.contains(", sha256:") {
        let plain = strict_markers_out(b);
        if plain != b {
            return masked_from(a, &plain);
        }
    }
    let pieces: Vec<&str> = b.split(PLACEHOLDER).collect();
    let (Some(first), Some(last)) = (pieces.first(), pieces.last()) else {
        return false;
    };
    if !a.starts_with(first) || !a.ends_with(last) || a.len() < first.len() + last.len() {
        return false;
    }
    let mut at = first.len();
    let end = a.len() - last.len();
    for piece in &pieces[1..pieces.len() - 1] {
        match a[at..end].find(piece) {
            Some(i) => at += i + piece.len(),
            None => return false,
        }
    }
    at <= end
}

/// `text` with each strict marker (`REDACTED (3 lines, sha256:<16 hex>)`) cut to the
/// placeholder.
fn strict_markers_out(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(PLACEHOLDER) {
        let after = &rest[at + PLACEHOLDER.len()..];
        out.push_str(&rest[..at + PLACEHOLDER.len()]);
        rest = after;
        let Some(tail) = after.strip_prefix(" (") else {
            continue;
        };
        let digits = tail.bytes().take_while(u8::is_ascii_digit).count();
        let words = &tail[digits..];
        let words = words
            .strip_prefix(" lines, sha256:")
            .or_else(|| words.strip_prefix(" line, sha256:"));
        if let Some(hex) = words
            && digits > 0
            && hex.len() >= 17
            && hex.as_bytes()[..16].iter().all(u8::is_ascii_hexdigit)
            && hex.as_bytes()[16] == b')'
        {
            rest = &hex[17..];
        }
    }
    out.push_str(rest);
    out
}

/// The bytes under one layer of encoding: a `data:` URL, or base64 (at least 8 characters),
/// gzip undone in either.
fn peel(s: &str) -> Option<Vec<u8>> {
    let bytes: Cow<'_, [u8]> = if s.get(..5).is_some_and(|p| p.eq_ignore_ascii_case("data:")) {
        dataurl::decode(s).ok()?
    } else {
        let compact: String = s.chars().filter(|c| !c.is_ascii_whitespace()).collect();
        if compact.len() < 8
            || !compact.len().is_multiple_of(4)
            || !compact
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'='))
        {
            return None;
        }
        Cow::Owned(b64::decode(&compact).ok()?)
    };
    gunzip(&bytes)
}

thread_local! {
    /// What one check may still inflate, all strings together (many small gzip bombs are as bad
    /// as a large one); `None` once it ran out.
    static INFLATE_BUDGET: std::cell::Cell<Option<u64>> = const { std::cell::Cell::new(None) };
}

/// The bytes with gzip undone, if they are gzip, within the check's budget.
fn gunzip(bytes: &[u8]) -> Option<Vec<u8>> {
    if !gzip::is_gzip(bytes) {
        return Some(bytes.to_vec());
    }
    let left = INFLATE_BUDGET.with(std::cell::Cell::get)?;
    let out = gzip::inflate(bytes, INFLATE_CAP.min(left)).ok();
    let used = out.as_ref().map_or(left, |o| o.len() as u64);
    INFLATE_BUDGET.with(|b| b.set(left.checked_sub(used).filter(|l| *l > 0)));
    out
}

/// The path one step deeper, kept to its first levels (a Secret of a List, its key).
fn deeper(path: &Rc<str>, segment: std::fmt::Arguments<'_>) -> Rc<str> {
    if path.matches(['.', '[']).count() < 4 {
        Rc::from(format!("{path}{segment}"))
    } else {
        Rc::clone(path)
    }
}

/// The path of a key's value.
fn key_path(path: &Rc<str>, key: &str) -> Rc<str> {
    deeper(
        path,
        format_args!(".{}", crate::codec::text::shorten(key, 60)),
    )
}

/// What [`strings`] hands each string to: where it is, its text, and whether it is an encoded
/// layer (base64, a `data:` URL) whose decoded text is handed over too.
type Visit<'v> = dyn FnMut(&Rc<str>, &str, bool) + 'v;

/// Every key and string of a value, and of every layer under each string, handed to `visit`
/// with where it is (the path is kept to the first levels: a Secret of a List, its key).
fn strings(value: &Value, path: &Rc<str>, depth: usize, visit: &mut Visit<'_>) {
    match value {
        Value::Object(map) => {
            for (k, v) in map {
                let p = key_path(path, k);
                visit(&p, k, false);
                strings(v, &p, depth, visit);
            }
        }
        Value::Array(items) => {
            for (i, v) in items.iter().enumerate() {
                strings(v, &deeper(path, format_args!("[{i}]")), depth, visit);
            }
        }
        Value::String(s) => {
            if depth >= MAX_LAYERS {
                visit(path, s, false);
                return;
            }
            let peeled = peel(s).filter(|inner| inner.as_slice() != s.as_bytes());
            visit(path, s, peeled.is_some());
            if let Some(inner) = peeled {
                let text = String::from_utf8_lossy(&inner).into_owned();
                strings(&Value::String(text), path, depth + 1, visit);
            } else if let Some(docs) = parse_document(s) {
                for doc in &docs {
                    strings(doc, path, depth + 1, visit);
                }
            }
        }
        _ => {}
    }
}

/// Whether a text still holds a private key: an armoured block whose label says private with
/// a body other than the placeholder, an age secret key, or a PuTTY key's private lines.
fn private_key_left(text: &str) -> bool {
    let mut rest = text;
    while let Some(i) = rest.find("-----BEGIN ") {
        let after = &rest[i + "-----BEGIN ".len()..];
        let Some(label_end) = after.find("-----") else {
            break;
        };
        let label = &after[..label_end];
        let body_and_rest = &after[label_end + "-----".len()..];
        let body = body_and_rest
            .find("-----")
            .map_or(body_and_rest, |end| &body_and_rest[..end]);
        rest = &body_and_rest[body.len()..];
        // A key on one line of escaped text (`\n`) reads the same.
        let body: String = body
            .replace("\\n", "\n")
            .chars()
            // Whitespace, quotes, and the `#` of a key written in comment lines.
            .filter(|c| !c.is_whitespace() && !matches!(c, '"' | '\'' | '#'))
            .collect();
        if (label.contains("PRIVATE") || label.contains("SECRET"))
            && !body.is_empty()
            && body != PLACEHOLDER
        {
            return true;
        }
    }
    if let Some(i) = text.find("AGE-SECRET-KEY-")
        && !text[i + "AGE-SECRET-KEY-".len()..].starts_with(PLACEHOLDER)
    {
        return true;
    }
    if text.contains("PuTTY-User-Key-File-") {
        let mut lines = text.lines();
        while let Some(line) = lines.next() {
            if line.starts_with("Private-Lines:") {
                return lines.next().is_some_and(|l| l.trim() != PLACEHOLDER);
            }
        }
    }
    false
}

/// Needles of one length, and the first two bytes of each.
struct Needles<'a> {
    len: usize,
    set: HashSet<&'a [u8]>,
    firsts: HashSet<[u8; 2]>,
}

/// Whether a value is base64 (with its padding or not) of UTF-8 text.
fn base64_of_text(value: &str) -> bool {
    value.len() >= 16 && b64::decode_text_lenient(value).is_some()
}

/// Texts this long or longer are searched once each (known by their SHA-256); a shorter one
/// costs less to search again than to remember.
const SEEN_FROM: usize = 256;

/// The search for secrets left in the strings of the output, one string at a time: a secret,
/// or a window of a long one. Linear in the text: every secret shorter than a window, and every
/// fourth window of a longer one (a piece of 15 characters or more left anywhere holds one), is
/// looked up at each position by its length.
struct Leftovers<'k> {
    /// Whole values, by length.
    filters: Vec<Needles<'k>>,
    /// Windows of long values (not looked for in an encoded layer: there a window is a
    /// coincidence of alignment, `registries` in a password and in the file names around it;
    /// the decoded layer is what would hold it).
    windows: Needles<'k>,
    /// The long texts searched already.
    seen: HashSet<[u8; 32]>,
    /// The first string found holding a secret (the search stops there).
    found: Option<Refusal>,
}

impl<'k> Leftovers<'k> {
    fn new(known: &'k Known) -> Self {
        let mut by_len: HashMap<usize, HashSet<&[u8]>> = HashMap::new();
        let mut windows: HashSet<&[u8]> = HashSet::new();
        for secret in known.searched() {
            let bytes = secret.as_bytes();
            if secret.contains(char::is_whitespace) {
                // A phrase whole; a key body by its first long run (its lines share structure
                // with public keys, so its windows would match them; armours are checked apart).
                if secret.len() <= 128 {
                    by_len.entry(bytes.len()).or_default().insert(bytes);
                }
                if let Some(run) = secret.split_whitespace().find(|r| r.len() >= 16) {
                    by_len.entry(run.len()).or_default().insert(run.as_bytes());
                }
            } else if bytes.len() <= WINDOW
                || crate::sensitive::mask::words::all_public(secret)
                || base64_of_text(secret)
            {
                // Short, or made of public words (masked by its place: `SMTP_HOST:
                // smtp.example.com` in a Secret), or base64 of text (a key in armour, a script:
                // its windows are those of any base64 that starts the same, `#!/bin/sh` or
                // `-----BEGIN `; what it hides is looked for decoded, as every layer is): whole.
                by_len.entry(bytes.len()).or_default().insert(bytes);
            } else {
                // A token or a password: every fourth window, and the last.
                let mut at = 0;
                while at + WINDOW <= bytes.len() {
                    windows.insert(&bytes[at..at + WINDOW]);
                    at += 4;
                }
                windows.insert(&bytes[bytes.len() - WINDOW..]);
            }
        }
        // A first filter on each needle's first two bytes.
        let filters = by_len
            .into_iter()
            .filter(|(_, set)| !set.is_empty())
            .map(|(len, set)| Needles {
                len,
                firsts: set.iter().map(|w| [w[0], w[1]]).collect(),
                set,
            })
            .collect();
        Leftovers {
            filters,
            windows: Needles {
                len: WINDOW,
                firsts: windows.iter().map(|w| [w[0], w[1]]).collect(),
                set: windows,
            },
            seen: HashSet::new(),
            found: None,
        }
    }

    /// Searches one string (unless a secret was found already, or this text was searched).
    fn text(&mut self, path: &Rc<str>, text: &str, encoded: bool) {
        if self.found.is_some()
            || (text.len() >= SEEN_FROM && !self.seen.insert(Sha256::digest(text).into()))
        {
            return;
        }
        let bytes = text.as_bytes();
        let hit = |Needles { len, set, firsts }: &Needles<'_>| {
            !set.is_empty()
                && bytes.len() >= *len
                && bytes
                    .windows(*len)
                    .any(|w| firsts.contains(&[w[0], w[1]]) && set.contains(w))
        };
        let left = private_key_left(text)
            || self.filters.iter().any(hit)
            || !encoded && hit(&self.windows);
        if left {
            self.found = Some(Refusal::Leftover {
                where_: format!(
                    "at {}",
                    crate::codec::text::terminal_safe(&crate::codec::text::shorten(path, 200))
                ),
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_of_text_is_looked_for_whole() {
        assert!(base64_of_text("IyEvYmluL3NoCnNldCAtZQo="));
        assert!(base64_of_text("IyEvYmluL3NoCnNldCAtZQo"));
        assert!(!base64_of_text("Zq9Xk2mPqR7sT1234abcd"));
        assert!(!base64_of_text("short"));
    }

    #[test]
    fn masked_text_matches_its_input() {
        assert!(masked_from("token: abc123", "token: REDACTED"));
        assert!(masked_from("a x b y c", "a REDACTED b REDACTED c"));
        assert!(!masked_from("token: abc123", "token: REDACTED\nmore"));
        assert!(!masked_from("abc", "abc"));
        assert!(masked_from(
            "echo hi\necho there\n",
            "REDACTED (2 lines, sha256:0123456789abcdef)"
        ));
        assert!(masked_from(
            "# a note",
            "# REDACTED (1 line, sha256:0123456789abcdef)"
        ));
        assert!(!masked_from(
            "abc",
            "REDACTED (2 lines, sha256:0123456789abcdef) more"
        ));
    }

    #[test]
    fn a_private_key_left_is_found_in_any_armour() {
        assert!(private_key_left(
            "-----BEGIN OPENSSH PRIVATE KEY-----\nb3Bl\n-----END OPENSSH PRIVATE KEY-----"
        ));
        assert!(private_key_left(
            r#""-----BEGIN EC PRIVATE KEY-----\nMHcC\n-----END""#
        ));
        assert!(!private_key_left(
            "-----BEGIN RSA PRIVATE KEY-----\nREDACTED\n-----END RSA PRIVATE KEY-----\n-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----"
        ));
        assert!(private_key_left("AGE-SECRET-KEY-1QYQSZQGPQYQSZ"));
        assert!(!private_key_left("AGE-SECRET-KEY-REDACTED"));
    }

    #[test]
    fn structure_changes_are_named() {
        let a: Value = serde_json::json!({"a": {"username": "x", "tls": {"f": "/p"}}});
        let b: Value = serde_json::json!({"a": {"tls": {"f": "/p"}}});
        let err = compare(&a, &b, &mut "document 1".to_owned(), 0).expect_err("changed");
        assert_eq!(
            err,
            Refusal::Changed {
                where_: "document 1.a".to_owned()
            }
        );
        let c: Value = serde_json::json!({"lock": false});
        let d: Value = serde_json::json!({"lock": "REDACTED"});
        assert!(compare(&c, &d, &mut String::new(), 0).is_err());
    }
}
