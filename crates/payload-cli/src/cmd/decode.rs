//! `rke2-payload decode`.

use anyhow::Result;
use rke2_payload::Envelope;

use super::{Outcome, in_input, read_input};
use crate::cli::DecodeArgs;
use crate::output::write_bytes;

/// Output format names other commands take after `--output`: as a file name here they are
/// almost certainly a mistake, and the file would hold the user data (the token with it).
const FORMAT_WORDS: &[&str] = &["text", "json", "yaml", "sarif", "junit", "github", "gitlab"];

pub(crate) fn run(args: &DecodeArgs) -> Result<Outcome> {
    if let Some(out) = &args.output
        && FORMAT_WORDS.iter().any(|w| out.as_os_str() == *w)
    {
        anyhow::bail!(
            "decode writes user data, not a report: --output {} would create a file named {0}; \
             to mean that, write ./{0}",
            out.display()
        );
    }
    let path = &args.input.file;
    let (input, options) = read_input(&args.input)?;
    let envelope = in_input(Envelope::parse(&input, &options), path)?;
    let secret = in_input(envelope.select(args.name.as_deref()), path)?;
    if args.raw {
        let value = in_input(secret.value_within(&options), path)?;
        write_bytes(&value, args.output.as_deref(), args.force)?;
    } else {
        let payload = in_input(secret.decode(&options), path)?;
        write_bytes(payload.userdata(), args.output.as_deref(), args.force)?;
    }
    Ok(Outcome::Ok)
}
