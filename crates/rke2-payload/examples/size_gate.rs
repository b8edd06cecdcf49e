//! A size gate for CI: exits 1 when any bootstrap Secret of a dump does not fit a cloud's
//! user-data limit (less 10% headroom).
//!
//!     cargo run -p rke2-payload --example size_gate -- aws testdata/secrets/list-all.json

use std::process::ExitCode;

use rke2_payload::{SizeOptions, Sizer, Target, find_cloud};

fn main() -> Result<ExitCode, Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let (Some(cloud), Some(path)) = (args.next(), args.next()) else {
        return Err("usage: size_gate CLOUD FILE".into());
    };
    let cloud = find_cloud(&cloud).ok_or("unknown cloud; `rke2-payload clouds` lists them")?;
    let sizer = Sizer::new(
        SizeOptions::new()
            .with_targets(vec![Target::Cloud(cloud)])
            .with_headroom_percent(10.0),
    );
    let mut over = 0;
    // Streamed: a dump of thousands of Secrets is read as it is parsed, on every core.
    sizer.for_each(
        std::fs::File::open(&path)?,
        &rke2_payload::Selector::default(),
        0,
        |sizer, secret| sizer.measure(secret),
        |report| -> Result<(), rke2_payload::Error> {
            let report = report?;
            for verdict in &report.payload.clouds {
                println!(
                    "{:<40} {:>7} of {:>7} bytes  {}",
                    report.name.as_deref().unwrap_or("user data"),
                    verdict.counted_bytes,
                    verdict.budget_bytes,
                    if verdict.fits { "fits" } else { "OVER" }
                );
                over += usize::from(!verdict.fits);
            }
            Ok(())
        },
    )?;
    Ok(if over == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}
