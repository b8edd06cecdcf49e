//! `rke2-payload decode`.

use anyhow::Result;
use rke2_payload::Envelope;

use super::{Outcome, in_input, read_input, selector};
use crate::cli::{DecodeArgs, DecodeFormat};
use crate::output::write_bytes;

pub(crate) fn run(args: &DecodeArgs) -> Result<Outcome> {
    let path = args.input.path();
    let selector = selector(&args.input)?;
    let (input, options) = read_input(&args.input)?;
    let envelope = in_input(Envelope::parse(&input, &options), path)?;
    let secret = in_input(envelope.select(&selector), path)?;
    let to = args.to.to_file.as_deref();
    if args.raw || args.output == DecodeFormat::Raw {
        let value = in_input(secret.value_within(&options), path)?;
        write_bytes(&value, to, args.to.force)?;
    } else {
        let payload = in_input(secret.decode(&options), path)?;
        write_bytes(payload.userdata(), to, args.to.force)?;
    }
    Ok(Outcome::Ok)
}
