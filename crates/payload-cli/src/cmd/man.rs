//! `rke2-payload man [SUBCOMMAND] [--dir DIR]`.

use std::io::Write;

use anyhow::{Context, Result, bail};
use clap::CommandFactory;

use super::Outcome;
use crate::cli::{Cli, ManArgs};
use crate::output::write_file;

/// The page of the tool (`None`) or of one subcommand, as roff.
fn page(subcommand: Option<&str>) -> Result<Vec<u8>> {
    let command = Cli::command();
    let command = match subcommand {
        None => command,
        Some(name) => {
            let Some(sub) = command.find_subcommand(name) else {
                let names: Vec<&str> = command.get_subcommands().map(|c| c.get_name()).collect();
                bail!("no subcommand {name:?}; known: {}", names.join(", "));
            };
            // A page of its own: `rke2-payload-inspect(1)`.
            sub.clone().name(format!("rke2-payload-{name}"))
        }
    };
    let mut out = Vec::new();
    clap_mangen::Man::new(command).render(&mut out)?;
    Ok(out)
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
