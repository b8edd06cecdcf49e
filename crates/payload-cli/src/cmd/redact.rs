//! `rke2-payload redact`.

use anyhow::Result;

use super::{Outcome, in_input, read_input};
use crate::cli::RedactArgs;
use crate::output::write_bytes;

pub(crate) fn run(args: &RedactArgs) -> Result<Outcome> {
    let path = &args.input.file;
    let (input, options) = read_input(&args.input)?;
    let redacted = in_input(rke2_payload::redact::redact_input(&input, &options), path)?;
    write_bytes(&redacted, args.out.as_deref(), args.force)?;
    Ok(Outcome::Ok)
}
