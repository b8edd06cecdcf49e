//! `rke2-payload clouds`.

use std::io::Write;

use anyhow::Result;

use super::Outcome;
use crate::cli::{CloudsArgs, Format};

pub(crate) fn run(args: &CloudsArgs) -> Result<Outcome> {
    let mut out = anstream::stdout().lock();
    match args.output {
        Format::Json => payload_printer::clouds::json(&mut out)?,
        Format::Yaml => payload_printer::clouds::yaml(&mut out)?,
        Format::Text => payload_printer::clouds::text(&mut out)?,
    }
    out.flush()?;
    Ok(Outcome::Ok)
}
