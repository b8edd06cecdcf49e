//! A release archive made by `scripts/release-archive.sh`, and what takes it: the krew manifest
//! `scripts/krew-manifest.py` writes (checked by krew-index's own rules), the container image's
//! context (`scripts/image-context.sh`) and cargo-binstall's metadata.
//!
//! The rules are krew v0.4.5's, the version krew-index's CI runs (`validate-krew-manifest`):
//! internal/index/validation/validate.go, cmd/validate-krew-manifest/main.go, and the installer
//! (internal/download/downloader.go, internal/installation/move.go and install.go).

use std::collections::BTreeMap;
use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::process::Command as Process;

use serde_json::Value;

use crate::common::*;

const VERSION: &str = env!("CARGO_PKG_VERSION");

fn root() -> PathBuf {
    testdata().join("..")
}

/// The os/arch pairs krew supports (validate-krew-manifest's main.go:234-248).
const KREW_PAIRS: [(&str, &str); 11] = [
    ("windows", "386"),
    ("windows", "amd64"),
    ("windows", "arm64"),
    ("linux", "386"),
    ("linux", "amd64"),
    ("linux", "arm"),
    ("linux", "arm64"),
    ("linux", "ppc64le"),
    ("darwin", "386"),
    ("darwin", "amd64"),
    ("darwin", "arm64"),
];

/// Windows' reserved file names, which krew refuses as plugin names.
const RESERVED: [&str; 22] = [
    "CON", "PRN", "AUX", "NUL", "COM1", "COM2", "COM3", "COM4", "COM5", "COM6", "COM7", "COM8",
    "COM9", "LPT1", "LPT2", "LPT3", "LPT4", "LPT5", "LPT6", "LPT7", "LPT8", "LPT9",
];

/// `filepath.Clean` for the paths a manifest holds (no leading `/`).
fn clean(path: &str) -> String {
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." if parts.last().is_some_and(|p| *p != "..") => {
                parts.pop();
            }
            other => parts.push(other),
        }
    }
    if parts.is_empty() {
        ".".to_owned()
    } else {
        parts.join("/")
    }
}

/// Whether `s` is `v` and a semantic version (apimachinery's ParseSemantic: pre-release and
/// build metadata allowed).
fn krew_version(s: &str) -> bool {
    let Some(rest) = s.strip_prefix('v') else {
        return false;
    };
    let (rest, build) = rest.split_once('+').unwrap_or((rest, ""));
    let (core, pre) = rest.split_once('-').unwrap_or((rest, ""));
    let numbers: Vec<&str> = core.split('.').collect();
    let number = |n: &&str| {
        !n.is_empty()
            && n.bytes().all(|b| b.is_ascii_digit())
            && (n.len() == 1 || !n.starts_with('0'))
    };
    let ident =
        |i: &str| !i.is_empty() && i.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-');
    numbers.len() == 3
        && numbers.iter().all(number)
        && (pre.is_empty() || pre.split('.').all(ident))
        && (build.is_empty() || build.split('.').all(ident))
}

/// The problems krew-index's validation finds in a plugin manifest read from `file_stem.yaml`;
/// empty when it passes.
fn krew_problems(manifest: &Value, file_stem: &str) -> Vec<String> {
    let mut problems = Vec::new();
    let mut problem = |p: String| problems.push(p);
    if manifest["apiVersion"] != "krew.googlecontainertools.github.com/v1alpha2" {
        problem(format!("apiVersion {}", manifest["apiVersion"]));
    }
    if manifest["kind"] != "Plugin" {
        problem(format!("kind {}", manifest["kind"]));
    }
    let name = manifest["metadata"]["name"].as_str().unwrap_or("");
    if name.is_empty()
        || !name
            .chars()
            .all(|c| c.is_alphanumeric() || c == '_' || c == '-')
    {
        problem(format!("name {name:?} does not match ^[\\w-]+$"));
    }
    if RESERVED.iter().any(|r| r.eq_ignore_ascii_case(name)) {
        problem(format!("name {name:?} is a reserved Windows name"));
    }
    if name != file_stem {
        problem(format!(
            "name {name:?} is not the file's name {file_stem:?}"
        ));
    }
    let spec = &manifest["spec"];
    let short = spec["shortDescription"].as_str().unwrap_or("");
    if short.is_empty() || short.contains(['\r', '\n']) {
        problem(format!("shortDescription {short:?}"));
    }
    // Not enforced by the validator, but `kubectl krew search` cuts at 50 bytes.
    if short.len() > 50 {
        problem(format!(
            "shortDescription is {} bytes, over the 50 krew search shows",
            short.len()
        ));
    }
    let version = spec["version"].as_str().unwrap_or("");
    if !krew_version(version) {
        problem(format!("version {version:?} is not v<semver>"));
    }
    let platforms = spec["platforms"].as_array().cloned().unwrap_or_default();
    if platforms.is_empty() {
        problem("no platforms".to_owned());
    }
    let mut selected: BTreeMap<(&str, &str), Vec<usize>> = BTreeMap::new();
    for (i, p) in platforms.iter().enumerate() {
        if p["uri"].as_str().is_none_or(str::is_empty) {
            problem(format!("platform {i}: no uri"));
        }
        let sha = p["sha256"].as_str().unwrap_or("");
        if sha.len() != 64 || !sha.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')) {
            problem(format!(
                "platform {i}: sha256 {sha:?} is not ^[a-f0-9]{{64}}$"
            ));
        }
        if p["bin"].as_str().is_none_or(str::is_empty) {
            problem(format!("platform {i}: no bin"));
        }
        if let Some(files) = p.get("files") {
            let files = files.as_array().cloned().unwrap_or_default();
            if files.is_empty() {
                problem(format!("platform {i}: files is given but empty"));
            }
            for f in &files {
                let (from, to) = (
                    f["from"].as_str().unwrap_or(""),
                    f["to"].as_str().unwrap_or(""),
                );
                if from.is_empty() || to.is_empty() {
                    problem(format!("platform {i}: a file without from or to: {f}"));
                }
                if clean(to) != to {
                    problem(format!("platform {i}: to {to:?} is not clean"));
                }
            }
        }
        let selector = &p["selector"];
        let Some(selector) = selector.as_object().filter(|s| !s.is_empty()) else {
            problem(format!("platform {i}: no selector"));
            continue;
        };
        let labels = selector
            .get("matchLabels")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default();
        if selector.keys().any(|k| k != "matchLabels") || labels.is_empty() {
            problem(format!(
                "platform {i}: selector is not a non-empty matchLabels"
            ));
        }
        if labels.keys().any(|k| k != "os" && k != "arch") {
            problem(format!(
                "platform {i}: selector keys other than os and arch"
            ));
        }
        let mut any = false;
        for (os, arch) in KREW_PAIRS {
            let matches = labels.get("os").is_none_or(|v| v == os)
                && labels.get("arch").is_none_or(|v| v == arch);
            if matches {
                any = true;
                selected.entry((os, arch)).or_default().push(i);
            }
        }
        if !any {
            problem(format!("platform {i}: selects no supported os/arch"));
        }
    }
    for ((os, arch), by) in selected {
        if by.len() > 1 {
            problem(format!(
                "platforms {by:?} have overlapping selectors that select {os}/{arch}"
            ));
        }
    }
    problems
}

/// One entry of a tar archive as Go's archive/tar (krew's reader) reports it: PAX and GNU long
/// name records are read into the next entry, not reported.
#[derive(Debug)]
struct TarEntry {
    name: String,
    kind: u8,
    mode: u32,
    data: Vec<u8>,
}

fn octal(field: &[u8]) -> u64 {
    let text = String::from_utf8_lossy(field);
    let text = text.trim_matches(|c: char| c == '\0' || c == ' ');
    u64::from_str_radix(text, 8).unwrap_or_else(|_| panic!("not octal: {text:?}"))
}

fn field(bytes: &[u8]) -> String {
    let end = bytes.iter().position(|b| *b == 0).unwrap_or(bytes.len());
    String::from_utf8_lossy(&bytes[..end]).into_owned()
}

/// The entries of a `.tar.gz`.
fn tar_gz_entries(path: &Path) -> Vec<TarEntry> {
    let mut tar = Vec::new();
    flate2::read::GzDecoder::new(std::fs::File::open(path).expect("archive"))
        .read_to_end(&mut tar)
        .expect("gzip");
    let mut entries = Vec::new();
    let mut at = 0;
    let mut long_name: Option<String> = None;
    while at + 512 <= tar.len() {
        let header = &tar[at..at + 512];
        if header.iter().all(|b| *b == 0) {
            break;
        }
        let size = octal(&header[124..136]) as usize;
        let kind = header[156];
        let data = tar[at + 512..at + 512 + size].to_vec();
        at += 512 + size.div_ceil(512) * 512;
        match kind {
            b'L' => long_name = Some(field(&data)),
            b'x' => {
                for record in String::from_utf8_lossy(&data).lines() {
                    if let Some((_, kv)) = record.split_once(' ')
                        && let Some(path) = kv.strip_prefix("path=")
                    {
                        long_name = Some(path.to_owned());
                    }
                }
            }
            b'g' => {}
            _ => {
                let mut name = field(&header[0..100]);
                if &header[257..262] == b"ustar" {
                    let prefix = field(&header[345..500]);
                    if !prefix.is_empty() {
                        name = format!("{prefix}/{name}");
                    }
                }
                entries.push(TarEntry {
                    name: long_name.take().unwrap_or(name),
                    kind,
                    mode: octal(&header[100..108]) as u32,
                    data,
                });
            }
        }
    }
    entries
}

/// `scripts/release-archive.sh TARGET` packaging this build's binary into `dist` (without its
/// debug information when `strip` is installed: gzip then takes seconds, not a minute).
fn release_archive(target: &str, dist: &Path) -> PathBuf {
    let binary = dist.with_file_name("rke2-payload");
    std::fs::copy(assert_cmd::cargo::cargo_bin("rke2-payload"), &binary).expect("copy");
    let _ = Process::new("strip").arg(&binary).status();
    let out = Process::new("bash")
        .arg(root().join("scripts/release-archive.sh"))
        .arg(target)
        .env("RKE2_PAYLOAD_BIN", &binary)
        .env("DIST_DIR", dist)
        .output()
        .expect("bash runs the script");
    assert!(
        out.status.success(),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    dist.join(format!("rke2-payload-v{VERSION}-{target}.tar.gz"))
}

/// The targets of the krew platforms, as the manifest names their archives.
const KREW_TARGETS: [&str; 5] = [
    "x86_64-unknown-linux-musl",
    "aarch64-unknown-linux-musl",
    "x86_64-apple-darwin",
    "aarch64-apple-darwin",
    "x86_64-pc-windows-msvc",
];

#[test]
fn the_krew_manifest_passes_krew_s_checks_on_an_archive_the_script_made() {
    let Some(python) = validator("python3") else {
        eprintln!("note: skipped: no python3");
        return;
    };
    // A real archive, from the release script; its binary is this test build (the dist profile
    // takes minutes), under the linux/amd64 platform's name.
    let folder = scratch();
    let dist = folder.path().join("dist");
    let target = "x86_64-unknown-linux-musl";
    let archive = release_archive(target, &dist);
    let bytes = std::fs::read(&archive).expect("archive");
    let sum = sha256_hex(&bytes);
    let own = std::fs::read_to_string(
        dist.join(format!("rke2-payload-v{VERSION}-{target}.tar.gz.sha256")),
    )
    .expect("the .sha256");
    assert!(own.starts_with(&format!("{sum}  ")), "{own}");

    // Its checksum, and made-up ones (upper case, as some tools write them) for the others.
    let mut sums = String::new();
    for (n, t) in KREW_TARGETS.iter().enumerate() {
        let ext = if t.contains("windows") {
            "zip"
        } else {
            "tar.gz"
        };
        let line_sum = if *t == target {
            sum.clone()
        } else {
            format!("{:064X}", 0xABCD00 + n)
        };
        sums.push_str(&format!("{line_sum}  rke2-payload-v{VERSION}-{t}.{ext}\n"));
    }
    std::fs::write(dist.join("SHA256SUMS"), sums).expect("write");
    let out = Process::new(python)
        .arg(root().join("scripts/krew-manifest.py"))
        .args(["--version", VERSION, "--checksums"])
        .arg(dist.join("SHA256SUMS"))
        .args([
            "--base-url",
            &format!("https://github.com/o/rke2-payload/releases/download/v{VERSION}"),
        ])
        .output()
        .expect("krew-manifest.py runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    let manifest: Value = serde_saphyr::from_str(&text).expect("the manifest is YAML");
    let problems = krew_problems(&manifest, "rke2-payload");
    assert!(problems.is_empty(), "{problems:#?}\n{text}");

    // The checks themselves catch what krew-index refuses.
    let mut broken = manifest.clone();
    broken["spec"]["shortDescription"] =
        "Decode, inspect, size and lint CAPRKE2 bootstrap Secrets".into();
    broken["spec"]["version"] = VERSION.into();
    broken["spec"]["platforms"][0]["sha256"] = format!("{:064X}", 0xABC).into();
    broken["spec"]["platforms"][0]["files"][0]["to"] = "./".into();
    broken["spec"]["platforms"][1]["selector"]["matchLabels"]["arch"] = "amd64".into();
    broken["spec"]["platforms"][2]["selector"]["matchLabels"]["distro"] = "x".into();
    let problems = krew_problems(&broken, "rke2-payload");
    assert_eq!(problems.len(), 6, "{problems:#?}");
    assert_eq!(krew_problems(&manifest, "other").len(), 1);

    // The archive as krew's installer reads it (downloader.go): directories and regular files
    // only (a symlink or a hard link stops the install), no `..`, nothing absolute.
    let entries = tar_gz_entries(&archive);
    let folder_name = format!("rke2-payload-v{VERSION}-{target}");
    for e in &entries {
        assert!(
            matches!(e.kind, b'0' | b'\0' | b'5'),
            "{}: tar type {:?}, which krew refuses",
            e.name,
            e.kind as char
        );
        assert!(
            !e.name.contains("..") && !e.name.starts_with(['/', '\\']),
            "{}",
            e.name
        );
        assert!(e.name.starts_with(&folder_name), "{}", e.name);
    }
    // One binary (the other executable is kubectl's completion script for the plugin).
    let mut executables: Vec<&str> = entries
        .iter()
        .filter(|e| e.mode & 0o111 != 0 && e.kind != b'5')
        .map(|e| e.name.as_str())
        .collect();
    executables.sort();
    assert_eq!(
        executables,
        [
            format!("{folder_name}/kubectl_complete-rke2_payload"),
            format!("{folder_name}/rke2-payload")
        ],
    );
    let binaries = entries
        .iter()
        .filter(|e| e.data.starts_with(b"\x7fELF"))
        .count();
    assert_eq!(binaries, 1);

    // krew's install of the linux/amd64 platform: each `files` entry moved into the plugin's
    // folder (`to` a folder: the file keeps its base name), then `bin` linked.
    let platform = manifest["spec"]["platforms"]
        .as_array()
        .expect("platforms")
        .iter()
        .find(|p| {
            p["selector"]["matchLabels"]["os"] == "linux"
                && p["selector"]["matchLabels"]["arch"] == "amd64"
        })
        .expect("linux/amd64");
    assert_eq!(
        platform["uri"],
        format!(
            "https://github.com/o/rke2-payload/releases/download/v{VERSION}/{folder_name}.tar.gz"
        )
    );
    assert_eq!(platform["sha256"], sum.as_str());
    let mut installed: BTreeMap<String, &TarEntry> = BTreeMap::new();
    for f in platform["files"].as_array().expect("files") {
        let (from, to) = (
            f["from"].as_str().expect("from"),
            f["to"].as_str().expect("to"),
        );
        let found = entries
            .iter()
            .find(|e| e.name == from)
            .unwrap_or_else(|| panic!("no file in the plugin archive matched {from}"));
        assert_eq!(to, ".", "{from}");
        let base = from.rsplit('/').next().expect("base name");
        installed.insert(base.to_owned(), found);
    }
    let bin = platform["bin"].as_str().expect("bin");
    let program = installed
        .get(bin)
        .unwrap_or_else(|| panic!("bin {bin} is not installed"));
    assert!(program.mode & 0o111 != 0, "{bin} is not executable");
    // validate-krew-manifest's licence check (main.go:167-206).
    let licence_names = [
        "license",
        "license.txt",
        "license.md",
        "licenses",
        "licenses.txt",
        "licenses.md",
        "copying",
        "copying.txt",
    ];
    let licence = installed
        .iter()
        .find(|(name, _)| licence_names.contains(&name.to_lowercase().as_str()))
        .map(|(_, e)| String::from_utf8_lossy(&e.data).into_owned())
        .expect("a LICENSE (or alike) file is installed");
    assert!(licence.contains("MIT OR Apache-2.0"));
    assert!(licence.contains(&std::fs::read_to_string(root().join("LICENSE-MIT")).expect("MIT")));
    assert!(
        licence.contains(&std::fs::read_to_string(root().join("LICENSE-APACHE")).expect("Apache"))
    );

    // The program krew links runs as the plugin: kubectl execs the link, named
    // kubectl-rke2_payload, and the help says so.
    let plugin_dir = folder.path().join("krew");
    std::fs::create_dir_all(&plugin_dir).expect("dir");
    let plugin = plugin_dir.join("kubectl-rke2_payload");
    std::fs::write(&plugin, &program.data).expect("write");
    std::fs::set_permissions(&plugin, std::os::unix::fs::PermissionsExt::from_mode(0o755))
        .expect("chmod");
    let out = Process::new(&plugin).arg("--help").output().expect("runs");
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("Usage: kubectl rke2-payload"),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );

    // The container image's context, from the same archive: what the Containerfile copies.
    let context = folder.path().join("image");
    let out = Process::new("bash")
        .arg(root().join("scripts/image-context.sh"))
        .arg(&dist)
        .arg(&context)
        .output()
        .expect("image-context.sh");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let containerfile =
        std::fs::read_to_string(root().join("Containerfile")).expect("Containerfile");
    let copies: Vec<&str> = containerfile
        .lines()
        .filter(|l| l.starts_with("COPY "))
        .map(|l| l.split_whitespace().rev().nth(1).expect("a source"))
        .collect();
    assert_eq!(copies.len(), 2, "{copies:?}");
    for source in copies {
        let path = context.join(source.replace("${TARGETPLATFORM}", "linux/amd64"));
        assert!(path.is_file(), "the context lacks {}", path.display());
    }
    assert_eq!(
        std::fs::read(context.join("linux/amd64/rke2-payload")).expect("binary"),
        program.data
    );
}

#[test]
fn cargo_binstall_finds_each_archive_and_its_binary() {
    let text =
        std::fs::read_to_string(root().join("crates/payload-cli/Cargo.toml")).expect("Cargo.toml");
    // `key = "value"` of one table.
    let table = |name: &str| -> BTreeMap<String, String> {
        let start = text
            .find(&format!("\n[{name}]\n"))
            .unwrap_or_else(|| panic!("no [{name}]"));
        text[start + name.len() + 4..]
            .lines()
            .take_while(|l| !l.starts_with('['))
            .filter_map(|l| l.split_once(" = "))
            .map(|(k, v)| (k.trim().to_owned(), v.trim().trim_matches('"').to_owned()))
            .collect()
    };
    let meta = table("package.metadata.binstall");
    let windows = table("package.metadata.binstall.overrides.x86_64-pc-windows-msvc");
    assert_eq!(windows.get("pkg-fmt").map(String::as_str), Some("zip"));
    let repo = "https://github.com/rke2-payload/rke2-payload";
    assert!(text.contains("\nrepository.workspace = true\n"));
    for target in [
        "x86_64-unknown-linux-gnu",
        "aarch64-unknown-linux-gnu",
        "x86_64-unknown-linux-musl",
        "aarch64-unknown-linux-musl",
        "x86_64-apple-darwin",
        "aarch64-apple-darwin",
        "x86_64-pc-windows-msvc",
    ] {
        let windows = target.contains("windows");
        let fmt = if windows {
            "zip"
        } else {
            meta["pkg-fmt"].as_str()
        };
        let suffix = match fmt {
            "tgz" => ".tar.gz",
            "zip" => ".zip",
            other => panic!("pkg-fmt {other}"),
        };
        let render = |template: &str, bin: &str| {
            template
                .replace("{ repo }", repo)
                .replace("{ version }", VERSION)
                .replace("{ target }", target)
                .replace("{ archive-suffix }", suffix)
                .replace("{ bin }", bin)
                .replace("{ binary-ext }", if windows { ".exe" } else { "" })
        };
        let folder = format!("rke2-payload-v{VERSION}-{target}");
        assert_eq!(
            render(&meta["pkg-url"], ""),
            format!("{repo}/releases/download/v{VERSION}/{folder}{suffix}")
        );
        // What the archive script puts in the folder.
        let exe = if windows { ".exe" } else { "" };
        assert_eq!(
            render(&meta["bin-dir"], "rke2-payload"),
            format!("{folder}/rke2-payload{exe}")
        );
    }
    // The plugin's name is not in the archives: cargo-binstall skips a binary only when it
    // needs a feature.
    let plugin = &text[text
        .find("name = \"kubectl-rke2_payload\"")
        .expect("the plugin bin")..];
    let plugin = &plugin[..plugin.find("\n\n").expect("its end")];
    assert!(
        plugin.contains("required-features = [\"kubectl-plugin\"]"),
        "{plugin}"
    );
    assert!(text.contains("default = [\"kubectl-plugin\"]"));
    let script =
        std::fs::read_to_string(root().join("scripts/release-archive.sh")).expect("script");
    assert!(script.contains("\n  \"rke2-payload$exe\"\n"));
    assert!(!script.contains("kubectl-rke2_payload$exe"));
}
