//! `rke2-payload size`.

use std::io::Write;

use anyhow::{Result, bail};
use payload_printer::document::{Items, Layout, error_item, skipped_other_providers};
use payload_printer::junit::SizeItem;
use rke2_payload::{CLOUDS, SIZE_SCHEMA, SizeOptions, Sizer, Target, find_cloud};

use super::{
    Outcome, decode_options, report_refusals, secrets_and_refusals, selector, streamed,
    unreadable_secrets,
};
use crate::cli::{SizeArgs, SizeFormat};
use crate::output::{raw_stdout, styled};

pub(crate) fn run(args: &SizeArgs) -> Result<Outcome> {
    let path = args.input.path();
    let selector = selector(&args.input)?;
    let defaults = crate::config::load(&args.config)?.size;
    // A flag given wins over the config file.
    let clouds = match (&args.cloud, &defaults.cloud) {
        (given, Some(file)) if given.is_empty() => file.clone(),
        (given, _) => given.clone(),
    };
    let headroom = args.headroom.or(defaults.headroom).unwrap_or(0.0);
    let options = size_options(args, &clouds, headroom)?;
    let mut out = raw_stdout();
    let mut fits = true;
    let mut unreadable: Vec<String> = Vec::new();
    let mut skipped: Vec<rke2_payload::SkippedSecret> = Vec::new();
    let format = args.output;
    let layout = match format {
        SizeFormat::Json => Layout::Json,
        SizeFormat::Yaml => Layout::Yaml,
        SizeFormat::Text | SizeFormat::Junit | SizeFormat::Name => Layout::Text,
    };
    let mut items = Items::new(layout, SIZE_SCHEMA);
    // JUnit needs totals in its first element: collect only what it prints.
    let mut junit_items = Vec::new();
    // Replicas' identical payloads are measured once; see `Sizer`.
    let sizer = Sizer::new(options);
    // From a cluster, each Secret is measured on the path its Machine's infrastructure
    // object names, unless the user names the platforms.
    let (input, refusals) = if args.input.from_cluster && clouds.is_empty() {
        let input = super::cluster::live_secrets(&args.input, &decode_options(&args.input))?;
        (input, Vec::new())
    } else {
        secrets_and_refusals(&args.input)?
    };
    // Reports are measured and rendered on the worker threads; this thread writes them in order.
    streamed(
        sizer.for_each(
            input,
            &selector,
            args.input.jobs,
            |sizer, secret| -> Result<(bool, Rendered)> {
                let failed = |e: rke2_payload::Error| -> Result<(bool, Rendered)> {
                    if let Some(skipped) = e.skipped() {
                        return Ok((true, Rendered::Skipped(skipped)));
                    }
                    let message = e.to_string();
                    let item = match format {
                        SizeFormat::Junit => Rendered::Junit(SizeItem::unreadable(secret, message)),
                        SizeFormat::Name => Rendered::Error(name_line(secret)?, message),
                        SizeFormat::Text => {
                            let mut buf = styled();
                            error_item(&mut buf, secret, &message, layout)?;
                            Rendered::Error(buf.into_inner(), message)
                        }
                        SizeFormat::Json | SizeFormat::Yaml => {
                            let mut item = Vec::new();
                            error_item(&mut item, secret, &message, layout)?;
                            Rendered::Error(item, message)
                        }
                    };
                    Ok((true, item))
                };
                match format {
                    SizeFormat::Json | SizeFormat::Yaml => match sizer.measure_json(secret) {
                        Ok((json, fits)) => Ok((fits, Rendered::Bytes(json))),
                        Err(e) => failed(e),
                    },
                    SizeFormat::Junit => match sizer.measure(secret) {
                        Ok(report) => Ok((
                            report.payload.fits(),
                            Rendered::Junit(SizeItem::Measured(Box::new(report))),
                        )),
                        Err(e) => failed(e),
                    },
                    // `-o name`: the Secrets that do not fit.
                    SizeFormat::Name => match sizer.measure(secret) {
                        Ok(report) if report.payload.fits() => {
                            Ok((true, Rendered::Bytes(Vec::new())))
                        }
                        Ok(_) => Ok((false, Rendered::Bytes(name_line(secret)?))),
                        Err(e) => failed(e),
                    },
                    SizeFormat::Text => match sizer.measure(secret) {
                        Ok(report) => {
                            let mut buf = styled();
                            payload_printer::size::text(&mut buf, &report)?;
                            Ok((report.payload.fits(), Rendered::Bytes(buf.into_inner())))
                        }
                        Err(e) => failed(e),
                    },
                }
            },
            |made| {
                let (fit, rendered) = made?;
                fits &= fit;
                match rendered {
                    Rendered::Junit(item) => {
                        if let SizeItem::Unreadable { message, .. } = &item {
                            unreadable.push(message.clone());
                        }
                        junit_items.push(item);
                        Ok(())
                    }
                    Rendered::Error(bytes, message) => {
                        unreadable.push(message);
                        if format == SizeFormat::Name {
                            return Ok(out.write_all(&bytes)?);
                        }
                        Ok(items.item(&mut out, &bytes)?)
                    }
                    Rendered::Bytes(bytes) if format == SizeFormat::Name => {
                        Ok(out.write_all(&bytes)?)
                    }
                    Rendered::Bytes(bytes) => Ok(items.item(&mut out, &bytes)?),
                    Rendered::Skipped(one) => {
                        skipped.push(one);
                        Ok(())
                    }
                }
            },
        ),
        path,
    )?;
    if format == SizeFormat::Junit {
        payload_printer::junit::size(&mut out, &junit_items)?;
    }
    let mut fields = vec![("fits", fits.to_string())];
    fields.extend(skipped_other_providers(&skipped));
    items.finish(&mut out, &fields)?;
    super::report_skipped(&skipped);
    out.flush()?;
    unreadable_secrets(path, &unreadable)?;
    // What CAPRKE2 would refuse fails the gate, whatever the sizes.
    report_refusals(&refusals);
    Ok(if fits && refusals.is_empty() {
        Outcome::Ok
    } else {
        Outcome::CheckFailed
    })
}

/// A Secret's line of `-o name`.
fn name_line(secret: &rke2_payload::BootstrapSecret<'_>) -> Result<Vec<u8>> {
    let mut line = Vec::new();
    payload_printer::document::name(&mut line, secret.name(), secret.namespace())?;
    Ok(line)
}

/// One Secret's report, made on a worker thread.
enum Rendered {
    /// Rendered as JSON or text.
    Bytes(Vec<u8>),
    /// The item that says the Secret cannot be read (JSON or text), and the message.
    Error(Vec<u8>, String),
    /// Kept for JUnit, which needs all reports before it writes anything.
    Junit(SizeItem),
    /// Another provider's Secret, passed over.
    Skipped(rke2_payload::SkippedSecret),
}

/// The options of a run measuring against `clouds` with `headroom` (flags and config merged).
fn size_options(args: &SizeArgs, clouds: &[String], headroom: f64) -> Result<SizeOptions> {
    let mut targets = cloud_targets(clouds)?;
    // Platforms the user names are measured as named; otherwise a Secret rendered from
    // manifests is measured against its infrastructure template's path.
    let follow_delivery = targets.is_empty();
    if let Some((limit_bytes, counted)) = args.budget {
        targets.push(Target::Budget {
            limit_bytes,
            counted,
        });
    }
    if targets.is_empty() {
        // A gate should not fail on a guess: platforms whose limit no source states are
        // measured only when asked for (`--cloud ID` or `--cloud all`).
        targets = CLOUDS
            .iter()
            .filter(|c| c.is_verified())
            .map(Target::Cloud)
            .collect();
    }
    Ok(SizeOptions::new()
        .with_decode(decode_options(&args.input))
        .with_targets(targets)
        .with_headroom_percent(headroom)
        .with_contributors(args.output == SizeFormat::Text)
        .with_follow_delivery(follow_delivery))
}

/// The platforms named by `--cloud` (`all` for every one).
pub(crate) fn cloud_targets(ids: &[String]) -> Result<Vec<Target>> {
    let mut targets = Vec::new();
    for id in ids.iter().map(|s| s.trim()).filter(|s| !s.is_empty()) {
        if id == "all" {
            targets.extend(CLOUDS.iter().map(Target::Cloud));
            continue;
        }
        match find_cloud(id) {
            Some(cloud) => targets.push(Target::Cloud(cloud)),
            None => bail!(
                "unknown cloud {id:?}; known: {}",
                CLOUDS.iter().map(|c| c.id).collect::<Vec<_>>().join(", ")
            ),
        }
    }
    Ok(targets)
}
