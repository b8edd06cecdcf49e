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

use super::Refusal;
use crate::codec::{b64, dataurl, gzip};
use crate::envelope::Envelope;
use crate::options::DecodeOptions;
use crate::secrets::PLACEHOLDER;
use crate::secrets::mask::Known;

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
    // Every layer of both sides is read within one budget: sixteen times the input, at
    // least 256 MiB.
    let budget = (input.len() as u64).saturating_mul(16).max(256 << 20);
    INFLATE_BUDGET.with(|b| b.set(Some(budget)));
    let result = checked(input, output, known, options, bare);
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

fn checked(
    input: &[u8],
    output: &[u8],
    known: &Known,
    options: &DecodeOptions,
    bare: bool,
) -> Result<(), Refusal> {
    // It reads as any input does: every Secret's value decodes.
    let envelope = Envelope::parse(output, options).map_err(|_| Refusal::Leftover {
        where_: "the redacted input does not read".to_owned(),
    })?;
    for secret in &envelope.secrets {
        secret.decode(options).map_err(|_| Refusal::Changed {
            where_: format!("{}, whose value no longer decodes", secret.id()),
        })?;
    }
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
    let mut texts = Vec::new();
    for (i, doc) in after.iter().enumerate() {
        strings(doc, &Rc::from(format!("document {}", i + 1)), 0, &mut texts);
    }
    leftovers(&texts, known)
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
    let trimmed = text.trim_start_matches(['\u{feff}', ' ', '\t', '\r', '\n']);
    if trimmed.starts_with(['{', '['])
        && let Ok(v) = serde_json::from_str::<Value>(trimmed)
    {
        return Some(vec![v]);
    }
    let mut options = serde_saphyr::Options::default();
    options.with_snippet = false;
    options.ignore_binary_tag_for_string = true;
    // Limits that grow with the text (a fleet's List), as the masking's reader's do.
    let mut budget = serde_saphyr::Budget::default();
    budget.max_events = budget.max_events.max(text.len());
    budget.max_nodes = budget.max_nodes.max(text.len() / 2);
    budget.max_total_scalar_bytes = budget
        .max_total_scalar_bytes
        .max(text.len().saturating_mul(2));
    budget.max_documents = budget.max_documents.max(text.len() / 64);
    options.budget = Some(budget);
    let docs: Vec<Option<Value>> =
        serde_saphyr::from_str_multiple_with_options(text, options).ok()?;
    Some(docs.into_iter().map(|d| d.unwrap_or(Value::Null)).collect())
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

/// Every key and string of a value, and of every layer under each string, with where it is
/// (the path is kept to the first levels: a Secret of a List, its key).
/// One string of the output: where it is, its text, and whether it is an encoded layer
/// (base64, a `data:` URL) whose decoded text is searched too.
type Text = (Rc<str>, String, bool);

fn strings(value: &Value, path: &Rc<str>, depth: usize, out: &mut Vec<Text>) {
    let deeper = |segment: std::fmt::Arguments<'_>| -> Rc<str> {
        if path.matches(['.', '[']).count() < 4 {
            Rc::from(format!("{path}{segment}"))
        } else {
            Rc::clone(path)
        }
    };
    match value {
        Value::Object(map) => {
            for (k, v) in map {
                let p = deeper(format_args!(".{}", crate::codec::text::shorten(k, 60)));
                out.push((Rc::clone(&p), k.clone(), false));
                strings(v, &p, depth, out);
            }
        }
        Value::Array(items) => {
            for (i, v) in items.iter().enumerate() {
                strings(v, &deeper(format_args!("[{i}]")), depth, out);
            }
        }
        Value::String(s) => {
            if depth >= MAX_LAYERS {
                out.push((Rc::clone(path), s.clone(), false));
                return;
            }
            let peeled = peel(s).filter(|inner| inner.as_slice() != s.as_bytes());
            out.push((Rc::clone(path), s.clone(), peeled.is_some()));
            if let Some(inner) = peeled {
                let text = String::from_utf8_lossy(&inner).into_owned();
                strings(&Value::String(text), path, depth + 1, out);
            } else if let Some(docs) = parse_document(s) {
                for doc in &docs {
                    strings(doc, path, depth + 1, out);
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

/// Refuses when a secret, or a window of a long one, is in any string. Linear in the text:
/// every secret shorter than a window, and every fourth window of a longer one (a piece of 15
/// characters or more left anywhere holds one), is looked up at each position by its length.
fn leftovers(texts: &[Text], known: &Known) -> Result<(), Refusal> {
    // Whole values, and the windows of long ones (kept apart: an encoded layer is searched for
    // whole values only, its decoded text for both).
    let mut by_len: HashMap<usize, HashSet<&[u8]>> = HashMap::new();
    let mut windows: HashSet<&[u8]> = HashSet::new();
    for secret in known.searched() {
        let bytes = secret.as_bytes();
        if secret.contains(char::is_whitespace) {
            // A phrase whole; a key body by its first long run (its lines share structure with
            // public keys, so its windows would match them; armours are checked apart).
            if secret.len() <= 128 {
                by_len.entry(bytes.len()).or_default().insert(bytes);
            }
            if let Some(run) = secret.split_whitespace().find(|r| r.len() >= 16) {
                by_len.entry(run.len()).or_default().insert(run.as_bytes());
            }
        } else if bytes.len() <= WINDOW
            || crate::secrets::mask::words::all_public(secret)
            || secret.starts_with("LS0tLS1CRUdJTi")
        {
            // Short, or made of public words (masked by its place: `SMTP_HOST: smtp.example.com`
            // in a Secret), or a key in armour in base64 (its first and last windows are the
            // armour's, as a certificate's are; its body is looked for decoded, as any private
            // key): whole.
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
    fn needles(len: usize, set: HashSet<&[u8]>) -> Needles<'_> {
        Needles {
            len,
            firsts: set.iter().map(|w| [w[0], w[1]]).collect(),
            set,
        }
    }
    let whole: Vec<Needles<'_>> = by_len
        .into_iter()
        .filter(|(_, set)| !set.is_empty())
        .map(|(len, set)| needles(len, set))
        .collect();
    let windows = needles(WINDOW, windows);
    let found = |path: &Rc<str>| Refusal::Leftover {
        where_: format!(
            "at {}",
            crate::codec::text::terminal_safe(&crate::codec::text::shorten(path, 200))
        ),
    };
    let hit = |bytes: &[u8], n: &Needles<'_>| {
        !n.set.is_empty()
            && bytes.len() >= n.len
            && bytes
                .windows(n.len)
                .any(|w| n.firsts.contains(&[w[0], w[1]]) && n.set.contains(w))
    };
    let mut seen: HashSet<&str> = HashSet::new();
    for (path, text, encoded) in texts {
        if !seen.insert(text.as_str()) {
            continue;
        }
        if private_key_left(text) {
            return Err(found(path));
        }
        let bytes = text.as_bytes();
        // A window found in base64 text is a coincidence of alignment (`registries` inside a
        // password and inside the file names around it): the decoded layer is what holds it.
        if whole.iter().any(|n| hit(bytes, n)) || !encoded && hit(bytes, &windows) {
            return Err(found(path));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

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
