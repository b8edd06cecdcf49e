//! The `rke2-payload` command line, shared by its two binaries (`rke2-payload`, and
//! `kubectl-rke2_payload` for kubectl). Not a library API: use the `rke2-payload` crate.

mod cli;
mod cmd;
mod complete;
mod config;
mod output;

use std::process::ExitCode;

/// Exit code for success.
const EXIT_OK: u8 = 0;
/// Exit code when a check failed (over budget, lint errors).
const EXIT_CHECK_FAILED: u8 = 1;
/// Exit code for usage and input errors.
const EXIT_ERROR: u8 = 2;

/// The file name (without `.exe`) the program was started by.
fn invoked_as() -> Option<String> {
    std::env::args_os()
        .next()
        .map(std::path::PathBuf::from)
        .and_then(|p| p.file_stem().map(|s| s.to_string_lossy().into_owned()))
}

/// The name the program is run by: `kubectl rke2-payload` when kubectl runs it as its plugin
/// (`kubectl-rke2_payload`), `rke2-payload` otherwise.
pub(crate) fn program_name() -> &'static str {
    static NAME: std::sync::OnceLock<&'static str> = std::sync::OnceLock::new();
    NAME.get_or_init(|| {
        if invoked_as().is_some_and(|stem| stem.starts_with("kubectl-")) {
            "kubectl rke2-payload"
        } else {
            "rke2-payload"
        }
    })
}

/// What this binary is: its version, the commit and date it was built from (when the build
/// knew them: `build.rs`) and its target.
pub(crate) fn build_info() -> payload_printer::version::VersionDocument {
    payload_printer::version::VersionDocument::new(
        env!("CARGO_PKG_VERSION"),
        option_env!("RKE2_PAYLOAD_COMMIT"),
        option_env!("RKE2_PAYLOAD_COMMIT_DATE"),
        option_env!("RKE2_PAYLOAD_TARGET").unwrap_or("unknown"),
        payload_printer::schema::DOCUMENTS
            .iter()
            .map(|d| (d.name, d.schema)),
    )
}

/// The version `--version` prints after the program's name: `0.3.0 (0123abc 2026-01-02)`.
pub(crate) fn version_text() -> String {
    let mut line = Vec::new();
    // Writing to a Vec cannot fail.
    let _ = payload_printer::version::text(&mut line, &build_info());
    let line = String::from_utf8_lossy(&line);
    line.trim_end()
        .strip_prefix("rke2-payload ")
        .unwrap_or(line.trim_end())
        .to_owned()
}

/// The subcommand being run (`inspect`), for the hints that show a command line.
static SUBCOMMAND: std::sync::OnceLock<String> = std::sync::OnceLock::new();

/// The subcommand being run, `inspect` before one is known.
pub(crate) fn subcommand_name() -> &'static str {
    SUBCOMMAND.get().map_or("inspect", String::as_str)
}

/// The command line, its examples said with the name the program is run by.
fn command() -> clap::Command {
    use clap::CommandFactory as _;
    let mut command = cli::Cli::command().bin_name(program_name());
    if program_name() == "rke2-payload" {
        return command;
    }
    let names: Vec<String> = command
        .get_subcommands()
        .map(|c| c.get_name().to_owned())
        .collect();
    for name in names {
        command = command.mut_subcommand(name, |sub| {
            let Some(examples) = sub.get_after_help().map(ToString::to_string) else {
                return sub;
            };
            sub.after_help(as_run_by(&examples, program_name()))
        });
    }
    command
}

/// `text`'s command lines that run `rke2-payload` (at the start of a line, or after a pipe)
/// run `program` instead.
fn as_run_by(text: &str, program: &str) -> String {
    text.lines()
        .map(|line| {
            let indent = line.len() - line.trim_start().len();
            let (head, body) = line.split_at(indent);
            let body = match body.strip_prefix("rke2-payload ") {
                Some(rest) => format!("{program} {rest}"),
                None => body.to_owned(),
            };
            format!(
                "{head}{}",
                body.replace("| rke2-payload ", &format!("| {program} "))
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Runs the command line on this process's arguments, or, started as
/// `kubectl_complete-rke2_payload` or with `__complete` first, answers kubectl's completion of
/// the plugin in cobra's protocol.
pub fn main() -> ExitCode {
    use clap::FromArgMatches as _;
    if invoked_as().is_some_and(|stem| stem.starts_with("kubectl_complete-")) {
        return complete::run(std::env::args_os().skip(1).collect());
    }
    if std::env::args_os()
        .nth(1)
        .is_some_and(|a| a == complete::SUBCOMMAND)
    {
        return complete::run(std::env::args_os().skip(2).collect());
    }
    let matches = command().get_matches();
    if let Some(name) = matches.subcommand_name() {
        let _ = SUBCOMMAND.set(name.to_owned());
    }
    let args = match cli::Cli::from_arg_matches(&matches) {
        Ok(args) => args,
        Err(e) => e.exit(),
    };
    match cmd::run(args) {
        Ok(cmd::Outcome::Ok) => ExitCode::from(EXIT_OK),
        Ok(cmd::Outcome::CheckFailed) => ExitCode::from(EXIT_CHECK_FAILED),
        Err(err) if is_broken_pipe(&err) => ExitCode::from(EXIT_OK),
        Err(err) => {
            // Messages quote the input (names, paths, keys): never raw to a terminal or a log.
            eprintln!(
                "rke2-payload: error: {}",
                rke2_payload::terminal_safe(&one_sentence(&err))
            );
            ExitCode::from(EXIT_ERROR)
        }
    }
}

/// The error and its causes on one line, leaving out causes the previous message already says.
fn one_sentence(err: &anyhow::Error) -> String {
    let mut parts: Vec<String> = Vec::new();
    for cause in err.chain() {
        let text = cause.to_string();
        if parts.last().is_some_and(|prev| prev.contains(&text)) {
            continue;
        }
        parts.push(text);
    }
    parts.join(": ")
}

fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(|cause| {
        cause
            .downcast_ref::<std::io::Error>()
            .is_some_and(|e| e.kind() == std::io::ErrorKind::BrokenPipe)
    })
}
