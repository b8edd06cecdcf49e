//! The release files: the crates' READMEs, the CHANGELOG, the krew manifest script, the
//! container image, the release workflow, and what the packages of the library and the preview
//! need.

use std::path::{Path, PathBuf};
use std::process::Command as Process;

use serde_json::Value;

use crate::common::*;

fn root() -> PathBuf {
    testdata().join("..")
}

fn read(path: &str) -> String {
    std::fs::read_to_string(root().join(path)).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn yaml(text: &str, what: &str) -> Value {
    serde_saphyr::from_str(text).unwrap_or_else(|e| panic!("{what} is not YAML: {e}"))
}

const VERSION: &str = env!("CARGO_PKG_VERSION");

/// The targets the release builds (docs/release.md lists them).
const TARGETS: [&str; 7] = [
    "x86_64-unknown-linux-gnu",
    "aarch64-unknown-linux-gnu",
    "x86_64-unknown-linux-musl",
    "aarch64-unknown-linux-musl",
    "x86_64-apple-darwin",
    "aarch64-apple-darwin",
    "x86_64-pc-windows-msvc",
];

fn archive(target: &str) -> String {
    let ext = if target.contains("windows") {
        "zip"
    } else {
        "tar.gz"
    };
    format!("rke2-payload-v{VERSION}-{target}.{ext}")
}

#[test]
fn each_crate_has_a_short_readme_of_its_own_and_the_library_s_example_is_the_guide_s() {
    let readme = read("README.md");
    for (copy, name) in [
        ("crates/rke2-payload/README.md", "rke2-payload"),
        ("crates/payload-printer/README.md", "rke2-payload-printer"),
        ("crates/payload-preview/README.md", "rke2-payload-preview"),
        ("crates/payload-doctor/README.md", "rke2-payload-doctor"),
        ("crates/payload-cli/README.md", "rke2-payload-cli"),
    ] {
        let text = read(copy);
        assert!(text.starts_with(&format!("# {name}")), "{copy}");
        assert!(
            text.len() < 8_000,
            "{copy} is {} bytes: a crate's own README is short",
            text.len()
        );
        assert!(
            text.contains("github.com/rke2-payload/rke2-payload#readme"),
            "{copy}"
        );
    }
    // The library's README is its doctest: the guide shows the same code.
    let library = read("crates/rke2-payload/README.md");
    let block = |text: &str| -> String {
        let start = text.find("```rust").expect("a Rust example");
        let end = text[start + 3..].find("```\n").expect("its end") + start + 3;
        text[start..end].to_owned()
    };
    assert_eq!(
        block(&library),
        block(&readme[readme.find("## The library").expect("the section")..])
    );
    for manifest in [
        "crates/rke2-payload/Cargo.toml",
        "crates/payload-printer/Cargo.toml",
        "crates/payload-preview/Cargo.toml",
        "crates/payload-doctor/Cargo.toml",
        "crates/payload-cli/Cargo.toml",
    ] {
        let text = read(manifest);
        assert!(text.contains("\nreadme = \"README.md\"\n"), "{manifest}");
        assert!(
            text.contains("\nrepository.workspace = true\n"),
            "{manifest}"
        );
        assert!(text.contains("\ndocumentation = \"https://"), "{manifest}");
    }
    assert!(read("crates/rke2-payload/src/lib.rs").contains("include_str!(\"../README.md\")"));
}

/// A fake SHA256SUMS with one distinct checksum per archive, as the release job writes it.
fn checksums(targets: &[&str]) -> (String, Vec<(String, String)>) {
    let mut text = String::new();
    let mut sums = Vec::new();
    for (n, target) in targets.iter().enumerate() {
        let sum = format!("{:064x}", n + 1);
        text.push_str(&format!("{sum}  {}\n", archive(target)));
        sums.push((archive(target), sum));
    }
    (text, sums)
}

fn krew(sums: &str) -> std::process::Output {
    let python = validator("python3").expect("python3");
    let file = temp_path("SHA256SUMS");
    std::fs::write(&file, sums).expect("write");
    Process::new(python)
        .arg(root().join("scripts/krew-manifest.py"))
        .args(["--version", VERSION, "--checksums"])
        .arg(&*file)
        .args(["--base-url", "https://example.com/download/v1/"])
        .output()
        .expect("krew-manifest.py runs")
}

#[test]
fn the_krew_manifest_installs_each_platform_s_archive() {
    if validator("python3").is_none() {
        eprintln!("note: skipped: no python3");
        return;
    }
    let (text, sums) = checksums(&TARGETS);
    let out = krew(&text);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let manifest = yaml(&String::from_utf8_lossy(&out.stdout), "the manifest");
    assert_eq!(
        manifest["apiVersion"],
        "krew.googlecontainertools.github.com/v1alpha2"
    );
    assert_eq!(manifest["kind"], "Plugin");
    assert_eq!(manifest["metadata"]["name"], "rke2-payload");
    let spec = &manifest["spec"];
    assert_eq!(spec["version"], format!("v{VERSION}"));
    // `kubectl krew search` shows 50 bytes.
    assert!(
        spec["shortDescription"]
            .as_str()
            .is_some_and(|s| !s.is_empty() && s.len() <= 50)
    );
    assert!(
        spec["homepage"]
            .as_str()
            .is_some_and(|s| s.starts_with("https://"))
    );
    let platforms = spec["platforms"].as_array().expect("platforms");
    let mut seen = Vec::new();
    for p in platforms {
        let labels = &p["selector"]["matchLabels"];
        let (os, arch) = (
            labels["os"].as_str().expect("os"),
            labels["arch"].as_str().expect("arch"),
        );
        seen.push(format!("{os}/{arch}"));
        // Linux takes the static build; each platform its own archive.
        let target = match (os, arch) {
            ("linux", "amd64") => "x86_64-unknown-linux-musl",
            ("linux", "arm64") => "aarch64-unknown-linux-musl",
            ("darwin", "amd64") => "x86_64-apple-darwin",
            ("darwin", "arm64") => "aarch64-apple-darwin",
            ("windows", "amd64") => "x86_64-pc-windows-msvc",
            other => panic!("unexpected platform {other:?}"),
        };
        let name = archive(target);
        assert_eq!(
            p["uri"],
            format!("https://example.com/download/v1/{name}"),
            "{os}/{arch}"
        );
        let sum = &sums.iter().find(|(a, _)| *a == name).expect("sum").1;
        assert_eq!(p["sha256"], sum.as_str(), "{os}/{arch}");
        let exe = if os == "windows" { ".exe" } else { "" };
        // The one program of the archive; krew links it as `kubectl-rke2_payload`.
        let bin = format!("rke2-payload{exe}");
        assert_eq!(p["bin"], bin.as_str(), "{os}/{arch}");
        let folder = format!("rke2-payload-v{VERSION}-{target}");
        let files: Vec<(&str, &str)> = p["files"]
            .as_array()
            .expect("files")
            .iter()
            .map(|f| {
                (
                    f["from"].as_str().expect("from"),
                    f["to"].as_str().expect("to"),
                )
            })
            .collect();
        assert!(
            files.contains(&(format!("{folder}/{bin}").as_str(), ".")),
            "{files:?}"
        );
        assert_eq!(
            files,
            [
                (format!("{folder}/{bin}").as_str(), "."),
                (format!("{folder}/LICENSE").as_str(), ".")
            ],
        );
    }
    seen.sort();
    assert_eq!(
        seen,
        [
            "darwin/amd64",
            "darwin/arm64",
            "linux/amd64",
            "linux/arm64",
            "windows/amd64"
        ]
    );

    // An archive missing from the checksums is an error that names it; so is a broken line.
    let (text, _) = checksums(&TARGETS[..6]);
    let out = krew(&text);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains(&archive("x86_64-pc-windows-msvc")));
    let out = krew("not a checksum\n");
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("not a sha256sum line"));
}

/// The instructions of a Containerfile, continuation lines joined, comments left out.
fn instructions(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current = String::new();
    for line in text.lines() {
        let line = line.trim();
        if line.starts_with('#') || (line.is_empty() && current.is_empty()) {
            continue;
        }
        if let Some(head) = line.strip_suffix('\\') {
            current.push_str(head);
            current.push(' ');
        } else {
            current.push_str(line);
            if !current.trim().is_empty() {
                out.push(current.trim().to_owned());
            }
            current.clear();
        }
    }
    out
}

#[test]
fn the_container_image_is_the_archives_binary_on_a_shell() {
    let text = read("Containerfile");
    let all = instructions(&text);
    let word = |i: &str| {
        i.split_whitespace()
            .next()
            .unwrap_or("")
            .to_ascii_uppercase()
    };
    // One stage: Alpine (a shell, for a CI job's script), nothing compiled, nothing run (the
    // arm64 image is made on an amd64 runner without emulation).
    let froms: Vec<&String> = all.iter().filter(|i| word(i) == "FROM").collect();
    assert_eq!(froms.len(), 1, "{all:?}");
    assert!(
        froms[0].starts_with("FROM docker.io/library/alpine:3."),
        "{}",
        froms[0]
    );
    for i in &all {
        assert!(
            ["FROM", "ARG", "LABEL", "COPY", "USER", "CMD"].contains(&word(i).as_str()),
            "the image runs nothing at build time, and has no ENTRYPOINT (GitLab runs a job's \
             script through it): {i}"
        );
    }
    // The binary on the PATH, the platform's own (the archives' binaries, by TARGETPLATFORM).
    assert!(all.contains(
        &"COPY --chmod=0755 ${TARGETPLATFORM}/rke2-payload /usr/local/bin/rke2-payload".to_owned()
    ));
    assert!(
        all.iter()
            .any(|i| i.starts_with("USER ") && !i.contains("USER 0") && !i.contains("root"))
    );
    assert_eq!(
        all.last().map(String::as_str),
        Some(r#"CMD ["rke2-payload", "--help"]"#)
    );
}

#[test]
fn the_release_workflow_builds_every_target_with_the_scripts() {
    let path = root().join(".github/workflows/release.yml");
    let text = read(".github/workflows/release.yml");
    let workflow = yaml(&text, "release.yml");
    assert_eq!(workflow["on"]["push"]["tags"], serde_json::json!(["v*"]));
    let jobs = &workflow["jobs"];
    let matrix = jobs["archive"]["strategy"]["matrix"]["include"]
        .as_array()
        .expect("matrix");
    let mut targets: Vec<&str> = matrix
        .iter()
        .map(|m| m["target"].as_str().expect("target"))
        .collect();
    targets.sort();
    let mut want = TARGETS.to_vec();
    want.sort();
    assert_eq!(targets, want);
    let steps = |job: &str| -> String {
        jobs[job]["steps"]
            .as_array()
            .unwrap_or_else(|| panic!("{job}"))
            .iter()
            .filter_map(|s| s["run"].as_str())
            .collect::<Vec<_>>()
            .join("\n")
    };
    assert!(steps("archive").contains("bash scripts/release-archive.sh \"${{ matrix.target }}\""));
    let release = steps("release");
    for needed in [
        "> SHA256SUMS",
        "sha256sum -c SHA256SUMS",
        "python3 scripts/krew-manifest.py",
        "gh release create",
        "dist/rke2-payload.yaml",
        // The output contract: the JSON Schemas of the documents.
        "docs/schemas/*.json",
    ] {
        assert!(release.contains(needed), "the release job lacks {needed}");
    }
    assert_eq!(
        jobs["image"]["steps"]
            .as_array()
            .expect("image steps")
            .iter()
            .find(|s| s["uses"]
                .as_str()
                .is_some_and(|u| u.starts_with("docker/build-push-action")))
            .expect("an image build")["with"]["file"],
        "Containerfile"
    );
    // The image from the archives: no QEMU, the context the script makes of them.
    let image = &jobs["image"];
    let uses: Vec<&str> = image["steps"]
        .as_array()
        .expect("image steps")
        .iter()
        .filter_map(|s| s["uses"].as_str())
        .collect();
    assert!(!uses.iter().any(|u| u.contains("setup-qemu")), "{uses:?}");
    assert!(steps("image").contains("bash scripts/image-context.sh dist image"));
    // Build provenance for the archives and the image.
    for job in ["release", "image"] {
        let attests = jobs[job]["steps"]
            .as_array()
            .expect("steps")
            .iter()
            .any(|s| {
                s["uses"]
                    .as_str()
                    .is_some_and(|u| u.starts_with("actions/attest-build-provenance@"))
            });
        assert!(attests, "{job} attests what it publishes");
    }
    // Permissions: none by default; writing only where it publishes.
    assert_eq!(workflow["permissions"], serde_json::json!({}));
    for (name, job) in jobs.as_object().expect("jobs") {
        let permissions = job["permissions"]
            .as_object()
            .unwrap_or_else(|| panic!("{name}"));
        for (scope, level) in permissions {
            let allowed = match (name.as_str(), scope.as_str()) {
                (_, _) if level == "read" => true,
                ("release", "contents" | "id-token" | "attestations") => true,
                ("image", "packages" | "id-token" | "attestations") => true,
                _ => false,
            };
            assert!(allowed, "{name} asks for {scope}: {level}");
        }
    }
    if let Some(actionlint) = validator("actionlint") {
        let out = Process::new(&actionlint)
            .arg(&path)
            .output()
            .expect("actionlint");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stdout)
        );
    }
}

#[test]
fn each_maintainer_step_is_one_script_the_recipe_names() {
    let recipe = read("docs/release.md");
    for script in [
        "scripts/publish-crates.sh",
        "scripts/krew-index-pr.sh",
        "scripts/push-image.sh",
        "scripts/image-context.sh",
    ] {
        let text = read(script);
        assert!(
            text.starts_with("#!/usr/bin/env bash\n") && text.contains("\nset -euo pipefail\n"),
            "{script}"
        );
        assert!(
            recipe.contains(script),
            "docs/release.md does not name {script}"
        );
        let mode = std::fs::metadata(root().join(script))
            .expect("meta")
            .permissions();
        assert!(
            std::os::unix::fs::PermissionsExt::mode(&mode) & 0o111 != 0,
            "{script} is not executable"
        );
        let out = Process::new("bash")
            .args(["-n"])
            .arg(root().join(script))
            .output()
            .expect("bash");
        assert!(
            out.status.success(),
            "{script}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    // The crates in the order they depend on each other: every workspace crate but the floor.
    let publish = read("scripts/publish-crates.sh");
    let order = [
        "rke2-payload-gotmpl",
        "rke2-payload-kube-schema",
        "rke2-payload ",
        "rke2-payload-preview",
        "rke2-payload-doctor",
        "rke2-payload-printer",
        "rke2-payload-cli",
    ];
    let at: Vec<usize> = order
        .iter()
        .map(|c| publish.find(c).unwrap_or_else(|| panic!("{c}")))
        .collect();
    assert!(at.windows(2).all(|w| w[0] < w[1]), "{at:?}");
}

#[test]
fn every_workflow_pins_its_actions_by_commit() {
    let dir = root().join(".github/workflows");
    let mut checked = 0;
    for entry in std::fs::read_dir(&dir).expect("workflows") {
        let path = entry.expect("entry").path();
        let text = std::fs::read_to_string(&path).expect("read");
        let what = path.display().to_string();
        // Each `uses:` line: owner/repo@<40 hex> # <tag>.
        for line in text
            .lines()
            .filter(|l| l.trim_start().trim_start_matches("- ").starts_with("uses:"))
        {
            let value = line.split_once("uses:").expect("uses").1.trim();
            let (action, comment) = value.split_once(" # ").unwrap_or((value, ""));
            let (_, sha) = action
                .split_once('@')
                .unwrap_or_else(|| panic!("{what}: {line}"));
            assert!(
                sha.len() == 40 && sha.bytes().all(|b| b.is_ascii_hexdigit()),
                "{what}: not pinned by a full commit: {line}"
            );
            assert!(
                comment.starts_with('v'),
                "{what}: no tag after the commit: {line}"
            );
            checked += 1;
        }
        // The parsed workflow agrees with the lines read.
        let workflow = yaml(&text, &what);
        for job in workflow["jobs"].as_object().expect("jobs").values() {
            for step in job["steps"].as_array().into_iter().flatten() {
                if let Some(uses) = step["uses"].as_str() {
                    let sha = uses.rsplit('@').next().unwrap_or("");
                    assert_eq!(sha.len(), 40, "{what}: {uses}");
                }
            }
        }
    }
    assert!(checked >= 10, "{checked}");
}

#[test]
fn the_changelog_keeps_a_changelog() {
    let text = read("CHANGELOG.md");
    assert!(text.starts_with("# Changelog\n"));
    assert!(text.contains("https://keepachangelog.com/en/1.1.0/"));
    let headings: Vec<&str> = text.lines().filter_map(|l| l.strip_prefix("## ")).collect();
    assert_eq!(headings.first(), Some(&"[Unreleased]"), "{headings:?}");
    let ours: Vec<u64> = VERSION
        .split('.')
        .map(|n| n.parse().expect("number"))
        .collect();
    for heading in &headings[1..] {
        // `[x.y.z] - YYYY-MM-DD`, no later than the crates' version.
        let (version, date) = heading
            .strip_prefix('[')
            .and_then(|h| h.split_once("] - "))
            .unwrap_or_else(|| panic!("not '[x.y.z] - YYYY-MM-DD': {heading}"));
        let parts: Vec<u64> = version
            .split('.')
            .map(|n| n.parse().unwrap_or_else(|_| panic!("{heading}")))
            .collect();
        assert_eq!(parts.len(), 3, "{heading}");
        assert!(parts <= ours, "{heading} is after {VERSION}");
        assert!(
            date.len() == 10 && date.chars().filter(|c| *c == '-').count() == 2,
            "{heading}"
        );
    }
    for heading in &headings {
        let label = heading.split(']').next().expect("label");
        assert!(
            text.contains(&format!("\n{label}]: https://")),
            "{label}] has no link"
        );
    }
    assert!(text.contains("\n### Added\n"));
}

/// The string literals that follow `marker` in `text`.
fn literals_after<'a>(text: &'a str, marker: &str) -> Vec<&'a str> {
    text.match_indices(marker)
        .filter_map(|(at, _)| {
            let rest = &text[at + marker.len()..];
            let rest = rest.trim_start().strip_prefix("concat!(").unwrap_or(rest);
            let rest = rest.trim_start().strip_prefix('"')?;
            rest.split('"').next()
        })
        .collect()
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("dir") {
        let path = entry.expect("entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The unit tests and doctests of a crate (`dir`, under `crates/`) read only files its package
/// carries: inside the crate's folder and not under what `exclude` leaves out
/// (`src/testdata.rs` alone reaches the repository, and its callers skip from a package). The
/// number of paths checked.
fn reads_only_what_its_package_carries(dir: &str, excluded: &[&str]) -> usize {
    let krate = root()
        .join("crates")
        .join(dir)
        .canonicalize()
        .expect("crate");
    let manifest = read(&format!("crates/{dir}/Cargo.toml"));
    let exclude = excluded
        .iter()
        .map(|e| format!("\"{e}/\""))
        .collect::<Vec<_>>()
        .join(", ");
    assert!(
        manifest.contains(&format!("\nexclude = [{exclude}]\n")),
        "{dir}: exclude = [{exclude}]"
    );
    let mut files = Vec::new();
    rust_files(&krate.join("src"), &mut files);
    let mut checked = 0;
    for file in files {
        let text = std::fs::read_to_string(&file).expect("source");
        let dir = file.parent().expect("dir");
        let mut paths: Vec<PathBuf> = Vec::new();
        for marker in ["include_str!(", "include_bytes!("] {
            paths.extend(
                literals_after(&text, marker)
                    .into_iter()
                    .map(|l| dir.join(l)),
            );
        }
        for marker in ["env!(\"CARGO_MANIFEST_DIR\")).join(", "crate_data().join("] {
            let base = if marker.starts_with("crate_data") {
                krate.join("tests/data")
            } else {
                krate.clone()
            };
            if file.ends_with("src/testdata.rs") {
                continue;
            }
            paths.extend(
                literals_after(&text, marker)
                    .into_iter()
                    .map(|l| base.join(l)),
            );
        }
        for path in paths {
            let found = path
                .canonicalize()
                .unwrap_or_else(|e| panic!("{}: {}: {e}", file.display(), path.display()));
            assert!(
                found.starts_with(&krate)
                    && !excluded.iter().any(|e| found.starts_with(krate.join(e))),
                "{} reads {}, which the package does not carry",
                file.display(),
                found.display()
            );
            checked += 1;
        }
    }
    checked
}

#[test]
fn the_library_and_the_preview_read_only_what_their_packages_carry() {
    // The README, the fixtures' index and Lists, at least.
    let library = reads_only_what_its_package_carries("rke2-payload", &["tests/it", "benches"]);
    assert!(library >= 4, "{library}");
    // The CRDs, the README and the Go program, at least (the CAPRKE2 examples are named
    // through `concat!`, which this reading does not follow).
    let preview = reads_only_what_its_package_carries("payload-preview", &["tests/it"]);
    assert!(preview >= 5, "{preview}");
}

#[test]
fn ci_checks_the_package_and_fetches_before_going_offline() {
    let ci = read(".ci/run");
    let fetch = ci.find("\ncargo fetch --locked\n").expect("cargo fetch");
    let offline = ci.find("cargo deny --offline").expect("an offline step");
    assert!(fetch < offline, "cargo fetch comes before the offline step");
    assert!(ci.contains("\nbash scripts/package-check.sh\n"));
    let script = read("scripts/package-check.sh");
    assert!(
        script.starts_with("#!/usr/bin/env bash\n") && script.contains("\nset -euo pipefail\n")
    );
    assert!(script.contains("cargo test --offline"));
}
