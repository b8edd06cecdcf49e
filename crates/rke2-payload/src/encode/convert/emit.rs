//! Writing the converted document: the Ignition config as JSON; a cloud-config's lists,
//! `write_files` entries and YAML scalars.

use serde_json::{Map, Value, json};

use super::{CloudConfigDraft, ConvertError, IgnitionDraft, refuse};
use crate::codec::b64;
use crate::document::{Content, File};

/// The Ignition config of a finished draft, as JSON.
pub(super) fn ignition(d: IgnitionDraft<'_>) -> Vec<u8> {
    let mut storage = Map::new();
    for (name, list) in [
        ("directories", d.directories),
        ("disks", d.storage.disks),
        ("files", d.files),
        ("filesystems", d.storage.filesystems),
        ("links", d.links),
    ] {
        if !list.is_empty() || name == "files" {
            storage.insert(name.to_owned(), Value::Array(list));
        }
    }
    let doc = json!({
        "ignition": {"config": {"replace": {"verification": {}}}, "proxy": {}, "security": {"tls": {}}, "timeouts": {}, "version": "3.3.0"},
        "kernelArguments": {},
        "passwd": passwd(d.users, d.groups),
        "storage": Value::Object(storage),
        "systemd": {"units": d.units},
    });
    doc.to_string().into_bytes()
}

/// `passwd` with its users and groups (`{}` with neither).
fn passwd(users: Vec<Value>, groups: Vec<Value>) -> Value {
    let mut p = Map::new();
    if !groups.is_empty() {
        p.insert("groups".to_owned(), Value::Array(groups));
    }
    if !users.is_empty() {
        p.insert("users".to_owned(), Value::Array(users));
    }
    Value::Object(p)
}

/// A cloud-config's `mounts`, `bootcmd` and `runcmd`, the last lists of its text.
pub(super) fn commands(d: &mut CloudConfigDraft<'_>) {
    if !d.storage.mounts.is_empty() {
        d.out.push_str("mounts:\n");
        for fields in &d.storage.mounts {
            let words: Vec<String> = fields.iter().map(|f| yaml_quote(f)).collect();
            d.out.push_str(&format!("- [{}]\n", words.join(", ")));
        }
    }
    if !d.boot.is_empty() {
        d.out.push_str("bootcmd:\n");
        for c in &d.boot {
            d.out.push_str(&format!("- {}\n", yaml_quote(c)));
        }
    }
    // Units start at boot under Ignition: their lines come before the install script.
    let commands: Vec<&String> = d
        .storage
        .commands
        .iter()
        .chain(&d.systemctl)
        .chain(&d.script)
        .collect();
    if !commands.is_empty() {
        d.out.push_str("runcmd:\n");
        for c in commands {
            d.out.push_str(&format!("- {}\n", yaml_quote(c)));
        }
    }
}

pub(super) fn write_file_entry(
    out: &mut String,
    file: &File,
    defer: bool,
) -> Result<(), ConvertError> {
    out.push_str(&format!("-   path: {}\n", yaml_quote(&file.path)));
    if defer {
        out.push_str("    defer: true\n");
    }
    if let Some(owner) = &file.owner {
        // Ignition's id 0 (the only id that reaches here) is root by name.
        let owner = match owner.split_once(':') {
            Some((u, g)) => format!("{}:{}", root(u), root(g)),
            None => root(owner).to_owned(),
        };
        out.push_str(&format!("    owner: {}\n", yaml_quote(&owner)));
    }
    if let Some(mode) = file.mode {
        out.push_str(&format!("    permissions: '{mode:04o}'\n"));
    }
    if file.append {
        out.push_str("    append: true\n");
    }
    match &file.content {
        Content::Inline(bytes) => match std::str::from_utf8(bytes) {
            // Text without its last line break (common in Ignition units) is a `|-` block.
            Ok(text)
                if block_safe(text)
                    || (!text.ends_with('\n') && block_safe(&format!("{text}\n"))) =>
            {
                if text.is_empty() {
                    out.push_str("    content: ''\n");
                } else {
                    let chomp = if text.ends_with('\n') { "" } else { "-" };
                    out.push_str(&format!("    content: |{chomp}\n"));
                    for line in text.lines() {
                        out.push_str("      ");
                        out.push_str(line);
                        out.push('\n');
                    }
                }
            }
            _ => {
                out.push_str("    encoding: b64\n");
                out.push_str(&format!("    content: {}\n", b64::encode(bytes)));
            }
        },
        Content::Remote(url) => {
            out.push_str(&format!("    source:\n      uri: {}\n", yaml_quote(url)));
        }
        Content::Undecodable(why) => {
            return Err(refuse(
                "cloud-config",
                format!(
                    "{}: content cannot be decoded ({why})",
                    crate::codec::text::terminal_safe(&file.path)
                ),
            ));
        }
    }
    Ok(())
}

fn root(name: &str) -> &str {
    if name == "0" { "root" } else { name }
}

/// Whether text survives a `|` block scalar unchanged: ends with exactly one newline, no
/// carriage returns or control characters, the first line not indented.
fn block_safe(text: &str) -> bool {
    if text.is_empty() {
        return true;
    }
    text.ends_with('\n')
        && !text.ends_with("\n\n")
        && !text.starts_with([' ', '\t', '\n'])
        && !text
            .chars()
            .any(|c| (c.is_control() && c != '\n' && c != '\t') || c == '\u{feff}')
}

/// A YAML scalar: single-quoted unless it is plainly safe.
pub(super) fn yaml_quote(s: &str) -> String {
    let plain = !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-".contains(c))
        && !s.starts_with(['-', '.'])
        && s.parse::<f64>().is_err()
        && !matches!(
            s.to_ascii_lowercase().as_str(),
            "yes" | "no" | "on" | "off" | "true" | "false" | "null" | "y" | "n"
        );
    if plain {
        return s.to_owned();
    }
    // A single-quoted scalar cannot hold a line break as it is, nor a character YAML does not
    // print (C0, DEL, C1, U+FEFF, U+FFFE–U+FFFF): those are written double-quoted, escaped.
    let needs_escape = |c: char| matches!(c, '\u{0}'..='\u{1f}' | '\u{7f}'..='\u{84}' | '\u{86}'..='\u{9f}' | '\u{feff}' | '\u{fffe}' | '\u{ffff}');
    if !s.chars().any(needs_escape) {
        return format!("'{}'", s.replace('\'', "''"));
    }
    let mut out = String::with_capacity(s.len() + 8);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if needs_escape(c) && (c as u32) < 0x100 => {
                out.push_str(&format!("\\x{:02x}", c as u32));
            }
            c if needs_escape(c) => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scalars_yaml_does_not_print_are_escaped() {
        for text in [
            "/etc/a\u{7f}b",
            "a\nb",
            "x\u{1b}[2J",
            "q\"uo\\te\u{85}",
            "bom\u{feff}",
            "it's",
        ] {
            let yaml = format!("k: {}\n", yaml_quote(text));
            let value: serde_json::Value = serde_saphyr::from_str(&yaml).unwrap();
            assert_eq!(value["k"], text, "{yaml}");
        }
    }

    #[test]
    fn binary_and_awkward_text_become_base64() {
        assert!(block_safe("a\nb\n"));
        assert!(!block_safe("a"));
        assert!(!block_safe("a\n\n"));
        assert!(!block_safe("  indented\n"));
        assert!(!block_safe("a\r\n"));
        assert_eq!(yaml_quote("/etc/x.conf"), "/etc/x.conf");
        assert_eq!(yaml_quote("it's"), "'it''s'");
        assert_eq!(yaml_quote("yes"), "'yes'");
    }
}
