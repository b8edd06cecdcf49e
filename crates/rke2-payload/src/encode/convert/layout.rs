//! What the storage conversions of both directions share: the names of devices and
//! partitions, the filesystems Ignition makes, and what each direction gives.

use serde_json::Value;

pub(super) const TO_IGNITION: &str = "Ignition";

/// Filesystems Ignition 3.3 can make.
pub(super) const FORMATS: [&str; 5] = ["ext4", "btrfs", "xfs", "vfat", "swap"];

/// What cloud-config's storage modules become in Ignition.
#[derive(Default)]
pub(super) struct ToIgnition {
    pub disks: Vec<Value>,
    pub filesystems: Vec<Value>,
    pub units: Vec<Value>,
    /// The mount points of `mounts`.
    pub mount_points: Vec<String>,
}

/// Whether `path` is below the directory `dir` (a mount point).
pub(super) fn under(path: &str, dir: &str) -> bool {
    path.strip_prefix(dir.trim_end_matches('/'))
        .is_some_and(|rest| rest.starts_with('/'))
}

/// cloud-init's `<device>.<n>` (partition n of the device): the device, and n when it is one.
pub(super) fn dotted(name: &str) -> (&str, Option<&str>) {
    match name.rsplit_once('.') {
        Some((dev, n))
            if !dev.is_empty() && !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) =>
        {
            (dev, Some(n))
        }
        _ => (name, None),
    }
}

/// A partition's device path: `/dev/sdb` + 1 is `/dev/sdb1`, `/dev/nvme1n1` + 1 is
/// `/dev/nvme1n1p1` (the kernel's names), a udev link + 1 the link with `-part1`.
pub(super) fn partition_path(device: &str, number: u64) -> String {
    if device.starts_with("/dev/disk/") {
        // udev's links to a partition: `/dev/disk/by-id/virtio-data-part1`,
        // `/dev/disk/azure/scsi1/lun0-part1`.
        format!("{device}-part{number}")
    } else if device.ends_with(|c: char| c.is_ascii_digit()) {
        format!("{device}p{number}")
    } else {
        format!("{device}{number}")
    }
}

/// Whether a device path names a partition or a filesystem (not a disk that may hold a
/// partition table): a kernel partition name, a udev link by label, partition label or UUID,
/// a device-mapper volume.
pub(super) fn is_partition(device: &str) -> bool {
    let Some(name) = device.strip_prefix("/dev/") else {
        return false;
    };
    if [
        "disk/by-label/",
        "disk/by-partlabel/",
        "disk/by-partuuid/",
        "disk/by-uuid/",
        "mapper/",
        "disk/by-id/dm-",
    ]
    .iter()
    .any(|p| name.starts_with(p))
    {
        return true;
    }
    // The kernel's partition names: sdb1, vdb1, xvdf1, hdb1 (a disk's letters, then the
    // number); nvme0n1p1, mmcblk0p1, md0p1, loop0p1 (a disk ending in a digit, `p`, the number).
    let Some(disk) = name
        .strip_suffix(|c: char| c.is_ascii_digit())
        .map(|n| n.trim_end_matches(|c: char| c.is_ascii_digit()))
    else {
        return false;
    };
    let lettered = ["sd", "vd", "xvd", "hd"].iter().any(|p| {
        disk.strip_prefix(p)
            .is_some_and(|l| !l.is_empty() && l.bytes().all(|b| b.is_ascii_lowercase()))
    });
    let numbered = disk.strip_suffix('p').is_some_and(|d| {
        d.ends_with(|c: char| c.is_ascii_digit())
            && ["nvme", "mmcblk", "md", "loop"]
                .iter()
                .any(|p| d.starts_with(p))
    });
    lettered || numbered
}

/// What Ignition's storage becomes in cloud-config.
#[derive(Default)]
pub(super) struct ToCloudConfig {
    /// The `disk_setup:` and `fs_setup:` blocks (empty when there are none).
    pub blocks: String,
    /// `mounts` entries: device, path, type, options, dump, pass.
    pub mounts: Vec<[String; 6]>,
    /// Commands that make directories and links, run first.
    pub commands: Vec<String>,
    /// The `.mount` units a `mounts` entry stands for.
    pub mount_units: Vec<String>,
    /// Every path a filesystem is mounted on (by a `mounts` entry, or by a unit of its own).
    pub mount_points: Vec<String>,
}
