//! Streaming: Secrets handed over one at a time while the input is read, so memory stays
//! bounded by the largest object, not by the input.
//!
//! The input is first split into objects without parsing them ([`split`]): a JSON `List` into
//! its `items` by a structural scanner (`chunks`), YAML into documents at `---`/`...` lines and
//! the top-level `items:` block sequence into its items (`YamlSplit`). Each chunk is then parsed
//! on its own ([`parse_chunk`]), by the kubectl fast path or the full parser. Bare user data
//! and single objects are read whole (they are one value).
//!
//! Splitting and parsing are separate so that the batch layer above can split on one thread
//! and parse on many.

use std::io::{BufRead, Read};

use super::chunks::{JsonItems, Piece, SplitError};
use super::lines::Line;
use super::raw::Doc;
use super::{BootstrapSecret, Envelope};
use super::{json_error, yaml_error};
use crate::codec::text::shorten;
use crate::error::{Error, Position, StreamError, Syntax};
use crate::options::DecodeOptions;

/// What a streamed input held, besides the Secrets handed over.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
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

impl StreamSummary {
    /// Adds what another source of the same input held (the syntax is the first source's).
    pub(crate) fn add(&mut self, other: &StreamSummary) {
        self.syntax = self.syntax.or(other.syntax);
        self.secrets += other.secrets;
        self.skipped_secrets += other.skipped_secrets;
        self.skipped_objects += other.skipped_objects;
    }
}

/// Reads `reader` and calls `each` with every bootstrap Secret, in input order, holding at most
/// one object (or one YAML document that is not a `List`) in memory at a time.
///
/// ```
/// use rke2_payload::{DecodeOptions, StreamError, for_each_secret};
///
/// let input = "kind: Secret\nmetadata: {name: a}\nstringData: {format: cloud-config, value: \"#cloud-config\\n\"}\n";
/// let mut names = Vec::new();
/// let summary = for_each_secret(input.as_bytes(), &DecodeOptions::default(), |secret| {
///     names.push(secret.name().unwrap_or_default().to_owned());
///     Ok::<(), std::fmt::Error>(())
/// })?;
/// assert_eq!((names, summary.secrets), (vec!["a".to_owned()], 1));
/// # Ok::<(), StreamError<std::fmt::Error>>(())
/// ```
///
/// # Errors
/// [`StreamError::Input`] when the input cannot be read (the Secrets before the point of
/// failure were handed over first); [`StreamError::Sink`] with `each`'s error, which stops the
/// stream.
pub fn for_each_secret<R: Read, E>(
    reader: R,
    options: &DecodeOptions,
    mut each: impl FnMut(&BootstrapSecret<'_>) -> Result<(), E>,
) -> Result<StreamSummary, StreamError<E>> {
    each_secret(reader, options, |secret| {
        each(secret).map_err(StreamError::Sink)
    })
}

/// [`for_each_secret`] for any error type that a decoding error converts into.
pub(crate) fn each_secret<R: Read, E: From<Error>>(
    reader: R,
    options: &DecodeOptions,
    mut each: impl FnMut(&BootstrapSecret<'_>) -> Result<(), E>,
) -> Result<StreamSummary, E> {
    let mut tally = Tally::default();
    let layout = split(reader, options.max_object, |chunk| {
        let (secrets, counts) = parse_chunk(chunk, options, tally.index);
        tally.add(counts, secrets.len());
        secrets.iter().try_for_each(&mut each)
    })?;
    match layout {
        Layout::Chunked(syntax) => Ok(tally.finish(syntax)?),
        Layout::Whole(all) => whole(&all, options, each),
    }
}

/// Reads an input that is one value (bare user data, one Secret) in memory and hands over its
/// Secrets.
pub(crate) fn whole<E: From<Error>>(
    all: &[u8],
    options: &DecodeOptions,
    mut each: impl FnMut(&BootstrapSecret<'_>) -> Result<(), E>,
) -> Result<StreamSummary, E> {
    let envelope = Envelope::parse(all, options)?;
    envelope.secrets.iter().try_for_each(&mut each)?;
    Ok(StreamSummary {
        syntax: envelope.syntax,
        secrets: envelope.secrets.len(),
        skipped_secrets: envelope.skipped_secrets,
        skipped_objects: envelope.skipped_objects,
    })
}

/// The UTF-8 byte-order mark.
const BOM: &[u8] = "\u{feff}".as_bytes();

/// One object of a streamed input, split off but not parsed yet.
#[derive(Clone, Copy)]
pub(crate) struct Chunk<'t> {
    /// Its syntax.
    pub(crate) syntax: Syntax,
    /// Where it starts: the byte offset (JSON) or the line number (YAML) in the input.
    pub(crate) at: u64,
    /// The line it starts on (1-based).
    pub(crate) line: u64,
    /// Its text (a YAML `List` item dedented).
    pub(crate) text: &'t [u8],
    /// What part of the input it is.
    pub(crate) part: Part,
    /// Every line of it is in the kubectl shape ([`super::lines`]): the fast path may read it.
    pub(crate) shaped: bool,
}

/// What part of an input a chunk is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Part {
    /// An item of a `List` (an empty one is an object, not nothing).
    Item,
    /// A whole document (or items read together).
    Document,
    /// A document whose items were handed over, without them: read only so that what does not
    /// read (a stray line that ended the items early) is reported, not passed over.
    Around,
}

/// How an input is read.
pub(crate) enum Layout {
    /// Its objects were handed over chunk by chunk.
    Chunked(Syntax),
    /// It is one value, read whole: it must be parsed in memory.
    Whole(Vec<u8>),
}

/// Splits `reader` into objects and calls `chunk` with each, in input order, without parsing
/// them; or reads the input whole when it is one value.
pub(crate) fn split<R: Read, E: From<Error>>(
    reader: R,
    max_object: u64,
    mut chunk: impl FnMut(Chunk<'_>) -> Result<(), E>,
) -> Result<Layout, E> {
    let too_large = |at: String| Error::ObjectTooLarge {
        at,
        limit: max_object,
    };
    let cap = usize::try_from(max_object).unwrap_or(usize::MAX);
    let mut reader = std::io::BufReader::with_capacity(1 << 16, reader);
    // A byte-order mark (as some editors write) at the very start is not part of the text.
    let mut bom = reader.fill_buf().map_err(io_error)?.starts_with(BOM);
    if bom {
        reader.consume(BOM.len());
    }
    // What the input starts with decides how it is read: take as much of it as the in-memory
    // parser looks at (whitespace, a byte-order mark, whitespace, then [`super::SNIFF`] bytes),
    // then read on after it.
    let mut start: Vec<u8> = Vec::new();
    // How far `start` is known to be whitespace (and that mark); where the text starts.
    let mut skipped = 0;
    let mut content: Option<usize> = None;
    loop {
        while content.is_none() && skipped < start.len() {
            let rest = &start[skipped..];
            if rest[0].is_ascii_whitespace() {
                skipped += 1;
            } else if !bom && rest.starts_with(BOM) {
                bom = true;
                skipped += BOM.len();
            } else if !bom && BOM.starts_with(rest) {
                // Perhaps a mark cut by the end of what was read.
                break;
            } else {
                content = Some(skipped);
            }
        }
        if content.is_some_and(|at| start.len() - at >= super::SNIFF) {
            break;
        }
        if start.len() > cap {
            return Err(too_large("the start of the input".to_owned()).into());
        }
        let buf = reader.fill_buf().map_err(io_error)?;
        if buf.is_empty() {
            break;
        }
        start.extend_from_slice(buf);
        let n = buf.len();
        reader.consume(n);
    }
    let head = match content {
        Some(at) => &start[at..],
        // A part of a mark, alone at the end.
        None if skipped < start.len() => &start[skipped..],
        None => return Err(Error::Empty.into()),
    };
    let bare = super::is_bare_head(head);
    let json = super::looks_like_json(&head[..head.len().min(super::SNIFF)]);
    let array = head.starts_with(b"[");
    let mut reader = std::io::Cursor::new(start).chain(reader);
    if bare || (json && array) {
        // One value (or a top-level JSON array): read it whole and use the in-memory path.
        let mut all = Vec::new();
        (&mut reader)
            .take(max_object.saturating_add(1))
            .read_to_end(&mut all)
            .map_err(io_error)?;
        if all.len() > cap {
            return Err(too_large("the start of the input".to_owned()).into());
        }
        return Ok(Layout::Whole(all));
    }
    if json {
        let mut items = JsonItems::new(reader, cap);
        loop {
            match items.next_piece() {
                Ok(Piece::Item(at, line, text)) => chunk(Chunk {
                    syntax: Syntax::Json,
                    at,
                    line,
                    text,
                    part: Part::Item,
                    shaped: false,
                })?,
                Ok(Piece::Around(at, line, text)) => chunk(Chunk {
                    syntax: Syntax::Json,
                    at,
                    line,
                    text,
                    part: Part::Around,
                    shaped: false,
                })?,
                Ok(Piece::Whole(bytes)) => return Ok(Layout::Whole(bytes.to_vec())),
                Ok(Piece::Object(at, line, text)) => chunk(Chunk {
                    syntax: Syntax::Json,
                    at,
                    line,
                    text,
                    part: Part::Document,
                    shaped: false,
                })?,
                Ok(Piece::End) => return Ok(Layout::Chunked(Syntax::Json)),
                Err(SplitError::Io(e)) => return Err(io_error(e).into()),
                Err(SplitError::TooLarge(at)) => return Err(too_large(format!("byte {at}")).into()),
                Err(SplitError::Syntax(at)) => {
                    return Err(Error::Syntax {
                        syntax: Syntax::Json,
                        message: "malformed or truncated JSON".to_owned(),
                        at: Some(Position {
                            line: 0,
                            column: 0,
                            offset: Some(at),
                        }),
                    }
                    .into());
                }
            }
        }
    }
    let mut split = YamlSplit::new(reader, cap);
    loop {
        let piece = split.next_piece().map_err(io_error)?;
        let (at, part) = match piece {
            YamlPiece::End => return Ok(Layout::Chunked(Syntax::Yaml)),
            YamlPiece::TooLarge(line) => return Err(too_large(format!("line {line}")).into()),
            YamlPiece::Item(first_line) => (first_line, Part::Item),
            YamlPiece::Document(first_line) => (first_line, Part::Document),
            YamlPiece::Around(first_line) => (first_line, Part::Around),
        };
        chunk(Chunk {
            syntax: Syntax::Yaml,
            at,
            line: at,
            text: &split.text,
            part,
            shaped: split.shaped,
        })?;
    }
}

/// What one chunk held besides its bootstrap Secrets.
#[derive(Debug, Default)]
pub(crate) struct Counts {
    /// Objects read (each takes an index), including skipped ones.
    pub(crate) objects: usize,
    skipped_secrets: usize,
    skipped_objects: usize,
    missing_value: Option<crate::error::SecretId>,
    others: Vec<String>,
}

/// Parses one chunk; `index` is the number of objects before it in the input.
///
/// An object that cannot be read does not stop the input: it is handed over as a broken
/// Secret (see [`BootstrapSecret::broken`]), unless a lenient read shows it is not a Secret at all.
pub(crate) fn parse_chunk<'t>(
    chunk: Chunk<'t>,
    options: &DecodeOptions,
    index: usize,
) -> (Vec<BootstrapSecret<'t>>, Counts) {
    let options = &depth_within(&chunk, options);
    let doc = match chunk.syntax {
        Syntax::Json => parse_json_object(chunk),
        Syntax::Yaml => parse_yaml_object(chunk, options),
    };
    let mut envelope = Envelope::empty();
    envelope.render_annotations = options.render_annotations;
    let mut counts = Counts::default();
    let mut next = index;
    match doc {
        // What is around the items: they were read; it holds nothing more.
        Ok(_) if chunk.part == Part::Around => {}
        Ok(Some(doc)) => envelope.add(doc, &mut next, &mut counts.others),
        // An empty item (`-` alone, `- ~`) is an object that is not a Secret, as the parser
        // reads it in its `List`; an empty document is nothing.
        Ok(None) if chunk.part == Part::Item => envelope.add(
            Doc::Other("an empty document"),
            &mut next,
            &mut counts.others,
        ),
        Ok(None) => {}
        Err(e) if chunk.part == Part::Around => {
            // The lines around the items are not all next to each other: no position.
            next += 1;
            let message = match &e {
                Error::Syntax { message, .. } => message.clone(),
                other => other.to_string(),
            };
            let id = crate::error::SecretId {
                namespace: None,
                name: None,
                index,
            };
            envelope.secrets.push(BootstrapSecret::broken(
                id,
                Vec::new(),
                format!(
                    "the document that starts at line {}, around its items, does not read: \
                     {message}",
                    chunk.line
                ),
                chunk.line,
            ));
        }
        Err(e) => {
            next += 1;
            match lenient_metadata(chunk, options) {
                Some((kind, _)) if !kind.as_deref().is_none_or(is_secret_kind) => {
                    counts.skipped_objects += 1;
                    counts.others.push(format!(
                        "kind: {}",
                        shorten(kind.as_deref().unwrap_or_default(), 40)
                    ));
                }
                found => {
                    let (namespace, name, labels) = match found.map(|(_, meta)| meta) {
                        Some(Some(meta)) => (
                            meta.namespace.map(|s| s.0.into_owned()),
                            meta.name.map(|s| s.0.into_owned()),
                            meta.labels
                                .map(|l| l.0.into_iter().map(|(k, v)| (k.0, v.0)).collect())
                                .unwrap_or_default(),
                        ),
                        _ => (None, None, Vec::new()),
                    };
                    let id = crate::error::SecretId {
                        namespace,
                        name,
                        index,
                    };
                    envelope.secrets.push(BootstrapSecret::broken(
                        id,
                        labels,
                        why_unreadable(&e),
                        chunk.line,
                    ));
                }
            }
        }
    }
    super::locate(
        &mut envelope.secrets,
        chunk.text,
        chunk.line,
        Some(chunk.line),
    );
    counts.objects = next - index;
    counts.skipped_secrets = envelope.skipped_secrets;
    counts.skipped_objects += envelope.skipped_objects;
    counts.missing_value = envelope.missing_value.take();
    (envelope.secrets, counts)
}

/// Why one object did not read: the parser's words and place (not "the input is not …", which
/// says more than is true of one item).
fn why_unreadable(e: &Error) -> String {
    match e {
        Error::Syntax {
            message,
            at: Some(at),
            ..
        } => format!("{message} at {at}"),
        Error::Syntax { message, .. } => message.clone(),
        other => other.to_string(),
    }
}

/// Whether a `kind` names a Secret (or a list that may hold Secrets).
fn is_secret_kind(kind: &str) -> bool {
    kind == "Secret" || kind.ends_with("List")
}

/// The `kind` and `metadata` of an object that did not read as a whole, when they read alone.
fn lenient_metadata<'t>(
    chunk: Chunk<'t>,
    options: &DecodeOptions,
) -> Option<(Option<String>, Option<super::raw::RawMeta<'t>>)> {
    #[derive(serde::Deserialize)]
    struct Head<'a> {
        #[serde(borrow, default)]
        kind: Option<super::raw::Str<'a>>,
        #[serde(borrow, default)]
        metadata: Option<super::raw::RawMeta<'a>>,
    }
    let head: Head<'t> = match chunk.syntax {
        Syntax::Json => serde_json::from_str(std::str::from_utf8(chunk.text).ok()?).ok()?,
        Syntax::Yaml => {
            let text = std::str::from_utf8(chunk.text).ok()?;
            serde_saphyr::from_str_with_options(text, super::yaml_options(text, options)).ok()?
        }
    };
    Some((head.kind.map(|k| k.0.into_owned()), head.metadata))
}

/// The running count of a streamed input.
#[derive(Default)]
pub(crate) struct Tally {
    /// Objects read so far.
    pub(crate) index: usize,
    handed: usize,
    skipped_secrets: usize,
    skipped_objects: usize,
    missing_value: Option<crate::error::SecretId>,
    others: Vec<String>,
}

impl Tally {
    /// Counts one parsed chunk that held `secrets` bootstrap Secrets.
    pub(crate) fn add(&mut self, counts: Counts, secrets: usize) {
        self.index += counts.objects;
        self.handed += secrets;
        self.skipped_secrets += counts.skipped_secrets;
        self.skipped_objects += counts.skipped_objects;
        if counts.missing_value.is_some() {
            self.missing_value = counts.missing_value;
        }
        self.others.extend(counts.others);
    }

    /// The summary, or the error for an input without a bootstrap Secret.
    pub(crate) fn finish(self, syntax: Syntax) -> Result<StreamSummary, Error> {
        if self.handed == 0 {
            return Err(super::no_secret_error(
                self.skipped_secrets,
                self.missing_value,
                self.others,
            ));
        }
        Ok(StreamSummary {
            syntax: Some(syntax),
            secrets: self.handed,
            skipped_secrets: self.skipped_secrets,
            skipped_objects: self.skipped_objects,
        })
    }
}

fn io_error(e: std::io::Error) -> Error {
    Error::Io {
        what: "the input".to_owned(),
        error: e,
    }
}

/// How many collections hold a YAML `List` item in its document: the document's mapping and
/// its `items` sequence.
const ITEM_DEPTH: usize = 2;

/// The options an object is parsed with alone: a YAML `List` item may nest as deep as it may in
/// its document, [`ITEM_DEPTH`] less than the document itself. (JSON has no depth limit: the
/// parser passes over what it does not keep without recursion.)
fn depth_within(chunk: &Chunk<'_>, options: &DecodeOptions) -> DecodeOptions {
    let mut options = options.clone();
    if chunk.syntax == Syntax::Yaml && chunk.part == Part::Item {
        options.max_depth = options.max_depth.saturating_sub(ITEM_DEPTH);
    }
    options
}

/// Parses one JSON object. The text is checked as UTF-8 first, as the parser of a whole input
/// does: `serde_json` reading bytes passes over a string it does not keep without checking it.
fn parse_json_object<'t>(chunk: Chunk<'t>) -> Result<Option<Doc<'t>>, Error> {
    let text = utf8(&chunk, Syntax::Json)?;
    serde_json::from_str(text)
        .map(Some)
        .map_err(|e| json_error(&e, chunk.text, chunk.at))
}

/// A chunk's text as UTF-8, or the syntax error saying where it is not.
fn utf8<'t>(chunk: &Chunk<'t>, syntax: Syntax) -> Result<&'t str, Error> {
    std::str::from_utf8(chunk.text).map_err(|e| Error::Syntax {
        syntax,
        message: format!(
            "invalid UTF-8 (byte {} of the object starting at line {})",
            e.valid_up_to(),
            chunk.line
        ),
        at: None,
    })
}

/// Parses one YAML object (a document, or a `List` item): the kubectl fast path if it is in
/// the kubectl shape, else (or if the fast path gives up) the full parser. `None` for an empty
/// document.
fn parse_yaml_object<'t>(
    chunk: Chunk<'t>,
    options: &DecodeOptions,
) -> Result<Option<Doc<'t>>, Error> {
    let first_line = chunk.at;
    let text = utf8(&chunk, Syntax::Yaml)?;
    if chunk.shaped
        && let Some(object) = super::fast::object(text, options.max_depth)
    {
        return Ok(Some(Doc::Object(Box::new(object))));
    }
    let doc: Option<Doc<'t>> =
        serde_saphyr::from_str_with_options(text, super::yaml_options(text, options))
            .map_err(|e| yaml_error(&e, text, first_line.saturating_sub(1)))?;
    Ok(doc)
}

/// The lines of a text as YAML breaks them: after a `\n`, or a `\r` not followed by one.
fn yaml_lines(text: &[u8]) -> impl Iterator<Item = &[u8]> {
    let mut rest = text;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let end = memchr::memchr2_iter(b'\n', b'\r', rest)
            .find(|&at| rest[at] == b'\n' || rest.get(at + 1) != Some(&b'\n'))
            .map_or(rest.len(), |at| at + 1);
        let (line, after) = rest.split_at(end);
        rest = after;
        Some(line)
    })
}

/// Appends `text` to `out`, each line (as YAML breaks them) after `first` or, from the second
/// on, `other`.
fn indented(out: &mut Vec<u8>, text: &[u8], first: &[u8], other: &[u8]) {
    for (n, line) in yaml_lines(text).enumerate() {
        out.extend_from_slice(if n == 0 { first } else { other });
        out.extend_from_slice(line);
    }
}

/// Where a `\r` that is not part of a `\r\n` ends the line (a line break to YAML).
fn lone_cr(line: &[u8]) -> Option<usize> {
    memchr::memchr_iter(b'\r', line).find(|&at| line.get(at + 1).is_some_and(|&b| b != b'\n'))
}

/// What the YAML splitter found; its text is in [`YamlSplit::text`].
enum YamlPiece {
    /// One item of a top-level `items:` block sequence, dedented; its first line number.
    Item(u64),
    /// A whole document that is not streamed item by item (or the rest of one, from the first
    /// line outside the kubectl shape, as an `items:` document); its first line number.
    Document(u64),
    /// What is around the items of a document that was streamed item by item (`items: []` in
    /// their place); its first line number.
    Around(u64),
    /// The end of the input.
    End,
    /// The object being read grew past the cap, at this line.
    TooLarge(u64),
}

/// How the lines of the document being read are taken.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// Every line so far is in the kubectl shape ([`super::lines`]): the splitter cuts by
    /// indentation.
    Shape,
    /// A line before the items, or after them, was not: the lines go to the document, for the
    /// full parser.
    Whole,
    /// A line of the items was not: from the item it is in on, the lines go to `rest`, one
    /// `items:` document for the full parser.
    Rest,
}

/// Splits YAML into documents at `---`/`...` lines (a marker at column 0 always ends a
/// document), and the top-level `items:` block sequence of a document into its items, so that
/// each is parsed on its own and memory stays bounded by the largest.
///
/// Items are cut by indentation only while every line of the document is in the shape
/// `kubectl get -o yaml` writes, where that cut is the parser's ([`super::lines`] says why).
/// From the first line outside it, the splitter stops looking: before the items, the document
/// is read whole; in them, the item that line is in and everything after it up to the end of
/// the document go to the full parser as one `items:` document (after the items handed over,
/// in input order; an anchor and the aliases to it, which are outside the shape, so stay
/// together); after them, they go with the lines around the items. Each of those pieces is
/// held to the same cap as an item.
struct YamlSplit<R> {
    reader: R,
    line: Vec<u8>,
    line_no: u64,
    eof: bool,
    /// The text of the piece handed out, and whether all its lines are in the kubectl shape.
    text: Vec<u8>,
    shaped: bool,
    /// The document outside its items (parsed whole when the document has no items).
    doc: Vec<u8>,
    doc_first: u64,
    doc_content: bool,
    doc_streamed: bool,
    /// How the lines of the document are taken.
    mode: Mode,
    /// The kubectl shape's gate, and what it says of the current line (in [`Mode::Shape`]).
    gate: super::lines::Gate,
    class: Line,
    /// Indentation of the `- ` of the items being read.
    items: Option<usize>,
    /// `items:` was seen; the next line says whether a block sequence follows.
    items_pending: bool,
    item: Vec<u8>,
    item_first: u64,
    /// The current line is to be used again.
    held: bool,
    /// In [`Mode::Rest`]: the rest of the document as one `items:` document, and its first
    /// line number.
    rest: Vec<u8>,
    rest_first: u64,
    /// The lines around the items of a document whose rest was handed out, to hand out next.
    around: Option<(Vec<u8>, u64)>,
    /// The document starts with directives (`%YAML`, `%TAG`): it is read whole, from them.
    directives: bool,
    /// The `---` that ends those directives has been read.
    directives_end: bool,
    /// What followed a lone `\r` on the line read (a line break to YAML): the next lines,
    /// from `tail_at` on.
    tail: Vec<u8>,
    tail_at: usize,
    /// The most bytes one object may hold.
    cap: usize,
    /// The object being read grew past `cap`.
    too_large: bool,
}

impl<R: BufRead> YamlSplit<R> {
    fn new(reader: R, cap: usize) -> Self {
        YamlSplit {
            cap,
            too_large: false,
            reader,
            line: Vec::new(),
            line_no: 0,
            eof: false,
            text: Vec::new(),
            shaped: false,
            doc: Vec::new(),
            doc_first: 1,
            doc_content: false,
            doc_streamed: false,
            mode: Mode::Shape,
            gate: super::lines::Gate::default(),
            class: Line::Out,
            items: None,
            items_pending: false,
            item: Vec::new(),
            item_first: 0,
            held: false,
            rest: Vec::new(),
            rest_first: 0,
            around: None,
            directives: false,
            directives_end: false,
            tail: Vec::new(),
            tail_at: 0,
        }
    }

    fn read_line(&mut self) -> std::io::Result<bool> {
        if self.held {
            self.held = false;
            return Ok(true);
        }
        self.line.clear();
        let n = if self.tail_at < self.tail.len() {
            // The rest of a line after a lone `\r`, up to the next one (its number stays:
            // lines are counted by `\n`, as everywhere else).
            let rest = &self.tail[self.tail_at..];
            let end = lone_cr(rest).map_or(rest.len(), |cr| cr + 1);
            self.line.extend_from_slice(&rest[..end]);
            self.tail_at += end;
            end
        } else {
            self.tail.clear();
            self.tail_at = 0;
            // One line never holds more than an object may: a 1 GiB `value:` line stops here.
            let limit = u64::try_from(self.cap)
                .unwrap_or(u64::MAX)
                .saturating_add(1);
            let n = (&mut self.reader)
                .take(limit)
                .read_until(b'\n', &mut self.line)?;
            if n > 0 {
                self.line_no += 1;
            }
            if self.line.len() > self.cap {
                self.too_large = true;
            }
            if let Some(cr) = lone_cr(&self.line) {
                self.tail.extend_from_slice(&self.line[cr + 1..]);
                self.line.truncate(cr + 1);
            }
            n
        };
        if self.line.len() + self.doc.len() + self.item.len() + self.rest.len() > self.cap {
            self.too_large = true;
        }
        if n > 0 && self.mode == Mode::Shape {
            let body = body(&self.line);
            self.class = self.gate.feed(body);
        }
        Ok(n > 0)
    }

    fn body(&self) -> &[u8] {
        body(&self.line)
    }

    fn is_marker(&self) -> bool {
        let b = self.body();
        (b.starts_with(b"---") || b.starts_with(b"..."))
            && b.get(3).is_none_or(|&c| c == b' ' || c == b'\t')
    }

    fn indent(&self) -> usize {
        self.line.iter().take_while(|&&b| b == b' ').count()
    }

    /// Adds the line to the document, unread (in [`Mode::Whole`]).
    fn add_to_doc(&mut self) {
        let text = self.body().trim_ascii_start();
        // Before any content, a line of spaces or a comment is not (directives may follow);
        // a comment that is not printable UTF-8 is, for the parser to refuse.
        self.doc_content |= !text.is_empty()
            && (!text.starts_with(b"#")
                || !std::str::from_utf8(text).is_ok_and(crate::codec::yaml::yaml_printable));
        self.doc.extend_from_slice(&self.line);
    }

    /// Hands out the item being read, if any.
    fn flush_item(&mut self) -> Option<YamlPiece> {
        if self.item.is_empty() {
            return None;
        }
        self.text.clear();
        std::mem::swap(&mut self.text, &mut self.item);
        self.shaped = true;
        Some(YamlPiece::Item(self.item_first))
    }

    /// From the current line, a line of the items outside the shape, on: the item being read,
    /// indented back to where it was, and the line start the `items:` document the rest of the
    /// document goes to.
    fn start_rest(&mut self, dash: usize) {
        self.mode = Mode::Rest;
        if self.item.is_empty() {
            self.item_first = self.line_no;
        }
        self.rest.clear();
        self.rest.extend_from_slice(b"items:\n");
        let mut first = vec![b' '; dash];
        first.extend_from_slice(b"- ");
        // Every line of the item that is not blank or a comment was indented `dash + 2` or
        // more, and lost exactly that: it is back where it was.
        indented(&mut self.rest, &self.item, &first, &vec![b' '; dash + 2]);
        self.item.clear();
        self.rest_first = self.item_first.saturating_sub(1);
        self.rest.extend_from_slice(&self.line);
    }

    /// Ends the document: hands out its text unless its items were streamed.
    fn end_document(&mut self) -> Option<YamlPiece> {
        if self.items_pending {
            // `items:` with nothing after it.
            self.doc.extend_from_slice(b"items:\n");
        }
        let around = self.doc_content.then(|| std::mem::take(&mut self.doc));
        let piece = if self.mode == Mode::Rest {
            // The rest first, then (in input order of what can go wrong) the lines before it
            // (all in the shape: the first line outside it started the rest).
            self.text = std::mem::take(&mut self.rest);
            self.shaped = false;
            // A top-level key the rest repeats from the lines before it (after the items, a
            // second `kind:`) makes the document one the parser refuses: the lines around then
            // carry the rest too, so that they do not read either.
            let around = around.map(|mut doc| {
                if repeats_a_key(&doc, &self.text) {
                    doc.extend_from_slice(&self.text);
                }
                doc
            });
            self.around = around.map(|doc| (doc, self.doc_first));
            Some(YamlPiece::Document(self.rest_first))
        } else if let Some(doc) = around {
            // A streamed document is read around its items too: a line that ended the items
            // early does not read.
            self.text = doc;
            self.shaped = self.mode == Mode::Shape;
            Some(if self.doc_streamed {
                YamlPiece::Around(self.doc_first)
            } else {
                YamlPiece::Document(self.doc_first)
            })
        } else {
            None
        };
        self.doc.clear();
        self.doc_content = false;
        self.doc_streamed = false;
        self.items = None;
        self.items_pending = false;
        self.doc_first = self.line_no + 1;
        self.mode = Mode::Shape;
        self.gate.reset();
        self.directives = false;
        self.directives_end = false;
        piece
    }

    fn next_piece(&mut self) -> std::io::Result<YamlPiece> {
        loop {
            if let Some((doc, first)) = self.around.take() {
                self.text = doc;
                self.shaped = true;
                return Ok(YamlPiece::Around(first));
            }
            if self.eof {
                return Ok(YamlPiece::End);
            }
            let more = self.read_line()?;
            if self.too_large {
                return Ok(YamlPiece::TooLarge(self.line_no));
            }
            if !more {
                if let Some(p) = self.flush_item() {
                    return Ok(p);
                }
                self.eof = true;
                return Ok(self.end_document().unwrap_or(YamlPiece::End));
            }
            if self.is_marker() {
                if let Some(p) = self.flush_item() {
                    self.held = true;
                    return Ok(p);
                }
                let start = self.body().starts_with(b"---");
                let after = self.body()[3..].trim_ascii();
                // Content after the marker: `--- value` opens the next document with it;
                // after `...` it is an error the parser must see, so it goes to the next
                // document too.
                // A comment that is not printable UTF-8 is the parser's to refuse as well.
                let opens_with_content = (!after.is_empty() && !after.starts_with(b"#"))
                    || !std::str::from_utf8(after).is_ok_and(crate::codec::yaml::yaml_printable);
                if start && self.directives && !self.directives_end {
                    // The document the directives above are for starts here.
                    self.directives_end = true;
                    self.doc_content |= opens_with_content;
                    self.doc.extend_from_slice(&self.line);
                    continue;
                }
                let piece = self.end_document();
                if opens_with_content {
                    // `--- value`: the next document starts on this line, marker and all (the
                    // value alone at column 0 could read as a marker itself: `--- ...`), and
                    // is not in the shape; `... value` reaches the parser, which refuses it.
                    self.doc.extend_from_slice(&self.line);
                    self.doc_content = true;
                    self.doc_first = self.line_no;
                    self.mode = Mode::Whole;
                }
                if let Some(p) = piece {
                    return Ok(p);
                }
                continue;
            }
            if !self.doc_content && !self.directives_end && self.line.starts_with(b"%") {
                // A directive, for the document that the next `---` starts: read whole (and
                // handed to the parser even if no `---` follows, which it then refuses).
                self.directives = true;
                self.doc_content = true;
                self.mode = Mode::Whole;
                self.doc.extend_from_slice(&self.line);
                continue;
            }
            match self.mode {
                Mode::Rest => {
                    self.rest.extend_from_slice(&self.line);
                    continue;
                }
                Mode::Whole => {
                    self.add_to_doc();
                    continue;
                }
                Mode::Shape => {}
            }
            if let Some(dash) = self.items {
                match self.class {
                    Line::Node { indent, dash: true } if indent == dash => {
                        if let Some(previous) = self.flush_item() {
                            self.held = true;
                            return Ok(previous);
                        }
                        self.item_first = self.line_no;
                        self.item.extend_from_slice(&self.line[dash + 2..]);
                        continue;
                    }
                    Line::Node { indent, .. } if indent > dash && indent < dash + 2 => {
                        // Not where the item's keys are: the parser decides.
                        self.start_rest(dash);
                        continue;
                    }
                    Line::Out => {
                        self.start_rest(dash);
                        continue;
                    }
                    Line::Node { indent, .. } if indent <= dash => {
                        // Back at the top level: the items are over.
                        self.items = None;
                        if let Some(p) = self.flush_item() {
                            self.held = true;
                            return Ok(p);
                        }
                    }
                    // Deeper, blank, a comment or block scalar content: the item goes on.
                    _ => {
                        let cut = (dash + 2).min(self.indent());
                        self.item.extend_from_slice(&self.line[cut..]);
                        continue;
                    }
                }
            }
            if self.items_pending && matches!(self.class, Line::Node { .. } | Line::Out) {
                self.items_pending = false;
                if let Line::Node {
                    indent: indent @ (0 | 2),
                    dash: true,
                } = self.class
                {
                    self.items = Some(indent);
                    self.doc_streamed = true;
                    self.held = true;
                    // The key stays in what is around the items, with an empty list: a second
                    // `items` is a key twice there, as it is to the parser.
                    self.doc.extend_from_slice(b"items: []\n");
                    continue;
                }
                // Not a block sequence: `items:` was an ordinary key.
                self.doc.extend_from_slice(b"items:\n");
            }
            match self.class {
                Line::Out => {
                    // Outside the shape: the parser reads the document (or what is around
                    // its items) whole, from here on.
                    self.mode = Mode::Whole;
                    self.add_to_doc();
                    continue;
                }
                Line::Node { indent: 0, .. } if matches!(self.body(), b"items:" | b"items: ") => {
                    self.items_pending = true;
                    self.doc_content = true;
                    continue;
                }
                Line::Node { .. } => self.doc_content = true,
                Line::Inner => {}
            }
            self.doc.extend_from_slice(&self.line);
        }
    }
}

/// A line without its line break.
/// Whether the top-level mapping of `rest` has a key, other than `items`, that the top-level
/// mapping of `before` has too (each read as YAML on its own; `false` when either does not read
/// as a mapping: the parser reports that itself).
fn repeats_a_key(before: &[u8], rest: &[u8]) -> bool {
    let keys = |text: &[u8]| -> Option<Vec<String>> {
        let text = std::str::from_utf8(text).ok()?;
        let options = super::yaml_options(text, &DecodeOptions::default());
        let map: std::collections::BTreeMap<String, serde::de::IgnoredAny> =
            serde_saphyr::from_str_with_options(text, options).ok()?;
        Some(map.into_keys().collect())
    };
    let (Some(before), Some(rest)) = (keys(before), keys(rest)) else {
        return false;
    };
    rest.iter().any(|k| k != "items" && before.contains(k))
}

fn body(line: &[u8]) -> &[u8] {
    let l = line.strip_suffix(b"\n").unwrap_or(line);
    l.strip_suffix(b"\r").unwrap_or(l)
}

#[cfg(test)]
mod tests {
    use super::{YamlPiece, YamlSplit};

    /// The pieces the splitter cuts `input` into: their kind, first line and text.
    fn pieces(input: &str) -> Vec<(char, u64, String)> {
        let mut split = YamlSplit::new(input.as_bytes(), 1 << 20);
        let mut out = Vec::new();
        loop {
            let (kind, at) = match split.next_piece().unwrap() {
                YamlPiece::Item(at) => ('i', at),
                YamlPiece::Document(at) => ('d', at),
                YamlPiece::Around(at) => ('a', at),
                YamlPiece::End => return out,
                YamlPiece::TooLarge(at) => ('!', at),
            };
            out.push((kind, at, String::from_utf8_lossy(&split.text).into_owned()));
        }
    }

    const ITEM: &str =
        "- kind: Secret\n  metadata:\n    name: a\n  stringData:\n    value: |\n      x: [1\n";

    #[test]
    fn the_kubectl_shape_is_cut_into_items() {
        let input = format!("apiVersion: v1\nitems:\n{ITEM}{ITEM}kind: List\n");
        let got = pieces(&input);
        let item = "kind: Secret\nmetadata:\n  name: a\nstringData:\n  value: |\n    x: [1\n";
        assert_eq!(
            got,
            [
                ('i', 3, item.to_owned()),
                ('i', 9, item.to_owned()),
                ('a', 1, "apiVersion: v1\nitems: []\nkind: List\n".to_owned()),
            ]
        );
    }

    #[test]
    fn from_a_line_outside_the_shape_the_parser_reads_the_rest() {
        // In the second item: it and all after it are one `items:` document, lines in place.
        let odd = ITEM.replace("name: a", "name: \"a\n    b\"");
        let input = format!("apiVersion: v1\nitems:\n{ITEM}{odd}{ITEM}kind: List\n");
        let got = pieces(&input);
        assert_eq!(got.len(), 3, "{got:?}");
        assert_eq!((got[0].0, got[0].1), ('i', 3));
        assert_eq!(got[1], ('d', 8, format!("items:\n{odd}{ITEM}kind: List\n")));
        assert_eq!(got[2], ('a', 1, "apiVersion: v1\nitems: []\n".to_owned()));
        // Items at column 2 are put back at column 2.
        let indented = |t: &str| t.lines().map(|l| format!("  {l}\n")).collect::<String>();
        let input = format!(
            "items:\n{}{}kind: List\n",
            indented(ITEM),
            indented(&ITEM.replace("name: a", "name: &x a"))
        );
        let got = pieces(&input);
        assert_eq!(
            got[1].2,
            format!(
                "items:\n{}kind: List\n",
                indented(&ITEM.replace("name: a", "name: &x a"))
            )
        );
        // Before the items: the document is read whole.
        let input = format!("apiVersion: &v v1\nitems:\n{ITEM}kind: List\n");
        assert_eq!(pieces(&input), [('d', 1, input.clone())]);
    }
}
