//! `rke2-payload schema`: the JSON Schemas of the documents, as the report types generate them
//! (the files of docs/schemas/ are these).

use std::io::Write;

use anyhow::{Context, Result};
use payload_printer::schema::{DOCUMENTS, document};

use super::Outcome;
use crate::cli::SchemaArgs;

pub(crate) fn run(args: &SchemaArgs) -> Result<Outcome> {
    let mut out = crate::output::raw_stdout();
    match &args.name {
        Some(name) => {
            // The argument is one of the names (clap checks it).
            let doc = document(name).with_context(|| format!("no document {name:?}"))?;
            payload_printer::document::json(&mut out, &doc.json_schema())?;
        }
        None => {
            for doc in DOCUMENTS {
                writeln!(
                    out,
                    "{:<8} {:<26} {:<18} {}",
                    doc.name,
                    doc.schema,
                    doc.file_name(),
                    doc.command
                )?;
            }
        }
    }
    out.flush()?;
    Ok(Outcome::Ok)
}
