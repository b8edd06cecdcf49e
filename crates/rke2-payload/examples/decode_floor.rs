//! The bare decode floor for benchmarks: find every `value` of a kubectl dump (YAML or JSON)
//! by scanning bytes, base64-decode it, and inflate it when it is gzip. No parsing, no checks,
//! one thread.
//! Prints the number of values and the decoded bytes.
//!
//!     cargo run --release --example decode_floor -- DUMP

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
            // The library's inflate: one call per member into room sized by the trailer, with a
            // reused decompressor (faster than flate2's reader).
            inflated.clear();
            rke2_payload::gzip::inflate_into(&decoded, u64::MAX, &mut inflated)?;
            bytes += inflated.len() as u64;
        } else {
            bytes += decoded.len() as u64;
        }
    }
    println!("{values} values, {bytes} bytes");
    Ok(())
}
