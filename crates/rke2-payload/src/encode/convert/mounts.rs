//! `mounts` ↔ `.mount` units: an fstab line becomes the unit systemd's fstab generator would
//! make of it (as Butane's `with_mount_unit` writes), and a unit that says no more than such a
//! line reads back as it.

use serde_json::{Map, Value, json};

use super::layout::{
    FORMATS, TO_IGNITION, ToCloudConfig, ToIgnition, dotted, is_partition, partition_path, under,
};
use super::{ConvertError, IgnitionDraft, refuse};
use crate::codec::text::terminal_safe;
use crate::document::ignition::Unit;

/// A `mounts` device as a path: `LABEL=x` and `UUID=x` by their udev links, `sdb` under
/// `/dev`; cloud-init's own names (`ephemeral0`, `swap`) only it can resolve.
fn mount_device(name: &str, aliases: &Map<String, Value>) -> Option<String> {
    for (prefix, dir) in [
        ("LABEL=", "by-label"),
        ("UUID=", "by-uuid"),
        ("PARTUUID=", "by-partuuid"),
        ("PARTLABEL=", "by-partlabel"),
    ] {
        if let Some(rest) = name.strip_prefix(prefix) {
            return (!rest.is_empty() && !rest.contains('/'))
                .then(|| format!("/dev/disk/{dir}/{rest}"));
        }
    }
    // A network filesystem (`server:/export`) is mounted as it is named.
    if name.contains(":/") && !name.starts_with('/') {
        return Some(name.to_owned());
    }
    if name.starts_with('/') {
        return name.starts_with("/dev/").then(|| name.to_owned());
    }
    // `<device>.<n>`: partition n of a named device.
    let (base, part) = dotted(name);
    let part = part.and_then(|n| n.parse::<u64>().ok()).filter(|n| *n > 0);
    let device = match aliases.get(base) {
        Some(Value::String(path)) if path.starts_with("/dev/") => path.clone(),
        Some(_) => return None,
        None if base.starts_with("ephemeral") || base == "swap" || base.contains('/') => {
            return None;
        }
        None => format!("/dev/{base}"),
    };
    Some(match part {
        Some(n) => partition_path(&device, n),
        None => device,
    })
}

/// cloud-init's defaults for the fields a `mounts` entry leaves out (systemd's): the type, the
/// options, dump and pass. Its `x-systemd.requires=cloud-init.service` is not carried: there is no
/// such unit under Ignition, and the mount would fail on it.
const MOUNT_DEFAULTS: [&str; 4] = ["auto", "defaults,nofail,_netdev", "0", "2"];

/// The `i`th `mounts` entry as a `.mount` unit; with files cloud-init defers under its mount
/// point, also the filesystem Ignition mounts there while it writes files.
pub(super) fn to_ignition(
    entry: &Value,
    i: usize,
    out: &mut ToIgnition,
    aliases: &Map<String, Value>,
    deferred: &[String],
) -> Result<(), ConvertError> {
    let what = format!("mounts[{i}]");
    let line = FstabLine::read(entry, &what)?;
    let device = source(&line.device, out, aliases, &what)?;
    let options = unit_options(&line.options, &what)?;
    // Only a unit: cloud-init's mounts never formats, and mounts after write_files, so the
    // filesystem is not given a path for Ignition to mount while it writes files.
    let name = format!("{}.mount", escape_path(&line.path));
    if out.units.iter().any(|u| u["name"] == name.as_str()) {
        return Err(refuse(
            TO_IGNITION,
            format!("{what}: {} is mounted twice", terminal_safe(&line.path)),
        ));
    }
    // Files cloud-init defers are written after it mounts: into the filesystem, which
    // Ignition then mounts at `path` while it writes files.
    if deferred.iter().any(|file| under(file, &line.path)) {
        mount_for_files(out, &device, &line, &options, &what)?;
    }
    out.mount_points.push(line.path.clone());
    out.units.push(json!({
        "contents": mount_unit(&device, &line.path, &line.format, &options, line.fsck),
        "enabled": true,
        "name": name,
    }));
    Ok(())
}

/// A `mounts` entry's fields, cloud-init's defaults filled in: the device as it is named, the
/// mount point, the type, the options, and whether fsck checks it (the pass; dump is 0).
struct FstabLine {
    device: String,
    path: String,
    format: String,
    options: String,
    fsck: bool,
}

impl FstabLine {
    /// The `mounts` entry `what`, when a `.mount` unit can hold it.
    fn read(entry: &Value, what: &str) -> Result<Self, ConvertError> {
        let mut fields = words(entry, what)?;
        if fields.len() > 6 {
            return Err(refuse(
                TO_IGNITION,
                format!("{what} (more than six fields)"),
            ));
        }
        fields.resize(6, None);
        let field = |n: usize| -> String {
            fields[n].clone().unwrap_or_else(|| {
                MOUNT_DEFAULTS
                    .get(n.wrapping_sub(2))
                    .copied()
                    .unwrap_or("")
                    .to_owned()
            })
        };
        let (name, path, format, options, dump, pass) =
            (field(0), field(1), field(2), field(3), field(4), field(5));
        if name.is_empty() || path.is_empty() {
            return Err(refuse(
                TO_IGNITION,
                format!("{what} (without a device and a mount point)"),
            ));
        }
        if dump != "0" {
            return Err(refuse(
                TO_IGNITION,
                format!("{what}: dump field {}", terminal_safe(&dump)),
            ));
        }
        let fsck = pass != "0";
        if format == "swap" || path == "none" || path == "swap" {
            return Err(refuse(
                TO_IGNITION,
                format!("{what}: swap (write a systemd .swap unit for it)"),
            ));
        }
        if !path.starts_with('/') {
            return Err(refuse(
                TO_IGNITION,
                format!("{what}: mount point {} is not a path", terminal_safe(&path)),
            ));
        }
        // A unit file's value ends at a line break, and systemd expands `%` specifiers in it.
        if [&name, &path, &format, &options]
            .iter()
            .any(|f| f.chars().any(|c| c.is_control() || c == '%' || c == '\\'))
        {
            return Err(refuse(
                TO_IGNITION,
                format!("{what}: a control character, % or \\ that a .mount unit cannot hold"),
            ));
        }
        Ok(FstabLine {
            device: name,
            path,
            format,
            options,
            fsck,
        })
    }
}

/// A `mounts` entry's words (a null one left out).
fn words(entry: &Value, what: &str) -> Result<Vec<Option<String>>, ConvertError> {
    match entry {
        Value::Array(items) => items
            .iter()
            .map(|v| match v {
                Value::String(s) => Ok(Some(s.clone())),
                Value::Number(n) => Ok(Some(n.to_string())),
                Value::Null => Ok(None),
                _ => Err(()),
            })
            .collect::<Result<Vec<_>, ()>>()
            .map_err(|()| refuse(TO_IGNITION, format!("{what} (not a list of words)"))),
        _ => Err(refuse(TO_IGNITION, format!("{what} (not a list)"))),
    }
}

/// The path of the device a `mounts` entry names.
fn source(
    name: &str,
    out: &ToIgnition,
    aliases: &Map<String, Value>,
    what: &str,
) -> Result<String, ConvertError> {
    let device = mount_device(name, aliases).ok_or_else(|| {
        refuse(
            TO_IGNITION,
            format!(
                "{what}: device {} (cloud-init finds it at boot, Ignition needs a /dev path)",
                terminal_safe(name)
            ),
        )
    })?;
    // cloud-init mounts a disk's first partition when it has one: known here only when this
    // config partitions the disk.
    if is_partition(&device) || device.contains(":/") {
        Ok(device)
    } else if out.disks.iter().any(|d| {
        d["device"] == device.as_str() && d["partitions"].as_array().is_some_and(|p| !p.is_empty())
    }) {
        Ok(partition_path(&device, 1))
    } else {
        Err(refuse(
            TO_IGNITION,
            format!(
                "{what}: device {} (cloud-init mounts its first partition if it has one, else the disk: name the partition)",
                terminal_safe(&device)
            ),
        ))
    }
}

/// A `mounts` entry's options as a `.mount` unit's (without `defaults`).
fn unit_options<'a>(options: &'a str, what: &str) -> Result<Vec<&'a str>, ConvertError> {
    let options: Vec<&str> = options
        .split(',')
        .filter(|o| *o != "defaults" && !o.is_empty())
        .collect();
    if options.iter().any(|o| o.starts_with("x-systemd.automount")) {
        return Err(refuse(
            TO_IGNITION,
            format!("{what}: x-systemd.automount (write a systemd .automount unit for it)"),
        ));
    }
    // systemd reads these only from /etc/fstab (its fstab generator); a .mount unit ignores them.
    let fstab_only: Vec<&str> = options
        .iter()
        .copied()
        .filter(|o| o.starts_with("x-systemd.") || *o == "x-initrd.mount")
        .collect();
    if !fstab_only.is_empty() {
        return Err(refuse(
            TO_IGNITION,
            format!(
                "{what}: {} (systemd reads it from /etc/fstab only; a .mount unit ignores it)",
                terminal_safe(&fstab_only.join(","))
            ),
        ));
    }
    Ok(options)
}

/// The filesystem Ignition mounts at a `mounts` entry's mount point while it writes files: the
/// one this config makes on the device, else one of the entry's type.
fn mount_for_files(
    out: &mut ToIgnition,
    device: &str,
    line: &FstabLine,
    options: &[&str],
    what: &str,
) -> Result<(), ConvertError> {
    let (path, format) = (&line.path, &line.format);
    let label = device.strip_prefix("/dev/disk/by-label/");
    let made = out.filesystems.iter_mut().find(|f| {
        f.get("path").is_none() && (f["device"] == device || label.is_some_and(|l| f["label"] == l))
    });
    match made {
        Some(fs) => {
            fs["path"] = json!(path);
            if !options.is_empty() {
                fs["mountOptions"] = json!(options);
            }
        }
        None if FORMATS.contains(&format.as_str()) && format != "swap" => {
            let mut fs = Map::new();
            fs.insert("device".to_owned(), json!(device));
            fs.insert("format".to_owned(), json!(format));
            if !options.is_empty() {
                fs.insert("mountOptions".to_owned(), json!(options));
            }
            fs.insert("path".to_owned(), json!(path));
            fs.insert("wipeFilesystem".to_owned(), json!(false));
            out.filesystems.push(Value::Object(fs));
        }
        None => {
            return Err(refuse(
                TO_IGNITION,
                format!(
                    "{what}: type {} with deferred files under {} (Ignition writes them into the filesystem only when it knows its type)",
                    terminal_safe(format),
                    terminal_safe(path)
                ),
            ));
        }
    }
    Ok(())
}

/// The `.mount` units of `mounts`, unless a `systemctl` line of runcmd names the unit too.
pub(super) fn units_to_ignition(d: &mut IgnitionDraft<'_>) {
    for unit in std::mem::take(&mut d.storage.units) {
        if d.units.iter().any(|u| u["name"] == unit["name"]) {
            d.refused.push(format!(
                "mounts: the unit {} of a mount is also named by a systemctl command of runcmd",
                terminal_safe(unit["name"].as_str().unwrap_or(""))
            ));
            continue;
        }
        d.units.push(unit);
    }
}

/// The `.mount` unit that keeps a filesystem mounted after Ignition (fstab's job).
fn mount_unit(device: &str, path: &str, format: &str, options: &[&str], fsck: bool) -> String {
    // As systemd's fstab generator reads the options: a network filesystem belongs to
    // remote-fs.target after the network, `nofail` is wanted rather than required, `noauto`
    // is not mounted at boot.
    let remote = options.contains(&"_netdev") || device.contains(":/");
    let target = if remote {
        "remote-fs.target"
    } else {
        "local-fs.target"
    };
    let mut unit = format!("[Unit]\nDescription=Mount {path}\nBefore={target}\n");
    if remote {
        unit.push_str("Wants=network-online.target\nAfter=network-online.target\n");
    }
    if fsck && !remote {
        let fsck = format!("systemd-fsck@{}.service", escape_path(device));
        unit.push_str(&format!("Requires={fsck}\nAfter={fsck}\n"));
    }
    unit.push_str(&format!("[Mount]\nWhat={device}\nWhere={path}\n"));
    if format != "auto" {
        unit.push_str(&format!("Type={format}\n"));
    }
    if !options.is_empty() {
        unit.push_str(&format!("Options={}\n", options.join(",")));
    }
    if !options.contains(&"noauto") {
        let by = if options.contains(&"nofail") {
            "WantedBy"
        } else {
            "RequiredBy"
        };
        unit.push_str(&format!("[Install]\n{by}={target}\n"));
    }
    unit
}

/// `systemd-escape --path`: `/var/lib/x` is `var-lib-x`.
fn escape_path(path: &str) -> String {
    let trimmed = path.trim_matches('/');
    if trimmed.is_empty() {
        return "-".to_owned();
    }
    let mut out = String::with_capacity(trimmed.len());
    let mut last_slash = false;
    for (i, b) in trimmed.bytes().enumerate() {
        match b {
            b'/' if last_slash => continue,
            b'/' => out.push('-'),
            b'.' if i == 0 => out.push_str("\\x2e"),
            b if b.is_ascii_alphanumeric() || b == b':' || b == b'_' || b == b'.' => {
                out.push(b as char)
            }
            b => out.push_str(&format!("\\x{b:02x}")),
        }
        last_slash = b == b'/';
    }
    out
}

/// A `.mount` unit's `What`, `Where`, `Type`, `Options`, and whether it asks for fsck.
struct MountUnit {
    what: String,
    path: String,
    format: String,
    options: String,
    fsck: bool,
}

/// A `.mount` unit that says no more than an fstab line: exactly what [`mount_unit`] writes
/// for its `What`, `Where`, `Type`, `Options` and fsck.
fn read_mount_unit(contents: &str) -> Option<MountUnit> {
    let value = |key: &str| {
        contents
            .lines()
            .find_map(|l| l.strip_prefix(key).map(str::to_owned))
    };
    let m = MountUnit {
        what: value("What=")?,
        path: value("Where=")?,
        format: value("Type=").unwrap_or_default(),
        options: value("Options=").unwrap_or_default(),
        fsck: contents.contains("\nRequires=systemd-fsck@"),
    };
    let options: Vec<&str> = m.options.split(',').filter(|o| !o.is_empty()).collect();
    let format = if m.format.is_empty() {
        "auto"
    } else {
        m.format.as_str()
    };
    (mount_unit(&m.what, &m.path, format, &options, m.fsck) == contents).then_some(m)
}

/// A mounted `storage.filesystems` entry (`fs`, mounted at `path`) as a `mounts` entry: as the
/// `.mount` unit of that path says it when the unit says no more than an fstab line, else as
/// the entry says it.
pub(super) fn filesystem_to_cloud_config(
    fs: &Value,
    path: &str,
    units: &[Unit],
    out: &mut ToCloudConfig,
) {
    let dev = fs["device"].as_str().unwrap_or("");
    let format = fs["format"].as_str().unwrap_or("");
    out.mount_points.push(path.to_owned());
    let unit_name = format!("{}.mount", escape_path(path));
    let unit = units
        .iter()
        .find(|u| u.name == unit_name && u.enabled == Some(true) && u.dropins.is_empty())
        .and_then(|u| {
            u.contents
                .as_deref()
                .and_then(read_mount_unit)
                .map(|m| (u, m))
        })
        .filter(|(_, m)| m.path == path);
    // A unit of that name that is more than an fstab line mounts it: it stays a unit.
    if unit.is_none() && units.iter().any(|u| u.name == unit_name) {
        return;
    }
    let mount_options: Vec<&str> = fs["mountOptions"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    let (what, options, fsck) = match &unit {
        Some((u, m)) => {
            out.mount_units.push(u.name.clone());
            (m.what.clone(), m.options.clone(), m.fsck)
        }
        None => (dev.to_owned(), mount_options.join(","), false),
    };
    let kind = match &unit {
        Some((_, m)) if !m.format.is_empty() => m.format.clone(),
        _ if format.is_empty() => "auto".to_owned(),
        _ => format.to_owned(),
    };
    out.mounts
        .push(fstab_entry(what, path.to_owned(), kind, options, fsck));
}

/// The `.mount` units of their own that say no more than an fstab line, as `mounts` entries.
pub(super) fn units_to_cloud_config(units: &[Unit], out: &mut ToCloudConfig) {
    for unit in units {
        if out.mount_units.contains(&unit.name)
            || unit.enabled != Some(true)
            || unit.mask == Some(true)
            || !unit.dropins.is_empty()
        {
            continue;
        }
        let Some(m) = unit.contents.as_deref().and_then(read_mount_unit) else {
            continue;
        };
        if unit.name != format!("{}.mount", escape_path(&m.path))
            || out.mounts.iter().any(|e| e[1] == m.path)
        {
            continue;
        }
        out.mount_units.push(unit.name.clone());
        out.mount_points.push(m.path.clone());
        let kind = if m.format.is_empty() {
            "auto".to_owned()
        } else {
            m.format
        };
        out.mounts
            .push(fstab_entry(m.what, m.path, kind, m.options, m.fsck));
    }
}

/// A `mounts` entry: device, path, type, options (`defaults` for none), dump 0 and the pass.
fn fstab_entry(
    what: String,
    path: String,
    kind: String,
    options: String,
    fsck: bool,
) -> [String; 6] {
    [
        what,
        path,
        kind,
        if options.is_empty() {
            "defaults".to_owned()
        } else {
            options
        },
        "0".to_owned(),
        if fsck { "2" } else { "0" }.to_owned(),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_escaped_as_systemd_escape_does() {
        assert_eq!(escape_path("/var/lib/rancher"), "var-lib-rancher");
        assert_eq!(escape_path("/"), "-");
        assert_eq!(escape_path("/mnt/my data/"), "mnt-my\\x20data");
        assert_eq!(escape_path("/.hidden"), "\\x2ehidden");
        assert_eq!(
            escape_path("/dev/disk/by-label/data"),
            "dev-disk-by\\x2dlabel-data"
        );
    }

    #[test]
    fn a_mount_unit_reads_back() {
        let unit = mount_unit("/dev/vdb1", "/data", "xfs", &["noatime"], true);
        let m = read_mount_unit(&unit).expect("reads");
        assert_eq!(
            (
                m.what.as_str(),
                m.path.as_str(),
                m.format.as_str(),
                m.options.as_str(),
                m.fsck
            ),
            ("/dev/vdb1", "/data", "xfs", "noatime", true)
        );
        assert!(read_mount_unit(&format!("{unit}[Service]\nExecStart=/bin/x\n")).is_none());
    }
}
