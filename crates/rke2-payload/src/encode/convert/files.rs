//! `write_files` ↔ `storage.files`, and ntp's keys.

use serde_json::{Map, Value, json};

use super::{ConvertError, refuse};
use crate::codec::{b64, dataurl, gzip};
use crate::document::{Content, File};

/// `ntp` keys other than the servers and pools chrony is given.
pub(super) fn ntp_keys(ntp: Option<&Value>) -> Result<(), ConvertError> {
    if let Some(Value::Object(m)) = ntp {
        for (k, v) in m {
            let carried = match k.as_str() {
                "enabled" | "servers" | "pools" => true,
                "ntp_client" => matches!(v.as_str(), Some("chrony" | "auto")),
                _ => v.is_null(),
            };
            if !carried {
                return Err(refuse(
                    "Ignition",
                    format!(
                        "ntp.{} (only servers and pools become /etc/chrony.conf)",
                        crate::codec::text::terminal_safe(k)
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// Whether a path is in `/run` or `/tmp`, which the booted system mounts a tmpfs over: what
/// Ignition writes there is hidden (cloud-init writes them in the running system).
pub(super) fn volatile(path: &str) -> bool {
    ["/run", "/tmp", "/var/run"]
        .iter()
        .any(|dir| path == *dir || path.strip_prefix(dir).is_some_and(|r| r.starts_with('/')))
}

pub(super) fn ignition_file(file: &File) -> Result<Value, ConvertError> {
    let path = crate::codec::text::terminal_safe(&file.path);
    if !file.path.starts_with('/') {
        return Err(refuse("Ignition", format!("{path}: relative path")));
    }
    if volatile(&file.path) {
        return Err(refuse(
            "Ignition",
            format!(
                "write_files[{path}]: in /run or /tmp (a tmpfs is mounted over what Ignition writes there)"
            ),
        ));
    }
    if let Some(mode) = file.mode.filter(|m| m & !0o777 != 0) {
        return Err(refuse(
            "Ignition",
            format!(
                "write_files[{path}].permissions {mode:04o} (Ignition 3.3 sets no setuid, setgid or sticky bit)"
            ),
        ));
    }
    let (user, group) = match file.owner.as_deref() {
        Some(owner) => match owner.split_once(':') {
            Some((u, g)) => (node(u.trim()), node(g.trim())),
            None => (node(owner.trim()), json!({})),
        },
        // cloud-init sets root:root on a file it appends to; Ignition would keep the owner.
        None if file.append => (json!({"name": "root"}), json!({"name": "root"})),
        None => (json!({}), json!({})),
    };
    let contents = match &file.content {
        Content::Inline(bytes) => data_url(bytes),
        Content::Remote(url) => {
            // Ignition fetches http, https, tftp, s3, gs and arn sources.
            let scheme = url.split(':').next().unwrap_or("").to_ascii_lowercase();
            if !matches!(
                scheme.as_str(),
                "http" | "https" | "tftp" | "s3" | "gs" | "arn"
            ) {
                return Err(refuse(
                    "Ignition",
                    format!(
                        "write_files[{}].source.uri {}: (Ignition cannot fetch it)",
                        crate::codec::text::terminal_safe(&file.path),
                        crate::codec::text::terminal_safe(&crate::codec::text::shorten(
                            &scheme, 20
                        ))
                    ),
                ));
            }
            json!({"compression": "", "source": url, "verification": {}})
        }
        Content::Undecodable(why) => {
            return Err(refuse(
                "Ignition",
                format!("{}: content cannot be decoded ({why})", file.path),
            ));
        }
    };
    // Appending nothing makes the file if it is missing and keeps it otherwise: no contents.
    let touch = file.append && matches!(&file.content, Content::Inline(b) if b.is_empty());
    let mut entry = Map::new();
    entry.insert("group".to_owned(), group);
    entry.insert("overwrite".to_owned(), Value::Bool(!file.append));
    entry.insert("path".to_owned(), Value::String(file.path.clone()));
    entry.insert("user".to_owned(), user);
    match (touch, file.append) {
        (true, _) => {}
        (false, true) => {
            entry.insert("append".to_owned(), Value::Array(vec![contents]));
        }
        (false, false) => {
            entry.insert("contents".to_owned(), contents);
        }
    }
    // cloud-init sets 0644 on a file it appends to unless told otherwise; Ignition would keep
    // the mode.
    let mode = file.mode.or(file.append.then_some(0o644));
    if let Some(mode) = mode {
        entry.insert("mode".to_owned(), json!(mode));
    }
    Ok(Value::Object(entry))
}

fn node(name: &str) -> Value {
    if name.is_empty() {
        json!({})
    } else if let Ok(id) = name.parse::<u32>() {
        json!({"id": id})
    } else {
        json!({"name": name})
    }
}

/// The smallest of a percent-encoded, base64, or gzip+base64 data URL (Butane's rule).
pub(crate) fn data_url(bytes: &[u8]) -> Value {
    let percent = format!("data:,{}", dataurl::percent_encode(bytes));
    let base64 = format!("data:;base64,{}", b64::encode(bytes));
    let (mut best, mut compression) = if base64.len() < percent.len() {
        (base64, "")
    } else {
        (percent, "")
    };
    let gz = format!("data:;base64,{}", b64::encode(&gzip::deflate(bytes, 9)));
    if gz.len() + 4 < best.len() {
        best = gz;
        compression = "gzip";
    }
    json!({"compression": compression, "source": best, "verification": {}})
}

/// Fields of `storage.files` that cloud-config's `write_files` cannot say.
pub(super) fn file_fields(doc: &Value) -> Vec<ConvertError> {
    doc["storage"]["files"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|f| file_field(f).err())
        .collect()
}

/// The first field of one `storage.files` entry that `write_files` cannot say.
fn file_field(f: &Value) -> Result<(), ConvertError> {
    let path = crate::codec::text::terminal_safe(f["path"].as_str().unwrap_or(""));
    let field = |k: &str| refuse("cloud-config", format!("storage.files[{path}].{k}"));
    let appends = f["append"].as_array().map_or(0, Vec::len);
    let has_contents = f["contents"]["source"].as_str().is_some();
    if appends > 1 || (appends == 1 && has_contents) {
        return Err(refuse(
            "cloud-config",
            format!("storage.files[{path}]: several contents (write_files gives a file one)"),
        ));
    }
    for node in ["user", "group"] {
        let n = &f[node];
        let named = n["name"].as_str().is_some_and(|s| !s.is_empty());
        if !named && n["id"].as_u64().is_some_and(|id| id != 0) {
            // cloud-init looks owners up by name (0 is root).
            return Err(field(&format!("{node}.id (write_files takes owner names)")));
        }
    }
    let resources =
        std::iter::once(&f["contents"]).chain(f["append"].as_array().into_iter().flatten());
    for r in resources {
        if let Some(source) = r["source"].as_str().filter(|s| !s.starts_with("data:")) {
            let scheme = source.split(':').next().unwrap_or("").to_ascii_lowercase();
            if !matches!(scheme.as_str(), "http" | "https") {
                return Err(field(&format!(
                    "contents.source {}: (cloud-init's write_files fetches http and https)",
                    crate::codec::text::terminal_safe(&crate::codec::text::shorten(&scheme, 20))
                )));
            }
            if r["compression"].as_str().is_some_and(|c| !c.is_empty()) {
                return Err(field(
                    "contents.compression of a remote source (cloud-init writes what it fetches as it is)",
                ));
            }
        }
        if r["verification"]["hash"]
            .as_str()
            .is_some_and(|h| !h.is_empty())
        {
            return Err(field(
                "contents.verification.hash (cloud-init checks no hash)",
            ));
        }
        if r["httpHeaders"].as_array().is_some_and(|h| !h.is_empty()) {
            return Err(field("contents.httpHeaders"));
        }
    }
    Ok(())
}
