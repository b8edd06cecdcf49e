//! Splitting a JSON `List` into its items without parsing them, so each item can be parsed on
//! its own from a borrowed slice (serde_json reads a slice several times faster than a reader).
//!
//! The scanner knows JSON's structure only: strings (with escapes), nesting, and the key
//! `items` of the top-level object. It never decides what a value means; serde_json does: each
//! item is parsed alone, and so is the top-level object without its items (the around piece),
//! so that what the in-memory parser refuses there (a raw control character in a string, a
//! `kind` that is not a string, a key twice) is refused here too.

use std::io::Read;

/// JSON's whitespace: space, tab, line feed, carriage return (not a form feed, which
/// `is_ascii_whitespace` also takes and JSON parsers refuse).
fn is_json_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r')
}

/// Reads blocks of this size.
const BLOCK: usize = 1 << 18;

/// What the splitter found next.
pub(crate) enum Piece<'b> {
    /// One element of the top-level object's `items` array, its byte offset in the input and
    /// the line it starts on (1-based).
    Item(u64, u64, &'b [u8]),
    /// After the items: the top-level object with an empty `items` array, its byte offset and
    /// line (where the object starts).
    Around(u64, u64, &'b [u8]),
    /// The input is a whole object that is not a `List` with `items` (a Secret, or bare
    /// Ignition): here it is, entire.
    Whole(&'b [u8]),
    /// One object of a JSON sequence (objects one after another, as `jq -c` and
    /// `kubectl get -w -o json` write them) that is not a `List` with `items`: its byte offset,
    /// its line, its text.
    Object(u64, u64, &'b [u8]),
    /// The end of the input.
    End,
}

/// Why splitting failed.
#[derive(Debug)]
pub(crate) enum SplitError {
    /// Reading failed.
    Io(std::io::Error),
    /// The input is not well-formed JSON (at this byte offset of the input).
    Syntax(u64),
    /// The item being read (starting before this byte offset) grew past the cap.
    TooLarge(u64),
}

pub(crate) struct JsonItems<R> {
    reader: R,
    buf: Vec<u8>,
    /// Bytes of the input dropped from the front of `buf`.
    dropped: u64,
    pos: usize,
    eof: bool,
    state: Where,
    /// Start of the last item handed out, to drop it on the next call.
    last_end: usize,
    /// The most bytes one item may hold.
    cap: usize,
    /// Line breaks in the input before `buf[counted]`.
    lines: u64,
    counted: usize,
    /// The top-level object without its items, as far as it was read.
    around: Vec<u8>,
    /// Where in `buf` the bytes of the top-level object not yet in `around` start (`None`
    /// inside the items).
    around_from: Option<usize>,
    /// The byte offset and line of the top-level object.
    around_at: (u64, u64),
    /// Whether the input is a sequence of top-level values (a second one was seen).
    sequence: bool,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Where {
    /// Before the top-level `{`.
    Start,
    /// Inside the top-level object, expecting a key (or `}`).
    TopKey,
    /// Inside `items`, expecting an element (or `]` when none came yet).
    Items,
    /// Inside `items` after an element, expecting `,` or `]` (JSON needs the comma: an element
    /// right after another, or garbage between them, is a syntax error as the parser says).
    ItemsNext,
    /// After the `items` array, inside the top-level object.
    AfterItems,
    /// Done.
    Done,
}

impl<R: Read> JsonItems<R> {
    pub(crate) fn new(reader: R, cap: usize) -> Self {
        JsonItems {
            cap,
            reader,
            buf: Vec::with_capacity(BLOCK * 3),
            dropped: 0,
            pos: 0,
            eof: false,
            state: Where::Start,
            last_end: 0,
            lines: 0,
            counted: 0,
            around: Vec::new(),
            around_from: None,
            around_at: (0, 1),
            sequence: false,
        }
    }

    /// Counts the line breaks up to `buf[upto]` (not before what was counted).
    fn count_lines(&mut self, upto: usize) {
        if upto > self.counted {
            self.lines += memchr::memchr_iter(b'\n', &self.buf[self.counted..upto]).count() as u64;
            self.counted = upto;
        }
    }

    /// Byte offset in the input of the current position.
    pub(crate) fn offset(&self) -> u64 {
        self.dropped + self.pos as u64
    }

    fn fill(&mut self) -> Result<bool, SplitError> {
        if self.eof {
            return Ok(false);
        }
        // The buffer holds the item being read and at most two blocks more (see `compact`).
        if self.buf.len() > self.cap.saturating_add(2 * BLOCK) {
            return Err(SplitError::TooLarge(self.offset()));
        }
        // At most one block, read straight into the buffer, which keeps its size from then on
        // (growing it as the data came in touched fresh pages on every read).
        let len = self.buf.len();
        self.buf.resize(len + BLOCK, 0);
        let n = loop {
            match self.reader.read(&mut self.buf[len..]) {
                Ok(n) => break n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    self.buf.truncate(len);
                    return Err(SplitError::Io(e));
                }
            }
        };
        self.buf.truncate(len + n);
        if n == 0 {
            self.eof = true;
        }
        Ok(n > 0)
    }

    /// Copies the top-level object's bytes up to `buf[upto]` into `around`.
    fn keep_around(&mut self, upto: usize) {
        if let Some(from) = self.around_from {
            self.around.extend_from_slice(&self.buf[from..upto]);
            self.around_from = Some(upto);
        }
    }

    /// Drops consumed bytes from the front, once they are a good share of the buffer.
    fn compact(&mut self, keep_from: usize) {
        if keep_from > BLOCK {
            if self.around_from.is_some() {
                self.keep_around(keep_from);
                self.around_from = Some(0);
            }
            self.count_lines(keep_from);
            self.counted -= keep_from;
            self.buf.drain(..keep_from);
            self.dropped += keep_from as u64;
            self.pos -= keep_from;
        }
    }

    fn skip_ws(&mut self) -> Result<Option<u8>, SplitError> {
        loop {
            while let Some(&b) = self.buf.get(self.pos) {
                if is_json_space(b) {
                    self.pos += 1;
                } else {
                    return Ok(Some(b));
                }
            }
            if !self.fill()? {
                return Ok(None);
            }
        }
    }

    /// The end (exclusive) of the JSON value starting at `start`, reading more as needed. The
    /// scan resumes where it stopped, so a long value is scanned once.
    fn value_end(&mut self, start: usize) -> Result<usize, SplitError> {
        let mut scan = Scanner::new(start);
        loop {
            match scan.resume(&self.buf) {
                Scan::Done(end) => return Ok(end),
                Scan::Bad(at) => return Err(SplitError::Syntax(self.dropped + at as u64)),
                Scan::More => {
                    if !self.fill()? {
                        // A scalar may end at the end of the input.
                        return match scan_value_at_eof(&self.buf, start) {
                            Some(end) => Ok(end),
                            None => Err(SplitError::Syntax(self.dropped + self.buf.len() as u64)),
                        };
                    }
                }
            }
        }
    }

    /// The end of a top-level object without items: the whole input, or one object of a
    /// sequence (another object follows, or one came before).
    fn object_without_items(&mut self) -> Result<Piece<'_>, SplitError> {
        self.pos += 1;
        let end = self.pos;
        let next = self.skip_ws()?;
        if next.is_none() && !self.sequence {
            self.state = Where::Done;
            // The input entire, its whitespace too, as the in-memory parser reads it.
            return Ok(Piece::Whole(&self.buf));
        }
        self.next_of_sequence(next)?;
        self.last_end = end;
        let (at, line) = self.around_at;
        let start = usize::try_from(at - self.dropped).unwrap_or(0);
        Ok(Piece::Object(at, line, &self.buf[start..end]))
    }

    /// After a top-level value, with `next` the byte that follows it: the end of the input, or
    /// the next object of a sequence (anything else is a syntax error there).
    fn next_of_sequence(&mut self, next: Option<u8>) -> Result<(), SplitError> {
        match next {
            None => self.state = Where::Done,
            Some(b'{') => {
                self.sequence = true;
                self.state = Where::Start;
                self.around_from = None;
            }
            Some(_) => return Err(SplitError::Syntax(self.offset())),
        }
        Ok(())
    }

    /// The next piece.
    pub(crate) fn next_piece(&mut self) -> Result<Piece<'_>, SplitError> {
        if matches!(self.state, Where::Items | Where::ItemsNext)
            || (self.sequence && self.state == Where::Start)
        {
            self.compact(self.last_end);
        }
        loop {
            match self.state {
                Where::Done => return Ok(Piece::End),
                Where::Start => match self.skip_ws()? {
                    None if self.sequence => return Ok(Piece::End),
                    Some(b'{') => {
                        self.around.clear();
                        self.count_lines(self.pos);
                        self.around_at = (self.offset(), self.lines + 1);
                        self.around_from = Some(self.pos);
                        self.pos += 1;
                        self.state = Where::TopKey;
                    }
                    Some(_) | None => {
                        return Err(SplitError::Syntax(self.offset()));
                    }
                },
                Where::TopKey => match self.skip_ws()? {
                    Some(b'}') => return self.object_without_items(),
                    Some(b',') => self.pos += 1,
                    Some(b'"') => {
                        let key_start = self.pos;
                        let key_end = self.value_end(key_start)?;
                        let is_items = is_items_key(&self.buf[key_start..key_end])
                            .ok_or(SplitError::Syntax(self.dropped + key_start as u64))?;
                        self.pos = key_end;
                        if self.skip_ws()? != Some(b':') {
                            return Err(SplitError::Syntax(self.offset()));
                        }
                        self.pos += 1;
                        match self.skip_ws()? {
                            Some(b'[') if is_items => {
                                self.pos += 1;
                                self.state = Where::Items;
                                // The items are not part of the around piece.
                                self.keep_around(self.pos);
                                self.around_from = None;
                                // What came before the items is not needed any more.
                                self.last_end = self.pos;
                                self.compact(self.pos);
                            }
                            Some(_) => {
                                let end = self.value_end(self.pos)?;
                                self.pos = end;
                            }
                            None => return Err(SplitError::Syntax(self.offset())),
                        }
                    }
                    _ => return Err(SplitError::Syntax(self.offset())),
                },
                Where::ItemsNext => match self.skip_ws()? {
                    Some(b']') => {
                        self.around_from = Some(self.pos);
                        self.pos += 1;
                        self.state = Where::AfterItems;
                    }
                    Some(b',') => {
                        self.pos += 1;
                        // After a comma an element must come (no trailing comma in JSON).
                        if matches!(self.skip_ws()?, Some(b']' | b',') | None) {
                            return Err(SplitError::Syntax(self.offset()));
                        }
                        self.state = Where::Items;
                    }
                    _ => return Err(SplitError::Syntax(self.offset())),
                },
                Where::Items => match self.skip_ws()? {
                    Some(b']') => {
                        self.around_from = Some(self.pos);
                        self.pos += 1;
                        self.state = Where::AfterItems;
                    }
                    Some(b',') => return Err(SplitError::Syntax(self.offset())),
                    Some(_) => {
                        let start = self.pos;
                        let end = self.value_end(start)?;
                        self.pos = end;
                        self.last_end = end;
                        self.state = Where::ItemsNext;
                        let offset = self.dropped + start as u64;
                        self.count_lines(start);
                        let line = self.lines + 1;
                        return Ok(Piece::Item(offset, line, &self.buf[start..end]));
                    }
                    None => return Err(SplitError::Syntax(self.offset())),
                },
                Where::AfterItems => match self.skip_ws()? {
                    Some(b'}') => {
                        self.pos += 1;
                        self.keep_around(self.pos);
                        let end = self.pos;
                        match self.skip_ws()? {
                            None => self.state = Where::Done,
                            next => {
                                self.next_of_sequence(next)?;
                                self.last_end = end;
                            }
                        }
                        let (at, line) = self.around_at;
                        return Ok(Piece::Around(at, line, &self.around));
                    }
                    Some(b',') => {
                        self.pos += 1;
                        // Another top-level key after the items: skip it and its value.
                        if self.skip_ws()? != Some(b'"') {
                            return Err(SplitError::Syntax(self.offset()));
                        }
                        let end = self.value_end(self.pos)?;
                        self.pos = end;
                        if self.skip_ws()? != Some(b':') {
                            return Err(SplitError::Syntax(self.offset()));
                        }
                        self.pos += 1;
                        if self.skip_ws()?.is_none() {
                            return Err(SplitError::Syntax(self.offset()));
                        }
                        let end = self.value_end(self.pos)?;
                        self.pos = end;
                        self.compact(self.pos);
                        if self.around.len() > self.cap {
                            return Err(SplitError::TooLarge(self.offset()));
                        }
                    }
                    _ => return Err(SplitError::Syntax(self.offset())),
                },
            }
        }
    }
}

/// Whether a key (a JSON string, quotes included) is `items`, escapes decoded; `None` if it
/// is not a well-formed string.
fn is_items_key(key: &[u8]) -> Option<bool> {
    if memchr::memchr(b'\\', key).is_none() {
        return Some(key == b"\"items\"");
    }
    serde_json::from_slice::<String>(key)
        .ok()
        .map(|key| key == "items")
}

enum Scan {
    Done(usize),
    More,
    Bad(usize),
}

/// A resumable scan for the end of one JSON value (structure only).
struct Scanner {
    start: usize,
    i: usize,
    depth: usize,
    in_string: bool,
}

impl Scanner {
    fn new(start: usize) -> Self {
        Scanner {
            start,
            i: start,
            depth: 0,
            in_string: false,
        }
    }

    fn resume(&mut self, buf: &[u8]) -> Scan {
        let Some(&first) = buf.get(self.start) else {
            return Scan::More;
        };
        if !matches!(first, b'"' | b'{' | b'[') {
            if matches!(first, b'}' | b']' | b',' | b':') {
                return Scan::Bad(self.start);
            }
            // A number, true, false or null: ends at a delimiter.
            return match buf[self.i..]
                .iter()
                .position(|&b| matches!(b, b',' | b'}' | b']' | b':') || is_json_space(b))
            {
                Some(n) => Scan::Done(self.i + n),
                None => {
                    self.i = buf.len();
                    Scan::More
                }
            };
        }
        while self.i < buf.len() {
            if self.in_string {
                match memchr::memchr2(b'"', b'\\', &buf[self.i..]) {
                    None => {
                        self.i = buf.len();
                        return Scan::More;
                    }
                    Some(rel) => {
                        let at = self.i + rel;
                        if buf[at] == b'\\' {
                            if at + 1 >= buf.len() {
                                // The escaped byte has not arrived yet.
                                self.i = at;
                                return Scan::More;
                            }
                            self.i = at + 2;
                            continue;
                        }
                        self.in_string = false;
                        self.i = at + 1;
                        if self.depth == 0 {
                            return Scan::Done(self.i);
                        }
                        continue;
                    }
                }
            }
            match buf[self.i] {
                b'"' => self.in_string = true,
                b'{' | b'[' => {
                    self.depth += 1;
                    if self.depth > 512 {
                        return Scan::Bad(self.i);
                    }
                }
                b'}' | b']' => {
                    self.depth = self.depth.saturating_sub(1);
                    if self.depth == 0 {
                        return Scan::Done(self.i + 1);
                    }
                }
                _ => {}
            }
            self.i += 1;
        }
        Scan::More
    }
}

fn scan_value_at_eof(buf: &[u8], start: usize) -> Option<usize> {
    let first = *buf.get(start)?;
    (!matches!(first, b'"' | b'{' | b'[')).then_some(buf.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pieces(input: &str) -> Result<Vec<String>, String> {
        let mut items = JsonItems::new(input.as_bytes(), usize::MAX);
        let mut out = Vec::new();
        loop {
            match items.next_piece() {
                Ok(Piece::Item(_, _, b)) => {
                    out.push(format!("item {}", String::from_utf8_lossy(b)))
                }
                Ok(Piece::Around(_, line, b)) => {
                    out.push(format!("around {line} {}", String::from_utf8_lossy(b)))
                }
                Ok(Piece::Whole(b)) => out.push(format!("whole {}", String::from_utf8_lossy(b))),
                Ok(Piece::Object(_, line, b)) => {
                    out.push(format!("object {line} {}", String::from_utf8_lossy(b)))
                }
                Ok(Piece::End) => return Ok(out),
                Err(SplitError::Syntax(at)) => return Err(format!("syntax at {at}")),
                Err(SplitError::Io(e)) => return Err(e.to_string()),
                Err(SplitError::TooLarge(at)) => return Err(format!("too large at {at}")),
            }
        }
    }

    #[test]
    fn a_sequence_of_objects_is_split_into_them_and_lists_among_them_into_items() {
        assert_eq!(
            pieces("{\"a\":1}\n{\"b\":2}\n").unwrap(),
            ["object 1 {\"a\":1}", "object 2 {\"b\":2}"]
        );
        assert_eq!(
            pieces("{\"items\":[{\"a\":1}]} {\"b\":[\n]}{\"items\":[]}").unwrap(),
            [
                "item {\"a\":1}",
                "around 1 {\"items\":[]}",
                "object 1 {\"b\":[\n]}",
                "around 2 {\"items\":[]}"
            ]
        );
        // One object alone is still the whole input; what follows an object must be one.
        assert_eq!(pieces(" {\"a\":1} ").unwrap(), ["whole  {\"a\":1} "]);
        assert!(pieces("{\"a\":1} 7").is_err());
        assert!(pieces("{\"a\":1}{").is_err());
    }

    #[test]
    fn items_are_separated_by_one_comma_as_json_says() {
        for bad in [
            r#"{"items":[{"a":1} 7]}"#,
            r#"{"items":[{"a":1}{"b":2}]}"#,
            r#"{"items":[{"a":1},]}"#,
            r#"{"items":[,{"a":1}]}"#,
            r#"{"items":[{"a":1},,{"b":2}]}"#,
        ] {
            assert!(pieces(bad).is_err(), "{bad}");
            assert!(
                serde_json::from_str::<serde_json::Value>(bad).is_err(),
                "{bad}"
            );
        }
        assert_eq!(pieces(r#"{"items":[]}"#).unwrap().len(), 1);
        assert_eq!(
            pieces(r#"{"items":[ {"a":1} , {"b":2} ]}"#).unwrap().len(),
            3
        );
    }

    #[test]
    fn splits_items_and_skips_other_keys() {
        let input = r#" {"apiVersion":"v1","items":[{"a":"x}\"]"},
            {"b":[1,{"c":2}]} , 7, "s"], "kind":"List","metadata":{"x":[]}} "#;
        assert_eq!(
            pieces(input).unwrap(),
            [
                r#"item {"a":"x}\"]"}"#,
                r#"item {"b":[1,{"c":2}]}"#,
                "item 7",
                r#"item "s""#,
                r#"around 1 {"apiVersion":"v1","items":[], "kind":"List","metadata":{"x":[]}}"#
            ]
        );
    }

    #[test]
    fn the_object_around_the_items_is_handed_over_without_them() {
        // Its members before and after the items, whatever the blocks they came in; a key
        // spelled with escapes is still `items`.
        let item = format!(r#"{{"v":"{}"}}"#, "A".repeat(BLOCK));
        let input = format!(
            "\n\n  {{\"kind\": \"List\", \"it\\u0065ms\": [{item},\n{item}], \"metadata\": {{\"name\": \"{}\"}}}}",
            "b".repeat(BLOCK)
        );
        let out = pieces(&input).unwrap();
        assert_eq!(out.len(), 3);
        assert_eq!(
            out[2],
            format!(
                "around 3 {{\"kind\": \"List\", \"it\\u0065ms\": [], \"metadata\": {{\"name\": \"{}\"}}}}",
                "b".repeat(BLOCK)
            )
        );
        // A key that is not a well-formed string is an error.
        assert!(pieces("{\"a\\x\": 1, \"items\": []}").is_err());
    }

    #[test]
    fn a_single_object_is_whole() {
        let input = r#"{"kind":"Secret","data":{"value":"eA=="}}"#;
        assert_eq!(pieces(input).unwrap(), [format!("whole {input}")]);
        assert_eq!(
            pieces(r#"{"items":{"a":1}}"#).unwrap(),
            [r#"whole {"items":{"a":1}}"#]
        );
    }

    #[test]
    fn broken_input_is_an_error() {
        for bad in [
            r#"{"items":[{"a":1}"#,
            r#"{"items":[{"a":"#,
            "[1]",
            r#"{"a" 1}"#,
            r#"{"items":[]} x"#,
            "",
        ] {
            assert!(pieces(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn large_inputs_across_blocks() {
        let item = format!(
            r#"{{"kind":"Secret","data":{{"value":"{}"}}}}"#,
            "A".repeat(100_000)
        );
        let input = format!(r#"{{"items":[{}]}}"#, vec![item.clone(); 20].join(","));
        let out = pieces(&input).unwrap();
        assert_eq!(out.len(), 21);
        assert!(out[..20].iter().all(|p| p == &format!("item {item}")));
        assert_eq!(out[20], r#"around 1 {"items":[]}"#);
    }
}
