//! runcmd and bootcmd ↔ the scripts and the oneshot units that run them, and `systemctl` lines
//! ↔ unit entries.

use serde_json::{Value, json};

use super::files::{ignition_file, volatile};
use super::{ConvertError, refuse, shell, storage};
use crate::document::{CloudConfig, Content, File};

/// Where the install script goes.
pub(super) const SCRIPT_PATH: &str = "/etc/rke2-install.sh";

/// The oneshot unit that runs the script once.
pub(super) const UNIT_NAME: &str = "rke2-install.service";

/// CAPRKE2's install unit, run on the first boot only (cloud-init runs runcmd once per
/// instance).
pub(super) const UNIT: &str = "[Unit]\nDescription=rke2-install\nWants=network-online.target\nAfter=network-online.target network.target\nConditionPathExists=!/etc/cluster-api/bootstrap-success.complete\nConditionFirstBoot=yes\n[Service]\nUser=root\n# To not restart the unit when it exits, as it is expected.\nType=oneshot\nExecStart=/etc/rke2-install.sh\n[Install]\nWantedBy=multi-user.target\n";

/// The runcmd entry that runs the install script a conversion from Ignition keeps as a file.
pub(super) const RUN_SCRIPT: &str = "bash /etc/rke2-install.sh";

/// Where bootcmd's commands go, and the unit that runs them at every boot.
pub(super) const BOOT_SCRIPT_PATH: &str = "/etc/rke2-bootcmd.sh";
pub(super) const BOOT_UNIT_NAME: &str = "rke2-bootcmd.service";
pub(super) const BOOT_UNIT: &str = "[Unit]\nDescription=cloud-config bootcmd: run at every boot, before the network is online\nDefaultDependencies=no\nAfter=local-fs.target\nBefore=network-online.target rke2-install.service\n[Service]\nType=oneshot\nRemainAfterExit=yes\nExecStart=/etc/rke2-bootcmd.sh\n[Install]\nWantedBy=multi-user.target\n";

/// The script file that runs `lines` at `path`, or nothing when the config already writes it
/// with those lines (a conversion from Ignition keeps the script as a file too).
pub(super) fn script_file(
    config: &CloudConfig,
    path: &str,
    lines: &[&str],
    what: &str,
) -> Result<Option<Value>, ConvertError> {
    if let Some(script) = script_lines(&config.files, path) {
        return if script.iter().map(String::as_str).eq(lines.iter().copied()) {
            Ok(None)
        } else {
            Err(refuse(
                "Ignition",
                format!("{what}, because {path} already holds another script"),
            ))
        };
    }
    // cloud-init runs runcmd and bootcmd with sh, carrying on past a failing command.
    let shell = "#!/bin/sh\n";
    let mut script = String::from(shell);
    for line in lines {
        script.push_str(line);
        script.push('\n');
    }
    ignition_file(&File {
        path: path.to_owned(),
        mode: Some(0o700),
        owner: None,
        encoding: None,
        content: Content::Inline(script.into_bytes()),
        append: false,
    })
    .map(Some)
}

/// A `systemctl` line a conversion from Ignition writes, as the unit entry it stands for
/// (`daemon-reload` as an entry without a name).
pub(super) fn systemctl_line(line: &str) -> Option<Value> {
    let words = shell::split(line)?;
    let words: Vec<&str> = words.iter().map(String::as_str).collect();
    let unit = |name: &str| name.contains('.') && !name.starts_with('-') && !name.contains('/');
    match words.as_slice() {
        ["systemctl", "daemon-reload"] => Some(json!({})),
        ["systemctl", "enable", "--now", name] if unit(name) => {
            Some(json!({"enabled": true, "name": name}))
        }
        ["systemctl", "disable", "--now", name] if unit(name) => {
            Some(json!({"enabled": false, "name": name}))
        }
        ["systemctl", "mask", name] | ["systemctl", "mask", "--now", name] if unit(name) => {
            Some(json!({"mask": true, "name": name}))
        }
        _ => None,
    }
}

/// How runcmd's lines divide: the directory and link commands first (`..lead.start`), then
/// `systemctl` lines that are units (`lead`), the commands (`script`), and `systemctl` lines
/// after them that are units (`script.end..`).
pub(super) struct RuncmdSplit {
    pub(super) lead: std::ops::Range<usize>,
    pub(super) script: std::ops::Range<usize>,
}

/// The parts of runcmd a conversion from Ignition writes.
///
/// `systemctl` lines are units when that cannot change what happens: before every other
/// command (the unit exists already), or after them when they are only the install script a
/// conversion keeps as a file. Enabling, at first boot, a unit a command installs only later
/// would do nothing, and one whose file the config writes would start beside the commands, not
/// after them.
pub(super) fn split_runcmd(run: &[&str], mount_points: &[String]) -> RuncmdSplit {
    let storage = leading_storage_commands(run, mount_points);
    let units = |lines: &[&str]| {
        let parsed: Vec<Value> = lines.iter().filter_map(|l| systemctl_line(l)).collect();
        parsed.len() == lines.len()
            && parsed.iter().any(|u| u.get("name").is_some())
            && !parsed
                .iter()
                .any(|u| u["name"] == UNIT_NAME || u["name"] == BOOT_UNIT_NAME)
    };
    let lead_len = run[storage..]
        .iter()
        .take_while(|line| systemctl_line(line).is_some())
        .count();
    let lead_len = if units(&run[storage..storage + lead_len]) {
        lead_len
    } else {
        0
    };
    let start = storage + lead_len;
    let end = run.len();
    let block = run[start..]
        .iter()
        .rev()
        .take_while(|line| systemctl_line(line).is_some())
        .count();
    let tail = &run[end - block..];
    let middle = &run[start..end - block];
    // Not when other commands come first, even for units the config writes: a unit enabled at
    // boot starts beside the install step, not after the commands it may need (a binary they
    // fetch).
    let trailing = block > 0 && units(tail) && (middle.is_empty() || middle == [RUN_SCRIPT]);
    RuncmdSplit {
        lead: storage..start,
        script: start..if trailing { end - block } else { end },
    }
}

/// How many of the first commands are the directory and link commands a conversion from
/// Ignition writes (`mkdir -p` only before the link it makes a parent for).
fn leading_storage_commands(run: &[&str], mount_points: &[String]) -> usize {
    // runcmd runs after cloud-init mounts: a directory or link under a mount point is made in
    // the mounted filesystem, where Ignition would not make it.
    let under_mount = |entry: &Value| {
        ["directory", "link", "owner"].iter().any(|k| {
            entry[*k]["path"]
                .as_str()
                .is_some_and(|p| mount_points.iter().any(|m| storage::under(p, m)))
        })
    };
    // Nor one in /run or /tmp, where the booted system mounts a tmpfs over what Ignition makes.
    let in_volatile = |entry: &Value| {
        ["directory", "link", "owner"]
            .iter()
            .any(|k| entry[*k]["path"].as_str().is_some_and(volatile))
    };
    let read: Vec<Value> = run
        .iter()
        .map_while(|line| storage::read_command(line))
        .take_while(|entry| !under_mount(entry) && !in_volatile(entry))
        .collect();
    let mut taken = 0;
    for (at, entry) in read.iter().enumerate() {
        let fits = if entry.get("owner").is_some() {
            // `chown -h` right after the link it owns.
            at > 0 && read[at - 1]["link"]["path"] == entry["owner"]["path"]
        } else if let Some(parent) = entry.get("parent") {
            read.get(at + 1)
                .and_then(|n| n["link"]["path"].as_str())
                .and_then(|p| p.rsplit_once('/'))
                .is_some_and(|(dir, _)| dir == parent)
        } else {
            true
        };
        if !fits {
            break;
        }
        taken += 1;
    }
    taken
}

/// The Ignition directories and links of the commands [`leading_storage_commands`] counted.
pub(super) fn storage_entries(lines: &[&str]) -> (Vec<Value>, Vec<Value>) {
    let mut directories = Vec::new();
    let mut links: Vec<Value> = Vec::new();
    for entry in lines.iter().filter_map(|line| storage::read_command(line)) {
        if let Some(d) = entry.get("directory") {
            directories.push(d.clone());
        } else if let Some(l) = entry.get("link") {
            links.push(l.clone());
        } else if let (Some(o), Some(link)) = (entry.get("owner"), links.last_mut()) {
            for k in ["user", "group"] {
                if let Some(v) = o.get(k) {
                    link[k] = v.clone();
                }
            }
        }
    }
    (directories, links)
}

/// The command lines of the script a config writes at `path`, if it writes one.
fn script_lines(files: &[File], path: &str) -> Option<Vec<String>> {
    files
        .iter()
        .rev()
        .find(|f| f.path == path)
        .map(|f| f.text().map(|t| command_lines(&t)).unwrap_or_default())
}

/// A script's lines as runcmd or bootcmd entries, as they are: without the interpreter line,
/// the `set` options before the first command (CAPRKE2's Ignition script sets `-euo pipefail`
/// where its cloud-config runs the same commands as runcmd), and, outside here-documents,
/// blank lines.
fn command_lines(script: &str) -> Vec<String> {
    let heredoc = script.contains("<<");
    let mut started = false;
    let mut out = Vec::new();
    for (n, line) in script.lines().enumerate() {
        if n == 0 && line.starts_with("#!") {
            continue;
        }
        let blank = line.trim().is_empty();
        if !started && (blank || line.trim_start().starts_with("set -")) {
            continue;
        }
        if blank && !heredoc {
            continue;
        }
        started = true;
        out.push(line.to_owned());
    }
    // Blank lines after the last command are the file's end, not the script's.
    while out.last().is_some_and(|l| l.trim().is_empty()) {
        out.pop();
    }
    out
}

/// The text of the file a config writes at `path`.
pub(super) fn script_text(files: &[File], path: &str) -> Option<String> {
    files
        .iter()
        .rev()
        .find(|f| f.path == path)
        .and_then(|f| f.text().map(|t| t.into_owned()))
}

/// Whether a script is for sh or bash (what runcmd's lines run under).
fn shell_script(script: &str) -> bool {
    match script.lines().next() {
        Some(first) if first.starts_with("#!") => {
            let interpreter = first[2..].trim();
            let mut words = interpreter.split_whitespace();
            let program = words.next().unwrap_or("");
            let program = if program.ends_with("/env") {
                words.next().unwrap_or("")
            } else {
                program
            };
            matches!(program.rsplit('/').next(), Some("sh" | "bash" | "dash"))
        }
        _ => true,
    }
}

/// A unit file or drop-in as a file cloud-init writes.
pub(super) fn unit_file(path: String, contents: &str) -> File {
    File {
        path,
        mode: Some(0o644),
        owner: None,
        encoding: None,
        content: Content::Inline(contents.as_bytes().to_vec()),
        append: false,
    }
}

/// The program a oneshot unit runs and its command lines, when the unit says no more than
/// "run this sh or bash script once as root" (CAPRKE2's install unit, or this conversion's) and
/// the script is a file of the config.
pub(super) fn oneshot_script(unit: &str, files: &[File]) -> Option<(String, Vec<String>)> {
    let mut program = None;
    let mut oneshot = false;
    let mut section = "";
    for line in unit.lines().map(str::trim) {
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if line.starts_with('[') {
            section = line;
            continue;
        }
        let (k, v) = line.split_once('=')?;
        match (section, k.trim(), v.trim()) {
            ("[Unit]", "Description", _)
            | ("[Unit]", "Wants" | "After", _)
            | ("[Unit]", "Before", "network-online.target rke2-install.service")
            | ("[Unit]", "DefaultDependencies", "no")
            | ("[Unit]", "ConditionPathExists", "!/etc/cluster-api/bootstrap-success.complete")
            | ("[Unit]", "ConditionFirstBoot", "yes")
            | ("[Service]", "User", "root")
            | ("[Service]", "RemainAfterExit", "yes")
            | ("[Install]", "WantedBy", "multi-user.target") => {}
            ("[Service]", "Type", "oneshot") => oneshot = true,
            ("[Service]", "ExecStart", v)
                if program.is_none() && !v.contains(char::is_whitespace) =>
            {
                program = Some(v.to_owned());
            }
            _ => return None,
        }
    }
    let program = program.filter(|_| oneshot)?;
    let text = script_text(files, &program)?;
    shell_script(&text).then(|| (program, command_lines(&text)))
}
