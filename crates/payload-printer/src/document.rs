//! The report documents of `inspect` and `size`, written item by item as the Secrets are
//! read, and the JSON and YAML writing every document shares.
//!
//! A document is one of three [`Layout`]s:
//!
//! - [`Layout::Json`]: `{"schema":"…","secrets":[` then one compact JSON object per Secret, a
//!   line each, separated by `,`, then `]` and the document's other fields, then `}` and a line
//!   break;
//! - [`Layout::Yaml`]: the same document in block YAML (`schema: …`, `secrets:` and one
//!   sequence entry per Secret, then the other fields, one a line);
//! - [`Layout::Text`]: the text blocks of the Secrets, separated by a blank line (the text
//!   printers of [`crate::inspect`] and [`crate::size`] write each block).
//!
//! JSON and YAML never hold a control, bidi or invisible character: inside strings they are
//! written as `\uXXXX` escapes, which mean the same character ([`escape_unsafe`]).

use std::borrow::Cow;
use std::io::Write;

use rke2_payload::{BootstrapSecret, ItemError, SkippedSecret};

use crate::Result;
use crate::style::{ERROR, safe};

/// How a report document is laid out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layout {
    /// Text blocks for people, separated by a blank line.
    Text,
    /// One JSON document: `{"schema": …, "secrets": [items…], …}`.
    Json,
    /// The same document as YAML.
    Yaml,
}

/// Writes the `secrets` of a report document item by item, in input order, as they come.
/// The document's head is written with the first item (or at the end), so that an input that
/// cannot be read leaves nothing half-written.
///
/// ```
/// use payload_printer::document::{Items, Layout};
///
/// let mut out = Vec::new();
/// let mut items = Items::new(Layout::Json, "rke2-payload/size/v1");
/// items.item(&mut out, br#"{"name":"w-1","fits":true}"#)?;
/// items.item(&mut out, br#"{"name":"w-2","fits":true}"#)?;
/// items.finish(&mut out, &[("fits", "true".to_owned())])?;
/// assert_eq!(
///     String::from_utf8(out).unwrap(),
///     "{\"schema\":\"rke2-payload/size/v1\",\"secrets\":[\n{\"name\":\"w-1\",\"fits\":true},\n{\"name\":\"w-2\",\"fits\":true}\n],\"fits\":true}\n"
/// );
///
/// let mut out = Vec::new();
/// let mut items = Items::new(Layout::Yaml, "rke2-payload/size/v1");
/// items.item(&mut out, br#"{"name":"w-1"}"#)?;
/// items.finish(&mut out, &[("fits", "true".to_owned())])?;
/// assert_eq!(
///     String::from_utf8(out).unwrap(),
///     "schema: rke2-payload/size/v1\nsecrets:\n- name: w-1\nfits: true\n"
/// );
/// # Ok::<(), payload_printer::Error>(())
/// ```
#[derive(Debug)]
pub struct Items {
    layout: Layout,
    schema: &'static str,
    written: usize,
}

impl Items {
    /// A document of `layout` whose `schema` field is `schema` (unused for text).
    pub fn new(layout: Layout, schema: &'static str) -> Self {
        Items {
            layout,
            schema,
            written: 0,
        }
    }

    /// The layout of the document.
    pub fn layout(&self) -> Layout {
        self.layout
    }

    fn head(&self, out: &mut impl Write) -> std::io::Result<()> {
        match self.layout {
            Layout::Json => write!(out, "{{\"schema\":\"{}\",\"secrets\":[", self.schema),
            Layout::Yaml => write!(out, "schema: {}\nsecrets:", self.schema),
            Layout::Text => Ok(()),
        }
    }

    /// One item: a text block, or a Secret's compact JSON object (for both JSON and YAML: the
    /// YAML entry is written from it).
    pub fn item(&mut self, out: &mut impl Write, rendered: &[u8]) -> Result<()> {
        match (self.layout, self.written) {
            (Layout::Text, 0) => {}
            (Layout::Text, _) => out.write_all(b"\n")?,
            (_, 0) => {
                self.head(out)?;
                out.write_all(b"\n")?;
            }
            (Layout::Json, _) => out.write_all(b",\n")?,
            (Layout::Yaml, _) => {}
        }
        match self.layout {
            Layout::Text => out.write_all(rendered)?,
            Layout::Json => out.write_all(&escape_unsafe(rendered))?,
            Layout::Yaml => out.write_all(yaml_item(rendered)?.as_bytes())?,
        }
        self.written += 1;
        Ok(())
    }

    /// Closes the document with its other fields (values as JSON literals: numbers, booleans,
    /// [`skipped_other_providers`]'s list, which YAML reads as flow YAML). Text has none: a text
    /// document ends with its last block.
    pub fn finish(self, out: &mut impl Write, fields: &[(&str, String)]) -> Result<()> {
        match self.layout {
            Layout::Text => {}
            Layout::Json => {
                if self.written == 0 {
                    self.head(out)?;
                }
                out.write_all(b"\n]")?;
                for (key, value) in fields {
                    write!(out, ",\"{key}\":")?;
                    out.write_all(&escape_unsafe(value.as_bytes()))?;
                }
                out.write_all(b"}\n")?;
            }
            Layout::Yaml => {
                if self.written == 0 {
                    self.head(out)?;
                    out.write_all(b" []\n")?;
                }
                for (key, value) in fields {
                    write!(out, "{key}: ")?;
                    out.write_all(&escape_unsafe(value.as_bytes()))?;
                    writeln!(out)?;
                }
            }
        }
        Ok(())
    }
}

/// One compact JSON item as an entry of a YAML sequence.
fn yaml_item(json: &[u8]) -> Result<String> {
    let value: serde_json::Value = serde_json::from_slice(json)?;
    let text = yaml_string(&value)?;
    let mut item = String::with_capacity(text.len() + 64);
    for (i, line) in text.lines().enumerate() {
        item.push_str(if i == 0 { "- " } else { "  " });
        item.push_str(line);
        item.push('\n');
    }
    Ok(item)
}

/// The document field that lists the bootstrap Secrets a report passed over as another
/// provider's: `skipped_other_providers`, a list of [`SkippedSecret`] (`name`, `namespace`,
/// `provider`, `reason`), as a JSON literal for [`Items::finish`]. `None` when there are none,
/// so that documents without them are as they were.
///
/// ```
/// assert_eq!(payload_printer::document::skipped_other_providers(&[]), None);
/// ```
pub fn skipped_other_providers(skipped: &[SkippedSecret]) -> Option<(&'static str, String)> {
    (!skipped.is_empty())
        .then(|| serde_json::to_string(skipped).ok())
        .flatten()
        .map(|json| ("skipped_other_providers", json))
}

/// The item of an `inspect` or `size` document that stands for a Secret that cannot be read
/// ([`error_item`]): `{"name", "namespace", "cluster", "line", "error": {"message"}}`.
#[derive(Debug, Clone, serde::Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[non_exhaustive]
pub struct UnreadableItem {
    /// `metadata.name` (null for bare user data).
    pub name: Option<String>,
    /// `metadata.namespace`.
    pub namespace: Option<String>,
    /// The `cluster.x-k8s.io/cluster-name` label.
    pub cluster: Option<String>,
    /// The line of the input its value is on (1-based), when known.
    pub line: Option<u64>,
    /// Why it could not be read.
    pub error: ItemError,
}

/// The item that stands for a Secret that cannot be read: for text, a line
/// `error: MESSAGE`; for JSON and YAML, a compact JSON object with its names, its line in the
/// input and an `error` object (`{"name":…,"namespace":…,"cluster":…,"line":…,
/// "error":{"message":…}}`), to hand to [`Items::item`].
///
/// `message` is the library's error, which names the Secret and is terminal-safe already.
pub fn error_item(
    out: &mut impl Write,
    secret: &BootstrapSecret<'_>,
    message: &str,
    layout: Layout,
) -> Result<()> {
    if layout != Layout::Text {
        let item = UnreadableItem {
            name: secret.name().map(str::to_owned),
            namespace: secret.namespace().map(str::to_owned),
            cluster: secret.cluster().map(str::to_owned),
            line: secret.line(),
            error: ItemError::new(message),
        };
        serde_json::to_writer(&mut *out, &item)?;
        return Ok(());
    }
    writeln!(out, "{ERROR}error{ERROR:#}: {}", safe(message))?;
    Ok(())
}

/// Writes a Secret's line of `-o name`: `secret/NAMESPACE/NAME` (`secret/NAME` when it has no
/// namespace), as kubectl's `-o name` writes `secret/NAME`, with the namespace so that Secrets
/// of several namespaces are told apart. Nothing for bare user data, which has no name. Names
/// from the input are written terminal-safe ([`safe`]).
///
/// ```
/// let mut out = Vec::new();
/// payload_printer::document::name(&mut out, Some("demo-md-0-x"), Some("capi"))?;
/// payload_printer::document::name(&mut out, Some("solo"), None)?;
/// payload_printer::document::name(&mut out, None, None)?;
/// assert_eq!(String::from_utf8(out).unwrap(), "secret/capi/demo-md-0-x\nsecret/solo\n");
/// # Ok::<(), payload_printer::Error>(())
/// ```
pub fn name(out: &mut impl Write, name: Option<&str>, namespace: Option<&str>) -> Result<()> {
    match (name, namespace) {
        (Some(name), Some(namespace)) => {
            writeln!(out, "secret/{}/{}", safe(namespace), safe(name))?;
        }
        (Some(name), None) => writeln!(out, "secret/{}", safe(name))?,
        (None, _) => {}
    }
    Ok(())
}

/// Writes `value` as pretty JSON (two-space indent) and a line break, free of the characters
/// [`escape_unsafe`] escapes: the `lint`, `diff` and `clouds` documents.
///
/// ```
/// let mut out = Vec::new();
/// payload_printer::document::json(&mut out, &serde_json::json!({"a": "x\u{202e}"}))?;
/// assert_eq!(String::from_utf8(out).unwrap(), "{\n  \"a\": \"x\\u202e\"\n}\n");
/// # Ok::<(), payload_printer::Error>(())
/// ```
pub fn json(out: &mut impl Write, value: &impl serde::Serialize) -> Result<()> {
    out.write_all(&escape_unsafe(&serde_json::to_vec_pretty(value)?))?;
    writeln!(out)?;
    Ok(())
}

/// Writes `value` as block YAML (the JSON document, emitted as YAML), free of the characters
/// [`escape_unsafe`] escapes.
///
/// ```
/// let mut out = Vec::new();
/// payload_printer::document::yaml(&mut out, &serde_json::json!({"schema": "x/v1", "count": 2}))?;
/// assert_eq!(String::from_utf8(out).unwrap(), "schema: x/v1\ncount: 2\n");
/// # Ok::<(), payload_printer::Error>(())
/// ```
pub fn yaml(out: &mut impl Write, value: &impl serde::Serialize) -> Result<()> {
    let value = serde_json::to_value(value)?;
    out.write_all(yaml_string(&value)?.as_bytes())?;
    Ok(())
}

/// A JSON value as YAML (block style), free of the characters [`safe`] escapes: the emitter
/// writes those only inside double-quoted scalars, as `\u` escapes that mean the same
/// character.
fn yaml_string(value: &serde_json::Value) -> Result<String> {
    let text = serde_saphyr::to_string(value).map_err(|e| crate::Error::Yaml(Box::new(e)))?;
    Ok(match escape_unsafe(text.as_bytes()) {
        Cow::Borrowed(_) => text,
        Cow::Owned(bytes) => {
            String::from_utf8(bytes).map_err(|e| crate::Error::Yaml(Box::new(e)))?
        }
    })
}

/// JSON output made free of the characters [`safe`] escapes in text. In JSON they can only
/// stand inside strings (JSON escapes C0 itself), where `\uXXXX` means the same character.
/// Output without them is borrowed.
///
/// ```
/// use payload_printer::document::escape_unsafe;
///
/// assert_eq!(escape_unsafe(b"{\"a\":1}").as_ref(), b"{\"a\":1}");
/// assert_eq!(escape_unsafe("\"\u{202e}\"".as_bytes()).as_ref(), b"\"\\u202e\"");
/// ```
pub fn escape_unsafe(bytes: &[u8]) -> Cow<'_, [u8]> {
    // Every character to escape outside C0 is DEL or starts with one of these UTF-8 lead bytes
    // (C1 and U+00AD: C2; U+061C: D8; U+180E: E1; U+200B–U+206F: E2; U+FEFF, U+FFF9–FFFB: EF;
    // tags: F3).
    let suspect = memchr::memchr3(0xc2, 0xe2, 0xef, bytes).is_some()
        || memchr::memchr3(0x7f, 0xd8, 0xe1, bytes).is_some()
        || memchr::memchr(0xf3, bytes).is_some();
    if !suspect {
        return Cow::Borrowed(bytes);
    }
    // Output this tool writes is UTF-8; anything else is read lossily rather than passed on.
    let text = String::from_utf8_lossy(bytes);
    let mut out = String::with_capacity(text.len() + 64);
    for c in text.chars() {
        let unsafe_char =
            rke2_payload::terminal_safe(c.encode_utf8(&mut [0; 4])).len() > c.len_utf8();
        match c {
            '\n' | '\r' | '\t' => out.push(c),
            c if unsafe_char => {
                let mut units = [0u16; 2];
                for unit in c.encode_utf16(&mut units) {
                    out.push_str(&format!("\\u{unit:04x}"));
                }
            }
            c => out.push(c),
        }
    }
    Cow::Owned(out.into_bytes())
}

#[cfg(test)]
mod tests {
    use super::{escape_unsafe, yaml_string};

    #[test]
    fn json_keeps_its_meaning_without_unsafe_characters() {
        let json =
            serde_json::to_vec(&serde_json::json!({"p": "a\u{1b}[2J\u{202e}b\u{85}"})).unwrap();
        let clean = escape_unsafe(&json);
        let text = std::str::from_utf8(&clean).unwrap();
        assert!(
            !text.chars().any(|c| c.is_control() || c == '\u{202e}'),
            "{text}"
        );
        let back: serde_json::Value = serde_json::from_slice(&clean).unwrap();
        assert_eq!(back["p"], "a\u{1b}[2J\u{202e}b\u{85}");
        assert_eq!(escape_unsafe(b"{\"a\":1}\n").as_ref(), b"{\"a\":1}\n");
    }

    #[test]
    fn yaml_reads_back_and_shows_no_control_character() {
        let value = serde_json::json!({
            "name": "a\u{1b}[31mred\u{202e}x\u{7}",
            "plain": "text: with # and 'quotes'",
            "n": 3,
            "list": ["x", null, true],
        });
        let text = yaml_string(&value).expect("yaml");
        assert!(
            !text
                .chars()
                .any(|c| c.is_control() && c != '\n' || c == '\u{202e}'),
            "{text:?}"
        );
        let back: serde_json::Value = serde_saphyr::from_str(&text).expect("reads back");
        assert_eq!(back, value, "{text}");
    }

    #[test]
    fn an_empty_document_is_whole() {
        use super::{Items, Layout};
        let mut out = Vec::new();
        Items::new(Layout::Json, "s/v1")
            .finish(&mut out, &[("fits", "true".to_owned())])
            .unwrap();
        assert_eq!(
            out,
            b"{\"schema\":\"s/v1\",\"secrets\":[\n],\"fits\":true}\n"
        );
        let mut out = Vec::new();
        Items::new(Layout::Yaml, "s/v1")
            .finish(&mut out, &[("fits", "true".to_owned())])
            .unwrap();
        assert_eq!(out, b"schema: s/v1\nsecrets: []\nfits: true\n");
    }
}
