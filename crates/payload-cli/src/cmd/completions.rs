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
    if args.shell == clap_complete::Shell::Bash {
        script = bash_fixed(&script);
    }
    let mut out = std::io::stdout().lock();
    out.write_all(&script)?;
    out.flush()?;
    Ok(Outcome::Ok)
}

/// clap_complete's bash script names the subcommands' cases after the binary name with its
/// `-` turned into `__subcmd__` (`rke2__subcmd__payload__subcmd__inspect`) but looks them up
/// with `__` (`rke2__payload__subcmd__inspect`), so nothing after a subcommand completes; the
/// case names are made to match the lookup.
fn bash_fixed(script: &[u8]) -> Vec<u8> {
    String::from_utf8_lossy(script)
        .replace("rke2__subcmd__payload", "rke2__payload")
        .into_bytes()
}
