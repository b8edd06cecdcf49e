//! The lexer and parser, following Go's `text/template/parse` (`lex.go`, `parse.go`): the same
//! tokens, trim markers, comments, declarations, control structures and parse-time checks
//! (undefined functions and variables, `break` outside `range`, non-executable pipeline stages).

use std::collections::HashMap;
use std::rc::Rc;

use super::value::{go_parse_float, go_parse_int};
use super::{TemplateError, excerpt, funcs, limits, line_col};

/// A parsed template: the main body and the `define`d / `block` templates by name.
#[derive(Debug, Default)]
pub(crate) struct Parsed {
    /// The main template's nodes.
    pub(crate) root: Vec<Node>,
    /// The associated templates (`define`, `block`).
    pub(crate) defines: HashMap<String, Rc<Vec<Node>>>,
}

/// A node of a template body.
#[derive(Debug)]
pub(crate) enum Node {
    /// Literal text.
    Text(String),
    /// `{{ pipeline }}`: prints the value unless the pipeline declares variables.
    Action(Pipe),
    /// `{{ if }}`, with the `else` branch (an `else if` is a nested `If`).
    If(Pipe, Vec<Node>, Vec<Node>),
    /// `{{ range }}`, with the `else` branch for an empty collection.
    Range(Pipe, Vec<Node>, Vec<Node>),
    /// `{{ with }}`, with the `else` branch.
    With(Pipe, Vec<Node>, Vec<Node>),
    /// `{{ template "name" pipeline }}` (byte offset, name, argument).
    Template(usize, String, Option<Pipe>),
    /// `{{ break }}` (byte offset).
    Break(#[allow(dead_code, reason = "the place, for messages")] usize),
    /// `{{ continue }}` (byte offset).
    Continue(#[allow(dead_code, reason = "the place, for messages")] usize),
}

/// A pipeline: optional variable declarations, then commands joined by `|`.
#[derive(Debug)]
pub(crate) struct Pipe {
    /// Byte offset of the pipeline.
    pub(crate) pos: usize,
    /// Declared or assigned variables (`$x :=`, `$i, $e :=`).
    pub(crate) decl: Vec<String>,
    /// `=` rather than `:=`.
    pub(crate) assign: bool,
    /// The commands.
    pub(crate) cmds: Vec<Cmd>,
}

/// One command of a pipeline: a function or value and its arguments.
#[derive(Debug)]
pub(crate) struct Cmd {
    /// Byte offset of the command.
    pub(crate) pos: usize,
    /// The operands (the first is the function when it is an identifier).
    pub(crate) args: Vec<Arg>,
}

/// A number literal, with the interpretations Go's parser gives it.
#[derive(Debug)]
pub(crate) struct Num {
    /// The literal as written.
    pub(crate) text: String,
    /// Its value as an integer, if it is one (`3`, `0x1F`, `'a'`, `3.0`).
    pub(crate) int: Option<i64>,
    /// Its value as a float, if it has one.
    pub(crate) float: Option<f64>,
}

impl Num {
    /// Go's `idealConstant`: a float when written with `.`/`e`/`p` (and not hex), else an int.
    pub(crate) fn is_float_literal(&self) -> bool {
        let t = self.text.to_ascii_lowercase();
        let hex = t.trim_start_matches(['+', '-']).starts_with("0x");
        let rune = t.starts_with('\'');
        !rune && ((!hex && t.contains(['.', 'e'])) || (hex && t.contains('p')))
    }
}

/// An operand.
#[derive(Debug)]
pub(crate) enum Arg {
    /// `.`
    Dot(usize),
    /// `nil`
    Nil(usize),
    /// `true` / `false`
    Bool(bool),
    /// A number or character literal.
    Number(usize, Num),
    /// A string literal (already unquoted).
    Str(Rc<str>),
    /// `.a.b` (byte offset, field names).
    Field(usize, Vec<String>),
    /// `$x.a.b` (byte offset, variable name, field names).
    Var(usize, String, Vec<String>),
    /// A function name.
    Func(usize, String),
    /// `( pipeline )`.
    Pipe(usize, Box<Pipe>),
    /// `term.a.b` where the term is a function or a parenthesised pipeline.
    Chain(usize, Box<Arg>, Vec<String>),
}

/// A token of the lexer.
#[derive(Debug, Clone, PartialEq)]
enum Tok {
    /// Literal text (already trimmed).
    Text(String),
    /// `{{`
    Left,
    /// `}}`
    Right,
    /// White space inside an action.
    Space,
    /// An identifier or keyword.
    Ident(String),
    /// `.name` (without the dot).
    Field(String),
    /// `.`
    Dot,
    /// `$name` (with the `$`).
    Var(String),
    /// A quoted or raw string, unquoted.
    Str(String),
    /// A number or character literal, as written.
    Number(String),
    /// `|`
    Pipe,
    /// `(`
    LParen,
    /// `)`
    RParen,
    /// `:=`
    Declare,
    /// `=`
    Assign,
    /// `,`
    Comma,
    /// Any other printable ASCII character (Go's `itemChar`).
    Char(char),
    /// End of input.
    Eof,
}

/// The parse error at byte `offset` of `text`.
fn error_at(text: &str, offset: usize, message: String) -> TemplateError {
    let (line, column) = line_col(text, offset);
    TemplateError::Parse {
        offset,
        line,
        column,
        message,
    }
}

/// Go's `isSpace` of the lexer: the characters trim markers remove.
fn is_space(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\r' | '\n')
}

/// Go's `isAlphaNumeric`.
fn is_alnum(c: char) -> bool {
    c == '_' || c.is_alphanumeric()
}

/// The lexer over the whole template.
struct Lexer<'a> {
    /// The template.
    src: &'a str,
    /// The current byte offset.
    pos: usize,
    /// The tokens with their byte offsets.
    toks: Vec<(Tok, usize)>,
}

impl<'a> Lexer<'a> {
    /// The error at the current position.
    fn err(&self, at: usize, message: impl Into<String>) -> TemplateError {
        error_at(self.src, at, message.into())
    }

    /// The rest of the input.
    fn rest(&self) -> &'a str {
        self.src.get(self.pos..).unwrap_or("")
    }

    /// The next character, if any.
    fn peek(&self) -> Option<char> {
        self.rest().chars().next()
    }

    /// Whether the input at the current position is a right delimiter, and its length (with a
    /// trim marker: white space, `-`, `}}`).
    fn at_right_delim(&self) -> Option<(usize, bool)> {
        let rest = self.rest();
        if rest.starts_with("}}") {
            return Some((2, false));
        }
        let mut chars = rest.chars();
        if let Some(c) = chars.next()
            && is_space(c)
            && rest[c.len_utf8()..].starts_with("-}}")
        {
            return Some((c.len_utf8() + 3, true));
        }
        None
    }

    /// Lexes the whole template.
    fn run(mut self) -> Result<Vec<(Tok, usize)>, TemplateError> {
        let mut trim_next = false;
        loop {
            let rest = self.rest();
            let Some(open) = rest.find("{{") else {
                let mut text = rest;
                if trim_next {
                    text = text.trim_start_matches(is_space);
                }
                if !text.is_empty() {
                    self.toks.push((Tok::Text(text.to_owned()), self.pos));
                }
                self.toks.push((Tok::Eof, self.src.len()));
                return Ok(self.toks);
            };
            let after = &rest[open + 2..];
            let left_trim =
                after.starts_with('-') && after[1..].chars().next().is_some_and(is_space);
            let mut text = &rest[..open];
            if trim_next {
                text = text.trim_start_matches(is_space);
            }
            if left_trim {
                text = text.trim_end_matches(is_space);
            }
            if !text.is_empty() {
                self.toks.push((Tok::Text(text.to_owned()), self.pos));
            }
            let action_start = self.pos + open;
            self.pos = action_start + 2 + if left_trim { 2 } else { 0 };
            if self.rest().starts_with("/*") {
                let Some(close) = self.rest().find("*/") else {
                    return Err(self.err(action_start, "unclosed comment"));
                };
                self.pos += close + 2;
                let Some((len, trim)) = self.at_right_delim() else {
                    return Err(self.err(action_start, "comment ends before closing delimiter"));
                };
                self.pos += len;
                trim_next = trim;
                continue;
            }
            self.toks.push((Tok::Left, action_start));
            trim_next = self.inside_action(action_start)?;
        }
    }

    /// Lexes one action up to and including its right delimiter; whether it ends with a trim
    /// marker.
    fn inside_action(&mut self, action_start: usize) -> Result<bool, TemplateError> {
        let mut depth = 0usize;
        loop {
            if let Some((len, trim)) = self.at_right_delim() {
                if depth > 0 {
                    return Err(self.err(self.pos, "unclosed left paren"));
                }
                self.toks.push((Tok::Right, self.pos));
                self.pos += len;
                return Ok(trim);
            }
            let start = self.pos;
            let Some(c) = self.peek() else {
                return Err(self.err(action_start, "unclosed action"));
            };
            if is_space(c) {
                while let Some(c) = self.peek() {
                    if !is_space(c) || self.at_right_delim().is_some_and(|(_, t)| t) {
                        break;
                    }
                    self.pos += c.len_utf8();
                }
                self.toks.push((Tok::Space, start));
                continue;
            }
            self.pos += c.len_utf8();
            let tok = match c {
                '=' => Tok::Assign,
                ':' => {
                    if self.peek() != Some('=') {
                        return Err(self.err(start, "expected :="));
                    }
                    self.pos += 1;
                    Tok::Declare
                }
                '|' => Tok::Pipe,
                '"' => Tok::Str(self.quoted(start)?),
                '`' => {
                    let Some(end) = self.rest().find('`') else {
                        return Err(self.err(start, "unterminated raw quoted string"));
                    };
                    let s = self.rest()[..end].replace('\r', "");
                    self.pos += end + 1;
                    Tok::Str(s)
                }
                '$' => {
                    self.take_while(is_alnum);
                    Tok::Var(self.src[start..self.pos].to_owned())
                }
                '\'' => {
                    loop {
                        match self.peek() {
                            Some('\\') => {
                                self.pos += 1;
                                if let Some(n) = self.peek()
                                    && n != '\n'
                                {
                                    self.pos += n.len_utf8();
                                }
                            }
                            Some('\'') => {
                                self.pos += 1;
                                break;
                            }
                            None | Some('\n') => {
                                return Err(self.err(start, "unterminated character constant"));
                            }
                            Some(n) => self.pos += n.len_utf8(),
                        }
                    }
                    Tok::Number(self.src[start..self.pos].to_owned())
                }
                '.' => {
                    if self.peek().is_some_and(|n| n.is_ascii_digit()) {
                        self.pos = start;
                        self.number()?
                    } else if self.peek().is_some_and(is_alnum) {
                        self.take_while(is_alnum);
                        Tok::Field(self.src[start + 1..self.pos].to_owned())
                    } else {
                        Tok::Dot
                    }
                }
                '+' | '-' | '0'..='9' => {
                    self.pos = start;
                    self.number()?
                }
                '(' => {
                    depth += 1;
                    Tok::LParen
                }
                ')' => {
                    if depth == 0 {
                        return Err(self.err(start, "unexpected right paren"));
                    }
                    depth -= 1;
                    Tok::RParen
                }
                ',' => Tok::Comma,
                c if is_alnum(c) => {
                    self.take_while(is_alnum);
                    let word = &self.src[start..self.pos];
                    let terminated = self.at_right_delim().is_some()
                        || self.peek().is_none_or(|n| {
                            is_space(n) || matches!(n, '.' | ',' | '|' | ':' | ')' | '(')
                        });
                    if !terminated {
                        let n = self.peek().unwrap_or(' ');
                        return Err(self.err(self.pos, format!("bad character {n:?}")));
                    }
                    Tok::Ident(word.to_owned())
                }
                c if c.is_ascii_graphic() => Tok::Char(c),
                c => {
                    return Err(self.err(start, format!("unrecognized character in action: {c:?}")));
                }
            };
            self.toks.push((tok, start));
        }
    }

    /// Advances over characters matching `f`.
    fn take_while(&mut self, f: impl Fn(char) -> bool) {
        while let Some(c) = self.peek() {
            if !f(c) {
                break;
            }
            self.pos += c.len_utf8();
        }
    }

    /// Lexes a number as Go's `scanNumber` does (the parser checks its syntax).
    fn number(&mut self) -> Result<Tok, TemplateError> {
        let start = self.pos;
        if matches!(self.peek(), Some('+' | '-')) {
            self.pos += 1;
        }
        let mut hex = false;
        let rest = self.rest();
        if rest.starts_with("0x") || rest.starts_with("0X") {
            self.pos += 2;
            hex = true;
        } else if rest.starts_with("0o")
            || rest.starts_with("0O")
            || rest.starts_with("0b")
            || rest.starts_with("0B")
        {
            self.pos += 2;
        }
        let digit = |c: char| c.is_ascii_hexdigit() || c == '_';
        self.take_while(|c| {
            if hex {
                digit(c)
            } else {
                c.is_ascii_digit() || c == '_'
            }
        });
        if self.peek() == Some('.') {
            self.pos += 1;
            self.take_while(|c| {
                if hex {
                    digit(c)
                } else {
                    c.is_ascii_digit() || c == '_'
                }
            });
        }
        let exp = if hex { ['p', 'P'] } else { ['e', 'E'] };
        if self.peek().is_some_and(|c| exp.contains(&c)) {
            self.pos += 1;
            if matches!(self.peek(), Some('+' | '-')) {
                self.pos += 1;
            }
            self.take_while(|c| c.is_ascii_digit() || c == '_');
        }
        if self.peek() == Some('i') {
            self.pos += 1;
        }
        if self.peek().is_some_and(is_alnum) {
            self.take_while(is_alnum);
            return Err(self.err(
                start,
                format!(
                    "bad number syntax: {:?}",
                    excerpt(&self.src[start..self.pos])
                ),
            ));
        }
        Ok(Tok::Number(self.src[start..self.pos].to_owned()))
    }

    /// Lexes and unquotes an interpreted string whose opening quote is at `start`.
    fn quoted(&mut self, start: usize) -> Result<String, TemplateError> {
        let body_start = self.pos;
        loop {
            match self.peek() {
                Some('\\') => {
                    self.pos += 1;
                    match self.peek() {
                        Some('\n') | None => {
                            return Err(self.err(start, "unterminated quoted string"));
                        }
                        Some(n) => self.pos += n.len_utf8(),
                    }
                }
                Some('"') => break,
                Some('\n') | None => return Err(self.err(start, "unterminated quoted string")),
                Some(n) => self.pos += n.len_utf8(),
            }
        }
        let body = &self.src[body_start..self.pos];
        self.pos += 1;
        unquote(body, '"').ok_or_else(|| {
            self.err(
                start,
                format!("invalid syntax in string \"{}\"", excerpt(body)),
            )
        })
    }
}

/// Go's `strconv.Unquote` of the body of a `"` string or `'` character constant.
pub(crate) fn unquote(body: &str, quote: char) -> Option<String> {
    let mut bytes: Vec<u8> = Vec::with_capacity(body.len());
    let mut chars = body.chars();
    let push_char = |bytes: &mut Vec<u8>, c: char| {
        let mut buf = [0u8; 4];
        bytes.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
    };
    while let Some(c) = chars.next() {
        if c == quote {
            return None;
        }
        if c != '\\' {
            push_char(&mut bytes, c);
            continue;
        }
        let e = chars.next()?;
        match e {
            'a' => bytes.push(7),
            'b' => bytes.push(8),
            'f' => bytes.push(12),
            'n' => bytes.push(b'\n'),
            'r' => bytes.push(b'\r'),
            't' => bytes.push(b'\t'),
            'v' => bytes.push(11),
            '\\' => bytes.push(b'\\'),
            '\'' | '"' if e == quote => push_char(&mut bytes, e),
            'x' => {
                let h: String = chars.by_ref().take(2).collect();
                if h.len() != 2 {
                    return None;
                }
                bytes.push(u8::from_str_radix(&h, 16).ok()?);
            }
            'u' | 'U' => {
                let n = if e == 'u' { 4 } else { 8 };
                let h: String = chars.by_ref().take(n).collect();
                if h.len() != n {
                    return None;
                }
                push_char(
                    &mut bytes,
                    char::from_u32(u32::from_str_radix(&h, 16).ok()?)?,
                );
            }
            '0'..='7' => {
                let rest: String = chars.by_ref().take(2).collect();
                if rest.len() != 2 {
                    return None;
                }
                let v = u32::from_str_radix(&format!("{e}{rest}"), 8).ok()?;
                bytes.push(u8::try_from(v).ok()?);
            }
            _ => return None,
        }
    }
    Some(String::from_utf8_lossy(&bytes).into_owned())
}

/// Go's `parse.newNumber`: the integer and float readings of a literal.
fn parse_number(text: &str) -> Option<Num> {
    if let Some(body) = text.strip_prefix('\'') {
        let body = body.strip_suffix('\'')?;
        let s = unquote(body, '\'')?;
        let mut chars = s.chars();
        let c = chars.next()?;
        if chars.next().is_some() {
            return None;
        }
        return Some(Num {
            text: text.to_owned(),
            int: Some(i64::from(u32::from(c))),
            float: Some(f64::from(u32::from(c))),
        });
    }
    if text.ends_with('i') {
        return None;
    }
    let int = go_parse_int(text);
    let float = match int {
        Some(i) => Some(i as f64),
        None => go_parse_float(text),
    };
    let int = int.or_else(|| {
        let f = float?;
        (f.fract() == 0.0 && f.abs() < 9.2e18).then_some(f as i64)
    });
    if int.is_none() && float.is_none() {
        return None;
    }
    Some(Num {
        text: text.to_owned(),
        int,
        float,
    })
}

/// The parser over the tokens.
struct Parser<'a> {
    /// The template text (for error positions).
    src: &'a str,
    /// The tokens.
    toks: Vec<(Tok, usize)>,
    /// The next token's index.
    i: usize,
    /// The variables in scope.
    vars: Vec<String>,
    /// How many `range` bodies enclose the current position.
    range_depth: usize,
    /// How deeply the current position is nested.
    depth: usize,
    /// The templates defined so far.
    defines: HashMap<String, Rc<Vec<Node>>>,
    /// Whether the Sprig functions are defined (not in a naming template).
    sprig: bool,
}

/// What ended an item list.
enum End {
    /// `{{ end }}`
    End,
    /// `{{ else }}`, and whether `if` or `with` follows (`else if`, `else with`).
    Else(Option<String>),
}

impl Parser<'_> {
    /// The error at byte `at`.
    fn err(&self, at: usize, message: impl Into<String>) -> TemplateError {
        error_at(self.src, at, message.into())
    }

    /// The next token (not consumed).
    fn peek(&self) -> (Tok, usize) {
        self.toks
            .get(self.i)
            .cloned()
            .unwrap_or((Tok::Eof, self.src.len()))
    }

    /// Consumes the next token.
    fn next(&mut self) -> (Tok, usize) {
        let t = self.peek();
        if self.i < self.toks.len() {
            self.i += 1;
        }
        t
    }

    /// Consumes the next token that is not a space.
    fn next_non_space(&mut self) -> (Tok, usize) {
        loop {
            let t = self.next();
            if t.0 != Tok::Space {
                return t;
            }
        }
    }

    /// The next token that is not a space (the spaces are consumed).
    fn peek_non_space(&mut self) -> (Tok, usize) {
        while self.peek().0 == Tok::Space {
            self.i += 1;
        }
        self.peek()
    }

    /// The "unexpected X in context" error.
    fn unexpected(&self, tok: &(Tok, usize), context: &str) -> TemplateError {
        let what = match &tok.0 {
            Tok::Eof => "EOF".to_owned(),
            Tok::Right => "\"}}\"".to_owned(),
            Tok::Left => "\"{{\"".to_owned(),
            Tok::RParen => "\")\"".to_owned(),
            Tok::Ident(w) if is_keyword(w) => format!("<{w}>"),
            other => format!("{:?}", excerpt(&token_text(other))),
        };
        self.err(tok.1, format!("unexpected {what} in {context}"))
    }

    /// Enters one nesting level.
    fn enter(&mut self, at: usize) -> Result<(), TemplateError> {
        self.depth += 1;
        if self.depth > limits::PARSE_DEPTH {
            return Err(self.err(
                at,
                format!("nesting deeper than {} levels", limits::PARSE_DEPTH),
            ));
        }
        Ok(())
    }

    /// The top level: text, actions and definitions until the end of input.
    fn top(&mut self) -> Result<Vec<Node>, TemplateError> {
        let mut list = Vec::new();
        loop {
            match self.peek() {
                (Tok::Eof, _) => return Ok(list),
                (Tok::Left, at) => {
                    let save = self.i;
                    self.next();
                    if self.peek_non_space().0 == Tok::Ident("define".into()) {
                        self.next_non_space();
                        self.definition(at)?;
                        continue;
                    }
                    self.i = save;
                    match self.text_or_action()? {
                        Item::Node(n) => list.push(n),
                        Item::End(End::End, at) => return Err(self.err(at, "unexpected {{end}}")),
                        Item::End(End::Else(_), at) => {
                            return Err(self.err(at, "unexpected {{else}}"));
                        }
                    }
                }
                _ => match self.text_or_action()? {
                    Item::Node(n) => list.push(n),
                    Item::End(_, at) => return Err(self.err(at, "unexpected {{end}}")),
                },
            }
        }
    }

    /// `{{ define "name" }} ... {{ end }}` after the keyword.
    fn definition(&mut self, at: usize) -> Result<(), TemplateError> {
        let name_tok = self.next_non_space();
        let Tok::Str(name) = name_tok.0.clone() else {
            return Err(self.unexpected(&name_tok, "define clause"));
        };
        let close = self.next_non_space();
        if close.0 != Tok::Right {
            return Err(self.unexpected(&close, "define clause"));
        }
        let saved = std::mem::replace(&mut self.vars, vec!["$".to_owned()]);
        let saved_range = std::mem::replace(&mut self.range_depth, 0);
        let (body, end) = self.item_list(at)?;
        self.vars = saved;
        self.range_depth = saved_range;
        if !matches!(end, End::End) {
            return Err(self.err(at, "unexpected {{else}} in define clause"));
        }
        self.add_define(name, body);
        Ok(())
    }

    /// Registers a template, as Go's `associate` does (an empty body does not replace one).
    fn add_define(&mut self, name: String, body: Vec<Node>) {
        let empty = body
            .iter()
            .all(|n| matches!(n, Node::Text(t) if t.trim().is_empty()));
        if empty && self.defines.contains_key(&name) {
            return;
        }
        self.defines.insert(name, Rc::new(body));
    }

    /// Nodes until `{{ end }}` or `{{ else }}`.
    fn item_list(&mut self, at: usize) -> Result<(Vec<Node>, End), TemplateError> {
        let mut list = Vec::new();
        loop {
            if self.peek().0 == Tok::Eof {
                return Err(self.err(at, "unexpected EOF"));
            }
            match self.text_or_action()? {
                Item::Node(n) => list.push(n),
                Item::End(end, _) => return Ok((list, end)),
            }
        }
    }

    /// One text node or action.
    fn text_or_action(&mut self) -> Result<Item, TemplateError> {
        match self.next() {
            (Tok::Text(t), _) => Ok(Item::Node(Node::Text(t))),
            (Tok::Left, at) => self.action(at),
            other => Err(self.unexpected(&other, "input")),
        }
    }

    /// An action after `{{`.
    fn action(&mut self, at: usize) -> Result<Item, TemplateError> {
        let tok = self.peek_non_space();
        if let Tok::Ident(word) = &tok.0 {
            let word = word.clone();
            match word.as_str() {
                "if" | "range" | "with" => {
                    self.next_non_space();
                    return self.control(&word, tok.1).map(Item::Node);
                }
                "else" => {
                    self.next_non_space();
                    let after = self.peek_non_space();
                    if let Tok::Ident(w) = &after.0
                        && (w == "if" || w == "with")
                    {
                        let w = w.clone();
                        self.next_non_space();
                        return Ok(Item::End(End::Else(Some(w)), tok.1));
                    }
                    self.expect_right("else")?;
                    return Ok(Item::End(End::Else(None), tok.1));
                }
                "end" => {
                    self.next_non_space();
                    self.expect_right("end")?;
                    return Ok(Item::End(End::End, tok.1));
                }
                "break" | "continue" => {
                    self.next_non_space();
                    if self.range_depth == 0 {
                        return Err(
                            self.err(tok.1, format!("{{{{{word}}}}} outside {{{{range}}}}"))
                        );
                    }
                    self.expect_right(&format!("{{{{{word}}}}}"))?;
                    return Ok(Item::Node(if word == "break" {
                        Node::Break(tok.1)
                    } else {
                        Node::Continue(tok.1)
                    }));
                }
                "template" | "block" => {
                    self.next_non_space();
                    return self.template(&word, tok.1).map(Item::Node);
                }
                "define" => return Err(self.err(tok.1, "unexpected <define> in command")),
                _ => {}
            }
        }
        let _ = at;
        let pipe = self.pipeline("command", false)?;
        Ok(Item::Node(Node::Action(pipe)))
    }

    /// Consumes `}}` or fails naming `context`.
    fn expect_right(&mut self, context: &str) -> Result<(), TemplateError> {
        let t = self.next_non_space();
        if t.0 != Tok::Right {
            return Err(self.unexpected(&t, context));
        }
        Ok(())
    }

    /// `if`, `range`, `with` after the keyword (also the nested `if`/`with` of `else if`).
    fn control(&mut self, context: &str, at: usize) -> Result<Node, TemplateError> {
        self.enter(at)?;
        let mark = self.vars.len();
        let pipe = self.pipeline(context, false)?;
        if context == "range" {
            self.range_depth += 1;
        }
        let (body, end) = self.item_list(at)?;
        if context == "range" {
            self.range_depth -= 1;
        }
        let otherwise = match end {
            End::End => Vec::new(),
            End::Else(None) => {
                let (list, end) = self.item_list(at)?;
                if !matches!(end, End::End) {
                    return Err(self.err(at, "expected end; found {{else}}"));
                }
                list
            }
            End::Else(Some(kw)) => {
                if kw != context || context == "range" {
                    return Err(self.err(at, format!("unexpected else {kw} in {context}")));
                }
                // `else if` / `else with`: a nested control sharing this `end`.
                vec![self.control(&kw, at)?]
            }
        };
        self.vars.truncate(mark);
        self.depth -= 1;
        Ok(match context {
            "if" => Node::If(pipe, body, otherwise),
            "range" => Node::Range(pipe, body, otherwise),
            _ => Node::With(pipe, body, otherwise),
        })
    }

    /// `template "name" [pipeline]` and `block "name" pipeline ... end` after the keyword.
    fn template(&mut self, keyword: &str, at: usize) -> Result<Node, TemplateError> {
        let context = format!("{keyword} clause");
        let name_tok = self.next_non_space();
        let Tok::Str(name) = name_tok.0.clone() else {
            return Err(self.unexpected(&name_tok, &context));
        };
        let pipe = if self.peek_non_space().0 == Tok::Right {
            self.next_non_space();
            None
        } else {
            Some(self.pipeline(&context, false)?)
        };
        if keyword == "block" {
            if pipe.is_none() {
                return Err(self.err(at, "missing pipeline in block clause"));
            }
            self.enter(at)?;
            let saved = std::mem::replace(&mut self.vars, vec!["$".to_owned()]);
            let saved_range = std::mem::replace(&mut self.range_depth, 0);
            let (body, end) = self.item_list(at)?;
            self.vars = saved;
            self.range_depth = saved_range;
            self.depth -= 1;
            if !matches!(end, End::End) {
                return Err(self.err(at, "unexpected {{else}} in block clause"));
            }
            self.add_define(name.clone(), body);
        }
        Ok(Node::Template(at, name, pipe))
    }

    /// A pipeline up to `}}` (or `)` when `paren`), with its declarations.
    fn pipeline(&mut self, context: &str, paren: bool) -> Result<Pipe, TemplateError> {
        let start = self.peek_non_space().1;
        self.enter(start)?;
        let mut pipe = Pipe {
            pos: start,
            decl: Vec::new(),
            assign: false,
            cmds: Vec::new(),
        };
        // Declarations: `$x :=`, `$x =`, `$i, $e :=` (range only).
        loop {
            let save = self.i;
            let (tok, _) = self.peek_non_space();
            let Tok::Var(name) = tok else { break };
            self.next();
            match self.peek_non_space().0 {
                Tok::Declare | Tok::Assign => {
                    pipe.assign = self.next().0 == Tok::Assign;
                    pipe.decl.push(name.clone());
                    self.vars.push(name);
                    break;
                }
                Tok::Comma => {
                    self.next();
                    pipe.decl.push(name.clone());
                    self.vars.push(name);
                    if context == "range" && pipe.decl.len() < 2 {
                        if matches!(self.peek_non_space().0, Tok::Var(_)) {
                            continue;
                        }
                        return Err(self.err(start, "range can only initialize variables"));
                    }
                    return Err(self.err(start, format!("too many declarations in {context}")));
                }
                _ => {
                    if !pipe.decl.is_empty() {
                        return Err(
                            self.err(start, format!("missing := after variables in {context}"))
                        );
                    }
                    self.i = save;
                    break;
                }
            }
        }
        loop {
            let tok = self.peek_non_space();
            match &tok.0 {
                Tok::Right if !paren => {
                    self.next();
                    break;
                }
                Tok::RParen if paren => {
                    self.next();
                    break;
                }
                Tok::Ident(w) if is_keyword(w) => return Err(self.unexpected(&tok, context)),
                Tok::Ident(_)
                | Tok::Dot
                | Tok::Field(_)
                | Tok::Var(_)
                | Tok::Str(_)
                | Tok::Number(_)
                | Tok::LParen => {
                    let cmd = self.command()?;
                    pipe.cmds.push(cmd);
                }
                _ => return Err(self.unexpected(&tok, context)),
            }
        }
        if pipe.cmds.is_empty() {
            return Err(self.err(start, "missing command"));
        }
        for (i, cmd) in pipe.cmds.iter().enumerate().skip(1) {
            if matches!(
                cmd.args.first(),
                Some(Arg::Bool(_) | Arg::Dot(_) | Arg::Nil(_) | Arg::Number(..) | Arg::Str(_))
            ) {
                return Err(self.err(
                    cmd.pos,
                    format!("non executable command in pipeline stage {}", i + 1),
                ));
            }
        }
        self.depth -= 1;
        Ok(pipe)
    }

    /// One command: operands up to `|`, `}}` or `)`.
    fn command(&mut self) -> Result<Cmd, TemplateError> {
        let pos = self.peek_non_space().1;
        let mut args = Vec::new();
        loop {
            self.peek_non_space();
            if let Some(arg) = self.operand()? {
                args.push(arg);
            }
            let tok = self.peek();
            match tok.0 {
                Tok::Space => {
                    self.next();
                    continue;
                }
                Tok::Right | Tok::RParen => {}
                Tok::Pipe => {
                    self.next();
                }
                _ => return Err(self.unexpected(&tok, "operand")),
            }
            break;
        }
        if args.is_empty() {
            return Err(self.err(pos, "empty command"));
        }
        Ok(Cmd { pos, args })
    }

    /// A term and the fields chained on it.
    fn operand(&mut self) -> Result<Option<Arg>, TemplateError> {
        let Some(term) = self.term()? else {
            return Ok(None);
        };
        let mut fields = Vec::new();
        while let Tok::Field(f) = self.peek().0 {
            self.next();
            fields.push(f);
        }
        if fields.is_empty() {
            return Ok(Some(term));
        }
        Ok(Some(match term {
            Arg::Field(pos, mut names) => {
                names.extend(fields);
                Arg::Field(pos, names)
            }
            Arg::Var(pos, name, mut names) => {
                names.extend(fields);
                Arg::Var(pos, name, names)
            }
            Arg::Bool(_) | Arg::Str(_) | Arg::Number(..) | Arg::Nil(_) | Arg::Dot(_) => {
                let at = self.peek().1;
                return Err(self.err(at, "unexpected . after term"));
            }
            other => {
                let pos = match &other {
                    Arg::Func(p, _) | Arg::Pipe(p, _) => *p,
                    _ => 0,
                };
                Arg::Chain(pos, Box::new(other), fields)
            }
        }))
    }

    /// A term: literal, field, variable, function or parenthesised pipeline.
    fn term(&mut self) -> Result<Option<Arg>, TemplateError> {
        let (tok, at) = self.peek_non_space();
        let arg = match tok {
            Tok::Ident(w) if is_keyword(&w) => return Ok(None),
            Tok::Ident(w) if w == "true" || w == "false" => Arg::Bool(w == "true"),
            Tok::Ident(w) if w == "nil" => Arg::Nil(at),
            Tok::Ident(w) => {
                if !funcs::is_defined(&w, self.sprig) {
                    let hint = match w.as_str() {
                        "toYaml" | "fromYaml" | "include" | "tpl" | "required" | "lookup" => {
                            "; Helm defines it, Sprig and Cluster API do not"
                        }
                        _ if funcs::is_nonhermetic(&w) => {
                            "; Cluster API leaves out Sprig's non-repeatable functions"
                        }
                        _ if !self.sprig && funcs::is_defined(&w, true) => {
                            "; a naming template has Go's functions only, not Sprig's"
                        }
                        _ => "",
                    };
                    return Err(self.err(
                        at,
                        format!("function \"{}\" not defined{hint}", excerpt(&w)),
                    ));
                }
                Arg::Func(at, w)
            }
            Tok::Dot => Arg::Dot(at),
            Tok::Var(name) => {
                if !self.vars.contains(&name) {
                    return Err(self.err(at, format!("undefined variable \"{}\"", excerpt(&name))));
                }
                Arg::Var(at, name, Vec::new())
            }
            Tok::Field(f) => Arg::Field(at, vec![f]),
            Tok::Str(s) => Arg::Str(s.into()),
            Tok::Number(text) => {
                let Some(num) = parse_number(&text) else {
                    return Err(
                        self.err(at, format!("illegal number syntax: {:?}", excerpt(&text)))
                    );
                };
                Arg::Number(at, num)
            }
            Tok::LParen => {
                self.next();
                let pipe = self.pipeline("parenthesized pipeline", true)?;
                return Ok(Some(Arg::Pipe(at, Box::new(pipe))));
            }
            _ => return Ok(None),
        };
        self.next();
        Ok(Some(arg))
    }
}

/// A parsed item: a node, or what ended a list.
enum Item {
    /// A node of the list.
    Node(Node),
    /// `{{ end }}` or `{{ else }}` at a byte offset.
    End(End, usize),
}

/// Go's action keywords.
fn is_keyword(w: &str) -> bool {
    matches!(
        w,
        "if" | "else"
            | "end"
            | "range"
            | "with"
            | "define"
            | "template"
            | "block"
            | "break"
            | "continue"
    )
}

/// A token as the template wrote it (for messages).
fn token_text(tok: &Tok) -> String {
    match tok {
        Tok::Text(t) | Tok::Ident(t) | Tok::Var(t) | Tok::Number(t) => t.clone(),
        Tok::Str(s) => format!("{s:?}"),
        Tok::Field(f) => format!(".{f}"),
        Tok::Dot => ".".into(),
        Tok::Pipe => "|".into(),
        Tok::LParen => "(".into(),
        Tok::RParen => ")".into(),
        Tok::Declare => ":=".into(),
        Tok::Assign => "=".into(),
        Tok::Comma => ",".into(),
        Tok::Char(c) => c.to_string(),
        Tok::Space => " ".into(),
        Tok::Left => "{{".into(),
        Tok::Right => "}}".into(),
        Tok::Eof => "EOF".into(),
    }
}

/// Parses a whole template; `sprig`: whether Sprig's functions are defined.
pub(crate) fn parse(src: &str, sprig: bool) -> Result<Parsed, TemplateError> {
    let toks = Lexer {
        src,
        pos: 0,
        toks: Vec::new(),
    }
    .run()?;
    let mut parser = Parser {
        src,
        toks,
        i: 0,
        vars: vec!["$".to_owned()],
        range_depth: 0,
        depth: 0,
        defines: HashMap::new(),
        sprig,
    };
    let root = parser.top()?;
    Ok(Parsed {
        root,
        defines: parser.defines,
    })
}
