//! The `rke2-payload` command line, shared by its two binaries (`rke2-payload`, and
//! `kubectl-rke2_payload` for kubectl). Not a library API: use the `rke2-payload` crate.

mod cli;
mod cmd;
mod output;
mod render;

use std::process::ExitCode;

use clap::Parser;

/// Exit code for success.
const EXIT_OK: u8 = 0;
/// Exit code when a check failed (over budget, lint errors).
const EXIT_CHECK_FAILED: u8 = 1;
/// Exit code for usage and input errors.
const EXIT_ERROR: u8 = 2;

/// Runs the command line on this process's arguments.
pub fn main() -> ExitCode {
    let args = cli::Cli::parse();
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
