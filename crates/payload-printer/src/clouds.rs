//! The table of user-data limits (`clouds`): text for people, and a JSON document.
//!
//! The document is `{"schema": "rke2-payload/clouds/v1", "clouds": [...]}`, each entry the
//! library's [`rke2_payload::Cloud`] as it serialises (id, limit, what is counted, gzip safety,
//! confidence, sources, notes).

use std::io::Write;

use rke2_payload::{CLOUDS, Cloud, Counted};

use crate::Result;
use crate::style::group;

/// The schema id of the clouds document.
pub const CLOUDS_SCHEMA: &str = "rke2-payload/clouds/v1";

/// The document of the table: `{"schema": "rke2-payload/clouds/v1", "clouds": [...]}`.
#[derive(Debug, Clone, serde::Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[non_exhaustive]
pub struct CloudsDocument {
    /// Always [`CLOUDS_SCHEMA`].
    pub schema: &'static str,
    /// The table, in its order.
    pub clouds: Vec<Cloud>,
}

/// The table's document.
pub fn document() -> CloudsDocument {
    CloudsDocument {
        schema: CLOUDS_SCHEMA,
        clouds: CLOUDS.to_vec(),
    }
}

/// Writes the table's JSON document, pretty.
pub fn json(out: &mut impl Write) -> Result<()> {
    serde_json::to_writer_pretty(&mut *out, &document())?;
    writeln!(out)?;
    Ok(())
}

/// Writes the table's JSON document as YAML.
pub fn yaml(out: &mut impl Write) -> Result<()> {
    crate::document::yaml(out, &document())
}

/// Writes the table as aligned text: a line per platform (id, limit, what is counted, the
/// largest `data.value` that fits, whether gzip reaches the node intact per format,
/// confidence), then what the columns mean.
///
/// ```
/// let mut out = Vec::new();
/// payload_printer::clouds::text(&mut out)?;
/// let text = String::from_utf8(out).unwrap();
/// assert!(text.starts_with("CLOUD "));
/// assert!(text.lines().any(|l| l.starts_with("aws ")));
/// # Ok::<(), payload_printer::Error>(())
/// ```
pub fn text(out: &mut impl Write) -> Result<()> {
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
    Ok(())
}

/// The serde name of a unit enum variant.
fn kebab<T: serde::Serialize>(value: &T) -> String {
    match serde_json::to_value(value) {
        Ok(serde_json::Value::String(s)) => s,
        _ => "?".to_owned(),
    }
}
