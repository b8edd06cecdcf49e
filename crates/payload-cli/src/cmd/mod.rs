//! The subcommands.

mod clouds;
mod cluster;
mod completions;
mod decode;
mod diff;
mod doctor;
mod encode;
mod inspect;
mod lint;
mod man;
mod redact;
mod render;
mod schema;
mod size;
mod version;

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

pub(crate) use payload_preview::Door;
use rke2_payload::{DecodeOptions, Input, Selector};

use crate::cli::{Cli, ColorWhen, Command, FROM_CLUSTER, InputArgs};

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
        Command::Doctor(args) => doctor::run(&args),
        Command::Version(args) => version::run(&args),
        Command::Schema(args) => schema::run(&args),
    }
}

/// An input read whole: its name for messages, its bytes.
pub(crate) type Named = (String, Vec<u8>);

/// Reads the input named on the command line whole: each file (folders expanded), standard
/// input, or the cluster's output, with its name for messages.
pub(crate) fn read_inputs(args: &InputArgs) -> Result<(Vec<Named>, DecodeOptions)> {
    let options = decode_options(args);
    if !args.from_cluster {
        let mut inputs = Vec::new();
        for path in input_files(args)? {
            if path.as_os_str() == "-" {
                stdin_is_not_a_terminal()?;
            }
            let bytes = rke2_payload::read_input(&path, &options)?;
            inputs.push((input_name(&path), bytes));
        }
        return Ok((inputs, options));
    }
    let bytes = rke2_payload::read_all(cluster::secrets(args)?, FROM_CLUSTER, &options)?;
    Ok((vec![(FROM_CLUSTER.to_owned(), bytes)], options))
}

/// The one bootstrap Secret the selection flags pick among every input read whole, and the
/// index of the input that holds it. One input keeps its own messages; with several, "no
/// such Secret" and "several match" count them all.
pub(crate) fn select_one<'a>(
    inputs: &'a [(String, Vec<u8>)],
    options: &DecodeOptions,
    selector: &Selector,
) -> Result<(usize, rke2_payload::BootstrapSecret<'a>)> {
    let context = |name: &str| format!("reading {name}");
    if let [(name, bytes)] = inputs {
        let envelope =
            rke2_payload::Envelope::parse(bytes, options).with_context(|| context(name))?;
        let secret = envelope.select(selector).with_context(|| context(name))?;
        return Ok((0, secret.clone()));
    }
    let mut found = Vec::new();
    let mut available = 0;
    for (i, (name, bytes)) in inputs.iter().enumerate() {
        match rke2_payload::Envelope::parse(bytes, options) {
            Ok(envelope) => {
                available += envelope.secrets.len();
                found.extend(
                    envelope
                        .secrets
                        .into_iter()
                        .filter(|s| selector.matches(s))
                        .map(|s| (i, s)),
                );
            }
            Err(e) if e.holds_no_bootstrap_secret() => {}
            Err(e) => return Err(anyhow::Error::new(e).context(context(name))),
        }
    }
    let what = format!("{} inputs", inputs.len());
    match found.len() {
        1 => Ok(found.remove(0)),
        0 => Err(anyhow::Error::new(rke2_payload::Error::SecretNotFound {
            wanted: selector.to_string(),
            available,
        })
        .context(context(&what))),
        count => {
            let names: Vec<String> = found.iter().map(|(_, s)| s.id().to_string()).collect();
            Err(anyhow::Error::new(rke2_payload::Error::Ambiguous {
                count,
                names: names.join(", "),
            })
            .context(context(&what)))
        }
    }
}

/// Standard input with nothing piped in is a mistake, not an input to wait for: the hint, and
/// exit 2.
pub(crate) fn stdin_is_not_a_terminal() -> Result<()> {
    use std::io::IsTerminal as _;
    if std::io::stdin().is_terminal() {
        anyhow::bail!(
            "no input: standard input is a terminal; give a FILE, pipe Secrets in (kubectl get secrets -A -o yaml | {} {}), or read them with --from-cluster",
            crate::program_name(),
            crate::subcommand_name()
        );
    }
    Ok(())
}

/// The Secrets the selection flags pick (`-n`, `--name`, `-l`, `--cluster-name`). Every reader
/// asks for it first: kubectl's flags without --from-cluster are refused here.
pub(crate) fn selector(args: &InputArgs) -> Result<Selector> {
    cluster::only_from_cluster(args.from_cluster, &args.kubectl)?;
    let mut selector = Selector::default();
    if let Some(namespace) = &args.namespace {
        selector = selector.with_namespace(namespace)?;
    }
    if let Some(name) = &args.name {
        selector = selector.with_name(name)?;
    }
    if let Some(cluster) = &args.cluster_name {
        selector = selector.with_cluster(cluster)?;
    }
    for labels in &args.selector {
        selector = selector.with_labels(labels)?;
    }
    Ok(selector)
}

/// The decode options the input flags ask for.
pub(crate) fn decode_options(args: &InputArgs) -> DecodeOptions {
    DecodeOptions::new()
        .with_max_inflated(args.max_inflated)
        .with_render_annotations(args.from_render)
}

/// The files the input names, folders expanded (every manifest file in and below them).
pub(crate) fn input_files(args: &InputArgs) -> Result<Vec<PathBuf>> {
    Ok(rke2_payload::input_files(&args.paths(), true)?)
}

/// Opens one input file for streaming: the file, or standard input for `-`.
fn open_file(path: &Path) -> Result<Box<dyn std::io::Read>> {
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

/// The Secrets of the input, streamed as they are, or, where the input holds template
/// manifests, also the bootstrap Secrets `render` makes of them (seed 0, so that reports are
/// repeatable) for the Clusters whose Secrets the input does not hold.
pub(crate) fn secrets_input(args: &InputArgs) -> Result<Input<'static>> {
    Ok(secrets_and_refusals(args)?.0)
}

/// As [`secrets_input`], with the findings of the manifests that say CAPRKE2 (or the API
/// server) refuses an object ([`rke2_payload::Finding::is_refusal`]): a gate fails on them.
pub(crate) fn secrets_and_refusals(
    args: &InputArgs,
) -> Result<(Input<'static>, Vec<rke2_payload::Finding>)> {
    let door = secrets_or_findings(args, None)?;
    let refusals = door.refusals();
    match door {
        Door::Secrets { input, .. } => Ok((input, refusals)),
        Door::Nothing {
            name,
            findings,
            classes,
        } => Err(nothing_rendered(&name, &findings, &classes)),
        _ => anyhow::bail!("the input opened on something this version cannot read"),
    }
}

/// What the input gives a report, through the library's one door
/// ([`payload_preview::open`]): the cluster's output, or each file and standard input.
///
/// `stdin_name` is what standard input stands for (`--stdin-filename`), as findings name it.
pub(crate) fn secrets_or_findings(args: &InputArgs, stdin_name: Option<&Path>) -> Result<Door> {
    let options = decode_options(args);
    let sources: Vec<payload_preview::Named> = if args.from_cluster {
        vec![(FROM_CLUSTER.to_owned(), Box::new(cluster::secrets(args)?))]
    } else {
        let mut sources = Vec::new();
        for file in input_files(args)? {
            let name = match stdin_name {
                Some(name) if file.as_os_str() == "-" => name.display().to_string(),
                _ => input_name(&file),
            };
            sources.push((name, open_file(&file)?));
        }
        sources
    };
    let door = payload_preview::open(sources, &options, &render_options())?;
    if let Door::Secrets {
        answer: Some(answer),
        ..
    } = &door
    {
        tell_read_and_previewed(answer);
    }
    Ok(door)
}

/// The options every report renders manifests with: seed 0, so that reports (and the two
/// sides of a diff) have the same generated token and CAs.
fn render_options() -> payload_preview::RenderOptions {
    payload_preview::RenderOptions::new().with_seed(0)
}

/// Says on standard error which Secrets were read as the input holds them and which were
/// previewed from its templates, when an input has both (or previews were left out for
/// Secrets the input holds).
fn tell_read_and_previewed(answer: &payload_preview::Answer) {
    let previewed = answer.preview.secrets.len();
    if answer.read > 0 && (previewed > 0 || answer.answered > 0) {
        eprintln!(
            "rke2-payload: {} bootstrap Secret(s) read as the input holds them, {previewed} previewed from its templates{}",
            answer.read,
            match answer.answered {
                0 => String::new(),
                n => format!(" ({n} preview(s) left out: the input holds their Clusters' Secrets)"),
            }
        );
    }
}

/// Says on standard error how many bootstrap Secrets were passed over as another provider's,
/// and whose.
pub(crate) fn report_skipped(skipped: &[rke2_payload::SkippedSecret]) {
    if skipped.is_empty() {
        return;
    }
    let mut providers: Vec<&str> = skipped.iter().map(|s| s.provider.as_str()).collect();
    providers.sort_unstable();
    providers.dedup();
    eprintln!(
        "rke2-payload: skipped {} bootstrap Secret(s) of other providers ({}): not RKE2's",
        skipped.len(),
        providers.join(", ")
    );
}

/// Says on standard error what CAPRKE2 refuses, one finding a line.
pub(crate) fn report_refusals(refusals: &[rke2_payload::Finding]) {
    for f in refusals {
        eprintln!(
            "rke2-payload: error: {}: {}",
            f.check.id(),
            payload_printer::style::safe(&f.message)
        );
    }
}

/// What `render` makes of manifests, as a YAML List of Secrets: seed 0, so that reports (and
/// the two sides of a diff) have the same generated token and CAs. Nothing rendered is an error
/// that says why.
pub(crate) fn rendered(name: &str, bytes: &[u8]) -> Result<Vec<u8>> {
    let sources = [payload_preview::Source { name, bytes }];
    let preview = payload_preview::render(&sources, &render_options())
        .with_context(|| format!("rendering the manifests of {name}"))?;
    if preview.secrets.is_empty() {
        return Err(nothing_rendered(name, &preview.findings, &preview.classes));
    }
    Ok(preview.to_yaml().into_bytes())
}

/// The error of manifests of which nothing renders, naming the first error found, else the
/// ClusterClasses no Cluster uses (`classes`).
pub(crate) fn nothing_rendered(
    name: &str,
    findings: &[rke2_payload::Finding],
    classes: &[String],
) -> anyhow::Error {
    let why = findings
        .iter()
        .find(|f| f.severity == rke2_payload::Severity::Error)
        .map(|f| f.message.clone())
        .or_else(|| {
            (!classes.is_empty()).then(|| {
                format!(
                    "no Cluster of the input uses {} (`{} lint` checks a ClusterClass on its own)",
                    classes.join(", "),
                    crate::program_name()
                )
            })
        })
        .unwrap_or_else(|| "nothing to render".to_owned());
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
