//! Credentials found by their shape, wherever they stand in a text: a command line, an
//! environment file, a unit's `Environment=`, a JSON or YAML document the classifier does not
//! know by its path.
//!
//! Shapes: an assignment, option or key whose name says it holds a secret (`--token=…`,
//! `RKE2_TOKEN=…`, `DB_PASSWORD=…`, `oidc-client-secret=…`, `"auth": "…"`, `passwd: …`), an
//! `Authorization:` header, the password of a URL's user-info (`postgres://user:pass@host`), and
//! RKE2's secure `K10…::user:password` tokens. Names that point to a file (`--token-file`,
//! `key_path`) are not secrets themselves.

use std::ops::Range;

/// Words that make a name secret when one of its parts (split at `-`, `_`, `.` and case
/// changes) is one of them, or when the whole name ends with one of them.
const SECRET_WORDS: &[&str] = &[
    "token",
    "secret",
    "password",
    "passwd",
    "passphrase",
    "pass",
    "authkey",
    "authtok",
    "psk",
    "presharedkey",
    "credential",
    "credentials",
    "creds",
    "passwort",
    "kennwort",
    "auth",
    "apikey",
    "accesskey",
    "secretkey",
    "privatekey",
    "accountkey",
    "bearer",
];

/// Words that make a following `key` part a secret (`client-key-data`, `signing_key`).
const KEY_KINDS: &[&str] = &[
    "private",
    "secret",
    "access",
    "api",
    "client",
    "signing",
    "encryption",
    "account",
    "storage",
    "shared",
    "master",
    "session",
    "auth",
    "ssh",
];

/// Name parts after which the value is a path or a reference, not the secret.
const REFERENCE_WORDS: &[&str] = &[
    "file",
    "path",
    "dir",
    "ref",
    "name",
    "type",
    "mode",
    "url",
    "uri",
    "endpoint",
    "id",
    // What is said about a secret, not the secret: its policy, its lifetime, how it is read.
    "source",
    "method",
    "mechanism",
    "length",
    "len",
    "min",
    "max",
    "ttl",
    "expiry",
    "expires",
    "expiration",
    "expire",
    "timeout",
    "lifetime",
    "age",
    "duration",
    "interval",
    "regex",
    "pattern",
    "policy",
    "count",
    "enabled",
    "enable",
    "required",
    "rotation",
    "algorithm",
    "algo",
    "format",
    "size",
    "provider",
    "warning",
    "prompt",
    "hint",
    "stdin",
    "helper",
    "header",
    "issuer",
    "audience",
    "scope",
    "scopes",
    "days",
    "warn",
    "chars",
];

/// Whether a name (of a variable, option or key) says its value is a secret.
pub(crate) fn secret_name(name: &str) -> bool {
    let Some(parts) = name_parts(name) else {
        return false;
    };
    let Some(last) = parts.last() else {
        return false;
    };
    // A flag that turns one off (`--no-auth-warning`, sudo's `NOPASSWD`).
    if parts.len() > 1 && parts[0] == "no"
        || parts.len() == 1 && (last == "nopasswd" || last == "nopass")
    {
        return false;
    }
    // A Vault AppRole `secret_id` is the credential itself.
    if last == "id" && parts.len() > 1 && parts[parts.len() - 2] == "secret" {
        return true;
    }
    if REFERENCE_WORDS.contains(&last.as_str()) {
        return false;
    }
    if last == "key" && parts.len() > 1 && KEY_KINDS.contains(&parts[parts.len() - 2].as_str()) {
        return true;
    }
    let joined: String = parts.concat();
    parts.iter().any(|p| SECRET_WORDS.contains(&p.as_str()))
        || SECRET_WORDS
            .iter()
            .any(|w| w.len() >= 6 && joined.ends_with(w))
}

/// Whether an option whose name [`secret_name`] calls secret may be a switch, a boolean flag
/// given with no value or with `true`/`false` (`--anonymous-auth`,
/// `--enable-bootstrap-token-auth`, `--authentication-token-webhook`): its name speaks of a
/// secret without naming one — the secret word is not its last part, or that part is `auth`
/// after another (a way to authenticate, as often as a credential). A name that names the
/// secret itself (`--token`, `--auth-token`, `--password`, `--client-secret`, `--api-key`,
/// `--auth`, `--secret-id`) always takes a value, as Go's flag parsers read it: the next word,
/// whatever it is.
pub(crate) fn may_be_switch(name: &str) -> bool {
    let Some(parts) = name_parts(name) else {
        return true;
    };
    let Some(last) = parts.last() else {
        return true;
    };
    let before = parts.len().checked_sub(2).map(|i| parts[i].as_str());
    let names_secret = (SECRET_WORDS.contains(&last.as_str())
        && !(last == "auth" && before.is_some()))
        || SECRET_WORDS
            .iter()
            .any(|w| w.len() >= 6 && last.ends_with(w))
        || last == "key" && before.is_some_and(|b| KEY_KINDS.contains(&b))
        || last == "id" && before == Some("secret");
    !names_secret
}

/// A name's parts, lower case: split at `-`, `_`, `.`, `/` and lower→upper case changes
/// (`passwordHash`, `apiKey`), a last `data` or `value` dropped (`client-key-data`,
/// `token-data`: the data of a key or token is the secret itself). `None` for no name or one
/// too long to be one.
fn name_parts(name: &str) -> Option<Vec<String>> {
    let name = name.trim_start_matches('-');
    if name.is_empty() || name.len() > 64 {
        return None;
    }
    // Parts: split at separators and at lower→upper case changes (`passwordHash`, `apiKey`).
    let mut parts: Vec<String> = Vec::new();
    let mut current = String::new();
    let mut prev_lower = false;
    for c in name.chars() {
        if matches!(c, '-' | '_' | '.' | '/') {
            if !current.is_empty() {
                parts.push(std::mem::take(&mut current));
            }
            prev_lower = false;
            continue;
        }
        if c.is_ascii_uppercase() && prev_lower && !current.is_empty() {
            parts.push(std::mem::take(&mut current));
        }
        prev_lower = c.is_ascii_lowercase() || c.is_ascii_digit();
        current.push(c.to_ascii_lowercase());
    }
    if !current.is_empty() {
        parts.push(current);
    }
    // `client-key-data`, `token-data`: the data of a key or token is the secret itself.
    if parts.len() > 1 && parts.last().is_some_and(|p| p == "data" || p == "value") {
        parts.pop();
    }
    Some(parts)
}

/// Whether a flag's value is a boolean as Kubernetes' flag parsing takes one (`true`, `false`,
/// any case).
pub(crate) fn boolean(value: &str) -> bool {
    value.eq_ignore_ascii_case("true") || value.eq_ignore_ascii_case("false")
}

/// Whether a value is no secret at all: empty, a shell variable or command substitution
/// (`$VAR`, `${…}`, `$(…)`; a password hash such as `$6$…` is a secret), a template, or what a
/// redaction already put there.
fn placeholder_like(value: &str) -> bool {
    // `$NAME` (the whole value), `${…}`, `$(…)`: a reference to a value held elsewhere.
    let variable = value.strip_prefix('$').is_some_and(|rest| {
        (rest.starts_with('{') && rest.ends_with('}'))
            || (rest.starts_with('(') && rest.ends_with(')'))
            || (rest
                .bytes()
                .next()
                .is_some_and(|b| b.is_ascii_uppercase() || b == b'_')
                && rest
                    .bytes()
                    .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_'))
    });
    // What a report shows in place of a value: `sha256:` and 16 hex digits.
    let fingerprint = value
        .strip_prefix("sha256:")
        .is_some_and(|h| h.len() == 16 && h.bytes().all(|b| b.is_ascii_hexdigit()));
    // A command's output (`$(curl …)`, `` `cat f` ``), cut at its first space: a reference
    // too, whatever it ends with.
    let substitution =
        value.starts_with("$(") || value.starts_with('`') || value.starts_with("\"$(");
    value.is_empty()
        || value == "\\"
        || variable
        || substitution
        || fingerprint
        || value == super::PLACEHOLDER
        || value == "<redacted>"
        || (value.starts_with("{{") && value.ends_with("}}"))
}

/// Stems one of which every secret name holds (lowercase).
const STEMS: &[&str] = &["tok", "secret", "pass", "cred", "auth", "key", "bearer"];

/// The byte ranges of credential values in `text`, in order, not overlapping.
pub(crate) fn credential_spans(text: &str) -> Vec<Range<usize>> {
    use memchr::memmem::Finder;
    use std::sync::LazyLock;
    static STEM_FINDERS: LazyLock<Vec<Finder<'static>>> =
        LazyLock::new(|| STEMS.iter().map(|s| Finder::new(s.as_bytes())).collect());
    static SCHEME: LazyLock<Finder<'static>> = LazyLock::new(|| Finder::new(b"://"));
    static K10: LazyLock<Finder<'static>> = LazyLock::new(|| Finder::new(b"K10"));
    static AUTHORIZATION: LazyLock<Finder<'static>> =
        LazyLock::new(|| Finder::new(b"authorization"));
    // Built once: a finder per call would cost more than the search on a short line.
    static OPTION: LazyLock<Finder<'static>> = LazyLock::new(|| Finder::new(b" --"));
    static USER_OPTIONS: LazyLock<[Finder<'static>; 3]> = LazyLock::new(|| {
        [
            Finder::new(b"-u "),
            Finder::new(b"-U "),
            Finder::new(b"-user "),
        ]
    });
    let mut spans = Vec::new();
    let bytes = text.as_bytes();
    // Cheap exits first: most command lines and files hold none of what a shape needs.
    let named = memchr::memchr2(b'=', b':', bytes).is_some() || OPTION.find(bytes).is_some();
    let lower = if named {
        text.to_ascii_lowercase()
    } else {
        String::new()
    };
    let stems = named
        && STEM_FINDERS
            .iter()
            .any(|f| f.find(lower.as_bytes()).is_some());
    if stems {
        assignments(text, &mut spans);
    }
    if stems && AUTHORIZATION.find(lower.as_bytes()).is_some() {
        headers(text, &lower, &mut spans);
    }
    if memchr::memchr(b'@', bytes).is_some() && SCHEME.find(bytes).is_some() {
        userinfo(text, &mut spans);
    }
    if K10.find(bytes).is_some() {
        k10_tokens(text, &mut spans);
    }
    if USER_OPTIONS.iter().any(|f| f.find(bytes).is_some()) {
        basic_auth_options(text, &mut spans);
    }
    cloud_keys(text, &mut spans);
    if spans.is_empty() {
        return spans;
    }
    spans.sort_by_key(|r| (r.start, std::cmp::Reverse(r.end)));
    let mut merged: Vec<Range<usize>> = Vec::with_capacity(spans.len());
    for span in spans {
        match merged.last_mut() {
            Some(last) if span.start < last.end => last.end = last.end.max(span.end),
            _ => merged.push(span),
        }
    }
    merged
}

fn is_name_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.')
}

/// The value that starts at `at`: quoted (up to the closing quote) or bare (up to white space
/// or a shell separator; in YAML and JSON also `,` and `}`). Returns its range without quotes.
fn value_at(text: &str, at: usize) -> Option<Range<usize>> {
    value_in(text, at, false)
}

fn value_in(text: &str, at: usize, document: bool) -> Option<Range<usize>> {
    let bytes = text.as_bytes();
    let first = *bytes.get(at)?;
    if first == b'"' || first == b'\'' {
        // Up to the closing quote: `\"` inside double quotes and `''` inside single quotes
        // do not close it.
        let mut i = at + 1;
        while i < bytes.len() {
            match bytes[i] {
                b'\\' if first == b'"' => i += 2,
                b'\'' if first == b'\'' && bytes.get(i + 1) == Some(&b'\'') => i += 2,
                b if b == first => return Some(at + 1..i),
                b'\n' => return Some(at + 1..i),
                _ => i += 1,
            }
        }
        return Some(at + 1..bytes.len());
    }
    // A quote escaped in the text around (`\"`, or `\\\"` where that text is itself in a JSON
    // string): at the start it opens the value, which runs to the same escaped quote; after the
    // start it ends the value, so masking keeps the escape whole.
    let escaped_quote = |i: usize| escaped_quote(bytes, i);
    if let Some((run, quote)) = escaped_quote(at) {
        let start = at + run + 1;
        let mut i = start;
        while i < bytes.len() {
            match bytes[i] {
                b'\\' => {
                    let more = bytes[i..].iter().take_while(|&&c| c == b'\\').count();
                    if bytes.get(i + more) == Some(&quote) {
                        // As escaped as the opening quote, or less (the text around closing):
                        // the end. More escaped: a quote inside the value.
                        if more <= run {
                            return Some(start..i);
                        }
                        i += more + 1;
                    } else {
                        i += more;
                    }
                }
                b if b == quote => return Some(start..i),
                b'\n' => return Some(start..i),
                _ => i += 1,
            }
        }
        return Some(start..bytes.len());
    }
    let mut i = at;
    while i < bytes.len() {
        let b = bytes[i];
        if b.is_ascii_whitespace()
            || matches!(b, b';' | b'&' | b'|' | b'`' | b')' | b'"' | b'\'')
            || (document && matches!(b, b',' | b'}' | b']'))
        {
            break;
        }
        if b == b'\\' {
            // The whole run at once: counted again at each of its bytes, it would be quadratic.
            if escaped_quote(i).is_some() {
                break;
            }
            i += bytes[i..].iter().take_while(|&&c| c == b'\\').count();
            continue;
        }
        i += 1;
    }
    (i > at).then_some(at..i)
}

/// The backslashes and the quote of an escaped quote at `i` (`\"`, `\\\"`): (their count, the
/// quote).
fn escaped_quote(bytes: &[u8], i: usize) -> Option<(usize, u8)> {
    let run = bytes[i..].iter().take_while(|&&c| c == b'\\').count();
    match bytes.get(i + run) {
        Some(&q @ (b'"' | b'\'')) if run > 0 => Some((run, q)),
        _ => None,
    }
}

/// A YAML plain value after `key: `: the rest of the line, less a trailing comment and spaces.
fn yaml_plain(text: &str, at: usize) -> Option<Range<usize>> {
    let bytes = text.as_bytes();
    let line_end = memchr::memchr(b'\n', &bytes[at..]).map_or(bytes.len(), |n| at + n);
    let line = &text[at..line_end];
    let content = match line.find(" #") {
        Some(c) => &line[..c],
        None => line,
    };
    let content = content.trim_end();
    (!content.is_empty()).then_some(at..at + content.len())
}

/// The lines of a YAML block value (`key: |`, `key: >-`, or `key:` then deeper lines): their
/// content without indentation, one range each. Deeper lines that are a mapping or a sequence
/// (`user: x`, `- x`) are no scalar: their own keys are read one by one.
fn yaml_block(text: &str, key_start: usize, after: usize, spans: &mut Vec<Range<usize>>) {
    let scalar_marker = matches!(text.as_bytes().get(after), Some(b'|' | b'>'));
    let bytes = text.as_bytes();
    let line_start = bytes[..key_start]
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |n| n + 1);
    let indent = bytes[line_start..key_start]
        .iter()
        .take_while(|&&b| b == b' ' || b == b'-')
        .count();
    let Some(mut at) = memchr::memchr(b'\n', &bytes[after..]).map(|n| after + n + 1) else {
        return;
    };
    while at < bytes.len() {
        let end = memchr::memchr(b'\n', &bytes[at..]).map_or(bytes.len(), |n| at + n);
        let line = &text[at..end];
        let depth = line.len() - line.trim_start_matches(' ').len();
        let content = line.trim();
        if !content.is_empty() {
            if depth <= indent {
                break;
            }
            let collection = content.starts_with("- ")
                || content == "-"
                || content.split_once(':').is_some_and(|(k, v)| {
                    !k.is_empty()
                        && k.bytes().all(is_name_byte)
                        && (v.is_empty() || v.starts_with([' ', '\t']))
                });
            if collection && !scalar_marker {
                return;
            }
            if !placeholder_like(content) {
                spans.push(at + depth..at + depth + content.len());
            }
        }
        at = end + 1;
    }
}

/// `NAME=value`, `--name=value`, `--name value`, `name: value`, `"name": "value"`.
fn assignments(text: &str, spans: &mut Vec<Range<usize>>) {
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if !is_name_byte(bytes[i]) || (i > 0 && is_name_byte(bytes[i - 1])) {
            i += 1;
            continue;
        }
        let start = i;
        while i < bytes.len() && is_name_byte(bytes[i]) {
            i += 1;
        }
        let name = &text[start..i];
        // A JSON key: `"name"` then `:`.
        let quoted_key = start > 0 && bytes[start - 1] == b'"' && bytes.get(i) == Some(&b'"');
        let mut j = if quoted_key { i + 1 } else { i };
        let Some(&sep) = bytes.get(j) else {
            break;
        };
        let value_start = match sep {
            b'=' => Some(j + 1),
            // YAML needs white space after the colon; a JSON key does not.
            b':' if quoted_key
                || bytes
                    .get(j + 1)
                    .is_none_or(|b| matches!(b, b' ' | b'\t' | b'\n' | b'\r')) =>
            {
                j += 1;
                while bytes.get(j).is_some_and(|b| *b == b' ' || *b == b'\t') {
                    j += 1;
                }
                Some(j)
            }
            // `password = value` at the start of a line: an INI or TOML key (a cloud provider's
            // config, `cloud.conf`); the value is the rest of the line.
            b' ' | b'\t' if ini_key(bytes, start, j).is_some() => ini_key(bytes, start, j),
            // `--token value`: an option, then a value that is not another option
            // (`--password-stdin` reads standard input: no value follows it).
            b' ' if name.starts_with("--") && !name.ends_with("stdin") => {
                let next = j + 1;
                (bytes
                    .get(next)
                    .is_some_and(|b| *b != b'-' && !b.is_ascii_whitespace()))
                .then_some(next)
            }
            _ => None,
        };
        let Some(at) = value_start.filter(|_| secret_name(name)) else {
            continue;
        };
        let yaml = sep == b':' && !quoted_key;
        let first = bytes.get(at).copied();
        // `Environment="DB_PASSWORD=a b"`, `-H 'X-Vault-Token: x' https://…`: the quote
        // before the name, or one still open on its line (`sed 's|^password:.*|password: x|'`),
        // closes the value.
        let opened = (start > 0 && matches!(bytes[start - 1], b'"' | b'\''))
            .then(|| bytes[start - 1])
            .or_else(|| open_quote(bytes, start).filter(|_| sep == b':'))
            .filter(|_| matches!(sep, b'=' | b':') && !quoted_key);
        // `--token value` is one word; `password = a b` (INI) the rest of the line.
        let ini = matches!(sep, b' ' | b'\t') && !name.starts_with("--");
        let range = match (opened, first) {
            _ if ini && !matches!(first, Some(b'"' | b'\'')) => yaml_plain(text, at),
            (Some(quote), Some(f)) if f != quote && escaped_quote(bytes, at).is_none() => {
                let line_end = memchr::memchr(b'\n', &bytes[at..]).map_or(bytes.len(), |n| at + n);
                memchr::memchr(quote, &bytes[at..line_end])
                    // An escaped quote (`\"`) closes it too; the backslash stays in the text.
                    .map(|n| {
                        let run = bytes[at..at + n]
                            .iter()
                            .rev()
                            .take_while(|&&c| c == b'\\')
                            .count();
                        at..at + n - run
                    })
                    .or_else(|| value_in(text, at, false))
            }
            _ if yaml && matches!(first, Some(b'|' | b'>')) => {
                // A block scalar: its lines are the value.
                yaml_block(text, start, at, spans);
                None
            }
            _ if yaml && matches!(first, None | Some(b'\n' | b'\r')) => {
                // `password:` and the value on deeper lines (a mapping under `auth:` is no value:
                // its keys are read on their own).
                if !name.eq_ignore_ascii_case("auth") {
                    yaml_block(text, start, at, spans);
                }
                None
            }
            // A collection (YAML flow or JSON), an anchor or alias, a comment: no scalar here; the
            // keys inside a collection are read one by one.
            _ if sep == b':' && matches!(first, Some(b'[' | b'{')) => None,
            _ if yaml && matches!(first, Some(b'&' | b'*' | b'#')) => None,
            _ if yaml && !matches!(first, Some(b'"' | b'\'')) => yaml_plain(text, at),
            _ => value_in(text, at, sep == b':'),
        };
        // A switch's boolean in a quoted list of options (`ARGS="--anonymous-auth=true --v=2"`):
        // the boolean is its value, the options after it are their own.
        let range = match range {
            Some(r) if opened.is_some() && sep == b'=' && name.starts_with("--") => {
                let v = &text[r.clone()];
                match v.split_once([' ', '\t']) {
                    Some((first, rest))
                        if boolean(first)
                            && rest.trim_start().starts_with("--")
                            && may_be_switch(name) =>
                    {
                        Some(r.start..r.start + first.len())
                    }
                    _ => Some(r),
                }
            }
            r => r,
        };
        // In an option list (`-o username=u,password=p,vers=3.0`: the name follows a comma) the
        // value ends at the next `,name=`.
        let range = match range {
            // In a URL's query the value ends at the next `&` or `#`.
            Some(r) if sep == b'=' && start > 0 && matches!(bytes[start - 1], b'?' | b'&') => {
                let end = text[r.clone()]
                    .find(['&', '#'])
                    .map_or(r.end, |n| r.start + n);
                Some(r.start..end)
            }
            Some(r) if sep == b'=' => Some(r.start..option_end(text, r.clone())),
            r => r,
        };
        // systemd's `SetCredential=id:value`: the value; `LoadCredential=id:path` names a file.
        let range = match range {
            Some(r)
                if name.ends_with("SetCredential") || name.ends_with("SetCredentialEncrypted") =>
            {
                text[r.clone()].find(':').map(|n| r.start + n + 1..r.end)
            }
            Some(_)
                if name.starts_with("LoadCredential") || name.starts_with("ImportCredential") =>
            {
                None
            }
            r => r,
        };
        // A value in a comment is one word: prose follows it (`# password: x (temporary)`).
        let range = match range {
            Some(r) if yaml && in_comment(bytes, start) => {
                let end = text[r.clone()]
                    .find([' ', '\t'])
                    .map_or(r.end, |n| r.start + n);
                Some(r.start..end)
            }
            r => r,
        };
        // What no secret is: a path, the sources of a name service (`passwd: files systemd`).
        let range = range.filter(|r| {
            let v = &text[r.clone()];
            let path = v.starts_with('/') && !v.contains(char::is_whitespace) && v.len() > 1;
            let sources = v.split_whitespace().all(|w| NSS_SOURCES.contains(&w));
            !(path || sources)
        });
        if let Some(range) = range
            && !placeholder_like(&text[range.clone()])
        {
            // Past the value: a value is never read again as names (no quadratic rescans).
            i = i.max(range.end);
            spans.push(range);
        }
    }
}

/// The quote still open at `at` on its line (`'` or `"`, read as a shell reads them), looked
/// for over at most 1 KiB before it.
fn open_quote(bytes: &[u8], at: usize) -> Option<u8> {
    let from = at.saturating_sub(1024);
    let line_start = bytes[from..at]
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(from, |n| from + n + 1);
    if line_start == from && from > 0 {
        return None;
    }
    let mut open: Option<u8> = None;
    let mut i = line_start;
    while i < at {
        match (open, bytes[i]) {
            (None, b'\\') => i += 1,
            (None, q @ (b'\'' | b'"')) => open = Some(q),
            (Some(b'"'), b'\\') => i += 1,
            (Some(q), b) if b == q => open = None,
            _ => {}
        }
        i += 1;
    }
    open
}

/// The sources a name service switch line lists (`passwd: files systemd`).
const NSS_SOURCES: &[&str] = &[
    "files",
    "systemd",
    "sss",
    "ldap",
    "nis",
    "nisplus",
    "compat",
    "db",
    "winbind",
    "dns",
    "myhostname",
    "mymachines",
    "resolve",
    "altfiles",
    "[success=merge]",
    "[notfound=return]",
    "[NOTFOUND=return]",
    "[SUCCESS=merge]",
];

/// Whether the name at `at` is on a comment line (`# …`).
fn in_comment(bytes: &[u8], at: usize) -> bool {
    let from = at.saturating_sub(256);
    let line_start = bytes[from..at]
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(from, |n| from + n + 1);
    bytes[line_start..at]
        .iter()
        .find(|b| !matches!(b, b' ' | b'\t'))
        .is_some_and(|&b| b == b'#')
}

/// Where a value in a comma-separated option list ends: before the first `,name=` in it.
fn option_end(text: &str, value: Range<usize>) -> usize {
    let v = &text[value.clone()];
    let mut at = 0;
    while let Some(c) = v[at..].find(',') {
        let comma = at + c;
        let name = v[comma + 1..]
            .bytes()
            .take_while(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-'))
            .count();
        if name > 0 && v.as_bytes().get(comma + 1 + name) == Some(&b'=') {
            return value.start + comma;
        }
        at = comma + 1;
    }
    value.end
}

/// Where the value of `name = value` starts, when the name (from `start`, ending at `end`) is the
/// first thing on its line and white space then one `=` follow it.
fn ini_key(bytes: &[u8], start: usize, end: usize) -> Option<usize> {
    // Back over spaces and tabs only (a scan to the line's start would be quadratic on a long
    // line of words).
    let indent = bytes[..start]
        .iter()
        .rev()
        .take_while(|b| matches!(b, b' ' | b'\t'))
        .count();
    if start > indent && bytes[start - indent - 1] != b'\n' {
        return None;
    }
    let mut at = end;
    while matches!(bytes.get(at), Some(b' ' | b'\t')) {
        at += 1;
    }
    if bytes.get(at) != Some(&b'=') || bytes.get(at + 1) == Some(&b'=') {
        return None;
    }
    at += 1;
    while matches!(bytes.get(at), Some(b' ' | b'\t')) {
        at += 1;
    }
    bytes
        .get(at)
        .is_some_and(|b| !matches!(b, b'\n' | b'\r'))
        .then_some(at)
}

/// `Authorization: Bearer x`, `Authorization: Basic x`, `authorization=Bearer x`.
fn headers(text: &str, lower: &str, spans: &mut Vec<Range<usize>>) {
    let mut from = 0;
    while let Some(i) = lower[from..].find("authorization") {
        let mut at = from + i + "authorization".len();
        from = at;
        let bytes = lower.as_bytes();
        // `Authorization: x`, `authorization=x`, and as a JSON or YAML key (`"Authorization":"x"`).
        while matches!(bytes.get(at), Some(b'"' | b'\'' | b' ')) {
            at += 1;
        }
        if !matches!(bytes.get(at), Some(b':' | b'=')) {
            continue;
        }
        at += 1;
        // A TOML array (`Authorization = ["Basic …"]`): its first string.
        while matches!(bytes.get(at), Some(b' ' | b'"' | b'\'' | b'[')) {
            at += 1;
        }
        for scheme in ["bearer", "basic", "token", "digest", "negotiate"] {
            if lower[at..].starts_with(scheme)
                && matches!(bytes.get(at + scheme.len()), Some(b' ' | b'\t'))
            {
                at += scheme.len();
                break;
            }
        }
        while matches!(bytes.get(at), Some(b' ' | b'\t')) {
            at += 1;
        }
        if let Some(range) = value_at(text, at)
            && !placeholder_like(&text[range.clone()])
        {
            from = from.max(range.end);
            spans.push(range);
        }
    }
}

/// The password of `scheme://user:password@host`.
fn userinfo(text: &str, spans: &mut Vec<Range<usize>>) {
    let bytes = text.as_bytes();
    let mut from = 0;
    static SCHEME: std::sync::LazyLock<memchr::memmem::Finder<'static>> =
        std::sync::LazyLock::new(|| memchr::memmem::Finder::new(b"://"));
    while let Some(i) = SCHEME.find(&bytes[from..]) {
        let start = from + i + 3;
        from = start;
        let end = bytes[start..]
            .iter()
            .position(|&b| {
                b.is_ascii_whitespace() || matches!(b, b'/' | b'"' | b'\'' | b'?' | b'#')
            })
            .map_or(bytes.len(), |n| start + n);
        let authority = &text[start..end];
        let Some(at) = authority.rfind('@') else {
            continue;
        };
        match authority[..at].find(':') {
            Some(colon) => {
                let password = start + colon + 1..start + at;
                if !placeholder_like(&text[password.clone()]) {
                    spans.push(password);
                }
            }
            // `https://<token>@host`: a user name this long is a token (a GitHub token, say).
            None if at >= 16 && !placeholder_like(&authority[..at]) => {
                spans.push(start..start + at)
            }
            None => {}
        }
    }
}

/// `curl -u user:password`, `--user user:password`, `--proxy-user user:password`: the password.
fn basic_auth_options(text: &str, spans: &mut Vec<Range<usize>>) {
    let words: Vec<(usize, &str)> = text
        .split_ascii_whitespace()
        .map(|w| (w.as_ptr() as usize - text.as_ptr() as usize, w))
        .collect();
    for pair in words.windows(2) {
        let [(_, option), (at, value)] = pair else {
            continue;
        };
        if !matches!(*option, "-u" | "--user" | "--proxy-user" | "-U") {
            continue;
        }
        let unquoted = value.trim_start_matches(['\'', '"']);
        let value_start = at + (value.len() - unquoted.len());
        let inner = unquoted.trim_end_matches(['\'', '"']);
        // A URL is read by the URL rules (`redis-cli -u redis://u:p@h`); `1000:1000` is a uid
        // and a gid (`docker run -u`).
        let ids = inner
            .split(':')
            .all(|p| p.bytes().all(|b| b.is_ascii_digit()));
        if inner.contains("://") || ids {
            continue;
        }
        if let Some(colon) = inner.find(':') {
            let password = value_start + colon + 1..value_start + inner.len();
            if !placeholder_like(&text[password.clone()]) {
                spans.push(password);
            }
        }
    }
}

/// Keys of cloud providers by their own shape: AWS access key ids (`AKIA…`, `ASIA…`) and Google
/// API keys (`AIza…`).
fn cloud_keys(text: &str, spans: &mut Vec<Range<usize>>) {
    let bytes = text.as_bytes();
    for (prefix, len, ok) in [
        (
            &b"AKIA"[..],
            20,
            (|b: u8| b.is_ascii_uppercase() || b.is_ascii_digit()) as fn(u8) -> bool,
        ),
        (b"ASIA", 20, |b: u8| {
            b.is_ascii_uppercase() || b.is_ascii_digit()
        }),
        (b"AIza", 39, |b: u8| {
            b.is_ascii_alphanumeric() || b == b'_' || b == b'-'
        }),
    ] {
        for at in memchr::memmem::find_iter(bytes, prefix) {
            let end = at + len;
            let whole = bytes.get(at..end).is_some_and(|k| k.iter().all(|&b| ok(b)))
                && bytes.get(end).is_none_or(|&b| !ok(b))
                && (at == 0 || !ok(bytes[at - 1]));
            if whole {
                spans.push(at..end);
            }
        }
    }
}

/// `K10<64 hex>::<user>:<password>`: the whole token.
fn k10_tokens(text: &str, spans: &mut Vec<Range<usize>>) {
    let mut from = 0;
    while let Some(i) = text[from..].find("K10") {
        let start = from + i;
        from = start + 3;
        let rest = &text[start + 3..];
        let hex = rest.bytes().take_while(u8::is_ascii_hexdigit).count();
        if hex < 16 || !rest[hex..].starts_with("::") {
            continue;
        }
        if let Some(range) = value_at(text, start) {
            from = from.max(range.end);
            spans.push(range);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn found(text: &str) -> Vec<&str> {
        credential_spans(text)
            .into_iter()
            .map(|r| &text[r])
            .collect()
    }

    #[test]
    fn a_value_ends_before_an_escaped_quote() {
        assert_eq!(
            found(r#"- "curl -H \"Authorization: Bearer Pw5BearerTok\" https://x""#),
            ["Pw5BearerTok"]
        );
        assert_eq!(found(r#"{"cmd": "DB_PASSWORD=hunter2\" x"}"#), ["hunter2"]);
        // A value that starts with an escaped quote runs to the next one.
        assert_eq!(
            found(r#"- "export DB_PASSWORD=\"hunter2xyz\" && run""#),
            ["hunter2xyz"]
        );
        assert_eq!(found(r#"x: "--password=\\\"p w\\\" y""#), ["p w"]);
        // A quote escaped once more is inside the value; an unescaped one ends it.
        assert_eq!(
            found(r#"sh -c "PASSWORD=\"a\\\"bcd\" run""#),
            [r#"a\\\"bcd"#]
        );
        assert_eq!(found(r#"["DB_PASSWORD=\"abc", "next"]"#), ["abc"]);
        // The same text inside a JSON string: the escapes doubled.
        assert_eq!(
            found(r#""- \"curl -H \\\"Authorization: Bearer Pw5BearerTok\\\" https://x\"""#),
            ["Pw5BearerTok"]
        );
    }

    #[test]
    fn ini_and_toml_keys() {
        let conf = "[Global]\nusername = admin\npassword = s3cr3t pw ; note\n\
                    application-credential-secret=abc\n  token =\t\"q t\"\nregion = r1\n";
        assert_eq!(found(conf), ["s3cr3t pw ; note", "abc", "q t"]);
        // Not at the start of a line, a comparison, or an empty value: no INI key.
        assert!(found("if [ \"$password\" = x ]; then").is_empty());
        assert!(found("password == x\n").is_empty());
        assert!(found("password =\nnext\n").is_empty());
    }

    #[test]
    fn shapes_of_credentials() {
        assert_eq!(found("kubelet --token=abc123 --v=2"), ["abc123"]);
        assert_eq!(found("--oidc-client-secret=s3 x"), ["s3"]);
        assert_eq!(found("RKE2_TOKEN=t0k sh -s"), ["t0k"]);
        assert_eq!(found("export DB_PASSWORD='p w'"), ["p w"]);
        assert_eq!(
            found("Environment=AWS_SECRET_ACCESS_KEY=AKIAxyz"),
            ["AKIAxyz"]
        );
        assert_eq!(
            found("curl -H 'Authorization: Bearer eyJabc' https://x"),
            ["eyJabc"]
        );
        assert_eq!(
            found(r#"{"curl -H 'Authorization":"Bearer eyJabc' x"}"#),
            ["eyJabc"]
        );
        assert_eq!(found("postgres://user:pa55@db:5432/x"), ["pa55"]);
        assert_eq!(found("http://u:p@proxy:3128"), ["p"]);
        assert_eq!(
            found(r#"{"auths":{"r":{"auth":"dXNlcjpw"}}}"#),
            ["dXNlcjpw"]
        );
        assert_eq!(found("identity_token: abc\ntoken: xyz\n"), ["abc", "xyz"]);
        assert_eq!(
            found("passwd: $6$salt$hash"),
            ["$6$salt$hash"],
            "a hash, not a variable"
        );
        assert_eq!(found("PASSWORD=ab,cd"), ["ab,cd"]);
        assert_eq!(found("hashed_passwd: x6salt"), ["x6salt"]);
        assert_eq!(found(r#""passwordHash": "$y$j9T""#), ["$y$j9T"]);
        let k10 = format!("K10{}::server:pw", "a".repeat(64));
        assert_eq!(found(&format!("token: {k10}")), [k10.as_str()]);
        assert_eq!(found("rke2 --kubectl --token abc"), ["abc"]);
        assert_eq!(found("etcd-s3-session-token: st"), ["st"]);
        assert_eq!(found("password: ab"), ["ab"], "short values too");
        assert_eq!(
            found("client-key-data: LS0tLS1CRUdJTg=="),
            ["LS0tLS1CRUdJTg=="]
        );
        assert_eq!(found("AccountName=a;AccountKey=abc==;"), ["abc=="]);
        assert_eq!(found("curl -u admin:hunter2 https://x"), ["hunter2"]);
        assert_eq!(found("curl --user 'admin:hunter2' https://x"), ["hunter2"]);
        assert_eq!(
            found("git clone https://ghp_abcdefghij0123456789@github.com/o/r"),
            ["ghp_abcdefghij0123456789"]
        );
        assert_eq!(
            found("id AKIAIOSFODNN7EXAMPLE here"),
            ["AKIAIOSFODNN7EXAMPLE"]
        );
        assert_eq!(found("signing_key: abc"), ["abc"]);
        assert_eq!(
            found("plain_text_passwd: correct horse battery staple  # x"),
            ["correct horse battery staple"]
        );
        assert_eq!(found(r#"Environment="DB_PASSWORD=a b""#), ["a b"]);
        assert_eq!(found(r#""password": "ab\"cd""#), [r#"ab\"cd"#]);
        assert_eq!(found("password: 'it''s'"), ["it''s"]);
        assert_eq!(
            found("password: |\n  s3cr3t\n  more\nnext: x\n"),
            ["s3cr3t", "more"]
        );
        assert_eq!(found("password:\n  s3cr3t\nnext: x\n"), ["s3cr3t"]);
        assert_eq!(
            found("credentials:\n  user: u\n  password: p\n"),
            ["p"],
            "a mapping"
        );
        assert_eq!(found("PASSWORD='#Pa55'"), ["#Pa55"]);
        assert_eq!(found("--token=*abc"), ["*abc"]);
        assert_eq!(found("Authorization: Bearer  eyJtwo"), ["eyJtwo"]);
        assert_eq!(found("Authorization: Bearer\teyJtab"), ["eyJtab"]);
        assert_eq!(found("VAULT_SECRET_ID=abc"), ["abc"]);
        assert_eq!(found("password: $Up3r!"), ["$Up3r!"]);
        assert_eq!(found("curl -u \"'a:\u{e9}\""), ["\u{e9}"]);
    }

    #[test]
    fn references_and_ordinary_text_are_not_secrets() {
        assert!(found("--token-file=/etc/rancher/rke2/token").is_empty());
        assert!(found("token-file: /var/lib/token").is_empty());
        assert!(found("ssh_authorized_keys: [a]").is_empty());
        assert!(found("auth:\n  username: a").is_empty());
        assert!(found("systemctl enable --now rke2-server.service").is_empty());
        assert!(found("curl -sfL https://get.rke2.io | sh -").is_empty());
        assert!(found("token: REDACTED").is_empty());
        assert!(found("TOKEN=$RKE2_TOKEN").is_empty());
        assert!(found("--authorization-mode=Node,RBAC").is_empty());
        assert!(!secret_name("author"));
        assert!(secret_name("passwordHash"));
        assert!(secret_name("client-secret"));
        assert!(!secret_name("secretName"));
        assert!(!secret_name("key"));
        assert!(!secret_name("ssh_authorized_keys"));
        assert!(
            found("https://git@github.com/o/r").is_empty(),
            "a short user name"
        );
        assert!(found("curl -u admin https://x").is_empty());
    }

    #[test]
    fn a_switch_is_no_secret_a_secret_name_is() {
        // `auth` as the last of several parts, or a secret word before the last part: a switch.
        for name in [
            "--anonymous-auth",
            "--enable-bootstrap-token-auth",
            "authentication-token-webhook",
        ] {
            assert!(secret_name(name), "{name}");
            assert!(may_be_switch(name), "{name}");
        }
        // A name that names the secret itself always takes a value.
        for name in [
            "--token",
            "--auth",
            "--auth-token",
            "--password",
            "--oidc-client-secret",
            "--api-key",
            "--secret-id",
            "DB_PASSWORD",
        ] {
            assert!(!may_be_switch(name), "{name}");
        }
        assert!(boolean("TRUE") && boolean("false") && !boolean("yes") && !boolean("true,"));
        // In a quoted list of options a switch's boolean is its value alone.
        assert_eq!(
            found(r#"ARGS="--anonymous-auth=true --profiling=false""#),
            ["true"]
        );
        assert_eq!(
            found(r#"ARGS="--anonymous-auth=true Zq9Xk2mPq""#),
            ["true Zq9Xk2mPq"]
        );
        assert_eq!(found(r#"ARGS="--auth-token=true --v=2""#), ["true --v=2"]);
    }

    #[test]
    fn repeated_names_take_linear_time() {
        for unit in ["token=", "authorization=", "K10aaaaaaaaaaaaaaaaaaaa::u:p"] {
            let text = unit.repeat(200_000);
            let start = std::time::Instant::now();
            let _ = credential_spans(&text);
            assert!(
                start.elapsed() < std::time::Duration::from_secs(5),
                "{unit}"
            );
        }
    }

    #[test]
    fn masking_replaces_every_value() {
        assert_eq!(
            crate::sensitive::mask::text::mask_with("a --token=x1 b PASSWORD=y2", |_| "R"
                .to_owned()),
            "a --token=R b PASSWORD=R"
        );
    }
}
