//! `write_files` ↔ `storage.files`, and `ntp` → `/etc/chrony.conf`.

use serde_json::{Map, Value, json};

use super::emit::write_file_entry;
use super::{CloudConfigDraft, ConvertError, IgnitionDraft, layout, refuse};
use crate::codec::dataurl;
use crate::document::{Content, File};

/// The fields of `write_files` entries that Ignition cannot say.
pub(super) fn refuse_fields(d: &mut IgnitionDraft<'_>) {
    for (path, field) in &d.config.file_fields {
        d.refused.push(format!(
            "write_files[{}].{field}",
            crate::codec::text::terminal_safe(path)
        ));
    }
}

/// `write_files` as `storage.files`.
pub(super) fn to_ignition(d: &mut IgnitionDraft<'_>) -> Result<(), ConvertError> {
    for file in &d.config.files {
        d.files.extend(keep!(d.refused, ignition_file(file)));
    }
    Ok(())
}

/// `ntp` as `/etc/chrony.conf` and `chronyd.service`.
pub(super) fn ntp_to_ignition(d: &mut IgnitionDraft<'_>) -> Result<(), ConvertError> {
    let Some(ntp) = &d.config.ntp else {
        return Ok(());
    };
    keep!(d.refused, ntp_keys(d.other("ntp")));
    if ntp.enabled != Some(false) && ntp.servers.is_empty() && ntp.pools.is_empty() {
        // cloud-init configures the distribution's own pools: the OS's chrony.conf.
        enable_chronyd(&mut d.units);
    }
    if ntp.enabled != Some(false) && (!ntp.servers.is_empty() || !ntp.pools.is_empty()) {
        let mut chrony = String::from("# Configured by rke2-payload from cloud-config ntp\n");
        for s in &ntp.servers {
            chrony.push_str(&format!("server {s} iburst\n"));
        }
        for p in &ntp.pools {
            chrony.push_str(&format!("pool {p} iburst\n"));
        }
        chrony.push_str("driftfile /var/lib/chrony/drift\nmakestep 1.0 3\nrtcsync\n");
        d.files.extend(keep!(
            d.refused,
            ignition_file(&File {
                path: "/etc/chrony.conf".to_owned(),
                mode: Some(0o644),
                owner: None,
                encoding: None,
                content: Content::Inline(chrony.into_bytes()),
                append: false,
            })
        ));
        enable_chronyd(&mut d.units);
    }
    Ok(())
}

/// `chronyd.service` enabled, unless a unit entry names it already.
fn enable_chronyd(units: &mut Vec<Value>) {
    if !units.iter().any(|u| u["name"] == "chronyd.service") {
        units.push(json!({"enabled": true, "name": "chronyd.service"}));
    }
}

/// Paths written twice, which Ignition rejects.
pub(super) fn refuse_duplicates(d: &mut IgnitionDraft<'_>) {
    let mut paths = std::collections::HashSet::new();
    // Ignition writes units after files: a file at a unit's path would be replaced.
    let unit_paths: Vec<Value> = d
        .units
        .iter()
        .filter(|u| u.get("contents").is_some())
        .filter_map(|u| u["name"].as_str())
        .map(|n| json!({"path": format!("/etc/systemd/system/{n}")}))
        .collect();
    let all_paths = d
        .files
        .iter()
        .chain(&d.directories)
        .chain(&d.links)
        .chain(&unit_paths)
        .map(|f| f["path"].as_str().unwrap_or(""));
    for path in all_paths {
        if !paths.insert(path.to_owned()) {
            d.refused.push(format!(
                "{} is written twice (Ignition rejects duplicates)",
                crate::codec::text::terminal_safe(path)
            ));
        }
    }
}

/// `storage.files`, and the files of units and drop-ins, as `write_files`.
pub(super) fn to_cloud_config(d: &mut CloudConfigDraft<'_>) -> Result<(), ConvertError> {
    let ignition = d.ignition;
    if ignition.files.is_empty() && d.unit_files.is_empty() {
        return Ok(());
    }
    let deferred = Deferred::new(d.doc, &d.storage.mount_points);
    let kept = kept(d.doc);
    d.out.push_str("write_files:\n");
    for file in ignition.files.iter().chain(&d.unit_files) {
        if (file.append || kept.contains(&file.path.as_str())) && file.mode.is_none() {
            // Ignition leaves the mode of a file it appends to or keeps; cloud-init would
            // set 0644.
            d.refused.push(format!(
                "storage.files[{}].mode (missing: Ignition keeps the file's mode, cloud-init would set 0644)",
                crate::codec::text::terminal_safe(&file.path)
            ));
            continue;
        }
        if kept.contains(&file.path.as_str()) {
            let touch = File {
                append: true,
                ..file.clone()
            };
            keep!(
                d.refused,
                write_file_entry(&mut d.out, &touch, deferred.holds(file))
            );
        } else {
            keep!(
                d.refused,
                write_file_entry(&mut d.out, file, deferred.holds(file))
            );
        }
    }
    Ok(())
}

/// The files cloud-init writes in its final stage. cloud-init writes files before it mounts
/// filesystems and creates users: a file under a mount point, or owned by a user or group the
/// config creates, is deferred to its final stage (Ignition mounts, and creates users, before
/// it writes files).
struct Deferred<'a> {
    users: Vec<&'a str>,
    groups: Vec<&'a str>,
    mount_points: &'a [String],
}

impl<'a> Deferred<'a> {
    fn new(doc: &'a Value, mount_points: &'a [String]) -> Self {
        let names = |section: &str| -> Vec<&'a str> {
            doc["passwd"][section]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|u| u["name"].as_str())
                .collect()
        };
        Deferred {
            users: names("users"),
            groups: names("groups"),
            mount_points,
        }
    }

    /// Whether cloud-init must write `file` in its final stage.
    fn holds(&self, file: &File) -> bool {
        let owned = file.owner.as_deref().is_some_and(|o| {
            let (u, g) = o.split_once(':').unwrap_or((o, ""));
            self.users.contains(&u) || self.groups.contains(&g)
        });
        owned
            || self
                .mount_points
                .iter()
                .any(|m| layout::under(&file.path, m))
    }
}

/// The paths of files without contents. Such a file is made if missing and otherwise kept as
/// it is, with its mode and owner: cloud-init's append of nothing.
fn kept(doc: &Value) -> Vec<&str> {
    doc["storage"]["files"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|f| {
            f["contents"]["source"].as_str().is_none()
                && f["append"].as_array().is_none_or(Vec::is_empty)
        })
        .filter_map(|f| f["path"].as_str())
        .collect()
}

/// `ntp` keys other than the servers and pools chrony is given.
fn ntp_keys(ntp: Option<&Value>) -> Result<(), ConvertError> {
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

/// A `write_files` entry as a `storage.files` entry.
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
    let contents = contents(file)?;
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

/// A file's contents as an Ignition resource: a `data:` URL, or a source Ignition fetches.
fn contents(file: &File) -> Result<Value, ConvertError> {
    Ok(match &file.content {
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
                format!(
                    "{}: content cannot be decoded ({why})",
                    crate::codec::text::terminal_safe(&file.path)
                ),
            ));
        }
    })
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

/// The smallest of a percent-encoded, base64, or gzip+base64 data URL (Butane's rule), as an
/// Ignition resource.
fn data_url(bytes: &[u8]) -> Value {
    let made = dataurl::file_data_url(bytes);
    let compression = if made.gzip { "gzip" } else { "" };
    json!({"compression": compression, "source": made.url, "verification": {}})
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
