//! Shell words that are secret by their place, whatever they look like: the arguments of
//! commands known to take a secret.
//!
//! A line is cut into commands at unquoted `|`, `;`, `&` and parentheses, each command into
//! words as a POSIX shell quotes them. Then, by program:
//!
//! | program | secret |
//! |---|---|
//! | `htpasswd` with `-b` | the password (its last argument) |
//! | `vault login` | the token (its first argument that is no option) |
//! | `openssl` | the value of `-pass`, `-passin`, `-passout`, `-k`, `-K` (after `pass:`; `env:`, `file:`, `fd:` name a place) |
//! | `zip`, `unzip` | the value of `-P` |
//! | `7z`, `7za`, `7zz` | the tail of `-p…` |
//! | `redis-cli` | the value of `-a` |
//! | `useradd`, `usermod` | the value of `-p` (a password hash) |
//! | `docker`, `podman`, `nerdctl`, `helm`, `crane`, `skopeo`, `buildah` `login` | the value of `-p` |
//! | `smbclient` | after `%` in the value of `-U` |
//! | any | after the first `:` of the value of `-u`, `--user`, `--proxy-user` (curl, wget) |
//! | any | the value of `--from-literal=KEY=VALUE` (kubectl makes a Secret of it) |
//! | any | in a `-o` option list (`mount`), the value of `password=`, `pass=`, `credentials=` up to its comma |
//! | `echo`, `printf` piped to `chpasswd`, `--password-stdin`, `passwd --stdin`, `htpasswd -i`, `vault login -` | every argument |

use std::ops::Range;

/// One word: its span (without the quotes around it) and its text as the shell reads it.
struct Word {
    span: Range<usize>,
    text: String,
}

/// Programs and options whose presence makes a line worth splitting.
const TRIGGERS: &[&str] = &[
    "htpasswd",
    "vault",
    "openssl",
    "zip",
    "7z",
    "redis-cli",
    "useradd",
    "usermod",
    "login",
    "smbclient",
    "-u",
    "-U",
    "--user",
    "--proxy-user",
    "from-literal",
    "-o",
    "chpasswd",
    "stdin",
];

/// The secret words of one line of a command or script at `base`.
pub(crate) fn line(line: &str, base: usize, spans: &mut Vec<Range<usize>>) {
    if line.contains('<') {
        xml(line, base, spans);
    }
    netrc(line, base, spans);
    pgpass(line, base, spans);
    if !TRIGGERS.iter().any(|t| line.contains(t)) {
        return;
    }
    let commands = commands(line, base);
    for (n, words) in commands.iter().enumerate() {
        command(words, spans);
        // `echo X | chpasswd`: what is piped in is the secret.
        if let Some(next) = commands.get(n + 1)
            && reads_secret_from_stdin(next)
            && words
                .first()
                .is_some_and(|w| matches!(program(&w.text), "echo" | "printf"))
        {
            for w in words.iter().skip(1).filter(|w| !w.text.starts_with('-')) {
                // `user:password` for chpasswd: the password.
                match w.text.find(':') {
                    Some(at) => push(
                        w.span.end - (w.text.len() - at - 1)..w.span.end,
                        &w.text[at + 1..],
                        spans,
                    ),
                    None => push(w.span.clone(), &w.text, spans),
                }
            }
        }
    }
}

/// An argv-form command's secret words: (word index, the byte it starts at).
pub(crate) fn argv(argv: &[&str]) -> Vec<(usize, usize)> {
    let mut at = 0;
    let words: Vec<Word> = argv
        .iter()
        .map(|w| {
            let word = Word {
                span: at..at + w.len(),
                text: (*w).to_owned(),
            };
            at += w.len() + 1;
            word
        })
        .collect();
    let mut spans = Vec::new();
    command(&words, &mut spans);
    spans
        .into_iter()
        .filter_map(|s| {
            let i = words
                .iter()
                .position(|w| w.span.start <= s.start && s.start <= w.span.end)?;
            Some((i, s.start - words[i].span.start))
        })
        .collect()
}

/// The program a word names (`/usr/bin/openssl` → `openssl`).
fn program(word: &str) -> &str {
    word.rsplit('/').next().unwrap_or(word)
}

/// Whether a command reads a secret from its standard input.
fn reads_secret_from_stdin(words: &[Word]) -> bool {
    let has = |t: &str| words.iter().any(|w| w.text == t);
    let prog = words.first().map_or("", |w| program(&w.text));
    let prog = if matches!(prog, "sudo" | "doas") {
        words.get(1).map_or("", |w| program(&w.text))
    } else {
        prog
    };
    prog == "chpasswd"
        || has("--password-stdin")
        || (prog == "passwd" && has("--stdin"))
        || (prog == "htpasswd" && words.iter().any(|w| is_flags(&w.text, 'i')))
        || (prog == "vault" && has("login") && has("-"))
}

/// Whether a word is a cluster of short flags holding `flag` (`-bc`, `-Bbn`).
fn is_flags(word: &str, flag: char) -> bool {
    word.strip_prefix('-').is_some_and(|f| {
        !f.is_empty()
            && !f.starts_with('-')
            && f.chars().all(|c| c.is_ascii_alphabetic())
            && f.contains(flag)
    })
}

/// Masks a value unless it stands for another (`$VAR`, `env:X`) or is a path.
fn push(span: Range<usize>, text: &str, spans: &mut Vec<Range<usize>>) {
    if super::words::reference(text) || super::text::harmless(text) || text == "-" {
        return;
    }
    spans.push(span);
}

/// The secret words of one command.
fn command(words: &[Word], spans: &mut Vec<Range<usize>>) {
    // Past `sudo`, `env` and assignments to the program.
    let start = words
        .iter()
        .position(|w| {
            !matches!(
                program(&w.text),
                "sudo" | "doas" | "env" | "exec" | "nohup" | "time"
            ) && !w.text.contains('=')
        })
        .unwrap_or(words.len());
    let Some(first) = words.get(start) else {
        return;
    };
    let prog = program(&first.text);
    let args = &words[start + 1..];
    let value_of = |i: usize| args.get(i + 1);
    for (i, w) in args.iter().enumerate() {
        let t = w.text.as_str();
        // The value after an option, per program.
        let takes = match prog {
            "openssl" => matches!(
                t,
                "-pass" | "-passin" | "-passout" | "-k" | "-K" | "-passphrase"
            ),
            "zip" | "unzip" => t == "-P",
            "redis-cli" => t == "-a",
            "useradd" | "usermod" => t == "-p" || t == "--password",
            "docker" | "podman" | "nerdctl" | "helm" | "crane" | "skopeo" | "buildah" | "oras" => {
                t == "-p" && args.iter().any(|a| a.text == "login")
            }
            _ => false,
        };
        if takes && let Some(v) = value_of(i) {
            secret_value(prog, v, spans);
        }
        if matches!(prog, "7z" | "7za" | "7zz" | "7zr") && t.starts_with("-p") && t.len() > 2 {
            push(w.span.start + 2..w.span.end, &t[2..], spans);
        }
        // `-u user:password` (curl, wget, many clients); `smbclient -U user%password`.
        if matches!(t, "-u" | "--user" | "--proxy-user" | "-U" | "--proxy-basic")
            && let Some(v) = value_of(i)
        {
            let sep = if prog == "smbclient" { '%' } else { ':' };
            if let Some(at) = v.text.find(sep) {
                let start = v.span.end - (v.text.len() - at - 1);
                push(start..v.span.end, &v.text[at + 1..], spans);
            }
        }
        for prefix in ["--user=", "--proxy-user="] {
            if let Some(v) = t.strip_prefix(prefix)
                && let Some(at) = v.find(':')
            {
                push(
                    w.span.end - (v.len() - at - 1)..w.span.end,
                    &v[at + 1..],
                    spans,
                );
            }
        }
        // kubectl's `--from-literal=KEY=VALUE` makes a Secret of VALUE.
        if let Some(kv) = t.strip_prefix("--from-literal=")
            && let Some(at) = kv.find('=')
        {
            push(
                w.span.end - (kv.len() - at - 1)..w.span.end,
                &kv[at + 1..],
                spans,
            );
        }
        // `-o username=u,password=p,vers=3.0`: the password up to its comma.
        if t == "-o"
            && let Some(v) = value_of(i)
        {
            option_list(v, spans);
        }
    }
    match prog {
        // `htpasswd -b[c] [file] user password`: the last argument.
        "htpasswd" if args.iter().any(|w| is_flags(&w.text, 'b')) => {
            if let Some(last) = args.last().filter(|w| !w.text.starts_with('-')) {
                push(last.span.clone(), &last.text, spans);
            }
        }
        // `vault login [options] TOKEN`.
        "vault" if args.first().is_some_and(|w| w.text == "login") => {
            if let Some(token) = args[1..]
                .iter()
                .find(|w| !w.text.starts_with('-') && !w.text.contains('='))
            {
                push(token.span.clone(), &token.text, spans);
            }
        }
        _ => {}
    }
}

/// An option's value that is a secret: after `pass:` for openssl (`env:`, `file:`, `fd:` and
/// `stdin` name where it is), else the whole value.
fn secret_value(prog: &str, v: &Word, spans: &mut Vec<Range<usize>>) {
    if prog == "openssl" {
        if let Some(p) = v.text.strip_prefix("pass:") {
            push(v.span.end - p.len()..v.span.end, p, spans);
        } else if !["env:", "file:", "fd:", "stdin"]
            .iter()
            .any(|p| v.text.starts_with(p))
        {
            push(v.span.clone(), &v.text, spans);
        }
        return;
    }
    push(v.span.clone(), &v.text, spans);
}

/// A comma-separated option list (`mount -o`): the values of the secret options, each up to
/// its comma.
fn option_list(v: &Word, spans: &mut Vec<Range<usize>>) {
    let mut at = v.span.end - v.text.len();
    for opt in v.text.split(',') {
        if let Some((k, value)) = opt.split_once('=')
            && (super::secret_key(k) || matches!(k, "pass" | "pw" | "credentials"))
            && k != "credentials"
        {
            let start = at + k.len() + 1;
            push(start..start + value.len(), value, spans);
        }
        at += opt.len() + 1;
    }
}

/// `.netrc` (`machine h login u password p`, or `password p` on a line of its own): the
/// value after `password` and `account`.
fn netrc(line: &str, base: usize, spans: &mut Vec<Range<usize>>) {
    let words: Vec<(usize, &str)> = line
        .split_ascii_whitespace()
        .map(|w| (w.as_ptr() as usize - line.as_ptr() as usize, w))
        .collect();
    let netrc = words
        .first()
        .is_some_and(|(_, w)| matches!(*w, "machine" | "default"))
        || (words.len() == 2 && matches!(words[0].1, "password" | "account"));
    if !netrc {
        return;
    }
    for pair in words.windows(2) {
        if let [(_, k), (at, v)] = pair
            && matches!(*k, "password" | "account")
        {
            push(base + at..base + at + v.len(), v, spans);
        }
    }
}

/// A `.pgpass` line (`host:port:database:user:password`, the port a number or `*`): the
/// password.
fn pgpass(line: &str, base: usize, spans: &mut Vec<Range<usize>>) {
    let fields: Vec<&str> = line.splitn(5, ':').collect();
    if let [host, port, db, user, password] = fields[..]
        && !host.is_empty()
        && !host.contains(char::is_whitespace)
        && (port == "*" || !port.is_empty() && port.bytes().all(|b| b.is_ascii_digit()))
        && !db.is_empty()
        && !db.contains(char::is_whitespace)
        && !user.is_empty()
        && !user.contains(char::is_whitespace)
    {
        let start = line.len() - password.len();
        push(base + start..base + line.len(), password, spans);
    }
}

/// XML elements whose name says secret (`<password>p</password>` in Maven's `settings.xml`,
/// `<passphrase>`, `<token>`): their text.
fn xml(line: &str, base: usize, spans: &mut Vec<Range<usize>>) {
    let mut from = 0;
    while let Some(open) = line[from..].find('<').map(|n| from + n) {
        from = open + 1;
        let Some(close) = line[open..].find('>').map(|n| open + n) else {
            return;
        };
        let name = &line[open + 1..close];
        if name.is_empty()
            || !name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b':'))
            || !super::secret_key(name)
        {
            continue;
        }
        let start = close + 1;
        let end = line[start..].find("</").map_or(line.len(), |n| start + n);
        let value = &line[start..end];
        if !value.trim().is_empty() {
            push(base + start..base + end, value, spans);
        }
        from = end;
    }
}

/// A line cut into commands (at unquoted `|`, `;`, `&`, `(`, `)`), each cut into words.
fn commands(line: &str, base: usize) -> Vec<Vec<Word>> {
    let bytes = line.as_bytes();
    let mut out: Vec<Vec<Word>> = vec![Vec::new()];
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if matches!(b, b' ' | b'\t') {
            i += 1;
            continue;
        }
        // A redirection and its target are no argument (`htpasswd -bn u p > /etc/x`).
        if matches!(b, b'>' | b'<') {
            i += 1;
            while i < bytes.len() && matches!(bytes[i], b'>' | b'&' | b' ' | b'\t') {
                i += 1;
            }
            while i < bytes.len() && !matches!(bytes[i], b' ' | b'\t' | b';' | b'|' | b'&') {
                i += 1;
            }
            // `2>`: the descriptor before it goes too.
            if let Some(c) = out.last_mut()
                && c.last()
                    .is_some_and(|w| w.text.bytes().all(|d| d.is_ascii_digit()))
            {
                c.pop();
            }
            continue;
        }
        if matches!(b, b'|' | b';' | b'&' | b'(' | b')' | b'`') {
            if out.last().is_some_and(|c| !c.is_empty()) {
                out.push(Vec::new());
            }
            i += 1;
            continue;
        }
        let start = i;
        let mut text = String::new();
        let mut quote: Option<u8> = None;
        let (mut inner_start, mut inner_end) = (None, i);
        while i < bytes.len() {
            let b = bytes[i];
            match quote {
                Some(q) if b == q => {
                    quote = None;
                    inner_end = i;
                    i += 1;
                    continue;
                }
                Some(b'"') if b == b'\\' && i + 1 < bytes.len() => {
                    i += 1;
                }
                Some(_) => {}
                None if b == b'"' || b == b'\'' => {
                    quote = Some(b);
                    inner_start.get_or_insert(i + 1);
                    i += 1;
                    continue;
                }
                None if b == b'\\' && i + 1 < bytes.len() => i += 1,
                None if matches!(
                    b,
                    b' ' | b'\t' | b';' | b'&' | b'|' | b'(' | b')' | b'`' | b'>' | b'<'
                ) =>
                {
                    break;
                }
                None => {}
            }
            // Whole characters: the byte at `i` starts one.
            let len = line[i..].chars().next().map_or(1, char::len_utf8);
            text.push_str(&line[i..i + len]);
            i += len;
            inner_end = i;
        }
        // Without the quotes it starts and ends with (`'p w'`, `--user='a:b'`).
        let from = if inner_start == Some(start + 1) {
            start + 1
        } else {
            start
        };
        let span = base + from..base + inner_end.max(from);
        if let Some(c) = out.last_mut() {
            c.push(Word { span, text });
        }
    }
    out.retain(|c| !c.is_empty());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn masked(text: &str) -> Vec<&str> {
        let mut spans = Vec::new();
        line(text, 0, &mut spans);
        spans.sort_by_key(|r| r.start);
        spans.into_iter().map(|r| &text[r]).collect()
    }

    #[test]
    fn programs_that_take_a_secret() {
        assert_eq!(
            masked("htpasswd -b /etc/nginx/.htpasswd admin hunter"),
            ["hunter"]
        );
        assert_eq!(masked("htpasswd -bn admin 'p w'"), ["p w"]);
        assert_eq!(
            masked("htpasswd -bnB admin hunter > /etc/x 2>&1"),
            ["hunter"]
        );
        assert_eq!(masked("vault login -method=token hvs.token"), ["hvs.token"]);
        assert_eq!(
            masked("openssl pkcs12 -in a.p12 -passin pass:abc -out a.pem"),
            ["abc"]
        );
        assert!(masked("openssl pkcs12 -in a.p12 -passin env:PW -out a.pem").is_empty());
        assert_eq!(masked("unzip -P secret archive.zip"), ["secret"]);
        assert_eq!(masked("7z x -psecret a.7z"), ["secret"]);
        assert_eq!(masked("curl -u admin:changeme https://x"), ["changeme"]);
        assert_eq!(masked("smbclient //srv/s -U svc%changeme"), ["changeme"]);
        assert_eq!(
            masked("mount -t cifs //srv/share /mnt -o username=svc,password=changeme,vers=3.0"),
            ["changeme"]
        );
        assert_eq!(masked("echo 'root:changeme' | chpasswd"), ["changeme"]);
        assert_eq!(
            masked("echo $PW | docker login -u bot --password-stdin r.io"),
            Vec::<&str>::new()
        );
        assert_eq!(
            masked("echo hunter | docker login -u bot --password-stdin r.io"),
            ["hunter"]
        );
        assert_eq!(
            masked("kubectl create secret generic x --from-literal=password=hunter"),
            ["hunter"]
        );
        assert_eq!(
            masked("sudo useradd -m -p '$6$salt$hash' bob"),
            ["$6$salt$hash"]
        );
        assert!(masked("systemctl restart rke2-server").is_empty());
    }

    #[test]
    fn netrc_and_xml() {
        assert_eq!(
            masked("machine github.com login bot password hunter"),
            ["hunter"]
        );
        assert_eq!(masked("  password hunter"), ["hunter"]);
        assert!(masked("reset the password for the user").is_empty());
        assert_eq!(
            masked("<server><id>r</id><password>hunter</password></server>"),
            ["hunter"]
        );
        assert!(masked("<username>bot</username>").is_empty());
        assert_eq!(masked("db.example.com:5432:app:app:hunter"), ["hunter"]);
        assert!(masked("10.0.0.1:6443").is_empty());
    }

    #[test]
    fn argv_form() {
        assert_eq!(
            argv(&["curl", "-u", "admin:changeme", "https://x"]),
            [(2, 6)]
        );
        assert_eq!(argv(&["htpasswd", "-b", "f", "u", "pw"]), [(4, 0)]);
    }
}
