//! Completions, manual pages, `--color`, and the kubectl plugin binary.

use std::os::unix::fs::PermissionsExt;

use crate::common::*;

#[test]
fn completions_for_every_shell() {
    for (shell, marker) in [
        ("bash", "complete -F"),
        ("zsh", "#compdef rke2-payload"),
        ("fish", "complete -c rke2-payload"),
        ("powershell", "Register-ArgumentCompleter"),
        ("elvish", "edit:completion"),
    ] {
        let out = cmd().args(["completions", shell]).output().expect("run");
        assert!(out.status.success(), "{shell}");
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            text.contains(marker),
            "{shell}: {}",
            &text[..text.len().min(200)]
        );
        assert!(
            text.contains("inspect") && text.contains("show-secrets"),
            "{shell}"
        );
    }
    cmd().args(["completions", "tcsh"]).assert().code(2);
}

#[test]
fn a_manual_page_for_the_tool_and_each_subcommand() {
    let out = cmd().arg("man").output().expect("run");
    assert!(out.status.success());
    let page = String::from_utf8_lossy(&out.stdout);
    assert!(
        page.contains(".TH rke2-payload 1") && page.contains("inspect"),
        "{page}"
    );
    let dir = std::env::temp_dir().join(format!("rke2-payload-man-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    cmd().args(["man", "--dir"]).arg(&dir).assert().success();
    for sub in [
        "decode", "inspect", "size", "lint", "encode", "redact", "clouds",
    ] {
        let file = dir.join(format!("rke2-payload-{sub}.1"));
        let text = std::fs::read_to_string(&file).expect("page written");
        assert!(text.contains(&format!(".TH rke2-payload-{sub} 1")), "{sub}");
        let mode = std::fs::metadata(&file).expect("meta").permissions().mode() & 0o777;
        assert_eq!(mode, 0o600, "{sub}");
    }
    cmd().args(["man", "no-such"]).assert().code(2);
}

#[test]
fn color_is_asked_for_or_refused_whatever_the_terminal() {
    let file = testdata().join("secrets/worker-cloud-config-online.yaml");
    let out = cmd()
        .args(["--color", "always", "inspect"])
        .arg(&file)
        .output()
        .expect("run");
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("\u{1b}["),
        "colour when asked"
    );
    let out = cmd()
        .args(["inspect", "--color", "never"])
        .arg(&file)
        .env("CLICOLOR_FORCE", "1")
        .output()
        .expect("run");
    assert!(
        !String::from_utf8_lossy(&out.stdout).contains('\u{1b}'),
        "never means never"
    );
}

#[test]
fn the_kubectl_plugin_is_the_same_program() {
    let plugin = assert_cmd::cargo::cargo_bin("kubectl-rke2_payload");
    let out = std::process::Command::new(&plugin)
        .args(["inspect", "--output", "json"])
        .arg(testdata().join("secrets/worker-cloud-config-online.yaml"))
        .output()
        .expect("plugin runs");
    assert!(out.status.success());
    let same = cmd()
        .args(["inspect", "--output", "json"])
        .arg(testdata().join("secrets/worker-cloud-config-online.yaml"))
        .output()
        .expect("run");
    assert_eq!(out.stdout, same.stdout);
}
