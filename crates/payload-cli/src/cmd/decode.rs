//! `rke2-payload decode`.

use anyhow::{Context, Result};

use super::{Outcome, read_inputs, select_one, selector};
use crate::cli::{DecodeArgs, DecodeFormat};
use crate::output::write_bytes;

pub(crate) fn run(args: &DecodeArgs) -> Result<Outcome> {
    let selector = selector(&args.input)?;
    let (inputs, options) = read_inputs(&args.input)?;
    let (at, secret) = select_one(&inputs, &options, &selector)?;
    let reading = || format!("reading {}", inputs[at].0);
    let to = args.to.to_file.as_deref();
    if args.raw || args.output == DecodeFormat::Raw {
        let value = secret.value_within(&options).with_context(reading)?;
        write_bytes(&value, to, args.to.force)?;
    } else {
        let payload = secret.decode(&options).with_context(reading)?;
        write_bytes(payload.userdata(), to, args.to.force)?;
    }
    Ok(Outcome::Ok)
}
