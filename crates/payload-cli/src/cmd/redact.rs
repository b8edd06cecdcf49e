//! `rke2-payload redact`.

use anyhow::{Context, Result};

use super::{Outcome, read_inputs, selector};
use crate::cli::RedactArgs;
use crate::output::write_bytes;

pub(crate) fn run(args: &RedactArgs) -> Result<Outcome> {
    let selector = selector(&args.input)?;
    let (inputs, options) = read_inputs(&args.input)?;
    let options = rke2_payload::RedactOptions::new()
        .with_decode(options)
        .with_strict(args.strict);
    // Each input alone (nothing is written until all are redacted), then one after another:
    // JSON inputs as a sequence of JSON objects, anything else as YAML documents.
    let mut outputs = Vec::with_capacity(inputs.len());
    for (name, input) in &inputs {
        outputs.push(
            rke2_payload::redact_selected(input, &options, &selector)
                .with_context(|| format!("reading {name}"))?,
        );
    }
    let all_json = outputs
        .iter()
        .all(|o| o.trim_ascii_start().starts_with(b"{") || o.trim_ascii_start().starts_with(b"["));
    let mut redacted = Vec::new();
    for (i, output) in outputs.iter().enumerate() {
        if i > 0 {
            if !redacted.ends_with(b"\n") {
                redacted.push(b'\n');
            }
            if !all_json {
                redacted.extend_from_slice(b"---\n");
            }
        }
        redacted.extend_from_slice(output);
    }
    write_bytes(&redacted, args.to.to_file.as_deref(), args.to.force)?;
    Ok(Outcome::Ok)
}
