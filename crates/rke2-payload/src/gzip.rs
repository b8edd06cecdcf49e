//! Gzip: bounded inflate that rejects truncation and trailing data, and deterministic deflate.
//!
//! Go's `gzip.Reader` (what produced and what reads these payloads upstream) accepts several
//! concatenated gzip members, so this does too; anything else after the last member is an error.

use std::io::{Read, Write};

use flate2::bufread::GzDecoder;

use crate::error::GzipError;

/// The two magic bytes that start every gzip stream.
pub const MAGIC: [u8; 2] = [0x1f, 0x8b];

/// Whether `bytes` start with the gzip magic.
pub fn is_gzip(bytes: &[u8]) -> bool {
    bytes.starts_with(&MAGIC)
}

/// Inflates a whole gzip stream (one or more members), refusing to produce more than `cap` bytes.
pub fn inflate(compressed: &[u8], cap: u64) -> Result<Vec<u8>, GzipError> {
    let mut out = Vec::with_capacity(compressed.len().saturating_mul(3).min(cap as usize));
    inflate_into(compressed, cap, &mut out)?;
    Ok(out)
}

/// Like [`inflate`], appending to `out` (which is left as it was on error).
pub fn inflate_into(compressed: &[u8], cap: u64, out: &mut Vec<u8>) -> Result<(), GzipError> {
    if !is_gzip(compressed) {
        return Err(GzipError::NotGzip);
    }
    let start = out.len();
    let result = inflate_members(compressed, cap, out, start);
    if result.is_err() {
        out.truncate(start);
    }
    result
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
/// (0–9). The same input and level always give the same bytes with this build.
pub fn deflate(data: &[u8], level: u32) -> Vec<u8> {
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

/// The length [`deflate`] would give for `data`, without keeping the output: a compressor per
/// thread is reused, which saves setting one up for every payload.
pub fn deflated_len(data: &[u8], level: u32) -> u64 {
    use std::cell::RefCell;
    thread_local! {
        static STATE: RefCell<Option<(u32, flate2::Compress, Vec<u8>)>> = const { RefCell::new(None) };
    }
    STATE.with(|state| {
        let mut state = state.borrow_mut();
        let level = level.min(9);
        let fresh = !matches!(&*state, Some((l, _, _)) if *l == level);
        if fresh {
            *state = Some((
                level,
                flate2::Compress::new(flate2::Compression::new(level), false),
                Vec::with_capacity(1 << 16),
            ));
        }
        let Some((_, compress, out)) = state.as_mut() else {
            return deflate(data, level).len() as u64;
        };
        compress.reset();
        // The same calls as flate2's writer makes: data without flushing, then a finish.
        let mut input = data;
        let mut total = 0u64;
        let mut finishing = false;
        loop {
            out.clear();
            let before_in = compress.total_in();
            let before_out = compress.total_out();
            let flush = if finishing {
                flate2::FlushCompress::Finish
            } else {
                flate2::FlushCompress::None
            };
            let status = compress.compress_vec(input, out, flush);
            let consumed = (compress.total_in() - before_in) as usize;
            input = &input[consumed.min(input.len())..];
            total += compress.total_out() - before_out;
            match status {
                Ok(flate2::Status::StreamEnd) => break,
                Ok(_) if !finishing && input.is_empty() => finishing = true,
                Ok(_) => {}
                Err(_) => return deflate(data, level).len() as u64,
            }
        }
        // The gzip header (10 bytes) and trailer (CRC-32 and length, 8 bytes).
        total + 18
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
    fn deflated_len_is_the_length_of_deflate() {
        let text = b"## template: jinja\n#cloud-config\nruncmd: []\n".repeat(500);
        let big: Vec<u8> = (0..300_000u32)
            .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
            .collect();
        for data in [&b""[..], b"x", &text[..], &text[..777], &big[..]] {
            for level in [1, 6, 9] {
                assert_eq!(deflated_len(data, level), deflate(data, level).len() as u64);
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
            let _ = inflate(&input, 1 << 16);
        }

        #[test]
        fn deflated_len_matches(data: Vec<u8>, level in 0u32..=9) {
            proptest::prop_assert_eq!(deflated_len(&data, level), deflate(&data, level).len() as u64);
        }

        #[test]
        fn round_trip(data: Vec<u8>, level in 0u32..=9) {
            proptest::prop_assert_eq!(inflate(&deflate(&data, level), u64::MAX).unwrap(), data);
        }
    }
}
