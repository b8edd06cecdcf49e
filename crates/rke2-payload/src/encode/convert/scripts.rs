//! runcmd and bootcmd ↔ the scripts and the oneshot units that run them, and `systemctl` lines
//! ↔ unit entries.

use serde_json::{Value, json};

use super::files::{ignition_file, volatile};
use super::{CloudConfigDraft, ConvertError, IgnitionDraft, layout, refuse, shell, storage};
use crate::document::ignition::Unit;
use crate::document::{CloudConfig, Content, File};

/// Where the install script goes.
const SCRIPT_PATH: &str = "/etc/rke2-install.sh";

/// The oneshot unit that runs the script once.
const UNIT_NAME: &str = "rke2-install.service";

/// CAPRKE2's install unit, run on the first boot only (cloud-init runs runcmd once per
/// instance).
const UNIT: &str = "[Unit]\nDescription=rke2-install\nWants=network-online.target\nAfter=network-online.target network.target\nConditionPathExists=!/etc/cluster-api/bootstrap-success.complete\nConditionFirstBoot=yes\n[Service]\nUser=root\n# To not restart the unit when it exits, as it is expected.\nType=oneshot\nExecStart=/etc/rke2-install.sh\n[Install]\nWantedBy=multi-user.target\n";

/// The runcmd entry that runs the install script a conversion from Ignition keeps as a file.
const RUN_SCRIPT: &str = "bash /etc/rke2-install.sh";

/// Where bootcmd's commands go, and the unit that runs them at every boot.
const BOOT_SCRIPT_PATH: &str = "/etc/rke2-bootcmd.sh";
pub(super) const BOOT_UNIT_NAME: &str = "rke2-bootcmd.service";
const BOOT_UNIT: &str = "[Unit]\nDescription=cloud-config bootcmd: run at every boot, before the network is online\nDefaultDependencies=no\nAfter=local-fs.target\nBefore=network-online.target rke2-install.service\n[Service]\nType=oneshot\nRemainAfterExit=yes\nExecStart=/etc/rke2-bootcmd.sh\n[Install]\nWantedBy=multi-user.target\n";

/// A command that uses cloud-init itself, which Ignition's systems do not have (named once).
pub(super) fn refuse_cloud_init(d: &mut IgnitionDraft<'_>) {
    for c in &d.config.commands {
        if c.line.contains("cloud-init-per")
            || (c.origin == "bootcmd" && c.line.contains("INSTANCE_ID"))
        {
            d.refused.push(format!(
                "{}: a command that uses cloud-init itself (cloud-init-per, $INSTANCE_ID), which Ignition's systems do not have",
                c.origin
            ));
            break;
        }
    }
}

/// bootcmd as `/etc/rke2-bootcmd.sh`, run at every boot by `rke2-bootcmd.service`.
pub(super) fn bootcmd_to_ignition(d: &mut IgnitionDraft<'_>) -> Result<(), ConvertError> {
    let config = d.config;
    let boot: Vec<&str> = config
        .commands
        .iter()
        .filter(|c| c.origin == "bootcmd")
        .map(|c| c.line.as_str())
        .collect();
    if !boot.is_empty() {
        d.files.extend(
            keep!(
                d.refused,
                script_file(config, BOOT_SCRIPT_PATH, &boot, "bootcmd")
            )
            .flatten(),
        );
        d.units
            .push(json!({"contents": BOOT_UNIT, "enabled": true, "name": BOOT_UNIT_NAME}));
    }
    Ok(())
}

/// runcmd as the directories and links its first commands make, the install script
/// `rke2-install.service` runs, and the units its `systemctl` lines stand for.
pub(super) fn runcmd_to_ignition(d: &mut IgnitionDraft<'_>) -> Result<(), ConvertError> {
    let run = run_lines(d.config);
    let split = split_runcmd(&run, &d.storage.mount_points);
    (d.directories, d.links) = storage_entries(&run[..split.lead.start]);
    let systemctl_lines: Vec<&str> = run[split.lead.clone()]
        .iter()
        .chain(&run[split.script.end..])
        .copied()
        .collect();
    install_script(d, &run[split.script.clone()])?;
    systemctl_units(d, &systemctl_lines);
    Ok(())
}

/// runcmd's lines. The lines of the install script a runcmd entry runs (`bash
/// /etc/rke2-install.sh`) stand for that entry: the script is the file, run by the unit.
fn run_lines(config: &CloudConfig) -> Vec<&str> {
    let mut run: Vec<&str> = Vec::new();
    for c in config.commands.iter().filter(|c| c.origin != "bootcmd") {
        if c.origin == SCRIPT_PATH {
            if run.last() != Some(&RUN_SCRIPT) {
                run.push(RUN_SCRIPT);
            }
        } else {
            run.push(c.line.as_str());
        }
    }
    run
}

/// The install script of runcmd's commands (`middle`, between the `systemctl` lines that are
/// units) and the unit that runs it.
fn install_script(d: &mut IgnitionDraft<'_>, middle: &[&str]) -> Result<(), ConvertError> {
    if middle == [RUN_SCRIPT] {
        d.units
            .push(json!({"contents": UNIT, "enabled": true, "name": UNIT_NAME}));
    } else if middle.contains(&RUN_SCRIPT) {
        d.refused.push(format!(
            "runcmd: commands besides `{RUN_SCRIPT}`, which runs the install script a conversion from Ignition keeps as a file"
        ));
    } else if !middle.is_empty() {
        d.files.extend(
            keep!(
                d.refused,
                script_file(d.config, SCRIPT_PATH, middle, "runcmd")
            )
            .flatten(),
        );
        d.units
            .push(json!({"contents": UNIT, "enabled": true, "name": UNIT_NAME}));
    }
    Ok(())
}

/// The unit entries `systemctl` lines stand for.
fn systemctl_units(d: &mut IgnitionDraft<'_>, lines: &[&str]) {
    // A unit named twice ends as the last line leaves it, as it would under cloud-init.
    let mut named: Vec<Value> = Vec::new();
    for unit in lines.iter().filter_map(|line| systemctl_line(line)) {
        let Some(name) = unit["name"].as_str() else {
            continue;
        };
        match named.iter_mut().find(|u| u["name"] == name) {
            Some(entry) => {
                for (k, v) in unit.as_object().into_iter().flatten() {
                    entry[k.as_str()] = v.clone();
                }
            }
            None => named.push(unit.clone()),
        }
    }
    for unit in &named {
        // systemctl refuses to enable a masked unit.
        if unit["mask"] == true && unit["enabled"] == true {
            d.refused.push(format!(
                "runcmd: systemctl enables the masked unit {}",
                crate::codec::text::terminal_safe(unit["name"].as_str().unwrap_or(""))
            ));
        }
    }
    d.units.extend(named);
}

/// `systemd.units` as unit files and drop-ins with `systemctl` lines; the oneshot units that
/// run the install script and bootcmd's script as runcmd and bootcmd.
pub(super) fn units_to_cloud_config(d: &mut CloudConfigDraft<'_>) {
    let ignition = d.ignition;
    for unit in &ignition.units {
        if d.storage.mount_units.contains(&unit.name) {
            continue;
        }
        if !file_names(unit) {
            d.refused.push(format!(
                "systemd.units[{}] (a unit or drop-in name that is not a file name)",
                crate::codec::text::terminal_safe(&unit.name)
            ));
            continue;
        }
        let dir = format!("/etc/systemd/system/{}", unit.name);
        dropins_to_cloud_config(d, unit, &dir);
        if runs_script(d, unit) {
            continue;
        }
        if unit.name == UNIT_NAME || unit.name == BOOT_UNIT_NAME {
            // These names are the conversion's: back, runcmd and bootcmd become them again.
            d.refused.push(format!(
                "systemd.units[{}] (not the oneshot that runs {} alone, with no drop-ins: this conversion reads runcmd and bootcmd into units of these names)",
                crate::codec::text::terminal_safe(&unit.name),
                if unit.name == UNIT_NAME { SCRIPT_PATH } else { BOOT_SCRIPT_PATH }
            ));
            continue;
        }
        if let Some(text) = &unit.contents {
            d.unit_files.push(unit_file(dir, text));
        }
        d.systemctl.extend(systemctl_command(unit));
    }
    // `daemon-reload` before enabling units whose files were just written.
    if !d.unit_files.is_empty() && !d.systemctl.is_empty() {
        d.systemctl.insert(0, "systemctl daemon-reload".to_owned());
    }
}

/// Whether a unit's name is a file name in /etc/systemd/system, and so are its drop-ins'.
fn file_names(unit: &Unit) -> bool {
    let file_name = |n: &str| {
        !n.is_empty()
            && n != "."
            && n != ".."
            && !n.contains('/')
            && !n.chars().any(char::is_control)
    };
    file_name(&unit.name) && unit.dropins.iter().all(|(d, _)| file_name(d))
}

/// A unit's drop-ins as files in `dir.d`.
fn dropins_to_cloud_config(d: &mut CloudConfigDraft<'_>, unit: &Unit, dir: &str) {
    for (name, contents) in &unit.dropins {
        let Some(contents) = contents else {
            d.refused.push(format!(
                "systemd.units[{}].dropins[{}] without contents",
                crate::codec::text::terminal_safe(&unit.name),
                crate::codec::text::terminal_safe(name)
            ));
            continue;
        };
        d.unit_files
            .push(unit_file(format!("{dir}.d/{name}"), contents));
    }
}

/// Whether `unit` is the oneshot that runs the install script, or bootcmd's script, alone: its
/// script becomes the runcmd line that runs it, or bootcmd's lines.
fn runs_script(d: &mut CloudConfigDraft<'_>, unit: &Unit) -> bool {
    let files = &d.ignition.files;
    // The install unit runs once (a condition stops it later), the bootcmd one every boot.
    let once = unit.name == UNIT_NAME;
    let ran = |path: &str| {
        unit.contents
            .as_deref()
            .filter(|_| {
                unit.enabled == Some(true) && unit.mask != Some(true) && unit.dropins.is_empty()
            })
            .filter(|text| text.contains("\nCondition") == once)
            .and_then(|text| oneshot_script(text, files))
            .filter(|(program, _)| program == path)
            .map(|(_, lines)| lines)
    };
    if unit.name == UNIT_NAME && ran(SCRIPT_PATH).is_some() {
        // The script stays the file it is and runcmd runs it with its shell, so its
        // interpreter and `set` options hold.
        let bash = script_text(files, SCRIPT_PATH).is_some_and(|t| {
            t.lines()
                .next()
                .is_some_and(|l| l.starts_with("#!") && l.contains("bash"))
        });
        d.script.push(if bash {
            RUN_SCRIPT.to_owned()
        } else {
            format!("sh {SCRIPT_PATH}")
        });
        return true;
    }
    // bootcmd's lines run under sh.
    let sh = !script_text(files, BOOT_SCRIPT_PATH)
        .is_some_and(|t| t.lines().next().is_some_and(|l| l.contains("bash")));
    if unit.name == BOOT_UNIT_NAME
        && sh
        && let Some(lines) = ran(BOOT_SCRIPT_PATH)
    {
        d.boot.extend(lines);
        return true;
    }
    false
}

/// The `systemctl` line of a unit's `mask` or `enabled`.
fn systemctl_command(unit: &Unit) -> Option<String> {
    if unit.mask == Some(true) {
        // `--now`: runcmd runs after the unit may have started; under Ignition it never ran.
        Some(format!("systemctl mask --now {}", shell::quote(&unit.name)))
    } else if unit.enabled == Some(true) {
        Some(format!(
            "systemctl enable --now {}",
            shell::quote(&unit.name)
        ))
    } else if unit.enabled == Some(false) {
        Some(format!(
            "systemctl disable --now {}",
            shell::quote(&unit.name)
        ))
    } else {
        None
    }
}

/// The script file that runs `lines` at `path`, or nothing when the config already writes it
/// with those lines (a conversion from Ignition keeps the script as a file too).
fn script_file(
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
fn systemctl_line(line: &str) -> Option<Value> {
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
struct RuncmdSplit {
    lead: std::ops::Range<usize>,
    script: std::ops::Range<usize>,
}

/// The parts of runcmd a conversion from Ignition writes.
///
/// `systemctl` lines are units when that cannot change what happens: before every other
/// command (the unit exists already), or after them when they are only the install script a
/// conversion keeps as a file. Enabling, at first boot, a unit a command installs only later
/// would do nothing, and one whose file the config writes would start beside the commands, not
/// after them.
fn split_runcmd(run: &[&str], mount_points: &[String]) -> RuncmdSplit {
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
                .is_some_and(|p| mount_points.iter().any(|m| layout::under(p, m)))
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
fn storage_entries(lines: &[&str]) -> (Vec<Value>, Vec<Value>) {
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
fn script_text(files: &[File], path: &str) -> Option<String> {
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
fn unit_file(path: String, contents: &str) -> File {
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
fn oneshot_script(unit: &str, files: &[File]) -> Option<(String, Vec<String>)> {
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
