//! `rke2-payload inspect`.

use std::io::Write;

use anyhow::Result;
use payload_printer::document::{Items, Layout, error_item, skipped_other_providers};
use rke2_payload::{BootstrapSecret, INSPECT_SCHEMA, InspectOptions, Inspector};

use super::{Outcome, decode_options, secrets_input, selector, streamed, unreadable_secrets};
use crate::cli::{InspectArgs, InspectFormat};
use crate::output::{raw_stdout, styled};

pub(crate) fn run(args: &InspectArgs) -> Result<Outcome> {
    let path = args.input.path();
    let selector = selector(&args.input)?;
    let mut out = raw_stdout();
    // `-o name` writes a line per Secret itself, no document.
    let names = args.output == InspectFormat::Name;
    let layout = match args.output {
        InspectFormat::Text | InspectFormat::Name => Layout::Text,
        InspectFormat::Json => Layout::Json,
        InspectFormat::Yaml => Layout::Yaml,
    };
    let mut items = Items::new(layout, INSPECT_SCHEMA);
    let mut failures: Vec<Failure> = Vec::new();
    let mut skipped: Vec<rke2_payload::SkippedSecret> = Vec::new();
    // Replicas' identical payloads are read once; see `Inspector`.
    let inspector = Inspector::new(
        InspectOptions::new()
            .with_decode(decode_options(&args.input))
            .with_show_secrets(args.show_secrets)
            .with_strict(args.strict),
    );
    // Reports are made and rendered on the worker threads; this thread writes them in order.
    let summary = streamed(
        inspector.for_each(
            secrets_input(&args.input)?,
            &selector,
            args.input.jobs,
            |inspector, secret| {
                if names {
                    name_item(secret, inspector)
                } else if layout == Layout::Text {
                    text_item(secret, inspector, args)
                } else {
                    json_item(secret, inspector)
                }
            },
            |result: Result<Item>| -> Result<()> {
                let (failure, rendered) = match result? {
                    Ok(done) => done,
                    // Another provider's Secret is passed over, and counted.
                    Err((failure, _)) if failure.0.skipped().is_some() => {
                        skipped.extend(failure.0.skipped());
                        return Ok(());
                    }
                    // A Secret that cannot be read is an item of its own; the rest go on.
                    Err((failure, rendered)) => (Some(failure), rendered),
                };
                failures.extend(failure);
                if names {
                    return Ok(out.write_all(&rendered)?);
                }
                Ok(items.item(&mut out, &rendered)?)
            },
        ),
        path,
    )?;
    if layout == Layout::Text && !names {
        let mut buf = styled();
        payload_printer::inspect::skipped(&mut buf, &summary)?;
        out.write_all(&buf.into_inner())?;
    }
    let mut fields = vec![
        ("skipped_secrets", summary.skipped_secrets.to_string()),
        ("skipped_objects", summary.skipped_objects.to_string()),
    ];
    fields.extend(skipped_other_providers(&skipped));
    items.finish(&mut out, &fields)?;
    out.flush()?;
    super::report_skipped(&skipped);
    unreadable_secrets(path, &failures)?;
    Ok(Outcome::Ok)
}

/// Why a Secret's report is missing: it could not be decoded. (User data that does not read as
/// its format is a finding of its report, like any other: exit 0.)
struct Failure(rke2_payload::Error);

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

/// One Secret rendered, or why it could not be and the item that says so.
type Item = Result<(Option<Failure>, Vec<u8>), (Failure, Vec<u8>)>;

/// One Secret's JSON report.
fn json_item(secret: &BootstrapSecret<'_>, inspector: &Inspector) -> Result<Item> {
    Ok(match inspector.inspect_json(secret) {
        Ok((json, _)) => Ok((None, json)),
        Err(e) => {
            let mut item = Vec::new();
            error_item(&mut item, secret, &e.to_string(), Layout::Json)?;
            Err((Failure(e), item))
        }
    })
}

/// One Secret's line of `-o name`, read as for JSON (a Secret that cannot be read is listed,
/// and fails the run as it does with any output).
fn name_item(secret: &BootstrapSecret<'_>, inspector: &Inspector) -> Result<Item> {
    let mut line = Vec::new();
    payload_printer::document::name(&mut line, secret.name(), secret.namespace())?;
    Ok(match inspector.inspect_json(secret) {
        Ok(_) => Ok((None, line)),
        Err(e) => Err((Failure(e), line)),
    })
}

/// One Secret's text report, its colour decided here (on the worker thread).
fn text_item(
    secret: &BootstrapSecret<'_>,
    inspector: &Inspector,
    args: &InspectArgs,
) -> Result<Item> {
    let mut buf = styled();
    let report = match inspector.inspect(secret) {
        Ok(report) => report,
        Err(e) => {
            error_item(&mut buf, secret, &e.to_string(), Layout::Text)?;
            return Ok(Err((Failure(e), buf.into_inner())));
        }
    };
    payload_printer::inspect::text(&mut buf, &report, args.verbose, args.show_secrets)?;
    Ok(Ok((None, buf.into_inner())))
}
