//! `rke2-payload redact`.

use anyhow::{Context, Result};

use super::{Outcome, input_name, read_input, selector};
use crate::cli::RedactArgs;
use crate::output::write_bytes;

pub(crate) fn run(args: &RedactArgs) -> Result<Outcome> {
    let path = args.input.path();
    let selector = selector(&args.input)?;
    let (input, options) = read_input(&args.input)?;
    let options = rke2_payload::RedactOptions::new()
        .with_decode(options)
        .with_strict(args.strict);
    let redacted = rke2_payload::redact_selected(&input, &options, &selector)
        .with_context(|| format!("reading {}", input_name(path)))?;
    write_bytes(&redacted, args.to.to_file.as_deref(), args.to.force)?;
    Ok(Outcome::Ok)
}
