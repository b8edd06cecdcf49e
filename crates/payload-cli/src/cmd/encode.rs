//! `rke2-payload encode`.

use std::borrow::Cow;

use anyhow::{Context, Result};
use rke2_payload::{
    ConvertError, Format, compress, convert, reencode, secret_with_value, to_base64,
};

use super::{Outcome, read_inputs, select_one, selector};
use crate::cli::{Emit, EncodeArgs, SecretFormat, TargetFormat};
use crate::output::write_bytes;

pub(crate) fn run(args: &EncodeArgs) -> Result<Outcome> {
    let selector = selector(&args.input)?;
    let (inputs, options) = read_inputs(&args.input)?;
    let (at, secret) = select_one(&inputs, &options, &selector)?;
    let (name, input) = &inputs[at];
    let reading = || format!("reading {name}");
    let payload = secret.decode(&options).with_context(reading)?;
    let gzip = match (args.gzip, args.no_gzip) {
        (true, _) => Some(true),
        (_, true) => Some(false),
        _ => None,
    };
    let target = args.to.map(|t| match t {
        TargetFormat::CloudConfig => Format::CloudConfig,
        TargetFormat::Ignition => Format::Ignition,
    });
    let (value, format) = match target.map(|to| (to, convert(&payload, to))) {
        Some((to, Ok(Some(converted)))) => {
            let gzip = gzip.unwrap_or(payload.compression().is_gzip());
            (Cow::Owned(compress(&converted, to, gzip)), to)
        }
        Some((_, Err(ConvertError::Unreadable(e)))) => {
            Err(e).with_context(|| format!("reading the user data of {}", secret.id()))?
        }
        Some((_, Err(e))) => Err(e).with_context(|| format!("converting {}", secret.id()))?,
        // No target, or the payload has it already.
        Some((_, Ok(None))) | None => (reencode(&payload, gzip), payload.format()),
    };
    let bytes = match args.emit {
        Emit::Value => value.into_owned(),
        Emit::Base64 => {
            let mut text = to_base64(&value);
            text.push('\n');
            text.into_bytes()
        }
        Emit::Secret => secret_with_value(
            input,
            &secret,
            &value,
            format,
            args.output == SecretFormat::Json,
        )
        .with_context(reading)?,
    };
    write_bytes(&bytes, args.dest.to_file.as_deref(), args.dest.force)?;
    Ok(Outcome::Ok)
}
