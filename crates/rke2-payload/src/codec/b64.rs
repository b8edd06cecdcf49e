//! Base64 as Kubernetes and Go read it: the standard alphabet with padding, line breaks ignored.

use std::borrow::Cow;
use std::sync::LazyLock;

use base64::Engine as _;
use base64::engine::general_purpose::{GeneralPurposeConfig, PAD};
use base64::engine::{DecodePaddingMode, Simd};

/// Go's `base64.StdEncoding`: padding required, non-zero trailing bits tolerated.
static DECODER: LazyLock<Simd> = LazyLock::new(|| {
    Simd::standard(
        GeneralPurposeConfig::new()
            .with_decode_padding_mode(DecodePaddingMode::RequireCanonical)
            .with_decode_allow_trailing_bits(true),
    )
});

/// Canonical padded encoder.
static ENCODER: LazyLock<Simd> = LazyLock::new(|| Simd::standard(PAD));

/// Decodes base64 text as the Kubernetes API server does: `\r` and `\n` anywhere are ignored.
///
/// On failure the message names the offset into `text` (counting line breaks).
pub(crate) fn decode(text: &str) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    decode_into(text, &mut out)?;
    Ok(out)
}

/// Like [`decode`], appending to a caller's buffer so it can be reused across values.
pub(crate) fn decode_into(text: &str, out: &mut Vec<u8>) -> Result<(), String> {
    let bytes = text.as_bytes();
    let compact: Cow<'_, [u8]> = if memchr::memchr2(b'\n', b'\r', bytes).is_some() {
        Cow::Owned(
            bytes
                .iter()
                .copied()
                .filter(|b| !matches!(b, b'\n' | b'\r'))
                .collect(),
        )
    } else {
        Cow::Borrowed(bytes)
    };
    let start = out.len();
    DECODER.decode_vec(&compact, out).map_err(|e| {
        out.truncate(start);
        describe(&e, bytes, &compact)
    })
}

/// The text under base64 found in free text: the standard or URL-safe alphabet, its padding
/// there or cut off (`=` ends a word in a command line), decoded to UTF-8 text; `None` for
/// anything else (bytes that are not text, a length no base64 has).
pub(crate) fn decode_text_lenient(word: &str) -> Option<String> {
    let core = word.trim_end_matches('=');
    if core.is_empty()
        || !core
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'-' | b'_'))
    {
        return None;
    }
    let mut standard: String = core
        .chars()
        .map(|c| match c {
            '-' => '+',
            '_' => '/',
            c => c,
        })
        .collect();
    match standard.len() % 4 {
        2 => standard.push_str("=="),
        3 => standard.push('='),
        0 => {}
        _ => return None,
    }
    decode(&standard)
        .ok()
        .and_then(|b| String::from_utf8(b).ok())
}

/// Standard padded base64 of `bytes`.
pub(crate) fn encode(bytes: &[u8]) -> String {
    ENCODER.encode(bytes)
}

/// Length of the padded base64 text of `n` bytes.
pub(crate) const fn encoded_len(n: u64) -> u64 {
    n.div_ceil(3) * 4
}

fn describe(e: &base64::DecodeError, original: &[u8], compact: &[u8]) -> String {
    // Map an offset in the compacted text back to the original text.
    let map = |offset: usize| -> usize {
        if original.len() == compact.len() {
            return offset;
        }
        let mut seen = 0;
        for (i, b) in original.iter().enumerate() {
            if matches!(b, b'\n' | b'\r') {
                continue;
            }
            if seen == offset {
                return i;
            }
            seen += 1;
        }
        original.len()
    };
    match e {
        base64::DecodeError::InvalidByte(offset, byte) => {
            let what = if *byte == b'=' {
                "misplaced padding `=`".to_owned()
            } else if byte.is_ascii_graphic() || *byte == b' ' {
                format!("invalid character {:?}", *byte as char)
            } else {
                format!("invalid byte 0x{byte:02x}")
            };
            format!("{what} at offset {}", map(*offset))
        }
        base64::DecodeError::InvalidLength(len) => format!(
            "length {len} is not a whole number of base64 groups (truncated or missing padding)"
        ),
        base64::DecodeError::InvalidLastSymbol { offset, .. } => {
            format!("invalid last symbol at offset {}", map(*offset))
        }
        base64::DecodeError::InvalidPadding => {
            "invalid padding (truncated, or missing `=`)".to_owned()
        }
    }
}

#[cfg(test)]
mod tests {

    #[test]
    fn text_under_lenient_base64() {
        assert_eq!(decode_text_lenient("SGVsbG8=").as_deref(), Some("Hello"));
        assert_eq!(decode_text_lenient("SGVsbG8").as_deref(), Some("Hello"));
        assert_eq!(decode_text_lenient("Pz8_").as_deref(), Some("???"));
        assert_eq!(decode_text_lenient("abc.def"), None);
        assert_eq!(decode_text_lenient("A"), None);
    }
    use super::*;

    #[test]
    fn decodes_with_line_breaks() {
        assert_eq!(decode("aGVs\r\nbG8=").as_deref(), Ok(&b"hello"[..]));
        assert_eq!(decode("").as_deref(), Ok(&b""[..]));
    }

    #[test]
    fn names_the_offset_of_a_bad_character() {
        let err = decode("aGVs\nb*8=").unwrap_err();
        assert!(err.contains("'*'"), "{err}");
        assert!(err.contains("offset 6"), "{err}");
    }

    #[test]
    fn rejects_truncated_text() {
        assert!(decode("aGVsbG").is_err());
        assert!(decode("aGVsbG8").is_err());
    }

    #[test]
    fn encoded_len_matches_encoder() {
        for n in 0..50u64 {
            let data = vec![7u8; n as usize];
            assert_eq!(encode(&data).len() as u64, encoded_len(n));
        }
    }

    proptest::proptest! {
        #[test]
        fn round_trip(data: Vec<u8>) {
            proptest::prop_assert_eq!(decode(&encode(&data)).unwrap(), data);
        }
    }
}
