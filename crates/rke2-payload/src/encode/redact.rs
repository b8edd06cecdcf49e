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

use crate::codec::{b64, dataurl, gzip};
use crate::document::Document;
use crate::encode;
use crate::envelope::{BootstrapSecret, Envelope};
use crate::error::{Error, Syntax};
use crate::facts::rke2::{self, Rke2Config};
use crate::options::DecodeOptions;
use crate::payload::{Format, Payload};
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
    for secret in &envelope.secrets {
        let payload = secret.decode(options)?;
        let (value, secrets) = redact_payload(&payload).map_err(|e| wrap(secret, e))?;
        match secret.stored_base64() {
            Some(old) => {
                if let Some(at) = locate(text, old) {
                    edits.push((at, at + old.len(), b64::encode(&value)));
                }
            }
            // stringData: the user data is in the input as text.
            None => plain_secrets.extend(secrets.iter().cloned()),
        }
        all_secrets.extend(secrets);
    }
    let placeholder = b64::encode(PLACEHOLDER.as_bytes());
    for value in envelope.skipped_sensitive.iter().filter(|v| v.len() >= 4) {
        if let Some(at) = locate(text, value) {
            edits.push((at, at + value.len(), placeholder.clone()));
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
    if !plain_secrets.is_empty() {
        out = redact_text(&out, &redactor(&plain_secrets));
    }
    let out = out.into_bytes();
    // Check the result as a whole: decoded again, nothing secret is left.
    let check = Envelope::parse(&out, options)?;
    for secret in &check.secrets {
        let payload = secret.decode(options)?;
        verify(payload.value(), &all_secrets, options).map_err(|e| wrap(secret, e))?;
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
    let secrets = collect_secrets(payload);
    let redactor = redactor(&secrets);
    let userdata = match payload.format() {
        Format::CloudConfig => redact_cloud_config(text, &redactor),
        Format::Ignition => redact_ignition(text, &redactor),
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

/// Every secret value of a payload: config.yaml secrets, registry credentials, encryption keys.
fn collect_secrets(payload: &Payload<'_>) -> Vec<SecretValue> {
    let Ok(document) = Document::parse(payload) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for file in document.files() {
        out.extend(secrets::classify(&file.path, file.bytes()).values);
    }
    if let Some(config) = document
        .file(rke2::CONFIG_PATH)
        .and_then(|f| f.text())
        .and_then(|t| Rke2Config::parse(&t).ok())
    {
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
    out.retain(|s| !s.is_empty() && s.expose() != PLACEHOLDER);
    out
}

fn userinfo_password(url: &str) -> Option<String> {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    let (userinfo, _) = rest.rsplit_once('@')?;
    userinfo.split_once(':').map(|(_, p)| p.to_owned())
}

/// Replaces secret values and private key bodies in a text (YAML block scalars keep their
/// indentation).
pub(crate) fn redact_text(text: &str, redactor: &Redactor) -> String {
    let text = redactor.redact(text);
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

fn redact_cloud_config(text: &str, redactor: &Redactor) -> String {
    let mut out = redact_text(text, redactor);
    // Encoded write_files contents: decode, redact, encode again, swap the text.
    let mut options = serde_saphyr::Options::default();
    options.with_snippet = false;
    options.ignore_binary_tag_for_string = true;
    options.duplicate_keys = serde_saphyr::DuplicateKeyPolicy::LastWins;
    let Ok(Some(doc)) = serde_saphyr::from_str_with_options::<Option<Value>>(text, options) else {
        return out;
    };
    let Some(files) = doc.get("write_files").and_then(Value::as_array) else {
        return out;
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
        // Plain contents were handled as text; an empty encoding may still be `!!binary`.
        if !(gz || b64_encoded || encoding.is_empty()) {
            continue;
        }
        let compact: String = raw.chars().filter(|c| !c.is_ascii_whitespace()).collect();
        let Ok(mut bytes) = b64::decode(&compact) else {
            continue;
        };
        if gz {
            match gzip::inflate(&bytes, 16 << 20) {
                Ok(b) => bytes = b,
                Err(_) => continue,
            }
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
    out
}

fn redact_ignition(text: &str, redactor: &Redactor) -> String {
    let Ok(mut doc) = serde_json::from_str::<Value>(text) else {
        return redact_text(text, redactor);
    };
    let mut changed = false;
    if let Some(files) = doc
        .pointer_mut("/storage/files")
        .and_then(Value::as_array_mut)
    {
        for file in files {
            let Some(contents) = file.get_mut("contents") else {
                continue;
            };
            let gz = contents.get("compression").and_then(Value::as_str) == Some("gzip");
            let Some(source) = contents.get("source").and_then(Value::as_str) else {
                continue;
            };
            let Ok(url) = dataurl::DataUrl::parse(source) else {
                continue;
            };
            let Ok(bytes) = url.decode() else { continue };
            let bytes: Cow<'_, [u8]> = if gz {
                match gzip::inflate(&bytes, 16 << 20) {
                    Ok(b) => Cow::Owned(b),
                    Err(_) => continue,
                }
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
        return text.to_owned();
    }
    serde_json::to_string(&doc).unwrap_or_else(|_| redact_text(text, redactor))
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
    if let Ok(document) = Document::parse(&payload) {
        for file in document.files() {
            if let Some(bytes) = file.bytes() {
                texts.push((file.path.clone(), bytes.to_vec()));
            }
        }
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
        if has_private_key_body(&text) {
            return Err(Refusal::Leftover {
                where_: format!("a private key in {where_}"),
            });
        }
    }
    Ok(())
}

fn has_private_key_body(text: &str) -> bool {
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
