//! The `rke2-payload` command line, shared by its two binaries (`rke2-payload`, and
//! `kubectl-rke2_payload` for kubectl). Not a library API: use the `rke2-payload` crate.

mod cli;
mod cmd;
mod config;
mod output;

use std::process::ExitCode;

/// Exit code for success.
const EXIT_OK: u8 = 0;
/// Exit code when a check failed (over budget, lint errors).
const EXIT_CHECK_FAILED: u8 = 1;
/// Exit code for usage and input errors.
const EXIT_ERROR: u8 = 2;

/// The name the program is run by: `kubectl rke2-payload` when kubectl runs it as its plugin
/// (`kubectl-rke2_payload`), `rke2-payload` otherwise.
pub(crate) fn program_name() -> &'static str {
    static NAME: std::sync::OnceLock<&'static str> = std::sync::OnceLock::new();
    NAME.get_or_init(|| {
        let plugin = std::env::args_os()
            .next()
            .map(std::path::PathBuf::from)
            .and_then(|p| p.file_stem().map(|s| s.to_string_lossy().into_owned()))
            .is_some_and(|stem| stem.starts_with("kubectl-"));
        if plugin {
            "kubectl rke2-payload"
        } else {
            "rke2-payload"
        }
    })
}

/// Runs the command line on this process's arguments.
pub fn main() -> ExitCode {
    use clap::{CommandFactory as _, FromArgMatches as _};
    let matches = cli::Cli::command().bin_name(program_name()).get_matches();
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
