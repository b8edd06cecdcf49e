//! The kubectl plugin by kubectl's rules: a fake kubectl on the PATH records the arguments of
//! every run (the namespace is the context's unless -n or -A says otherwise; `--as`,
//! `--as-group`, `--as-uid`, `--request-timeout`, `--user`, `--cluster`, `--context` and
//! `--kubeconfig` passed on verbatim; a bad value refused before kubectl runs), and
//! `kubectl_complete-rke2_payload` answers the real `kubectl __complete`.

use std::path::{Path, PathBuf};

use crate::common::*;
use crate::standin::have_kubectl;

/// Every subcommand with --from-cluster, with what it needs besides.
const FROM_CLUSTER: [&[&str]; 7] = [
    &["decode"],
    &["inspect"],
    &["size"],
    &["lint"],
    &["encode"],
    &["redact"],
    &["doctor"],
];

/// A folder with a fake `kubectl` that writes each run's arguments, one a line, to a file of
/// its own in `calls/`, and answers `get secret(s)` with the fixture List, anything else with
/// an empty List.
struct FakeKubectl {
    dir: tempfile::TempDir,
}

impl FakeKubectl {
    fn new() -> FakeKubectl {
        let dir = scratch();
        let calls = dir.path().join("calls");
        std::fs::create_dir(&calls).expect("calls/");
        let secrets = testdata().join("secrets/list-all.json");
        let script = format!(
            "#!/bin/sh\n\
             printf '%s\\n' \"$@\" > \"$(mktemp '{calls}/call.XXXXXX')\"\n\
             for a in \"$@\"; do\n\
             \x20 case \"$a\" in secret|secrets) exec cat '{secrets}';; esac\n\
             done\n\
             echo '{{\"apiVersion\": \"v1\", \"kind\": \"List\", \"items\": []}}'\n",
            calls = calls.display(),
            secrets = secrets.display(),
        );
        let kubectl = dir.path().join("kubectl");
        std::fs::write(&kubectl, script).expect("write the fake kubectl");
        set_executable(&kubectl);
        FakeKubectl { dir }
    }

    /// Runs the tool with the fake first on the PATH; the calls recorded before are dropped.
    fn run(&self, args: &[&str]) -> (std::process::Output, Vec<Vec<String>>) {
        let calls = self.dir.path().join("calls");
        for entry in std::fs::read_dir(&calls).expect("calls/") {
            std::fs::remove_file(entry.expect("entry").path()).expect("remove");
        }
        let out = cmd()
            .env("PATH", path_with(self.dir.path()))
            .env_remove("KUBECTL")
            .args(args)
            .output()
            .expect("run");
        let mut recorded = Vec::new();
        for entry in std::fs::read_dir(&calls).expect("calls/") {
            let text = std::fs::read_to_string(entry.expect("entry").path()).expect("a call");
            recorded.push(text.lines().map(str::to_owned).collect());
        }
        (out, recorded)
    }
}

/// `dir` first on this process's PATH.
fn path_with(dir: &Path) -> std::ffi::OsString {
    std::env::join_paths(std::iter::once(dir.to_owned()).chain(std::env::split_paths(
        &std::env::var_os("PATH").unwrap_or_default(),
    )))
    .expect("PATH")
}

fn set_executable(path: &Path) {
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
}

/// The resource a recorded call gets (the word after `get`).
fn resource(call: &[String]) -> &str {
    call.iter()
        .position(|a| a == "get")
        .and_then(|i| call.get(i + 1))
        .map_or("", String::as_str)
}

/// Whether `call` holds `flag` directly followed by `value`.
fn has_pair(call: &[String], flag: &str, value: &str) -> bool {
    call.windows(2).any(|w| w[0] == flag && w[1] == value)
}

#[test]
fn without_n_or_a_kubectl_is_given_no_namespace_and_reads_the_context_s() {
    let fake = FakeKubectl::new();
    for sub in FROM_CLUSTER {
        let mut args = sub.to_vec();
        args.push("--from-cluster");
        let (out, calls) = fake.run(&args);
        assert!(!calls.is_empty(), "{sub:?}: kubectl was not run: {out:?}");
        for call in &calls {
            // clusterctl's Providers live in the providers' namespaces: doctor reads them in all.
            if resource(call) == "providers.clusterctl.cluster.x-k8s.io" {
                assert!(call.contains(&"--all-namespaces".to_owned()), "{call:?}");
                continue;
            }
            for flag in ["-n", "--namespace", "-A", "--all-namespaces"] {
                assert!(
                    !call
                        .iter()
                        .any(|a| a == flag || a.starts_with(&format!("{flag}="))),
                    "{sub:?}: {flag} passed without -n or -A: {call:?}"
                );
            }
        }
        // -A is kubectl's --all-namespaces, -n its --namespace, for every get.
        let (_, calls) = fake.run(&[&args[..], &["-A"]].concat());
        assert!(!calls.is_empty(), "{sub:?} -A");
        for call in &calls {
            assert!(
                call.contains(&"--all-namespaces".to_owned()),
                "{sub:?} -A: {call:?}"
            );
        }
        let (_, calls) = fake.run(&[&args[..], &["-n", "capi"]].concat());
        assert!(!calls.is_empty(), "{sub:?} -n");
        for call in calls
            .iter()
            .filter(|c| resource(c) != "providers.clusterctl.cluster.x-k8s.io")
        {
            assert!(
                has_pair(call, "--namespace", "capi"),
                "{sub:?} -n: {call:?}"
            );
            assert!(!call.contains(&"--all-namespaces".to_owned()), "{call:?}");
        }
    }
    // doctor finding no cluster in the context's namespace says -A reads every one.
    let (out, _) = fake.run(&["doctor", "--from-cluster"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("-A reads every one"), "{err}");
    // A bare --name is `kubectl get secret NAME`, in the context's namespace too.
    let (_, calls) = fake.run(&["inspect", "--from-cluster", "--name", "demo-cp-x"]);
    assert_eq!(calls.len(), 1, "{calls:?}");
    assert!(
        calls[0].ends_with(&[
            "get".to_owned(),
            "secret".to_owned(),
            "demo-cp-x".to_owned(),
            "--output=json".to_owned()
        ]),
        "{calls:?}"
    );
    // kubectl refuses a name with a selector: the labels are matched on what it returns.
    let (_, calls) = fake.run(&[
        "inspect",
        "--from-cluster",
        "--name",
        "capi/demo-cp-x",
        "-l",
        "tier=cp",
        "--cluster-name",
        "demo",
    ]);
    assert_eq!(calls.len(), 1, "{calls:?}");
    assert!(has_pair(&calls[0], "--namespace", "capi"), "{calls:?}");
    assert!(
        !calls[0].iter().any(|a| a.starts_with("--selector")),
        "{calls:?}"
    );
    let (_, calls) = fake.run(&[
        "inspect",
        "--from-cluster",
        "-l",
        "tier=cp",
        "--cluster-name",
        "demo",
    ]);
    assert!(
        has_pair(
            &calls[0],
            "--selector",
            "tier=cp,cluster.x-k8s.io/cluster-name=demo"
        ),
        "{calls:?}"
    );
}

#[test]
fn kubectl_s_own_flags_reach_every_kubectl_get_verbatim() {
    let fake = FakeKubectl::new();
    let kubeconfig = fake.dir.path().join("my kubeconfig");
    let kubeconfig = kubeconfig.to_str().expect("UTF-8");
    let given: [(&str, &str); 10] = [
        ("--kubeconfig", kubeconfig),
        ("--context", "mgmt"),
        ("--cluster", "mgmt-cluster"),
        ("--user", "ci-bot"),
        ("--as", "system:serviceaccount:capi:auditor"),
        ("--as-group", "ops,dev"),
        ("--as-group", "system:authenticated"),
        ("--as-uid", "1234-abcd"),
        ("--request-timeout", "30s"),
        ("-n", "fleet"),
    ];
    for sub in FROM_CLUSTER {
        let mut args = sub.to_vec();
        args.push("--from-cluster");
        for (flag, value) in given {
            args.extend([flag, value]);
        }
        let (out, calls) = fake.run(&args);
        // size also reads the Machines (and the kinds they name), doctor each kind.
        let least = match sub[0] {
            "size" => 2,
            "doctor" => 6,
            _ => 1,
        };
        assert!(calls.len() >= least, "{sub:?}: {calls:?} {out:?}");
        for call in &calls {
            let get = call.iter().position(|a| a == "get").expect("a get");
            for (flag, value) in &given[..9] {
                assert!(
                    call[..get]
                        .windows(2)
                        .any(|w| w[0] == *flag && w[1] == *value),
                    "{sub:?}: {flag} {value} not passed before `get`: {call:?}"
                );
            }
            // Each group is one value, in the order given, commas and all.
            let groups: Vec<&str> = call
                .windows(2)
                .filter(|w| w[0] == "--as-group")
                .map(|w| w[1].as_str())
                .collect();
            assert_eq!(groups, ["ops,dev", "system:authenticated"], "{call:?}");
        }
    }
    // Bare seconds, a Go duration and 0 are kubectl's timeouts too.
    for timeout in ["45", "1m30s", "1.5h", "250ms", "0"] {
        let (out, calls) = fake.run(&["inspect", "--from-cluster", "--request-timeout", timeout]);
        assert!(!calls.is_empty(), "{timeout}: {out:?}");
        assert!(
            has_pair(&calls[0], "--request-timeout", timeout),
            "{calls:?}"
        );
    }
}

#[test]
fn a_bad_kubectl_value_is_refused_with_exit_2_before_kubectl_runs() {
    let fake = FakeKubectl::new();
    for (bad, says) in [
        (&["--as=-x"][..], "--as"),
        (&["--as", "u", "--as-group=--all"], "--as-group"),
        (&["--as-uid", "1"], "--as"),
        (&["--as-group", "ops"], "--as"),
        (&["--user="], "--user"),
        (&["--cluster=-k"], "--cluster"),
        (&["--context=--kubeconfig=/etc/x"], "--context"),
        (&["--kubeconfig="], "--kubeconfig"),
        (&["--request-timeout", "1d"], "--request-timeout"),
        (&["--request-timeout=-5s"], "--request-timeout"),
        (&["--request-timeout", "5 s"], "--request-timeout"),
        (&["--request-timeout", "s"], "--request-timeout"),
        (
            &["--request-timeout", "99999999999999999999"],
            "--request-timeout",
        ),
        (&["-n=-A"], "--namespace"),
        (&["--name=-x"], "--name"),
        (&["-l=-x"], "--selector"),
        (&["--cluster-name=-x"], "--cluster-name"),
        (&["--context", "a\nb"], "--context"),
    ] {
        for sub in ["inspect", "doctor"] {
            if sub == "doctor" && matches!(says, "--name" | "--selector") {
                continue;
            }
            let mut args = vec![sub, "--from-cluster"];
            args.extend(bad);
            let (out, calls) = fake.run(&args);
            assert_eq!(out.status.code(), Some(2), "{args:?}");
            assert!(calls.is_empty(), "{args:?}: kubectl ran: {calls:?}");
            let err = String::from_utf8_lossy(&out.stderr);
            assert!(err.contains(says), "{args:?}: {err}");
        }
    }
    // kubectl's flags without --from-cluster: a usage error, --cluster's naming --cluster-name.
    let file = testdata().join("secrets/list-all.yaml");
    let file = file.to_str().expect("UTF-8");
    for sub in ["inspect", "size", "doctor"] {
        let (out, calls) = fake.run(&[sub, file, "--cluster", "demo"]);
        assert_eq!(out.status.code(), Some(2), "{sub}");
        assert!(calls.is_empty());
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("--cluster-name demo"), "{sub}: {err}");
        let (out, _) = fake.run(&[sub, file, "--as", "admin"]);
        assert_eq!(out.status.code(), Some(2), "{sub}");
        assert!(
            String::from_utf8_lossy(&out.stderr).contains("needs --from-cluster"),
            "{sub}"
        );
    }
}

#[test]
fn a_cluster_kubectl_does_not_know_is_said_with_the_new_flag() {
    // The fake fails as kubectl does for a --cluster the kubeconfig lacks.
    let dir = scratch();
    let kubectl = dir.path().join("kubectl");
    std::fs::write(
        &kubectl,
        "#!/bin/sh\necho 'error: no server found for cluster \"demo\"' >&2\nexit 1\n",
    )
    .expect("write");
    set_executable(&kubectl);
    let out = cmd()
        .env("PATH", path_with(dir.path()))
        .env_remove("KUBECTL")
        .args(["inspect", "--from-cluster", "--cluster", "demo"])
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("no server found for cluster") && err.contains("--cluster-name"),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1, "{err}");
}

/// A folder with the plugin and its completion script, as a user installs them.
fn plugin_dir(how: Completer) -> tempfile::TempDir {
    let dir = scratch();
    let plugin = assert_cmd::cargo::cargo_bin("kubectl-rke2_payload");
    std::os::unix::fs::symlink(&plugin, dir.path().join("kubectl-rke2_payload")).expect("link");
    let completer = dir.path().join("kubectl_complete-rke2_payload");
    match how {
        Completer::Script => {
            std::fs::copy(shipped_script(), &completer).expect("copy the script");
            set_executable(&completer);
        }
        Completer::Link => std::os::unix::fs::symlink(&plugin, &completer).expect("link"),
    }
    dir
}

#[derive(Clone, Copy, Debug)]
enum Completer {
    /// The shipped script, which runs `kubectl-rke2_payload __complete`.
    Script,
    /// The plugin itself under the completer's name.
    Link,
}

fn shipped_script() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("kubectl/kubectl_complete-rke2_payload")
}

/// `kubectl __complete rke2-payload WORDS…` with `dir` first on the PATH: the candidates'
/// values and the directive.
fn kubectl_completes(dir: &Path, words: &[&str]) -> (Vec<String>, String) {
    let out = std::process::Command::new("kubectl")
        .arg("__complete")
        .arg("rke2-payload")
        .args(words)
        .env("PATH", path_with(dir))
        .env("KUBECONFIG", "/dev/null")
        .output()
        .expect("run kubectl");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let mut lines: Vec<&str> = text.lines().collect();
    let directive = lines.pop().unwrap_or_default().to_owned();
    let values = lines
        .iter()
        .map(|l| l.split('\t').next().unwrap_or_default().to_owned())
        .collect();
    (values, directive)
}

#[test]
fn kubectl_completes_the_plugin_s_subcommands_flags_and_values() {
    if !have_kubectl() {
        return;
    }
    for how in [Completer::Script, Completer::Link] {
        let dir = plugin_dir(how);
        let (values, directive) = kubectl_completes(dir.path(), &[""]);
        for sub in ["inspect", "size", "lint", "doctor", "decode", "render"] {
            assert!(
                values.iter().any(|v| v == sub),
                "{how:?}: {sub}: {values:?}"
            );
        }
        assert_eq!(directive, ":4", "{how:?}");
        let (values, _) = kubectl_completes(dir.path(), &["ins"]);
        assert_eq!(values, ["inspect"], "{how:?}");
        let (values, _) = kubectl_completes(dir.path(), &["inspect", "--"]);
        for flag in [
            "--from-cluster",
            "--namespace",
            "--all-namespaces",
            "--cluster-name",
            "--context",
            "--cluster",
            "--as",
            "--as-group",
            "--request-timeout",
            "--output",
        ] {
            assert!(
                values.iter().any(|v| v == flag),
                "{how:?}: {flag}: {values:?}"
            );
        }
        let (values, _) = kubectl_completes(dir.path(), &["doctor", "--from-cluster", "--req"]);
        assert_eq!(values, ["--request-timeout"], "{how:?}");
        let (values, _) = kubectl_completes(dir.path(), &["size", "--cloud", "azu"]);
        assert!(values.iter().any(|v| v == "azure"), "{how:?}: {values:?}");
        let (values, _) = kubectl_completes(dir.path(), &["lint", "-o", ""]);
        assert!(values.iter().any(|v| v == "sarif"), "{how:?}: {values:?}");
    }
}

#[test]
fn as_the_plugin_the_examples_and_hints_say_kubectl_rke2_payload() {
    let plugin = assert_cmd::cargo::cargo_bin("kubectl-rke2_payload");
    for sub in [
        "decode", "inspect", "size", "lint", "encode", "redact", "render", "diff", "doctor",
    ] {
        let out = std::process::Command::new(&plugin)
            .args([sub, "--help"])
            .output()
            .expect("run");
        let help = String::from_utf8_lossy(&out.stdout);
        let examples = help.split("Examples:").nth(1).expect("examples");
        assert!(
            examples.contains(&format!("kubectl rke2-payload {sub}")),
            "{sub}: {examples}"
        );
        for line in examples.lines() {
            let line = line.trim_start();
            assert!(
                !line.starts_with("rke2-payload ") && !line.contains("| rke2-payload "),
                "{sub}: {line}"
            );
        }
    }
    // As rke2-payload, the examples stay as they are.
    let out = cmd().args(["size", "--help"]).output().expect("run");
    assert!(String::from_utf8_lossy(&out.stdout).contains("\n  rke2-payload size "));
    // A hint that shows a command line shows the plugin's.
    let out = std::process::Command::new(&plugin)
        .args(["lint", "--allow", "no-such-check", "-"])
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("`kubectl rke2-payload lint --list-checks`"),
        "{err}"
    );
}

#[test]
fn the_completion_script_ships_in_the_archive_and_krew_says_how_to_install_it() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let archive = std::fs::read_to_string(root.join("scripts/release-archive.sh")).expect("read");
    assert!(
        archive.contains("crates/payload-cli/kubectl/kubectl_complete-rke2_payload "),
        "the release archive ships the completion script"
    );
    assert!(archive.contains("crates/payload-cli/kubectl/kubectl_complete-rke2_payload.cmd"));
    use std::os::unix::fs::PermissionsExt as _;
    let mode = std::fs::metadata(shipped_script())
        .expect("the script")
        .permissions()
        .mode();
    assert_eq!(mode & 0o111, 0o111, "the script is executable");
    // krew links only `bin`: its caveats say how to put the script on the PATH, and the
    // lines they give write a script that completes.
    let Some(python) = ["python3"].into_iter().find(|p| {
        std::process::Command::new(p)
            .arg("--version")
            .output()
            .is_ok()
    }) else {
        return;
    };
    let dir = scratch();
    let sums = dir.path().join("SHA256SUMS");
    let mut text = String::new();
    for (n, target) in [
        "x86_64-unknown-linux-musl",
        "aarch64-unknown-linux-musl",
        "x86_64-apple-darwin",
        "aarch64-apple-darwin",
    ]
    .iter()
    .enumerate()
    {
        text.push_str(&format!(
            "{:064x}  rke2-payload-v0.0.1-{target}.tar.gz\n",
            n + 1
        ));
    }
    text.push_str(&format!(
        "{:064x}  rke2-payload-v0.0.1-x86_64-pc-windows-msvc.zip\n",
        9
    ));
    std::fs::write(&sums, text).expect("write");
    let out = std::process::Command::new(python)
        .arg(root.join("scripts/krew-manifest.py"))
        .args(["--version", "0.0.1", "--checksums"])
        .arg(&sums)
        .args(["--base-url", "https://example.com/"])
        .output()
        .expect("krew-manifest.py");
    assert!(out.status.success(), "{out:?}");
    let manifest: serde_json::Value =
        serde_saphyr::from_str(&String::from_utf8_lossy(&out.stdout)).expect("YAML");
    let caveats = manifest["spec"]["caveats"].as_str().expect("caveats");
    assert!(
        caveats.contains("kubectl_complete-rke2_payload"),
        "{caveats}"
    );
    let snippet: String = caveats
        .lines()
        .filter_map(|l| l.strip_prefix("  "))
        .map(|l| format!("{l}\n"))
        .collect();
    let krew_root = dir.path().join("krew");
    std::fs::create_dir_all(krew_root.join("bin")).expect("krew/bin");
    let out = std::process::Command::new("sh")
        .args(["-c", &snippet])
        .env("KREW_ROOT", &krew_root)
        .output()
        .expect("sh");
    assert!(out.status.success(), "{out:?}");
    let written = krew_root.join("bin/kubectl_complete-rke2_payload");
    let plugin = assert_cmd::cargo::cargo_bin("kubectl-rke2_payload");
    std::os::unix::fs::symlink(&plugin, krew_root.join("bin/kubectl-rke2_payload")).expect("link");
    let out = std::process::Command::new(&written)
        .arg("insp")
        .env("PATH", path_with(&krew_root.join("bin")))
        .output()
        .expect("run the written script");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).lines().last(),
        Some(":4"),
        "{out:?}"
    );
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("inspect\t"));
}
