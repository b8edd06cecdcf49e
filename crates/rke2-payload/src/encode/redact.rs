//! `redact`: the same Secrets with every secret value replaced by a visible placeholder, in the
//! same format and compression, still decodable and inspectable.
//!
//! Replaced: the join token and agent token, the etcd S3 keys, the password of
//! `datastore-endpoint`, registry credentials, secrets-encryption keys, the bodies of private
//! keys, and the secret-looking values of the other Secrets of a List (CA `tls.key`, the
//! `<cluster>-token` value). The result is checked before it is returned: if any secret value
//! is still found in it, decoded or not, redaction fails instead of leaking.

use std::borrow::Cow;

use serde_json::Value;

use crate::checks::Check;
use crate::codec::text::terminal_safe;
use crate::codec::{b64, dataurl, gzip};
use crate::document::Content;
use crate::document::Document;
use crate::encode;
use crate::envelope::{BootstrapSecret, Envelope, Selector};
use crate::error::{Error, Syntax};
use crate::facts::rke2::{self, Rke2Config};
use crate::options::DecodeOptions;
use crate::payload::{Format, Payload, UserDataKind};
use crate::secrets::{self, PLACEHOLDER, Redactor, SecretValue};

/// Why `redact` did not write a redacted input.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RedactError {
    /// The input could not be read or decoded.
    #[error(transparent)]
    Input(#[from] Error),
    /// The payload of one Secret (`what`) could not be redacted completely, so nothing is
    /// written.
    #[error("{what}: {reason}")]
    Refused {
        /// The Secret (or `the redacted input` for a check of the whole result).
        what: String,
        /// Why.
        reason: Refusal,
    },
}

/// Why the redaction of a payload was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Refusal {
    /// The user data is not text, so it cannot be rewritten.
    #[error("the user data is not UTF-8 text")]
    NotText,
    /// A secret value is still present after redaction (an encoding this tool cannot rewrite).
    #[error(
        "a secret is still present after redaction ({where_}); refusing to write a partially redacted payload"
    )]
    Leftover {
        /// Where it was found.
        where_: String,
    },
    /// A part that could hold a secret cannot be read, so redact cannot vouch for it.
    #[error(
        "{part} cannot be read ({why}); refusing to write a payload that may still hold a secret"
    )]
    Unreadable {
        /// The part (`the user data`, a file's path, `config.yaml`).
        part: String,
        /// Why (scrubbed of values).
        why: String,
    },
}

fn unreadable(part: impl Into<String>, why: impl Into<String>) -> Refusal {
    Refusal::Unreadable {
        part: part.into(),
        why: why.into(),
    }
}

/// Redacts a whole input (one Secret, a List, several documents, or bare user data).
pub fn redact(input: &[u8], options: &DecodeOptions) -> Result<Vec<u8>, RedactError> {
    let envelope = Envelope::parse(input, options)?;
    if let [only] = envelope.secrets.as_slice()
        && only.is_bare()
    {
        let payload = only.decode(options)?;
        let (value, secrets) = redact_payload(&payload).map_err(|e| wrap(only, e))?;
        verify(&value, &secrets, options).map_err(|e| wrap(only, e))?;
        return Ok(value);
    }
    let text = std::str::from_utf8(input).map_err(|e| Error::Syntax {
        syntax: Syntax::Yaml,
        message: format!("invalid UTF-8 at byte {}", e.valid_up_to()),
        at: None,
    })?;
    // Every replacement is a (start, end, new text) edit of the input, applied in one pass.
    let mut edits: Vec<(usize, usize, String)> = Vec::new();
    let mut all_secrets: Vec<SecretValue> = Vec::new();
    let mut plain_secrets: Vec<SecretValue> = Vec::new();
    let mut plain = false;
    for secret in &envelope.secrets {
        let payload = secret.decode(options)?;
        let (value, secrets) = redact_payload(&payload).map_err(|e| wrap(secret, e))?;
        match secret.stored_base64() {
            Some(old) => {
                if let Some((start, end)) = locate_stored(text, old) {
                    edits.push((start, end, b64::encode(&value)));
                }
            }
            // stringData: the user data is in the input as text.
            None => {
                plain = true;
                plain_secrets.extend(secrets.iter().cloned());
            }
        }
        all_secrets.extend(secrets);
    }
    let placeholder = b64::encode(PLACEHOLDER.as_bytes());
    for value in &envelope.skipped_sensitive {
        let new = if value.base64 {
            placeholder.clone()
        } else {
            PLACEHOLDER.to_owned()
        };
        match locate_stored(text, &value.text) {
            Some((start, end)) => edits.push((start, end, new)),
            None => {
                return Err(RedactError::Refused {
                    what: value.secret.to_string(),
                    reason: unreadable(
                        format!("the value of {}", terminal_safe(&value.key)),
                        "it is written in a form redact cannot find in the input again",
                    ),
                });
            }
        }
    }
    edits.sort_by_key(|e| e.0);
    let mut out = String::with_capacity(text.len());
    let mut cursor = 0;
    for (start, end, new) in edits {
        if start < cursor {
            continue;
        }
        out.push_str(&text[cursor..start]);
        out.push_str(&new);
        cursor = end;
    }
    out.push_str(&text[cursor..]);
    // The known values only: masking by shape in the text around (a quoted scalar with its
    // escapes, one physical line) could take in more than the value. A credential known by its
    // shape alone is then still there, and the check below refuses.
    if plain {
        out = without_key_bodies(&redactor(&plain_secrets).redact(&out));
    }
    // `kubectl apply` keeps the whole object, data included, in an annotation.
    if out.contains(LAST_APPLIED) {
        out = scrub_last_applied(&out, envelope.syntax == Some(Syntax::Json))?;
    }
    let out = out.into_bytes();
    // Check the result as a whole: decoded again, nothing secret is left.
    let check = Envelope::parse(&out, options)?;
    for secret in &check.secrets {
        let payload = secret.decode(options)?;
        verify(payload.value(), &all_secrets, options).map_err(|e| wrap(secret, e))?;
    }
    // Every other value of every Secret now holds the placeholder (or is a public certificate).
    for value in &check.skipped_sensitive {
        let redacted = if value.base64 {
            value.text == placeholder
        } else {
            value.text == PLACEHOLDER
        };
        if !redacted {
            return Err(RedactError::Refused {
                what: value.secret.to_string(),
                reason: Refusal::Leftover {
                    where_: format!("the value of {}", terminal_safe(&value.key)),
                },
            });
        }
    }
    // A fleet shares few distinct secrets (one token per cluster): search each once.
    let mut distinct: Vec<&str> = all_secrets.iter().map(SecretValue::expose).collect();
    distinct.sort_unstable();
    distinct.dedup();
    for secret in distinct.into_iter().filter(|s| s.len() >= 4) {
        if contains(&out, secret.as_bytes()) {
            return Err(RedactError::Refused {
                what: "the redacted input".to_owned(),
                reason: Refusal::Leftover {
                    where_: "in the Secret text".to_owned(),
                },
            });
        }
    }
    Ok(out)
}

/// Redacts the Secrets of an input that `selector` picks, and writes only them: one object, or
/// several (YAML documents, or a JSON `List`). The whole input is redacted and checked first
/// (as [`redact`] does), so a Secret left out cannot make the ones written less safe.
///
/// ```
/// use rke2_payload::{DecodeOptions, Selector, redact_selected};
///
/// let two = b"kind: Secret
/// metadata: {name: a, namespace: capi}
/// stringData:
///   format: cloud-config
///   value: |
///     #cloud-config
///     write_files:
///     - path: /etc/rancher/rke2/config.yaml
///       content: |
///         token: s3cr3t-one
/// ---
/// kind: Secret
/// metadata: {name: b, namespace: capi}
/// stringData: {format: cloud-config, value: \"#cloud-config\\nruncmd: [reboot]\\n\"}
/// ";
/// let only_a = redact_selected(two, &DecodeOptions::default(), &Selector::default().with_name("capi/a")?)?;
/// let text = String::from_utf8(only_a)?;
/// assert!(text.contains("name: a") && !text.contains("name: b") && !text.contains("s3cr3t-one"));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// # Errors
/// As [`redact`]; [`Error::SecretNotFound`] (as [`RedactError::Input`]) when the selector picks
/// no Secret.
pub fn redact_selected(
    input: &[u8],
    options: &DecodeOptions,
    selector: &Selector,
) -> Result<Vec<u8>, RedactError> {
    let whole = redact(input, options)?;
    if selector.is_all() {
        return Ok(whole);
    }
    let envelope = Envelope::parse(&whole, options)?;
    let picked: Vec<usize> = envelope
        .secrets
        .iter()
        .filter(|s| selector.matches(s))
        .map(|s| s.id().index)
        .collect();
    if picked.is_empty() {
        return Err(Error::SecretNotFound {
            wanted: selector.to_string(),
            available: envelope.secrets.len(),
        }
        .into());
    }
    let objects = super::objects(&whole)?;
    let mut chosen: Vec<serde_json::Value> = picked
        .iter()
        .filter_map(|&i| objects.get(i).cloned())
        .collect();
    let json = envelope.syntax == Some(Syntax::Json);
    let write_error = |syntax, e: &dyn std::fmt::Display| Error::Write {
        syntax,
        message: crate::codec::text::scrub(&e.to_string()),
    };
    if json {
        let value = match chosen.len() {
            1 => chosen.remove(0),
            _ => serde_json::json!({"apiVersion": "v1", "kind": "List", "items": chosen}),
        };
        let mut out =
            serde_json::to_vec_pretty(&value).map_err(|e| write_error(Syntax::Json, &e))?;
        out.push(b'\n');
        return Ok(out);
    }
    let mut out = String::new();
    for (i, object) in chosen.iter().enumerate() {
        if i > 0 {
            out.push_str("---\n");
        }
        out.push_str(&serde_saphyr::to_string(object).map_err(|e| write_error(Syntax::Yaml, &e))?);
    }
    Ok(out.into_bytes())
}

/// The annotation `kubectl apply` writes with the whole object in it.
const LAST_APPLIED: &str = "kubectl.kubernetes.io/last-applied-configuration";

/// The redacted input with every `last-applied-configuration` annotation redacted inside: the
/// copy of a Secret's values takes the values the Secret itself now has (redacted payloads,
/// placeholders), public certificates stay; an annotation that is not a readable object becomes
/// the placeholder. The input is written again (as JSON, or YAML documents) to do it.
fn scrub_last_applied(text: &str, json: bool) -> Result<String, RedactError> {
    let what = "the last-applied-configuration annotation";
    let refuse = |why: String| RedactError::Refused {
        what: "the redacted input".to_owned(),
        reason: unreadable(what, why),
    };
    let mut docs: Vec<Value> = if json {
        vec![
            serde_json::from_str(text)
                .map_err(|e| refuse(crate::codec::text::scrub(&e.to_string())))?,
        ]
    } else {
        let mut options = serde_saphyr::Options::default();
        options.with_snippet = false;
        let docs: Vec<Option<Value>> = serde_saphyr::from_str_multiple_with_options(text, options)
            .map_err(|e| refuse(crate::codec::text::parser_message(&e.to_string())))?;
        docs.into_iter().flatten().collect()
    };
    for doc in &mut docs {
        scrub_objects(doc);
    }
    if json {
        let mut out = serde_json::to_string_pretty(&docs[0]).map_err(|e| refuse(e.to_string()))?;
        out.push('\n');
        return Ok(out);
    }
    let mut out = String::new();
    for (i, doc) in docs.iter().enumerate() {
        if i > 0 {
            out.push_str("---\n");
        }
        out.push_str(&serde_saphyr::to_string(doc).map_err(|e| refuse(e.to_string()))?);
    }
    Ok(out)
}

/// Redacts the annotation of `value` and of every object inside it (`List` items).
fn scrub_objects(value: &mut Value) {
    match value {
        Value::Array(items) => items.iter_mut().for_each(scrub_objects),
        Value::Object(map) => {
            let own: Value = Value::Object(map.clone());
            if let Some(annotation) = map
                .get_mut("metadata")
                .and_then(|m| m.get_mut("annotations"))
                .and_then(|a| a.get_mut(LAST_APPLIED))
            {
                let scrubbed = annotation
                    .as_str()
                    .and_then(|a| serde_json::from_str::<Value>(a).ok())
                    .filter(Value::is_object)
                    .and_then(|mut applied| {
                        scrub_applied(&mut applied, &own);
                        serde_json::to_string(&applied).ok()
                    });
                *annotation = Value::String(scrubbed.unwrap_or_else(|| PLACEHOLDER.to_owned()));
            }
            map.values_mut().for_each(scrub_objects);
        }
        _ => {}
    }
}

/// The copy of an object in its annotation: every value under `data` and `stringData` takes
/// the object's own (already redacted) value for that key, or the placeholder; public
/// certificates stay.
fn scrub_applied(applied: &mut Value, own: &Value) {
    let placeholder_b64 = b64::encode(PLACEHOLDER.as_bytes());
    for (section, fallback) in [
        ("data", placeholder_b64.as_str()),
        ("stringData", PLACEHOLDER),
    ] {
        let Some(Value::Object(values)) = applied.get_mut(section) else {
            continue;
        };
        for (key, value) in values.iter_mut() {
            if key.ends_with(".crt") {
                continue;
            }
            *value = own
                .get(section)
                .and_then(|d| d.get(key))
                .filter(|v| v.is_string())
                .cloned()
                .unwrap_or_else(|| Value::String(fallback.to_owned()));
        }
    }
}

/// Where a stored value is in `text` (start, end): its own place when it borrows from `text`,
/// else the first occurrence, else (base64 wrapped over lines, as in a block scalar) the first
/// run of text that holds its characters with only line breaks and indentation between them.
fn locate_stored(text: &str, part: &str) -> Option<(usize, usize)> {
    if part.is_empty() {
        return None;
    }
    if let Some(at) = locate(text, part) {
        return Some((at, at + part.len()));
    }
    let compact: Vec<u8> = part.bytes().filter(|b| !b.is_ascii_whitespace()).collect();
    let head = &compact[..compact.len().min(16)];
    let bytes = text.as_bytes();
    let mut from = 0;
    while let Some(i) = memchr::memmem::find(&bytes[from..], head) {
        let start = from + i;
        let (mut t, mut p) = (start, 0);
        while p < compact.len() && t < bytes.len() {
            if bytes[t] == compact[p] {
                p += 1;
                t += 1;
            } else if matches!(bytes[t], b'\n' | b'\r' | b' ' | b'\t') {
                t += 1;
            } else {
                break;
            }
        }
        if p == compact.len() {
            return Some((start, t));
        }
        from = start + 1;
    }
    None
}

/// Where `part` is in `text`: its own place when it borrows from `text` (as the parser's
/// strings do), else the first occurrence.
fn locate(text: &str, part: &str) -> Option<usize> {
    let base = text.as_ptr() as usize;
    let start = part.as_ptr() as usize;
    if start >= base && start + part.len() <= base + text.len() {
        return Some(start - base);
    }
    text.find(part)
}

fn wrap(secret: &BootstrapSecret<'_>, reason: Refusal) -> RedactError {
    RedactError::Refused {
        what: secret.id().to_string(),
        reason,
    }
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    !needle.is_empty() && memchr::memmem::find(haystack, needle).is_some()
}

/// Redacts one payload; returns the new `data.value` (same format and compression) and the
/// secret values that were replaced.
pub(crate) fn redact_payload(
    payload: &Payload<'_>,
) -> Result<(Vec<u8>, Vec<SecretValue>), Refusal> {
    let text = payload.userdata_text().ok_or(Refusal::NotText)?;
    let document = readable(payload)?;
    let secrets = collect_secrets(&document)?;
    let redactor = redactor(&secrets);
    let userdata = match payload.format() {
        Format::CloudConfig => redact_cloud_config(text, &document, &redactor)?,
        Format::Ignition => redact_ignition(text, &redactor)?,
    };
    let value = if userdata == text {
        payload.value().to_vec()
    } else {
        encode::compress(
            userdata.as_bytes(),
            payload.format(),
            payload.compression().is_gzip(),
        )
    };
    Ok((value, secrets))
}

fn redactor(secrets: &[SecretValue]) -> Redactor {
    let mut r = Redactor::with_placeholder(PLACEHOLDER);
    for s in secrets {
        r.add(s);
    }
    r
}

/// The payload's document, when every part that could hold a secret was read: a script or
/// MIME part, a document that does not parse, a key given twice, contents that do not decode, or
/// an Ignition config that merges or replaces itself with another is refused.
fn readable(payload: &Payload<'_>) -> Result<Document, Refusal> {
    if payload.content() == UserDataKind::OtherCloudInit {
        return Err(unreadable(
            "the user data",
            "it is a cloud-init script, include list or MIME part, which redact does not read",
        ));
    }
    let document =
        Document::parse(payload).map_err(|e| unreadable("the user data", e.to_string()))?;
    for problem in document.problems() {
        if problem.check == Check::CloudConfigDuplicateKey {
            return Err(unreadable("the cloud-config", problem.message.clone()));
        }
    }
    for file in document.files() {
        if let Content::Undecodable(why) = &file.content {
            return Err(unreadable(file.path.clone(), why.clone()));
        }
    }
    if let Document::Ignition(ignition) = &document
        && (ignition.nested || !ignition.config_sources.is_empty())
    {
        return Err(unreadable(
            "the Ignition config",
            "it merges or replaces itself with another config (ignition.config), which redact does not follow",
        ));
    }
    Ok(document)
}

/// Every secret value of a payload: config.yaml secrets, registry credentials, encryption keys.
fn collect_secrets(document: &Document) -> Result<Vec<SecretValue>, Refusal> {
    let mut out = Vec::new();
    for file in document.files() {
        out.extend(secrets::classify(&file.path, file.bytes()).values);
    }
    let config = match document.file(rke2::CONFIG_PATH) {
        None => None,
        Some(file) => {
            let text = file
                .text()
                .ok_or_else(|| unreadable(rke2::CONFIG_PATH, "not UTF-8 text"))?;
            Some(Rke2Config::parse(&text).map_err(|e| unreadable(rke2::CONFIG_PATH, e.message))?)
        }
    };
    if let Some(config) = config {
        for path in config.token_files() {
            if let Some(token) = document.file(path).and_then(|f| f.text()) {
                out.push(SecretValue::new(token.trim()));
            }
        }
        out.extend(config.token.clone());
        out.extend(config.agent_token.clone());
        if let Some(s3) = &config.etcd_s3 {
            out.extend(s3.access_key.clone());
            out.extend(s3.secret_key.clone());
        }
        if let Some(endpoint) = &config.datastore_endpoint
            && let Some(password) = userinfo_password(endpoint.expose())
        {
            out.push(SecretValue::new(password));
        }
    }
    // cloud-init's `chpasswd`: `list` lines and `users` entries of `name:password`.
    if let Document::CloudConfig(c) = document
        && let Some((_, chpasswd)) = c.other.iter().find(|(k, _)| k == "chpasswd")
    {
        let lines: Vec<String> = match chpasswd.get("list") {
            Some(Value::String(list)) => list.lines().map(str::to_owned).collect(),
            Some(Value::Array(items)) => items
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect(),
            _ => Vec::new(),
        };
        for line in lines {
            if let Some((_, password)) = line.split_once(':') {
                out.push(SecretValue::new(password.trim()));
            }
        }
        for user in chpasswd
            .get("users")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            if let Some(password) = user.get("password").and_then(Value::as_str) {
                out.push(SecretValue::new(password));
            }
        }
    }
    out.retain(|s| !s.is_empty() && s.expose() != PLACEHOLDER);
    Ok(out)
}

fn userinfo_password(url: &str) -> Option<String> {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    let (userinfo, _) = rest.rsplit_once('@')?;
    userinfo.split_once(':').map(|(_, p)| p.to_owned())
}

/// Replaces secret values and private key bodies in a text (YAML block scalars keep their
/// indentation).
pub(crate) fn redact_text(text: &str, redactor: &Redactor) -> String {
    without_key_bodies(&redactor.redact_all(text))
}

/// Private key bodies replaced (YAML block scalars keep their indentation).
fn without_key_bodies(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut in_key = false;
    let mut wrote_body = false;
    for line in text.split_inclusive('\n') {
        let trimmed = line.trim();
        if in_key {
            if trimmed.starts_with("-----END ") {
                in_key = false;
                out.push_str(line);
            } else if !wrote_body && !trimmed.is_empty() {
                let indent = &line[..line.len() - line.trim_start().len()];
                out.push_str(indent);
                out.push_str(PLACEHOLDER);
                out.push_str(&line[line.trim_end().len()..]);
                wrote_body = true;
            }
            continue;
        }
        if trimmed.starts_with("-----BEGIN ") && trimmed.contains("PRIVATE KEY-----") {
            in_key = true;
            wrote_body = false;
        }
        out.push_str(line);
    }
    out
}

fn redact_cloud_config(
    text: &str,
    document: &Document,
    redactor: &Redactor,
) -> Result<String, Refusal> {
    let mut out = redact_text(text, redactor);
    // Encoded write_files contents: decode, redact, encode again, swap the text. A key given
    // twice anywhere (one of the two would be read) is refused, as is a document that does not
    // parse: what cannot be read cannot be vouched for.
    let mut options = serde_saphyr::Options::default();
    options.with_snippet = false;
    options.ignore_binary_tag_for_string = true;
    let doc = match serde_saphyr::from_str_with_options::<Option<Value>>(text, options) {
        Ok(Some(doc)) => doc,
        Ok(None) => return Ok(out),
        // The invalid YAML CAPRKE2 writes for `airGappedChecksum` (an unquoted `runcmd` item) is
        // read by the tolerant pass, which found every file: without encoded contents to rewrite,
        // the text itself was redacted, and the result is checked like any other.
        Err(_) if repaired_without_encodings(document) => return Ok(out),
        Err(e) => {
            return Err(unreadable(
                "the cloud-config",
                crate::codec::text::parser_message(&e.to_string()),
            ));
        }
    };
    let Some(files) = doc.get("write_files").and_then(Value::as_array) else {
        return Ok(out);
    };
    for file in files {
        let Some(raw) = file.get("content").and_then(Value::as_str) else {
            continue;
        };
        let encoding = file
            .get("encoding")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_ascii_lowercase();
        let gz = encoding.starts_with("gz") || encoding == "application/x-gzip";
        let b64_encoded = encoding.contains("b64") || encoding.contains("base64");
        // A private key in a double-quoted scalar (`"-----BEGIN …\n…"`) is on one line of the
        // text, out of reach of the line-wise pass: the scalar is written again.
        if !(gz || b64_encoded) && has_private_key_body(raw) {
            let (Ok(old), Ok(new)) = (
                serde_json::to_string(raw),
                serde_json::to_string(&redact_text(raw, redactor)),
            ) else {
                continue;
            };
            if out.contains(&old) {
                out = out.replace(&old, &new);
            }
            continue;
        }
        // Plain contents were handled as text; an empty encoding may still be `!!binary`.
        if !(gz || b64_encoded || encoding.is_empty()) {
            continue;
        }
        let path = file
            .get("path")
            .and_then(Value::as_str)
            .unwrap_or("a write_files entry");
        let compact: String = raw.chars().filter(|c| !c.is_ascii_whitespace()).collect();
        let mut bytes = match b64::decode(&compact) {
            Ok(bytes) => bytes,
            // Not base64 and no encoding said: plain text, already redacted as such.
            Err(_) if encoding.is_empty() => continue,
            Err(why) => return Err(unreadable(path, why)),
        };
        if gz {
            bytes = gzip::inflate(&bytes, 16 << 20).map_err(|e| unreadable(path, e.to_string()))?;
        }
        let Ok(content) = std::str::from_utf8(&bytes) else {
            continue;
        };
        let redacted = redact_text(content, redactor);
        if redacted == content {
            continue;
        }
        let encoded = if gz {
            b64::encode(&gzip::deflate(redacted.as_bytes(), 9))
        } else {
            b64::encode(redacted.as_bytes())
        };
        out = out.replacen(raw.trim_end(), &encoded, 1);
    }
    Ok(out)
}

/// Whether the cloud-config was read only by repairing it, and writes no encoded file.
fn repaired_without_encodings(document: &Document) -> bool {
    match document {
        Document::CloudConfig(c) => {
            !c.repaired_lines.is_empty() && c.files.iter().all(|f| f.encoding.is_none())
        }
        Document::Ignition(_) => false,
    }
}

fn redact_ignition(text: &str, redactor: &Redactor) -> Result<String, Refusal> {
    let mut doc = serde_json::from_str::<Value>(text).map_err(|e| {
        unreadable(
            "the Ignition config",
            crate::codec::text::parser_message(&e.to_string()),
        )
    })?;
    let mut changed = false;
    if let Some(files) = doc
        .pointer_mut("/storage/files")
        .and_then(Value::as_array_mut)
    {
        for file in files {
            let path = file
                .get("path")
                .and_then(Value::as_str)
                .unwrap_or("a storage.files entry")
                .to_owned();
            let Some(contents) = file.get_mut("contents") else {
                continue;
            };
            let gz = contents.get("compression").and_then(Value::as_str) == Some("gzip");
            let Some(source) = contents.get("source").and_then(Value::as_str) else {
                continue;
            };
            let Ok(url) = dataurl::DataUrl::parse(source) else {
                // A remote source is never fetched: nothing of it is in the payload.
                continue;
            };
            let bytes = url
                .decode()
                .map_err(|e| unreadable(path.as_str(), e.to_string()))?;
            let bytes: Cow<'_, [u8]> = if gz {
                Cow::Owned(
                    gzip::inflate(&bytes, 16 << 20)
                        .map_err(|e| unreadable(path.as_str(), e.to_string()))?,
                )
            } else {
                bytes
            };
            let Ok(content) = std::str::from_utf8(&bytes) else {
                continue;
            };
            let redacted = redact_text(content, redactor);
            if redacted == content {
                continue;
            }
            let new_source = if gz {
                format!(
                    "data:;base64,{}",
                    b64::encode(&gzip::deflate(redacted.as_bytes(), 9))
                )
            } else if url.base64 {
                format!("data:;base64,{}", b64::encode(redacted.as_bytes()))
            } else {
                format!("data:,{}", dataurl::percent_encode(redacted.as_bytes()))
            };
            contents["source"] = Value::String(new_source);
            changed = true;
        }
    }
    // A user's password hash, whatever its length.
    if let Some(users) = doc
        .pointer_mut("/passwd/users")
        .and_then(Value::as_array_mut)
    {
        for user in users.iter_mut().filter_map(Value::as_object_mut) {
            if let Some(hash) = user.get_mut("passwordHash")
                && hash
                    .as_str()
                    .is_some_and(|h| !h.is_empty() && h != PLACEHOLDER)
            {
                *hash = Value::String(PLACEHOLDER.to_owned());
                changed = true;
            }
        }
    }
    // Units, users and anything else carried as text.
    let mut strings_changed = false;
    walk_strings(&mut doc, &mut |s: &mut String| {
        if s.starts_with("data:") {
            return;
        }
        let r = redact_text(s, redactor);
        if r != *s {
            *s = r;
            strings_changed = true;
        }
    });
    if !changed && !strings_changed {
        return Ok(text.to_owned());
    }
    serde_json::to_string(&doc).map_err(|e| unreadable("the Ignition config", e.to_string()))
}

fn walk_strings(value: &mut Value, f: &mut impl FnMut(&mut String)) {
    match value {
        Value::String(s) => f(s),
        Value::Array(items) => items.iter_mut().for_each(|v| walk_strings(v, f)),
        Value::Object(map) => map.values_mut().for_each(|v| walk_strings(v, f)),
        _ => {}
    }
}

/// Checks a redacted value: decoded, every file decoded, no secret value and no private key
/// body remains.
fn verify(value: &[u8], secrets: &[SecretValue], options: &DecodeOptions) -> Result<(), Refusal> {
    let payload = Payload::decode(
        Cow::Borrowed(value),
        crate::payload::DeclaredFormat::Missing,
        options,
    )
    .map_err(|_| Refusal::Leftover {
        where_: "the redacted payload does not decode".to_owned(),
    })?;
    let mut texts: Vec<(String, Vec<u8>)> =
        vec![("user data".to_owned(), payload.userdata().to_vec())];
    // What redact wrote must read again, or its files cannot be checked.
    let document = Document::parse(&payload).map_err(|_| Refusal::Leftover {
        where_: "the redacted user data does not read as its format".to_owned(),
    })?;
    for file in document.files() {
        if let Some(bytes) = file.bytes() {
            texts.push((file.path.clone(), bytes.to_vec()));
        }
    }
    // Each command as the shell gets it (its text unescaped from the YAML or JSON string).
    for command in document.commands() {
        texts.push(("a command".to_owned(), command.line.clone().into_bytes()));
    }
    for (where_, bytes) in &texts {
        for secret in secrets {
            if secret.expose().len() >= 4 && contains(bytes, secret.expose().as_bytes()) {
                return Err(Refusal::Leftover {
                    where_: where_.clone(),
                });
            }
        }
        let text = String::from_utf8_lossy(bytes);
        if !secrets::credential_spans(&text).is_empty() {
            return Err(Refusal::Leftover {
                where_: format!("a credential in {where_}"),
            });
        }
        if has_private_key_body(&text) {
            return Err(Refusal::Leftover {
                where_: format!("a private key in {where_}"),
            });
        }
    }
    Ok(())
}

fn has_private_key_body(text: &str) -> bool {
    // A key on one line (a double-quoted scalar, `\n` escapes): between its BEGIN and END
    // markers only the placeholder may stand.
    let mut rest = text;
    while let Some(i) = rest.find("-----BEGIN ") {
        let label_and_rest = &rest[i + "-----BEGIN ".len()..];
        let Some(label_end) = label_and_rest.find("-----") else {
            break;
        };
        let after = &label_and_rest[label_end + "-----".len()..];
        rest = after;
        if !label_and_rest[..label_end].ends_with("PRIVATE KEY") {
            continue;
        }
        let body = after.find("-----END").map_or(after, |end| &after[..end]);
        let body: String = body
            .replace("\\n", "\n")
            .replace("\\r", "")
            .chars()
            .filter(|c| !c.is_whitespace() && *c != '"' && *c != '\'')
            .collect();
        if !body.is_empty() && body != PLACEHOLDER {
            return true;
        }
    }
    let mut in_key = false;
    for line in text.lines() {
        let t = line.trim();
        if t.starts_with("-----BEGIN ") && t.contains("PRIVATE KEY-----") {
            in_key = true;
        } else if t.starts_with("-----END ") {
            in_key = false;
        } else if in_key && !t.is_empty() && t != PLACEHOLDER {
            return true;
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_redaction_keeps_indentation() {
        let mut r = Redactor::with_placeholder(PLACEHOLDER);
        r.add(&SecretValue::new("tok3nvalue"));
        let text = "    content: |\n      token: tok3nvalue\n      -----BEGIN RSA PRIVATE KEY-----\n      MIIEow\n      AAAA\n      -----END RSA PRIVATE KEY-----\n";
        let out = redact_text(text, &r);
        assert_eq!(
            out,
            "    content: |\n      token: REDACTED\n      -----BEGIN RSA PRIVATE KEY-----\n      REDACTED\n      -----END RSA PRIVATE KEY-----\n"
        );
        assert!(!has_private_key_body(&out));
        assert!(has_private_key_body(text));
    }

    #[test]
    fn datastore_password() {
        assert_eq!(
            userinfo_password("postgres://u:p4ss@db/x").as_deref(),
            Some("p4ss")
        );
        assert_eq!(userinfo_password("https://db/x"), None);
    }
}
