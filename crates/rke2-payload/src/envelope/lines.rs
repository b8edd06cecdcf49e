//! What a YAML line leaves open for the lines after it, so that the streaming splitter can tell
//! a line that starts a new item or key from one that continues a quoted scalar, a flow
//! collection, a block scalar or a plain scalar begun above it.
//!
//! The splitter decides by indentation, and a line inside a quoted scalar or a flow collection
//! may sit at any indentation (the parser accepts `"…` continued at column 0, though the YAML
//! spec asks for more). This scanner knows YAML's tokens only as far as that question needs:
//! where a node starts, quotes and their escapes, brackets, comments, block scalar headers and
//! keys. It never decides what a value means; the parser does.

/// What the lines so far leave open.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
enum Open {
    /// Nothing: the next line starts afresh.
    #[default]
    Nothing,
    /// A quoted scalar (`"` or `'`).
    Quoted(u8),
    /// A flow collection this deep; a quoted scalar inside it; whether a node may start next.
    Flow {
        depth: u32,
        quote: Option<u8>,
        node_start: bool,
    },
    /// A block scalar: the indentation of its parent, and of its content once seen.
    Block {
        parent: isize,
        content: Option<usize>,
    },
    /// A plain scalar, which lines indented more than its parent continue.
    Plain { parent: isize },
}

/// Follows YAML lines one at a time.
#[derive(Debug, Default)]
pub(crate) struct Lines {
    open: Open,
    /// Anchors (`&name`) seen since the start.
    anchors: u64,
    /// A line ended after a key, `-`, `?` or a node's properties: the node they are for starts
    /// on a line below, and a scalar there is continued beyond this indentation.
    pending: Option<isize>,
}

/// Spaces at the start of `line` (tabs are not indentation in YAML).
fn indent(line: &[u8]) -> usize {
    line.iter().take_while(|&&b| b == b' ').count()
}

/// Whether `b` separates tokens.
fn is_space(b: u8) -> bool {
    b == b' ' || b == b'\t'
}

/// Whether `b` is a flow indicator (`,`, `[`, `]`, `{`, `}`).
fn is_flow(b: Option<&u8>) -> bool {
    matches!(b, Some(b',' | b'[' | b']' | b'{' | b'}'))
}

/// Whether the byte at `i` ends a token: a space, a tab or the end of the line.
fn ends_at(line: &[u8], i: usize) -> bool {
    line.get(i).is_none_or(|&b| is_space(b))
}

impl Lines {
    /// Starts afresh (at a document marker).
    pub(crate) fn reset(&mut self) {
        self.open = Open::Nothing;
        self.anchors = 0;
        self.pending = None;
    }

    /// How many anchors (`&name`) the lines since the start define: a node that uses one
    /// (`*name`) can be read only with them.
    pub(crate) fn anchors(&self) -> u64 {
        self.anchors
    }

    /// Reads one line (its line break may be included) and says whether it continues what the
    /// lines before it left open: such a line is content, whatever its indentation, never a
    /// new item, key or comment.
    pub(crate) fn feed(&mut self, line: &[u8]) -> bool {
        let line = line.strip_suffix(b"\n").unwrap_or(line);
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        let at = indent(line);
        let blank = line[at..].iter().all(|&b| is_space(b));
        match self.open {
            Open::Nothing => {
                // A comment line leaves a node still to come where it was.
                if !blank && line[at] != b'#' {
                    let parent = self.pending.take().unwrap_or(at as isize - 1);
                    self.block(line, at, parent);
                }
                false
            }
            Open::Quoted(quote) => {
                if let Some(end) = quoted_end(line, 0, quote) {
                    self.after_node(line, end, at as isize - 1);
                }
                true
            }
            Open::Flow {
                depth,
                quote,
                node_start,
            } => {
                if let Some(end) = self.flow(line, 0, depth, quote, node_start) {
                    self.after_node(line, end, at as isize - 1);
                }
                true
            }
            Open::Block { parent, content } => {
                if blank {
                    return true;
                }
                if at as isize > parent && content.is_none_or(|c| at >= c) {
                    if content.is_none() {
                        self.open = Open::Block {
                            parent,
                            content: Some(at),
                        };
                    }
                    return true;
                }
                self.block(line, at, at as isize - 1);
                false
            }
            Open::Plain { parent } => {
                if blank {
                    return true;
                }
                if at as isize > parent && line[at] != b'#' {
                    // More of the scalar (text after a comment in it, or `: `, would be an
                    // error the parser reports).
                    return true;
                }
                self.block(line, at, at as isize - 1);
                false
            }
        }
    }

    /// Scans `line` from `i`, where a node may start in block context; `parent` is the
    /// indentation a plain or block scalar starting here must be continued beyond.
    fn block(&mut self, line: &[u8], mut i: usize, mut parent: isize) {
        // Nothing open unless a node below says so.
        self.open = Open::Nothing;
        self.pending = None;
        // Whether the node starting at `i` is the value of a key on this line.
        let mut value = false;
        // Where the node's properties (anchor, tag) start: a key is indented from there.
        let mut props: Option<usize> = None;
        // A key, `-`, `?` or properties were read: a node is to come.
        let mut expect = false;
        loop {
            while line.get(i).is_some_and(|&b| is_space(b)) {
                i += 1;
            }
            let Some(&b) = line.get(i) else {
                // The node, if any, is on the lines below.
                self.pending = expect.then_some(parent);
                return;
            };
            match b {
                b'-' | b'?' | b':' if ends_at(line, i + 1) => {
                    parent = i as isize;
                    value = b == b':';
                    props = None;
                    expect = true;
                    i += 1;
                }
                b'#' => {
                    self.pending = expect.then_some(parent);
                    return;
                }
                b'"' | b'\'' | b'[' | b'{' => {
                    // A quoted scalar or a flow collection: open at the end of the line, or
                    // closed here and then a key if `:` follows.
                    let end = if b == b'"' || b == b'\'' {
                        let end = quoted_end(line, i + 1, b);
                        if end.is_none() {
                            self.open = Open::Quoted(b);
                        }
                        end
                    } else {
                        self.flow(line, i + 1, 1, None, true)
                    };
                    let Some(next) = end.and_then(|end| key_value(line, end)) else {
                        return;
                    };
                    parent = props.take().unwrap_or(i) as isize;
                    value = true;
                    expect = true;
                    i = next;
                }
                b'|' | b'>' => {
                    let digit = line[i + 1..]
                        .iter()
                        .take_while(|&&c| c.is_ascii_digit() || c == b'+' || c == b'-')
                        .find(|c| c.is_ascii_digit())
                        .map(|&c| usize::from(c - b'0'));
                    self.open = Open::Block {
                        parent,
                        content: digit.map(|d| parent.max(0) as usize + d),
                    };
                    return;
                }
                b'&' | b'!' => {
                    // An anchor or a tag: the node follows it.
                    self.anchors += u64::from(b == b'&');
                    props.get_or_insert(i);
                    expect = true;
                    i = property_end(line, i);
                }
                _ if value => {
                    // A plain scalar (or an alias) as a key's value, which lines indented
                    // more than its key may continue. Its text is not read: `: ` in it, or a
                    // line below a comment that ends it, would be an error the parser reports.
                    self.open = Open::Plain { parent };
                    return;
                }
                _ => match plain_end(line, i) {
                    // A plain scalar (or an alias) that is a key: its value follows.
                    PlainEnd::Key(colon) => {
                        parent = props.take().unwrap_or(i) as isize;
                        value = true;
                        expect = true;
                        i = colon + 1;
                    }
                    PlainEnd::Comment => return,
                    PlainEnd::Line => {
                        self.open = Open::Plain { parent };
                        return;
                    }
                },
            }
        }
    }

    /// Scans a flow collection from `i`; the end (exclusive) of the collection when it closes
    /// on this line, else `None` with the state for the next line kept.
    fn flow(
        &mut self,
        line: &[u8],
        mut i: usize,
        mut depth: u32,
        mut quote: Option<u8>,
        mut node_start: bool,
    ) -> Option<usize> {
        // Just after a quoted scalar or a collection: a `:` then is a value indicator even
        // without a space after it (`{"a":"b"}`).
        let mut adjacent = false;
        loop {
            if let Some(q) = quote {
                match quoted_end(line, i, q) {
                    Some(end) => {
                        i = end;
                        quote = None;
                        node_start = false;
                        adjacent = true;
                    }
                    None => break,
                }
            }
            let Some(&b) = line.get(i) else { break };
            let was_adjacent = std::mem::take(&mut adjacent);
            match b {
                b'"' | b'\'' if node_start => {
                    quote = Some(b);
                    i += 1;
                    continue;
                }
                b'[' | b'{' => {
                    depth = depth.saturating_add(1);
                    node_start = true;
                }
                b']' | b'}' => {
                    depth -= 1;
                    node_start = false;
                    adjacent = true;
                    if depth == 0 {
                        self.open = Open::Nothing;
                        return Some(i + 1);
                    }
                }
                b',' => node_start = true,
                // A value or key indicator only before a space or a flow indicator (else part
                // of a plain scalar: `a:b`, `x?y`), or a value indicator right after a node.
                b':' if was_adjacent || ends_at(line, i + 1) || is_flow(line.get(i + 1)) => {
                    node_start = true;
                }
                b'?' if node_start && ends_at(line, i + 1) => {}
                b'#' if i == 0 || is_space(line[i - 1]) => break,
                b' ' | b'\t' => adjacent = was_adjacent,
                b'&' | b'!' if node_start => {
                    self.anchors += u64::from(b == b'&');
                    i = property_end(line, i);
                    continue;
                }
                _ => node_start = false,
            }
            i += 1;
        }
        self.open = Open::Flow {
            depth,
            quote,
            node_start,
        };
        None
    }

    /// After a quoted scalar or flow collection ending at `end`: a key if `:` follows, else
    /// the node is done.
    fn after_node(&mut self, line: &[u8], end: usize, parent: isize) {
        self.open = Open::Nothing;
        if let Some(next) = key_value(line, end) {
            self.block(line, next, parent);
        }
    }
}

/// Where an anchor (`&name`) or a tag (`!tag`, `!<verbatim>`) starting at `i` ends
/// (exclusive): names end at a space or a flow indicator (`&m{a: 1}` is an anchor and a
/// mapping); a verbatim tag at its `>`, whatever it holds.
fn property_end(line: &[u8], i: usize) -> usize {
    if line.get(i) == Some(&b'!') && line.get(i + 1) == Some(&b'<') {
        return memchr::memchr(b'>', &line[i..]).map_or(line.len(), |end| i + end + 1);
    }
    let mut end = i + 1;
    while line
        .get(end)
        .is_some_and(|&c| !is_space(c) && !is_flow(Some(&c)))
    {
        end += 1;
    }
    end
}

/// Where a quoted scalar whose text starts at `i` ends (exclusive), if on this line.
fn quoted_end(line: &[u8], mut i: usize, quote: u8) -> Option<usize> {
    loop {
        let found = if quote == b'"' {
            memchr::memchr2(b'"', b'\\', line.get(i..)?)?
        } else {
            memchr::memchr(b'\'', line.get(i..)?)?
        };
        let at = i + found;
        match line[at] {
            b'\\' => i = at + 2,
            b'\'' if line.get(at + 1) == Some(&b'\'') => i = at + 2,
            _ => return Some(at + 1),
        }
    }
}

/// After a node ending at `end`: where the value starts if `:` follows it (a key).
fn key_value(line: &[u8], mut end: usize) -> Option<usize> {
    while line.get(end).is_some_and(|&b| is_space(b)) {
        end += 1;
    }
    (line.get(end) == Some(&b':')).then_some(end + 1)
}

/// How a plain scalar that is not a key's value ends on its line.
enum PlainEnd {
    /// At the `:` (then a space, a tab or the end) at this offset: it is a key.
    Key(usize),
    /// At a comment (`#` after a space or a tab).
    Comment,
    /// At the end of the line.
    Line,
}

/// How the plain scalar starting at `i` ends on its line.
fn plain_end(line: &[u8], i: usize) -> PlainEnd {
    // Keys are short: look at the first bytes one by one (a vector search costs more to set
    // up than that), then at the rest with one.
    let near = line.len().min(i + 64);
    let mut from = i;
    let next = |from: usize| {
        if from < near {
            line[from..near]
                .iter()
                .position(|&b| b == b':' || b == b'#')
                .map(|at| from + at)
                .or_else(|| memchr::memchr2(b':', b'#', &line[near..]).map(|at| near + at))
        } else {
            memchr::memchr2(b':', b'#', &line[from..]).map(|at| from + at)
        }
    };
    while let Some(at) = next(from) {
        if line[at] == b':' {
            if ends_at(line, at + 1) {
                return PlainEnd::Key(at);
            }
        } else if at > i && is_space(line[at - 1]) {
            return PlainEnd::Comment;
        }
        from = at + 1;
    }
    PlainEnd::Line
}

#[cfg(test)]
mod tests {
    use super::Lines;

    /// Which lines of `text` continue what the lines before them left open.
    fn continued(text: &str) -> Vec<usize> {
        let mut lines = Lines::default();
        text.lines()
            .enumerate()
            .filter(|(_, l)| lines.feed(l.as_bytes()))
            .map(|(n, _)| n + 1)
            .collect()
    }

    #[test]
    fn quoted_scalars_run_on_at_any_indentation() {
        assert_eq!(continued("- a: \"x\nkind: y\n- z\"\n  b: 1\n"), [2, 3]);
        assert_eq!(continued("- a: 'it''s\n- more'\n- b\n"), [2]);
        assert_eq!(continued("- a: \"x\\\"\n- y\"\n- b\n"), [2]);
        assert_eq!(continued("- \"k\": \"v\"\n- b\n"), Vec::<usize>::new());
    }

    #[test]
    fn a_quote_inside_a_plain_scalar_or_a_comment_opens_nothing() {
        assert_eq!(continued("- a: it's\n- b\n"), Vec::<usize>::new());
        assert_eq!(continued("- a: b # it's\n- b\n"), Vec::<usize>::new());
        assert_eq!(continued("# \"\n- b\n"), Vec::<usize>::new());
        assert_eq!(continued("- a: x\"y\n- b\n"), Vec::<usize>::new());
    }

    #[test]
    fn flow_collections_run_on_until_they_close() {
        assert_eq!(continued("- a: [1,\n2]\n- b\n"), [2]);
        assert_eq!(continued("- a: {x: \"]\n\", y: [1]}\n- b\n"), [2]);
        assert_eq!(continued("- a: [1] # [\n- b\n"), Vec::<usize>::new());
    }

    #[test]
    fn block_scalars_hide_their_content() {
        assert_eq!(
            continued("- a: |\n    \"x\n\n    y\n  b: 1\n- c\n"),
            [2, 3, 4]
        );
        assert_eq!(continued("- a: >-\n    [x\n- c\n"), [2]);
        // An empty block scalar: the next key is not its content.
        assert_eq!(continued("- a: |\n  b: \"x\ny\"\n"), [3]);
    }

    #[test]
    fn anchors_are_counted_where_a_node_starts() {
        let mut lines = Lines::default();
        for line in [
            "- &a x: 1",
            "- y: [&b 1, c&d]",
            "  z: e&f",
            "  w: |",
            "    &g",
        ] {
            lines.feed(line.as_bytes());
        }
        assert_eq!(lines.anchors(), 2);
        lines.reset();
        assert_eq!(lines.anchors(), 0);
    }

    #[test]
    fn a_block_scalar_header_below_its_key_is_indented_from_the_key() {
        // `|2` on its own line: the content is two columns in from the key, not the header.
        assert_eq!(
            continued("  value:\n    |2\n    #x\n    \"y\n- b\n"),
            [3, 4]
        );
        assert_eq!(continued("  value:\n      |\n    \"y\n- b\n"), [3]);
        assert_eq!(
            continued("  value: # c\n    !!str >-\n     \"y\n- b\n"),
            [3]
        );
        // Properties before a key: the key is indented from them.
        assert_eq!(continued("  !!str value: |\n    \"x\n- b\n"), [2]);
        assert_eq!(continued("  &k value: foo\n    \"bar\n- b\n"), [2]);
    }

    #[test]
    fn flow_indicators_end_properties_and_plain_colons_start_nothing() {
        assert_eq!(
            continued("  m: {name: a, t: !!str}\n- b\n"),
            Vec::<usize>::new()
        );
        assert_eq!(
            continued("  m: {name: a, t: &y}\n- b\n"),
            Vec::<usize>::new()
        );
        assert_eq!(continued("  t: [a:\"b]\n- b\n"), Vec::<usize>::new());
        assert_eq!(continued("  t: [x?'b]\n- b\n"), Vec::<usize>::new());
        assert_eq!(continued("  t: {\"a\":\"b\n\"}\n- b\n"), [2]);
        // An anchor ends at a flow indicator.
        assert_eq!(continued("  metadata: &m{name: a,\n-Y x: y}\n- b\n"), [2]);
        // A verbatim tag may hold flow indicators.
        assert_eq!(continued("  v: {x: !<x]> \"a\n- x\"}\n- b\n"), [2]);
    }

    #[test]
    fn plain_scalars_run_on_below_their_parent() {
        assert_eq!(continued("- a: x\n    \"y\n- b: \"z\nw\"\n"), [2, 4]);
        assert_eq!(continued("- a: x\n  # \"\n- b\n"), Vec::<usize>::new());
    }
}
