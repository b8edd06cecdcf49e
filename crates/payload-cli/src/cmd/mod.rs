//! The subcommands.

mod clouds;
mod decode;
mod encode;
mod inspect;
mod lint;
mod redact;
mod size;

use std::path::Path;

use anyhow::{Context, Result};
use rke2_payload::DecodeOptions;

use crate::cli::{Cli, Command, InputArgs};

/// How a command ended, when it did not fail.
pub(crate) enum Outcome {
    /// Everything passed.
    Ok,
    /// A check failed (exit code 1).
    CheckFailed,
}

pub(crate) fn run(cli: Cli) -> Result<Outcome> {
    match cli.command {
        Command::Decode(args) => decode::run(&args),
        Command::Clouds(args) => clouds::run(&args),
        Command::Inspect(args) => inspect::run(&args),
        Command::Size(args) => size::run(&args),
        Command::Lint(args) => lint::run(&args),
        Command::Encode(args) => encode::run(&args),
        Command::Redact(args) => redact::run(&args),
    }
}

/// Reads the input named on the command line.
pub(crate) fn read_input(args: &InputArgs) -> Result<(Vec<u8>, DecodeOptions)> {
    let bytes = rke2_payload::input::read(&args.file)?;
    let options = DecodeOptions::default().with_max_inflated(args.max_inflated);
    Ok((bytes, options))
}

/// How to name the input in messages.
pub(crate) fn input_name(path: &Path) -> String {
    if path.as_os_str() == "-" {
        "standard input".to_owned()
    } else {
        path.display().to_string()
    }
}

/// Adds "reading FILE" context to a library error.
pub(crate) fn in_input<T>(result: Result<T, rke2_payload::Error>, path: &Path) -> Result<T> {
    result.with_context(|| format!("reading {}", input_name(path)))
}
