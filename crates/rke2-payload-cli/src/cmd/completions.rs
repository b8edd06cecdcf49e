//! `rke2-payload completions SHELL`.

use std::io::Write;

use anyhow::Result;
use clap::CommandFactory;

use super::Outcome;
use crate::cli::{Cli, CompletionsArgs};

pub(crate) fn run(args: &CompletionsArgs) -> Result<Outcome> {
    let mut command = Cli::command();
    // Into memory first: the generator panics on a write error (a closed pipe).
    let mut script = Vec::new();
    clap_complete::generate(args.shell, &mut command, "rke2-payload", &mut script);
    let mut out = std::io::stdout().lock();
    out.write_all(&script)?;
    out.flush()?;
    Ok(Outcome::Ok)
}
