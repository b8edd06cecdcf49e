//! `rke2-payload clouds`.

use std::io::Write;

use anyhow::Result;
use rke2_payload::{CLOUDS, Counted};

use super::Outcome;
use crate::cli::{CloudsArgs, Format};
use crate::style::{group, yaml};

pub(crate) fn run(args: &CloudsArgs) -> Result<Outcome> {
    let mut out = anstream::stdout().lock();
    match args.output {
        Format::Json | Format::Yaml => {
            let doc = serde_json::json!({
                "schema": "rke2-payload/clouds/v1",
                "clouds": CLOUDS,
            });
            if args.output == Format::Yaml {
                out.write_all(yaml(&doc)?.as_bytes())?;
            } else {
                serde_json::to_writer_pretty(&mut out, &doc)?;
                writeln!(out)?;
            }
        }
        Format::Text => {
            writeln!(
                out,
                "{:<18} {:>9}  {:<7} {:>11}  {:<18} {:<15} CONFIDENCE",
                "CLOUD", "LIMIT", "COUNTS", "LARGEST", "GZIP CLOUD-CONFIG", "GZIP IGNITION"
            )?;
            for cloud in CLOUDS {
                writeln!(
                    out,
                    "{:<18} {:>9}  {:<7} {:>11}  {:<18} {:<15} {}",
                    cloud.id,
                    group(cloud.limit_bytes),
                    match cloud.counted {
                        Counted::Raw => "raw",
                        Counted::Base64 => "base64",
                        _ => "other",
                    },
                    group(cloud.max_raw_bytes()),
                    kebab(&cloud.gzip_cloud_config),
                    kebab(&cloud.gzip_ignition),
                    kebab(&cloud.confidence),
                )?;
            }
            writeln!(
                out,
                "\nLIMIT is what the platform counts (COUNTS: raw bytes of data.value, or its base64 text);\n\
                 LARGEST is the largest data.value that fits, in bytes; GZIP CLOUD-CONFIG and GZIP IGNITION\n\
                 say whether a gzipped payload of that format reaches the node intact. `-o json` adds\n\
                 sources and notes."
            )?;
        }
    }
    out.flush()?;
    Ok(Outcome::Ok)
}

/// The serde name of a unit enum variant.
fn kebab<T: serde::Serialize>(value: &T) -> String {
    match serde_json::to_value(value) {
        Ok(serde_json::Value::String(s)) => s,
        _ => "?".to_owned(),
    }
}
