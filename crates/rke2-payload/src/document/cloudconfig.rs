//! cloud-config: `write_files` (every encoding cloud-init accepts), `runcmd`, `bootcmd`, `ntp`,
//! and every other top-level key kept as data.
//!
//! CAPRKE2 with `airGappedChecksum` writes an unquoted `- [[ … ]] || exit 1` item, which is not
//! valid YAML. When a parse fails on such a sequence item, a tolerant second pass quotes the item
//! and reads the document again; the original error is kept as a [`Finding`].

use std::collections::HashMap;

use serde::Deserialize;
use serde_json::Value;

use super::{Command, Content, DocumentError, File};
use crate::checks::{Check, Finding};
use crate::codec::{b64, gzip};
use crate::error::Position;

/// The most bytes one `write_files` entry may inflate to.
const MAX_FILE_INFLATE: u64 = 16 << 20;

/// How many lines the tolerant pass may quote before giving up.
const MAX_REPAIRS: usize = 32;

/// A parsed cloud-config.
///
/// Its `Debug` output names files, keys and counts; it never shows contents, commands or values,
/// which may hold secrets.
#[derive(Clone, Default)]
pub(crate) struct CloudConfig {
    /// Whether the document starts with `## template: jinja` (cloud-init renders it as Jinja).
    pub jinja: bool,
    /// `write_files`, decoded.
    pub files: Vec<File>,
    /// `bootcmd` then `runcmd`, in order.
    pub commands: Vec<Command>,
    /// NTP servers and pools from the `ntp` module.
    pub ntp: Option<Ntp>,
    /// Every other top-level key, with its value, in document order.
    pub other: Vec<(String, Value)>,
    /// Lines the tolerant pass had to quote (1-based), if the document was not valid YAML.
    pub repaired_lines: Vec<u64>,
    /// Problems noticed while reading.
    pub problems: Vec<Finding>,
    /// `write_files` fields this model does not hold, as (path, field): a conversion must name
    /// them, never drop them.
    pub file_fields: Vec<(String, &'static str)>,
    /// Paths of `write_files` entries with `defer: true` (written in cloud-init's final stage,
    /// after mounts and users).
    pub deferred: Vec<String>,
}

impl std::fmt::Debug for CloudConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CloudConfig")
            .field("jinja", &self.jinja)
            .field("files", &self.files)
            .field("commands", &self.commands.len())
            .field("ntp", &self.ntp.is_some())
            .field(
                "other",
                &self.other.iter().map(|(k, _)| k).collect::<Vec<_>>(),
            )
            .field("repaired_lines", &self.repaired_lines)
            .field("problems", &self.problems)
            .finish()
    }
}

/// The `ntp` module's settings.
#[derive(Debug, Clone, PartialEq, Eq, Default, serde::Serialize)]
pub(crate) struct Ntp {
    /// `enabled`, if given.
    pub enabled: Option<bool>,
    /// `servers`.
    pub servers: Vec<String>,
    /// `pools`.
    pub pools: Vec<String>,
}

/// One `write_files` entry. A repeated key keeps its last value, as PyYAML (cloud-init) does.
#[derive(Default)]
struct RawWriteFile {
    path: Option<String>,
    content: Option<serde_saphyr::Spanned<String>>,
    encoding: Option<String>,
    owner: Option<String>,
    permissions: Option<Value>,
    append: Option<bool>,
    source: Option<RawSource>,
    defer: Option<bool>,
}

impl<'de> Deserialize<'de> for RawWriteFile {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = RawWriteFile;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a write_files entry (a mapping)")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<RawWriteFile, A::Error> {
                let mut out = RawWriteFile::default();
                while let Some(key) = map.next_key::<Value>()? {
                    match key.as_str() {
                        Some("path") => out.path = map.next_value()?,
                        Some("content") => out.content = map.next_value()?,
                        Some("encoding") => out.encoding = map.next_value()?,
                        Some("owner") => out.owner = map.next_value()?,
                        Some("permissions") => out.permissions = map.next_value()?,
                        Some("append") => out.append = map.next_value()?,
                        Some("source") => out.source = map.next_value()?,
                        Some("defer") => out.defer = map.next_value::<Value>()?.as_bool(),
                        // cloud-init ignores keys it does not know (its schema reports them).
                        _ => {
                            map.next_value::<serde::de::IgnoredAny>()?;
                        }
                    }
                }
                Ok(out)
            }
        }
        d.deserialize_map(V)
    }
}

#[derive(Deserialize)]
struct RawSource {
    #[serde(default)]
    uri: Option<String>,
    #[serde(default)]
    headers: Option<Value>,
}

impl CloudConfig {
    /// Reads a cloud-config text.
    pub(crate) fn parse(text: &str) -> Result<Self, DocumentError> {
        let mut config = match super::cloudconfig_fast::parse(text) {
            Some(fast) => Self::from_fast(text, fast),
            None => Self::parse_full(text)?,
        };
        config.expand_install_script();
        Ok(config)
    }

    /// A runcmd entry that runs the install script the config writes (`bash
    /// /etc/rke2-install.sh`, as a conversion from Ignition writes it) stands for the script's
    /// commands, as an Ignition unit's `ExecStart` of a script does.
    fn expand_install_script(&mut self) {
        const SCRIPT: &str = "/etc/rke2-install.sh";
        let runs = |c: &Command| {
            c.origin == "runcmd"
                && matches!(
                    c.line.as_str(),
                    "bash /etc/rke2-install.sh" | "sh /etc/rke2-install.sh"
                )
        };
        if !self.commands.iter().any(runs) {
            return;
        }
        let Some(script) = self
            .files
            .iter()
            .rev()
            .find(|f| f.path == SCRIPT)
            .and_then(|f| f.text().map(|t| t.into_owned()))
        else {
            return;
        };
        let mut commands = Vec::with_capacity(self.commands.len());
        for c in std::mem::take(&mut self.commands) {
            if runs(&c) {
                commands.extend(super::ignition::script_lines(&script).map(|line| Command {
                    line,
                    origin: SCRIPT.to_owned(),
                }));
            } else {
                commands.push(c);
            }
        }
        self.commands = commands;
    }

    /// The document CAPRKE2 renders, read by the fast path.
    fn from_fast(text: &str, fast: super::cloudconfig_fast::Fast) -> Self {
        let mut config = CloudConfig {
            jinja: text.trim_start().starts_with("## template: jinja"),
            files: Vec::with_capacity(fast.files.len()),
            commands: fast
                .runcmd
                .into_iter()
                .map(|line| Command {
                    line,
                    origin: "runcmd".to_owned(),
                })
                .collect(),
            ..Default::default()
        };
        for entry in fast.files {
            config.add_file(Entry {
                path: Some(entry.path),
                content: entry.content,
                binary: false,
                encoding: entry.encoding,
                owner: entry.owner,
                permissions: entry.permissions,
                append: None,
                source_uri: None,
                extras: Vec::new(),
                defer: false,
                at: None,
            });
        }
        config
    }

    /// Panics if the fast path reads `text` differently from the full parser (for fuzzing).
    #[cfg(any(test, feature = "fuzzing"))]
    pub(crate) fn check_fast_path(text: &str) {
        if let Some(fast) = super::cloudconfig_fast::parse(text) {
            let fast = Self::from_fast(text, fast);
            let full = Self::parse_full(text).expect("the fast path read what the parser rejects");
            assert_eq!(fast.files, full.files, "files differ");
            assert_eq!(fast.commands, full.commands, "commands differ");
            assert_eq!(fast.jinja, full.jinja);
            assert!(full.other.is_empty() && full.problems.len() == fast.problems.len());
        }
    }

    /// Reads a cloud-config text with the full YAML parser (and the tolerant second pass).
    fn parse_full(text: &str) -> Result<Self, DocumentError> {
        let jinja = text.trim_start().starts_with("## template: jinja");
        let mut problems = Vec::new();
        let mut repaired_lines = Vec::new();
        let mut current = std::borrow::Cow::Borrowed(text);
        let top = loop {
            match parse_top(&current) {
                Ok(top) => break top,
                Err(e) => {
                    let at = position(&e);
                    let message = clean_message(&e);
                    let repaired = (repaired_lines.len() < MAX_REPAIRS)
                        .then(|| crate::codec::yaml::quote_item_near(&current, at.line))
                        .flatten();
                    let Some((line, column, fixed)) = repaired else {
                        return Err(DocumentError::Yaml { message, at });
                    };
                    if repaired_lines.is_empty() {
                        problems.push(
                            Finding::new(
                                Check::CloudConfigInvalidYaml,
                                format!(
                                    "cloud-config is not valid YAML: the unquoted sequence item on line {line} breaks the parser ({message} at line {}, column {}); cloud-init would reject the whole document",
                                    at.line, at.column
                                ),
                            )
                            .at_line(line, column),
                        );
                    }
                    repaired_lines.push(line);
                    current = std::borrow::Cow::Owned(fixed);
                }
            }
        };
        let Some(top) = top else {
            return Err(DocumentError::NotMapping);
        };
        let mut config = CloudConfig {
            jinja,
            repaired_lines,
            problems,
            ..Default::default()
        };
        for key in &top.1 {
            config.problems.push(Finding::located(
                Check::CloudConfigDuplicateKey,
                format!(
                    "top-level key `{}` appears more than once; cloud-init keeps only the last",
                    crate::codec::text::shorten(key, 40)
                ),
                None,
                None,
            ));
        }
        let mut bootcmd = Vec::new();
        let mut runcmd = Vec::new();
        for (key, value) in top.0 {
            match key.as_str() {
                "write_files" => {
                    let entries: Vec<RawWriteFile> = match value {
                        TopValue::WriteFiles(entries) => entries,
                        TopValue::Other(_) => Vec::new(),
                    };
                    for entry in entries {
                        config.add_file(Entry::from_raw(entry, &current));
                    }
                }
                "runcmd" | "bootcmd" => {
                    let value = value.into_value();
                    if !matches!(value, Value::Array(_) | Value::Null) {
                        config.problems.push(Finding::located(
                            Check::CloudConfigSchema,
                            format!("{key} must be a list of commands"),
                            None,
                            None,
                        ));
                    }
                    let list = commands(value, &key);
                    if key == "runcmd" {
                        runcmd = list;
                    } else {
                        bootcmd = list;
                    }
                }
                "ntp" => {
                    let value = value.into_value();
                    let servers_ok = value
                        .get("servers")
                        .is_none_or(|s| matches!(s, Value::Array(_) | Value::Null));
                    if !matches!(value, Value::Object(_) | Value::Null) || !servers_ok {
                        config.problems.push(Finding::located(
                            Check::CloudConfigSchema,
                            "ntp must be a mapping whose servers and pools are lists".to_owned(),
                            None,
                            None,
                        ));
                    }
                    config.ntp = Some(ntp(&value));
                    config.other.push((key, value));
                }
                _ => config.other.push((key, value.into_value())),
            }
        }
        config.commands = bootcmd.into_iter().chain(runcmd).collect();
        Ok(config)
    }

    /// Text with no cloud-init header that does not read as YAML: cloud-init runs none of it.
    pub(crate) fn not_cloud_init(_text: &str) -> Self {
        CloudConfig {
            problems: vec![Finding::new(
                Check::UserdataNotCloudConfig,
                "the user data is not a cloud-config: it has no #cloud-config line (nor any other cloud-init header) and is not YAML, so cloud-init runs none of it",
            )],
            ..Default::default()
        }
    }

    /// A cloud-init input that is not a cloud-config (a script, `#include`, an archive, MIME
    /// multipart): no files or commands are read from it, and a problem says so.
    pub(crate) fn other_cloud_init(text: &str) -> Self {
        let first = text.trim_start().lines().next().unwrap_or("");
        let kind = crate::codec::text::shorten(first.trim(), 40);
        CloudConfig {
            problems: vec![Finding::located(
                Check::UserdataNotCloudConfig,
                format!(
                    "the user data is a cloud-init `{kind}` part, not a cloud-config: its files and commands are not listed"
                ),
                None,
                None,
            )],
            ..Default::default()
        }
    }

    fn add_file(&mut self, raw: Entry) {
        let Some(path) = raw.path.filter(|p| !p.is_empty()) else {
            self.problems.push(Finding::located(
                Check::CloudConfigSchema,
                "a write_files entry has no path; cloud-init fails on it".to_owned(),
                None,
                raw.at,
            ));
            return;
        };
        let mode = match raw.permissions.as_ref().map(parse_mode) {
            None => None,
            Some(Ok(mode)) => Some(mode),
            Some(Err(())) => {
                self.problems.push(Finding::located(
                    Check::CloudConfigSchema,
                    "permissions is not an octal mode such as '0640'".to_owned(),
                    Some(path.clone()),
                    None,
                ));
                None
            }
        };
        for extra in &raw.extras {
            self.file_fields.push((path.clone(), extra));
        }
        if raw.defer {
            self.deferred.push(path.clone());
        }
        let encoding = raw.encoding.map(|e| e.trim().to_ascii_lowercase());
        let binary = raw.binary;
        let content = match (&raw.content, raw.source_uri) {
            (None, Some(uri)) => {
                self.problems.push(Finding::located(
                    Check::RemoteContent,
                    format!(
                        "the file's content is fetched at boot from {}: it was not read, and the node must reach it",
                        crate::codec::text::terminal_safe(&crate::codec::text::shorten(&uri, 200))
                    ),
                    Some(path.clone()),
                    None,
                ));
                Content::Remote(uri)
            }
            (content, _) => {
                let body = content.as_deref().unwrap_or("");
                match decode_content(body, binary, encoding.as_deref()) {
                    Ok(bytes) => Content::Inline(bytes),
                    Err(why) => Content::Undecodable(why),
                }
            }
        };
        if let Content::Undecodable(why) = &content {
            self.problems.push(Finding::located(
                Check::FileContentUndecodable,
                format!("content cannot be decoded: {why}"),
                Some(path.clone()),
                None,
            ));
        }
        let encoding = match (encoding, binary) {
            (Some(e), _) => Some(e),
            (None, true) => Some("!!binary".to_owned()),
            (None, false) => None,
        };
        self.files.push(File {
            path,
            mode,
            owner: raw.owner.filter(|o| !o.is_empty()),
            encoding,
            content,
            append: raw.append.unwrap_or(false),
        });
    }
}

/// One `write_files` entry, however it was read.
struct Entry {
    path: Option<String>,
    content: Option<String>,
    /// The content is tagged `!!binary`.
    binary: bool,
    encoding: Option<String>,
    owner: Option<String>,
    permissions: Option<Value>,
    append: Option<bool>,
    source_uri: Option<String>,
    /// Fields not held: `source.headers`, a `content` that is only the fallback of a `source`.
    extras: Vec<&'static str>,
    /// `defer: true`.
    defer: bool,
    /// Where the entry's content is, for messages.
    at: Option<Position>,
}

impl Entry {
    fn from_raw(raw: RawWriteFile, text: &str) -> Self {
        let binary = raw
            .content
            .as_ref()
            .is_some_and(|c| tagged_binary(text, c.referenced.span().byte_offset()));
        let at = raw.content.as_ref().map(|c| Position {
            line: c.referenced.line(),
            column: c.referenced.column(),
            offset: None,
        });
        let mut extras = Vec::new();
        if let Some(source) = &raw.source {
            if source
                .headers
                .as_ref()
                .is_some_and(|h| h.as_object().is_some_and(|m| !m.is_empty()))
            {
                extras.push("source.headers");
            }
            if source.uri.is_some() && raw.content.is_some() {
                extras.push("content (cloud-init's fallback when the source cannot be fetched)");
            }
        }
        Entry {
            path: raw.path,
            content: raw.content.map(|c| c.value),
            binary,
            encoding: raw.encoding,
            owner: raw.owner,
            permissions: raw.permissions,
            append: raw.append,
            extras,
            defer: raw.defer.unwrap_or(false),
            source_uri: raw.source.and_then(|s| s.uri),
            at,
        }
    }
}

/// The top level, read key by key so `write_files` is typed and everything else kept as data.
struct Top(Vec<(String, TopValue)>, Vec<String>);

enum TopValue {
    WriteFiles(Vec<RawWriteFile>),
    Other(Value),
}

impl TopValue {
    fn into_value(self) -> Value {
        match self {
            TopValue::Other(v) => v,
            TopValue::WriteFiles(_) => Value::Null,
        }
    }
}

impl<'de> Deserialize<'de> for Top {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = Top;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a cloud-config mapping")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Top, A::Error> {
                // Entries in order, a repeated key's earlier entry emptied (`None`) and found
                // through `at`, so the work stays linear in the keys.
                let mut out: Vec<Option<(String, TopValue)>> = Vec::new();
                let mut at: HashMap<String, usize> = HashMap::new();
                let mut duplicates = Vec::new();
                while let Some(key) = map.next_key::<String>()? {
                    let value = if key == "write_files" {
                        let entries: Option<Vec<RawWriteFile>> = map.next_value()?;
                        TopValue::WriteFiles(entries.unwrap_or_default())
                    } else {
                        TopValue::Other(map.next_value()?)
                    };
                    // PyYAML (cloud-init) keeps the last of repeated keys, where it stands.
                    if let Some(i) = at.insert(key.clone(), out.len()) {
                        out[i] = None;
                        duplicates.push(key.clone());
                    }
                    out.push(Some((key, value)));
                }
                Ok(Top(out.into_iter().flatten().collect(), duplicates))
            }
        }
        d.deserialize_map(V)
    }
}

fn options() -> serde_saphyr::Options {
    let mut o = serde_saphyr::Options::default();
    o.with_snippet = false;
    // cloud-init reads YAML 1.1 (PyYAML): 0644 is octal.
    o.legacy_octal_numbers = true;
    // Keep !!binary text; it is decoded here, where non-UTF-8 bytes are allowed.
    o.ignore_binary_tag_for_string = true;
    // Repeated keys reach the visitor, which keeps the last as PyYAML does and reports them.
    o.duplicate_keys = serde_saphyr::DuplicateKeyPolicy::PassThrough;
    let mut budget = serde_saphyr::Budget::default();
    budget.max_depth = 64;
    budget.max_aliases = 1_000;
    budget.max_anchors = 1_000;
    o.budget = Some(budget);
    o
}

fn parse_top(text: &str) -> Result<Option<Top>, serde_saphyr::Error> {
    // A document that is only comments (the header) is an empty cloud-config.
    let docs: Vec<Option<Top>> = serde_saphyr::from_str_multiple_with_options(text, options())?;
    Ok(match docs.into_iter().next() {
        Some(top) => top,
        None => Some(Top(Vec::new(), Vec::new())),
    })
}

fn position(e: &serde_saphyr::Error) -> Position {
    e.location()
        .map(|l| Position {
            line: l.line(),
            column: l.column(),
            offset: l.span().byte_offset(),
        })
        .unwrap_or_default()
}

fn clean_message(e: &serde_saphyr::Error) -> String {
    crate::codec::text::parser_message(&e.to_string())
}

/// Whether the value that starts at byte `offset` is tagged `!!binary`: the token before it
/// (after a block scalar header, if any) is the tag.
fn tagged_binary(text: &str, offset: Option<u64>) -> bool {
    let Some(offset) = offset.and_then(|o| usize::try_from(o).ok()) else {
        return false;
    };
    let Some(before) = text.get(..offset) else {
        return false;
    };
    let mut t = before.trim_end();
    let last = t.rsplit(char::is_whitespace).next().unwrap_or(t);
    if last.starts_with(['|', '>']) && last[1..].chars().all(|c| "+-0123456789".contains(c)) {
        t = t[..t.len() - last.len()].trim_end();
    }
    t.ends_with("!!binary") || t.ends_with("!<tag:yaml.org,2002:binary>")
}

fn parse_mode(value: &Value) -> Result<u32, ()> {
    match value {
        Value::Number(n) => n
            .as_u64()
            .and_then(|n| u32::try_from(n).ok())
            .filter(|&m| m <= 0o7777)
            .ok_or(()),
        Value::String(s) => {
            let s = s.trim();
            let digits = s.strip_prefix("0o").unwrap_or(s);
            u32::from_str_radix(digits, 8)
                .ok()
                .filter(|&m| m <= 0o7777)
                .ok_or(())
        }
        _ => Err(()),
    }
}

/// Decodes a `write_files` content as cloud-init does.
fn decode_content(body: &str, binary: bool, encoding: Option<&str>) -> Result<Vec<u8>, String> {
    let unbase64 = |text: &str| -> Result<Vec<u8>, String> {
        let compact: String = text.chars().filter(|c| !c.is_ascii_whitespace()).collect();
        b64::decode(&compact).map_err(|e| format!("invalid base64 ({e})"))
    };
    let raw: Vec<u8> = if binary {
        unbase64(body).map_err(|e| format!("!!binary content: {e}"))?
    } else {
        body.as_bytes().to_vec()
    };
    let inflate = |bytes: &[u8]| -> Result<Vec<u8>, String> {
        gzip::inflate(bytes, MAX_FILE_INFLATE).map_err(|e| e.to_string())
    };
    match encoding.unwrap_or("") {
        "" | "text/plain" => Ok(raw),
        "b64" | "base64" => {
            let text = std::str::from_utf8(&raw).map_err(|_| "base64 content is not text")?;
            unbase64(text)
        }
        "gz" | "gzip" | "application/x-gzip" => inflate(&raw),
        "gz+b64" | "gzip+base64" | "gz+base64" | "gzip+b64" => {
            let text = std::str::from_utf8(&raw).map_err(|_| "base64 content is not text")?;
            inflate(&unbase64(text)?)
        }
        other => Err(format!(
            "unknown encoding {:?}",
            crate::codec::text::shorten(other, 20)
        )),
    }
}

fn commands(value: Value, origin: &str) -> Vec<Command> {
    let Value::Array(items) = value else {
        return Vec::new();
    };
    items
        .into_iter()
        .filter_map(|item| {
            let line = match item {
                Value::String(s) => s,
                Value::Array(argv) => argv
                    .iter()
                    .map(|a| shell_quote(&scalar(a)))
                    .collect::<Vec<_>>()
                    .join(" "),
                Value::Null => return None,
                other => scalar(&other),
            };
            Some(Command {
                line,
                origin: origin.to_owned(),
            })
        })
        .collect()
}

fn scalar(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Quotes an argv element for display as a shell word.
pub(crate) fn shell_quote(word: &str) -> String {
    if !word.is_empty()
        && word
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_./=:,@%+".contains(&b))
    {
        word.to_owned()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

fn ntp(value: &Value) -> Ntp {
    let list = |key: &str| -> Vec<String> {
        value
            .get(key)
            .and_then(Value::as_array)
            .map(|a| a.iter().map(scalar).collect())
            .unwrap_or_default()
    };
    Ntp {
        enabled: value.get("enabled").and_then(Value::as_bool),
        servers: list("servers"),
        pools: list("pools"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const WORKER: &str = "## template: jinja\n#cloud-config\n\nwrite_files:\n-   path: /etc/rancher/rke2/registries.yaml\n    owner: root:root\n    permissions: '0640'\n    content: |\n      configs: null\n      mirrors: {}\n      \n-   path: /etc/rancher/rke2/config.yaml\n    owner: root:root\n    permissions: '0640'\n    content: |\n      server: https://10.0.1.10:9345\n      token: abc\n      \n\n\nruncmd:\n  - 'curl -sfL https://get.rke2.io | INSTALL_RKE2_VERSION=v1.32.5+rke2r1 INSTALL_RKE2_TYPE=\"agent\" sh -s -'\n  - 'systemctl start rke2-agent.service'\n  - \"echo \\\"done\\\"\"\n";

    /// A comparable view of a parsed document.
    fn view(c: &CloudConfig) -> String {
        let files: Vec<String> = c
            .files
            .iter()
            .map(|f| {
                format!(
                    "{:?}|{:?}|{:?}|{:?}|{:?}|{}",
                    f.path,
                    f.mode,
                    f.owner,
                    f.encoding,
                    f.bytes(),
                    f.append
                )
            })
            .collect();
        let problems: Vec<&str> = c.problems.iter().map(|p| p.id()).collect();
        format!(
            "{}|{files:?}|{:?}|{:?}|{}|{problems:?}",
            c.jinja,
            c.commands,
            c.other.iter().map(|(k, _)| k).collect::<Vec<_>>(),
            c.ntp.is_some()
        )
    }

    /// Differential: wherever the fast path reads a document, the full parser reads the same.
    #[test]
    fn fast_path_agrees_with_the_full_parser() {
        let dir = crate::testdata::crate_data().join("secrets");
        let mut texts = Vec::new();
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "userdata") {
                let text = std::fs::read_to_string(&path).unwrap();
                if text.contains("#cloud-config") {
                    texts.push(text);
                }
            }
        }
        assert!(texts.len() >= 15);
        let (mut fast, mut total) = (0, 0);
        let swaps = [
            " ", ":", "'", "\"", "#", "-", "\t", "\n", "|", "[", "\\", "  ", "0", "&",
        ];
        for (n, text) in texts.iter().enumerate() {
            let mut variants = vec![text.clone()];
            let positions: Vec<usize> = text.char_indices().map(|(i, _)| i).collect();
            for (k, &at) in positions
                .iter()
                .enumerate()
                .filter(|(k, _)| (k * 7 + n) % 53 == 0)
            {
                let mut t = text.clone();
                let len = text[at..].chars().next().map_or(0, char::len_utf8);
                t.replace_range(at..at + len, swaps[k % swaps.len()]);
                variants.push(t);
            }
            for t in variants {
                total += 1;
                if let Some(f) = super::super::cloudconfig_fast::parse(&t) {
                    fast += 1;
                    let full = CloudConfig::parse_full(&t).unwrap_or_else(|e| {
                        panic!("fast path read what the parser rejects ({e}):\n{t}")
                    });
                    assert_eq!(view(&CloudConfig::from_fast(&t, f)), view(&full), "{t}");
                }
            }
        }
        assert!(fast > 20, "{fast} of {total}");
    }

    #[test]
    fn reads_caprke2_worker() {
        let c = CloudConfig::parse(WORKER).unwrap();
        assert!(c.jinja);
        assert_eq!(c.files.len(), 2);
        assert_eq!(c.files[0].path, "/etc/rancher/rke2/registries.yaml");
        assert_eq!(c.files[0].mode, Some(0o640));
        assert_eq!(c.files[0].owner.as_deref(), Some("root:root"));
        assert_eq!(
            c.files[0].bytes(),
            Some(&b"configs: null\nmirrors: {}\n"[..])
        );
        assert_eq!(
            c.files[1].bytes(),
            Some(&b"server: https://10.0.1.10:9345\ntoken: abc\n"[..])
        );
        assert_eq!(c.commands.len(), 3);
        assert!(
            c.commands[0]
                .line
                .starts_with("curl -sfL https://get.rke2.io")
        );
        assert_eq!(c.commands[2].line, "echo \"done\"");
        assert!(c.problems.is_empty());
        assert!(c.repaired_lines.is_empty());
        let debug = format!("{c:?}");
        assert!(
            !debug.contains("token") && !debug.contains("curl"),
            "{debug}"
        );
    }

    #[test]
    fn recovers_from_the_checksum_line() {
        let text = WORKER.replace(
            "runcmd:\n",
            "runcmd:\n  - [[ $(sha256sum /opt/rke2-artifacts/sha256sum*.txt | awk '{print $1}') == abcd ]] || exit 1\n",
        );
        let c = CloudConfig::parse(&text).unwrap();
        assert_eq!(c.problems.len(), 1);
        let p = &c.problems[0];
        assert_eq!(p.id(), "cloud-config-invalid-yaml");
        assert_eq!(p.line, Some(22));
        assert_eq!(c.repaired_lines, vec![22]);
        assert_eq!(c.commands.len(), 4);
        assert_eq!(
            c.commands[0].line,
            "[[ $(sha256sum /opt/rke2-artifacts/sha256sum*.txt | awk '{print $1}') == abcd ]] || exit 1"
        );
        assert_eq!(c.files.len(), 2);
    }

    #[test]
    fn every_write_files_encoding() {
        let gz = b64::encode(&gzip::deflate(b"zipped\n", 6));
        let text = format!(
            "#cloud-config\nwrite_files:\n- path: /a\n  content: aGVsbG8K\n  encoding: b64\n- path: /b\n  content: {gz}\n  encoding: gzip+base64\n- path: /c\n  content: !!binary |\n    aGVsbG8K\n- path: /d\n  content: plain\n  permissions: 0600\n- path: /e\n  content: {gz}\n  encoding: gz+b64\n- path: /f\n  encoding: gzip\n  content: !!binary |\n    {gz}\n- path: /g\n  source:\n    uri: https://example.com/x\n"
        );
        let c = CloudConfig::parse(&text).unwrap();
        let get = |p: &str| c.files.iter().find(|f| f.path == p).unwrap();
        assert_eq!(get("/a").bytes(), Some(&b"hello\n"[..]));
        assert_eq!(get("/b").bytes(), Some(&b"zipped\n"[..]));
        assert_eq!(get("/c").bytes(), Some(&b"hello\n"[..]));
        assert_eq!(get("/c").encoding.as_deref(), Some("!!binary"));
        assert_eq!(get("/d").bytes(), Some(&b"plain"[..]));
        assert_eq!(get("/d").mode, Some(0o600));
        assert_eq!(get("/e").bytes(), Some(&b"zipped\n"[..]));
        assert_eq!(get("/f").bytes(), Some(&b"zipped\n"[..]));
        assert_eq!(
            get("/g").content,
            Content::Remote("https://example.com/x".into())
        );
        // The one problem: the remote source is reported, not read.
        let checks: Vec<Check> = c.problems.iter().map(|p| p.check).collect();
        assert_eq!(checks, [Check::RemoteContent], "{:?}", c.problems);
        // A key repeated inside an entry keeps its last value, as PyYAML does (it once made
        // the whole document unreadable: "expected mapping start").
        let c = CloudConfig::parse_full(
            "#cloud-config\nwrite_files:\n- path: /a\n  content: x\n  content: y\n",
        )
        .unwrap();
        assert_eq!(c.files[0].bytes(), Some(&b"y"[..]));
        // A tag inside block content is content, not a tag (found by fuzzing).
        let c = CloudConfig::parse_full(
            "#cloud-config\nwrite_files:\n- path: /x\n  content: |\n    a !!binary b\n",
        )
        .unwrap();
        assert_eq!(c.files[0].bytes(), Some(&b"a !!binary b\n"[..]));
        assert_eq!(c.files[0].encoding, None);
    }

    #[test]
    fn argv_commands_ntp_and_other_keys() {
        let text = "#cloud-config\nruncmd:\n  - [ls, -l, \"/a b\"]\n  - echo hi\nbootcmd:\n  - [sh, -c, echo]\nntp:\n  enabled: true\n  servers:\n  - \"0.pool\"\nusers:\n  - name: rke2\n";
        let c = CloudConfig::parse(text).unwrap();
        let lines: Vec<_> = c.commands.iter().map(|c| c.line.as_str()).collect();
        assert_eq!(lines, ["sh -c echo", "ls -l '/a b'", "echo hi"]);
        assert_eq!(c.commands[0].origin, "bootcmd");
        let ntp = c.ntp.as_ref().unwrap();
        assert_eq!(ntp.servers, ["0.pool"]);
        assert_eq!(ntp.enabled, Some(true));
        assert!(c.other.iter().any(|(k, _)| k == "users"));
    }

    /// A repeated top-level key: the last value wins and stands where the last one is, each
    /// repetition is a finding; with many keys (each looked up once, not against every other).
    #[test]
    fn repeated_top_level_keys_keep_the_last() {
        let text = "#cloud-config\nhostname: a\nruncmd: [one]\nusers: []\nhostname: b\nruncmd: [two]\nhostname: c\n";
        let c = CloudConfig::parse(text).unwrap();
        let keys: Vec<&str> = c.other.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(keys, ["users", "hostname"]);
        assert_eq!(c.other[1].1, Value::from("c"));
        let lines: Vec<&str> = c.commands.iter().map(|c| c.line.as_str()).collect();
        assert_eq!(lines, ["two"]);
        let repeated: Vec<&str> = c
            .problems
            .iter()
            .filter(|p| p.id() == "cloud-config-duplicate-key")
            .map(|p| p.message.as_str())
            .collect();
        assert_eq!(repeated.len(), 3, "{repeated:?}");
        assert!(repeated[0].contains("`hostname`") && repeated[1].contains("`runcmd`"));

        let mut many = String::from("#cloud-config\n");
        for i in 0..20_000 {
            many.push_str(&format!("k{i}: {i}\n"));
        }
        many.push_str("k7: last\n");
        let c = CloudConfig::parse(&many).unwrap();
        assert_eq!(c.other.len(), 20_000);
        assert_eq!(c.other[6].0, "k6");
        assert_eq!(c.other[19_999], ("k7".to_owned(), Value::from("last")));
    }

    #[test]
    fn bad_documents() {
        assert!(CloudConfig::parse("#cloud-config\n- a\n").is_err());
        assert!(CloudConfig::parse("#cloud-config\na: [\n").is_err());
        let c = CloudConfig::parse("#cloud-config\n").unwrap();
        assert!(c.files.is_empty());
        let c = CloudConfig::parse("#cloud-config\nwrite_files:\n- content: x\n").unwrap();
        assert_eq!(c.problems[0].id(), "cloud-config-schema");
        let c = CloudConfig::parse(
            "#cloud-config\nwrite_files:\n- path: /x\n  content: x\n  encoding: b64\n",
        )
        .unwrap();
        assert!(matches!(c.files[0].content, Content::Undecodable(_)));
    }

    #[test]
    fn crlf_line_endings() {
        let text = WORKER.replace('\n', "\r\n");
        let c = CloudConfig::parse(&text).unwrap();
        assert_eq!(c.files.len(), 2);
        assert_eq!(
            c.files[0].bytes(),
            Some(&b"configs: null\nmirrors: {}\n"[..])
        );
    }
}
