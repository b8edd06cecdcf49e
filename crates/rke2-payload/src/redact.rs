//! `redact`: the same Secrets with every secret value replaced by a visible placeholder, in the
//! same format and compression, still decodable and inspectable.
//!
//! What is secret is decided on the parsed document, through every layer
//! ([`crate::sensitive::mask`]: allow-lists where the structure is known, the detector on free
//! text, every known secret wherever it reappears), and written back in place. In the envelope:
//! a bootstrap Secret's `value` (in `data` and in `stringData`) is the payload; every other value
//! of a Secret or ConfigMap is masked unless it is a certificate without a private key; an
//! annotation that holds a copy of an object (kubectl's `last-applied-configuration`, or any
//! other JSON or YAML collection) is masked whole.
//!
//! The result is then checked by a reader of its own ([`check`]): the output decoded again
//! through every layer by the ordinary parsers, compared with the input value by value (the
//! same documents, keys, list lengths and types; every value equal, or the input's with parts
//! replaced by the placeholder), and searched for every secret value the masking found and for
//! any 12-character window of one. Either failing refuses: nothing is written.
//!
//! A `List` as kubectl writes it (YAML or JSON) is masked and checked one item at a time
//! ([`list`], [`check`]), so that memory holds the input, the output and one item's trees, not
//! a tree of the whole List on each side; the result is the whole reading's, byte for byte and
//! refusal for refusal (whatever could differ is read whole).

mod list;
mod options;
mod verify;

pub use options::RedactOptions;

use std::collections::HashSet;

use crate::codec::text::terminal_safe;
use crate::codec::tree::{self, Node};
use crate::codec::{b64, gzip};
use crate::document::Document;
use crate::envelope::{Envelope, Selector};
use crate::error::{Error, Syntax};
use crate::payload::{Payload, UserDataKind};
use crate::sensitive::PLACEHOLDER;
use crate::sensitive::mask::{self, Change, Known, MaskError, Masker};

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
    /// What redaction wrote differs from the input in more than its secrets.
    #[error(
        "the redacted output differs from the input at {where_} in more than a secret; refusing to write it"
    )]
    Changed {
        /// Where (a path of keys and indices, never a value).
        where_: String,
    },
}

fn unreadable(part: impl Into<String>, why: impl Into<String>) -> Refusal {
    Refusal::Unreadable {
        part: part.into(),
        why: why.into(),
    }
}

impl From<MaskError> for Refusal {
    fn from(e: MaskError) -> Self {
        unreadable(terminal_safe(&e.part).into_owned(), e.why)
    }
}

fn refused(what: impl Into<String>, reason: Refusal) -> RedactError {
    RedactError::Refused {
        what: what.into(),
        reason,
    }
}

/// Redacts a whole input (one Secret, a List, several documents, or bare user data).
///
/// # Errors
/// [`RedactError::Input`] when the input does not read; [`RedactError::Refused`] when a part
/// that could hold a secret cannot be read, or when the check of the result finds a secret or a
/// change beyond the secrets.
pub fn redact(input: &[u8], options: &RedactOptions) -> Result<Vec<u8>, RedactError> {
    if let Some(values) = json_sequence(input) {
        return redact_sequence(input, &values, options);
    }
    redact_with(input, options, true)
}

/// Where each top-level value of a JSON sequence stands (objects one after another, as
/// `jq -c` and `kubectl get -w -o json` write them): `None` for anything but two or more
/// JSON objects.
fn json_sequence(input: &[u8]) -> Option<Vec<std::ops::Range<usize>>> {
    let text = std::str::from_utf8(input).ok()?;
    let text_start = text.len() - text.trim_start().len();
    if !crate::envelope::looks_like_json(&text.as_bytes()[text_start..]) {
        return None;
    }
    let mut values = serde_json::Deserializer::from_str(text).into_iter::<serde::de::IgnoredAny>();
    let mut ranges = Vec::new();
    let mut start = text_start;
    while let Some(value) = values.next() {
        value.ok()?;
        let end = values.byte_offset();
        let from = start + (text[start..end].len() - text[start..end].trim_start().len());
        if !text[from..end].starts_with('{') {
            return None;
        }
        ranges.push(from..end);
        start = end;
    }
    (ranges.len() > 1).then_some(ranges)
}

/// Redacts a JSON sequence as one `List` of its objects, the items of a `List` among them
/// taken one by one (so each is masked and checked as a List's item is), and writes each
/// object back where it stood: the text around and between them stays as it was.
fn redact_sequence(
    input: &[u8],
    values: &[std::ops::Range<usize>],
    options: &RedactOptions,
) -> Result<Vec<u8>, RedactError> {
    let mut pieces: Vec<std::ops::Range<usize>> = Vec::new();
    for value in values {
        let text = std::str::from_utf8(&input[value.clone()]).unwrap_or_default();
        match crate::envelope::cut::list_items(text) {
            Some(items) => pieces.extend(
                items
                    .ranges
                    .iter()
                    .map(|r| value.start + r.start..value.start + r.end),
            ),
            None => pieces.push(value.clone()),
        }
    }
    let mut list = Vec::with_capacity(input.len() + 64);
    list.extend_from_slice(br#"{"apiVersion":"v1","kind":"List","items":["#);
    for (i, piece) in pieces.iter().enumerate() {
        if i > 0 {
            list.push(b',');
        }
        list.extend_from_slice(&input[piece.clone()]);
    }
    list.extend_from_slice(b"]}");
    let redacted = redact_with(&list, options, true)?;
    let text = std::str::from_utf8(&redacted).map_err(|_| unreadable_output())?;
    let items = crate::envelope::cut::list_items(text)
        .filter(|items| items.ranges.len() == pieces.len())
        .ok_or_else(unreadable_output)?;
    let mut out = Vec::with_capacity(redacted.len());
    let mut last = 0;
    for (piece, item) in pieces.iter().zip(&items.ranges) {
        out.extend_from_slice(&input[last..piece.start]);
        out.extend_from_slice(&redacted[item.clone()]);
        last = piece.end;
    }
    out.extend_from_slice(&input[last..]);
    Ok(out)
}

/// The redacted `List` of a sequence's objects does not cut back into them: nothing is
/// written.
fn unreadable_output() -> RedactError {
    refused(
        "the JSON sequence",
        unreadable("the redacted objects", "they do not read back one by one"),
    )
}

/// [`redact`], a `List` read item by item when `by_item` and it can be (the tests compare the
/// two readings).
fn redact_with(
    input: &[u8],
    redact_options: &RedactOptions,
    by_item: bool,
) -> Result<Vec<u8>, RedactError> {
    let options = &redact_options.decode;
    let strict = redact_options.strict;
    let envelope = Envelope::parse(input, options)?;
    if let [only] = envelope.secrets.as_slice()
        && only.is_bare()
    {
        let what = only.id().to_string();
        readable(&only.decode(options)?).map_err(|r| refused(what.clone(), r))?;
        let (out, known) = payload(input, strict).map_err(|r| refused(what.clone(), r))?;
        verify::output(input, &out, &known, options, true).map_err(|r| refused(what, r))?;
        return Ok(out);
    }
    // Every Secret must decode, as for any other command, and its document read as its format
    // says (an Ignition config with a field the spec does not have is not guessed at).
    for secret in &envelope.secrets {
        readable(&secret.decode(options)?).map_err(|r| refused(secret.id().to_string(), r))?;
    }
    // Which objects are bootstrap Secrets is the envelope reader's decision (a plan Secret, or
    // the `<cluster>-token` Secret's `value`, is not user data).
    let bootstrap: HashSet<(String, String)> = envelope
        .secrets
        .iter()
        .map(|s| {
            (
                s.namespace().unwrap_or("").to_owned(),
                s.name().unwrap_or("").to_owned(),
            )
        })
        .collect();
    drop(envelope);
    let text = std::str::from_utf8(input).map_err(|e| Error::Syntax {
        syntax: Syntax::Yaml,
        message: format!("invalid UTF-8 at byte {}", e.valid_up_to()),
        at: None,
    })?;
    // A List in kubectl's shape, one item at a time (the List's tree is never held whole),
    // when that writes what the whole text's reading writes; else the whole text.
    let fresh = || {
        let mut objects = Objects {
            bootstrap: bootstrap.clone(),
            strict,
            ..Objects::default()
        };
        objects.masker.strict = strict;
        objects
    };
    let item_by_item = by_item
        .then(|| crate::envelope::cut::list_items(text))
        .flatten()
        .and_then(|items| list::mask(text, &items, fresh()));
    let read_by_item = item_by_item.is_some();
    let (out, mut objects) = match item_by_item {
        Some(masked) => masked,
        None => whole(text, fresh())?,
    };
    // Comments of the objects too, with what every object hides.
    let masker_known = std::mem::take(&mut objects.masker.known);
    objects.known.extend(&masker_known);
    let mut comments = Masker::knowing(objects.known.clone());
    comments.strict = strict;
    let out = comments.mask_comments(out);
    let checked = if read_by_item {
        verify::output_list(text, &out, &objects.known, options)
    } else {
        verify::output(input, out.as_bytes(), &objects.known, options, false)
    };
    checked.map_err(|r| refused("the redacted input", r))?;
    Ok(out.into_bytes())
}

/// The objects of a whole text masked: the text written again, and what the masking found.
fn whole(text: &str, mut objects: Objects) -> Result<(String, Objects), RedactError> {
    let docs = tree::parse(text).map_err(|e| {
        refused(
            "the input",
            unreadable("the input", format!("{} at line {}", e.message, e.line)),
        )
    })?;
    for doc in &docs {
        objects.document(doc)?;
    }
    let changes = std::mem::take(&mut objects.changes);
    let out = if changes.is_empty() {
        text.to_owned()
    } else {
        mask::write(text, &docs, changes).ok_or_else(|| {
            refused(
                "the input",
                unreadable(
                    "the input",
                    "it could not be written again with its secrets masked",
                ),
            )
        })?
    };
    Ok((out, objects))
}

/// Refuses a payload whose document does not read as its format (a script or MIME part is
/// left to the masking, which reads a script as text and refuses the rest).
fn readable(payload: &Payload<'_>) -> Result<(), Refusal> {
    if payload.content() == UserDataKind::OtherCloudInit {
        return Ok(());
    }
    Document::parse(payload)
        .map(drop)
        .map_err(|e| unreadable("the user data", e.to_string()))
}

/// A payload's stored bytes masked (gzip undone and done again), and what was masked.
fn payload(value: &[u8], strict: bool) -> Result<(Vec<u8>, Known), Refusal> {
    if gzip::is_gzip(value) {
        let inner = gzip::inflate(value, 64 << 20)
            .map_err(|e| unreadable("the user data", e.to_string()))?;
        let (out, known) = payload(&inner, strict)?;
        if out == inner {
            return Ok((value.to_vec(), known));
        }
        return Ok((gzip::deflate(&out, 6), known));
    }
    let text = std::str::from_utf8(value).map_err(|_| Refusal::NotText)?;
    let masked = mask::userdata(text, &Known::default(), strict)?;
    Ok((masked.text.into_bytes(), masked.known))
}

/// The masking of the objects of an input: every change and every secret found.
#[derive(Default)]
struct Objects {
    /// The namespace and name of each bootstrap Secret.
    bootstrap: HashSet<(String, String)>,
    masker: Masker,
    known: Known,
    changes: Vec<Change>,
    index: usize,
    /// Free text masked whole.
    strict: bool,
}

impl Objects {
    fn document(&mut self, doc: &Node) -> Result<(), RedactError> {
        // A List, or what kubectl reads as one: `items` and no other kind.
        let kind = doc.get("kind").and_then(Node::as_str).unwrap_or("");
        if (kind.ends_with("List") || kind.is_empty())
            && let Some(Node::Seq(items)) = doc.get("items")
        {
            for item in items {
                self.object(item)?;
            }
            // The List's own fields (metadata) as any structure.
            return Ok(());
        }
        self.object(doc)
    }

    fn object(&mut self, object: &Node) -> Result<(), RedactError> {
        let index = self.index;
        self.index += 1;
        let Node::Map(entries) = object else {
            if matches!(object, Node::Scalar { value, .. } if value.is_empty()) {
                return Ok(());
            }
            self.masker.generic(object, &mut self.changes);
            return Ok(());
        };
        let kind = object.get("kind").and_then(Node::as_str).unwrap_or("");
        let name = object
            .get("metadata")
            .and_then(|m| m.get("name"))
            .and_then(Node::as_str)
            .unwrap_or("");
        let what = if name.is_empty() {
            format!("object #{}", index + 1)
        } else {
            format!(
                "{} {}",
                if kind.is_empty() { "object" } else { kind },
                terminal_safe(name)
            )
        };
        let values = matches!(kind, "Secret" | "ConfigMap");
        let namespace = object
            .get("metadata")
            .and_then(|m| m.get("namespace"))
            .and_then(Node::as_str)
            .unwrap_or("");
        let bootstrap = kind == "Secret"
            && (self
                .bootstrap
                .contains(&(namespace.to_owned(), name.to_owned()))
                || self.bootstrap.contains(&(String::new(), name.to_owned())))
            && ["data", "stringData"]
                .iter()
                .any(|s| object.get(s).and_then(|d| d.get("value")).is_some());
        // What this object's values hide is searched for in the rest of it (its metadata):
        // its values first, with what this object alone found.
        self.known.extend(&std::mem::take(&mut self.masker.known));
        let is_values = |k: &Node| matches!(k.as_str(), Some("data" | "stringData" | "binaryData"));
        let values_first = entries
            .iter()
            .filter(|(k, _)| is_values(k))
            .chain(entries.iter().filter(|(k, _)| !is_values(k)));
        for (k, v) in values_first {
            match k.as_str().unwrap_or("") {
                "metadata" => self.metadata(v),
                section @ ("data" | "stringData" | "binaryData") if values => {
                    let Node::Map(fields) = v else {
                        self.masker.mask_all(v, &mut self.changes);
                        continue;
                    };
                    // A Secret's `data` and a ConfigMap's `binaryData` are base64.
                    let encoded = if kind == "Secret" {
                        section != "stringData"
                    } else {
                        section == "binaryData"
                    };
                    for (key, value) in fields {
                        let key = key.as_str().unwrap_or("");
                        if bootstrap && key == "value" {
                            self.bootstrap_value(value, encoded, &what)?;
                        } else if bootstrap && key == "format" {
                            self.format(value, encoded);
                        } else {
                            self.other_value(key, value, encoded);
                        }
                    }
                }
                "apiVersion" | "kind" | "type" | "immutable" => {}
                _ => self.masker.generic(v, &mut self.changes),
            }
        }
        Ok(())
    }

    /// Labels stay (selectors read them); an annotation holding a copy of an object is masked
    /// whole; the rest as any structure.
    fn metadata(&mut self, node: &Node) {
        let Node::Map(entries) = node else {
            return self.masker.generic(node, &mut self.changes);
        };
        for (k, v) in entries {
            match (k.as_str().unwrap_or(""), v) {
                ("annotations", Node::Map(annotations)) => {
                    for (name, value) in annotations {
                        let name = name.as_str().unwrap_or("");
                        let copy = value.as_str().is_some_and(|s| {
                            matches!(
                                tree::parse(s).as_deref(),
                                Ok([Node::Map(_) | Node::Seq(_), ..])
                            )
                        }) && name != crate::envelope::FINDINGS_ANNOTATION;
                        if copy || mask::secret_key(name) {
                            self.masker.mask_all(value, &mut self.changes);
                        } else {
                            self.masker.generic(value, &mut self.changes);
                        }
                    }
                }
                (
                    "name" | "namespace" | "labels" | "uid" | "resourceVersion"
                    | "creationTimestamp" | "generation" | "ownerReferences" | "managedFields"
                    | "finalizers",
                    _,
                ) => {}
                _ => self.masker.generic(v, &mut self.changes),
            }
        }
    }

    /// The payload of a bootstrap Secret: decoded, masked, encoded again.
    fn bootstrap_value(
        &mut self,
        node: &Node,
        encoded: bool,
        what: &str,
    ) -> Result<(), RedactError> {
        let Some(value) = node.as_str() else {
            self.masker.mask_all(node, &mut self.changes);
            return Ok(());
        };
        let bytes = if encoded {
            let compact: String = value.chars().filter(|c| !c.is_ascii_whitespace()).collect();
            b64::decode(&compact).map_err(|e| refused(what, unreadable("the value", e)))?
        } else {
            value.as_bytes().to_vec()
        };
        let (new, known) = payload(&bytes, self.strict).map_err(|r| refused(what, r))?;
        self.known.extend(&known);
        self.masker.known.extend(&known);
        if new != bytes {
            let text = if encoded {
                b64::encode(&new)
            } else {
                String::from_utf8(new).map_err(|_| refused(what, Refusal::NotText))?
            };
            self.masker.set(node, text, &mut self.changes);
        }
        Ok(())
    }

    /// The `format` key: one of the two formats stays; anything else is masked (it is read
    /// as nothing the tool knows, and could be anything).
    fn format(&mut self, node: &Node, encoded: bool) {
        let value = node.as_str().unwrap_or("");
        let decoded = if encoded {
            b64::decode(value.trim())
                .ok()
                .and_then(|b| String::from_utf8(b).ok())
        } else {
            Some(value.to_owned())
        };
        if !matches!(
            decoded.as_deref().map(str::trim),
            Some("cloud-config" | "ignition")
        ) {
            self.other_value("format", node, encoded);
        }
    }

    /// Any other value of a Secret or ConfigMap: a certificate without a private key stays,
    /// everything else is the placeholder.
    fn other_value(&mut self, key: &str, node: &Node, encoded: bool) {
        let Some(value) = node.as_str() else {
            return self.masker.mask_all(node, &mut self.changes);
        };
        let decoded = if encoded {
            let compact: String = value.chars().filter(|c| !c.is_ascii_whitespace()).collect();
            b64::decode(&compact).ok()
        } else {
            Some(value.as_bytes().to_vec())
        };
        let public_certificate = decoded.as_deref().is_some_and(|d| {
            let text = String::from_utf8_lossy(d);
            text.contains("-----BEGIN CERTIFICATE-----")
                && !text.contains("PRIVATE")
                && text
                    .split("-----BEGIN ")
                    .skip(1)
                    .all(|block| block.starts_with("CERTIFICATE-----"))
        });
        if public_certificate || value.is_empty() {
            return;
        }
        // Searched for elsewhere only when it looks like a credential (one word, under a key
        // that says secret or random-looking): a document's text, or a word such as
        // `cloud-config` or `production`, would match ordinary text.
        if let Some(d) = &decoded
            && let Ok(t) = std::str::from_utf8(d)
            && t.trim().len() <= 128
            && !t.trim().contains(char::is_whitespace)
            && !t.trim().starts_with(['{', '['])
            && (mask::secret_key(key) || mask::text::looks_random(t.trim()))
        {
            self.known.add(t);
            self.masker.known.add(t);
        }
        let placeholder = if encoded {
            b64::encode(PLACEHOLDER.as_bytes())
        } else {
            PLACEHOLDER.to_owned()
        };
        self.masker.set(node, placeholder, &mut self.changes);
    }
}

/// Redacts the Secrets of an input that `selector` picks, and writes only them: one object, or
/// several (YAML documents, or a JSON `List`). The whole input is redacted and checked first
/// (as [`redact`] does), so a Secret left out cannot make the ones written less safe.
///
/// ```
/// use rke2_payload::{RedactOptions, Selector, redact_selected};
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
/// let only_a = redact_selected(two, &RedactOptions::new(), &Selector::default().with_name("capi/a")?)?;
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
    redact_options: &RedactOptions,
    selector: &Selector,
) -> Result<Vec<u8>, RedactError> {
    let whole = redact(input, redact_options)?;
    let options = &redact_options.decode;
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
    let objects = crate::envelope::objects(&whole)?;
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

#[cfg(test)]
mod tests;
