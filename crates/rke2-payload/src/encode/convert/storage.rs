//! Disks, filesystems, directories and links, both ways; mounts in [`super::mounts`].
//!
//! cloud-config: `device_aliases` (names for devices), `disk_setup` (a partition table per
//! device, partitions as percentages), `fs_setup` (a filesystem per device or partition) and
//! `mounts` (`/etc/fstab` lines). Ignition 3.3: `storage.disks` (GPT, partitions in MiB),
//! `storage.filesystems` (formatted, and mounted while Ignition runs) and, for a mount that
//! lasts, a systemd `.mount` unit (as Butane's `with_mount_unit` writes). Ignition's
//! `storage.directories` and `storage.links` become the first runcmd commands.
//!
//! What one side says and the other cannot is refused by name: an MBR table, partitions sized
//! by percentage (or in MiB, back), a partition cloud-init picks at boot (`auto`, `any`), a
//! filesystem made by a command, a UUID, swap.

use serde_json::{Map, Value, json};

use super::emit::yaml_quote;
use super::layout::{
    FORMATS, TO_IGNITION, ToCloudConfig, ToIgnition, dotted, is_partition, partition_path,
};
use super::{ConvertError, mounts, refuse, shell};
use crate::codec::text::terminal_safe;
use crate::document::CloudConfig;
use crate::document::ignition::Unit;

const TO_CLOUD_CONFIG: &str = "cloud-config";

/// sgdisk type codes (which cloud-init passes to `sgdisk -t`) and their GPT type GUIDs.
const GPT_TYPES: [(&str, &str); 6] = [
    ("8300", "0FC63DAF-8483-4772-8E79-3D69D8477DE4"),
    ("8200", "0657FD6D-A4AB-43C4-84E5-0933C84B4F4F"),
    ("8e00", "E6D6D379-F507-44C2-A23C-238F2A3DF928"),
    ("fd00", "A19D880F-05FC-4D3B-A006-743F0F84911E"),
    ("ef00", "C12A7328-F81F-11D2-BA4B-00A0C93EC93B"),
    ("ef02", "21686148-6449-6E6F-744E-656564454649"),
];

/// The last value of a top-level key (cloud-init keeps the last of duplicates).
pub(super) fn key<'c>(config: &'c CloudConfig, name: &str) -> Option<&'c Value> {
    config
        .other
        .iter()
        .rev()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v)
}

/// `device_aliases`, `disk_setup`, `fs_setup` and `mounts` as Ignition storage.
pub(super) fn to_ignition(config: &CloudConfig) -> Result<ToIgnition, ConvertError> {
    let devices = Devices::of(config)?;
    let mut out = ToIgnition::default();
    // Each entry that cannot be carried is named; the others are still read.
    let mut refused: Vec<String> = Vec::new();
    let mut note = |result: Result<(), ConvertError>| {
        if let Err(ConvertError::Inexpressible { what, .. }) = result {
            refused.push(what);
        }
    };
    match key(config, "disk_setup") {
        None | Some(Value::Null) => {}
        Some(Value::Object(disks)) => {
            for (name, setup) in disks {
                let what = format!("disk_setup.{}", terminal_safe(name));
                note(devices.path(name, &what).and_then(|dev| {
                    out.disks.extend(disk(&dev, setup, &what)?);
                    Ok(())
                }));
            }
        }
        Some(_) => return Err(refuse(TO_IGNITION, "disk_setup (not a mapping)")),
    }
    match key(config, "fs_setup") {
        None | Some(Value::Null) => {}
        Some(Value::Array(entries)) => {
            for (i, entry) in entries.iter().enumerate() {
                note(fs_setup_to_ignition(
                    entry,
                    &format!("fs_setup[{i}]"),
                    &devices,
                    &mut out,
                ));
            }
        }
        Some(_) => return Err(refuse(TO_IGNITION, "fs_setup (not a list)")),
    }
    match key(config, "mounts") {
        None | Some(Value::Null) => {}
        Some(Value::Array(entries)) => {
            for (i, entry) in entries.iter().enumerate() {
                note(mounts::to_ignition(
                    entry,
                    i,
                    &mut out,
                    &devices.aliases,
                    &config.deferred,
                ));
            }
        }
        Some(_) => return Err(refuse(TO_IGNITION, "mounts (not a list)")),
    }
    if !refused.is_empty() {
        return Err(refuse(TO_IGNITION, refused.join("; ")));
    }
    Ok(out)
}

/// `device_aliases`: names a config gives devices.
struct Devices {
    aliases: Map<String, Value>,
}

impl Devices {
    fn of(config: &CloudConfig) -> Result<Self, ConvertError> {
        let aliases = match key(config, "device_aliases") {
            None | Some(Value::Null) => Map::new(),
            Some(Value::Object(m)) => m.clone(),
            Some(_) => return Err(refuse(TO_IGNITION, "device_aliases (not a mapping)")),
        };
        Ok(Devices { aliases })
    }

    /// The `/dev` path of the device `what` names (by an alias, or as it is).
    fn path(&self, name: &str, what: &str) -> Result<String, ConvertError> {
        let resolved = match self.aliases.get(name) {
            Some(Value::String(path)) => path.clone(),
            Some(_) => {
                return Err(refuse(
                    TO_IGNITION,
                    format!("device_aliases.{} (not a device path)", terminal_safe(name)),
                ));
            }
            None => name.to_owned(),
        };
        if resolved.starts_with("/dev/") {
            Ok(resolved)
        } else {
            Err(refuse(
                TO_IGNITION,
                format!(
                    "{what}: device {} (cloud-init finds it at boot, Ignition needs a /dev path: name it in device_aliases)",
                    terminal_safe(&resolved)
                ),
            ))
        }
    }
}

/// The `fs_setup` entry `what` as a filesystem.
fn fs_setup_to_ignition(
    entry: &Value,
    what: &str,
    devices: &Devices,
    out: &mut ToIgnition,
) -> Result<(), ConvertError> {
    let Value::Object(entry) = entry else {
        return Err(refuse(TO_IGNITION, format!("{what} (not a mapping)")));
    };
    let name = entry
        .get("device")
        .and_then(Value::as_str)
        .ok_or_else(|| refuse(TO_IGNITION, format!("{what}.device (missing or not text)")))?;
    // `<device>.<n>`: partition n of the device (`.0`, the device itself), which overrides
    // `partition`.
    let (name, dotted) = dotted(name);
    let path = devices.path(name, what)?;
    // The disks this config partitions into one partition.
    let one_partition = out.disks.iter().any(|d| {
        d["device"] == path.as_str() && d["partitions"].as_array().is_some_and(|p| p.len() == 1)
    });
    out.filesystems
        .push(filesystem(&path, entry, dotted, one_partition, what)?);
    Ok(())
}

fn disk(device: &str, setup: &Value, what: &str) -> Result<Option<Value>, ConvertError> {
    let Value::Object(setup) = setup else {
        return Err(refuse(TO_IGNITION, format!("{what} (not a mapping)")));
    };
    let mut wipe = false;
    let mut table = "mbr";
    let mut layout = &Value::Bool(false);
    for (k, v) in setup {
        match (k.as_str(), v) {
            ("table_type", Value::String(t)) => table = t.as_str(),
            ("overwrite", Value::Bool(b)) => wipe = *b,
            ("layout", v) => layout = v,
            (other, _) => {
                return Err(refuse(
                    TO_IGNITION,
                    format!("{what}.{}", terminal_safe(other)),
                ));
            }
        }
    }
    let partition = match layout {
        // cloud-init leaves a disk with no layout alone: nothing to do, nothing to carry.
        Value::Bool(false) | Value::Null => return Ok(None),
        // Purged: an empty GPT, as Ignition leaves a wiped disk.
        Value::String(s) if s == "remove" => {
            return Ok(Some(json!({"device": device, "wipeTable": true})));
        }
        Value::Bool(true) => json!({"number": 1}),
        Value::Array(parts) => match parts.as_slice() {
            [Value::Number(n)] if n.as_u64() == Some(100) => json!({"number": 1}),
            [Value::Array(pair)] if pair.first().and_then(Value::as_u64) == Some(100) => {
                let code = match pair.get(1) {
                    Some(Value::String(s)) => s.clone(),
                    Some(Value::Number(n)) => n.to_string(),
                    _ => return Err(refuse(TO_IGNITION, format!("{what}.layout (type)"))),
                };
                let guid = gpt_guid(&code).ok_or_else(|| {
                    refuse(
                        TO_IGNITION,
                        format!(
                            "{what}.layout: partition type {} (no GPT type GUID known for it)",
                            terminal_safe(&code)
                        ),
                    )
                })?;
                json!({"number": 1, "typeGuid": guid})
            }
            _ => {
                return Err(refuse(
                    TO_IGNITION,
                    format!(
                        "{what}.layout (partitions as percentages of the disk, Ignition sizes them in MiB)"
                    ),
                ));
            }
        },
        _ => return Err(refuse(TO_IGNITION, format!("{what}.layout"))),
    };
    if table != "gpt" {
        return Err(refuse(
            TO_IGNITION,
            format!(
                "{what}.table_type {} (Ignition writes GPT partition tables only)",
                terminal_safe(table)
            ),
        ));
    }
    Ok(Some(json!({
        "device": device,
        "partitions": [partition],
        "wipeTable": wipe,
    })))
}

fn gpt_guid(code: &str) -> Option<String> {
    let lower = code.to_ascii_lowercase();
    if let Some((_, guid)) = GPT_TYPES.iter().find(|(c, _)| *c == lower) {
        return Some((*guid).to_owned());
    }
    // sgdisk takes a GUID as a type too.
    let is_guid = code.len() == 36
        && code.char_indices().all(|(i, c)| {
            if matches!(i, 8 | 13 | 18 | 23) {
                c == '-'
            } else {
                c.is_ascii_hexdigit()
            }
        });
    is_guid.then(|| code.to_ascii_uppercase())
}

fn gpt_code(guid: &str) -> String {
    GPT_TYPES
        .iter()
        .find(|(_, g)| g.eq_ignore_ascii_case(guid))
        .map_or_else(|| guid.to_owned(), |(c, _)| (*c).to_owned())
}

/// The `fs_setup` entry `what` as a filesystem on `device`; `dotted` is the partition its
/// device name says, `one_partition` whether this config gives the disk one partition.
fn filesystem(
    device: &str,
    entry: &Map<String, Value>,
    dotted: Option<&str>,
    one_partition: bool,
    what: &str,
) -> Result<Value, ConvertError> {
    let mut setup = FsSetup::read(entry, what)?;
    match dotted {
        Some("0") => setup.partition = "any".to_owned(),
        Some(n) => setup.partition = n.to_owned(),
        None => {}
    }
    let (device, wipe) = setup.placement(device, one_partition, what)?;
    let format = setup
        .format
        .ok_or_else(|| refuse(TO_IGNITION, format!("{what}.filesystem (missing)")))?;
    let mut fs = setup.fs;
    fs.insert("device".to_owned(), json!(device));
    fs.insert("format".to_owned(), json!(format));
    fs.insert("wipeFilesystem".to_owned(), json!(wipe));
    Ok(Value::Object(fs))
}

/// What an `fs_setup` entry says: the filesystem's label and options (`fs`), its format,
/// whether mkfs is forced, and the partition.
struct FsSetup {
    fs: Map<String, Value>,
    format: Option<String>,
    overwrite: bool,
    partition: String,
}

impl FsSetup {
    fn read(entry: &Map<String, Value>, what: &str) -> Result<Self, ConvertError> {
        let mut setup = FsSetup {
            fs: Map::new(),
            format: None,
            overwrite: false,
            // cloud-init's default is `any`.
            partition: "any".to_owned(),
        };
        for (k, v) in entry {
            let field = || format!("{what}.{}", terminal_safe(k));
            match (k.as_str(), v) {
                ("device", _) => {}
                ("partition", Value::Number(n)) => setup.partition = n.to_string(),
                ("partition", Value::String(p)) => setup.partition = p.clone(),
                ("filesystem", Value::String(f)) => {
                    if !FORMATS.contains(&f.as_str()) || f == "swap" {
                        return Err(refuse(
                            TO_IGNITION,
                            format!(
                                "{what}.filesystem {} (Ignition makes ext4, btrfs, xfs and vfat here)",
                                terminal_safe(f)
                            ),
                        ));
                    }
                    setup.format = Some(f.clone());
                }
                ("label", Value::String(l)) => {
                    setup.fs.insert("label".to_owned(), json!(l));
                }
                ("overwrite", Value::Bool(b)) => setup.overwrite = *b,
                ("extra_opts", Value::Array(opts)) => {
                    let opts: Option<Vec<String>> = opts
                        .iter()
                        .map(|o| match o {
                            Value::String(s) => Some(s.clone()),
                            Value::Number(n) => Some(n.to_string()),
                            _ => None,
                        })
                        .collect();
                    setup.fs.insert(
                        "options".to_owned(),
                        json!(opts.ok_or_else(|| refuse(TO_IGNITION, field()))?),
                    );
                }
                ("extra_opts", Value::String(s)) => {
                    let opts: Vec<&str> = s.split_whitespace().collect();
                    setup.fs.insert("options".to_owned(), json!(opts));
                }
                ("cmd", _) => {
                    return Err(refuse(
                        TO_IGNITION,
                        format!("{what}.cmd (a command that makes the filesystem)"),
                    ));
                }
                _ => return Err(refuse(TO_IGNITION, field())),
            }
        }
        Ok(setup)
    }

    /// The device the filesystem is made on, and whether it is made whatever is there.
    fn placement(
        &self,
        device: &str,
        one_partition: bool,
        what: &str,
    ) -> Result<(String, bool), ConvertError> {
        let (partition, overwrite) = (&self.partition, self.overwrite);
        match partition.as_str() {
            // Always made, whatever is there: Ignition's wipeFilesystem. Without `overwrite`,
            // mkfs is not forced, and whether it replaces a filesystem there is mkfs's own choice.
            "none" if overwrite => Ok((device.to_owned(), true)),
            "none" => Err(refuse(
                TO_IGNITION,
                format!(
                    "{what}.partition none without overwrite (whether mkfs replaces a filesystem already there depends on the mkfs)"
                ),
            )),
            // Made unless a matching filesystem is there, on a partition or filesystem path, or
            // on the one partition this config gives the disk.
            // cloud-init keeps a matching filesystem here whatever `overwrite` says (it only
            // forces mkfs when it makes one).
            "auto" | "any" if is_partition(device) => Ok((device.to_owned(), false)),
            "auto" | "any" if one_partition => Ok((partition_path(device, 1), false)),
            "auto" | "any" => Err(refuse(
                TO_IGNITION,
                format!(
                    "{what}.partition {partition} on {} (cloud-init picks a partition of the disk at boot: name it, or the partition's path)",
                    terminal_safe(device)
                ),
            )),
            n => match n.parse::<u64>() {
                Ok(n) if (1..=128).contains(&n) => Ok((partition_path(device, n), overwrite)),
                _ => Err(refuse(
                    TO_IGNITION,
                    format!("{what}.partition {}", terminal_safe(n)),
                )),
            },
        }
    }
}

/// Ignition's `storage.disks`, `filesystems`, `directories` and `links` (of `doc`, the config
/// in effect) and its `.mount` units as cloud-config.
pub(super) fn to_cloud_config(doc: &Value, units: &[Unit]) -> Result<ToCloudConfig, ConvertError> {
    let mut out = ToCloudConfig::default();
    let storage = &doc["storage"];
    let list = |name: &str| storage[name].as_array().cloned().unwrap_or_default();
    let disk_setup = disk_setup(&list("disks"))?;
    if !disk_setup.is_empty() {
        out.blocks.push_str("disk_setup:\n");
        out.blocks.push_str(&disk_setup);
    }
    let mut fs_setup = String::new();
    for fs in list("filesystems") {
        fs_setup.push_str(&fs_setup_entry(&fs)?);
        if let Some(path) = fs["path"].as_str().filter(|p| !p.is_empty()) {
            mounts::filesystem_to_cloud_config(&fs, path, units, &mut out);
        }
    }
    if !fs_setup.is_empty() {
        out.blocks.push_str("fs_setup:\n");
        out.blocks.push_str(&fs_setup);
    }
    // A `.mount` unit of its own that says no more than an fstab line is one.
    mounts::units_to_cloud_config(units, &mut out);
    for d in list("directories") {
        out.commands.push(directory_command(&d)?);
    }
    for l in list("links") {
        link_commands(&l, &mut out.commands)?;
    }
    Ok(out)
}

/// Ignition's `storage.disks` as the entries of `disk_setup`.
fn disk_setup(disks: &[Value]) -> Result<String, ConvertError> {
    let mut disk_setup = String::new();
    for d in disks {
        let dev = d["device"].as_str().unwrap_or("");
        let what = format!("storage.disks[{}]", terminal_safe(dev));
        for k in d.as_object().into_iter().flatten().map(|(k, _)| k.as_str()) {
            if !matches!(k, "device" | "wipeTable" | "partitions") {
                return Err(refuse(
                    TO_CLOUD_CONFIG,
                    format!("{what}.{}", terminal_safe(k)),
                ));
            }
        }
        let parts = d["partitions"].as_array().cloned().unwrap_or_default();
        let wipe = d["wipeTable"].as_bool().unwrap_or(false);
        let layout = match parts.as_slice() {
            // A wiped table and no partitions: cloud-init's `remove`; not wiped, nothing to do.
            [] if wipe => {
                disk_setup.push_str(&format!("  {}:\n    layout: remove\n", yaml_quote(dev)));
                continue;
            }
            [] => continue,
            [p] => whole_disk_layout(p, &what)?,
            _ => {
                return Err(refuse(
                    TO_CLOUD_CONFIG,
                    format!(
                        "{what}.partitions ({} partitions: cloud-init's disk_setup says sizes as percentages, Ignition in MiB)",
                        parts.len()
                    ),
                ));
            }
        };
        disk_setup.push_str(&format!(
            "  {}:\n    table_type: gpt\n    layout: {layout}\n    overwrite: {wipe}\n",
            yaml_quote(dev),
        ));
    }
    Ok(disk_setup)
}

/// The one partition of the disk `what` as `disk_setup`'s `layout`: the whole disk, with the
/// partition's type when it has one.
fn whole_disk_layout(p: &Value, what: &str) -> Result<String, ConvertError> {
    for (k, v) in p.as_object().into_iter().flatten() {
        let ok = match k.as_str() {
            "number" => matches!(v.as_u64(), Some(0 | 1) | None),
            "sizeMiB" | "startMiB" => matches!(v.as_u64(), Some(0) | None),
            "typeGuid" => true,
            _ => v.is_null(),
        };
        if !ok {
            return Err(refuse(
                TO_CLOUD_CONFIG,
                format!(
                    "{what}.partitions[0].{} (cloud-init's disk_setup lays out whole-disk percentages, no labels or MiB)",
                    terminal_safe(k)
                ),
            ));
        }
    }
    Ok(match p["typeGuid"].as_str().filter(|g| !g.is_empty()) {
        // cloud-init's schema takes a type as a number; sgdisk also hex and GUIDs.
        Some(guid) => match gpt_code(guid) {
            code if code.bytes().all(|b| b.is_ascii_digit()) => {
                format!("[[100, {code}]]")
            }
            code => format!("[[100, {}]]", yaml_quote(&code)),
        },
        None => "true".to_owned(),
    })
}

/// A `storage.filesystems` entry as an `fs_setup` entry, or nothing when cloud-init need not
/// make the filesystem.
fn fs_setup_entry(fs: &Value) -> Result<String, ConvertError> {
    let dev = fs["device"].as_str().unwrap_or("");
    let what = format!("storage.filesystems[{}]", terminal_safe(dev));
    refuse_filesystem_fields(fs, &what)?;
    let format = fs["format"].as_str().unwrap_or("");
    let wipe = fs["wipeFilesystem"].as_bool().unwrap_or(false);
    let label = fs["label"].as_str().filter(|l| !l.is_empty());
    let options: Vec<&str> = fs["options"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    let path = fs["path"].as_str().filter(|p| !p.is_empty());
    if format == "swap" || format == "none" {
        return Err(refuse(
            TO_CLOUD_CONFIG,
            format!("{what}.format {format} (cloud-init's fs_setup makes filesystems to mount)"),
        ));
    }
    // Wiped: `partition: none`, which always makes the filesystem. Not wiped: `auto` (with
    // a label) or `any`, made unless a matching one is there; on a whole disk cloud-init
    // would pick a partition instead, so only a partition or filesystem path is carried.
    // A filesystem that is only mounted is taken to exist (as CAPRKE2's /opt subvolume);
    // one that is wiped, labelled or given options, or never mounted, is made.
    if !(wipe || label.is_some() || !options.is_empty() || path.is_none()) {
        return Ok(String::new());
    }
    if format.is_empty() {
        return Err(refuse(TO_CLOUD_CONFIG, format!("{what} (no format)")));
    }
    let partition = match (wipe, label) {
        (true, _) => "none",
        (false, _) if !is_partition(dev) => {
            return Err(refuse(
                TO_CLOUD_CONFIG,
                format!(
                    "{what}: a whole disk without wipeFilesystem (cloud-init's fs_setup would pick a partition of it at boot)"
                ),
            ));
        }
        (false, Some(_)) => "auto",
        (false, None) => "any",
    };
    let mut entry = format!(
        "  - device: {}\n    filesystem: {}\n    partition: {partition}\n    overwrite: {wipe}\n",
        yaml_quote(dev),
        yaml_quote(format)
    );
    if let Some(label) = label {
        entry.push_str(&format!("    label: {}\n", yaml_quote(label)));
    }
    if !options.is_empty() {
        let opts: Vec<String> = options.iter().map(|o| yaml_quote(o)).collect();
        entry.push_str(&format!("    extra_opts: [{}]\n", opts.join(", ")));
    }
    Ok(entry)
}

/// The first field of a `storage.filesystems` entry (`what`) that `fs_setup` cannot say.
fn refuse_filesystem_fields(fs: &Value, what: &str) -> Result<(), ConvertError> {
    for (k, v) in fs.as_object().into_iter().flatten() {
        let known = matches!(
            k.as_str(),
            "device" | "format" | "label" | "options" | "path" | "mountOptions" | "wipeFilesystem"
        );
        if !known && !v.is_null() {
            return Err(refuse(
                TO_CLOUD_CONFIG,
                format!(
                    "{what}.{} (cloud-init's fs_setup cannot say it)",
                    terminal_safe(k)
                ),
            ));
        }
    }
    Ok(())
}

/// A `storage.directories` entry as the `install -d` command that makes it.
fn directory_command(d: &Value) -> Result<String, ConvertError> {
    let path = d["path"].as_str().unwrap_or("");
    let what = format!("storage.directories[{}]", terminal_safe(path));
    let mut words = vec!["install".to_owned(), "-d".to_owned()];
    for (k, v) in d.as_object().into_iter().flatten() {
        match (k.as_str(), v) {
            ("path", _) | (_, Value::Null) | ("overwrite", Value::Bool(false)) => {}
            ("mode", v) => {
                let mode = v
                    .as_u64()
                    .filter(|m| *m <= 0o7777)
                    .ok_or_else(|| refuse(TO_CLOUD_CONFIG, format!("{what}.mode")))?;
                words.extend(["-m".to_owned(), format!("{mode:04o}")]);
            }
            ("user" | "group", v) => {
                if let Some(owner) = node_name(v) {
                    let flag = if k == "user" { "-o" } else { "-g" };
                    words.extend([flag.to_owned(), owner]);
                }
            }
            (other, _) => {
                return Err(refuse(
                    TO_CLOUD_CONFIG,
                    format!("{what}.{}", terminal_safe(other)),
                ));
            }
        }
    }
    words.extend(["--".to_owned(), path.to_owned()]);
    Ok(shell::join(&words))
}

/// A `storage.links` entry as the commands that make it: `mkdir -p` for its directory, `ln`,
/// and `chown -h` for its owner.
fn link_commands(l: &Value, commands: &mut Vec<String>) -> Result<(), ConvertError> {
    let path = l["path"].as_str().unwrap_or("");
    let what = format!("storage.links[{}]", terminal_safe(path));
    let mut hard = false;
    let mut force = false;
    let mut owner = (None, None);
    for (k, v) in l.as_object().into_iter().flatten() {
        match (k.as_str(), v) {
            ("path" | "target", _) | (_, Value::Null) => {}
            ("hard", Value::Bool(b)) => hard = *b,
            ("overwrite", Value::Bool(b)) => force = *b,
            ("user", v) => owner.0 = node_name(v),
            ("group", v) => owner.1 = node_name(v),
            (other, _) => {
                return Err(refuse(
                    TO_CLOUD_CONFIG,
                    format!("{what}.{}", terminal_safe(other)),
                ));
            }
        }
    }
    let target = l["target"]
        .as_str()
        .filter(|t| !t.is_empty())
        .ok_or_else(|| refuse(TO_CLOUD_CONFIG, format!("{what}.target (missing)")))?;
    if let Some((parent, _)) = path.rsplit_once('/')
        && !parent.is_empty()
    {
        commands.push(shell::join(
            &["mkdir", "-p", "--", parent].map(str::to_owned),
        ));
    }
    let mut flags = String::from(if hard { "-" } else { "-sn" });
    if force {
        flags.push('f');
    }
    let mut words = vec!["ln".to_owned()];
    if flags != "-" {
        words.push(flags);
    }
    words.extend(["--".to_owned(), target.to_owned(), path.to_owned()]);
    commands.push(shell::join(&words));
    let owner = match owner {
        (None, None) => None,
        (Some(u), None) => Some(u),
        (None, Some(g)) => Some(format!(":{g}")),
        (Some(u), Some(g)) => Some(format!("{u}:{g}")),
    };
    if let Some(owner) = owner {
        commands.push(shell::join(
            &["chown", "-h", &owner, "--", path].map(str::to_owned),
        ));
    }
    Ok(())
}

/// An Ignition node (`{"name": …}` or `{"id": …}`) as what `install` and `chown` take.
fn node_name(v: &Value) -> Option<String> {
    v["name"]
        .as_str()
        .filter(|n| !n.is_empty())
        .map(str::to_owned)
        .or_else(|| v["id"].as_u64().map(|id| id.to_string()))
}

/// The directories and links of commands [`to_cloud_config`] wrote, read back (for a round
/// trip): `None` when a command is not one of them.
pub(super) fn read_command(line: &str) -> Option<Value> {
    let words = shell::split(line)?;
    let words: Vec<&str> = words.iter().map(String::as_str).collect();
    let node = |s: &str| -> Value {
        match s.parse::<u32>() {
            Ok(id) => json!({"id": id}),
            Err(_) => json!({"name": s}),
        }
    };
    match words.as_slice() {
        ["install", "-d", rest @ .., "--", path] if path.starts_with('/') => {
            let mut d = Map::new();
            let mut it = rest.iter();
            while let Some(flag) = it.next() {
                let value = it.next()?;
                match *flag {
                    // Ignition 3.3 sets no setuid, setgid or sticky bit: such a line stays a
                    // command.
                    "-m" => {
                        let mode = u32::from_str_radix(value, 8).ok().filter(|m| *m <= 0o777)?;
                        d.insert("mode".to_owned(), json!(mode));
                    }
                    "-o" => {
                        d.insert("user".to_owned(), node(value));
                    }
                    "-g" => {
                        d.insert("group".to_owned(), node(value));
                    }
                    _ => return None,
                }
            }
            d.insert("path".to_owned(), json!(path));
            Some(json!({"directory": Value::Object(d)}))
        }
        ["mkdir", "-p", "--", path] if path.starts_with('/') => Some(json!({"parent": path})),
        ["ln", flags @ .., "--", target, path]
            if path.starts_with('/') && !target.is_empty() && flags.len() <= 1 =>
        {
            let flags = flags.first().copied().unwrap_or("-");
            let hard = !flags.contains('s');
            let force = flags.contains('f');
            if !matches!(flags, "-" | "-f" | "-sn" | "-snf") {
                return None;
            }
            Some(
                json!({"link": {"hard": hard, "overwrite": force, "path": path, "target": target}}),
            )
        }
        ["chown", "-h", owner, "--", path] => {
            let (u, g) = match owner.split_once(':') {
                Some((u, g)) => (u, g),
                None => (*owner, ""),
            };
            let mut o = Map::new();
            if !u.is_empty() {
                o.insert("user".to_owned(), node(u));
            }
            if !g.is_empty() {
                o.insert("group".to_owned(), node(g));
            }
            o.insert("path".to_owned(), json!(path));
            Some(json!({"owner": Value::Object(o)}))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn partitions_and_filesystems_are_told_from_disks() {
        for p in [
            "/dev/sdb1",
            "/dev/vdb12",
            "/dev/xvdf1",
            "/dev/nvme1n1p2",
            "/dev/mmcblk0p1",
            "/dev/disk/by-label/data",
            "/dev/disk/by-partlabel/p.lxroot",
            "/dev/mapper/vg-data",
        ] {
            assert!(is_partition(p), "{p}");
        }
        for d in [
            "/dev/sdb",
            "/dev/vdb",
            "/dev/nvme1n1",
            "/dev/md0",
            "/dev/disk/by-id/nvme-Amazon",
            "/dev/disk/azure/scsi1/lun0",
            "vdb1",
        ] {
            assert!(!is_partition(d), "{d}");
        }
    }

    #[test]
    fn partitions_are_named_as_the_kernel_names_them() {
        assert_eq!(partition_path("/dev/sdb", 1), "/dev/sdb1");
        assert_eq!(partition_path("/dev/nvme1n1", 2), "/dev/nvme1n1p2");
    }

    #[test]
    fn sgdisk_codes_and_guids() {
        assert_eq!(
            gpt_guid("8300").as_deref(),
            Some("0FC63DAF-8483-4772-8E79-3D69D8477DE4")
        );
        assert_eq!(gpt_code("0fc63daf-8483-4772-8e79-3d69d8477de4"), "8300");
        assert_eq!(gpt_guid("83"), None);
    }
}
