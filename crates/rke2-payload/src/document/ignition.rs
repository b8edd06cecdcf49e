//! Ignition 3.x configs (specs 3.0 to 3.5 share the fields read here): files with `data:` URL
//! contents and per-file gzip, directories, links, filesystems, systemd units and drop-ins, users.
//!
//! Remote sources (http, https, s3, tftp, gs, arn) are reported, never fetched.

use std::borrow::Cow;

use serde::Deserialize;
use serde_json::Value;

use super::{Command, Content, DocumentError, File};
use crate::checks::{Check, Finding};
use crate::codec::{dataurl, gzip};

/// The most bytes one file's contents may inflate to.
const MAX_FILE_INFLATE: u64 = 16 << 20;

/// A parsed Ignition config.
///
/// Its `Debug` output names files and units and counts the rest; it never shows contents.
#[derive(Clone)]
pub(crate) struct Ignition {
    /// `ignition.version`.
    pub version: String,
    /// Sections this model does not hold that are set (not empty): `kernelArguments`,
    /// `storage.disks`, `storage.raid`, `storage.luks`, `passwd.groups`, `ignition.proxy`,
    /// `ignition.security`, `ignition.timeouts`. A conversion must name them, never drop them.
    pub unmodelled: Vec<&'static str>,
    /// `storage.files`, decoded.
    pub files: Vec<File>,
    /// `storage.directories`.
    pub directories: Vec<Directory>,
    /// `storage.links`: (path, target).
    pub links: Vec<(String, String)>,
    /// `storage.filesystems`.
    pub filesystems: Vec<Filesystem>,
    /// `systemd.units`.
    pub units: Vec<Unit>,
    /// `passwd.users` (names and what they carry, never a password hash).
    pub users: Vec<User>,
    /// Commands: the `ExecStart` of enabled units, with the scripts they run expanded.
    pub commands: Vec<Command>,
    /// `ignition.config.merge` and `.replace` sources that were not followed: remote ones
    /// (never fetched), and data URLs nested deeper than [`MAX_NESTING`].
    pub config_sources: Vec<String>,
    /// Whether a nested `config.merge` or `config.replace` data URL was followed (its files,
    /// units and users are in this document).
    pub nested: bool,
    /// Problems `ignition-validate` would report, and others.
    pub problems: Vec<Finding>,
}

impl std::fmt::Debug for Ignition {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Ignition")
            .field("version", &self.version)
            .field("files", &self.files)
            .field("directories", &self.directories.len())
            .field("links", &self.links.len())
            .field("filesystems", &self.filesystems.len())
            .field(
                "units",
                &self.units.iter().map(|u| &u.name).collect::<Vec<_>>(),
            )
            .field("users", &self.users.len())
            .field("commands", &self.commands.len())
            .field("config_sources", &self.config_sources.len())
            .field("nested", &self.nested)
            .field("problems", &self.problems)
            .finish()
    }
}

/// A directory entry.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub(crate) struct Directory {
    /// Path.
    pub path: String,
    /// Mode, if set.
    pub mode: Option<u32>,
}

/// A filesystem entry.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub(crate) struct Filesystem {
    /// Device path.
    pub device: String,
    /// Filesystem type.
    pub format: Option<String>,
    /// Mount path.
    pub path: Option<String>,
    /// `mountOptions`.
    pub mount_options: Vec<String>,
    /// `wipeFilesystem`.
    pub wipe: bool,
}

/// A systemd unit.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub(crate) struct Unit {
    /// Unit name.
    pub name: String,
    /// `enabled`.
    pub enabled: Option<bool>,
    /// `mask`.
    pub mask: Option<bool>,
    /// The unit file text.
    pub contents: Option<String>,
    /// Drop-ins: (name, contents).
    pub dropins: Vec<(String, Option<String>)>,
}

/// A user entry; secret fields are summarised, not kept.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub(crate) struct User {
    /// User name.
    pub name: String,
    /// Whether a password hash is set.
    pub has_password_hash: bool,
    /// How many SSH keys are authorised.
    pub ssh_authorized_keys: usize,
}

#[derive(Deserialize)]
struct RawConfig<'a> {
    #[serde(borrow)]
    ignition: RawIgnition<'a>,
    #[serde(default, borrow)]
    storage: Option<RawStorage<'a>>,
    #[serde(default)]
    systemd: Option<RawSystemd>,
    #[serde(default)]
    passwd: Option<RawPasswd>,
    #[serde(default, rename = "kernelArguments")]
    kernel_arguments: Option<Value>,
}

#[derive(Deserialize)]
struct RawIgnition<'a> {
    #[serde(default)]
    version: Option<String>,
    #[serde(default, borrow)]
    config: Option<RawConfigRefs<'a>>,
    #[serde(default)]
    proxy: Option<Value>,
    #[serde(default)]
    security: Option<Value>,
    #[serde(default)]
    timeouts: Option<Value>,
}

#[derive(Deserialize)]
struct RawConfigRefs<'a> {
    #[serde(default, borrow)]
    merge: Option<Vec<RawResource<'a>>>,
    #[serde(default, borrow)]
    replace: Option<RawResource<'a>>,
}

#[derive(Deserialize, Default)]
struct RawStorage<'a> {
    #[serde(default, borrow)]
    files: Option<Vec<RawFile<'a>>>,
    #[serde(default)]
    directories: Option<Vec<RawDirectory>>,
    #[serde(default)]
    links: Option<Vec<RawLink>>,
    #[serde(default)]
    filesystems: Option<Vec<RawFilesystem>>,
    #[serde(default)]
    disks: Option<Vec<serde::de::IgnoredAny>>,
    #[serde(default)]
    raid: Option<Vec<serde::de::IgnoredAny>>,
    #[serde(default)]
    luks: Option<Vec<serde::de::IgnoredAny>>,
}

#[derive(Deserialize)]
struct RawFile<'a> {
    path: String,
    #[serde(default)]
    mode: Option<i64>,
    #[serde(default)]
    user: Option<RawNode>,
    #[serde(default)]
    group: Option<RawNode>,
    #[serde(default, borrow)]
    contents: Option<RawResource<'a>>,
    #[serde(default, borrow)]
    append: Option<Vec<RawResource<'a>>>,
}

#[derive(Deserialize)]
struct RawNode {
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    id: Option<i64>,
}

#[derive(Deserialize, Default)]
struct RawResource<'a> {
    /// Borrowed from the config text: a data URL can be most of it.
    #[serde(default, borrow)]
    source: Option<Cow<'a, str>>,
    #[serde(default)]
    compression: Option<String>,
}

#[derive(Deserialize)]
struct RawDirectory {
    path: String,
    #[serde(default)]
    mode: Option<i64>,
}

#[derive(Deserialize)]
struct RawLink {
    path: String,
    #[serde(default)]
    target: Option<String>,
}

#[derive(Deserialize)]
struct RawFilesystem {
    #[serde(default, rename = "mountOptions")]
    mount_options: Option<Vec<String>>,
    #[serde(default, rename = "wipeFilesystem")]
    wipe: Option<bool>,
    #[serde(default)]
    device: Option<String>,
    #[serde(default)]
    format: Option<String>,
    #[serde(default)]
    path: Option<String>,
}

#[derive(Deserialize, Default)]
struct RawSystemd {
    #[serde(default)]
    units: Option<Vec<RawUnit>>,
}

#[derive(Deserialize)]
struct RawUnit {
    name: String,
    #[serde(default)]
    enabled: Option<bool>,
    #[serde(default)]
    mask: Option<bool>,
    #[serde(default)]
    contents: Option<String>,
    #[serde(default)]
    dropins: Option<Vec<RawDropin>>,
}

#[derive(Deserialize)]
struct RawDropin {
    name: String,
    #[serde(default)]
    contents: Option<String>,
}

#[derive(Deserialize, Default)]
struct RawPasswd {
    #[serde(default)]
    users: Option<Vec<RawUser>>,
    #[serde(default)]
    groups: Option<Vec<serde::de::IgnoredAny>>,
}

#[derive(Deserialize)]
struct RawUser {
    name: String,
    #[serde(default, rename = "passwordHash")]
    password_hash: Option<String>,
    #[serde(default, rename = "sshAuthorizedKeys")]
    ssh_authorized_keys: Option<Vec<String>>,
}

/// How deep nested `config.merge` / `config.replace` data URLs are followed.
pub(crate) const MAX_NESTING: usize = 4;

impl Ignition {
    /// Reads an Ignition config, following the `config.replace` and `config.merge` configs it
    /// carries in data URLs (as Ignition would: a replacement stands for the whole config, merged
    /// configs add their files, units and users after the config's own).
    pub(crate) fn parse(text: &str) -> Result<Self, DocumentError> {
        Ignition::parse_nested(text, 0)
    }

    fn parse_nested(text: &str, depth: usize) -> Result<Self, DocumentError> {
        let raw: RawConfig = serde_json::from_str(text).map_err(|e| DocumentError::Ignition {
            message: format!(
                "{} at line {}, column {}",
                crate::codec::text::parser_message(&e.to_string()),
                e.line(),
                e.column()
            ),
        })?;
        let unmodelled = unmodelled(&raw);
        let mut problems = Vec::new();
        let mut config_sources = Vec::new();
        let nested = match raw.ignition.config {
            Some(refs) => follow(refs, depth, &mut problems, &mut config_sources)?,
            None => Vec::new(),
        };
        let storage = raw.storage.unwrap_or_default();
        let mut files = Vec::new();
        for f in storage.files.unwrap_or_default() {
            files.push(file(f, &mut problems));
        }
        check_paths(files.iter().map(|f| f.path.as_str()), "file", &mut problems);
        let directories: Vec<Directory> = storage
            .directories
            .unwrap_or_default()
            .into_iter()
            .map(|d| Directory {
                mode: d.mode.and_then(|m| u32::try_from(m).ok()),
                path: d.path,
            })
            .collect();
        let links: Vec<(String, String)> = storage
            .links
            .unwrap_or_default()
            .into_iter()
            .map(|l| (l.path, l.target.unwrap_or_default()))
            .collect();
        let all_paths = files
            .iter()
            .map(|f| f.path.as_str())
            .chain(directories.iter().map(|d| d.path.as_str()))
            .chain(links.iter().map(|l| l.0.as_str()));
        check_duplicates(all_paths, &mut problems);
        let units = units(raw.systemd.unwrap_or_default());
        let commands = unit_commands(&units, &files);
        let this = Ignition {
            version: raw.ignition.version.unwrap_or_default(),
            unmodelled,
            files,
            directories,
            links,
            filesystems: filesystems(storage.filesystems.unwrap_or_default()),
            units,
            users: users(raw.passwd.unwrap_or_default()),
            commands,
            config_sources,
            nested: false,
            problems,
        };
        Ok(this.with_nested(nested))
    }

    /// The config with the nested ones applied: a replacement stands for it, merged ones add
    /// to it.
    fn with_nested(mut self, nested: Vec<(bool, Ignition)>) -> Self {
        for (is_replace, child) in nested {
            if is_replace {
                // The replacement is the config; what this one held is not used.
                return Ignition {
                    nested: true,
                    ..child
                };
            }
            self.files.extend(child.files);
            self.directories.extend(child.directories);
            self.links.extend(child.links);
            self.filesystems.extend(child.filesystems);
            self.units.extend(child.units);
            self.users.extend(child.users);
            self.commands.extend(child.commands);
            self.config_sources.extend(child.config_sources);
            for u in child.unmodelled {
                if !self.unmodelled.contains(&u) {
                    self.unmodelled.push(u);
                }
            }
            self.problems.extend(child.problems);
            self.nested = true;
        }
        self
    }
}

/// The fields the config sets that the model does not read.
fn unmodelled(raw: &RawConfig<'_>) -> Vec<&'static str> {
    let set = |v: &Option<Value>| match v {
        None | Some(Value::Null) => false,
        Some(Value::Object(m)) => m.values().any(|x| match x {
            Value::Object(inner) => !inner.is_empty(),
            Value::Array(items) => !items.is_empty(),
            Value::Null => false,
            _ => true,
        }),
        Some(Value::Array(items)) => !items.is_empty(),
        Some(_) => true,
    };
    let listed = |v: &Option<Vec<serde::de::IgnoredAny>>| v.as_ref().is_some_and(|l| !l.is_empty());
    let storage = raw.storage.as_ref();
    let passwd = raw.passwd.as_ref();
    [
        ("kernelArguments", set(&raw.kernel_arguments)),
        ("ignition.proxy", set(&raw.ignition.proxy)),
        ("ignition.security", set(&raw.ignition.security)),
        ("ignition.timeouts", set(&raw.ignition.timeouts)),
        ("storage.disks", storage.is_some_and(|s| listed(&s.disks))),
        ("storage.raid", storage.is_some_and(|s| listed(&s.raid))),
        ("storage.luks", storage.is_some_and(|s| listed(&s.luks))),
        ("passwd.groups", passwd.is_some_and(|p| listed(&p.groups))),
    ]
    .into_iter()
    .filter_map(|(name, present)| present.then_some(name))
    .collect()
}

/// Reads the configs `ignition.config` carries in data URLs, the replacement first: (is a
/// replacement, the config) of each. A remote source, or one nested too deep, is not read: a
/// finding says so and `config_sources` names it.
fn follow(
    refs: RawConfigRefs<'_>,
    depth: usize,
    problems: &mut Vec<Finding>,
    config_sources: &mut Vec<String>,
) -> Result<Vec<(bool, Ignition)>, DocumentError> {
    let mut nested = Vec::new();
    let replace = refs.replace.into_iter().map(|r| (true, r));
    let merge = refs
        .merge
        .unwrap_or_default()
        .into_iter()
        .map(|r| (false, r));
    for (is_replace, r) in replace.chain(merge) {
        let Some(source) = r.source else { continue };
        match (
            depth < MAX_NESTING,
            nested_config(&source, r.compression.as_deref()),
        ) {
            (true, Some(Ok(text))) => {
                nested.push((is_replace, Ignition::parse_nested(&text, depth + 1)?))
            }
            (true, Some(Err(why))) => {
                return Err(DocumentError::Ignition {
                    message: format!("a nested config in ignition.config cannot be read: {why}"),
                });
            }
            _ => {
                let how = if is_replace { "replace" } else { "merge" };
                let message = if source.starts_with("data:") {
                    format!(
                        "ignition.config.{how} nests configs deeper than {MAX_NESTING} levels; the deepest was not read"
                    )
                } else {
                    format!(
                        "ignition.config.{how} fetches a config at boot from {}: it was not read, so nothing in it was checked, and the node must reach it",
                        crate::codec::text::terminal_safe(&crate::codec::text::shorten(
                            &source, 200
                        ))
                    )
                };
                problems.push(Finding::new(Check::RemoteContent, message));
                config_sources.push(source.into_owned());
            }
        }
    }
    Ok(nested)
}

fn filesystems(raw: Vec<RawFilesystem>) -> Vec<Filesystem> {
    raw.into_iter()
        .map(|f| Filesystem {
            device: f.device.unwrap_or_default(),
            format: f.format,
            path: f.path,
            mount_options: f.mount_options.unwrap_or_default(),
            wipe: f.wipe.unwrap_or(false),
        })
        .collect()
}

fn units(raw: RawSystemd) -> Vec<Unit> {
    raw.units
        .unwrap_or_default()
        .into_iter()
        .map(|u| Unit {
            name: u.name,
            enabled: u.enabled,
            mask: u.mask,
            contents: u.contents,
            dropins: u
                .dropins
                .unwrap_or_default()
                .into_iter()
                .map(|d| (d.name, d.contents))
                .collect(),
        })
        .collect()
}

fn users(raw: RawPasswd) -> Vec<User> {
    raw.users
        .unwrap_or_default()
        .into_iter()
        .map(|u| User {
            name: u.name,
            has_password_hash: u.password_hash.is_some_and(|h| !h.is_empty()),
            ssh_authorized_keys: u.ssh_authorized_keys.map_or(0, |k| k.len()),
        })
        .collect()
}

/// The text of a nested config carried in a data URL (gzip allowed), `None` for a remote source
/// (never fetched).
pub(crate) fn nested_config(
    source: &str,
    compression: Option<&str>,
) -> Option<Result<String, String>> {
    if !source.starts_with("data:") {
        return None;
    }
    let read = || -> Result<String, String> {
        let bytes = dataurl::decode(source).map_err(|e| e.to_string())?;
        let bytes = match compression.unwrap_or("") {
            "" => bytes.into_owned(),
            "gzip" => gzip::inflate(&bytes, 16 << 20).map_err(|e| e.to_string())?,
            other => {
                return Err(format!(
                    "unknown compression {:?}",
                    crate::codec::text::shorten(other, 20)
                ));
            }
        };
        String::from_utf8(bytes).map_err(|_| "not UTF-8 text".to_owned())
    };
    Some(read())
}

fn file(raw: RawFile, problems: &mut Vec<Finding>) -> File {
    let mode = match raw.mode {
        None => None,
        Some(m) => match u32::try_from(m).ok().filter(|&m| m <= 0o7777) {
            Some(m) => Some(m),
            None => {
                problems.push(Finding::located(
                    Check::IgnitionInvalid,
                    format!("mode {m} is not a valid permission value"),
                    Some(raw.path.clone()),
                    None,
                ));
                None
            }
        },
    };
    let owner = owner(raw.user.as_ref(), raw.group.as_ref());
    let (resource, append) = match (raw.contents, raw.append) {
        (Some(c), _) if c.source.is_some() => (c, false),
        (_, Some(mut appends)) if !appends.is_empty() => (appends.remove(0), true),
        (c, _) => (c.unwrap_or_default(), false),
    };
    let (content, encoding) = contents(&resource, &raw.path, problems);
    File {
        path: raw.path,
        mode,
        owner,
        encoding,
        content,
        append,
    }
}

fn owner(user: Option<&RawNode>, group: Option<&RawNode>) -> Option<String> {
    let name = |n: Option<&RawNode>| -> Option<String> {
        let n = n?;
        n.name
            .clone()
            .filter(|s| !s.is_empty())
            .or_else(|| n.id.map(|id| id.to_string()))
    };
    match (name(user), name(group)) {
        (None, None) => None,
        (Some(u), None) => Some(u),
        (None, Some(g)) => Some(format!(":{g}")),
        (Some(u), Some(g)) => Some(format!("{u}:{g}")),
    }
}

fn contents(
    resource: &RawResource<'_>,
    path: &str,
    problems: &mut Vec<Finding>,
) -> (Content, Option<String>) {
    let Some(source) = resource.source.as_deref() else {
        // No source: an empty file.
        return (Content::Inline(Vec::new()), None);
    };
    let compression = resource.compression.as_deref().unwrap_or("");
    if !matches!(compression, "" | "gzip") {
        problems.push(Finding::located(
            Check::IgnitionInvalid,
            format!(
                "unknown compression {:?} (Ignition knows \"gzip\")",
                crate::codec::text::shorten(compression, 20)
            ),
            Some(path.to_owned()),
            None,
        ));
    }
    let url = match dataurl::DataUrl::parse(source) {
        Ok(url) => url,
        Err(crate::codec::dataurl::DataUrlError::NotDataUrl) => {
            let scheme = source.split(':').next().unwrap_or("");
            if !matches!(
                scheme.to_ascii_lowercase().as_str(),
                "http" | "https" | "s3" | "tftp" | "gs" | "arn"
            ) {
                problems.push(Finding::located(
                    Check::IgnitionInvalid,
                    "contents.source has an unsupported URL scheme".to_owned(),
                    Some(path.to_owned()),
                    None,
                ));
            }
            problems.push(Finding::located(
                Check::RemoteContent,
                format!(
                    "the file's content is fetched at boot from {}: it was not read, and the node must reach it",
                    crate::codec::text::terminal_safe(&crate::codec::text::shorten(source, 200))
                ),
                Some(path.to_owned()),
                None,
            ));
            return (
                Content::Remote(source.to_owned()),
                Some("remote".to_owned()),
            );
        }
        Err(e) => return undecodable(path, e.to_string(), problems),
    };
    let encoding = match (url.base64, compression) {
        (true, "gzip") => "gzip+base64 data URL",
        (true, _) => "base64 data URL",
        (false, "gzip") => "gzip data URL",
        (false, _) => "data URL",
    };
    let bytes = match url.decode() {
        Ok(bytes) => bytes,
        Err(e) => return undecodable(path, e.to_string(), problems),
    };
    let bytes = if compression == "gzip" {
        match gzip::inflate(&bytes, MAX_FILE_INFLATE) {
            Ok(b) => b,
            Err(e) => return undecodable(path, format!("gzip: {e}"), problems),
        }
    } else {
        bytes.into_owned()
    };
    (Content::Inline(bytes), Some(encoding.to_owned()))
}

fn undecodable(path: &str, why: String, problems: &mut Vec<Finding>) -> (Content, Option<String>) {
    problems.push(Finding::located(
        Check::IgnitionInvalid,
        format!("contents cannot be decoded: {why}"),
        Some(path.to_owned()),
        None,
    ));
    (Content::Undecodable(why), None)
}

fn check_paths<'p>(paths: impl Iterator<Item = &'p str>, what: &str, problems: &mut Vec<Finding>) {
    for path in paths {
        if !path.starts_with('/') {
            problems.push(Finding::located(
                Check::IgnitionInvalid,
                format!("{what} path is not absolute"),
                Some(path.to_owned()),
                None,
            ));
        }
    }
}

fn check_duplicates<'p>(paths: impl Iterator<Item = &'p str>, problems: &mut Vec<Finding>) {
    let mut seen = std::collections::HashSet::new();
    for path in paths {
        if !seen.insert(path) {
            problems.push(Finding::located(
                Check::IgnitionInvalid,
                "duplicate entry: Ignition rejects the config".to_owned(),
                Some(path.to_owned()),
                None,
            ));
        }
    }
}

/// `ExecStart` lines of enabled units; a script file of the config that one runs is expanded.
fn unit_commands(units: &[Unit], files: &[File]) -> Vec<Command> {
    let mut out = Vec::new();
    for unit in units
        .iter()
        .filter(|u| u.enabled == Some(true) && u.mask != Some(true))
    {
        let texts = unit
            .contents
            .iter()
            .chain(unit.dropins.iter().filter_map(|d| d.1.as_ref()));
        for text in texts {
            for exec in text
                .lines()
                .filter_map(|l| l.trim().strip_prefix("ExecStart="))
            {
                let exec = exec.trim();
                let program = exec
                    .trim_start_matches(['-', '@', ':', '+', '!'])
                    .split_whitespace()
                    .next()
                    .unwrap_or("");
                let script = files
                    .iter()
                    .rev()
                    .find(|f| f.path == program)
                    .and_then(|f| f.text().map(|t| t.into_owned()));
                match script {
                    Some(script) => out.extend(script_lines(&script).map(|line| Command {
                        line,
                        origin: program.to_owned(),
                    })),
                    None if !exec.is_empty() => out.push(Command {
                        line: exec.to_owned(),
                        origin: format!("unit {}", unit.name),
                    }),
                    None => {}
                }
            }
        }
    }
    out
}

/// The command lines of a shell script: no blank lines, comments or `set` options.
pub(crate) fn script_lines(script: &str) -> impl Iterator<Item = String> + '_ {
    script
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#') && !l.starts_with("set -"))
        .map(str::to_owned)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(files: &str, units: &str) -> String {
        format!(
            r#"{{"ignition":{{"config":{{"replace":{{"verification":{{}}}}}},"version":"3.3.0"}},"passwd":{{"users":[{{"name":"core","passwordHash":"$6$x","sshAuthorizedKeys":["ssh-ed25519 AAAA"]}}]}},"storage":{{"files":[{files}],"filesystems":[{{"device":"/dev/disk/by-partlabel/p.lxroot","format":"btrfs","path":"/opt"}}]}},"systemd":{{"units":[{units}]}}}}"#
        )
    }

    #[test]
    fn files_units_and_commands() {
        let gz = crate::codec::b64::encode(&gzip::deflate(
            b"#!/bin/bash\nset -euo pipefail\n\n\ncurl -sfL https://get.rke2.io | sh -s - server\nsystemctl enable --now rke2-server.service\n",
            9,
        ));
        let files = format!(
            r#"{{"group":{{"name":"root"}},"overwrite":true,"path":"/etc/rancher/rke2/registries.yaml","user":{{"name":"root"}},"contents":{{"compression":"","source":"data:,configs%3A%20null%0Amirrors%3A%20%7B%7D%0A","verification":{{}}}},"mode":416}},{{"group":{{}},"path":"/etc/rke2-install.sh","user":{{}},"contents":{{"compression":"gzip","source":"data:;base64,{gz}","verification":{{}}}},"mode":448}},{{"path":"/etc/remote","contents":{{"source":"https://example.com/x"}}}}"#
        );
        let units = r#"{"contents":"[Unit]\nDescription=rke2-install\n[Service]\nType=oneshot\nExecStart=/etc/rke2-install.sh\n[Install]\nWantedBy=multi-user.target\n","enabled":true,"name":"rke2-install.service"}"#;
        let ign = Ignition::parse(&config(&files, units)).unwrap();
        assert_eq!(ign.version, "3.3.0");
        assert_eq!(ign.files.len(), 3);
        let reg = &ign.files[0];
        assert_eq!(reg.bytes(), Some(&b"configs: null\nmirrors: {}\n"[..]));
        assert_eq!(reg.mode, Some(0o640));
        assert_eq!(reg.owner.as_deref(), Some("root:root"));
        assert_eq!(ign.files[1].owner, None);
        assert_eq!(
            ign.files[1].encoding.as_deref(),
            Some("gzip+base64 data URL")
        );
        assert_eq!(
            ign.files[2].content,
            Content::Remote("https://example.com/x".into())
        );
        let lines: Vec<_> = ign.commands.iter().map(|c| c.line.as_str()).collect();
        assert_eq!(
            lines,
            [
                "curl -sfL https://get.rke2.io | sh -s - server",
                "systemctl enable --now rke2-server.service"
            ]
        );
        assert_eq!(ign.commands[0].origin, "/etc/rke2-install.sh");
        assert_eq!(ign.users[0].name, "core");
        assert!(ign.users[0].has_password_hash);
        assert_eq!(ign.filesystems[0].path.as_deref(), Some("/opt"));
        // The one problem: the remote source of /etc/remote is reported, not read.
        let checks: Vec<Check> = ign.problems.iter().map(|p| p.check).collect();
        assert_eq!(checks, [Check::RemoteContent], "{:?}", ign.problems);
    }

    #[test]
    fn what_ignition_validate_rejects() {
        let files = r#"{"path":"/a","contents":{"source":"data:,x"}},{"path":"/a","contents":{"source":"data:,y"}},{"path":"rel","contents":{"source":"data:;base64,*"}},{"path":"/b","contents":{"source":"data:,x","compression":"xz"}}"#;
        let ign = Ignition::parse(&config(files, "")).unwrap();
        let ids: Vec<_> = ign
            .problems
            .iter()
            .map(|p| (p.path.as_deref().unwrap_or(""), p.message.as_str()))
            .collect();
        assert!(
            ids.iter()
                .any(|(p, m)| *p == "/a" && m.contains("duplicate")),
            "{ids:?}"
        );
        assert!(
            ids.iter()
                .any(|(p, m)| *p == "rel" && m.contains("absolute")),
            "{ids:?}"
        );
        assert!(
            ids.iter()
                .any(|(p, m)| *p == "rel" && m.contains("decoded")),
            "{ids:?}"
        );
        assert!(
            ids.iter()
                .any(|(p, m)| *p == "/b" && m.contains("compression")),
            "{ids:?}"
        );
    }

    #[test]
    fn invalid_json_is_an_error_without_input_text() {
        let err = Ignition::parse(r#"{"ignition":{"version":"3.3.0"},"storage":{"files":[{"path":"/x","contents":{"source":"data:,SECRETTOKENVALUE"}"#).unwrap_err();
        assert!(!err.to_string().contains("SECRETTOKENVALUE"));
        assert!(Ignition::parse("[]").is_err());
    }
}
