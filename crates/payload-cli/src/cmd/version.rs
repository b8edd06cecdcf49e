//! `rke2-payload version`.

use std::io::Write;

use anyhow::Result;

use super::Outcome;
use crate::cli::{Format, VersionArgs};

pub(crate) fn run(args: &VersionArgs) -> Result<Outcome> {
    let doc = crate::build_info();
    let mut out = crate::output::raw_stdout();
    match args.output {
        Format::Text => payload_printer::version::text(&mut out, &doc)?,
        Format::Json => payload_printer::version::json(&mut out, &doc)?,
        Format::Yaml => payload_printer::version::yaml(&mut out, &doc)?,
    }
    out.flush()?;
    Ok(Outcome::Ok)
}
