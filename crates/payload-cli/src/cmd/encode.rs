//! `rke2-payload encode`.

use std::borrow::Cow;

use anyhow::{Context, Result};
use rke2_payload::{
    ConvertError, Envelope, Format, compress, convert, reencode, secret_with_value, to_base64,
};

use super::{Outcome, in_input, read_input, selector};
use crate::cli::{Emit, EncodeArgs, SecretFormat, TargetFormat};
use crate::output::write_bytes;

pub(crate) fn run(args: &EncodeArgs) -> Result<Outcome> {
    let path = args.input.path();
    let selector = selector(&args.input)?;
    let (input, options) = read_input(&args.input)?;
    let envelope = in_input(Envelope::parse(&input, &options), path)?;
    let secret = in_input(envelope.select(&selector), path)?;
    let payload = in_input(secret.decode(&options), path)?;
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
        Emit::Secret => in_input(
            secret_with_value(
                &input,
                secret,
                &value,
                format,
                args.output == SecretFormat::Json,
            ),
            path,
        )?,
    };
    write_bytes(&bytes, args.dest.to_file.as_deref(), args.dest.force)?;
    Ok(Outcome::Ok)
}
