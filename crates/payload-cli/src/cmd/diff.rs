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
    // A side is a file, standard input, or a folder: its files one after another (a sequence
    // of JSON objects when every one is JSON, else YAML documents).
    let read = |path: &Path| -> Result<Vec<u8>> {
        let files = rke2_payload::input_files(&[path.to_owned()], true)?;
        let mut texts = Vec::with_capacity(files.len());
        for file in &files {
            texts.push(
                rke2_payload::read_input(file, &decode)
                    .with_context(|| format!("reading {}", input_name(file)))?,
            );
        }
        if let [one] = texts.as_mut_slice() {
            return Ok(std::mem::take(one));
        }
        let json = texts.iter().all(|t| t.trim_ascii_start().starts_with(b"{"));
        Ok(texts.join(if json { &b"\n"[..] } else { &b"\n---\n"[..] }))
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
