//! The subcommands.

mod clouds;
mod completions;
mod decode;
mod encode;
mod inspect;
mod lint;
mod man;
mod redact;
mod size;

use std::path::Path;

use anyhow::{Context, Result};
use rke2_payload::{DecodeOptions, Selector};

use crate::cli::{Cli, ColorWhen, Command, InputArgs};

/// How a command ended, when it did not fail.
pub(crate) enum Outcome {
    /// Everything passed.
    Ok,
    /// A check failed (exit code 1).
    CheckFailed,
}

pub(crate) fn run(cli: Cli) -> Result<Outcome> {
    anstream::ColorChoice::write_global(match cli.color {
        ColorWhen::Auto => anstream::ColorChoice::Auto,
        ColorWhen::Always => anstream::ColorChoice::Always,
        ColorWhen::Never => anstream::ColorChoice::Never,
    });
    match cli.command {
        Command::Decode(args) => decode::run(&args),
        Command::Clouds(args) => clouds::run(&args),
        Command::Completions(args) => completions::run(&args),
        Command::Man(args) => man::run(&args),
        Command::Inspect(args) => inspect::run(&args),
        Command::Size(args) => size::run(&args),
        Command::Lint(args) => lint::run(&args),
        Command::Encode(args) => encode::run(&args),
        Command::Redact(args) => redact::run(&args),
    }
}

/// Reads the input named on the command line.
pub(crate) fn read_input(args: &InputArgs) -> Result<(Vec<u8>, DecodeOptions)> {
    let options = decode_options(args);
    let bytes = rke2_payload::read_input(args.path(), &options)?;
    Ok((bytes, options))
}

/// The Secrets the selection flags pick (`-n`, `--name`, `-l`, `--cluster`).
pub(crate) fn selector(args: &InputArgs) -> Result<Selector> {
    let mut selector = Selector::default();
    if let Some(namespace) = &args.namespace {
        selector = selector.with_namespace(namespace)?;
    }
    if let Some(name) = &args.name {
        selector = selector.with_name(name)?;
    }
    if let Some(cluster) = &args.cluster {
        selector = selector.with_cluster(cluster)?;
    }
    for labels in &args.selector {
        selector = selector.with_labels(labels)?;
    }
    Ok(selector)
}

/// The decode options the input flags ask for.
pub(crate) fn decode_options(args: &InputArgs) -> DecodeOptions {
    DecodeOptions::default().with_max_inflated(args.max_inflated)
}

/// Opens the input named on the command line for streaming: the file, or standard input.
pub(crate) fn open_input(args: &InputArgs) -> Result<Box<dyn std::io::Read>> {
    let path = args.path();
    if path.as_os_str() == "-" {
        return Ok(Box::new(std::io::stdin().lock()));
    }
    let file = std::fs::File::open(path).map_err(|error| rke2_payload::Error::Io {
        what: path.display().to_string(),
        error,
    })?;
    Ok(Box::new(file))
}

/// The end of a stream: an input error gets "reading FILE" context; the sink's own error (a
/// write to standard output) is passed on as it is.
pub(crate) fn streamed<T>(
    result: Result<T, rke2_payload::StreamError<anyhow::Error>>,
    path: &Path,
) -> Result<T> {
    match result {
        Ok(value) => Ok(value),
        Err(rke2_payload::StreamError::Input(e)) => in_input(Err(e), path),
        Err(rke2_payload::StreamError::Sink(e)) => Err(e),
    }
}

/// Writes the rendering of the `written`-th Secret (from 0): in a JSON array whose `head` is
/// written with the first one (so a failed input leaves nothing half-written), or as text
/// blocks separated by a blank line.
pub(crate) fn write_item(
    out: &mut impl std::io::Write,
    json: Option<&str>,
    written: usize,
    rendered: &[u8],
) -> std::io::Result<()> {
    match (json, written) {
        (Some(head), 0) => {
            out.write_all(head.as_bytes())?;
            out.write_all(b"\n")?;
        }
        (Some(_), _) => out.write_all(b",\n")?,
        (None, 0) => {}
        (None, _) => out.write_all(b"\n")?,
    }
    out.write_all(rendered)
}

/// Standard output for machine-readable formats: buffered, no colour processing.
pub(crate) fn raw_stdout() -> std::io::BufWriter<std::io::StdoutLock<'static>> {
    std::io::BufWriter::with_capacity(1 << 16, std::io::stdout().lock())
}

/// A buffer for styled text that keeps colour only where standard output shows it.
pub(crate) fn styled() -> anstream::AutoStream<Vec<u8>> {
    anstream::AutoStream::new(Vec::new(), anstream::AutoStream::choice(&std::io::stdout()))
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
