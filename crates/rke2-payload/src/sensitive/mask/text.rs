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
use super::words::harmless;

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
    let mut found = if text.len() > MAX_CACHED_TEXT {
        own_spans(text, 0)
    } else if let Some(hit) = SEEN.with(|s| s.borrow().get(text).cloned()) {
        hit
    } else {
        let found = own_spans(text, 0);
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

/// The secret ranges of `text` by what it says itself, with no value known beforehand;
/// `depth` counts the base64 layers it is inside (base64 is decoded and judged once).
fn own_spans(text: &str, depth: usize) -> Vec<Range<usize>> {
    let mut spans: Vec<Range<usize>> = crate::sensitive::credential_spans(text)
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
    let mut block = public.iter().peekable();
    // `--password \` at a line's end: the value is the next line's first word.
    let mut continued: Option<&str> = None;
    for (start, line) in lines(text) {
        if let Some(option) = continued.take() {
            let body = line.trim_start();
            let word = body.split([' ', '\t']).next().unwrap_or("");
            let at = start + line.len() - body.len();
            let value = word.trim_matches(['"', '\'']);
            // `--anonymous-auth \` then `--profiling=false \` or `true`: a switch, no secret.
            let switch = super::switch(option, value)
                || crate::sensitive::boolean(value) && crate::sensitive::may_be_switch(option);
            if !value.is_empty() && !super::words::reference(value) && value != "\\" && !switch {
                let lead = word.len() - word.trim_start_matches(['"', '\'']).len();
                spans.push(at + lead..at + lead + value.len());
            }
        }
        if let Some(before) = line.trim_end().strip_suffix('\\') {
            let option = before.split_whitespace().last().unwrap_or("");
            continued = (option.starts_with('-')
                && !option.contains('=')
                && super::secret_key(option.trim_start_matches('-'))
                && !option.ends_with("stdin")
                && !option.ends_with("-file"))
            .then_some(option);
        }
        super::positions::line(line, start, &mut spans);
        // Every word not public by a positive rule, outside certificates and public keys.
        while block.next_if(|b| b.end < start).is_some() {}
        let in_public = block
            .peek()
            .is_some_and(|b| b.start <= start && start + line.len() <= b.end);
        if !in_public {
            let mut words = Vec::new();
            super::words::line(line, start, &mut words);
            // A unit that is base64 of text is judged by its text, as the check reads it.
            words.retain(|r| depth > 0 || !public_base64(&text[r.clone()]));
            spans.extend(words);
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

/// Whether a unit is base64 of text every part of which is public (its own spans empty).
fn public_base64(unit: &str) -> bool {
    super::words::base64_text(unit.trim_matches(super::words::EDGES))
        .is_some_and(|decoded| own_spans(&decoded, 1).is_empty())
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
    fn base64_is_judged_by_its_text() {
        // Base64 of text holding a secret; of public text it stays.
        assert_eq!(
            masked("echo cGFzc3dvcmQ9aHVudGVy | base64 -d"),
            ["cGFzc3dvcmQ9aHVudGVy"]
        );
        assert!(masked("echo SGVsbG8gZnJvbSB0aGUgbm9kZQ== | base64 -d").is_empty());
    }

    #[test]
    fn a_value_on_the_next_line() {
        assert_eq!(
            masked("docker login \\\n  --password \\\n  lemonade \\\n  r.example.com\n"),
            ["lemonade"]
        );
    }

    #[test]
    fn a_switch_on_its_own_line_takes_no_value() {
        assert!(
            masked("kube-apiserver \\\n  --anonymous-auth \\\n  --profiling=false \\\n  --v=2\n")
                .is_empty()
        );
        assert!(masked("kube-apiserver \\\n  --anonymous-auth \\\n  true\n").is_empty());
        assert_eq!(
            masked("run \\\n  --token \\\n  --v=2 \\\n  --anonymous-auth \\\n  lemonade\n"),
            ["--v=2", "lemonade"]
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
            // The key's header says nothing secret; no span runs past the text.
            let spans = masked(text);
            assert!(
                spans.iter().map(|m| m.len()).sum::<usize>() <= text.len(),
                "{text}"
            );
        }
        let armours = "-----BEGIN X-----\n".repeat(20_000);
        let spans = masked(&armours);
        assert!(spans.iter().map(|m| m.len()).sum::<usize>() <= armours.len());
    }
}
