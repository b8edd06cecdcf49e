//! What the tool writes stays private, input text cannot drive a terminal, and no flag or input
//! size makes it crash or run away.

use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use crate::common::*;

fn dir(name: &str) -> PathBuf {
    let dir =
        std::env::temp_dir().join(format!("rke2-payload-trust-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("dir");
    dir
}

fn mode(path: &std::path::Path) -> u32 {
    std::fs::metadata(path)
        .expect("written")
        .permissions()
        .mode()
        & 0o777
}

fn init() -> String {
    testdata()
        .join("secrets/init-cloud-config-online.yaml")
        .display()
        .to_string()
}

#[test]
fn every_written_file_is_0600_whatever_the_umask_and_with_force() {
    let dir = dir("modes");
    let init = init();
    let runs: [(&str, &[&str]); 3] = [
        ("decode.txt", &["decode", init.as_str(), "-o"]),
        ("encode.yaml", &["encode", init.as_str(), "--gzip", "--out"]),
        ("redact.yaml", &["redact", init.as_str(), "--out"]),
    ];
    for (name, args) in runs {
        let out = dir.join(name);
        // A permissive umask: the file is 0600 all the same.
        let status = std::process::Command::new("sh")
            .arg("-c")
            .arg(format!(
                "umask 000; exec \"$0\" \"$@\" {}",
                shell_quote(&out.display().to_string())
            ))
            .arg(assert_cmd::cargo::cargo_bin("rke2-payload"))
            .args(args)
            .status()
            .expect("run");
        assert!(status.success(), "{name}");
        assert_eq!(mode(&out), 0o600, "{name}");
        // Replacing a wider file with --force leaves 0600.
        std::fs::set_permissions(&out, std::fs::Permissions::from_mode(0o644)).expect("chmod");
        cmd().args(args).arg(&out).arg("--force").assert().success();
        assert_eq!(mode(&out), 0o600, "{name} --force");
    }
}

fn shell_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''"))
}

#[test]
fn only_regular_files_are_replaced_and_dash_is_standard_output() {
    let dir = dir("targets");
    let init = init();
    let fifo = dir.join("fifo");
    assert!(
        std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .expect("mkfifo")
            .success()
    );
    let subdir = dir.join("sub");
    std::fs::create_dir(&subdir).expect("dir");
    for target in [&fifo, &subdir] {
        let out = cmd()
            .args(["decode", &init, "-o"])
            .arg(target)
            .arg("--force")
            .timeout(Duration::from_secs(20))
            .output()
            .expect("run");
        assert_eq!(out.status.code(), Some(2), "{}", target.display());
        assert!(String::from_utf8_lossy(&out.stderr).contains("is not a regular file"));
    }
    assert!(
        std::fs::symlink_metadata(&fifo)
            .expect("still there")
            .file_type()
            .is_fifo_like()
    );
    // `-o -` is standard output, not a file named `-`.
    let here = dir.join("cwd");
    std::fs::create_dir(&here).expect("dir");
    let out = cmd()
        .current_dir(&here)
        .args(["decode", &init, "-o", "-"])
        .output()
        .expect("run");
    assert!(out.status.success());
    assert!(out.stdout.starts_with(b"## template: jinja\n#cloud-config"));
    assert!(!here.join("-").exists());
    // A format name is not taken as a file name.
    let out = cmd()
        .current_dir(&here)
        .args(["decode", &init, "--output", "json"])
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
    assert!(!here.join("json").exists());
}

trait FifoLike {
    fn is_fifo_like(&self) -> bool;
}

impl FifoLike for std::fs::FileType {
    fn is_fifo_like(&self) -> bool {
        use std::os::unix::fs::FileTypeExt;
        self.is_fifo()
    }
}

/// A Secret whose name, cluster, file path, owner and command carry terminal controls.
fn hostile_secret() -> String {
    let userdata = "#cloud-config\nwrite_files:\n- path: \"/etc/\\e[2Jevil\\u202Ename\"\n  owner: \"ro\\rot\"\n  content: x\nruncmd:\n- \"echo \\e]0;title\\a \\e[1A\\e[2K done\"\n";
    let name = "w\\e[31mred\\u202E";
    format!(
        "{{\"kind\":\"Secret\",\"metadata\":{{\"name\":\"{name}\",\"namespace\":\"ns\\u0007\",\"labels\":{{\"cluster.x-k8s.io/cluster-name\":\"c\\u009b2J\"}}}},\"stringData\":{{\"format\":\"cloud-config\",\"value\":{}}}}}",
        serde_json::to_string(userdata).expect("JSON")
    )
    .replace("\\e", "\\u001b")
}

fn clean(bytes: &[u8]) -> bool {
    let text = String::from_utf8_lossy(bytes);
    !text.chars().any(|c| {
        (c.is_control() && c != '\n')
            || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
    })
}

#[test]
fn no_control_or_bidi_character_from_the_input_reaches_the_terminal() {
    let dir = dir("terminal");
    let file = dir.join("hostile.json");
    std::fs::write(&file, hostile_secret()).expect("write");
    let file = file.display().to_string();
    for args in [
        &["inspect", file.as_str()][..],
        &["inspect", "--verbose", file.as_str()],
        &["inspect", "--output", "json", file.as_str()],
        &["size", file.as_str()],
        &["size", "--output", "json", file.as_str()],
        &["size", "--output", "junit", file.as_str()],
        &["lint", file.as_str()],
        &["lint", "--output", "json", file.as_str()],
        &["lint", "--output", "sarif", file.as_str()],
        &["decode", file.as_str(), "--name", "nope\u{1b}[2J"],
        &["inspect", file.as_str(), "--name", "missing"],
    ] {
        let out = cmd().env("NO_COLOR", "1").args(args).output().expect("run");
        assert!(matches!(out.status.code(), Some(0..=2)), "{args:?}");
        assert!(
            clean(&out.stdout),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stdout)
        );
        assert!(
            clean(&out.stderr),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    // The escapes are visible, and JSON still means the same strings.
    let out = cmd().args(["inspect", &file]).output().expect("run");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("\\x1b[2Jevil\\u{202e}name"), "{text}");
    let out = cmd()
        .args(["inspect", "--output", "json", &file])
        .output()
        .expect("run");
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(doc["secrets"][0]["name"], "w\u{1b}[31mred\u{202e}");
}

#[test]
fn jobs_past_the_cap_is_a_usage_error_not_a_panic() {
    let list = testdata().join("secrets/list-all.json");
    for jobs in ["100000", "4000000000", "99999999999999999999999"] {
        let out = cmd()
            .args(["inspect", "--jobs", jobs])
            .arg(&list)
            .output()
            .expect("run");
        assert_eq!(out.status.code(), Some(2), "--jobs {jobs}");
        assert!(
            String::from_utf8_lossy(&out.stderr).contains("at most 256"),
            "--jobs {jobs}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    cmd()
        .args(["inspect", "--jobs", "256"])
        .arg(&list)
        .assert()
        .success();
}

#[test]
fn a_huge_object_on_standard_input_fails_fast_without_reading_it_all() {
    // 64 MiB of base64 on one line: refused at the 8 MiB cap on one object.
    let mut input = b"apiVersion: v1\nkind: Secret\nmetadata:\n  name: big\ndata:\n  format: Y2xvdWQtY29uZmln\n  value: ".to_vec();
    input.extend(std::iter::repeat_n(b'A', 64 << 20));
    input.push(b'\n');
    for sub in ["inspect", "size", "lint"] {
        let start = Instant::now();
        let out = cmd()
            .args([sub, "-"])
            .write_stdin(input.clone())
            .timeout(Duration::from_secs(60))
            .output()
            .expect("run");
        assert_eq!(out.status.code(), Some(2), "{sub}");
        assert!(out.stdout.is_empty() || sub == "inspect", "{sub}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains("is larger than 8388608 bytes"),
            "{sub}: {stderr}"
        );
        assert!(start.elapsed() < Duration::from_secs(20), "{sub}: too slow");
    }
}
