//! cloud-config: its modules' secret fields, commands word by word, `write_files` by path and
//! encoding.

use crate::codec::tree::{self, Node};
use crate::codec::{b64, gzip};

use super::{
    Change, INFLATE_CAP, MaskError, Masker, PLACEHOLDER, known_structure, normalise, refuse,
    secret_key, structured, whole_secret_file,
};

impl Masker {
    pub(super) fn cloud_config(&mut self, node: &Node, out: &mut Vec<Change>) {
        let Node::Map(entries) = node else {
            return self.generic(node, out);
        };
        for (k, v) in entries {
            match k.as_str().unwrap_or("") {
                "write_files" => match v {
                    Node::Seq(files) => {
                        for file in files {
                            self.write_file(file, out);
                        }
                    }
                    _ => self.generic(v, out),
                },
                "runcmd" | "bootcmd" => match v {
                    Node::Seq(items) => items.iter().for_each(|i| self.command(i, out)),
                    _ => self.command(v, out),
                },
                "users" => match v {
                    Node::Seq(users) => users.iter().for_each(|u| self.user(u, out)),
                    _ => self.generic(v, out),
                },
                "chpasswd" => self.chpasswd(v, out),
                "password" => self.mask_all(v, out),
                "ssh_keys" => match v {
                    Node::Map(keys) => {
                        for (name, key) in keys {
                            let name = name.as_str().unwrap_or("");
                            if name.contains("private")
                                || (!name.contains("public") && !name.contains("cert"))
                            {
                                // A key in armour keeps its armour; its body goes.
                                if key.as_str().is_some_and(|k| k.contains("-----BEGIN ")) {
                                    self.text_value(key, out);
                                } else {
                                    self.mask_all(key, out);
                                }
                            } else {
                                self.public_value(key, out);
                            }
                        }
                    }
                    _ => self.mask_all(v, out),
                },
                "ssh_authorized_keys" => self.public_value(v, out),
                _ => self.generic_keyed(k, v, out),
            }
        }
    }

    /// A key of a mapping of no known schema: free text too (a command line YAML read as a
    /// mapping has half of it in its key).
    pub(super) fn key(&mut self, key: &Node, out: &mut Vec<Change>) {
        if let Node::Scalar { value, .. } = key
            && !key.is_plain_non_string()
        {
            // A key is structure: word by word, strict or not.
            let new = self.free_words(value);
            self.set(key, new, out);
        }
    }

    /// A key and its value in a mapping of no known schema.
    pub(super) fn generic_keyed(&mut self, key: &Node, value: &Node, out: &mut Vec<Change>) {
        self.key(key, out);
        if secret_key(key.as_str().unwrap_or("")) {
            self.secret_value(value, out);
        } else {
            self.generic(value, out);
        }
    }

    /// A `runcmd` item: a shell line, or argv.
    fn command(&mut self, node: &Node, out: &mut Vec<Change>) {
        match node {
            Node::Seq(argv) => {
                let words: Vec<&str> = argv.iter().map(|w| w.as_str().unwrap_or("")).collect();
                let secret = super::positions::argv(&words);
                for (i, word) in argv.iter().enumerate() {
                    match secret.iter().find(|(w, _)| *w == i) {
                        Some(&(_, offset)) => {
                            let value = word.as_str().unwrap_or("");
                            let (keep, hidden) = value.split_at(offset.min(value.len()));
                            self.known.add(hidden);
                            self.set(word, format!("{keep}{PLACEHOLDER}"), out);
                        }
                        None => self.text_value(word, out),
                    }
                }
            }
            _ => self.generic(node, out),
        }
    }

    fn user(&mut self, node: &Node, out: &mut Vec<Change>) {
        let Node::Map(entries) = node else {
            return self.generic(node, out);
        };
        for (k, v) in entries {
            match k.as_str().unwrap_or("") {
                "passwd" | "hashed_passwd" | "plain_text_passwd" | "password" => {
                    self.mask_all(v, out);
                }
                "ssh_authorized_keys"
                | "ssh-authorized-keys"
                | "name"
                | "gecos"
                | "groups"
                | "shell"
                | "sudo"
                | "homedir"
                | "primary_group"
                | "ssh_import_id" => {
                    self.public_value(v, out);
                }
                _ => self.generic_keyed(k, v, out),
            }
        }
    }

    fn chpasswd(&mut self, node: &Node, out: &mut Vec<Change>) {
        let Node::Map(entries) = node else {
            return self.mask_all(node, out);
        };
        for (k, v) in entries {
            match (k.as_str().unwrap_or(""), v) {
                ("list", Node::Scalar { value, .. }) => {
                    let new: String = value
                        .split_inclusive('\n')
                        .map(|line| self.name_password(line))
                        .collect();
                    self.set(v, new, out);
                }
                ("list", Node::Seq(items)) => {
                    for item in items {
                        if let Some(line) = item.as_str() {
                            let new = self.name_password(line);
                            self.set(item, new, out);
                        }
                    }
                }
                ("users", Node::Seq(users)) => {
                    for user in users {
                        match user {
                            Node::Map(fields) => {
                                for (f, value) in fields {
                                    if matches!(f.as_str(), Some("name" | "type")) {
                                        self.public_value(value, out);
                                    } else {
                                        self.mask_all(value, out);
                                    }
                                }
                            }
                            _ => self.mask_all(user, out),
                        }
                    }
                }
                ("expire", _) => {}
                _ => self.mask_all(v, out),
            }
        }
    }

    /// `name:password` (a `chpasswd` line): the password masked.
    fn name_password(&mut self, line: &str) -> String {
        let body = line.trim_end_matches(['\n', '\r']);
        match body.split_once(':') {
            // `name:RANDOM` (or `R`) asks cloud-init for a random password: no secret.
            Some((_, "RANDOM" | "R")) => line.to_owned(),
            Some((name, password)) if !password.trim().is_empty() && password != PLACEHOLDER => {
                self.known.add(password.trim());
                format!("{name}:{PLACEHOLDER}{}", &line[body.len()..])
            }
            _ => line.to_owned(),
        }
    }

    /// A `write_files` entry: its content decoded as its `encoding` says, masked as the file at
    /// its path, and encoded again.
    fn write_file(&mut self, node: &Node, out: &mut Vec<Change>) {
        let Node::Map(entries) = node else {
            return self.generic(node, out);
        };
        let path = node.get("path").and_then(Node::as_str).unwrap_or("");
        let encoding = node
            .get("encoding")
            .and_then(Node::as_str)
            .unwrap_or("")
            .to_ascii_lowercase();
        for (k, v) in entries {
            match k.as_str().unwrap_or("") {
                "content" => {
                    if let Err(e) = self.file_content(path, &encoding, v, out) {
                        if known_structure(path) {
                            // RKE2's config and registries: masked whole they would lose
                            // what is public in them (the server, tls-san); refused instead.
                            self.refused.get_or_insert(e);
                        } else {
                            // Unreadable content: masked whole (it could hold anything).
                            self.mask_all(v, out);
                        }
                    }
                }
                "path" | "owner" | "permissions" | "encoding" | "append" | "defer" => {
                    self.public_value(v, out);
                }
                "source" => self.generic(v, out),
                _ => self.generic_keyed(k, v, out),
            }
        }
    }

    fn file_content(
        &mut self,
        path: &str,
        encoding: &str,
        node: &Node,
        out: &mut Vec<Change>,
    ) -> Result<(), MaskError> {
        let Node::Scalar { value, tag, .. } = node else {
            self.mask_all(node, out);
            return Ok(());
        };
        let gz = matches!(
            encoding,
            "gz" | "gzip"
                | "gz+base64"
                | "gzip+base64"
                | "gz+b64"
                | "gzip+b64"
                | "application/x-gzip"
        );
        let base64 = encoding.contains("b64")
            || encoding.contains("base64")
            || tag.as_deref().is_some_and(|t| t.ends_with(":binary"));
        let mut bytes = if base64 {
            let compact: String = value.chars().filter(|c| !c.is_ascii_whitespace()).collect();
            b64::decode(&compact).map_err(|e| refuse(path, e))?
        } else {
            value.as_bytes().to_vec()
        };
        if gz || gzip::is_gzip(&bytes) && base64 {
            bytes = gzip::inflate(&bytes, INFLATE_CAP).map_err(|e| refuse(path, e.to_string()))?;
        }
        let new = self.file(path, &bytes)?;
        if new == bytes {
            return Ok(());
        }
        let mut new = new;
        if gz || (base64 && gzip::is_gzip(&bytes)) {
            new = gzip::deflate(&new, 9);
        }
        let value = if base64 || gz {
            b64::encode(&new)
        } else {
            String::from_utf8(new).map_err(|_| refuse(path, "not UTF-8 text"))?
        };
        self.set(node, value, out);
        Ok(())
    }

    // ---- files ---------------------------------------------------------------------------

    /// A file's content, masked as what its path says it is.
    ///
    /// # Errors
    /// A file of known structure that does not read.
    pub(crate) fn file(&mut self, path: &str, bytes: &[u8]) -> Result<Vec<u8>, MaskError> {
        let path = normalise(path);
        let name = path.rsplit('/').next().unwrap_or("");
        // A key file in armour keeps its armour (and any certificate beside the key).
        let armoured = memchr::memmem::find(bytes, b"-----BEGIN ").is_some();
        let token_file = self.token_files.iter().any(|t| normalise(t) == path);
        // A credentials file in INI sections (`~/.aws/credentials`) is read key by key: its
        // section names and key ids stay, its secret keys' values go.
        // So is one of `key=value` lines (`/etc/cifs-creds`) or of URLs (`.git-credentials`).
        let sections = std::str::from_utf8(bytes).is_ok_and(|t| {
            let lines = || {
                t.lines()
                    .map(str::trim)
                    .filter(|l| !l.is_empty() && !l.starts_with('#'))
            };
            let ini = lines().any(|l| l.starts_with('[') && l.ends_with(']'))
                && lines().any(|l| l.contains('='));
            let assignments =
                lines().count() > 0 && lines().all(|l| l.contains('=') && !l.starts_with('='));
            let urls =
                lines().count() > 0 && lines().all(|l| l.contains("://") && !l.contains(' '));
            ini || assignments || urls
        });
        if (token_file || whole_secret_file(&path) && !sections) && !armoured {
            if bytes.is_empty() {
                return Ok(Vec::new());
            }
            if let Ok(text) = std::str::from_utf8(bytes) {
                self.known.add(text.trim());
            }
            let mut out = PLACEHOLDER.as_bytes().to_vec();
            if bytes.ends_with(b"\n") {
                out.push(b'\n');
            }
            return Ok(out);
        }
        let Ok(text) = std::str::from_utf8(bytes) else {
            // Binary content: nothing readable to keep.
            if bytes.is_empty() {
                return Ok(Vec::new());
            }
            return Ok(PLACEHOLDER.as_bytes().to_vec());
        };
        let rke2_dir =
            path.starts_with("/etc/rancher/rke2/") || path.starts_with("/etc/rancher/k3s/");
        let out = if rke2_dir
            && (name == "config.yaml" || name == "config.yml" || path.contains("/config.yaml.d/"))
        {
            self.document(text, &path, &mut |m, node, out| {
                m.rke2_config(node, out);
                Ok(())
            })?
        } else if name == "registries.yaml" || name == "registries.yml" {
            self.document(text, &path, &mut |m, node, out| {
                m.registries(node, out);
                Ok(())
            })?
        } else if structured(name, text) {
            match tree::parse(text) {
                Ok(docs) if docs.iter().any(|d| !matches!(d, Node::Scalar { .. })) => self
                    .document(text, &path, &mut |m, node, out| {
                        m.generic(node, out);
                        Ok(())
                    })?,
                _ => self.free(text),
            }
        } else {
            self.free(text)
        };
        Ok(out.into_bytes())
    }
}
