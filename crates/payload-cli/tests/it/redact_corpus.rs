//! An adversarial corpus for `redact`, independent of the code under test.
//!
//! Each case plants distinct random-looking secrets in a CAPRKE2-shaped Secret (or a List,
//! several documents, bare user data), spelled, encoded and placed in the ways a payload allows.
//! `rke2-payload redact -` must exit 0 and write output that:
//!
//! - holds none of them in any decoded layer (base64, gzip, `data:` URLs, YAML and JSON strings
//!   as parsed), nor any 12-character window of one, nor its base64 at any alignment;
//! - keeps the input's structure at every layer: the same documents, mapping keys, list lengths
//!   and scalar types; every value without a secret unchanged; a value with one changed only by
//!   putting `REDACTED` in place of a part (or of all of it);
//! - still holds what the case says must survive (`keep`).
//!
//! A refusal (exit 2) is a failure here: every case is a well-formed, realistic payload. Whatever
//! the exit, standard error holds no secret. The layer decoder and the comparer are this file's
//! own: nothing of the library is used.

use crate::common::*;

use std::collections::BTreeSet;
use std::io::{Read as _, Write as _};
use std::process::Output;

use base64::Engine as _;
use serde_json::{Value, json};

const PLACEHOLDER: &str = "REDACTED";
/// How many layers deep the walk goes.
const DEPTH: usize = 12;

// ---------------------------------------------------------------------------------------------
// FAKE key material, made for these tests with openssl, ssh-keygen and gpg. Not used anywhere.

const PKCS8_KEY: &str = "-----BEGIN PRIVATE KEY-----
MC4CAQAwBQYDK2VwBCIEIBuEOrc0/gJh1r4tUO9uRcXDW9Tp8n1UoSPY6o2rwmHy
-----END PRIVATE KEY-----
";
/// The part of an Ed25519 PKCS#8 body after its fixed 16-byte header: the seed.
fn pkcs8_seed(pem: &str) -> String {
    let body = pem.lines().nth(1).expect("a body line");
    body[22..].to_owned()
}

const CA_CRT: &str = "-----BEGIN CERTIFICATE-----
MIIBTDCB/6ADAgECAhRcY3bt+I0K6/UdijDzUcRy8LB/5DAFBgMrZXAwGzEZMBcG
A1UEAwwQaWduaXRpb24tdGVzdC1jYTAgFw0yNjEyMDIxMTM3NDhaGA8yMTI2MTEw
ODExMzc0OFowGzEZMBcGA1UEAwwQaWduaXRpb24tdGVzdC1jYTAqMAUGAytlcAMh
AKLeu5vyd+w/jVDpQHNytD4KFnu+VsP+P3OOfwHM9h9so1MwUTAdBgNVHQ4EFgQU
yIEpSxfszVFmHLAPk8T26V92x/IwHwYDVR0jBBgwFoAUyIEpSxfszVFmHLAPk8T2
6V92x/IwDwYDVR0TAQH/BAUwAwEB/zAFBgMrZXADQQDbVRDg3SklsNz7Xb/SeVNs
8zJ2W2e10F/f/DxjvZrtqyrkoMwK3PgnyFR3XWSK7Px9v75GT3iPQv8VgpvVdr4M
-----END CERTIFICATE-----
";
const CA_KEY: &str = "-----BEGIN PRIVATE KEY-----
MC4CAQAwBQYDK2VwBCIEINZfRIrXrMoGgdjwSMfPuJXVA5M/hh1wRWC2u7PCP+4N
-----END PRIVATE KEY-----
";
const TLS_CRT: &str = "-----BEGIN CERTIFICATE-----
MIIBSjCB/aADAgECAhQafhwTywVTdQdcErKDrztQXsbQUDAFBgMrZXAwGjEYMBYG
A1UEAwwPYXBwLmV4YW1wbGUuY29tMCAXDTI2MTIwMjExMzc0OFoYDzIxMjYxMTA4
MTEzNzQ4WjAaMRgwFgYDVQQDDA9hcHAuZXhhbXBsZS5jb20wKjAFBgMrZXADIQCr
rsOaMn90S0dNOeqt0ma7Z4r6UErGTNqm+YfX+DYTp6NTMFEwHQYDVR0OBBYEFBL7
1iWSuHPeQJNenszh9X8XVLFAMB8GA1UdIwQYMBaAFBL71iWSuHPeQJNenszh9X8X
VLFAMA8GA1UdEwEB/wQFMAMBAf8wBQYDK2VwA0EAkLNcoE3yhEpKl0R7bAYMLy6a
7QYVqZDVOTU6DWf9yWcIhXKa/BJviwb8oktvAOArNixq4z447TonI03JqHH7Dw==
-----END CERTIFICATE-----
";
const TLS_KEY: &str = "-----BEGIN PRIVATE KEY-----
MC4CAQAwBQYDK2VwBCIEIL5yEO6FQa46ybadqYMVbIMR4RRnaNLaArcrfHigXjUM
-----END PRIVATE KEY-----
";
/// A certificate alone (no key anywhere): never masked.
const REGISTRY_CA_CRT: &str = "-----BEGIN CERTIFICATE-----
MIIBQjCB9aADAgECAhRMOpzEtsU8wC+sOK93JnF86yc8pTAFBgMrZXAwFjEUMBIG
A1UEAwwLcmVnaXN0cnktY2EwIBcNMjYxMjAyMTEzNzQ4WhgPMjEyNjExMDgxMTM3
NDhaMBYxFDASBgNVBAMMC3JlZ2lzdHJ5LWNhMCowBQYDK2VwAyEAq+fsFblUP3vF
KIDpPlhrCwQGKly1Agp4Bd/VJdeDC9WjUzBRMB0GA1UdDgQWBBRocPvGoay3z1mk
yqrGKUwMHLBZPzAfBgNVHSMEGDAWgBRocPvGoay3z1mkyqrGKUwMHLBZPzAPBgNV
HRMBAf8EBTADAQH/MAUGAytlcANBAILTuTQg4cl3Ew4j0m2QeGqHJ3tzlTka0UnE
r4jAFHtLQJ61FswXnGNbmYo3hJ2bWrr9dnGPQO/aylKdWltNIwE=
-----END CERTIFICATE-----
";
const OPENSSH_KEY: &str = "-----BEGIN OPENSSH PRIVATE KEY-----
b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW
QyNTUxOQAAACA+kWkbtMzY0JRtHKA05vbTGMbSZRXA8y1QPh/7MCBhyQAAAJinGyF6pxsh
egAAAAtzc2gtZWQyNTUxOQAAACA+kWkbtMzY0JRtHKA05vbTGMbSZRXA8y1QPh/7MCBhyQ
AAAEB39pB/fJXz7Z83JtfA2zss9LDQRk6nybyjaSK0YBIqej6RaRu0zNjQlG0coDTm9tMY
xtJlFcDzLVA+H/swIGHJAAAADmJhY2t1cEBleGFtcGxlAQIDBAUGBw==
-----END OPENSSH PRIVATE KEY-----
";
/// The private seed inside the OpenSSH key's fourth body line.
const OPENSSH_SEED: &str = "B39pB/fJXz7Z83JtfA2zss9LDQRk6nybyjaSK0YBIqe";
const PGP_KEY: &str = "-----BEGIN PGP PRIVATE KEY BLOCK-----

lFgEaxADExYJKwYBBAHaRw8BAQdAlG7wfgI9JC7oZb1wya9Z0YhGSZlx7GBG6VF7
x6lKm2MAAQDlzgBUC0X1Lcb6hnk58UQSVjkwBowJEq6va5MquuK1Lg4ptBtTaWdu
ZXIgPHNpZ25lckBleGFtcGxlLmNvbT6IkAQTFggAOBYhBB8RpwQPTvJEpjHjBUpu
0ofo4zV7BQJrEAMTAhsDBQsJCAcCBhUKCQgLAgQWAgMBAh4BAheAAAoJEEpu0ofo
4zV7E1QA/25oglZ0t+7QTJ8vJWQ9cMAQJbU7uq9ltN1kIGFz2VBaAP0W8Cuo59cx
nejbrKG6N4gSwPJGszvfT1twhRY87o2ODw==
=VLGA
-----END PGP PRIVATE KEY BLOCK-----
";
/// The secret-key material of the PGP block's second line.
const PGP_SECRET: &str = "DlzgBUC0X1Lcb6hnk58UQSVjkwBowJEq6va5MquuK1Lg4";
const AGE_PUBLIC: &str = "age18fsg929f70q9zyfpw7gdjw8836llyqjfs0vyt2vqf5c4ntug86dcpnnmcj";
/// What follows `AGE-SECRET-KEY-1`.
const AGE_SECRET: &str = "S9ELN63FT3PSU9HNFEL5UP24T4TNWLY49FCYQSAW007X5YRNRP9829VM0J";
const PUTTY_PUBLIC_LINE: &str = "AAAAC3NzaC1lZDI1NTE5AAAAIDq9vihWWTzoeULLJDFeiwirtwYE3wiLOJRaCA9l";
/// The PuTTY private line after its fixed length prefix.
const PUTTY_SECRET: &str = "NjA+pG6egV+Gm1EqZEuHpZEOdIpsHAXTXITYfoDJpic";
const OPS_PUB: &str =
    "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIB0SGDbyD7yjNRYRWUR2G8QeqdmKoVnOjqafHWCPx9A/ ops@example";
const HEX1: &str = "dde90ec743e3c9ebdaa8dbfe96e2315d08a4cf0bda6d83d1eaed305559ee53db";
const HEX2: &str = "16bf72670aa436d1da0c3198cfa47939e871214a7cff0b35208feda885e3e84b";
const HEX3: &str = "2b50feaaee40bad31f05f7c0340e79a42a01238d13400ea4b1a65263237cdd84";
const HASH1_SALT: &str = "$6$0YFb3dhVj9BXQLc6$";
const HASH1: &str =
    "2ZBbUxnpG4FuVygDRmuTb78cArsQ2p54mO3U2zjWdw2I0aVUPVYnfpDxjVnpM3pABwymyv//V0PORl0z6XYdEa";
const HASH2_SALT: &str = "$6$lkWagdwIEjXQ5HF3$";
const HASH2: &str =
    "AkomZC.d.sRzfTtNek3DVhGfcHTGR5d2.8DNck5s3htLrs0cV4OMn4bDTgs/lia6iPChUuJ0MgAhs05aBWOuJv";
/// 96 characters with no break opportunity.
const LONG: &str = "Ucf8uVtn2tL4EroTdUUh10azjYaQNRx6ouulySKLfv7lYpuEKstkSCCFdq8oBprU5yqjybLJThlLRPcecTrdGnE2bUxsRZEU";

// ---------------------------------------------------------------------------------------------
// Encoding, for building inputs.

fn gzip(bytes: impl AsRef<[u8]>) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(bytes.as_ref()).expect("gzip");
    e.finish().expect("gzip")
}

/// Percent-encoding of all but unreserved characters and `/`.
fn percent_encode(bytes: &[u8]) -> String {
    let mut out = String::new();
    for &b in bytes {
        if b.is_ascii_alphanumeric() || b"-._~/".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// A `data:,` URL, percent-encoded (as CAPRKE2 writes a plain file).
fn pct_url(text: &str) -> String {
    format!("data:,{}", percent_encode(text.as_bytes()))
}

/// A `data:;base64,` URL.
fn b64_url(bytes: impl AsRef<[u8]>) -> String {
    format!("data:;base64,{}", b64(bytes))
}

/// `\xNN` for every character (ASCII).
fn hex_escaped(text: &str) -> String {
    text.bytes().map(|b| format!("\\x{b:02X}")).collect()
}

// ---------------------------------------------------------------------------------------------
// Decoding, to read every layer of the output (and of the input, to compare).

fn gunzip(bytes: &[u8]) -> Option<Vec<u8>> {
    if !bytes.starts_with(&[0x1f, 0x8b]) {
        return None;
    }
    let mut out = Vec::new();
    flate2::read::MultiGzDecoder::new(bytes)
        .take(64 << 20)
        .read_to_end(&mut out)
        .ok()?;
    Some(out)
}

fn percent_decode(text: &str) -> Vec<u8> {
    let b = text.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' && i + 3 <= b.len() {
            let hex = std::str::from_utf8(&b[i + 1..i + 3])
                .ok()
                .and_then(|h| u8::from_str_radix(h, 16).ok());
            if let Some(v) = hex {
                out.push(v);
                i += 3;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    out
}

/// Text that is plainly base64: padded, standard alphabet, whitespace allowed, 8 or more
/// characters.
fn plain_base64(text: &str) -> Option<Vec<u8>> {
    let clean: String = text.chars().filter(|c| !c.is_ascii_whitespace()).collect();
    if clean.len() < 8 || !clean.len().is_multiple_of(4) {
        return None;
    }
    if !clean
        .bytes()
        .all(|c| c.is_ascii_alphanumeric() || c == b'+' || c == b'/' || c == b'=')
    {
        return None;
    }
    base64::engine::general_purpose::STANDARD.decode(clean).ok()
}

/// The bytes a string encodes: a `data:` URL (base64 or percent-encoded) or plain base64,
/// gunzipped when gzip.
struct Decoded {
    bytes: Vec<u8>,
    gzip: bool,
    url: bool,
}

fn decode(text: &str) -> Option<Decoded> {
    let t = text.trim();
    let (raw, url) = match t.strip_prefix("data:") {
        Some(rest) => {
            let (head, body) = rest.split_once(',')?;
            let raw = if head.ends_with(";base64") {
                let clean: String = body.chars().filter(|c| !c.is_ascii_whitespace()).collect();
                base64::engine::general_purpose::STANDARD_PAD_INDIFFERENT
                    .decode(clean)
                    .ok()?
            } else {
                percent_decode(body)
            };
            (raw, true)
        }
        None => (plain_base64(t)?, false),
    };
    Some(match gunzip(&raw) {
        Some(bytes) => Decoded {
            bytes,
            gzip: true,
            url,
        },
        None => Decoded {
            bytes: raw,
            gzip: false,
            url,
        },
    })
}

fn is_text(text: &str) -> bool {
    !text.is_empty()
        && text
            .chars()
            .all(|c| !c.is_control() || matches!(c, '\n' | '\r' | '\t'))
}

/// The YAML (or JSON) documents of a text. A `!!binary` scalar reads as the text it decodes
/// to; one that does not decode to text (`!!binary REDACTED`) as its base64 text.
fn parse_yaml(text: &str) -> Option<Vec<Value>> {
    serde_saphyr::from_multiple(text).ok().or_else(|| {
        let mut options = serde_saphyr::Options::default();
        options.ignore_binary_tag_for_string = true;
        serde_saphyr::from_multiple_with_options(text, options).ok()
    })
}

/// The YAML (or JSON) documents of a text, when it parses to more than one bare scalar.
fn structured(text: &str) -> Option<Vec<Value>> {
    let docs = parse_yaml(text)?;
    (docs.len() > 1 || docs.iter().any(|d| d.is_object() || d.is_array())).then_some(docs)
}

/// What a string holds beneath it.
struct Inner {
    text: String,
    docs: Option<Vec<Value>>,
    gzip: bool,
}

fn inner(s: &str) -> Option<Inner> {
    if let Some(d) = decode(s) {
        let text = String::from_utf8(d.bytes).ok()?;
        if !(d.url || d.gzip || is_text(&text)) {
            return None;
        }
        let docs = structured(&text);
        return Some(Inner {
            text,
            docs,
            gzip: d.gzip,
        });
    }
    if s.contains('\n') || s.trim_start().starts_with(['{', '[']) {
        return Some(Inner {
            text: s.to_owned(),
            docs: structured(s),
            gzip: false,
        });
    }
    None
}

/// Calls `f(key, string)` for every string of every layer of `bytes`: each layer's text (key
/// ""), each string it parses to (keys too), and the same again beneath every string that
/// decodes or parses. `key` is the mapping key a string is the value of (or an item of).
fn walk_bytes(bytes: &[u8], depth: usize, f: &mut dyn FnMut(&str, &str)) {
    let bytes = gunzip(bytes).unwrap_or_else(|| bytes.to_vec());
    let text = String::from_utf8_lossy(&bytes).into_owned();
    if let Some(docs) = parse_yaml(&text) {
        for d in &docs {
            walk_value(d, "", depth, f);
        }
    }
    f("", &text);
}

fn walk_value(v: &Value, key: &str, depth: usize, f: &mut dyn FnMut(&str, &str)) {
    match v {
        Value::String(s) => walk_str(s, key, depth, f),
        Value::Array(items) => {
            for item in items {
                walk_value(item, key, depth, f);
            }
        }
        Value::Object(map) => {
            for (k, v) in map {
                walk_str(k, "", depth, f);
                walk_value(v, k, depth, f);
            }
        }
        other => f(key, &other.to_string()),
    }
}

fn walk_str(s: &str, key: &str, depth: usize, f: &mut dyn FnMut(&str, &str)) {
    if depth > 0 {
        if let Some(d) = decode(s) {
            walk_bytes(&d.bytes, depth - 1, f);
        } else if (s.contains('\n') || s.trim_start().starts_with(['{', '[']))
            && let Some(docs) = parse_yaml(s)
        {
            for d in &docs {
                walk_value(d, "", depth - 1, f);
            }
        }
    }
    f(key, s);
}

/// Every string of every layer.
fn strings_of(bytes: &[u8]) -> Vec<String> {
    let mut out = Vec::new();
    walk_bytes(bytes, DEPTH, &mut |_, s| out.push(s.to_owned()));
    out
}

/// Every string of every layer beneath one string.
fn strings_of_str(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    walk_str(s, "", DEPTH, &mut |_, s| out.push(s.to_owned()));
    out
}

/// The top-level documents of an input or output.
fn documents(bytes: &[u8]) -> Option<Vec<Value>> {
    let bytes = gunzip(bytes).unwrap_or_else(|| bytes.to_vec());
    parse_yaml(std::str::from_utf8(&bytes).ok()?)
}

// ---------------------------------------------------------------------------------------------
// Leaks.

/// What of `secret` must not be seen: the secret, or every 12-character window of it when
/// longer (but windows of fewer than 6 distinct characters); and the stable part of its
/// base64 at each of the three alignments, in windows of 16.
fn fragments(secret: &str) -> Vec<String> {
    let chars: Vec<char> = secret.chars().collect();
    let mut out = Vec::new();
    if chars.len() <= 12 {
        out.push(secret.to_owned());
    } else {
        for w in chars.windows(12) {
            if w.iter().collect::<BTreeSet<_>>().len() >= 6 {
                out.push(w.iter().collect());
            }
        }
    }
    let bytes = secret.as_bytes();
    for skip in 0..3.min(bytes.len()) {
        let enc = b64(&bytes[skip..]);
        // The last group may mix with what follows the secret.
        let stable = &enc[..enc.len().saturating_sub(4)];
        for w in stable.as_bytes().windows(16) {
            out.push(String::from_utf8_lossy(w).into_owned());
        }
    }
    out.sort();
    out.dedup();
    out
}

fn short(s: &str) -> String {
    let chars: Vec<char> = s.chars().collect();
    if chars.len() <= 240 {
        format!("{s:?}")
    } else {
        format!("{:?}…", chars[..240].iter().collect::<String>())
    }
}

fn around(s: &str, at: usize, len: usize) -> String {
    let mut start = at.saturating_sub(60);
    while !s.is_char_boundary(start) {
        start -= 1;
    }
    let mut end = (at + len + 60).min(s.len());
    while !s.is_char_boundary(end) {
        end += 1;
    }
    format!("{:?}", &s[start..end])
}

/// Each secret seen in `haystack`, with where.
fn leaks(secrets: &[String], haystack: &[String]) -> Vec<String> {
    let mut found = Vec::new();
    for secret in secrets {
        'secret: for frag in fragments(secret) {
            for s in haystack {
                if let Some(at) = s.find(&frag) {
                    found.push(format!(
                        "LEAK of {secret:?} (as {frag:?}) in …{}…",
                        around(s, at, frag.len())
                    ));
                    break 'secret;
                }
            }
        }
    }
    found
}

// ---------------------------------------------------------------------------------------------
// Structure.

/// Whether `after` is `before` with one or more parts (or all of it) replaced by the
/// placeholder.
fn masked(before: &str, after: &str) -> bool {
    let pieces: Vec<&str> = after.split(PLACEHOLDER).collect();
    if pieces.len() < 2 {
        return false;
    }
    let (first, last) = (pieces[0], pieces[pieces.len() - 1]);
    if !before.starts_with(first)
        || !before.ends_with(last)
        || first.len() + last.len() > before.len()
    {
        return false;
    }
    let mut rest = &before[first.len()..before.len() - last.len()];
    for piece in &pieces[1..pieces.len() - 1] {
        match rest.find(piece) {
            Some(at) => rest = &rest[at + piece.len()..],
            None => return false,
        }
    }
    true
}

struct Compare<'a> {
    case: &'a Case,
    problems: Vec<String>,
}

impl Compare<'_> {
    fn docs(&mut self, path: &str, a: &[Value], b: &[Value]) {
        if a.len() != b.len() {
            self.problems.push(format!(
                "{path}: {} document(s) became {}",
                a.len(),
                b.len()
            ));
            return;
        }
        for (i, (x, y)) in a.iter().zip(b).enumerate() {
            self.value(&format!("{path}#{i}"), "", x, y);
        }
    }

    fn value(&mut self, path: &str, key: &str, a: &Value, b: &Value) {
        match (a, b) {
            (Value::Object(x), Value::Object(y)) => {
                let mut kx: Vec<&String> = x.keys().collect();
                let mut ky: Vec<&String> = y.keys().collect();
                kx.sort();
                ky.sort();
                if kx != ky {
                    self.problems
                        .push(format!("{path}: keys {kx:?} became {ky:?}"));
                }
                for (k, v) in x {
                    if let Some(w) = y.get(k) {
                        self.value(&format!("{path}.{k}"), k, v, w);
                    }
                }
            }
            (Value::Array(x), Value::Array(y)) => {
                if x.len() != y.len() {
                    self.problems.push(format!(
                        "{path}: a list of {} became one of {}",
                        x.len(),
                        y.len()
                    ));
                }
                for (i, (v, w)) in x.iter().zip(y).enumerate() {
                    self.value(&format!("{path}[{i}]"), key, v, w);
                }
            }
            (Value::String(x), Value::String(y)) => self.string(path, key, x, y),
            _ if a == b => {}
            _ => self.problems.push(format!(
                "{path}: {} became {} (another type or value)",
                short(&a.to_string()),
                short(&b.to_string())
            )),
        }
    }

    /// Whether a value may change: it holds a planted secret in some layer, or is a value the
    /// case names as secret under this key.
    fn secretish(&self, key: &str, a: &str) -> bool {
        self.case
            .maskable
            .iter()
            .any(|(k, v)| k == key && a.trim() == v)
            || strings_of_str(a)
                .iter()
                .any(|s| self.case.secrets.iter().any(|p| s.contains(p.as_str())))
    }

    fn string(&mut self, path: &str, key: &str, a: &str, b: &str) {
        if a == b {
            return;
        }
        // A value that held a secret somewhere inside may be masked whole (an annotation's copy
        // of the object).
        if b == PLACEHOLDER && self.secretish(key, a) {
            return;
        }
        let (ia, ib) = (inner(a), inner(b));
        if let Some(ia) = &ia {
            if let Some(ib) = &ib
                && ia.gzip != ib.gzip
            {
                self.problems
                    .push(format!("{path}: gzip {} became gzip {}", ia.gzip, ib.gzip));
            }
            if let Some(da) = &ia.docs {
                match ib.as_ref().and_then(|ib| ib.docs.as_ref()) {
                    Some(db) => self.docs(&format!("{path}▸"), da, db),
                    None => self.problems.push(format!(
                        "{path}: held YAML/JSON, now holds something else: {}",
                        short(b)
                    )),
                }
                return;
            }
            if let Some(ib) = &ib
                && ia.text == ib.text
            {
                // Encoded again, the same text.
                return;
            }
        }
        if !self.secretish(key, a) {
            self.problems.push(format!(
                "{path}: a value without a secret changed: {} became {}",
                short(a),
                short(b)
            ));
            return;
        }
        let ok =
            masked(a, b) || matches!((&ia, &ib), (Some(x), Some(y)) if masked(&x.text, &y.text));
        if !ok {
            self.problems.push(format!(
                "{path}: changed other than by {PLACEHOLDER} in place of a part: {} became {}",
                short(a),
                short(b)
            ));
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Cases.

struct Case {
    name: &'static str,
    input: Vec<u8>,
    /// Planted: none may be seen in the output.
    secrets: Vec<String>,
    /// Must be seen in some string of some layer of the output.
    keep: Vec<String>,
    /// (key, value): a secret the case does not plant (it is not random) that may change.
    maskable: Vec<(String, String)>,
    /// (key, value): no string under that key may still be that value.
    forbid: Vec<(String, String)>,
    /// Give the input as a file, not on standard input.
    file: bool,
}

impl Case {
    fn new(name: &'static str, input: impl Into<Vec<u8>>, secrets: &[&str]) -> Self {
        Case {
            name,
            input: input.into(),
            secrets: secrets.iter().map(|s| (*s).to_owned()).collect(),
            keep: Vec::new(),
            maskable: Vec::new(),
            forbid: Vec::new(),
            file: false,
        }
    }

    fn keep(mut self, keep: &[&str]) -> Self {
        self.keep.extend(keep.iter().map(|s| (*s).to_owned()));
        self
    }

    /// A secret value the output must not keep, which the case does not plant.
    fn secret_value(mut self, key: &str, value: &str) -> Self {
        self.maskable.push((key.to_owned(), value.to_owned()));
        self.forbid.push((key.to_owned(), value.to_owned()));
        self
    }

    /// A value that may be masked but need not be.
    fn maskable(mut self, key: &str, value: &str) -> Self {
        self.maskable.push((key.to_owned(), value.to_owned()));
        self
    }

    fn via_file(mut self) -> Self {
        self.file = true;
        self
    }
}

fn redact(case: &Case) -> Output {
    let mut c = cmd();
    let dir = scratch();
    if case.file {
        let path = dir.path().join("input.yaml");
        std::fs::write(&path, &case.input).expect("write");
        c.arg("redact").arg(&path);
    } else {
        c.args(["redact", "-"]).write_stdin(case.input.clone());
    }
    c.output().expect("run")
}

/// What is wrong with the redaction of one case (nothing: it passes).
fn problems(case: &Case) -> Vec<String> {
    let mut p = Vec::new();
    // The case itself: every planted secret and every kept string is in the input.
    let input_strings = strings_of(&case.input);
    for s in &case.secrets {
        if !input_strings.iter().any(|x| x.contains(s.as_str())) {
            p.push(format!("TEST BUG: {s:?} is not in the input"));
        }
    }
    for k in case.keep.iter().filter(|k| !k.contains(PLACEHOLDER)) {
        if !input_strings.iter().any(|x| x.contains(k.as_str())) {
            p.push(format!("TEST BUG: keep {k:?} is not in the input"));
        }
    }
    let Some(before) = documents(&case.input) else {
        p.push("TEST BUG: the input does not parse".to_owned());
        return p;
    };
    if !p.is_empty() {
        return p;
    }

    let out = redact(case);
    if let Some(dir) = std::env::var_os("RKE2_PAYLOAD_CORPUS_DUMP") {
        // For looking at a case: its input, output and standard error.
        let mut slug: String = case
            .name
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
            .collect();
        // Names that differ only in punctuation (`--token S`, `--token=S`) stay apart.
        let hash = case.name.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
        });
        slug.push_str(&format!("-{:08x}", hash as u32));
        let dir = std::path::Path::new(&dir);
        std::fs::create_dir_all(dir).expect("dump folder");
        std::fs::write(dir.join(format!("{slug}.in")), &case.input).expect("dump");
        std::fs::write(dir.join(format!("{slug}.out")), &out.stdout).expect("dump");
        std::fs::write(dir.join(format!("{slug}.err")), &out.stderr).expect("dump");
    }
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    for l in leaks(&case.secrets, std::slice::from_ref(&stderr)) {
        p.push(format!("stderr: {l}"));
    }
    match out.status.code() {
        Some(0) => {}
        Some(2) => {
            p.push(format!("refused (exit 2): {}", stderr.trim()));
            if !out.stdout.is_empty() {
                p.push("refused, but wrote to standard output".to_owned());
                p.extend(leaks(&case.secrets, &strings_of(&out.stdout)));
            }
            return p;
        }
        code => {
            p.push(format!("exit {code:?}: {}", stderr.trim()));
            return p;
        }
    }
    let strings = strings_of(&out.stdout);
    p.extend(leaks(&case.secrets, &strings));
    let Some(after) = documents(&out.stdout) else {
        p.push(format!(
            "the output does not parse as YAML: {}",
            short(&String::from_utf8_lossy(&out.stdout))
        ));
        return p;
    };
    let mut compare = Compare {
        case,
        problems: Vec::new(),
    };
    compare.docs("", &before, &after);
    p.extend(compare.problems);
    for k in &case.keep {
        if !strings.iter().any(|s| s.contains(k.as_str())) {
            p.push(format!("{k:?} is gone"));
        }
    }
    for (key, value) in &case.forbid {
        let mut kept = false;
        walk_bytes(&out.stdout, DEPTH, &mut |k, s| {
            kept |= k == key && s.trim() == value;
        });
        if kept {
            p.push(format!("{key}: {value:?} is still there"));
        }
    }
    p
}

/// What went wrong with the cases of `group`, one paragraph a failed case (empty: none).
fn failures(group: &str, cases: &[Case]) -> String {
    let mut failed = Vec::new();
    let mut report = String::new();
    for case in cases {
        let p = problems(case);
        if !p.is_empty() {
            failed.push(case.name);
            report.push_str(&format!("\n[{}]\n  {}", case.name, p.join("\n  ")));
        }
    }
    if failed.is_empty() {
        return String::new();
    }
    format!(
        "{group}: {} of {} case(s) failed: {}\n{report}",
        failed.len(),
        cases.len(),
        failed.join("; ")
    )
}

// ---------------------------------------------------------------------------------------------
// Builders: Secrets, cloud-config, Ignition, shaped as CAPRKE2 writes them.

fn metadata(name: &str) -> String {
    format!(
        "metadata:\n  name: {name}\n  namespace: default\n  labels:\n    cluster.x-k8s.io/cluster-name: demo\n  ownerReferences:\n  - apiVersion: bootstrap.cluster.x-k8s.io/v1beta2\n    controller: true\n    kind: RKE2Config\n    name: {name}\n    uid: 41d7c1f4-f9fb-5ac2-aacb-b76bdfdc7fb0\n"
    )
}

/// A bootstrap Secret with `data` (base64).
fn secret(name: &str, format: &str, value: impl AsRef<[u8]>) -> String {
    format!(
        "apiVersion: v1\nkind: Secret\n{}type: cluster.x-k8s.io/secret\ndata:\n  format: {}\n  value: {}\n",
        metadata(name),
        b64(format),
        b64(value)
    )
}

/// A bootstrap Secret whose value is gzip.
fn secret_gz(name: &str, format: &str, value: impl AsRef<[u8]>) -> String {
    secret(name, format, gzip(value))
}

/// A bootstrap Secret with `stringData`.
fn secret_string_data(name: &str, format: &str, value: &str) -> String {
    format!(
        "apiVersion: v1\nkind: Secret\n{}type: cluster.x-k8s.io/secret\nstringData:\n  format: {format}\n  value: {}",
        metadata(name),
        block(value, 4)
    )
}

/// A YAML block scalar (what follows `key: `) of `text`, its lines indented by `indent`.
fn block(text: &str, indent: usize) -> String {
    assert!(!text.starts_with(' '), "a block scalar needs an indicator");
    let chomp = if text.ends_with("\n\n") {
        "+"
    } else if text.ends_with('\n') {
        ""
    } else {
        "-"
    };
    let pad = " ".repeat(indent);
    let mut out = format!("|{chomp}\n");
    for line in text.lines() {
        if !line.is_empty() {
            out.push_str(&pad);
            out.push_str(line);
        }
        out.push('\n');
    }
    out
}

const CONFIG: &str = "/etc/rancher/rke2/config.yaml";

const RUNCMD: &str = "runcmd:\n  - 'curl -sfL https://get.rke2.io | INSTALL_RKE2_VERSION=v1.32.5+rke2r1 INSTALL_RKE2_TYPE=\"agent\" sh -s -'\n  - 'systemctl enable --now rke2-agent.service'\n  - 'mkdir -p /run/cluster-api'\n  - 'echo success > /run/cluster-api/bootstrap-success.complete'\n";

/// A `write_files` entry as CAPRKE2 writes it.
fn wf(path: &str, content: &str) -> String {
    format!(
        "-   path: {path}\n    owner: root:root\n    permissions: '0640'\n    content: {}",
        block(content, 6)
    )
}

/// A `write_files` entry with `encoding` and the content already encoded.
fn wf_encoded(path: &str, encoding: &str, encoded: &str) -> String {
    format!(
        "-   path: {path}\n    owner: root:root\n    permissions: '0600'\n    encoding: {encoding}\n    content: {encoded}\n"
    )
}

fn cloud_config(entries: &[String], rest: &str) -> String {
    format!(
        "## template: jinja\n#cloud-config\n\nwrite_files:\n{}\n{rest}",
        entries.concat()
    )
}

fn rke2_config(extra: &str) -> String {
    format!(
        "cloud-provider-name: external\nkubelet-arg:\n  - max-pods=110\nnode-label:\n  - workload=general\nserver: https://10.0.1.10:9345\n{extra}"
    )
}

/// A cloud-config writing config.yaml with `extra`, and the usual commands.
fn cc_config(extra: &str) -> String {
    cloud_config(&[wf(CONFIG, &rke2_config(extra))], RUNCMD)
}

/// A cloud-config writing config.yaml (with `token`) and `more`, and the usual commands.
fn cc_with(token: &str, more: &[String]) -> String {
    let mut entries = vec![wf(CONFIG, &rke2_config(&format!("token: {token}\n")))];
    entries.extend(more.iter().cloned());
    cloud_config(&entries, RUNCMD)
}

fn merge(into: &mut Value, from: Value) {
    match (into, from) {
        (Value::Object(a), Value::Object(b)) => {
            for (k, v) in b {
                merge(a.entry(k).or_insert(Value::Null), v);
            }
        }
        (slot, v) => *slot = v,
    }
}

fn ign_file(path: &str, source: &str, compression: &str, mode: u32) -> Value {
    json!({
        "group": {"name": "root"}, "overwrite": true, "path": path, "user": {"name": "root"},
        "contents": {"compression": compression, "source": source, "verification": {}},
        "mode": mode
    })
}

/// config.yaml with `extra`, as CAPRKE2's Ignition writes it (percent-encoded).
fn ign_config(extra: &str) -> Value {
    ign_file(CONFIG, &pct_url(&rke2_config(extra)), "", 0o600)
}

/// An Ignition 3.3 config with `files`, the install unit, and `extra` merged in.
fn ignition(files: Vec<Value>, extra: Value) -> String {
    let mut doc = json!({
        "ignition": {"version": "3.3.0"},
        "storage": {"files": files},
        "systemd": {"units": [{
            "name": "rke2-install.service", "enabled": true,
            "contents": "[Unit]\nDescription=rke2-install\nAfter=network-online.target\n[Service]\nType=oneshot\nExecStart=/usr/local/bin/rke2-install.sh\n[Install]\nWantedBy=multi-user.target\n"
        }]}
    });
    merge(&mut doc, extra);
    doc.to_string()
}

/// CAPRKE2's gzip wrapper: the config gzipped into a `data:;base64,` URL that the stored config
/// merges (`how`: "merge") or replaces itself with ("replace").
fn wrapper(config: &str, how: &str) -> String {
    let entry = json!({"compression": "gzip", "source": b64_url(gzip(config)), "verification": {}});
    let config = if how == "merge" {
        json!({"merge": [entry]})
    } else {
        json!({"replace": entry})
    };
    json!({"ignition": {"config": config, "version": "3.3.0"}}).to_string()
}

// ---------------------------------------------------------------------------------------------
// The corpus.

#[test]
fn config_yaml_key_spellings() {
    let cases = [
        Case::new(
            "config: quoted key 'token' (gzip value)",
            secret_gz(
                "w-quoted",
                "cloud-config",
                cc_config("'token': Vwqr1CL811NXLJYy93eW\n"),
            ),
            &["Vwqr1CL811NXLJYy93eW"],
        ),
        Case::new(
            "config: space before the colon `token : S` (stringData)",
            secret_string_data(
                "w-space",
                "cloud-config",
                &cc_config("token : HMKZbPe255bFXd6WtCka\n"),
            ),
            &["HMKZbPe255bFXd6WtCka"],
        ),
        Case::new(
            "config: explicit key `? token`",
            secret(
                "w-explicit",
                "cloud-config",
                cc_config("? token\n: I8gAloCthoiDEJb2RnHK\n"),
            ),
            &["I8gAloCthoiDEJb2RnHK"],
        ),
        Case::new(
            "config: escaped key \"\\x74oken\"",
            secret(
                "w-escaped-key",
                "cloud-config",
                cc_config("\"\\x74oken\": u1o94rmBCLdgGVMwHPlX\n"),
            ),
            &["u1o94rmBCLdgGVMwHPlX"],
        ),
        Case::new(
            "config: value of \\x escapes (gzip value)",
            secret_gz(
                "w-escaped-value",
                "cloud-config",
                cc_config(&format!(
                    "token: \"{}\"\n",
                    hex_escaped("ebshCpp7fQPatNXZGRgk")
                )),
            ),
            &["ebshCpp7fQPatNXZGRgk"],
        ),
        Case::new(
            "config: token: !!binary",
            secret(
                "w-binary",
                "cloud-config",
                cc_config(&format!(
                    "token: !!binary {}\n",
                    b64("sYzkjjePhxJgYwRggjsh")
                )),
            ),
            &["sYzkjjePhxJgYwRggjsh"],
        ),
        Case::new(
            "config: token: [S] (stringData)",
            secret_string_data(
                "w-flow-seq",
                "cloud-config",
                &cc_config("token: [aa8WazPuXKLitgyzq6ck]\n"),
            ),
            &["aa8WazPuXKLitgyzq6ck"],
        ),
        Case::new(
            "config: token: {a: S}",
            secret(
                "w-flow-map",
                "cloud-config",
                cc_config("token: {a: toxkFCIJlJf4MJYpQpEk}\n"),
            ),
            &["toxkFCIJlJf4MJYpQpEk"],
        ),
        Case::new(
            "config: short alias `t: S`",
            secret(
                "w-alias",
                "cloud-config",
                cc_config("t: EmJeMU2fk6aIS4QnrN2X\n"),
            ),
            &["EmJeMU2fk6aIS4QnrN2X"],
        ),
        Case::new(
            "config: agent-token (Ignition)",
            secret(
                "w-agent-token",
                "ignition",
                ignition(
                    vec![ign_config("agent-token: FJj41GRbKhmaJ6AP9Mwy\n")],
                    json!({}),
                ),
            ),
            &["FJj41GRbKhmaJ6AP9Mwy"],
        ),
        Case::new(
            "config: agent_token with an underscore",
            secret(
                "w-agent-underscore",
                "cloud-config",
                cc_config("agent_token: zFHeKjFPucngTJYr8blq\n"),
            ),
            &["zFHeKjFPucngTJYr8blq"],
        ),
        Case::new(
            "config: AGENT_TOKEN in capitals",
            secret(
                "w-agent-upper",
                "cloud-config",
                cc_config("AGENT_TOKEN: wesYqJl14F8SNgCZMNJV\n"),
            ),
            &["wesYqJl14F8SNgCZMNJV"],
        ),
    ];
    let failed = failures("config.yaml key spellings", &cases);
    assert!(failed.is_empty(), "{failed}");
}

#[test]
fn config_yaml_places_and_encodings() {
    let cases = [
        Case::new(
            "config: drop-in config.yaml.d/50-x.yaml",
            secret(
                "w-dropin",
                "cloud-config",
                cloud_config(
                    &[
                        wf(CONFIG, &rke2_config("")),
                        wf(
                            "/etc/rancher/rke2/config.yaml.d/50-x.yaml",
                            "token: Hyi7Cj6eIX63FvE9lu5J\n",
                        ),
                    ],
                    RUNCMD,
                ),
            ),
            &["Hyi7Cj6eIX63FvE9lu5J"],
        ),
        Case::new(
            "config: path /etc/rancher/rke2//config.yaml",
            secret(
                "w-double-slash",
                "cloud-config",
                cloud_config(
                    &[wf(
                        "/etc/rancher/rke2//config.yaml",
                        &rke2_config("token: aivFxKgX1P9IUG2EfLiE\n"),
                    )],
                    RUNCMD,
                ),
            ),
            &["aivFxKgX1P9IUG2EfLiE"],
        ),
        Case::new(
            "config: unknown key my-custom-flag (Ignition in CAPRKE2's gzip wrapper, replace)",
            secret(
                "w-unknown",
                "ignition",
                wrapper(
                    &ignition(
                        vec![ign_config("my-custom-flag: G4ZK7XiexVxqwScL7dHu\n")],
                        json!({}),
                    ),
                    "replace",
                ),
            ),
            &["G4ZK7XiexVxqwScL7dHu"],
        ),
        Case::new(
            "config: datastore-endpoint password only (gzip value)",
            secret_gz(
                "w-datastore",
                "cloud-config",
                cc_config("datastore-endpoint: postgres://u:ZutIRTtKBsQwrFRM8Xxf@db:5432/k3s\n"),
            ),
            &["ZutIRTtKBsQwrFRM8Xxf"],
        )
        .keep(&["postgres://u:REDACTED@db:5432/k3s"]),
        Case::new(
            "config: written with encoding gz+b64",
            secret(
                "w-gz-b64",
                "cloud-config",
                cloud_config(
                    &[wf_encoded(
                        CONFIG,
                        "gz+b64",
                        &b64(gzip(rke2_config("token: BWGrP8YdgbztvgwfCXJd\n"))),
                    )],
                    RUNCMD,
                ),
            ),
            &["BWGrP8YdgbztvgwfCXJd"],
        ),
    ];
    let failed = failures("config.yaml places and encodings", &cases);
    assert!(failed.is_empty(), "{failed}");
}

#[test]
fn commands_and_units() {
    let runcmd = |name: &str, lines: &str| {
        secret(
            name,
            "cloud-config",
            cloud_config(
                &[wf(CONFIG, &rke2_config(""))],
                &format!("runcmd:\n{lines}"),
            ),
        )
    };
    let cases = [
        Case::new(
            "runcmd: rke2 agent -t S",
            runcmd(
                "c-t",
                "  - 'rke2 agent -t e41QZ7Abk1FSTWXEs2Cn --server https://10.0.1.10:9345'\n",
            ),
            &["e41QZ7Abk1FSTWXEs2Cn"],
        )
        .keep(&["rke2 agent -t ", " --server https://10.0.1.10:9345"]),
        Case::new(
            "runcmd: --token S",
            runcmd(
                "c-token",
                "  - rke2 server --token t3EM7K7XO2kmnsQwzp2o --tls-san lb.example.com\n",
            ),
            &["t3EM7K7XO2kmnsQwzp2o"],
        )
        .keep(&["rke2 server --token ", " --tls-san lb.example.com"]),
        Case::new(
            "runcmd: --token=S",
            runcmd(
                "c-token-eq",
                "  - \"INSTALL_RKE2_TYPE=agent rke2 agent --token=B6PRil4a3K96cu8AqRtW --node-name w1\"\n",
            ),
            &["B6PRil4a3K96cu8AqRtW"],
        )
        .keep(&["rke2 agent --token=", " --node-name w1"]),
        Case::new(
            "runcmd: argv form [rke2, agent, --token, S]",
            runcmd(
                "c-argv",
                "  - [rke2, agent, --token, OjXPAtzdfaz0qKW3AKk5, --server, 'https://10.0.1.10:9345']\n",
            ),
            &["OjXPAtzdfaz0qKW3AKk5"],
        ),
        Case::new(
            "runcmd: argv form [mysql, -pS]",
            runcmd(
                "c-mysql",
                "  - [mysql, -uroot, -pLooiL42hNsOOa4LxnBca, -e, 'select 1']\n",
            ),
            &["LooiL42hNsOOa4LxnBca"],
        ),
        Case::new(
            "write_files: systemd unit ExecStart=… --token S",
            secret(
                "c-unit",
                "cloud-config",
                cloud_config(
                    &[
                        wf(CONFIG, &rke2_config("")),
                        wf(
                            "/etc/systemd/system/rke2-custom.service",
                            "[Unit]\nDescription=RKE2 custom\n\n[Service]\nExecStart=/usr/bin/rke2 server --token MKAK0AWA5UOXPsmvYQsJ --write-kubeconfig-mode 0644\nRestart=always\n",
                        ),
                    ],
                    RUNCMD,
                ),
            ),
            &["MKAK0AWA5UOXPsmvYQsJ"],
        )
        .keep(&[
            "ExecStart=/usr/bin/rke2 server --token ",
            " --write-kubeconfig-mode 0644",
        ]),
        Case::new(
            "write_files: drop-in Environment=AWS_SECRET_ACCESS_KEY=S unquoted",
            secret(
                "c-env",
                "cloud-config",
                cc_with(
                    "Td2Q9xLmV7aK4pWn8RcZ",
                    &[wf(
                        "/etc/systemd/system/rke2-server.service.d/10-aws.conf",
                        "[Service]\nEnvironment=AWS_SECRET_ACCESS_KEY=Ep1HjdDowH9J2eKFMeZz\nEnvironment=AWS_REGION=eu-west-1\n",
                    )],
                ),
            ),
            &["Ep1HjdDowH9J2eKFMeZz", "Td2Q9xLmV7aK4pWn8RcZ"],
        )
        .keep(&[
            "Environment=AWS_SECRET_ACCESS_KEY=",
            "Environment=AWS_REGION=eu-west-1",
        ]),
        Case::new(
            "runcmd: curl -H \"Authorization: Bearer S\"",
            runcmd(
                "c-bearer",
                "  - 'curl -sf -H \"Authorization: Bearer iRTMYyQrgAj0yrOzYARU\" https://vault.example.com/v1/secret/rke2 -o /tmp/x'\n",
            ),
            &["iRTMYyQrgAj0yrOzYARU"],
        )
        .keep(&[
            "Authorization: Bearer ",
            "https://vault.example.com/v1/secret/rke2 -o /tmp/x",
        ]),
    ];
    let failed = failures("commands and units", &cases);
    assert!(failed.is_empty(), "{failed}");
}

#[test]
fn files_secret_by_what_they_are() {
    let cases = [
        Case::new(
            "file: /var/lib/rancher/rke2/server/token",
            secret(
                "f-token",
                "cloud-config",
                cc_with(
                    "XkP4w9RtL2mN7qZs3VbY",
                    &[wf(
                        "/var/lib/rancher/rke2/server/token",
                        &format!("K10{HEX2}::server:rt4szZ6cY6yDoFInFcO2\n"),
                    )],
                ),
            ),
            &["rt4szZ6cY6yDoFInFcO2", "XkP4w9RtL2mN7qZs3VbY"],
        ),
        Case::new(
            "file: /var/lib/rancher/rke2/server/agent-token (encoding: b64)",
            secret(
                "f-agent-token",
                "cloud-config",
                cc_with(
                    "Lq8sD3fG6hJ9kZx2Cv5B",
                    &[wf_encoded(
                        "/var/lib/rancher/rke2/server/agent-token",
                        "b64",
                        &b64("IVYRBnh3hMhHMIWcV8oh\n"),
                    )],
                ),
            ),
            &["IVYRBnh3hMhHMIWcV8oh", "Lq8sD3fG6hJ9kZx2Cv5B"],
        ),
        Case::new(
            "file: /etc/rancher/node/password (encoding: gzip+base64, stringData)",
            secret_string_data(
                "f-node-password",
                "cloud-config",
                &cc_with(
                    "Wm3nB6vC9xZ2aS5dF8gH",
                    &[wf_encoded(
                        "/etc/rancher/node/password",
                        "gzip+base64",
                        &b64(gzip("mqoNmuxwQIflXLUmKwdV\n")),
                    )],
                ),
            ),
            &["mqoNmuxwQIflXLUmKwdV", "Wm3nB6vC9xZ2aS5dF8gH"],
        ),
    ];
    let failed = failures("files secret by what they are", &cases);
    assert!(failed.is_empty(), "{failed}");
}

#[test]
fn private_keys_in_any_path() {
    let putty = format!(
        "PuTTY-User-Key-File-3: ssh-ed25519\nEncryption: none\nComment: ed25519-key-20240101\nPublic-Lines: 2\n{PUTTY_PUBLIC_LINE}\nGvJi\nPrivate-Lines: 1\nAAAAI{PUTTY_SECRET}\nPrivate-MAC: {HEX3}\n"
    );
    let age = format!(
        "# created: 2024-01-01T00:00:00Z\n# public key: {AGE_PUBLIC}\nAGE-SECRET-KEY-1{AGE_SECRET}\n"
    );
    let pkcs8_secret = pkcs8_seed(PKCS8_KEY);
    let cases = [
        Case::new(
            "key: PEM PRIVATE KEY in /opt/app/data/blob.txt",
            secret(
                "k-pkcs8",
                "cloud-config",
                cc_with(
                    "J6n5FUWDdG6BogmnKdNz",
                    &[wf("/opt/app/data/blob.txt", PKCS8_KEY)],
                ),
            ),
            &[&pkcs8_secret, "J6n5FUWDdG6BogmnKdNz"],
        ),
        Case::new(
            "key: OPENSSH PRIVATE KEY in /root/.backup/id (gzip value)",
            secret_gz(
                "k-openssh",
                "cloud-config",
                cc_with(
                    "sBuqkJtLxU9Wk3Q23vGz",
                    &[wf("/root/.backup/id", OPENSSH_KEY)],
                ),
            ),
            &[OPENSSH_SEED, "sBuqkJtLxU9Wk3Q23vGz"],
        ),
        Case::new(
            "key: PGP PRIVATE KEY BLOCK in /etc/app/signing.asc (Ignition)",
            secret(
                "k-pgp",
                "ignition",
                ignition(
                    vec![
                        ign_config("token: W7vcUpaPUCgsZKmEL9v1\n"),
                        ign_file("/etc/app/signing.asc", &pct_url(PGP_KEY), "", 0o600),
                    ],
                    json!({}),
                ),
            ),
            &[PGP_SECRET, "W7vcUpaPUCgsZKmEL9v1"],
        ),
        Case::new(
            "key: age AGE-SECRET-KEY-1 in /etc/sops/age/keys.txt",
            secret(
                "k-age",
                "cloud-config",
                cc_with(
                    "sn0nDRrgZygpuDLA1PAK",
                    &[wf("/etc/sops/age/keys.txt", &age)],
                ),
            ),
            &[AGE_SECRET, "sn0nDRrgZygpuDLA1PAK"],
        )
        .keep(&[AGE_PUBLIC]),
        Case::new(
            "key: PuTTY-User-Key-File-3 Private-Lines in /opt/putty/ops.ppk",
            secret(
                "k-putty",
                "cloud-config",
                cc_with("cSCZoj67lGQgip75VX8I", &[wf("/opt/putty/ops.ppk", &putty)]),
            ),
            &[PUTTY_SECRET, "cSCZoj67lGQgip75VX8I"],
        )
        .keep(&["PuTTY-User-Key-File-3: ssh-ed25519", PUTTY_PUBLIC_LINE]),
    ];
    let failed = failures("private keys", &cases);
    assert!(failed.is_empty(), "{failed}");
}

#[test]
fn long_tokens_folded_over_lines() {
    let long = format!("K10{LONG}::server:LCibOxaZ1RnapFD5nmwc");
    let (head, tail) = long.split_at(72);
    let cases = [
        Case::new(
            "multi-line: double-quoted token folded with an escaped line break",
            secret(
                "m-dq-escaped",
                "cloud-config",
                cc_config(&format!("token: \"{head}\\\n  {tail}\"\n")),
            ),
            &[&long],
        ),
        Case::new(
            "multi-line: double-quoted token folded at a line break (stringData)",
            secret_string_data(
                "m-dq-space",
                "cloud-config",
                &cc_config("token: \"F6xtzvWJ2P4gqMVSZuRl\n  kKCsOpA628GSF8zJqyST\"\n"),
            ),
            &["F6xtzvWJ2P4gqMVSZuRl", "kKCsOpA628GSF8zJqyST"],
        ),
        Case::new(
            "multi-line: plain token folded over lines (gzip value)",
            secret_gz(
                "m-plain",
                "cloud-config",
                cc_config("token: LfcLWkVuyE0im7a7O1Dk\n  HSUlZQEkie2vFnuGlsGr\n"),
            ),
            &["LfcLWkVuyE0im7a7O1Dk", "HSUlZQEkie2vFnuGlsGr"],
        ),
    ];
    let failed = failures("long tokens folded over lines", &cases);
    assert!(failed.is_empty(), "{failed}");
}

#[test]
fn ignition_sections() {
    let ca_secret = pkcs8_seed(CA_KEY);
    let tool = |header: &str| {
        json!({
            "path": "/usr/local/bin/tool", "mode": 493, "overwrite": true,
            "contents": {
                "source": "https://artifacts.example.com/tool/v1.2.3/tool-linux-amd64",
                "httpHeaders": [
                    {"name": "Authorization", "value": header},
                    {"name": "Accept", "value": "application/octet-stream"}
                ],
                "verification": {"hash": format!("sha256-{HEX1}")}
            }
        })
    };
    let cases = [
        Case::new(
            "ignition: storage.luks[].keyFile data URL",
            secret(
                "i-luks",
                "ignition",
                ignition(
                    vec![ign_config("token: jBQbmzcJ8xKiD7rJMW90\n")],
                    json!({"storage": {"luks": [{
                        "name": "data", "device": "/dev/disk/by-partlabel/data", "label": "data",
                        "keyFile": {"source": "data:,YxZu7KxlnMdrzAe71rDT", "compression": ""},
                        "wipeVolume": true
                    }]}}),
                ),
            ),
            &["YxZu7KxlnMdrzAe71rDT", "jBQbmzcJ8xKiD7rJMW90"],
        )
        .keep(&["/dev/disk/by-partlabel/data"]),
        Case::new(
            "ignition: security.tls.certificateAuthorities holding a cert and its private key",
            secret(
                "i-ca",
                "ignition",
                ignition(
                    vec![ign_config("token: eDVHhBN55w8JHyjgfVuR\n")],
                    json!({"ignition": {"security": {"tls": {"certificateAuthorities": [
                        {"source": b64_url(format!("{CA_CRT}{CA_KEY}"))}
                    ]}}}}),
                ),
            ),
            &[&ca_secret, "eDVHhBN55w8JHyjgfVuR"],
        )
        .keep(&["A1UEAwwQaWduaXRpb24tdGVzdC1jYTAgFw0yNjEyMDIxMTM3NDhaGA8yMTI2MTEw"]),
        Case::new(
            "ignition: storage.files[].contents.httpHeaders Authorization",
            secret(
                "i-headers",
                "ignition",
                ignition(
                    vec![
                        ign_config("token: Td9KBBNm1z4PedqCcgZ6\n"),
                        tool("V0NUyDC6nUF4Km3koDHP"),
                    ],
                    json!({}),
                ),
            ),
            &["V0NUyDC6nUF4Km3koDHP", "Td9KBBNm1z4PedqCcgZ6"],
        )
        .keep(&[
            &format!("sha256-{HEX1}"),
            "https://artifacts.example.com/tool/v1.2.3/tool-linux-amd64",
            "application/octet-stream",
        ]),
        Case::new(
            "ignition: httpHeaders inside CAPRKE2's gzip wrapper (merge)",
            secret(
                "i-headers-wrapped",
                "ignition",
                wrapper(
                    &ignition(
                        vec![
                            ign_config("token: WrN7z5jZdpxgZXcLO5e6\n"),
                            tool("CaZUeyJheEzkgv8EuzsC"),
                        ],
                        json!({}),
                    ),
                    "merge",
                ),
            ),
            &["CaZUeyJheEzkgv8EuzsC", "WrN7z5jZdpxgZXcLO5e6"],
        )
        .keep(&[&format!("sha256-{HEX1}"), "application/octet-stream"]),
        Case::new(
            "ignition: passwd.users[].passwordHash",
            secret(
                "i-passwd",
                "ignition",
                ignition(
                    vec![ign_config("token: ZYvk0yuvPBNiAiPezW1m\n")],
                    json!({"passwd": {"users": [{
                        "name": "core",
                        "passwordHash": format!("{HASH1_SALT}{HASH1}"),
                        "sshAuthorizedKeys": [OPS_PUB]
                    }]}}),
                ),
            ),
            &[HASH1, "ZYvk0yuvPBNiAiPezW1m"],
        )
        .keep(&[OPS_PUB]),
    ];
    let failed = failures("Ignition sections", &cases);
    assert!(failed.is_empty(), "{failed}");
}

#[test]
fn envelopes() {
    let backup = {
        let userdata = cc_config("token: SsywE6c5LvKVQ3fyAxqC\n");
        let copy = json!({
            "apiVersion": "v1", "kind": "Secret",
            "metadata": {"name": "e-backup", "namespace": "default"},
            "type": "cluster.x-k8s.io/secret",
            "data": {"format": b64("cloud-config"), "value": b64(&userdata)}
        });
        format!(
            "apiVersion: v1\nkind: Secret\nmetadata:\n  name: e-backup\n  namespace: default\n  annotations:\n    example.com/backup: '{copy}'\n  labels:\n    cluster.x-k8s.io/cluster-name: demo\ntype: cluster.x-k8s.io/secret\ndata:\n  format: {}\n  value: {}\n",
            b64("cloud-config"),
            b64(&userdata)
        )
    };
    let both = format!(
        "apiVersion: v1\nkind: Secret\n{}type: cluster.x-k8s.io/secret\ndata:\n  format: {}\n  value: {}\nstringData:\n  format: cloud-config\n  value: {}",
        metadata("e-both"),
        b64("cloud-config"),
        b64(cc_config("token: oHiRwicac3hmdflvqZqU\n")),
        block(&cc_config("token: aQwWBd85AvtBLlMepSqJ\n"), 4)
    );
    let tls_secret = pkcs8_seed(TLS_KEY);
    let list = serde_json::to_string_pretty(&json!({
        "apiVersion": "v1", "kind": "List", "metadata": {"resourceVersion": ""},
        "items": [
            {
                "apiVersion": "v1", "kind": "Secret",
                "metadata": {"name": "e-list-boot", "namespace": "default",
                             "labels": {"cluster.x-k8s.io/cluster-name": "demo"}},
                "type": "cluster.x-k8s.io/secret",
                "data": {"format": b64("cloud-config"),
                         "value": b64(cc_config("token: T9f7QOUwyCTmG3WNrX8x\n"))}
            },
            {
                "apiVersion": "v1", "kind": "Secret",
                "metadata": {"name": "app-tls", "namespace": "default"},
                "type": "Opaque",
                "data": {"tls.crt": b64(format!("{TLS_CRT}{TLS_KEY}"))}
            },
            {
                "apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": "app-settings", "namespace": "default"},
                "data": {"password": "NGToYi3XGat2Q5RjfEL8", "mode": "production"}
            }
        ]
    }))
    .expect("json");
    let multi = format!(
        "{}---\n{}",
        secret_string_data(
            "e-doc-a",
            "cloud-config",
            &cc_config("token: iE3ivFqyJjiv1pYBTV5s\n")
        ),
        secret(
            "e-doc-b",
            "ignition",
            ignition(vec![ign_config("token: RvlJ7IUmv1SgRlTExU8V\n")], json!({}))
        )
    );
    let cases = [
        Case::new(
            "envelope: another annotation holds the whole Secret as JSON",
            backup,
            &["SsywE6c5LvKVQ3fyAxqC"],
        ),
        Case::new(
            "envelope: both data.value and stringData.value",
            both,
            &["oHiRwicac3hmdflvqZqU", "aQwWBd85AvtBLlMepSqJ"],
        ),
        Case::new(
            "envelope: JSON List of a bootstrap Secret, an Opaque tls.crt with a key, a ConfigMap password",
            list,
            &["T9f7QOUwyCTmG3WNrX8x", &tls_secret, "NGToYi3XGat2Q5RjfEL8"],
        )
        // Every value of another Secret or ConfigMap in a List is masked, a certificate kept
        // only when it holds no private key.
        .maskable("mode", "production")
        .via_file(),
        Case::new(
            "envelope: two YAML documents (stringData cloud-config, Ignition)",
            multi,
            &["iE3ivFqyJjiv1pYBTV5s", "RvlJ7IUmv1SgRlTExU8V"],
        )
        .via_file(),
        Case::new(
            "envelope: bare cloud-config user data",
            cc_config("token: Rhu4KY59xr1tFJTcYMPw\n"),
            &["Rhu4KY59xr1tFJTcYMPw"],
        ),
        Case::new(
            "envelope: bare Ignition (CAPRKE2's gzip wrapper, merge)",
            wrapper(
                &ignition(
                    vec![ign_config("token: rikqBexRcYV2hkVnJzwA\n")],
                    json!({}),
                ),
                "merge",
            ),
            &["rikqBexRcYV2hkVnJzwA"],
        ),
    ];
    let failed = failures("envelopes", &cases);
    assert!(failed.is_empty(), "{failed}");
}

#[test]
fn no_damage_to_what_is_not_secret() {
    let registries = "# mirrors for the air-gapped sites\nmirrors:\n  docker.io:\n    endpoint:\n      - https://registry.example.com\nconfigs:\n  registry.example.com:\n    auth:\n      username: |\n        admin\n      password: |\n        admin\n    tls:\n      ca_file: /etc/rancher/rke2/admin/ca.crt\n      insecure_skip_verify: false\n";
    let users = format!(
        "users:\n  - default\n  - name: ops\n    lock_passwd: false\n    passwd: {HASH2_SALT}{HASH2}\n    shell: /bin/bash\n    ssh_authorized_keys:\n      - {OPS_PUB}\nchpasswd:\n  expire: false\n  users:\n    - name: ops\n      password: odVmof1QFSj9sjX13fbX\n      type: text\n"
    );
    let postgres = "postgres://postgres:postgres@db:5432/postgres";
    let commented = cloud_config(
        &[wf(
            CONFIG,
            &format!(
                "# managed by the platform team\n{}",
                rke2_config("token: NpHvbdraKjAETeighAWA\n")
            ),
        )],
        RUNCMD,
    )
    .replace(
        "#cloud-config\n",
        "#cloud-config\n# Owner: platform team (ticket OPS-4411), keep this comment\n",
    );
    let manifest = format!(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: app\n  namespace: default\nspec:\n  template:\n    spec:\n      containers:\n        - name: app\n          image: registry.example.com/app@sha256:{HEX1}\n"
    );
    let checksums = cloud_config(
        &[
            wf(
                CONFIG,
                &rke2_config(
                    "token: M5IUa0iF8b9iUWGpXDoH\nsystem-default-registry: registry.example.com\n",
                ),
            ),
            wf("/var/lib/rancher/rke2/server/manifests/app.yaml", &manifest),
            wf("/etc/rancher/rke2/tls/registry-ca.crt", REGISTRY_CA_CRT),
        ],
        &format!(
            "ssh_authorized_keys:\n  - {OPS_PUB}\nruncmd:\n  - 'echo \"{HEX2}  /opt/rke2-artifacts/rke2.linux-amd64.tar.gz\" | sha256sum -c -'\n  - 'systemctl enable --now rke2-agent.service'\n"
        ),
    );
    let cases = [
        Case::new(
            "damage: registries.yaml with block-scalar username == password",
            secret(
                "d-registries",
                "cloud-config",
                cloud_config(
                    &[
                        wf("/etc/rancher/rke2/registries.yaml", registries),
                        wf(CONFIG, &rke2_config("token: GPgcDRiL3CjdPIn4hHGl\n")),
                    ],
                    &format!("users:\n  - name: admin\n    groups: [wheel]\n{RUNCMD}"),
                ),
            ),
            &["GPgcDRiL3CjdPIn4hHGl"],
        )
        .secret_value("password", "admin")
        .maskable("username", "admin")
        .keep(&[
            "/etc/rancher/rke2/admin/ca.crt",
            "https://registry.example.com",
            "# mirrors for the air-gapped sites",
        ]),
        Case::new(
            "damage: users with lock_passwd: false, passwd hash, chpasswd",
            secret(
                "d-users",
                "cloud-config",
                cloud_config(
                    &[wf(CONFIG, &rke2_config("token: u1KYGXEAS6OMzRQeCong\n"))],
                    &format!("{users}{RUNCMD}"),
                ),
            ),
            &[HASH2, "odVmof1QFSj9sjX13fbX", "u1KYGXEAS6OMzRQeCong"],
        )
        .keep(&[OPS_PUB]),
        Case::new(
            "damage: postgres://postgres:postgres@db:5432/postgres keeps all but the password",
            secret(
                "d-postgres",
                "cloud-config",
                cc_config(&format!(
                    "token: hToEVnSZtRoyqamuHPfs\ndatastore-endpoint: {postgres}\n"
                )),
            ),
            &["hToEVnSZtRoyqamuHPfs"],
        )
        .secret_value("datastore-endpoint", postgres)
        .keep(&["postgres://postgres:REDACTED@db:5432/postgres"]),
        Case::new(
            "damage: comment lines are kept",
            secret("d-comments", "cloud-config", commented),
            &["NpHvbdraKjAETeighAWA"],
        )
        .keep(&[
            "# Owner: platform team (ticket OPS-4411), keep this comment",
            "# managed by the platform team",
        ]),
        Case::new(
            "damage: a path under client-secret-file is kept",
            secret(
                "d-secret-file",
                "cloud-config",
                cc_with(
                    "suTQlfaTg63Ld9jmaiQY",
                    &[wf(
                        "/etc/kubernetes/cloud-provider.yaml",
                        "auth:\n  client-id: 0d0e6f4e-7b3a-4c55-9d1e-5f2a8c4b7e10\n  client-secret: hPDoImqZX2UhqyPP2Ey8\n  client-secret-file: /etc/kubernetes/secrets/client-secret\n",
                    )],
                ),
            ),
            &["hPDoImqZX2UhqyPP2Ey8", "suTQlfaTg63Ld9jmaiQY"],
        )
        .keep(&[
            "/etc/kubernetes/secrets/client-secret",
            "0d0e6f4e-7b3a-4c55-9d1e-5f2a8c4b7e10",
        ]),
        Case::new(
            "damage: checksums, image digests, a certificate and a public key are kept",
            secret("d-checksums", "cloud-config", checksums),
            &["M5IUa0iF8b9iUWGpXDoH"],
        )
        .keep(&[
            &format!("registry.example.com/app@sha256:{HEX1}"),
            HEX2,
            "A1UEAwwLcmVnaXN0cnktY2EwIBcNMjYxMjAyMTEzNzQ4WhgPMjEyNjExMDgxMTM3",
            OPS_PUB,
        ]),
    ];
    let failed = failures("no damage", &cases);
    assert!(failed.is_empty(), "{failed}");
}

/// Runs a command and returns (exit code, every string of its standard output and error).
fn shown(args: &[&str], stdin: Option<&str>) -> (Option<i32>, Vec<String>) {
    let mut c = cmd();
    c.args(args);
    if let Some(input) = stdin {
        c.write_stdin(input.to_owned());
    }
    let out = c.output().expect("run");
    let mut strings = strings_of(&out.stdout);
    strings.push(String::from_utf8_lossy(&out.stderr).into_owned());
    (out.status.code(), strings)
}

#[test]
fn inspect_lint_and_diff_never_show_a_secret() {
    const S: &str = "xWr1qMzSPV6mjzix1KZQ";
    const ALIAS: &str = "pBTUMxNympCS97P4qeBc";
    const OTHER: &str = "yiLeSu71ZJvpe3P6CyaI";
    let same = secret(
        "n-cni",
        "cloud-config",
        cc_config(&format!("cni: {S}\ntoken: {S}\n")),
    );
    let alias = secret(
        "n-alias",
        "cloud-config",
        cc_config(&format!("cni: {ALIAS}\nt: {ALIAS}\n")),
    );
    let other = secret(
        "n-cni",
        "cloud-config",
        cc_config(&format!("cni: {OTHER}\ntoken: {OTHER}\n")),
    );
    let mut failures = Vec::new();
    for (what, input, secrets) in [
        ("cni: S and token: S", &same, vec![S.to_owned()]),
        ("cni: S and t: S", &alias, vec![ALIAS.to_owned()]),
    ] {
        for args in [
            &["inspect", "-"][..],
            &["inspect", "-", "-v"],
            &["inspect", "-", "-o", "json"],
            &["inspect", "-", "-o", "yaml"],
            &["lint", "-"],
            &["lint", "-", "-o", "json"],
        ] {
            let (code, strings) = shown(args, Some(input.as_str()));
            let expected = if args[0] == "lint" { 0..=1 } else { 0..=0 };
            if !code.is_some_and(|c| expected.contains(&c)) {
                failures.push(format!("{what}: {args:?} exit {code:?}: {strings:?}"));
            }
            for l in leaks(&secrets, &strings) {
                failures.push(format!("{what}: {args:?}: {l}"));
            }
        }
    }
    let dir = scratch();
    let write = |name: &str, text: &str| {
        let path = dir.path().join(name);
        std::fs::write(&path, text).expect("write");
        path.to_str().expect("path").to_owned()
    };
    let (a, b, c) = (
        write("a.yaml", &same),
        write("b.yaml", &other),
        write("c.yaml", &alias),
    );
    let all = vec![S.to_owned(), ALIAS.to_owned(), OTHER.to_owned()];
    for (x, y) in [(&a, &b), (&a, &c)] {
        for format in ["text", "json", "markdown"] {
            let args = ["diff", x, y, "-o", format];
            let (code, strings) = shown(&args, None);
            if !matches!(code, Some(0 | 1)) {
                failures.push(format!("{args:?} exit {code:?}: {strings:?}"));
            }
            for l in leaks(&all, &strings) {
                failures.push(format!("{args:?}: {l}"));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} failure(s):\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn an_unknown_format_that_is_a_secret_is_never_quoted() {
    const S: &str = "Z63u6O4kBAAcVb66iMZh";
    let userdata = cc_config("");
    let inputs = [
        ("data", secret("u-format", S, &userdata)),
        ("stringData", secret_string_data("u-format", S, &userdata)),
    ];
    let secrets = [S.to_owned()];
    let mut failures = Vec::new();
    for (what, input) in &inputs {
        for args in [
            &["decode", "-"][..],
            &["inspect", "-"],
            &["inspect", "-", "-o", "json"],
            &["lint", "-"],
            &["size", "-"],
            &["encode", "-"],
            &["redact", "-"],
        ] {
            let mut c = cmd();
            let out = c
                .args(args)
                .write_stdin(input.clone())
                .output()
                .expect("run");
            let mut strings = strings_of(&out.stdout);
            strings.push(String::from_utf8_lossy(&out.stderr).into_owned());
            for l in leaks(&secrets, &strings) {
                failures.push(format!(
                    "{what}: {args:?} (exit {:?}): {l}",
                    out.status.code()
                ));
            }
            if args[0] == "redact" {
                match out.status.code() {
                    Some(0) => {}
                    Some(2) if out.stdout.is_empty() => {}
                    code => failures.push(format!(
                        "{what}: redact exit {code:?}, {} byte(s) of output",
                        out.stdout.len()
                    )),
                }
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} failure(s):\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// The comparer and the decoder themselves, on known answers (no binary run).
#[test]
fn the_corpus_tools_work() {
    assert!(masked("a --token S b", "a --token REDACTED b"));
    assert!(masked("anything", "REDACTED"));
    assert!(masked("x:S@y", "x:REDACTED@y"));
    assert!(
        masked("a --token S b", "a --token REDACTED"),
        "a tail is a part"
    );
    assert!(!masked("a --token S b", "b --token REDACTED"));
    assert!(!masked("a S b", "a S b"));
    assert!(!masked("abc", "xREDACTED"));
    // Every encoding the corpus uses decodes to the secret.
    let s = "Qw7eR4tY1uI8oP5aS2dF";
    let cases = [
        secret_gz(
            "t",
            "cloud-config",
            cloud_config(
                &[wf_encoded(
                    CONFIG,
                    "gzip+base64",
                    &b64(gzip(format!("token: \"{}\"\n", hex_escaped(s)))),
                )],
                "",
            ),
        ),
        secret(
            "t",
            "ignition",
            wrapper(
                &ignition(
                    vec![ign_config(&format!("token: !!binary {}\n", b64(s)))],
                    json!({}),
                ),
                "merge",
            ),
        ),
    ];
    for input in &cases {
        assert!(
            strings_of(input.as_bytes()).iter().any(|x| x == s),
            "{input}"
        );
    }
    // A window, and base64 of the secret inside other base64, are leaks; other text is not.
    let secrets = [s.to_owned()];
    assert!(!leaks(&secrets, &["x tY1uI8oP5aS2 y".to_owned()]).is_empty());
    assert!(!leaks(&secrets, &[b64(format!("ab{s}cd"))]).is_empty());
    assert!(leaks(&secrets, &["Qw7eR4tY1uI".to_owned(), b64("other")]).is_empty());
    // The same structure with a masked secret compares clean; a changed path does not.
    let case = Case::new("t", "", &[s]);
    let before = cc_with(s, &[wf("/etc/a", "x\n")]);
    let mut c = Compare {
        case: &case,
        problems: Vec::new(),
    };
    let docs = |t: &str| documents(t.as_bytes()).expect("yaml");
    c.docs(
        "",
        &docs(&before),
        &docs(&cc_with(PLACEHOLDER, &[wf("/etc/a", "x\n")])),
    );
    assert!(c.problems.is_empty(), "{:?}", c.problems);
    c.docs(
        "",
        &docs(&before),
        &docs(&cc_with(PLACEHOLDER, &[wf("/etc/b", "x\n")])),
    );
    assert_eq!(c.problems.len(), 1, "{:?}", c.problems);
}
