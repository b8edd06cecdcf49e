//! RKE2's `config.yaml` (an allow-list of its flags) and `registries.yaml`.

use crate::codec::tree::Node;

use super::{Change, Masker, PLACEHOLDER, normalise, secret_key, whole_secret_file};
use crate::sensitive::rke2_flags;

impl Masker {
    pub(super) fn rke2_config(&mut self, node: &Node, out: &mut Vec<Change>) {
        let Node::Map(entries) = node else {
            return self.mask_all(node, out);
        };
        for (k, v) in entries {
            let Some(key) = k.as_str() else {
                self.mask_all(v, out);
                continue;
            };
            let kind = rke2_key(key);
            if kind == Rke2Key::Public
                && key
                    .trim_end_matches('+')
                    .replace('_', "-")
                    .to_ascii_lowercase()
                    .ends_with("token-file")
                && let Some(path) = v.as_str()
                && !self.token_files.iter().any(|t| t == path)
            {
                self.token_files.push(path.to_owned());
            }
            match kind {
                Rke2Key::Public => self.public_value(v, out),
                Rke2Key::Args => self.rke2_args(v, out),
                Rke2Key::Url => match v {
                    Node::Scalar { value, .. } if value.contains("://") => {
                        let new = self.url(value);
                        let new = self.free_words(&new);
                        self.set(v, new, out);
                    }
                    _ => self.mask_all(v, out),
                },
                Rke2Key::Secret => self.mask_all(v, out),
            }
        }
    }

    /// `kubelet-arg` and its kind: `name=value` items, the values of secret names masked.
    fn rke2_args(&mut self, node: &Node, out: &mut Vec<Change>) {
        match node {
            Node::Scalar { value, .. } => {
                let new = self.rke2_arg(value);
                self.set(node, new, out);
            }
            Node::Seq(items) => items.iter().for_each(|i| self.rke2_args(i, out)),
            Node::Map(_) => self.mask_all(node, out),
        }
    }

    /// One `kubelet-arg` item (`name=value`), the value of a secret name masked.
    fn rke2_arg(&mut self, item: &str) -> String {
        let mut out = String::new();
        let mut rest = item;
        loop {
            match rest.split_once('=') {
                // A boolean, a number, a duration or a path says nothing secret
                // (`anonymous-auth=true`).
                Some((name, v)) if secret_key(name) && !v.is_empty() && !flag_value(v) => {
                    // RKE2 splits a list flag's text at commas: in
                    // `anonymous-auth=true,read-only-port=0` the boolean is the switch's whole
                    // value, and what follows the comma an item of its own.
                    if let Some((first, tail)) = v.split_once(',')
                        && crate::sensitive::boolean(first)
                        && crate::sensitive::may_be_switch(name)
                    {
                        out.push_str(&rest[..name.len() + 1 + first.len() + 1]);
                        rest = tail;
                        continue;
                    }
                    self.known.add(v);
                    out.push_str(&format!("{name}={PLACEHOLDER}"));
                }
                _ => out.push_str(&self.free_words(rest)),
            }
            return out;
        }
    }

    pub(super) fn registries(&mut self, node: &Node, out: &mut Vec<Change>) {
        let Node::Map(entries) = node else {
            return self.mask_all(node, out);
        };
        for (k, v) in entries {
            match (k.as_str().unwrap_or(""), v) {
                ("configs", Node::Map(hosts)) => {
                    for (_, config) in hosts {
                        let Node::Map(fields) = config else {
                            self.mask_all(config, out);
                            continue;
                        };
                        for (f, value) in fields {
                            match f.as_str().unwrap_or("") {
                                "auth" => self.mask_all(value, out),
                                "tls" => self.generic(value, out),
                                _ => self.generic_keyed(f, value, out),
                            }
                        }
                    }
                }
                ("mirrors", _) => self.mirrors(v, out),
                _ => self.generic_keyed(k, v, out),
            }
        }
    }

    fn mirrors(&mut self, node: &Node, out: &mut Vec<Change>) {
        match node {
            Node::Scalar { value, .. } => {
                let new = self.url(value);
                let new = self.free_words(&new);
                self.set(node, new, out);
            }
            Node::Seq(items) => items.iter().for_each(|i| self.mirrors(i, out)),
            Node::Map(entries) => {
                for (k, v) in entries {
                    if secret_key(k.as_str().unwrap_or("")) {
                        self.mask_all(v, out);
                    } else {
                        self.mirrors(v, out);
                    }
                }
            }
        }
    }
}

/// The secret values of one file as `redact` decides them, for the reports' redactor (one
/// classification for every output): RKE2's `config.yaml` and drop-ins (aliases, unknown keys
/// and values of any type included), `registries.yaml`, token files. Other files are left to
/// the detector the reports run on every text they show.
pub(crate) fn file_secrets(path: &str, bytes: &[u8]) -> Vec<String> {
    let normal = normalise(path);
    let name = normal.rsplit('/').next().unwrap_or("");
    let relevant = normal.starts_with("/etc/rancher/")
        && (name.starts_with("config.y")
            || normal.contains("/config.yaml.d/")
            || name.starts_with("registries.y"))
        || whole_secret_file(&normal);
    // A `registries.yaml` without `auth` has nothing masked but URL passwords, which the
    // reports' detector finds by shape.
    let no_auth =
        name.starts_with("registries.y") && memchr::memmem::find(bytes, b"auth").is_none();
    // A key in armour is the reports' own to describe (its body is never shown).
    let armoured = memchr::memmem::find(bytes, b"-----BEGIN ").is_some();
    if !relevant || no_auth || armoured || plain_rke2_config(&normal, bytes) {
        return Vec::new();
    }
    let mut masker = Masker {
        collect_only: true,
        ..Masker::default()
    };
    masker.known.quiet = true;
    // A file that does not read keeps what the reports' own readers find in it.
    let _ = masker.file(path, bytes);
    masker.known.values
}

/// Whether a `config.yaml` holds only what the reports' own reader takes apart: every top-level
/// key written plainly and known public, a list of arguments, or the two tokens (which that
/// reader hides). The common case, read without building a tree.
fn plain_rke2_config(path: &str, bytes: &[u8]) -> bool {
    let name = path.rsplit('/').next().unwrap_or("");
    if !name.starts_with("config.y") || path.contains("/config.yaml.d/") {
        return false;
    }
    let Ok(text) = std::str::from_utf8(bytes) else {
        return false;
    };
    text.lines().all(|line| {
        let Some(first) = line.bytes().next() else {
            return true;
        };
        if matches!(first, b' ' | b'-' | b'#') {
            return true;
        }
        let Some((key, value)) = line.split_once(':') else {
            return false;
        };
        // The tokens, when written as one plain word (the reader takes no other shape).
        let value = value.trim();
        let plain_token = matches!(key, "token" | "agent-token")
            && value
                .bytes()
                .next()
                .is_some_and(|b| b.is_ascii_alphanumeric())
            && !value.contains([' ', '\t', '#']);
        key.bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
            && (plain_token || matches!(rke2_key(key), Rke2Key::Public | Rke2Key::Args))
            && key.len() > 1
    })
}

/// How RKE2 reads a `config.yaml` key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Rke2Key {
    /// Known to carry no secret.
    Public,
    /// A list of `name=value` arguments for a component.
    Args,
    /// A URL whose password is secret (`datastore-endpoint`, `etcd-s3-proxy`).
    Url,
    /// A secret, or a key not known.
    Secret,
}

/// A `config.yaml` key as RKE2's loader reads it: case and `_` folded, a trailing `+`
/// (append) dropped, a short alias taken for its flag.
fn rke2_key(key: &str) -> Rke2Key {
    let key = key
        .trim()
        .trim_end_matches('+')
        .trim_start_matches('-')
        .to_ascii_lowercase()
        .replace('_', "-");
    let long = rke2_flags::ALIASES
        .iter()
        .find(|(alias, _)| *alias == key)
        .map_or(key.as_str(), |(_, long)| *long);
    if rke2_flags::PUBLIC_KEYS.binary_search(&long).is_ok() {
        Rke2Key::Public
    } else if rke2_flags::ARG_KEYS.contains(&long) {
        Rke2Key::Args
    } else if matches!(long, "datastore-endpoint" | "etcd-s3-proxy" | "s3-proxy") {
        Rke2Key::Url
    } else {
        Rke2Key::Secret
    }
}

/// A flag value that holds no secret whatever its flag's name: a boolean, a number, a duration
/// (`60s`, `1h30m`) or an absolute path.
fn flag_value(v: &str) -> bool {
    super::words::harmless(v) || v.bytes().all(|b| b.is_ascii_digit()) || super::words::duration(v)
}
