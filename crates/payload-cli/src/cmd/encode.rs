//! `rke2-payload encode`.

use std::borrow::Cow;

use anyhow::{Context, Result};
use rke2_payload::convert;
use rke2_payload::document::Document;
use rke2_payload::encode::{compress, reencode, secret_with_value};
use rke2_payload::{Envelope, Format};

use super::{Outcome, in_input, read_input};
use crate::cli::{Emit, EncodeArgs, SecretFormat, TargetFormat};
use crate::output::write_bytes;

pub(crate) fn run(args: &EncodeArgs) -> Result<Outcome> {
    let path = &args.input.file;
    let (input, options) = read_input(&args.input)?;
    let envelope = in_input(Envelope::parse(&input, &options), path)?;
    let secret = in_input(envelope.select(args.name.as_deref()), path)?;
    let payload = in_input(secret.decode(&options), path)?;
    let gzip = match (args.gzip, args.no_gzip) {
        (true, _) => Some(true),
        (_, true) => Some(false),
        _ => None,
    };
    let (value, format) = match args.to.map(|t| match t {
        TargetFormat::CloudConfig => Format::CloudConfig,
        TargetFormat::Ignition => Format::Ignition,
    }) {
        Some(to) if to != payload.format() => {
            let document = Document::parse(&payload)
                .with_context(|| format!("reading the user data of {}", secret.id()))?;
            // The document has the payload's format, so its kind says where it goes.
            let converted = match &document {
                Document::CloudConfig(c) => convert::to_ignition(c),
                Document::Ignition(i) => convert::to_cloud_config(i),
                _ => anyhow::bail!("this user data cannot be converted"),
            }
            .with_context(|| format!("converting {}", secret.id()))?;
            let gzip = gzip.unwrap_or(payload.compression().is_gzip());
            (Cow::Owned(compress(&converted, to, gzip)), to)
        }
        _ => (reencode(&payload, gzip), payload.format()),
    };
    let bytes = match args.emit {
        Emit::Value => value.into_owned(),
        Emit::Base64 => {
            let mut text = rke2_payload::encode::base64(&value);
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
    write_bytes(&bytes, args.out.as_deref(), args.force)?;
    Ok(Outcome::Ok)
}
