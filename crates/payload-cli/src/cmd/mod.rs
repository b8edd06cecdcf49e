//! The subcommands.

mod clouds;
mod cluster;
mod completions;
mod decode;
mod diff;
mod encode;
mod inspect;
mod lint;
mod man;
mod redact;
mod render;
mod size;

use std::io::Write as _;
use std::path::Path;

use anyhow::{Context, Result};

use rke2_payload::{BootstrapSecret, DecodeOptions, Selector, Sniffed};

use crate::cli::{Cli, ColorWhen, Command, FROM_CLUSTER, InputArgs};
use crate::style::{ERROR, escape_unsafe, safe, yaml};

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
        Command::Render(args) => render::run(&args),
        Command::Diff(args) => diff::run(&args),
    }
}

/// Reads the input named on the command line (the file, standard input, or the cluster).
pub(crate) fn read_input(args: &InputArgs) -> Result<(Vec<u8>, DecodeOptions)> {
    use std::io::Read as _;
    let options = decode_options(args);
    if !args.from_cluster {
        if args.path().as_os_str() == "-" {
            stdin_is_not_a_terminal()?;
        }
        let bytes = rke2_payload::read_input(args.path(), &options)?;
        return Ok((bytes, options));
    }
    let mut bytes = Vec::new();
    open_input(args)?
        .take(options.max_input.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|error| rke2_payload::Error::Io {
            what: FROM_CLUSTER.to_owned(),
            error,
        })?;
    if bytes.len() as u64 > options.max_input {
        return Err(rke2_payload::Error::InputTooLarge {
            what: FROM_CLUSTER.to_owned(),
            limit: options.max_input,
        }
        .into());
    }
    Ok((bytes, options))
}

/// Standard input with nothing piped in is a mistake, not an input to wait for: the hint, and
/// exit 2.
pub(crate) fn stdin_is_not_a_terminal() -> Result<()> {
    use std::io::IsTerminal as _;
    if std::io::stdin().is_terminal() {
        anyhow::bail!(
            "no input: standard input is a terminal; give a FILE, pipe Secrets in (kubectl get secrets -A -o yaml | {} inspect), or read them with --from-cluster",
            crate::program_name()
        );
    }
    Ok(())
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
    DecodeOptions::new().with_max_inflated(args.max_inflated)
}

/// Opens the input named on the command line for streaming: the file, or standard input.
pub(crate) fn open_input(args: &InputArgs) -> Result<Box<dyn std::io::Read>> {
    if args.from_cluster {
        return Ok(Box::new(cluster::secrets(args)?));
    }
    let path = args.path();
    if path.as_os_str() == "-" {
        stdin_is_not_a_terminal()?;
        return Ok(Box::new(std::io::stdin().lock()));
    }
    let file = std::fs::File::open(path).map_err(|error| rke2_payload::Error::Io {
        what: path.display().to_string(),
        error,
    })?;
    Ok(Box::new(file))
}

/// The Secrets of the input: streamed as they are, or, when the input holds manifests, the
/// bootstrap Secrets `render` makes of them (seed 0, so that reports are repeatable).
pub(crate) fn secrets_input(args: &InputArgs) -> Result<Box<dyn std::io::Read>> {
    Ok(secrets_and_refusals(args)?.0)
}

/// As [`secrets_input`], with the findings of the manifests that say CAPRKE2 (or the API
/// server) refuses an object ([`rke2_payload::Finding::is_refusal`]): a gate fails on them.
pub(crate) fn secrets_and_refusals(
    args: &InputArgs,
) -> Result<(Box<dyn std::io::Read>, Vec<rke2_payload::Finding>)> {
    match secrets_or_findings(args)? {
        Rendered::Secrets(reader, refusals) => Ok((reader, refusals)),
        Rendered::Nothing { name, findings } => Err(nothing_rendered(&name, &findings)),
    }
}

/// What an input gives a report.
pub(crate) enum Rendered {
    /// Secrets to read (streamed, or rendered from manifests), and the manifests' refusals.
    Secrets(Box<dyn std::io::Read>, Vec<rke2_payload::Finding>),
    /// Manifests of which nothing renders, and the findings that say why.
    Nothing {
        /// The input's name.
        name: String,
        /// The preview's findings.
        findings: Vec<rke2_payload::Finding>,
    },
}

/// The Secrets of the input, or, for manifests of which nothing renders, their findings (for
/// `lint`, which reports them).
pub(crate) fn secrets_or_findings(args: &InputArgs) -> Result<Rendered> {
    let name = input_name(args.path());
    match rke2_payload::sniff_input(open_input(args)?, &name, &decode_options(args))? {
        Sniffed::Secrets(reader) => Ok(Rendered::Secrets(Box::new(reader), Vec::new())),
        Sniffed::Manifests(bytes) => {
            let preview = preview_of(&name, &bytes)?;
            if preview.secrets.is_empty() {
                return Ok(Rendered::Nothing {
                    name,
                    findings: preview.findings,
                });
            }
            let refusals = preview
                .findings
                .iter()
                .filter(|f| f.is_refusal())
                .cloned()
                .collect();
            Ok(Rendered::Secrets(
                Box::new(std::io::Cursor::new(preview.to_yaml().into_bytes())),
                refusals,
            ))
        }
    }
}

/// Says on standard error what CAPRKE2 refuses, one finding a line.
pub(crate) fn report_refusals(refusals: &[rke2_payload::Finding]) {
    for f in refusals {
        eprintln!(
            "rke2-payload: error: {}: {}",
            f.check.id(),
            crate::style::safe(&f.message)
        );
    }
}

/// What `render` makes of manifests, as a YAML List of Secrets: seed 0, so that reports (and
/// the two sides of a diff) have the same generated token and CAs. Nothing rendered is an error
/// that says why.
pub(crate) fn rendered(name: &str, bytes: &[u8]) -> Result<Vec<u8>> {
    let preview = preview_of(name, bytes)?;
    if preview.secrets.is_empty() {
        return Err(nothing_rendered(name, &preview.findings));
    }
    Ok(preview.to_yaml().into_bytes())
}

/// The preview of manifests, seed 0.
fn preview_of(name: &str, bytes: &[u8]) -> Result<rke2_payload::Preview> {
    let sources = [rke2_payload::Source { name, bytes }];
    rke2_payload::render(&sources, &rke2_payload::RenderOptions::new().with_seed(0))
        .with_context(|| format!("rendering the manifests of {name}"))
}

/// The error of manifests of which nothing renders, naming the first error found.
pub(crate) fn nothing_rendered(name: &str, findings: &[rke2_payload::Finding]) -> anyhow::Error {
    let why = findings
        .iter()
        .find(|f| f.severity == rke2_payload::Severity::Error)
        .map_or_else(|| "nothing to render".to_owned(), |f| f.message.clone());
    anyhow::anyhow!("rendering the manifests of {name}: nothing was rendered: {why}")
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

/// How a report document is laid out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Layout {
    /// Text blocks for people, separated by a blank line.
    Text,
    /// One JSON document: `{"schema": …, "secrets": [items…], …}`.
    Json,
    /// The same document as YAML.
    Yaml,
}

/// Writes the `secrets` of a report document item by item, in input order, as they come.
/// The document's head is written with the first item (or at the end), so that an input that
/// cannot be read leaves nothing half-written on standard output.
pub(crate) struct Items {
    layout: Layout,
    schema: &'static str,
    written: usize,
}

impl Items {
    pub(crate) fn new(layout: Layout, schema: &'static str) -> Self {
        Items {
            layout,
            schema,
            written: 0,
        }
    }

    fn head(&self, out: &mut impl std::io::Write) -> std::io::Result<()> {
        match self.layout {
            Layout::Json => write!(out, "{{\"schema\":\"{}\",\"secrets\":[", self.schema),
            Layout::Yaml => write!(out, "schema: {}\nsecrets:", self.schema),
            Layout::Text => Ok(()),
        }
    }

    /// One item: a text block, or a Secret's compact JSON object (for both JSON and YAML).
    pub(crate) fn item(&mut self, out: &mut impl std::io::Write, rendered: &[u8]) -> Result<()> {
        match (self.layout, self.written) {
            (Layout::Text, 0) => {}
            (Layout::Text, _) => out.write_all(b"\n")?,
            (_, 0) => {
                self.head(out)?;
                out.write_all(b"\n")?;
            }
            (Layout::Json, _) => out.write_all(b",\n")?,
            (Layout::Yaml, _) => {}
        }
        match self.layout {
            Layout::Text => out.write_all(rendered)?,
            Layout::Json => out.write_all(&escape_unsafe(rendered, false))?,
            Layout::Yaml => out.write_all(yaml_item(rendered)?.as_bytes())?,
        }
        self.written += 1;
        Ok(())
    }

    /// Closes the document with its other fields (values as JSON literals: numbers, booleans).
    pub(crate) fn finish(
        self,
        out: &mut impl std::io::Write,
        fields: &[(&str, String)],
    ) -> std::io::Result<()> {
        match self.layout {
            Layout::Text => Ok(()),
            Layout::Json => {
                if self.written == 0 {
                    self.head(out)?;
                }
                out.write_all(b"\n]")?;
                for (key, value) in fields {
                    write!(out, ",\"{key}\":{value}")?;
                }
                out.write_all(b"}\n")
            }
            Layout::Yaml => {
                if self.written == 0 {
                    self.head(out)?;
                    out.write_all(b" []\n")?;
                }
                for (key, value) in fields {
                    writeln!(out, "{key}: {value}")?;
                }
                Ok(())
            }
        }
    }
}

/// One compact JSON item as an entry of a YAML sequence.
fn yaml_item(json: &[u8]) -> Result<String> {
    let value: serde_json::Value = serde_json::from_slice(json)?;
    let text = yaml(&value)?;
    let mut item = String::with_capacity(text.len() + 64);
    for (i, line) in text.lines().enumerate() {
        item.push_str(if i == 0 { "- " } else { "  " });
        item.push_str(line);
        item.push('\n');
    }
    Ok(item)
}

/// The item that stands for a Secret that cannot be read: a text line, or (for JSON and YAML) an
/// object with its names, its line in the input and an `error` object.
pub(crate) fn error_item(secret: &BootstrapSecret<'_>, message: &str, layout: Layout) -> Vec<u8> {
    if layout != Layout::Text {
        let item = serde_json::json!({
            "name": secret.name(),
            "namespace": secret.namespace(),
            "cluster": secret.cluster(),
            "line": secret.line(),
            "error": {"message": message},
        });
        return serde_json::to_vec(&item).unwrap_or_default();
    }
    let mut buf = styled();
    // A message from the library names the Secret and is terminal-safe already.
    let _ = writeln!(buf, "{ERROR}error{ERROR:#}: {}", safe(message));
    buf.into_inner()
}

/// The end of a run in which some Secrets could not be read (each was reported as an item):
/// exit 2 with the one error, or how many there were.
pub(crate) fn unreadable_secrets(path: &Path, errors: &[impl std::fmt::Display]) -> Result<()> {
    match errors {
        [] => Ok(()),
        [one] => anyhow::bail!("reading {}: {one}", input_name(path)),
        many => anyhow::bail!(
            "reading {}: {} Secrets could not be read (each is reported in the output)",
            input_name(path),
            many.len()
        ),
    }
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
