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
    /// Quoted whole, without escapes: `text` is the line at `span`.
    whole: bool,
}

/// One command of a line: its words and where its output is redirected.
struct Command {
    words: Vec<Word>,
    targets: Vec<String>,
}

/// The secret words of one line of a command or script at `base`.
pub(crate) fn line(line: &str, base: usize, spans: &mut Vec<Range<usize>>) {
    // A YAML list item that is a command (`  - echo …` in text that holds a cloud-config):
    // the command after its dash.
    let body = line.trim_start();
    if let Some(item) = body.strip_prefix("- ") {
        let at = line.len() - item.len();
        line_nested(item, base + at, spans, 0);
        return;
    }
    line_nested(line, base, spans, 0);
}

/// How deep a quoted word is read again as a command line (`sh -c '… -c "…"'`).
const MAX_NESTED: usize = 4;

/// What one of the rules needs on a line (lower case): a program of the table, an option
/// they read, a stem of a secret's name, a pipe or a redirection for `echo`.
const TRIGGERS: &[&str] = &[
    "htpasswd",
    "vault",
    "openssl",
    "zip",
    "7z",
    "redis",
    "useradd",
    "usermod",
    "login",
    "smb",
    "az ",
    "influx",
    "ipmitool",
    "ldap",
    "snmp",
    "rabbitmqctl",
    "mysqladmin",
    "-u",
    "--user",
    "--proxy",
    "from-literal",
    "-o",
    "echo",
    "printf",
    "pass",
    "secret",
    "tok",
    "cred",
    "auth",
    "key",
    "psk",
    "identified",
    "mc ",
    "/p:",
    "sqlcmd",
    "mosquitto",
    "ssh-keygen",
    "cryptsetup",
    "sudo",
    "passwd",
    "kinit",
    "nmcli",
    "community",
    "define(",
    "rke2",
    "k3s",
    "mysql",
    "mariadb",
    "sshpass",
];

fn line_nested(line: &str, base: usize, spans: &mut Vec<Range<usize>>, depth: usize) {
    if line.contains('<') {
        xml(line, base, spans);
    }
    // Files' lines, not a command's quoted words (`log "token refreshed"`).
    if depth == 0 {
        netrc(line, base, spans);
        pgpass(line, base, spans);
        two_words(line, base, spans);
        comment_value(line, base, spans);
        community(line, base, spans);
    }
    quoted_pairs(line, base, spans);
    // Every rule below needs one of the triggers (nested words are parts of the line, so a
    // line without any has none inside either): one pass over the line for all of them.
    static GATE: std::sync::LazyLock<Option<aho_corasick::AhoCorasick>> =
        std::sync::LazyLock::new(|| {
            aho_corasick::AhoCorasick::builder()
                .ascii_case_insensitive(true)
                .build(TRIGGERS)
                .ok()
        });
    if GATE.as_ref().is_some_and(|g| !g.is_match(line)) {
        return;
    }
    quoted_after_keyword(line, base, spans);
    let commands = commands(line, base);
    for (n, c) in commands.iter().enumerate() {
        let words = &c.words;
        command(words, spans);
        let echo = words
            .first()
            .is_some_and(|w| matches!(program(&w.text), "echo" | "printf"));
        // `echo X | chpasswd`: what is piped in is the secret; `echo X > /run/secrets/token`:
        // what is written to a file named for a secret.
        let piped = commands
            .get(n + 1)
            .is_some_and(|next| reads_secret_from_stdin(&next.words));
        let into_secret = c.targets.iter().any(|t| {
            let name = t.rsplit('/').next().unwrap_or(t);
            let bare = name.trim_start_matches('.');
            let stem = bare.split('.').next().unwrap_or(bare);
            super::secret_key(stem)
                || matches!(
                    bare,
                    "netrc" | "pgpass" | "htpasswd" | "git-credentials" | "my.cnf"
                )
                || [".key", ".keys", ".pass", ".password", ".secret"]
                    .iter()
                    .any(|e| name.ends_with(e))
        });
        if echo && (piped || into_secret) {
            // `printf '%s' x`: the format is no secret; `printf 'pw\npw\n'` is.
            let printf = words.first().is_some_and(|w| program(&w.text) == "printf")
                && words.get(1).is_some_and(|w| w.text.contains('%'));
            // Written as `key: value` or `KEY=value` into a secret file: the value.
            let structured = |w: &&Word| into_secret && !piped && w.text.contains([':', '=']);
            for w in words.iter().skip(1).filter(|w| structured(w)) {
                if let Some(at) = w.text.find(['=', ':']) {
                    let value = w.text[at + 1..].trim_start();
                    push(w.span.end - value.len()..w.span.end, value, spans);
                }
            }
            for w in words
                .iter()
                .skip(1 + usize::from(printf))
                .filter(|w| !w.text.starts_with('-'))
                .filter(|w| !structured(w))
            {
                // `user:password` for chpasswd: the password.
                match w.text.find(':').filter(|_| piped) {
                    Some(at) => push(
                        w.span.end - (w.text.len() - at - 1)..w.span.end,
                        &w.text[at + 1..],
                        spans,
                    ),
                    None => push(w.span.clone(), &w.text, spans),
                }
            }
        }
        // A quoted word that holds a command line (`sh -c '…'`, argv's `"echo x | chpasswd"`).
        if depth < MAX_NESTED {
            for w in words.iter().filter(|w| w.text.contains([' ', '\t'])) {
                if w.whole {
                    line_nested(&w.text, w.span.start, spans, depth + 1);
                    continue;
                }
                // Escapes inside (`'echo '\''a:b'\'' | chpasswd'`): each secret found in the
                // word as the shell reads it is masked where it stands in the word.
                let mut inner = Vec::new();
                line_nested(&w.text, 0, &mut inner, depth + 1);
                let raw = &line[w.span.start - base..w.span.end - base];
                for r in inner {
                    let secret = &w.text[r];
                    if let Some(at) = raw.find(secret) {
                        spans.push(w.span.start + at..w.span.start + at + secret.len());
                    }
                }
            }
        }
    }
}

/// `IDENTIFIED BY 'x'` (SQL) and a quoted string right after `password`, `passwd`, `secret`
/// or `token` (`ALTER USER u WITH PASSWORD 'x'`, `mysqladmin password "x"`): the string.
fn quoted_after_keyword(line: &str, base: usize, spans: &mut Vec<Range<usize>>) {
    if !line.contains(['\'', '"']) {
        return;
    }
    let lower = line.to_ascii_lowercase();
    for keyword in ["identified by", "password", "passwd", "secret", "token"] {
        let mut from = 0;
        while let Some(i) = lower[from..].find(keyword).map(|n| from + n) {
            from = i + keyword.len();
            // A word of its own.
            if i > 0 && lower.as_bytes()[i - 1].is_ascii_alphanumeric() {
                continue;
            }
            let rest = &line[from..];
            let gap = rest.len() - rest.trim_start_matches([' ', '\t']).len();
            if gap == 0 {
                continue;
            }
            let at = from + gap;
            let Some(&q) = line
                .as_bytes()
                .get(at)
                .filter(|q| matches!(q, b'\'' | b'"'))
            else {
                continue;
            };
            if let Some(end) = line[at + 1..].find(char::from(q)).map(|n| at + 1 + n) {
                push(base + at + 1..base + end, &line[at + 1..end], spans);
                from = end;
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
                whole: false,
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
    // A unit's `ExecStart=/usr/bin/mysql` names its program after the `=`.
    word.rsplit(['/', '=']).next().unwrap_or(word)
}

/// A shell variable's assignment before a command (`RKE2_TOKEN=x sh …`), not a unit's
/// `ExecStart=/usr/bin/rke2` (whose value is the program).
fn assignment(word: &str) -> bool {
    word.split_once('=').is_some_and(|(name, _)| {
        !name.is_empty()
            && name
                .bytes()
                .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_')
    })
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
        || matches!(prog, "passwd" | "cryptsetup" | "kinit")
        || (prog == "smbpasswd" && has("-s"))
        || (words.first().is_some_and(|w| program(&w.text) == "sudo") && has("-S"))
        || (prog == "openssl" && has("stdin"))
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
    // `-` is standard input, `\` a line continued: the value is elsewhere.
    if super::words::reference(text) || super::words::harmless(text) || text == "-" || text == "\\"
    {
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
            ) && !assignment(&w.text)
        })
        .unwrap_or(words.len());
    let Some(first) = words.get(start) else {
        return;
    };
    let prog = program(&first.text);
    let args = &words[start + 1..];
    option_values(prog, args, spans);
    positional(prog, args, spans);
}

/// The values of options that take a secret, per program and by the option's name.
fn option_values(prog: &str, args: &[Word], spans: &mut Vec<Range<usize>>) {
    let value_of = |i: usize| args.get(i + 1);
    // A MySQL client anywhere on the command (`docker exec db mysql -pX`) reads `-pX`.
    let mysql_client = |p: &str| {
        matches!(
            p,
            "mysql" | "mysqladmin" | "mysqldump" | "mariadb" | "mariadb-dump"
        )
    };
    let mysql = mysql_client(prog) || args.iter().any(|w| mysql_client(program(&w.text)));
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
            "az" => (t == "-p" || t == "--password") && args.iter().any(|a| a.text == "login"),
            "influx" => matches!(t, "-p" | "-t"),
            "ipmitool" | "sqlcmd" | "mosquitto_pub" | "mosquitto_sub" => t == "-P",
            "rke2" | "k3s" => t == "-t",
            "sshpass" => t == "-p",
            "ssh-keygen" => matches!(t, "-N" | "-P"),
            p if p.starts_with("ldap") => matches!(t, "-w" | "-y"),
            p if p.starts_with("snmp") => matches!(t, "-A" | "-X"),
            _ => false,
        } || (prog != "openssl"
            && long_secret_option(t)
            // A switch followed by another option (`--anonymous-auth --v=2`) has no value.
            && !value_of(i).is_some_and(|v| super::switch(t, &v.text)));
        if takes && let Some(v) = value_of(i) {
            match v.text.find(':').filter(|_| t.ends_with("creds")) {
                // `--src-creds user:password`: the password.
                Some(at) => push(
                    v.span.end - (v.text.len() - at - 1)..v.span.end,
                    &v.text[at + 1..],
                    spans,
                ),
                None => secret_value(prog, v, spans),
            }
        }
        if matches!(prog, "7z" | "7za" | "7zz" | "7zr") && t.starts_with("-p") && t.len() > 2 {
            push(w.span.start + 2..w.span.end, &t[2..], spans);
        }
        // `mysql -pX` (`-p'a b'` too: the span ends before the closing quote, the text has
        // none), `mysql --password=X`.
        if mysql && t.starts_with("-p") && !t.starts_with("--") && t.len() > 2 {
            push(w.span.end - (t.len() - 2)..w.span.end, &t[2..], spans);
        }
        if mysql
            && let Some(v) = t.strip_prefix("--password=")
            && !v.is_empty()
        {
            push(w.span.end - v.len()..w.span.end, v, spans);
        }
        // `-u user:password` (curl, wget, many clients); `smbclient -U user%password`.
        if matches!(t, "-u" | "--user" | "--proxy-user" | "-U" | "--proxy-basic")
            && let Some(v) = value_of(i)
        {
            let sep = if prog == "smbclient" { '%' } else { ':' };
            // A URL is the URL rules' (`redis-cli -u redis://u:p@h`); `1000:1000` is a uid and
            // a gid (`docker run --user`).
            let ids = v
                .text
                .split(sep)
                .all(|p| p.bytes().all(|b| b.is_ascii_digit()));
            if let Some(at) = v.text.find(sep).filter(|_| !ids && !v.text.contains("://")) {
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
        // `nmcli … password x`, `redis-cli config set requirepass x`: a bare word that names
        // the next argument (not in what a command only prints).
        if matches!(
            prog,
            "nmcli" | "redis-cli" | "valkey-cli" | "keydb-cli" | "mysqladmin" | "wpa_cli"
        ) && matches!(
            t.to_ascii_lowercase().as_str(),
            "password"
                | "passwd"
                | "passphrase"
                | "requirepass"
                | "masterauth"
                | "wifi-sec.psk"
                | "802-1x.password"
                | "wifi-sec.wep-key0"
        ) && let Some(v) = value_of(i)
        {
            push(v.span.clone(), &v.text, spans);
        }
        if prog == "xfreerdp"
            && let Some(p) = t.strip_prefix("/p:")
        {
            push(w.span.end - p.len()..w.span.end, p, spans);
        }
        // `lftp -u user,password`, `jenkins-cli -auth user:password`.
        let pair = match (prog, t) {
            ("lftp", "-u") => Some(','),
            (_, "-auth") => Some(':'),
            _ => None,
        };
        if let (Some(sep), Some(v)) = (pair, value_of(i))
            && let Some(at) = v.text.find(sep)
        {
            push(
                v.span.end - (v.text.len() - at - 1)..v.span.end,
                &v.text[at + 1..],
                spans,
            );
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
}

/// The arguments that are secret by their place, per program.
fn positional(prog: &str, args: &[Word], spans: &mut Vec<Range<usize>>) {
    match prog {
        // `rabbitmqctl add_user USER PASSWORD`, `change_password USER PASSWORD`.
        "rabbitmqctl"
            if args
                .first()
                .is_some_and(|w| matches!(w.text.as_str(), "add_user" | "change_password")) =>
        {
            if let Some(pw) = args.get(2) {
                push(pw.span.clone(), &pw.text, spans);
            }
        }
        // `wpa_passphrase SSID PASSPHRASE`, `openssl passwd [options] PASSWORD`,
        // `consul acl set-agent-token TYPE TOKEN`, `mc alias set NAME URL ACCESS SECRET`.
        "wpa_passphrase" => {
            if let Some(pw) = args.iter().filter(|w| !w.text.starts_with('-')).nth(1) {
                push(pw.span.clone(), &pw.text, spans);
            }
        }
        "openssl" if args.first().is_some_and(|w| w.text == "passwd") => {
            if let Some(pw) = args
                .last()
                .filter(|w| !w.text.starts_with('-') && args.len() > 1)
            {
                push(pw.span.clone(), &pw.text, spans);
            }
        }
        "consul" if args.iter().any(|w| w.text == "set-agent-token") => {
            if let Some(token) = args.last() {
                push(token.span.clone(), &token.text, spans);
            }
        }
        "mc" if args.first().is_some_and(|w| w.text == "alias")
            && args.get(1).is_some_and(|w| w.text == "set") =>
        {
            if let Some(secret) = args.get(5) {
                push(secret.span.clone(), &secret.text, spans);
            }
        }
        // `mysqladmin … password X`.
        "mysqladmin" => {
            if let Some(i) = args.iter().position(|w| w.text == "password")
                && let Some(pw) = args.get(i + 1)
            {
                push(pw.span.clone(), &pw.text, spans);
            }
        }
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

/// An option whose name says its value is secret, with one or two dashes (`-storepass`,
/// `--src-creds`): its value is the next word. Short options are the programs' own.
fn long_secret_option(word: &str) -> bool {
    let name = word.trim_start_matches('-');
    let named = if word.starts_with("--") {
        super::secret_key(name)
    } else {
        // One dash: Java's and OpenSSL's (`-storepass`, `-keypass`); `-psecret` is `-p` and
        // its value glued.
        word.starts_with('-')
            && (name.contains("pass") && !name.starts_with('p')
                || matches!(name, "password" | "passphrase"))
    };
    named
        && name.len() >= 3
        && !name.contains('=')
        && !name.ends_with("stdin")
        && !name.ends_with("-file")
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
    if !line.contains("password") && !line.contains("account") {
        return;
    }
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
    if memchr::memchr_iter(b':', line.as_bytes()).nth(3).is_none() {
        return;
    }
    // Fields end at a `:` that no backslash escapes.
    let mut fields: Vec<&str> = Vec::with_capacity(5);
    let (mut from, mut i) = (0, 0);
    let bytes = line.as_bytes();
    while i < bytes.len() && fields.len() < 4 {
        match bytes[i] {
            b'\\' => i += 1,
            b':' => {
                fields.push(&line[from..i]);
                from = i + 1;
            }
            _ => {}
        }
        i += 1;
    }
    fields.push(&line[from.min(line.len())..]);
    let named = |f: &str| f == "*" || f.bytes().any(|b| b.is_ascii_alphabetic());
    if let [host, port, db, user, password] = fields[..]
        && named(host)
        && named(db)
        && named(user)
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

/// A comment that says what follows its colon (`# admin pass (temporary): x`): the word
/// after the last `: `, when the words before it name a secret.
fn comment_value(line: &str, base: usize, spans: &mut Vec<Range<usize>>) {
    let t = line.trim_start();
    if !t.starts_with('#') {
        return;
    }
    let Some(colon) = line.rfind(": ") else {
        return;
    };
    let lower = line[..colon].to_ascii_lowercase();
    // `# public key: age1…` names what is public.
    if lower.contains("public") || lower.contains("fingerprint") {
        return;
    }
    let named = ["pass", "secret", "token", "pw", "key"].iter().any(|w| {
        lower
            .split(|c: char| !c.is_ascii_alphanumeric())
            .any(|word| word.starts_with(w))
    });
    let value = line[colon + 2..].trim_start();
    let start = line.len() - line[colon + 2..].len() + (line[colon + 2..].len() - value.len());
    let word = value.split_whitespace().next().unwrap_or("");
    if named && !word.is_empty() {
        push(base + start..base + start + word.len(), word, spans);
    }
}

/// snmpd's `rocommunity NAME …`: the community string.
fn community(line: &str, base: usize, spans: &mut Vec<Range<usize>>) {
    let mut words = line
        .split_ascii_whitespace()
        .map(|w| (w.as_ptr() as usize - line.as_ptr() as usize, w));
    if let (Some((_, k)), Some((at, v))) = (words.next(), words.next())
        && matches!(
            k,
            "rocommunity" | "rwcommunity" | "rocommunity6" | "rwcommunity6" | "community"
        )
    {
        push(base + at..base + at + v.len(), v, spans);
    }
}

/// A quoted name that says secret, then a quoted value (`define('DB_PASSWORD', 'x')`,
/// Python's `'PASSWORD': 'x'`, `"token" => "x"`): the value.
fn quoted_pairs(line: &str, base: usize, spans: &mut Vec<Range<usize>>) {
    if !line.contains(['\'', '"']) {
        return;
    }
    // Each quoted string of the line: (where its text is, its text).
    let mut quoted: Vec<(usize, usize)> = Vec::new();
    let b = line.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if matches!(b[i], b'\'' | b'"') {
            let q = b[i];
            if let Some(end) = line[i + 1..].find(char::from(q)).map(|n| i + 1 + n) {
                quoted.push((i + 1, end));
                i = end + 1;
                continue;
            }
        }
        i += 1;
    }
    for pair in quoted.windows(2) {
        let [(ks, ke), (vs, ve)] = pair else { continue };
        let between = line[ke + 1..vs - 1].trim();
        if matches!(between, "," | ":" | "=>" | "=")
            && super::secret_key(&line[*ks..*ke])
            && !line[*ks..*ke].contains(char::is_whitespace)
        {
            push(base + vs..base + ve, &line[*vs..*ve], spans);
        }
    }
}

/// A line of two words whose first names a secret (`auth_pass x` for keepalived,
/// `requirepass x` for Redis, `password x`), and chrony's key lines (`1 SHA256 HEX:…`): the
/// value.
fn two_words(line: &str, base: usize, spans: &mut Vec<Range<usize>>) {
    if !(2..=3).contains(&line.split_ascii_whitespace().count()) {
        return;
    }
    let words: Vec<(usize, &str)> = line
        .split_ascii_whitespace()
        .map(|w| (w.as_ptr() as usize - line.as_ptr() as usize, w))
        .collect();
    match words[..] {
        [(_, name), (at, value)] => {
            let lower = name.to_ascii_lowercase();
            let last = lower.rsplit(['_', '-', '.']).next().unwrap_or("");
            // The name's last word says secret (`auth_pass`, `requirepass`; not nginx's
            // `auth_basic` realm or `proxy_pass` upstream).
            let named = [
                "pass", "passwd", "password", "secret", "token", "psk", "authtok",
            ]
            .iter()
            .any(|w| last.ends_with(w))
                || lower == "masterauth";
            let public =
                value.contains("://") || value.bytes().all(|b| b.is_ascii_digit() || b == b';');
            if named && !public && !name.ends_with(':') && !name.contains('=') {
                push(base + at..base + at + value.len(), value, spans);
            }
        }
        [(_, id), (_, _), (at, key)] if id.bytes().all(|b| b.is_ascii_digit()) => {
            for prefix in ["HEX:", "ASCII:"] {
                if let Some(v) = key.strip_prefix(prefix) {
                    let start = at + prefix.len();
                    push(base + start..base + start + v.len(), v, spans);
                }
            }
        }
        _ => {}
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
fn commands(line: &str, base: usize) -> Vec<Command> {
    let bytes = line.as_bytes();
    let mut out: Vec<Command> = vec![Command {
        words: Vec::new(),
        targets: Vec::new(),
    }];
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
            let target = i;
            while i < bytes.len() && !matches!(bytes[i], b' ' | b'\t' | b';' | b'|' | b'&') {
                i += 1;
            }
            if let Some(c) = out.last_mut() {
                c.targets
                    .push(line[target..i].trim_matches(['"', '\'']).to_owned());
                // `2>`: the descriptor before it goes too.
                if c.words
                    .last()
                    .is_some_and(|w| w.text.bytes().all(|d| d.is_ascii_digit()))
                {
                    c.words.pop();
                }
            }
            continue;
        }
        if matches!(b, b'|' | b';' | b'&' | b'(' | b')' | b'`') {
            if out.last().is_some_and(|c| !c.words.is_empty()) {
                out.push(Command {
                    words: Vec::new(),
                    targets: Vec::new(),
                });
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
        let whole =
            from == start + 1 && line.get(span.start - base..span.end - base) == Some(&text);
        if let Some(c) = out.last_mut() {
            c.words.push(Word { span, text, whole });
        }
    }
    out.retain(|c| !c.words.is_empty());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn masked(text: &str) -> Vec<&str> {
        let mut spans = Vec::new();
        line(text, 0, &mut spans);
        super::super::text::merge(spans)
            .into_iter()
            .map(|r| &text[r])
            .collect()
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
    fn a_switch_takes_no_value() {
        // A switch whose name holds a secret word, then another option: no value.
        assert!(masked("kube-apiserver --anonymous-auth --profiling=false --v=2").is_empty());
        assert!(masked("kube-apiserver --enable-bootstrap-token-auth --v=2").is_empty());
        assert!(masked("kube-apiserver --anonymous-auth true --v=2").is_empty());
        // A value that is no option is still the secret's; a name that names the secret takes
        // the next word whatever it is.
        assert_eq!(masked("tool --anonymous-auth Zq9Xk2mPq"), ["Zq9Xk2mPq"]);
        assert_eq!(masked("tool --token --v=2"), ["--v=2"]);
        assert_eq!(masked("tool --auth --v=2"), ["--v=2"]);
        assert_eq!(masked("tool --password --Zq9Xk2mPq"), ["--Zq9Xk2mPq"]);
        assert_eq!(
            argv(&[
                "kube-apiserver",
                "--anonymous-auth",
                "--v=2",
                "--token",
                "x1y2z3"
            ]),
            [(4, 0)]
        );
    }

    #[test]
    fn found_in_the_field() {
        assert_eq!(
            masked("keytool -importkeystore -srcstorepass harmonica -deststorepass x1"),
            ["harmonica", "x1"]
        );
        assert_eq!(
            masked("ldapsearch -x -D cn=admin -w kingfisher -b dc=x"),
            ["kingfisher"]
        );
        assert_eq!(
            masked("ipmitool -I lanplus -U admin -P 55129083 power status"),
            ["55129083"]
        );
        assert_eq!(
            masked("az login --service-principal -u id -p 'Zq9~8Q~az'"),
            ["Zq9~8Q~az"]
        );
        assert_eq!(
            masked("skopeo copy --src-creds ci:cardamom docker://a docker://b"),
            ["cardamom"]
        );
        assert_eq!(
            masked("snmpwalk -v3 -l authPriv -u mon -a SHA -A avalanche1 -X frost2 h"),
            ["avalanche1", "frost2"]
        );
        assert_eq!(
            masked("echo -n 'tambourine' > /run/secrets/db_password"),
            ["tambourine"]
        );
        assert!(masked("echo hello > /etc/motd").is_empty());
        assert_eq!(masked("rabbitmqctl add_user admin quartz"), ["quartz"]);
        assert_eq!(
            masked("mysqladmin -u root password 'cinnamon'"),
            ["cinnamon"]
        );
        assert_eq!(
            masked("mysql -e \"CREATE USER k IDENTIFIED BY 'Zq9-kine'\""),
            ["Zq9-kine"]
        );
        assert_eq!(
            masked("cloud-init-per once setpw sh -c \"echo 'admin:meadowlark' | chpasswd\""),
            ["meadowlark"]
        );
        assert!(masked("docker run --user 1000:1000 img").is_empty());
        assert!(masked("redis-cli -u redis://default:x@h:6379/0 ping").is_empty());
    }

    #[test]
    fn second_corpus() {
        for (line, secret) in [
            (
                "printf '%s' \"tangerine\" | cryptsetup open /dev/sdb data",
                "tangerine",
            ),
            ("echo 'iguana' | sudo -S apt-get update", "iguana"),
            (
                "printf 'jackal\\njackal\\n' | smbpasswd -a -s ops",
                "jackal\\njackal\\n",
            ),
            (
                "echo -e \"31415926\\n31415926\" | passwd root",
                "31415926\\n31415926",
            ),
            (
                "echo 'machine h login ci password lychee' >> /root/.netrc",
                "machine h login ci password lychee",
            ),
            ("wpa_passphrase CorpGuest buttercup", "buttercup"),
            ("nmcli dev wifi connect CorpWiFi password quail", "quail"),
            ("redis-cli -h r config set requirepass flamingo", "flamingo"),
            (
                "mc alias set minio https://m.example.com admin gibbon",
                "gibbon",
            ),
            ("ssh-keygen -p -P old -N gingerbread -f k", "gingerbread"),
            ("sqlcmd -S db -U sa -P viper", "viper"),
            ("xfreerdp /v:host /u:ops /p:toucan", "toucan"),
            ("lftp -u backup,vulture sftp://h", "vulture"),
            (
                "java -jar jenkins-cli.jar -auth ops:1123581321 who-am-i",
                "1123581321",
            ),
            ("useradd -p \"$(openssl passwd -1 lemur)\" bob", "lemur"),
            ("define('DB_PASSWORD', 'halibut');", "halibut"),
            ("        'PASSWORD': 'sturgeon',", "sturgeon"),
            ("rocommunity guava 10.0.0.0/8", "guava"),
            ("# bootstrap admin pass (temporary): honeydew", "honeydew"),
            ("echo 'ntp_key=boysenberry' >> /etc/ntp.keys", "boysenberry"),
            (
                "  - echo 'ntp_key=boysenberry' >> /etc/ntp.keys",
                "boysenberry",
            ),
        ] {
            assert!(masked(line).contains(&secret), "{line}: {:?}", masked(line));
        }
        assert!(masked("kubectl get secret app -o yaml").is_empty());
        assert!(masked("echo $PASSWORD_HINT").is_empty());
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
        assert_eq!(
            masked("db:*:app:app:pw\\:with\\:colons"),
            ["pw\\:with\\:colons"]
        );
        assert_eq!(masked("    auth_pass vrrp4321"), ["vrrp4321"]);
        assert_eq!(masked("requirepass hunter"), ["hunter"]);
        assert_eq!(masked("1 SHA256 HEX:8C1D2E3F"), ["8C1D2E3F"]);
        assert!(masked("passwd: files systemd").is_empty());
        assert!(masked("auth_basic \"Restricted\";").is_empty());
        assert!(masked("proxy_pass http://api;").is_empty());
        assert!(masked("mac: 02:42:ac:11:00:02").is_empty());
        assert!(masked("log \"token refreshed\"").is_empty());
        assert!(masked("10.0.0.1:6443").is_empty());
    }

    #[test]
    fn a_unit_s_command_names_its_program_after_the_equals_sign() {
        assert_eq!(
            masked("ExecStartPost=/usr/bin/mysql -ucollector -pkingfisher -e 'select 1'"),
            ["kingfisher"]
        );
        assert_eq!(masked("RKE2_URL=x rke2 agent -t hunter"), ["hunter"]);
    }

    #[test]
    fn argv_words() {
        assert_eq!(argv(&["rke2", "agent", "--token", "X1"]), [(3, 0)]);
        assert_eq!(argv(&["mysql", "-pZq8vK2"]), [(1, 2)]);
        assert!(argv(&["echo", "--tokenless"]).is_empty());
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
