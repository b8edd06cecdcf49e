//! Gzip: bounded inflate that rejects truncation and trailing data, and deterministic deflate.
//!
//! Go's `gzip.Reader` (what produced and what reads these payloads upstream) accepts several
//! concatenated gzip members, so this does too; anything else after the last member is an error.

use std::io::{Read, Write};

use flate2::bufread::GzDecoder;

/// A gzip decoding failure.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum GzipError {
    /// The bytes do not start with the gzip magic `1f 8b`.
    #[error("not gzip (no 1f 8b magic)")]
    NotGzip,
    /// The stream ends before the gzip trailer.
    #[error("gzip stream is truncated: its {len} compressed bytes end before the gzip trailer")]
    Truncated {
        /// Compressed bytes in all.
        len: u64,
    },
    /// The deflate data or the header is corrupt.
    #[error("gzip stream is corrupt near compressed byte {offset}: {detail}")]
    Corrupt {
        /// Compressed byte offset where decoding stopped (approximate).
        offset: u64,
        /// The decoder's message.
        detail: String,
    },
    /// Bytes that are not another gzip member follow the end of the stream.
    #[error("{trailing} bytes of trailing data after the gzip stream at compressed byte {offset}")]
    TrailingData {
        /// Where the trailing data starts.
        offset: u64,
        /// How many bytes follow.
        trailing: u64,
    },
    /// Inflating would exceed the configured cap (a gzip bomb, or a cap set too low).
    #[error(
        "gzip stream inflates past the cap of {cap} bytes (from {compressed} compressed bytes): a gzip bomb, or a payload larger than the cap (raise it with --max-inflated BYTES if it is genuine)"
    )]
    TooLarge {
        /// The cap in bytes.
        cap: u64,
        /// Compressed size.
        compressed: u64,
    },
}

/// The two magic bytes that start every gzip stream.
pub(crate) const MAGIC: [u8; 2] = [0x1f, 0x8b];

/// Whether `bytes` start with the gzip magic.
pub(crate) fn is_gzip(bytes: &[u8]) -> bool {
    bytes.starts_with(&MAGIC)
}

/// Inflates a whole gzip stream (one or more members), refusing to produce more than `cap` bytes.
pub(crate) fn inflate(compressed: &[u8], cap: u64) -> Result<Vec<u8>, GzipError> {
    let mut out = Vec::with_capacity(compressed.len().saturating_mul(3).min(cap as usize));
    inflate_into(compressed, cap, &mut out)?;
    Ok(out)
}

/// Like [`inflate`], appending to `out` (which is left as it was on error).
pub(crate) fn inflate_into(
    compressed: &[u8],
    cap: u64,
    out: &mut Vec<u8>,
) -> Result<(), GzipError> {
    if !is_gzip(compressed) {
        return Err(GzipError::NotGzip);
    }
    let start = out.len();
    if inflate_whole(compressed, cap, out) {
        return Ok(());
    }
    out.truncate(start);
    let result = inflate_members(compressed, cap, out, start);
    if result.is_err() {
        out.truncate(start);
    }
    result
}

/// The fast path for the common case, one gzip member with a plain header: inflates the whole
/// member at once into room sized by its trailer, with a decompressor kept per thread. `false`
/// when the input is anything else, or not sound: the general path then reads it again and says
/// what is wrong.
fn inflate_whole(compressed: &[u8], cap: u64, out: &mut Vec<u8>) -> bool {
    use std::cell::RefCell;
    thread_local! {
        static RAW: RefCell<flate2::Decompress> = RefCell::new(flate2::Decompress::new(false));
    }
    // ID1 ID2 CM=8 FLG=0 MTIME(4) XFL OS, then the deflate data, then CRC32 and ISIZE.
    let (Some(head), Some(trailer)) = (
        compressed.get(..10),
        compressed
            .len()
            .checked_sub(8)
            .and_then(|i| compressed.get(i..)),
    ) else {
        return false;
    };
    if head[2] != 8 || head[3] != 0 || compressed.len() < 18 {
        return false;
    }
    let word = |b: &[u8]| u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
    let (crc, size) = (word(&trailer[..4]), word(&trailer[4..]));
    if u64::from(size) > cap {
        return false;
    }
    let body = &compressed[10..compressed.len() - 8];
    let start = out.len();
    out.reserve_exact(size as usize);
    RAW.with(|raw| {
        let Ok(mut raw) = raw.try_borrow_mut() else {
            return false;
        };
        raw.reset(false);
        let status = raw.decompress_vec(body, out, flate2::FlushDecompress::Finish);
        let whole = matches!(status, Ok(flate2::Status::StreamEnd))
            && raw.total_in() == body.len() as u64
            && out.len() - start == size as usize;
        // libdeflate's CRC-32 uses the CPU's carry-less multiply; flate2's, on this backend, a
        // table.
        whole && libdeflater::crc32(&out[start..]) == crc
    })
}

fn inflate_members(
    compressed: &[u8],
    cap: u64,
    out: &mut Vec<u8>,
    start: usize,
) -> Result<(), GzipError> {
    let len = compressed.len() as u64;
    let mut rest = compressed;
    loop {
        let offset = len - rest.len() as u64;
        let produced = (out.len() - start) as u64;
        let budget = cap.saturating_sub(produced);
        let mut decoder = GzDecoder::new(rest);
        let read = (&mut decoder)
            .take(budget.saturating_add(1))
            .read_to_end(out);
        let consumed_now = || len - decoder.get_ref().len() as u64;
        match read {
            Ok(_) if (out.len() - start) as u64 > cap => {
                return Err(GzipError::TooLarge {
                    cap,
                    compressed: len,
                });
            }
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => {
                return Err(GzipError::Truncated { len });
            }
            Err(e) => {
                return Err(GzipError::Corrupt {
                    offset: consumed_now().max(offset),
                    detail: e.to_string(),
                });
            }
        }
        if decoder.header().is_none() {
            // flate2 reports an empty or header-truncated stream as a clean end.
            return Err(GzipError::Truncated { len });
        }
        rest = decoder.into_inner();
        if rest.is_empty() {
            return Ok(());
        }
        if !is_gzip(rest) {
            return Err(GzipError::TrailingData {
                offset: len - rest.len() as u64,
                trailing: rest.len() as u64,
            });
        }
    }
}

/// Compresses `data` deterministically: header mtime 0, no file name, OS byte 255, the given level
/// (0–9). The same input and level always give the same bytes with this build. A compressor is
/// kept per thread and level, so that many small files (a conversion) cost no allocation each.
pub(crate) fn deflate(data: &[u8], level: u32) -> Vec<u8> {
    use std::cell::RefCell;
    thread_local! {
        static RAW: RefCell<Vec<(u32, flate2::Compress)>> = const { RefCell::new(Vec::new()) };
    }
    let level = level.min(9);
    // The header `flate2::GzBuilder` writes: mtime 0, XFL 2 for the best level, 4 for the
    // fastest, OS 255.
    let xfl = match level {
        9 => 2,
        0 | 1 => 4,
        _ => 0,
    };
    let mut out = Vec::with_capacity(data.len() / 2 + 64);
    out.extend_from_slice(&[0x1f, 0x8b, 8, 0, 0, 0, 0, 0, xfl, 255]);
    let deflated = RAW.with(|raw| {
        let Ok(mut raw) = raw.try_borrow_mut() else {
            return false;
        };
        let at = match raw.iter().position(|(l, _)| *l == level) {
            Some(at) => at,
            None => {
                raw.push((
                    level,
                    flate2::Compress::new(flate2::Compression::new(level), false),
                ));
                raw.len() - 1
            }
        };
        let compress = &mut raw[at].1;
        compress.reset();
        // As `flate2`'s writer feeds it: all the data without flushing, then the end.
        loop {
            let consumed = usize::try_from(compress.total_in()).unwrap_or(usize::MAX);
            let Some(rest) = data.get(consumed..).filter(|r| !r.is_empty()) else {
                break;
            };
            out.reserve(rest.len() / 2 + 1024);
            if compress
                .compress_vec(rest, &mut out, flate2::FlushCompress::None)
                .is_err()
            {
                return false;
            }
        }
        loop {
            out.reserve(1024);
            match compress.compress_vec(&[], &mut out, flate2::FlushCompress::Finish) {
                Ok(flate2::Status::StreamEnd) => return true,
                Ok(_) => continue,
                Err(_) => return false,
            }
        }
    });
    if !deflated {
        return deflate_with_builder(data, level);
    }
    out.extend_from_slice(&crc32(data).to_le_bytes());
    out.extend_from_slice(&(data.len() as u32).to_le_bytes());
    out
}

/// The CRC-32 of gzip's trailer.
fn crc32(data: &[u8]) -> u32 {
    libdeflater::crc32(data)
}

/// [`deflate`] through `flate2`'s writer (when the thread's compressor is in use).
fn deflate_with_builder(data: &[u8], level: u32) -> Vec<u8> {
    let mut encoder = flate2::GzBuilder::new().write(
        Vec::with_capacity(data.len() / 2 + 64),
        flate2::Compression::new(level.min(9)),
    );
    // Writing into a Vec cannot fail.
    let written = encoder.write_all(data).and_then(|()| encoder.finish());
    match written {
        Ok(bytes) => bytes,
        Err(e) => unreachable!("gzip into memory failed: {e}"),
    }
}

/// What gzip at Go's default level (what CAPRKE2's `gzipUserData` uses) makes of `data`, in
/// bytes: an estimate, computed by compressing with libdeflate at level 6, whose output on
/// CAPRKE2 payloads is within 1.5% (10 bytes on payloads under 1 KB) of Go's `compress/gzip` (see the tests; zlib's level 6 is
/// as close, and about 1.75 times slower). A compressor and its output buffer are kept per thread.
pub(crate) fn estimated_len(data: &[u8]) -> u64 {
    use std::cell::RefCell;
    thread_local! {
        static STATE: RefCell<Option<(libdeflater::Compressor, Vec<u8>)>> = const { RefCell::new(None) };
    }
    STATE.with(|state| {
        let Ok(mut state) = state.try_borrow_mut() else {
            return deflate(data, 6).len() as u64;
        };
        let (compressor, out) = state.get_or_insert_with(|| {
            (
                libdeflater::Compressor::new(libdeflater::CompressionLvl::default()),
                Vec::new(),
            )
        });
        let bound = compressor.gzip_compress_bound(data.len());
        if out.len() < bound {
            out.resize(bound, 0);
        }
        match compressor.gzip_compress(data, out) {
            Ok(n) => n as u64,
            // The bound is always enough; zlib is the answer if it ever is not.
            Err(_) => deflate(data, 6).len() as u64,
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_header_is_deterministic() {
        let text = b"## template: jinja\n#cloud-config\nruncmd: []\n".repeat(20);
        let gz = deflate(&text, 6);
        assert_eq!(&gz[..4], &[0x1f, 0x8b, 8, 0]);
        assert_eq!(&gz[4..8], &[0, 0, 0, 0], "mtime must be 0");
        assert_eq!(gz, deflate(&text, 6));
        assert_eq!(inflate(&gz, 1 << 20).unwrap(), text);
    }

    #[test]
    fn the_estimate_is_a_plausible_gzip_size() {
        let text = b"## template: jinja\n#cloud-config\nruncmd: []\n".repeat(500);
        let big: Vec<u8> = (0..300_000u32)
            .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
            .collect();
        for data in [&b""[..], b"x", &text[..], &text[..777], &big[..]] {
            let estimate = estimated_len(data);
            // Never below a gzip header and trailer, never above storing the data.
            assert!(estimate >= 20, "{} bytes: {estimate}", data.len());
            assert!(estimate <= data.len() as u64 + 18 + 5 * (data.len() as u64 / 65_535 + 1));
        }
        // On data that does not compress, every encoder makes about the same size.
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let noise: Vec<u8> = (0..200_000)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x as u8
            })
            .collect();
        let zlib = deflate(&noise, 6).len() as f64;
        let estimate = estimated_len(&noise) as f64;
        assert!(
            (estimate - zlib).abs() <= zlib * 0.02,
            "estimate {estimate}, zlib {zlib}"
        );
        // The same thread's compressor again, for a smaller input: the same answer.
        assert_eq!(estimated_len(&text), estimated_len(&text.clone()));
    }

    #[test]
    fn a_lying_trailer_falls_back_to_the_general_path() {
        let data = b"hello hello hello hello".repeat(50);
        let good = deflate(&data, 6);
        for size in [
            0u32,
            1,
            data.len() as u32 - 1,
            data.len() as u32 + 1,
            u32::MAX,
        ] {
            let mut bad = good.clone();
            let at = bad.len() - 4;
            bad[at..].copy_from_slice(&size.to_le_bytes());
            // flate2 checks the trailer too: every variant is an error, none a wrong answer.
            assert!(inflate(&bad, 1 << 20).is_err(), "ISIZE {size}");
        }
        let mut bad_crc = good.clone();
        let at = bad_crc.len() - 8;
        bad_crc[at] ^= 1;
        assert!(inflate(&bad_crc, 1 << 20).is_err());
        assert_eq!(inflate(&good, 1 << 20).unwrap(), data);
        // A member with a file name (FLG.FNAME) takes the general path and still works.
        let mut named = Vec::new();
        let mut w = flate2::GzBuilder::new()
            .filename("user-data")
            .write(&mut named, flate2::Compression::new(6));
        w.write_all(&data).unwrap();
        w.finish().unwrap();
        assert_eq!(inflate(&named, 1 << 20).unwrap(), data);
    }

    #[test]
    fn the_kept_compressor_writes_what_flate2_s_writer_writes() {
        let text = b"## template: jinja\n#cloud-config\nruncmd: []\n".repeat(300);
        for level in 0..=9 {
            for data in [&b""[..], b"x", &text[..], &text[..1000]] {
                assert_eq!(
                    deflate(data, level),
                    deflate_with_builder(data, level),
                    "level {level}"
                );
            }
        }
    }

    #[test]
    fn reads_concatenated_members() {
        let mut gz = deflate(b"abc", 6);
        gz.extend(deflate(b"def", 9));
        assert_eq!(inflate(&gz, 100).unwrap(), b"abcdef");
    }

    #[test]
    fn rejects_trailing_data_truncation_and_bombs() {
        let mut gz = deflate(b"hello world", 6);
        gz.extend_from_slice(b"JUNK");
        assert!(matches!(
            inflate(&gz, 100),
            Err(GzipError::TrailingData { trailing: 4, .. })
        ));

        let gz = deflate(&[b'x'; 10_000], 6);
        for cut in [3, 10, gz.len() / 2, gz.len() - 1] {
            let err = inflate(&gz[..cut], 1 << 20).unwrap_err();
            assert!(
                matches!(err, GzipError::Truncated { .. } | GzipError::Corrupt { .. }),
                "cut {cut}: {err:?}"
            );
        }

        let bomb = deflate(&vec![0u8; 5_000_000], 9);
        assert_eq!(
            inflate(&bomb, 1_000_000),
            Err(GzipError::TooLarge {
                cap: 1_000_000,
                compressed: bomb.len() as u64
            })
        );
        // Exactly at the cap is fine.
        assert_eq!(inflate(&bomb, 5_000_000).unwrap().len(), 5_000_000);
    }

    #[test]
    fn rejects_non_gzip() {
        assert_eq!(inflate(b"#cloud-config", 10), Err(GzipError::NotGzip));
        assert!(inflate(&MAGIC, 10).is_err());
    }

    proptest::proptest! {
        #[test]
        fn inflate_never_panics(data: Vec<u8>) {
            let mut input = MAGIC.to_vec();
            input.extend(data);
            // Whatever the bytes: an answer, never a panic, and never more than the cap.
            if let Ok(out) = inflate(&input, 1 << 16) {
                proptest::prop_assert!(out.len() <= 1 << 16);
            }
        }

        #[test]
        fn the_fast_path_agrees_with_the_general_one(data: Vec<u8>, level in 0u32..=9, cut in 0usize..64) {
            let gz = deflate(&data, level);
            let mut fast = Vec::new();
            let whole = inflate_whole(&gz, u64::MAX, &mut fast);
            proptest::prop_assert!(whole);
            proptest::prop_assert_eq!(&fast, &data);
            // Truncated: the fast path declines and the general path reports it.
            let short = &gz[..gz.len().saturating_sub(cut + 1)];
            let mut out = Vec::new();
            proptest::prop_assert!(!inflate_whole(short, u64::MAX, &mut out));
            proptest::prop_assert!(inflate(short, u64::MAX).is_err());
        }

        #[test]
        fn the_kept_compressor_matches_the_writer(data: Vec<u8>, level in 0u32..=9) {
            proptest::prop_assert_eq!(deflate(&data, level), deflate_with_builder(&data, level));
        }

        #[test]
        fn round_trip(data: Vec<u8>, level in 0u32..=9) {
            proptest::prop_assert_eq!(inflate(&deflate(&data, level), u64::MAX).unwrap(), data);
        }
    }
}
