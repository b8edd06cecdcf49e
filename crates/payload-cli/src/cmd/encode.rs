//! `rke2-payload encode`.

use anyhow::Result;
use rke2_payload::Envelope;
use rke2_payload::encode::{reencode, secret_with_value};

use super::{Outcome, in_input, read_input};
use crate::cli::{Emit, EncodeArgs, SecretFormat};
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
    let value = reencode(&payload, gzip);
    let bytes = match args.emit {
        Emit::Value => value.into_owned(),
        Emit::Base64 => {
            let mut text = rke2_payload_base64(&value);
            text.push('\n');
            text.into_bytes()
        }
        Emit::Secret => in_input(
            secret_with_value(
                &input,
                secret,
                &value,
                payload.format(),
                args.output == SecretFormat::Json,
            ),
            path,
        )?,
    };
    write_bytes(&bytes, args.out.as_deref(), args.force)?;
    Ok(Outcome::Ok)
}

/// Standard padded base64, as a `user_data_base64`-style argument takes it.
fn rke2_payload_base64(bytes: &[u8]) -> String {
    rke2_payload::encode::base64(bytes)
}
