//! `rke2-payload diff`.

use std::io::Write as _;
use std::path::Path;

use anyhow::{Context as _, Result, bail};
use rke2_payload::{DecodeOptions, DiffOptions, Ignore, diff};

use super::{Outcome, input_name};
use crate::cli::{DiffArgs, DiffFormat};
use crate::output::{raw_stdout, styled};

pub(crate) fn run(args: &DiffArgs) -> Result<Outcome> {
    if args.before.as_os_str() == "-" && args.after.as_os_str() == "-" {
        bail!("only one side can be standard input");
    }
    let decode = DecodeOptions::new().with_max_inflated(args.max_inflated);
    let read = |path: &Path| {
        rke2_payload::read_input(path, &decode)
            .with_context(|| format!("reading {}", input_name(path)))
    };
    // Manifests are compared as what CAPRKE2 would write for them (the same seed on both sides,
    // so the generated token and CAs are the same and only the template's changes show).
    let secrets = |path: &Path| -> Result<Vec<u8>> {
        let bytes = read(path)?;
        if !payload_preview::holds_manifests(&bytes) {
            return Ok(bytes);
        }
        super::rendered(&input_name(path), &bytes)
    };
    let (before, after) = (secrets(&args.before)?, secrets(&args.after)?);
    let options = DiffOptions::new()
        .with_decode(decode.clone())
        .with_ignore(
            args.ignore
                .iter()
                .filter_map(|i| Ignore::from_id(i))
                .collect(),
        )
        .with_strict(args.strict);
    let report = diff(&before, &after, &options).with_context(|| {
        format!(
            "comparing {} with {}",
            input_name(&args.before),
            input_name(&args.after)
        )
    })?;
    let mut out = raw_stdout();
    match args.output {
        DiffFormat::Json => payload_printer::diff::json(&mut out, &report)?,
        DiffFormat::Markdown => payload_printer::diff::markdown(&mut out, &report)?,
        DiffFormat::Text => {
            let mut buf = styled();
            payload_printer::diff::text(&mut buf, &report)?;
            out.write_all(&buf.into_inner())?;
        }
    }
    out.flush()?;
    Ok(if report.differs() {
        Outcome::CheckFailed
    } else {
        Outcome::Ok
    })
}
