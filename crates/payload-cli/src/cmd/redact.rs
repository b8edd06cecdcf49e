//! `rke2-payload redact`.

use anyhow::{Context, Result};

use super::{Outcome, input_name, read_input};
use crate::cli::RedactArgs;
use crate::output::write_bytes;

pub(crate) fn run(args: &RedactArgs) -> Result<Outcome> {
    let path = &args.input.file;
    let (input, options) = read_input(&args.input)?;
    let redacted = rke2_payload::redact(&input, &options)
        .with_context(|| format!("reading {}", input_name(path)))?;
    write_bytes(&redacted, args.out.as_deref(), args.force)?;
    Ok(Outcome::Ok)
}
