//! Free text (a command, a script, a unit, an environment file, a file of no known structure):
//! the parts of it that are secret.
//!
//! What is masked: credentials by their shape (the detector of [`super::super::detect`]), the
//! value after a secret option in a command's words (`--token X`, `-t X` for `rke2`/`k3s`,
//! `-pX` for the MySQL clients, `sshpass -p X`), private keys in every armour (PEM and OpenSSH,
//! PGP, age, PuTTY), long high-entropy runs that are not known to be public, and every known
//! secret value wherever it appears. Certificates, public keys, `ssh-*` public keys and digests
//! (40, 64, 96 or 128 hex digits, `sha256:…`) stay.

use std::ops::Range;

use super::Known;

/// The byte ranges of `text` that are secret, in order and merged.
pub(crate) fn spans(text: &str, known: &Known) -> Vec<Range<usize>> {
    // What the text says of itself is the same every time it is read (every payload of a
    // fleet runs the same install commands): each thread keeps the verdicts on the short texts
    // it has read; the known values are looked for each time.
    const MAX_CACHED_TEXT: usize = 4096;
    const MAX_ENTRIES: usize = 4096;
    thread_local! {
        static SEEN: std::cell::RefCell<std::collections::HashMap<String, Vec<Range<usize>>>> =
            std::cell::RefCell::new(std::collections::HashMap::new());
    }
    let mut found = if text.len() > MAX_CACHED_TEXT || super::words::decoding() {
        own_spans(text)
    } else if let Some(hit) = SEEN.with(|s| s.borrow().get(text).cloned()) {
        hit
    } else {
        let found = own_spans(text);
        SEEN.with(|s| {
            let mut s = s.borrow_mut();
            if s.len() >= MAX_ENTRIES {
                s.clear();
            }
            s.insert(text.to_owned(), found.clone());
        });
        found
    };
    known.occurrences(text, &mut found);
    merge(found)
}

/// The secret ranges of `text` by what it says itself, with no value known beforehand.
fn own_spans(text: &str) -> Vec<Range<usize>> {
    let mut spans: Vec<Range<usize>> = crate::secrets::credential_spans(text)
        .into_iter()
        .filter(|r| !harmless(&text[r.clone()]))
        .collect();
    // Each finder runs only where the text holds what it looks for (most commands hold none).
    let bytes = text.as_bytes();
    // Built once: a finder per call costs more than the search on a short command.
    static ARMOURS: std::sync::LazyLock<[memchr::memmem::Finder<'static>; 3]> =
        std::sync::LazyLock::new(|| {
            ["-----BEGIN ", "AGE-SECRET-KEY-", "PuTTY-User-Key-File-"]
                .map(|m| memchr::memmem::Finder::new(m.as_bytes()))
        });
    let armoured = ARMOURS.iter().any(|f| f.find(bytes).is_some());
    let public = if armoured {
        key_bodies(text, &mut spans);
        let mut p = public_blocks(text);
        p.sort_by_key(|r| r.start);
        p
    } else {
        Vec::new()
    };
    let dash = memchr::memchr(b'-', bytes).is_some();
    let mut block = public.iter().peekable();
    // `--password \` at a line's end: the value is the next line's first word.
    let mut continued = false;
    for (start, line) in lines(text) {
        if std::mem::take(&mut continued) {
            let body = line.trim_start();
            let word = body.split([' ', '\t']).next().unwrap_or("");
            let at = start + line.len() - body.len();
            let value = word.trim_matches(['"', '\'']);
            if !value.is_empty() && !super::words::reference(value) && value != "\\" {
                let lead = word.len() - word.trim_start_matches(['"', '\'']).len();
                spans.push(at + lead..at + lead + value.len());
            }
        }
        if let Some(before) = line.trim_end().strip_suffix('\\') {
            let option = before.split_whitespace().last().unwrap_or("");
            continued = option.starts_with('-')
                && !option.contains('=')
                && super::secret_key(option.trim_start_matches('-'))
                && !option.ends_with("stdin")
                && !option.ends_with("-file");
        }
        if dash {
            words(line, start, &mut spans);
        }
        super::positions::line(line, start, &mut spans);
        // Every word not public by a positive rule, outside certificates and public keys.
        while block.next_if(|b| b.end < start).is_some() {}
        let in_public = block
            .peek()
            .is_some_and(|b| b.start <= start && start + line.len() <= b.end);
        if !in_public {
            super::words::line(line, start, &mut spans);
        }
    }
    merge(spans)
}

/// `text` with every secret part (as [`spans`] finds them, no value known beforehand) replaced
/// by `replace(part)`: what the reports show in place of free text.
pub(crate) fn mask_with(text: &str, replace: impl FnMut(&str) -> String) -> String {
    replace_spans(text, &spans(text, &Known::default()), replace)
}

/// `text` with each span (in order) replaced by `replace(its text)`; a span that overlaps the
/// one before it, or does not fall on character boundaries, is left as it is.
pub(crate) fn replace_spans(
    text: &str,
    spans: &[Range<usize>],
    mut replace: impl FnMut(&str) -> String,
) -> String {
    if spans.is_empty() {
        return text.to_owned();
    }
    let mut out = String::with_capacity(text.len());
    let mut cursor = 0;
    for span in spans {
        let (Some(before), Some(part)) = (
            text.get(cursor..span.start.max(cursor)),
            text.get(span.clone()).filter(|_| span.start >= cursor),
        ) else {
            continue;
        };
        out.push_str(before);
        out.push_str(&replace(part));
        cursor = span.end;
    }
    out.push_str(text.get(cursor..).unwrap_or(""));
    out
}

/// A value no secret is: a boolean or null word, or an absolute path.
pub(crate) fn harmless(value: &str) -> bool {
    let v = value.trim_matches(['"', '\'']);
    matches!(
        v.to_ascii_lowercase().as_str(),
        "true" | "false" | "yes" | "no" | "on" | "off" | "null" | "~" | "none" | ""
    ) || (v.starts_with('/')
        && v.len() > 1
        && v.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"/._-".contains(&b))
        && v[1..].bytes().any(|b| b.is_ascii_alphabetic()))
}

/// Sorted, overlapping or touching ranges joined.
pub(crate) fn merge(mut spans: Vec<Range<usize>>) -> Vec<Range<usize>> {
    spans.retain(|r| r.start < r.end);
    spans.sort_by_key(|r| (r.start, std::cmp::Reverse(r.end)));
    let mut out: Vec<Range<usize>> = Vec::with_capacity(spans.len());
    for span in spans {
        match out.last_mut() {
            Some(last) if span.start <= last.end => last.end = last.end.max(span.end),
            _ => out.push(span),
        }
    }
    out
}

/// Each line of `text` with the offset it starts at (without its line break).
fn lines(text: &str) -> impl Iterator<Item = (usize, &str)> {
    let mut at = 0;
    text.split_inclusive('\n').map(move |l| {
        let start = at;
        at += l.len();
        (start, l.trim_end_matches(['\n', '\r']))
    })
}

/// An armoured block (`-----BEGIN LABEL-----` … `-----END`): where it starts, its label, where
/// its body starts (right after the BEGIN marker) and where its END marker is (or the text's end).
struct Armour<'a> {
    start: usize,
    label: &'a str,
    body: usize,
    end: usize,
}

/// Every armoured block of a text, in order (each marker found once: linear in the text).
fn armours(text: &str) -> Vec<Armour<'_>> {
    let begins: Vec<usize> = memchr::memmem::find_iter(text.as_bytes(), b"-----BEGIN ").collect();
    if begins.is_empty() {
        return Vec::new();
    }
    let ends: Vec<usize> = memchr::memmem::find_iter(text.as_bytes(), b"-----END ").collect();
    let mut out = Vec::new();
    let mut from = 0;
    for (n, &start) in begins.iter().enumerate() {
        if start < from {
            continue;
        }
        let label_start = start + "-----BEGIN ".len();
        // The label ends at the next `-----` on its line.
        let line_end = text[label_start..]
            .find('\n')
            .map_or(text.len(), |e| label_start + e);
        let Some(label_len) = text[label_start..line_end].find("-----") else {
            continue;
        };
        let body = label_start + label_len + 5;
        // It ends at its END marker, or where the next block begins, or at the text's end.
        let next_end = ends[ends.partition_point(|&e| e < body)..].first().copied();
        let next_begin = begins.get(n + 1).copied();
        let end = [next_end, next_begin]
            .into_iter()
            .flatten()
            .filter(|&e| e >= body)
            .min()
            .unwrap_or(text.len());
        out.push(Armour {
            start,
            label: &text[label_start..label_start + label_len],
            body,
            end,
        });
        from = end;
    }
    out
}

/// The ranges of PEM blocks that are public (certificates, public keys, CRLs): no entropy
/// masking inside them.
fn public_blocks(text: &str) -> Vec<Range<usize>> {
    let mut out: Vec<Range<usize>> = armours(text)
        .into_iter()
        .filter(|a| !a.label.contains("PRIVATE"))
        .map(|a| a.start..a.end)
        .collect();
    // A PuTTY key's public lines.
    if text.contains("PuTTY-User-Key-File-") {
        let all: Vec<(usize, &str)> = lines(text).collect();
        for (i, (start, line)) in all.iter().enumerate() {
            if let Some(n) = line.strip_prefix("Public-Lines:") {
                let n: usize = n.trim().parse().unwrap_or(0);
                let last = i.saturating_add(n).min(all.len() - 1);
                let (to, l) = all[last];
                out.push(*start..to + l.len());
            }
        }
    }
    out
}

/// Private keys: the body of every armoured block whose label says private (PEM, OpenSSH,
/// PGP `PRIVATE KEY BLOCK`), an age secret key, and the private lines and MAC of a PuTTY key.
fn key_bodies(text: &str, spans: &mut Vec<Range<usize>>) {
    for Armour {
        label, body, end, ..
    } in armours(text)
    {
        if !label.contains("PRIVATE") && !label.contains("SECRET") {
            continue;
        }
        // The body: from the line after the BEGIN line (or right after it, on one line) to the
        // END marker, or to the end of the text.
        let body_start = if text[body..end].starts_with('\n') {
            body + 1
        } else if text[body..end].starts_with("\r\n") {
            body + 2
        } else {
            body
        };
        // Keep the line break before END.
        let mut body_end = end;
        while body_end > body_start && matches!(text.as_bytes()[body_end - 1], b'\n' | b'\r') {
            body_end -= 1;
        }
        if body_end > body_start {
            spans.push(body_start..body_end);
        }
    }
    // age: `AGE-SECRET-KEY-1` and its Bech32 characters.
    let mut from = 0;
    while let Some(i) = text[from..].find("AGE-SECRET-KEY-") {
        let start = from + i;
        let len = text[start..]
            .bytes()
            .take_while(|b| b.is_ascii_alphanumeric() || *b == b'-')
            .count();
        spans.push(start + "AGE-SECRET-KEY-".len()..start + len);
        from = start + len.max(1);
    }
    // PuTTY: `Private-Lines: N` then N lines, and `Private-MAC: …`.
    if text.contains("PuTTY-User-Key-File-") {
        let all: Vec<(usize, &str)> = lines(text).collect();
        let mut i = 0;
        while i < all.len() {
            let (start, line) = all[i];
            if let Some(n) = line.strip_prefix("Private-Lines:") {
                // The lines that follow, as many as it says and as there are.
                let n: usize = n.trim().parse().unwrap_or(0);
                let last = i.saturating_add(n).min(all.len() - 1);
                if last > i {
                    let (from, _) = all[i + 1];
                    let (to, l) = all[last];
                    spans.push(from..to + l.len());
                }
                i = last.max(i) + 1;
                continue;
            }
            if let Some(v) = line.strip_prefix("Private-MAC:") {
                let pad = v.len() - v.trim_start().len();
                spans.push(start + "Private-MAC:".len() + pad..start + line.len());
            }
            i += 1;
        }
    }
}

/// One word of a command line: where it is, and its text without quotes.
struct Word {
    span: Range<usize>,
    text: String,
}

/// A line split into words as a shell would (quotes grouped, not expanded further).
fn split_words(line: &str, base: usize) -> Vec<Word> {
    let bytes = line.as_bytes();
    let mut words = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        while i < bytes.len() && matches!(bytes[i], b' ' | b'\t' | b';' | b'&' | b'|' | b'(' | b')')
        {
            i += 1;
        }
        if i >= bytes.len() {
            break;
        }
        let start = i;
        let mut text = String::new();
        let mut quote: Option<u8> = None;
        while i < bytes.len() {
            let b = bytes[i];
            match quote {
                Some(q) if b == q => quote = None,
                Some(b'"') if b == b'\\' && i + 1 < bytes.len() => {
                    i += 1;
                    text.push(char::from(bytes[i]));
                }
                Some(_) => text.push(char::from(b)),
                None if b == b'"' || b == b'\'' => quote = Some(b),
                None if matches!(b, b' ' | b'\t' | b';' | b'&' | b'|' | b'(' | b')') => break,
                None => text.push(char::from(b)),
            }
            i += 1;
        }
        // Only ASCII was pushed byte by byte; take the text itself when it is not ASCII.
        let raw = &line[start..i];
        let text = if raw.is_ascii() {
            text
        } else {
            raw.trim_matches(['"', '\'']).to_owned()
        };
        words.push(Word {
            span: base + start..base + i,
            text,
        });
    }
    words
}

/// The span of a word's value without its quotes.
fn unquoted(line_base: usize, line: &str, span: &Range<usize>) -> Range<usize> {
    let raw = &line[span.start - line_base..span.end - line_base];
    let lead = raw.len() - raw.trim_start_matches(['"', '\'']).len();
    let trail = raw.len() - raw.trim_end_matches(['"', '\'']).len();
    if lead + trail >= raw.len() {
        return span.clone();
    }
    span.start + lead..span.end - trail
}

/// How deep a quoted word is read again as a command line (`sh -c '… -c "…"'`).
const MAX_NESTED: usize = 4;

/// Options whose next word is a secret: in any command (long names that say so), and per
/// program; a quoted word that holds more words (`sh -c 'mysql -pX'`, `su -c "…"`) is read as
/// a command line of its own.
fn words(line: &str, base: usize, spans: &mut Vec<Range<usize>>) {
    words_nested(line, base, spans, 0);
}

fn words_nested(line: &str, base: usize, spans: &mut Vec<Range<usize>>, depth: usize) {
    // Most lines hold none of what a rule needs: a long option with a secret's stem, `-t`
    // beside rke2 or k3s, `-p` beside a MySQL client or sshpass.
    let long = line.contains("--") && {
        let lower = line.to_ascii_lowercase();
        ["tok", "secret", "pass", "cred", "auth", "key", "bearer"]
            .iter()
            .any(|stem| lower.contains(stem))
    };
    let short_t = line.contains("-t") && (line.contains("rke2") || line.contains("k3s"));
    let short_p = line.contains("-p")
        && (line.contains("mysql") || line.contains("mariadb") || line.contains("sshpass"));
    if !(long || short_t || short_p) {
        return;
    }
    let words = split_words(line, base);
    if depth < MAX_NESTED {
        for w in &words {
            let raw = &line[w.span.start - base..w.span.end - base];
            if raw.starts_with(['"', '\'']) && w.text.contains([' ', '\t']) {
                let inner = unquoted(base, line, &w.span);
                if inner != w.span {
                    let text = &line[inner.start - base..inner.end - base];
                    words_nested(text, inner.start, spans, depth + 1);
                }
            }
        }
    }
    let program = |w: &Word| {
        let t = w.text.rsplit(['/', '=']).next().unwrap_or("");
        t.to_owned()
    };
    // `-t` is the token for `rke2` and `k3s` themselves (`logger -t rke2` names a tag).
    let rke2 = words
        .iter()
        .find(|w| !matches!(w.text.as_str(), "sudo" | "env" | "exec") && !w.text.contains('='))
        .is_some_and(|w| matches!(program(w).as_str(), "rke2" | "k3s"));
    let mysql = words.iter().any(|w| {
        matches!(
            program(w).as_str(),
            "mysql" | "mysqladmin" | "mysqldump" | "mariadb" | "mariadb-dump"
        )
    });
    let sshpass = words.iter().any(|w| program(w) == "sshpass");
    let value_at = |i: usize| words.get(i).map(|w| unquoted(base, line, &w.span));
    for (i, w) in words.iter().enumerate() {
        let t = w.text.as_str();
        let long = t.strip_prefix("--").filter(|n| !n.is_empty());
        if let Some(name) = long {
            if let Some((n, v)) = name.split_once('=') {
                if super::secret_key(n) && !harmless(v) {
                    let s = unquoted(base, line, &w.span);
                    let eq = line[s.start - base..s.end - base]
                        .find('=')
                        .map_or(0, |e| e + 1);
                    spans.push(s.start + eq..s.end);
                }
            } else if super::secret_key(name)
                // `--password-stdin` reads the secret from standard input: no value follows.
                && !name.ends_with("stdin")
                && let Some(v) = value_at(i + 1)
                && !harmless(&words[i + 1].text)
                && !super::words::reference(&words[i + 1].text)
                && words[i + 1].text != "\\"
            {
                // `--src-creds user:password`: the password.
                let text = &words[i + 1].text;
                match text.find(':').filter(|_| name.ends_with("creds")) {
                    Some(at) => spans.push(v.end - (text.len() - at - 1)..v.end),
                    None => spans.push(v),
                }
            }
            continue;
        }
        if (rke2 && t == "-t") || (sshpass && t == "-p") {
            if let Some(v) = value_at(i + 1) {
                spans.push(v);
            }
        } else if mysql && t.starts_with("-p") && t.len() > 2 && !t.starts_with("--") {
            let s = unquoted(base, line, &w.span);
            // `-p'a b'`: the value without its opening quote.
            let raw = &line[s.start - base..s.end - base];
            let quote = usize::from(raw[2..].starts_with(['\'', '"']));
            spans.push(s.start + 2 + quote..s.end);
        } else if mysql
            && let Some(v) = t.strip_prefix("--password=")
            && !v.is_empty()
        {
            let s = unquoted(base, line, &w.span);
            spans.push(s.end - v.len()..s.end);
        }
    }
}

/// An argv-form command (`[rke2, agent, --token, X]`): the indices of the words that are
/// secret, and for a word whose tail only is (`--token=X`, `-pX`), the byte offset it starts
/// at.
pub(crate) fn argv_secrets(argv: &[&str]) -> Vec<(usize, usize)> {
    let line = argv
        .iter()
        .map(|w| w.replace([' ', '\t', ';', '&', '|', '(', ')', '"', '\''], "_"))
        .collect::<Vec<_>>()
        .join(" ");
    let mut spans = Vec::new();
    words(&line, 0, &mut spans);
    // Word boundaries in the joined line.
    let mut starts = Vec::with_capacity(argv.len());
    let mut at = 0;
    for w in argv {
        starts.push(at);
        at += w.len() + 1;
    }
    let mut out = super::positions::argv(argv);
    for span in spans {
        if let Some(i) = starts.iter().rposition(|&s| s <= span.start) {
            out.push((i, span.start - starts[i]));
        }
    }
    out.sort_unstable();
    out.dedup();
    out
}

/// Whether a word looks like a generated credential: 16 characters or more of letters and
/// digits (and `+/=_-`), with both letters and digits.
pub(crate) fn looks_random(word: &str) -> bool {
    word.len() >= 16
        && word
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"+/=_-".contains(&b))
        && word.bytes().any(|b| b.is_ascii_digit())
        && word.bytes().any(|b| b.is_ascii_alphabetic())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn masked(text: &str) -> Vec<&str> {
        spans(text, &Known::default())
            .into_iter()
            .map(|r| &text[r])
            .collect()
    }

    #[test]
    fn options_and_armours() {
        assert_eq!(masked("rke2 agent -t Zq8vK2mLp4 --debug"), ["Zq8vK2mLp4"]);
        assert_eq!(
            masked("ExecStart=/usr/bin/rke2 server --token 'Zq8v K2'"),
            ["Zq8v K2"]
        );
        assert_eq!(masked("mysql -uroot -pZq8vK2mLp4 db"), ["Zq8vK2mLp4"]);
        // Inside a shell's script argument, at any quoting.
        assert_eq!(
            masked("sh -c 'mysql -uroot -pZq8vK2mLp4 -e \"select 1\"'"),
            ["Zq8vK2mLp4"]
        );
        assert_eq!(masked("su -c \"mysql -pZq8vK2mLp4\" app"), ["Zq8vK2mLp4"]);
        // --password-stdin takes no value: the registry host stays.
        assert!(masked("nerdctl login -u bot --password-stdin registry.example.com").is_empty());
        assert_eq!(masked("lock_passwd: false"), Vec::<&str>::new());
        let key = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmU\nAAAA\n-----END OPENSSH PRIVATE KEY-----\n";
        assert_eq!(masked(key), ["b3BlbnNzaC1rZXktdjEAAAAABG5vbmU\nAAAA"]);
        assert_eq!(
            masked("# key\nAGE-SECRET-KEY-1QYQSZQGPQYQSZQGPQYQSZQGPQYQ\n"),
            ["AGE-SECRET-KEY-1QYQSZQGPQYQSZQGPQYQSZQGPQYQ"]
        );
    }

    #[test]
    fn a_value_on_the_next_line() {
        assert_eq!(
            masked("docker login \\\n  --password \\\n  lemonade \\\n  r.example.com\n"),
            ["lemonade"]
        );
    }

    #[test]
    fn a_block_without_its_end_does_not_hide_the_next_key() {
        let text = "-----BEGIN CERTIFICATE-----\nMIIB\n-----BEGIN PRIVATE KEY-----\nMIIEsecretkeybody\n-----END PRIVATE KEY-----\n";
        assert_eq!(masked(text), ["MIIEsecretkeybody"]);
    }

    #[test]
    fn random_runs_but_not_digests_or_public_keys() {
        assert_eq!(
            masked("echo aGVsbG8gd29ybGQhIFRoaXMgaXMgYSBzZWNyZXQK9xZ | base64 -d"),
            ["aGVsbG8gd29ybGQhIFRoaXMgaXMgYSBzZWNyZXQK9xZ"]
        );
        let sum = "a".repeat(63) + "b";
        assert!(masked(&format!("echo '{sum}  /opt/x' | sha256sum -c")).is_empty());
        assert!(
            masked("ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGx1Y2t5Q2hhcm1zNzc3Nzc3Nzc3 me")
                .is_empty()
        );
        assert!(masked("https://github.com/rancher/rke2/releases/download/v1.31.1%2Brke2r1/rke2-images.linux-amd64.tar.zst").is_empty());
    }

    #[test]
    fn putty_counts_never_run_past_the_text() {
        for text in [
            "PuTTY-User-Key-File-2: ssh-rsa\nPrivate-Lines: 1",
            "PuTTY-User-Key-File-2: ssh-rsa\nPrivate-Lines: 18446744073709551615\nabc\n",
            "PuTTY-User-Key-File-2: ssh-rsa\nPublic-Lines: 18446744073709551615\n",
        ] {
            let _ = masked(text);
        }
        let armours = "-----BEGIN X-----\n".repeat(20_000);
        let _ = masked(&armours);
    }

    #[test]
    fn argv_words() {
        assert_eq!(argv_secrets(&["rke2", "agent", "--token", "X1"]), [(3, 0)]);
        assert_eq!(argv_secrets(&["mysql", "-pZq8vK2"]), [(1, 2)]);
        assert!(argv_secrets(&["echo", "--tokenless"]).is_empty());
    }
}
