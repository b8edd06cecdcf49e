//! The bare decode floor for benchmarks: find every `value` of a kubectl dump (YAML or JSON)
//! by scanning bytes, base64-decode it, and inflate it when it is gzip. No parsing, no checks,
//! one thread.
//! Prints the number of values and the decoded bytes.
//!
//!     cargo run --release -p rke2-payload-bench --bin decode-floor -- DUMP

use std::io::Read;

use base64::Engine as _;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = std::env::args().nth(1).ok_or("usage: decode_floor DUMP")?;
    let mut input = Vec::new();
    std::fs::File::open(path)?.read_to_end(&mut input)?;
    let engine = base64::engine::Simd::standard(base64::engine::general_purpose::PAD);
    let json = input.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'{');
    let (marker, end): (&[u8], u8) = if json {
        (b"\"value\": \"", b'"')
    } else {
        (b"    value: ", b'\n')
    };
    let finder = memchr::memmem::Finder::new(marker);
    let mut decoded = Vec::with_capacity(1 << 20);
    let mut inflated = Vec::with_capacity(1 << 22);
    let mut raw = flate2::Decompress::new(false);
    let (mut values, mut bytes) = (0u64, 0u64);
    let mut at = 0;
    while let Some(i) = finder.find(&input[at..]) {
        let start = at + i + marker.len();
        let stop = memchr::memchr(end, &input[start..]).map_or(input.len(), |n| start + n);
        at = stop;
        decoded.clear();
        if engine
            .decode_vec(&input[start..stop], &mut decoded)
            .is_err()
        {
            continue;
        }
        values += 1;
        if decoded.starts_with(&[0x1f, 0x8b]) {
            // As the library inflates: one call into room sized by the trailer, with a reused
            // decompressor (faster than flate2's reader).
            inflated.clear();
            inflate(&mut raw, &decoded, &mut inflated).ok_or("not one plain gzip member")?;
            bytes += inflated.len() as u64;
        } else {
            bytes += decoded.len() as u64;
        }
    }
    println!("{values} values, {bytes} bytes");
    Ok(())
}

/// Inflates one gzip member with a plain 10-byte header (what Go's `gzip.Writer` and this
/// project write) in one call, and checks its CRC-32 and size.
fn inflate(raw: &mut flate2::Decompress, gz: &[u8], out: &mut Vec<u8>) -> Option<()> {
    let body = gz.get(10..gz.len().checked_sub(8)?)?;
    let trailer = &gz[gz.len() - 8..];
    let crc = u32::from_le_bytes(trailer[..4].try_into().ok()?);
    let size = u32::from_le_bytes(trailer[4..].try_into().ok()?);
    out.reserve_exact(size as usize);
    raw.reset(false);
    let status = raw
        .decompress_vec(body, out, flate2::FlushDecompress::Finish)
        .ok()?;
    (status == flate2::Status::StreamEnd
        && out.len() == size as usize
        && libdeflater::crc32(out) == crc)
        .then_some(())
}
