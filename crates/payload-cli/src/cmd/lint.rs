//! `rke2-payload lint`.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context as _, Result};
use payload_printer::{Repository, github, gitlab, junit, lint, sarif};
use rke2_payload::{LintError, LintOptions, LintReport, Linter, SizeOptions};

use super::size::cloud_targets;
use super::{
    Door, Outcome, decode_options, in_input, nothing_rendered, secrets_or_findings, selector,
    unreadable_secrets,
};
use crate::cli::{FROM_CLUSTER, LintArgs, LintFormat};
use crate::output::{raw_stdout, styled};

pub(crate) fn run(args: &LintArgs) -> Result<Outcome> {
    if args.list_checks {
        return list_checks(args.output);
    }
    let path = args.input.path();
    let paths = args.input.paths();
    let reads_stdin = !args.input.from_cluster && paths.iter().any(|p| p.as_os_str() == "-");
    // Where the reports locate the input: the file, or what --stdin-filename says standard
    // input stands for.
    let located = match &args.stdin_filename {
        Some(name) if path.as_os_str() == "-" && reads_stdin => name.as_path(),
        Some(_) if reads_stdin => path,
        Some(_) => anyhow::bail!(
            "--stdin-filename names what standard input stands for, and the input is {}",
            super::input_name(path)
        ),
        None => path,
    };
    // What was linted, as named: the SARIF run's id.
    let linted: Vec<String> = if args.input.from_cluster {
        vec!["cluster".to_owned()]
    } else {
        paths
            .iter()
            .map(|p| match &args.stdin_filename {
                Some(name) if p.as_os_str() == "-" => name.display().to_string(),
                _ => p.display().to_string(),
            })
            .collect()
    };
    let defaults = crate::config::load(&args.config)?.lint;
    if args.show.quiet && args.output != LintFormat::Text {
        anyhow::bail!("--quiet writes the text report's findings alone; leave out -o, or --quiet");
    }
    let selector = selector(&args.input)?;
    // A flag given wins over the config file; the checks allowed add up.
    let clouds = match (&args.cloud, &defaults.cloud) {
        (given, Some(file)) if given.is_empty() => file.clone(),
        (given, _) => given.clone(),
    };
    let targets = cloud_targets(&clouds)?;
    let headroom = args.headroom.or(defaults.headroom).unwrap_or(0.0);
    let cert_expiry_days = args
        .cert_expiry_days
        .or(defaults.cert_expiry_days)
        .unwrap_or(30);
    let min_severity = args.show.min_severity.or(defaults.min_severity).map_or(
        rke2_payload::Severity::Info,
        crate::config::MinSeverity::severity,
    );
    let mut allow = defaults.allowed();
    for check in &args.allow {
        if !allow.contains(check) {
            allow.push(*check);
        }
    }
    let deny_warnings = match args.deny.as_deref() {
        Some(given) => given == "warnings",
        None => defaults.deny == Some(crate::config::Deny::Warnings),
    };
    // Without --cloud, a Secret rendered from manifests is still held to the limit of the
    // path its infrastructure template sends it by.
    let size = SizeOptions::new()
        .with_follow_delivery(targets.is_empty())
        .with_targets(targets)
        .with_headroom_percent(headroom)
        .with_contributors(false);
    // The bundled schema unless told otherwise: the verdict must not depend on the cloud-init
    // the runner happens to have installed.
    let cloud_init_schema = match &args.cloud_init_schema {
        Some(path) if path.as_os_str() == "none" => None,
        Some(path) if path.as_os_str() == "installed" => Some(std::sync::Arc::new(
            rke2_payload::CloudInitSchema::find().ok_or_else(|| {
                anyhow::anyhow!(
                    "cloud-init schema: none is installed (looked at {})",
                    rke2_payload::CLOUD_INIT_SCHEMA_PATHS.join(", ")
                )
            })?,
        )),
        Some(path) => Some(std::sync::Arc::new(
            rke2_payload::CloudInitSchema::load(path)
                .map_err(|e| anyhow::anyhow!("cloud-init schema: {e}"))?,
        )),
        None => Some(std::sync::Arc::new(
            rke2_payload::CloudInitSchema::bundled()
                .map_err(|e| anyhow::anyhow!("the bundled cloud-init schema: {e}"))?,
        )),
    };
    let linter = Linter::new(
        LintOptions::new()
            .with_decode(decode_options(&args.input))
            .with_cert_expiry_days(cert_expiry_days)
            .with_size(Some(size))
            .with_allow(allow)
            .with_min_severity(min_severity)
            .with_cloud_init_schema(cloud_init_schema),
    );
    let report = match secrets_or_findings(&args.input, args.stdin_filename.as_deref())? {
        // Manifests of which nothing renders: their findings are the report.
        Door::Nothing {
            findings, classes, ..
        } if !findings.is_empty() || !classes.is_empty() => {
            if !classes.is_empty() && !args.show.quiet {
                eprintln!(
                    "rke2-payload: {} checked on its own: no Cluster of the input uses it, so nothing is rendered",
                    payload_printer::style::safe(&classes.join(", "))
                );
            }
            linter.lint_unrendered(findings)
        }
        Door::Nothing {
            name,
            findings,
            classes,
        } => return Err(nothing_rendered(&name, &findings, &classes)),
        Door::Secrets { input, .. } => {
            match linter.lint_stream(input, &selector, args.input.jobs) {
                Ok(report) => report,
                Err(LintError::Input(e)) => return in_input(Err(e), path),
                Err(e) => return Err(e.into()),
            }
        }
        _ => anyhow::bail!("the input opened on something this version cannot read"),
    };
    // Each object of both revisions, checked as an update of the previous one.
    let report = if args.previous.is_empty() {
        report
    } else {
        linter.with_manifest_findings(report, update_findings(args)?)
    };
    let mut out = raw_stdout();
    if args.show.quiet {
        let mut buf = styled();
        lint::findings_text(&mut buf, &report)?;
        out.write_all(&buf.into_inner())?;
    } else {
        let linted: Vec<&str> = linted.iter().map(String::as_str).collect();
        write_report(
            &mut out,
            &report,
            input_file(located),
            &linted,
            args.output,
            deny_warnings,
        )?;
    }
    out.flush()?;
    if !args.show.quiet {
        super::report_skipped(&report.skipped);
    }
    let errors: Vec<&str> = report
        .secrets
        .iter()
        .filter_map(|s| s.error.as_ref().map(|e| e.message.as_str()))
        .collect();
    unreadable_secrets(path, &errors)?;
    Ok(if report.fails(deny_warnings) {
        Outcome::CheckFailed
    } else {
        Outcome::Ok
    })
}

/// What the admission webhooks refuse when the manifests of `--previous` are updated to the
/// input's. Both are read again, whole, as files (standard input cannot be read twice).
fn update_findings(args: &LintArgs) -> Result<Vec<rke2_payload::Finding>> {
    let options = decode_options(&args.input);
    let read = |paths: &[PathBuf], what: &str| -> Result<Vec<(String, Vec<u8>)>> {
        let mut out = Vec::new();
        for path in rke2_payload::input_files(paths, true)? {
            if path.as_os_str() == "-" {
                anyhow::bail!(
                    "--previous compares files: give {what} as a file or a folder, not standard input"
                );
            }
            let name = super::input_name(&path);
            let file = std::fs::File::open(&path)
                .with_context(|| format!("reading {}", payload_printer::style::safe(&name)))?;
            let bytes = rke2_payload::read_all(file, &name, &options)?;
            out.push((name, bytes));
        }
        Ok(out)
    };
    let previous = read(&args.previous, "the previous revision")?;
    let current = read(&args.input.paths(), "the current revision")?;
    payload_preview::updates(&sources(&previous), &sources(&current))
        .context("comparing with the previous revision")
}

/// Files read whole as the preview's sources.
fn sources(files: &[(String, Vec<u8>)]) -> Vec<payload_preview::Source<'_>> {
    files
        .iter()
        .map(|(name, bytes)| payload_preview::Source { name, bytes })
        .collect()
}

/// Writes the report in `format`; `input` is the file the input stands for (`None`: standard
/// input or the cluster, with no name), `linted` every input as named (SARIF's run id);
/// `deny_warnings` says which Secrets `-o name` lists.
fn write_report(
    out: &mut impl Write,
    report: &LintReport,
    input: Option<&Path>,
    linted: &[&str],
    format: LintFormat,
    deny_warnings: bool,
) -> Result<()> {
    match format {
        LintFormat::Name => lint::names(out, report, deny_warnings)?,
        LintFormat::Json => lint::json(out, report)?,
        LintFormat::Yaml => lint::yaml(out, report)?,
        LintFormat::Sarif => sarif::write(out, report, input, linted, &repository())?,
        LintFormat::Text => {
            let mut buf = styled();
            lint::text(&mut buf, report)?;
            out.write_all(&buf.into_inner())?;
        }
        LintFormat::Github => {
            let summary = std::env::var_os("GITHUB_STEP_SUMMARY");
            github::annotations(out, report, input, &repository(), summary.is_some())?;
            if let Some(file) = summary {
                step_summary(Path::new(&file), report, input)?;
            }
        }
        LintFormat::Gitlab => gitlab::write(out, report, input)?,
        LintFormat::Junit => junit::lint(out, report)?,
    }
    Ok(())
}

/// Appends the Markdown summary of every finding to the step summary file the GitHub runner
/// named (created 0600 if missing), within what GitHub's limit leaves of the file.
fn step_summary(file: &Path, report: &LintReport, input: Option<&Path>) -> Result<()> {
    let mut options = std::fs::OpenOptions::new();
    options.append(true).create(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let mut summary = options
        .open(file)
        .with_context(|| format!("writing the step summary {}", file.to_string_lossy()))?;
    let already = summary.metadata().map_or(0, |m| m.len());
    let budget = github::STEP_SUMMARY_LIMIT.saturating_sub(already);
    // One write, so that the file never holds half a summary.
    let mut text = Vec::new();
    github::step_summary(&mut text, report, input, budget)?;
    summary.write_all(&text)?;
    Ok(())
}

/// The input file as the reports name it: `None` for standard input and for the cluster.
fn input_file(path: &Path) -> Option<&Path> {
    (path.as_os_str() != "-" && path.as_os_str() != FROM_CLUSTER).then_some(path)
}

/// Where the reports' files are: the working directory and the repository it is in (the
/// nearest ancestor with `.git`, else `GITHUB_WORKSPACE`).
fn repository() -> Repository {
    let cwd = std::env::current_dir().unwrap_or_default();
    let root = cwd
        .ancestors()
        .find(|d| d.join(".git").exists())
        .map(Path::to_path_buf)
        .or_else(|| std::env::var_os("GITHUB_WORKSPACE").map(PathBuf::from));
    Repository::new(cwd, root)
}

/// `lint --list-checks`: the check table, as text or JSON.
fn list_checks(format: LintFormat) -> Result<Outcome> {
    let mut out = raw_stdout();
    match format {
        LintFormat::Json | LintFormat::Sarif | LintFormat::Gitlab => lint::checks_json(&mut out)?,
        LintFormat::Yaml => lint::checks_yaml(&mut out)?,
        LintFormat::Text | LintFormat::Github | LintFormat::Junit => lint::checks_text(&mut out)?,
        LintFormat::Name => lint::checks_names(&mut out)?,
    }
    out.flush()?;
    Ok(Outcome::Ok)
}
