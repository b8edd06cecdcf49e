//! `rke2-payload man [SUBCOMMAND] [--dir DIR]`.
//!
//! clap_mangen writes the usual sections (NAME, SYNOPSIS, DESCRIPTION, OPTIONS, SUBCOMMANDS,
//! VERSION); this adds EXIT STATUS and ENVIRONMENT, and writes the `Examples:` of a command's
//! help as an EXAMPLES section whose commands are set unfilled (`.nf`), one to a line, never
//! wrapped mid-command as clap_mangen's EXTRA section would.

use std::io::Write;

use anyhow::{Context, Result, bail};
use clap::CommandFactory;
use roff::{Roff, bold, roman};

use super::Outcome;
use crate::cli::{Cli, ManArgs};
use crate::output::write_file;

/// What each exit code means for a subcommand (`None`: the tool's own page).
fn exit_status(subcommand: Option<&str>) -> Vec<(u8, &'static str)> {
    let failed = match subcommand {
        None => Some(
            "A check failed: size (a Secret over a limit), lint (an error finding), render \
             (manifests CAPRKE2 would refuse), diff (something differs), doctor (a broken link); \
             each page says when.",
        ),
        Some("size") => {
            Some("A Secret does not fit a chosen limit (less the headroom), or its --budget.")
        }
        Some("lint") => Some("An error finding, or a warning with --deny warnings."),
        Some("render") => Some(
            "A finding says CAPRKE2 or the API server would refuse the manifests (the preview is \
             still written).",
        ),
        Some("diff") => Some("Something differs (after --ignore)."),
        Some("doctor") => Some("A link is broken, or one warns with --deny warnings."),
        Some(_) => None,
    };
    let ok = match subcommand {
        Some("diff") => "Nothing differs.",
        Some("doctor") => "No link of the join chain is broken.",
        _ => "Success.",
    };
    let mut out = vec![(0, ok)];
    out.extend(failed.map(|f| (1, f)));
    out.push((
        2,
        match subcommand {
            Some("render") => {
                "A usage error (unknown flag, bad value), an input error (a file that cannot be \
                 read or parsed), or nothing of the input renders (CAPRKE2 would write no \
                 bootstrap Secret: the findings say why); one sentence on standard error says \
                 which, and nothing is written on standard output."
            }
            _ => {
                "A usage error (unknown flag, bad value) or an input error (a file that cannot be \
                 read or parsed, kubectl failing); one sentence on standard error says which."
            }
        },
    ));
    out
}

/// Which pages name a variable.
enum Applies {
    /// Every page: the colour of text output (`--color auto`).
    All,
    /// The commands that can read the cluster (`--from-cluster`).
    FromCluster,
    /// One subcommand.
    Only(&'static str),
}

/// The environment variables the tool reads, directly or through kubectl.
const ENVIRONMENT: [(&str, &str, Applies); 8] = [
    (
        "NO_COLOR",
        "When set (to anything), text output has no colour unless --color always.",
        Applies::All,
    ),
    (
        "CLICOLOR_FORCE",
        "When set (not 0), text output is coloured even when not written to a terminal, \
         unless --color never or NO_COLOR.",
        Applies::All,
    ),
    (
        "CLICOLOR",
        "0 turns colour off; any other value turns it on on a terminal whatever TERM says.",
        Applies::All,
    ),
    (
        "TERM",
        "dumb (or unset, outside CI) means no colour with --color auto.",
        Applies::All,
    ),
    (
        "KUBECTL",
        "The kubectl program --from-cluster runs (default: kubectl on the PATH).",
        Applies::FromCluster,
    ),
    (
        "KUBECONFIG",
        "Read by kubectl, not by this tool: the kubeconfig files --from-cluster uses when \
         --kubeconfig is not given (kubectl's default: ~/.kube/config).",
        Applies::FromCluster,
    ),
    (
        "GITHUB_STEP_SUMMARY",
        "With -o github: the file the Markdown summary of the findings is appended to (the \
         GitHub Actions runner sets it).",
        Applies::Only("lint"),
    ),
    (
        "GITHUB_WORKSPACE",
        "The repository's folder, when the working directory is in none (no .git above it): \
         the findings' paths are relative to it.",
        Applies::Only("lint"),
    ),
];

/// Whether a subcommand reads the cluster (it has `--from-cluster`).
fn reads_cluster(command: &clap::Command) -> bool {
    command
        .get_arguments()
        .any(|a| a.get_id() == "from_cluster")
}

/// The page of the tool (`None`) or of one subcommand, as roff.
fn page(subcommand: Option<&str>) -> Result<Vec<u8>> {
    let tool = Cli::command();
    let command = match subcommand {
        None => tool.clone(),
        Some(name) => {
            let Some(sub) = tool.find_subcommand(name) else {
                let names: Vec<&str> = tool.get_subcommands().map(|c| c.get_name()).collect();
                bail!("no subcommand {name:?}; known: {}", names.join(", "));
            };
            // A page of its own: `rke2-payload-inspect(1)`.
            sub.clone().name(format!("rke2-payload-{name}"))
        }
    };
    let examples = command
        .get_after_long_help()
        .or_else(|| command.get_after_help())
        .map(|h| h.to_string())
        .unwrap_or_default();
    // The examples are written below, unfilled: clap_mangen's EXTRA section would fill them.
    let command = command
        .after_help(None::<&str>)
        .after_long_help(None::<&str>);
    let mut out = Vec::new();
    clap_mangen::Man::new(command.clone()).render(&mut out)?;

    let mut more = Roff::new();
    more.control("SH", ["EXIT STATUS"]);
    for (code, what) in exit_status(subcommand) {
        more.control("TP", [])
            .text([bold(code.to_string())])
            .text([roman(what)]);
    }
    more.control("SH", ["ENVIRONMENT"]);
    for (name, what, applies) in &ENVIRONMENT {
        let on_this_page = match (applies, subcommand) {
            (Applies::All, _) | (_, None) => true,
            (Applies::FromCluster, Some(_)) => reads_cluster(&command),
            (Applies::Only(only), Some(sub)) => *only == sub,
        };
        if !on_this_page {
            continue;
        }
        let mut what = (*what).to_owned();
        if subcommand.is_none() {
            match applies {
                Applies::All => {}
                Applies::FromCluster => what.push_str(" (the subcommands with --from-cluster)"),
                Applies::Only(only) => what.push_str(&format!(" ({only})")),
            }
        }
        more.control("TP", [])
            .text([bold(*name)])
            .text([roman(what)]);
    }
    examples_section(&mut more, &examples);
    more.control("SH", ["SEE ALSO"]);
    let mut see = Vec::new();
    if subcommand.is_some() {
        see.push("rke2-payload(1)".to_owned());
    }
    if subcommand.is_none() || reads_cluster(&command) {
        see.push("kubectl(1)".to_owned());
    }
    more.text([roman(see.join(", "))]);
    // The preamble (the apostrophe string) is already at the top of clap_mangen's page.
    let text = more.render();
    let preamble = Roff::new().render();
    out.extend_from_slice(text.strip_prefix(&preamble).unwrap_or(&text).as_bytes());
    Ok(out)
}

/// The `Examples:` of a help text as an EXAMPLES section: each indented line a command, set
/// unfilled in an indented block; any other line a paragraph of text.
fn examples_section(roff: &mut Roff, help: &str) {
    let mut lines = help.lines().peekable();
    let mut started = false;
    while let Some(line) = lines.next() {
        if line.trim().is_empty() {
            continue;
        }
        if !started {
            roff.control("SH", ["EXAMPLES"]);
            started = true;
        }
        if line.trim_end() == "Examples:" {
            continue;
        }
        if !line.starts_with(' ') {
            roff.control("PP", []).text([roman(line.trim())]);
            continue;
        }
        roff.control("RS", ["4"]).control("nf", []);
        roff.text([roman(line.trim())]);
        while let Some(next) = lines.next_if(|l| l.starts_with(' ')) {
            roff.text([roman(next.trim())]);
        }
        roff.control("fi", []).control("RE", []);
    }
}

pub(crate) fn run(args: &ManArgs) -> Result<Outcome> {
    let Some(dir) = &args.dir else {
        let mut out = std::io::stdout().lock();
        out.write_all(&page(args.subcommand.as_deref())?)?;
        out.flush()?;
        return Ok(Outcome::Ok);
    };
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    write_file(&dir.join("rke2-payload.1"), &page(None)?, true)?;
    for sub in Cli::command().get_subcommands() {
        let name = sub.get_name();
        write_file(
            &dir.join(format!("rke2-payload-{name}.1")),
            &page(Some(name))?,
            true,
        )?;
    }
    Ok(Outcome::Ok)
}
