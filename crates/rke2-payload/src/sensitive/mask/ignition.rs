//! Ignition: its secret fields, every resource's data URL decoded and masked, files by path.

use crate::codec::tree::{self, Node};
use crate::codec::{b64, dataurl, gzip};

use super::{Change, INFLATE_CAP, Inner, MaskError, Masker, PLACEHOLDER, refuse, secret_key};

impl Masker {
    pub(super) fn ignition(&mut self, text: &str) -> Result<String, MaskError> {
        let owned;
        let text = match tree::parse(text) {
            Ok(_) => text,
            Err(_) => {
                // JSON the YAML reader does not take (tabs, say): written again as plain JSON.
                let value: serde_json::Value = serde_json::from_str(text).map_err(|e| {
                    refuse(
                        "the Ignition config",
                        crate::codec::text::parser_message(&e.to_string()),
                    )
                })?;
                owned = serde_json::to_string(&value)
                    .map_err(|e| refuse("the Ignition config", e.to_string()))?;
                &owned
            }
        };
        self.document(text, "the Ignition config", &mut |m, node, out| {
            // Ignition reads its keys whatever their case (Go's JSON decoder): so are they
            // here, on a copy whose values keep their places.
            m.ignition_root(&lower_keys(node), out)
        })
    }

    fn ignition_root(&mut self, node: &Node, out: &mut Vec<Change>) -> Result<(), MaskError> {
        let Node::Map(entries) = node else {
            return Err(refuse("the Ignition config", "it is not a JSON object"));
        };
        for (k, v) in entries {
            match k.as_str().unwrap_or("") {
                "ignition" => self.ignition_section(v, out)?,
                "storage" => self.storage(v, out)?,
                "passwd" => self.passwd(v, out),
                "systemd" => self.generic(v, out),
                _ => self.generic_keyed(k, v, out),
            }
        }
        Ok(())
    }

    fn ignition_section(&mut self, node: &Node, out: &mut Vec<Change>) -> Result<(), MaskError> {
        let Node::Map(entries) = node else {
            self.generic(node, out);
            return Ok(());
        };
        for (k, v) in entries {
            match (k.as_str().unwrap_or(""), v) {
                ("config", Node::Map(fields)) => {
                    for (f, refs) in fields {
                        match (f.as_str().unwrap_or(""), refs) {
                            ("merge", Node::Seq(items)) => {
                                for item in items {
                                    self.resource(item, out, &mut |m, bytes| {
                                        let text = std::str::from_utf8(&bytes).map_err(|_| {
                                            refuse("a merged Ignition config", "not UTF-8 text")
                                        })?;
                                        Ok(m.ignition(text)?.into_bytes())
                                    })?;
                                }
                            }
                            ("replace", item) => {
                                self.resource(item, out, &mut |m, bytes| {
                                    let text = std::str::from_utf8(&bytes).map_err(|_| {
                                        refuse("a replacing Ignition config", "not UTF-8 text")
                                    })?;
                                    Ok(m.ignition(text)?.into_bytes())
                                })?;
                            }
                            _ => self.generic_keyed(f, refs, out),
                        }
                    }
                }
                ("security", _) => {
                    // certificateAuthorities sources: certificates stay, keys go.
                    self.walk_resources(v, out, "a certificate authority")?;
                }
                ("proxy", Node::Map(fields)) => {
                    for (f, value) in fields {
                        match value {
                            Node::Scalar { value: s, .. } if s.contains("://") => {
                                let new = self.url(s);
                                let new = self.free(&new);
                                self.set(value, new, out);
                            }
                            _ => self.generic_keyed(f, value, out),
                        }
                    }
                }
                _ => self.generic_keyed(k, v, out),
            }
        }
        Ok(())
    }

    /// Every resource (`source` + `compression`) below `node`, masked as free text.
    fn walk_resources(
        &mut self,
        node: &Node,
        out: &mut Vec<Change>,
        what: &str,
    ) -> Result<(), MaskError> {
        match node {
            Node::Map(_) if node.get("source").is_some() => {
                let what = what.to_owned();
                self.resource(node, out, &mut |m, bytes| m.file(&what, &bytes))
            }
            Node::Map(entries) => {
                for (k, v) in entries {
                    if secret_key(k.as_str().unwrap_or("")) {
                        self.mask_all(v, out);
                    } else {
                        self.walk_resources(v, out, what)?;
                    }
                }
                Ok(())
            }
            Node::Seq(items) => {
                for i in items {
                    self.walk_resources(i, out, what)?;
                }
                Ok(())
            }
            Node::Scalar { .. } => {
                self.text_value(node, out);
                Ok(())
            }
        }
    }

    /// An Ignition resource: `source` (a `data:` URL is decoded, `compression` undone, the
    /// bytes masked by `inner`, and encoded again), `httpHeaders` values masked, the rest kept.
    fn resource(
        &mut self,
        node: &Node,
        out: &mut Vec<Change>,
        inner: &mut Inner<'_>,
    ) -> Result<(), MaskError> {
        let Node::Map(entries) = node else {
            self.generic(node, out);
            return Ok(());
        };
        let gz = node.get("compression").and_then(Node::as_str) == Some("gzip");
        for (k, v) in entries {
            match k.as_str().unwrap_or("") {
                "source" => {
                    let Some(source) = v.as_str() else {
                        self.generic(v, out);
                        continue;
                    };
                    match dataurl::DataUrl::parse(source) {
                        Ok(url) => {
                            let bytes = url
                                .decode()
                                .map_err(|e| refuse("a data URL", e.to_string()))?
                                .into_owned();
                            let plain = if gz {
                                gzip::inflate(&bytes, INFLATE_CAP)
                                    .map_err(|e| refuse("a data URL", e.to_string()))?
                            } else {
                                bytes
                            };
                            let new = inner(self, plain.clone())?;
                            if new != plain {
                                let encoded = if gz {
                                    format!(
                                        "data:{};base64,{}",
                                        url.media_type,
                                        b64::encode(&gzip::deflate(&new, 9))
                                    )
                                } else if url.base64 {
                                    format!("data:{};base64,{}", url.media_type, b64::encode(&new))
                                } else {
                                    format!(
                                        "data:{},{}",
                                        url.media_type,
                                        dataurl::percent_encode(&new)
                                    )
                                };
                                self.set(v, encoded, out);
                            }
                        }
                        // A remote source is never fetched; its URL may carry credentials.
                        Err(_) => {
                            let new = self.url(source);
                            let new = self.free(&new);
                            self.set(v, new, out);
                        }
                    }
                }
                "httpheaders" => self.headers(v, out),
                "verification" | "compression" => self.public_value(v, out),
                _ => self.generic_keyed(k, v, out),
            }
        }
        Ok(())
    }

    /// `httpHeaders`: every value masked (names stay).
    fn headers(&mut self, node: &Node, out: &mut Vec<Change>) {
        match node {
            Node::Seq(items) => {
                for item in items {
                    match item {
                        Node::Map(fields) => {
                            // A header whose name says it carries a credential
                            // (`Authorization`, `X-Vault-Token`, `Cookie`, `X-Api-Key`) is
                            // masked whole; any other value is read word by word.
                            let name = item.get("name").and_then(Node::as_str).unwrap_or("");
                            let lower = name.to_ascii_lowercase();
                            let secret = secret_key(name)
                                || ["auth", "token", "key", "cookie", "secret", "signature"]
                                    .iter()
                                    .any(|w| lower.contains(w));
                            for (f, v) in fields {
                                if f.as_str() == Some("name") {
                                    self.public_value(v, out);
                                } else if !secret {
                                    self.text_value(v, out);
                                } else {
                                    self.secret_value(v, out);
                                }
                            }
                        }
                        _ => self.mask_all(item, out),
                    }
                }
            }
            _ => self.mask_all(node, out),
        }
    }

    fn storage(&mut self, node: &Node, out: &mut Vec<Change>) -> Result<(), MaskError> {
        let Node::Map(entries) = node else {
            self.generic(node, out);
            return Ok(());
        };
        for (k, v) in entries {
            match (k.as_str().unwrap_or(""), v) {
                ("files", Node::Seq(files)) => {
                    for file in files {
                        self.ignition_file(file, out)?;
                    }
                }
                ("luks", Node::Seq(volumes)) => {
                    for volume in volumes {
                        let Node::Map(fields) = volume else {
                            self.mask_all(volume, out);
                            continue;
                        };
                        for (f, value) in fields {
                            match f.as_str().unwrap_or("") {
                                "keyfile" => self.resource(value, out, &mut |m, bytes| {
                                    if let Ok(t) = std::str::from_utf8(&bytes) {
                                        m.known.add(t.trim());
                                    }
                                    Ok(if bytes.is_empty() {
                                        bytes
                                    } else {
                                        PLACEHOLDER.as_bytes().to_vec()
                                    })
                                })?,
                                "clevis" | "options" | "openoptions" => {
                                    self.walk_secret_text(value, out)
                                }
                                _ => self.generic_keyed(f, value, out),
                            }
                        }
                    }
                }
                _ => self.generic_keyed(k, v, out),
            }
        }
        Ok(())
    }

    /// A subtree of free text where a secret-named key masks its value.
    fn walk_secret_text(&mut self, node: &Node, out: &mut Vec<Change>) {
        self.generic(node, out);
    }

    fn ignition_file(&mut self, node: &Node, out: &mut Vec<Change>) -> Result<(), MaskError> {
        let Node::Map(entries) = node else {
            self.generic(node, out);
            return Ok(());
        };
        let path = node
            .get("path")
            .and_then(Node::as_str)
            .unwrap_or("")
            .to_owned();
        for (k, v) in entries {
            match (k.as_str().unwrap_or(""), v) {
                ("contents", _) => {
                    let p = path.clone();
                    self.resource(v, out, &mut |m, bytes| m.file(&p, &bytes))?;
                }
                ("append", Node::Seq(items)) => {
                    for item in items {
                        let p = path.clone();
                        self.resource(item, out, &mut |m, bytes| m.file(&p, &bytes))?;
                    }
                }
                ("path" | "mode" | "overwrite" | "user" | "group", _) => self.public_value(v, out),
                _ => self.generic_keyed(k, v, out),
            }
        }
        Ok(())
    }

    fn passwd(&mut self, node: &Node, out: &mut Vec<Change>) {
        let Node::Map(entries) = node else {
            return self.generic(node, out);
        };
        for (k, v) in entries {
            match (k.as_str().unwrap_or(""), v) {
                ("users", Node::Seq(users)) => {
                    for user in users {
                        let Node::Map(fields) = user else {
                            self.generic(user, out);
                            continue;
                        };
                        for (f, value) in fields {
                            match f.as_str().unwrap_or("") {
                                "passwordhash" => self.mask_all(value, out),
                                "sshauthorizedkeys" | "name" | "groups" | "shell" | "homedir" => {
                                    self.public_value(value, out);
                                }
                                _ => self.generic_keyed(f, value, out),
                            }
                        }
                    }
                }
                _ => self.generic_keyed(k, v, out),
            }
        }
    }
}

/// A copy of a tree with every key in lower case (values and their places unchanged).
fn lower_keys(node: &Node) -> Node {
    match node {
        Node::Scalar { .. } => node.clone(),
        Node::Seq(items) => Node::Seq(items.iter().map(lower_keys).collect()),
        Node::Map(entries) => Node::Map(
            entries
                .iter()
                .map(|(k, v)| {
                    let key = match k {
                        Node::Scalar {
                            value,
                            style,
                            tag,
                            span,
                            column,
                        } => Node::Scalar {
                            value: value.to_ascii_lowercase(),
                            style: *style,
                            tag: tag.clone(),
                            span: span.clone(),
                            column: *column,
                        },
                        other => lower_keys(other),
                    };
                    (key, lower_keys(v))
                })
                .collect(),
        ),
    }
}
