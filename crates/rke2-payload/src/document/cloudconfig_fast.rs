//! A fast path for the cloud-config CAPRKE2 renders: header comments, then `write_files` (each
//! entry's `path`, `owner`, `permissions`, `encoding` and a `|` block scalar or one-line quoted
//! `content`) and `runcmd` (one-line scalars). Anything outside that subset makes it give up
//! (`None`), and the full YAML parser reads the document; a differential test holds the two
//! together.

use serde_json::Value;

/// What the fast path read: the entries and the commands, in order.
pub(super) struct Fast {
    pub(super) files: Vec<FastEntry>,
    pub(super) runcmd: Vec<String>,
}

/// One `write_files` entry.
pub(super) struct FastEntry {
    pub(super) path: String,
    pub(super) owner: Option<String>,
    pub(super) permissions: Option<Value>,
    pub(super) encoding: Option<String>,
    pub(super) content: Option<String>,
}

/// Reads `text` if it is in the subset.
pub(super) fn parse(text: &str) -> Option<Fast> {
    if !crate::codec::yaml::yaml_printable(text) {
        return None;
    }
    let lines: Vec<&str> = text.split('\n').collect();
    let mut at = 0;
    // Header comments and blank lines.
    while at < lines.len() && (lines[at].is_empty() || lines[at].starts_with('#')) {
        at += 1;
    }
    let mut fast = Fast {
        files: Vec::new(),
        runcmd: Vec::new(),
    };
    let (mut seen_files, mut seen_runcmd) = (false, false);
    while at < lines.len() {
        let line = lines[at];
        if line.trim().is_empty() {
            at += 1;
            continue;
        }
        match line {
            "write_files:" if !seen_files => {
                seen_files = true;
                at = write_files(&lines, at + 1, &mut fast.files)?;
            }
            "runcmd:" if !seen_runcmd => {
                seen_runcmd = true;
                at = runcmd(&lines, at + 1, &mut fast.runcmd)?;
            }
            _ => return None,
        }
    }
    Some(fast)
}

fn indent(line: &str) -> usize {
    line.len() - line.trim_start_matches(' ').len()
}

fn blank(line: &str) -> bool {
    line.bytes().all(|b| b == b' ')
}

/// The `- ` items of `write_files`, from line `at`; returns the line after them.
fn write_files(lines: &[&str], mut at: usize, out: &mut Vec<FastEntry>) -> Option<usize> {
    while at < lines.len() {
        let line = lines[at];
        if blank(line) {
            at += 1;
            continue;
        }
        let Some(rest) = line.strip_prefix('-') else {
            return Some(at);
        };
        let spaces = rest.len() - rest.trim_start_matches(' ').len();
        if spaces == 0 || rest.trim().is_empty() {
            return None;
        }
        let inner = 1 + spaces;
        let mut entry = FastEntry {
            path: String::new(),
            owner: None,
            permissions: None,
            encoding: None,
            content: None,
        };
        let mut keys: Vec<&str> = Vec::new();
        let mut first = Some(&rest[spaces..]);
        at += 1;
        loop {
            let content = match first.take() {
                Some(c) => c,
                None => {
                    // Next key of the entry, at `inner`.
                    let Some(&line) = lines.get(at) else { break };
                    if blank(line) {
                        at += 1;
                        continue;
                    }
                    if indent(line) != inner {
                        if indent(line) > inner || line.starts_with(' ') {
                            return None;
                        }
                        break;
                    }
                    at += 1;
                    &line[inner..]
                }
            };
            let (key, value) = content.split_once(':')?;
            if keys.contains(&key) {
                return None;
            }
            keys.push(key);
            let value = value.strip_prefix(' ').unwrap_or(value);
            if value == "|" {
                if key != "content" {
                    return None;
                }
                let (text, next) = block_scalar(lines, at, inner)?;
                entry.content = Some(text);
                at = next;
                continue;
            }
            if !value.is_empty() && !content.contains(": ") {
                return None;
            }
            let scalar = scalar(value)?;
            // A scalar must not continue on deeper lines.
            if lines
                .get(at)
                .is_some_and(|l| !blank(l) && indent(l) > inner)
            {
                return None;
            }
            match key {
                "path" => entry.path = plain_or_quoted_string(value, scalar)?,
                "owner" => entry.owner = Some(plain_or_quoted_string(value, scalar)?),
                "encoding" => entry.encoding = Some(plain_or_quoted_string(value, scalar)?),
                // A plain `0640` is an (octal) number to the full parser: leave it to it.
                "permissions" if value.starts_with(['\'', '"']) => {
                    entry.permissions = Some(Value::String(scalar));
                }
                "content" => entry.content = Some(plain_or_quoted_string(value, scalar)?),
                _ => return None,
            }
        }
        if entry.path.is_empty() {
            return None;
        }
        out.push(entry);
    }
    Some(at)
}

/// A plain value must also read as a string (not a null, bool or number).
fn plain_or_quoted_string(raw: &str, scalar: String) -> Option<String> {
    if raw.starts_with(['\'', '"']) {
        return Some(scalar);
    }
    let lower = scalar.to_ascii_lowercase();
    let special = scalar.is_empty()
        || matches!(
            lower.as_str(),
            "null" | "~" | "true" | "false" | "yes" | "no" | "on" | "off" | "y" | "n"
        )
        || scalar.parse::<f64>().is_ok()
        || scalar.starts_with(['+', '.', '0'])
        || lower.starts_with("0x");
    (!special).then_some(scalar)
}

/// A `|` block scalar (clip chomping) under a key at `parent`: its text and the line after it.
fn block_scalar(lines: &[&str], start: usize, parent: usize) -> Option<(String, usize)> {
    let mut first = start;
    while first < lines.len() && blank(lines[first]) {
        first += 1;
    }
    if first == lines.len() || indent(lines[first]) <= parent {
        // No content: an empty string (the blank lines belong to nothing).
        return Some((String::new(), first));
    }
    let n = indent(lines[first]);
    // Leading blank lines may not be deeper than the content (a YAML error).
    if lines[start..first].iter().any(|l| l.len() > n) {
        return None;
    }
    let mut text = String::new();
    let mut blanks = first - start;
    let mut at = first;
    while let Some(&line) = lines.get(at) {
        if blank(line) {
            if line.len() > n {
                // Spaces beyond the indentation are content: leave that to the parser.
                return None;
            }
            blanks += 1;
            at += 1;
            continue;
        }
        if indent(line) < n {
            break;
        }
        for _ in 0..blanks {
            text.push('\n');
        }
        blanks = 0;
        text.push_str(&line[n..]);
        text.push('\n');
        at += 1;
    }
    // Clip chomping: the final line break stays, trailing blank lines go.
    Some((text, at))
}

/// `runcmd` items (one-line scalars), from line `at`; returns the line after them.
fn runcmd(lines: &[&str], mut at: usize, out: &mut Vec<String>) -> Option<usize> {
    let mut dash = None;
    while at < lines.len() {
        let line = lines[at];
        if blank(line) {
            at += 1;
            continue;
        }
        let i = indent(line);
        let rest = &line[i..];
        let Some(item) = rest.strip_prefix("- ") else {
            if i == 0 {
                return Some(at);
            }
            return None;
        };
        match dash {
            None => dash = Some(i),
            Some(d) if d != i => return None,
            Some(_) => {}
        }
        let value = scalar(item)?;
        let value = plain_or_quoted_string(item, value)?;
        at += 1;
        if lines.get(at).is_some_and(|l| !blank(l) && indent(l) > i) {
            return None;
        }
        out.push(value);
    }
    Some(at)
}

/// A one-line scalar: single-quoted, double-quoted, or plain without indicators.
fn scalar(raw: &str) -> Option<String> {
    if raw != raw.trim_matches(' ') {
        return None;
    }
    if let Some(body) = raw.strip_prefix('\'') {
        let body = body.strip_suffix('\'')?;
        if body.replace("''", "").contains('\'') {
            return None;
        }
        return Some(body.replace("''", "'"));
    }
    if let Some(body) = raw.strip_prefix('"') {
        return double_quoted(body.strip_suffix('"')?);
    }
    if raw.is_empty()
        || b"-?:,[]{}#&*!|>'\"%@`".contains(&raw.as_bytes()[0])
        || raw.contains(": ")
        || raw.contains(" #")
        || raw.ends_with(':')
        || raw.contains('\t')
    {
        return None;
    }
    Some(raw.to_owned())
}

/// The body of a one-line double-quoted scalar, unescaped as YAML does.
fn double_quoted(body: &str) -> Option<String> {
    let mut out = String::with_capacity(body.len());
    let mut chars = body.chars();
    while let Some(c) = chars.next() {
        match c {
            '"' => return None,
            '\\' => {
                let e = chars.next()?;
                let hex = |chars: &mut std::str::Chars<'_>, n: usize| -> Option<char> {
                    let digits: String = chars.by_ref().take(n).collect();
                    if digits.len() != n {
                        return None;
                    }
                    char::from_u32(u32::from_str_radix(&digits, 16).ok()?)
                };
                out.push(match e {
                    '0' => '\0',
                    'a' => '\x07',
                    'b' => '\x08',
                    't' | '\t' => '\t',
                    'n' => '\n',
                    'v' => '\x0b',
                    'f' => '\x0c',
                    'r' => '\r',
                    'e' => '\x1b',
                    ' ' => ' ',
                    '"' => '"',
                    '/' => '/',
                    '\\' => '\\',
                    'N' => '\u{85}',
                    '_' => '\u{a0}',
                    'L' => '\u{2028}',
                    'P' => '\u{2029}',
                    'x' => hex(&mut chars, 2)?,
                    'u' => hex(&mut chars, 4)?,
                    'U' => hex(&mut chars, 8)?,
                    _ => return None,
                });
            }
            c if c.is_control() && c != '\t' => return None,
            c => out.push(c),
        }
    }
    Some(out)
}
