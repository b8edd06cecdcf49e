//! Parses the Secret envelope of an input and nothing else (no base64, no payload): the time
//! the envelope alone takes, for benchmarks.
//!
//!     cargo run --release -p rke2-payload-bench --bin envelope-only -- DUMP

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = std::env::args().nth(1).ok_or("usage: envelope_only DUMP")?;
    let file = std::fs::File::open(path)?;
    let mut base64 = 0u64;
    let summary =
        rke2_payload::for_each_secret(file, &rke2_payload::DecodeOptions::default(), |secret| {
            base64 += secret.base64_len();
            Ok::<(), std::convert::Infallible>(())
        })?;
    println!(
        "{} bootstrap Secrets ({} skipped), {base64} base64 bytes",
        summary.secrets, summary.skipped_secrets
    );
    Ok(())
}
