//! Streaming: Secrets handed over one at a time while the input is read, so memory stays
//! bounded by the largest object, not by the input.
//!
//! JSON goes through `serde_json`'s reader with a visitor that hands over each `items` element
//! as soon as it is read. YAML is split into documents at `---` lines (a marker at column 0
//! always ends a document), and each document is read from the stream by `serde-saphyr` with
//! the same visitor. Bare user data is read whole (it is one value).

use std::io::{BufRead, Read};

use serde::de::{self, DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};

use super::chunks::{JsonItems, Piece, SplitError};
use super::raw::{Doc, Pairs, RawMeta, RawObject, Str};
use super::{BootstrapSecret, Envelope};
use crate::error::{Error, Position, Syntax, scrub};
use crate::options::DecodeOptions;

/// What a streamed input held, besides the Secrets handed over.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StreamSummary {
    /// The syntax of the input; `None` for bare user data.
    pub syntax: Option<Syntax>,
    /// Bootstrap Secrets handed over.
    pub secrets: usize,
    /// Secrets without bootstrap data, skipped.
    pub skipped_secrets: usize,
    /// Objects that are not Secrets, skipped.
    pub skipped_objects: usize,
}

/// Reads `reader` and calls `each` with every bootstrap Secret, in input order, holding at most
/// one object (or one YAML document that is not a `List`) in memory at a time.
///
/// `each` may stop the stream early by returning an error, which is passed through.
pub fn for_each_secret<R: Read>(
    reader: R,
    options: &DecodeOptions,
    mut each: impl FnMut(&BootstrapSecret<'_>) -> Result<(), Error>,
) -> Result<StreamSummary, Error> {
    let mut reader = std::io::BufReader::with_capacity(1 << 16, reader);
    let start = loop {
        let buf = reader.fill_buf().map_err(io_error)?;
        if buf.is_empty() {
            return Err(Error::Empty);
        }
        match buf.iter().position(|b| !b.is_ascii_whitespace()) {
            Some(i) => break buf[i..].to_vec(),
            None => {
                let n = buf.len();
                reader.consume(n);
            }
        }
    };
    let head = start.strip_prefix("\u{feff}".as_bytes()).unwrap_or(&start);
    let bare = crate::gzip::is_gzip(head)
        || super::is_cloud_init_text(&String::from_utf8_lossy(&head[..head.len().min(64)]));
    if bare || head.starts_with(b"[") {
        // One value (or a top-level JSON array): read it whole and use the in-memory path.
        let mut all = Vec::new();
        reader.read_to_end(&mut all).map_err(io_error)?;
        let envelope = Envelope::parse(&all, options)?;
        for secret in &envelope.secrets {
            each(secret)?;
        }
        return Ok(StreamSummary {
            syntax: envelope.syntax,
            secrets: envelope.secrets.len(),
            skipped_secrets: envelope.skipped_secrets,
            skipped_objects: envelope.skipped_objects,
        });
    }
    let mut state = State {
        syntax: None,
        index: 0,
        others: Vec::new(),
        handed: 0,
        skipped_secrets: 0,
        skipped_objects: 0,
        missing_value: None,
        error: None,
        each: &mut each,
    };
    let json = head.starts_with(b"{");
    if json {
        state.syntax = Some(Syntax::Json);
        let mut items = JsonItems::new(reader);
        loop {
            match items.next_piece() {
                Ok(Piece::Item(offset, bytes)) => {
                    let doc: Doc<'_> =
                        serde_json::from_slice(bytes).map_err(|e| json_error(&e, bytes, offset))?;
                    state.take(doc)?;
                }
                Ok(Piece::Whole(bytes)) => {
                    let envelope = Envelope::parse(bytes, options)?;
                    for secret in &envelope.secrets {
                        (state.each)(secret)?;
                    }
                    return Ok(StreamSummary {
                        syntax: envelope.syntax,
                        secrets: envelope.secrets.len(),
                        skipped_secrets: envelope.skipped_secrets,
                        skipped_objects: envelope.skipped_objects,
                    });
                }
                Ok(Piece::End) => break,
                Err(SplitError::Io(e)) => return Err(io_error(e)),
                Err(SplitError::Syntax(at)) => {
                    return Err(Error::Syntax {
                        syntax: Syntax::Json,
                        message: "malformed or truncated JSON".to_owned(),
                        at: Some(Position {
                            line: 0,
                            column: 0,
                            offset: Some(at),
                        }),
                    });
                }
            }
        }
    } else {
        state.syntax = Some(Syntax::Yaml);
        let mut documents = Documents::new(reader);
        while documents.next_document() {
            let result = serde_saphyr::with_deserializer_from_reader_with_options(
                &mut documents,
                stream_options(options),
                |de| TopSeed { state: &mut state }.deserialize(de),
            );
            if let Some(e) = state.error.take() {
                return Err(e);
            }
            if let Some(e) = documents.error.take() {
                return Err(io_error(e));
            }
            match result {
                Ok(()) => {}
                // An empty document (comments only, or `---` at the end).
                Err(e) if documents.was_blank() => {
                    let _ = e;
                }
                Err(e) => return Err(yaml_error(&e, documents.line_offset())),
            }
        }
    }
    finish(state)
}

fn finish(state: State<'_>) -> Result<StreamSummary, Error> {
    if state.handed == 0 {
        return Err(super::no_secret_error(
            state.skipped_secrets,
            state.missing_value,
            state.others,
        ));
    }
    Ok(StreamSummary {
        syntax: state.syntax,
        secrets: state.handed,
        skipped_secrets: state.skipped_secrets,
        skipped_objects: state.skipped_objects,
    })
}

fn io_error(e: std::io::Error) -> Error {
    Error::Io {
        what: "the input".to_owned(),
        error: e,
    }
}

/// A parse error inside one item, placed at its byte offset in the whole input.
fn json_error(e: &serde_json::Error, item: &[u8], item_offset: u64) -> Error {
    let message = scrub(&e.to_string());
    let message = match message.find(" at line ") {
        Some(i) => message[..i].to_owned(),
        None => message,
    };
    let within: usize = item
        .split_inclusive(|&b| b == b'\n')
        .take(e.line().saturating_sub(1))
        .map(<[u8]>::len)
        .sum::<usize>()
        + e.column().saturating_sub(1);
    Error::Syntax {
        syntax: Syntax::Json,
        message,
        at: Some(Position {
            line: 0,
            column: 0,
            offset: Some(item_offset + within as u64),
        }),
    }
}

fn yaml_error(e: &serde_saphyr::Error, line_offset: u64) -> Error {
    let message = scrub(&e.to_string());
    let message = match message.find(" at line ") {
        Some(i) => message[..i].to_owned(),
        None => message,
    };
    Error::Syntax {
        syntax: Syntax::Yaml,
        message,
        at: e.location().map(|l| Position {
            line: l.line() + line_offset,
            column: l.column(),
            offset: None,
        }),
    }
}

fn stream_options(options: &DecodeOptions) -> serde_saphyr::Options {
    // The stream is unbounded in length; what it may not do is nest deeply or expand aliases.
    let mut budget = serde_saphyr::Budget::default();
    budget.max_reader_input_bytes = None;
    budget.max_events = usize::MAX;
    budget.max_nodes = usize::MAX;
    budget.max_total_scalar_bytes = usize::MAX;
    budget.max_documents = usize::MAX;
    budget.max_depth = options.max_depth;
    budget.max_aliases = 1_000;
    budget.max_anchors = 1_000;
    let mut yaml = serde_saphyr::Options::default();
    yaml.budget = Some(budget);
    yaml.with_snippet = false;
    yaml
}

struct State<'f> {
    syntax: Option<Syntax>,
    index: usize,
    others: Vec<String>,
    handed: usize,
    skipped_secrets: usize,
    skipped_objects: usize,
    missing_value: Option<crate::error::SecretId>,
    error: Option<Error>,
    each: &'f mut dyn FnMut(&BootstrapSecret<'_>) -> Result<(), Error>,
}

impl State<'_> {
    /// Takes one object read from the input: hands over a bootstrap Secret, counts the rest.
    fn take(&mut self, doc: Doc<'_>) -> Result<(), Error> {
        let mut one = Envelope::empty();
        one.add(doc, &mut self.index, &mut self.others);
        self.skipped_secrets += one.skipped_secrets;
        self.skipped_objects += one.skipped_objects;
        if let Some(id) = one.missing_value.take() {
            self.missing_value = Some(id);
        }
        for secret in &one.secrets {
            (self.each)(secret)?;
            self.handed += 1;
        }
        Ok(())
    }
}

/// The top level of a document: a `List` whose items are handed over one by one, or a single
/// object.
struct TopSeed<'s, 'f> {
    state: &'s mut State<'f>,
}

impl<'de> DeserializeSeed<'de> for TopSeed<'_, '_> {
    type Value = ();

    fn deserialize<D: de::Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for TopSeed<'_, '_> {
    type Value = ();

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a Kubernetes object or List")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let mut object = RawObject::default();
        let mut streamed = false;
        while let Some(key) = map.next_key::<Str<'de>>()? {
            match key.0.as_ref() {
                "kind" => object.kind = map.next_value()?,
                "metadata" => object.metadata = map.next_value::<Option<RawMeta<'de>>>()?,
                "type" => object.secret_type = map.next_value()?,
                "data" => object.data = map.next_value::<Option<Pairs<'de>>>()?,
                "stringData" => object.string_data = map.next_value::<Option<Pairs<'de>>>()?,
                "ignition" => object.ignition = map.next_value()?,
                "items" => {
                    streamed = true;
                    map.next_value_seed(ItemsSeed {
                        state: &mut *self.state,
                    })?;
                }
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        if streamed {
            return Ok(());
        }
        self.state
            .take(Doc::Object(Box::new(object)))
            .map_err(|e| store(self.state, e))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        self.state.others.push("a sequence".to_owned());
        self.state.skipped_objects += 1;
        Ok(())
    }

    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        Ok(())
    }

    fn visit_none<E: de::Error>(self) -> Result<(), E> {
        Ok(())
    }

    fn visit_str<E: de::Error>(self, _: &str) -> Result<(), E> {
        self.state.others.push("a plain text scalar".to_owned());
        self.state.skipped_objects += 1;
        Ok(())
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<(), E> {
        self.visit_str("")
    }

    fn visit_i64<E: de::Error>(self, _: i64) -> Result<(), E> {
        self.visit_str("")
    }

    fn visit_u64<E: de::Error>(self, _: u64) -> Result<(), E> {
        self.visit_str("")
    }

    fn visit_f64<E: de::Error>(self, _: f64) -> Result<(), E> {
        self.visit_str("")
    }
}

/// Keeps the callback's error (it is not a parse error) and stops the parser.
fn store<E: de::Error>(state: &mut State<'_>, e: Error) -> E {
    state.error = Some(e);
    E::custom("stopped")
}

struct ItemsSeed<'s, 'f> {
    state: &'s mut State<'f>,
}

impl<'de> DeserializeSeed<'de> for ItemsSeed<'_, '_> {
    type Value = ();

    fn deserialize<D: de::Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for ItemsSeed<'_, '_> {
    type Value = ();

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a list of objects")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while let Some(doc) = seq.next_element::<Doc<'de>>()? {
            self.state.take(doc).map_err(|e| store(self.state, e))?;
        }
        Ok(())
    }

    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        Ok(())
    }

    fn visit_none<E: de::Error>(self) -> Result<(), E> {
        Ok(())
    }
}

/// A reader over one YAML document at a time: it stops at the next `---` (or `...`) line.
struct Documents<R> {
    inner: R,
    line: Vec<u8>,
    pos: usize,
    /// The first line of the next document was already read (it follows a marker).
    pending: bool,
    finished_input: bool,
    at_boundary: bool,
    content: bool,
    lines_before: u64,
    lines_in_doc: u64,
    error: Option<std::io::Error>,
}

impl<R: BufRead> Documents<R> {
    fn new(inner: R) -> Self {
        Documents {
            inner,
            line: Vec::new(),
            pos: 0,
            pending: false,
            finished_input: false,
            at_boundary: false,
            content: false,
            lines_before: 0,
            lines_in_doc: 0,
            error: None,
        }
    }

    /// Moves to the next document; false at the end of the input.
    fn next_document(&mut self) -> bool {
        if self.finished_input && !self.pending {
            return false;
        }
        self.lines_before += self.lines_in_doc;
        self.lines_in_doc = 0;
        self.at_boundary = false;
        self.content = false;
        true
    }

    /// Whether the document held nothing but blank lines and comments.
    fn was_blank(&self) -> bool {
        !self.content
    }

    fn line_offset(&self) -> u64 {
        self.lines_before
    }

    fn read_line(&mut self) -> std::io::Result<bool> {
        self.line.clear();
        self.pos = 0;
        let n = self.inner.read_until(b'\n', &mut self.line)?;
        Ok(n > 0)
    }

    fn is_marker(line: &[u8]) -> bool {
        let body = line.strip_suffix(b"\n").unwrap_or(line);
        let body = body.strip_suffix(b"\r").unwrap_or(body);
        body == b"---" || body == b"..." || body.starts_with(b"--- ") || body.starts_with(b"---\t")
    }
}

impl<R: BufRead> Read for Documents<R> {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        loop {
            if self.at_boundary {
                return Ok(0);
            }
            if self.pos < self.line.len() {
                let n = (self.line.len() - self.pos).min(out.len());
                out[..n].copy_from_slice(&self.line[self.pos..self.pos + n]);
                self.pos += n;
                return Ok(n);
            }
            if self.pending {
                self.pending = false;
            } else {
                match self.read_line() {
                    Ok(true) => {}
                    Ok(false) => {
                        self.finished_input = true;
                        return Ok(0);
                    }
                    Err(e) => {
                        self.finished_input = true;
                        let kind = e.kind();
                        self.error = Some(e);
                        return Err(std::io::Error::from(kind));
                    }
                }
            }
            if Self::is_marker(&self.line) {
                if self.content || self.line.starts_with(b"...") {
                    // The marker ends this document; a `--- x` line starts the next one.
                    self.at_boundary = true;
                    if self.line.starts_with(b"--- ") {
                        self.line.drain(..4);
                        self.pending = true;
                    } else {
                        self.line.clear();
                    }
                    self.pos = 0;
                    return Ok(0);
                }
                // A leading `---` opens the document: skip it (and keep any content after it).
                if self.line.starts_with(b"--- ") {
                    self.line.drain(..4);
                } else {
                    self.line.clear();
                }
                self.lines_in_doc += 1;
                continue;
            }
            self.lines_in_doc += 1;
            let trimmed = self.line.iter().position(|b| !b.is_ascii_whitespace());
            if let Some(i) = trimmed
                && self.line[i] != b'#'
            {
                self.content = true;
            }
        }
    }
}
