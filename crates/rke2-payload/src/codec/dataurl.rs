//! `data:` URLs (RFC 2397), as Ignition reads them for file contents and config wrappers.
//!
//! `data:[<mediatype>][;base64],<data>`. Without `;base64` the data is percent-encoded text, and
//! `+` means a plus sign, never a space.

use std::borrow::Cow;

use super::b64;

/// A `data:` URL (RFC 2397) decoding failure.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum DataUrlError {
    /// The URL does not start with `data:`.
    #[error("not a data URL (no `data:` scheme)")]
    NotDataUrl,
    /// There is no `,` between the media type and the data.
    #[error("data URL has no `,` before its data")]
    NoComma,
    /// The base64 part is invalid.
    #[error("data URL base64 is invalid: {detail}")]
    Base64 {
        /// What is wrong, with the offset into the data part.
        detail: String,
    },
    /// A `%` escape is malformed.
    #[error("data URL has a malformed %-escape at byte {offset} of its data")]
    Percent {
        /// Offset into the data part.
        offset: usize,
    },
}

/// A parsed `data:` URL, borrowing from the URL text. Its `Debug` shows the data's length, not
/// the data (a file's contents, a key).
#[derive(Clone, PartialEq, Eq)]
pub(crate) struct DataUrl<'a> {
    /// The media type as written (may be empty), without the `;base64` flag.
    pub media_type: &'a str,
    /// Whether the data part is base64.
    pub base64: bool,
    /// The data part, still encoded.
    pub data: &'a str,
}

impl std::fmt::Debug for DataUrl<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DataUrl")
            .field("media_type", &self.media_type)
            .field("base64", &self.base64)
            .field("data_bytes", &self.data.len())
            .finish()
    }
}

impl<'a> DataUrl<'a> {
    /// Splits a `data:` URL into its parts without decoding the data.
    pub(crate) fn parse(url: &'a str) -> Result<Self, DataUrlError> {
        let rest = url
            .get(..5)
            .filter(|scheme| scheme.eq_ignore_ascii_case("data:"))
            .map(|_| &url[5..])
            .ok_or(DataUrlError::NotDataUrl)?;
        let (meta, data) = rest.split_once(',').ok_or(DataUrlError::NoComma)?;
        let (media_type, base64) = match meta.rsplit_once(';') {
            Some((media, flag)) if flag.trim().eq_ignore_ascii_case("base64") => (media, true),
            _ => (meta, false),
        };
        Ok(DataUrl {
            media_type,
            base64,
            data,
        })
    }

    /// Decodes the data part. Percent-encoded data without escapes is borrowed.
    pub(crate) fn decode(&self) -> Result<Cow<'a, [u8]>, DataUrlError> {
        if self.base64 {
            // Base64 data may itself be percent-encoded (rare); undo that first.
            let text = percent_decode(self.data)?;
            let text = std::str::from_utf8(&text).map_err(|_| DataUrlError::Base64 {
                detail: "not ASCII text".to_owned(),
            })?;
            b64::decode(text)
                .map(Cow::Owned)
                .map_err(|detail| DataUrlError::Base64 { detail })
        } else {
            percent_decode(self.data)
        }
    }
}

/// Parses and decodes a `data:` URL in one step.
pub(crate) fn decode(url: &str) -> Result<Cow<'_, [u8]>, DataUrlError> {
    DataUrl::parse(url)?.decode()
}

fn percent_decode(text: &str) -> Result<Cow<'_, [u8]>, DataUrlError> {
    let bytes = text.as_bytes();
    let Some(first) = memchr::memchr(b'%', bytes) else {
        return Ok(Cow::Borrowed(bytes));
    };
    let mut out = Vec::with_capacity(bytes.len());
    out.extend_from_slice(&bytes[..first]);
    let mut i = first;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = bytes
                .get(i + 1..i + 3)
                .and_then(|h| std::str::from_utf8(h).ok())
                .and_then(|h| u8::from_str_radix(h, 16).ok())
                .ok_or(DataUrlError::Percent { offset: i })?;
            out.push(hex);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    Ok(Cow::Owned(out))
}

/// A `data:` URL made for a file's contents, as Butane writes them ([`file_data_url`]). Its
/// `Debug` output shows the URL's length, never the URL (a file's contents may be a secret).
#[derive(Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct FileDataUrl {
    /// The URL: `data:,…` (percent-encoded) or `data:;base64,…`.
    pub url: String,
    /// Whether the data under the URL is gzip (Ignition's `compression: gzip`).
    pub gzip: bool,
}

impl std::fmt::Debug for FileDataUrl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FileDataUrl")
            .field("url_bytes", &self.url.len())
            .field("gzip", &self.gzip)
            .finish()
    }
}

/// The `data:` URL Butane writes for a file's contents: the shorter of the percent-encoded and
/// the base64 URL, or the base64 of the gzipped bytes (level 9, deterministic) when that is
/// shorter by more than 4 bytes (what `compression: gzip` adds).
///
/// ```
/// let url = rke2_payload::codec::file_data_url(b"hello");
/// assert_eq!((url.url.as_str(), url.gzip), ("data:,hello", false));
/// let url = rke2_payload::codec::file_data_url("abc\n".repeat(100).as_bytes());
/// assert!(url.gzip && url.url.starts_with("data:;base64,H4sI"));
/// ```
pub fn file_data_url(bytes: &[u8]) -> FileDataUrl {
    let percent = format!("data:,{}", percent_encode(bytes));
    let base64 = format!("data:;base64,{}", b64::encode(bytes));
    let mut url = if base64.len() < percent.len() {
        base64
    } else {
        percent
    };
    let gzipped = format!(
        "data:;base64,{}",
        b64::encode(&super::gzip::deflate(bytes, 9))
    );
    let gzip = gzipped.len() + 4 < url.len();
    if gzip {
        url = gzipped;
    }
    FileDataUrl { url, gzip }
}

/// Percent-encodes `data` the way Butane does: `A-Z a-z 0-9 - _ . ! ~ * ' ( )` are kept, every
/// other byte becomes `%XX` with upper-case hex.
pub(crate) fn percent_encode(data: &[u8]) -> String {
    const HEX: &[u8; 16] = b"0123456789ABCDEF";
    let mut out = String::with_capacity(data.len() * 3);
    for &b in data {
        if b.is_ascii_alphanumeric() || b"-_.!~*'()".contains(&b) {
            out.push(b as char);
        } else {
            out.push('%');
            out.push(HEX[usize::from(b >> 4)] as char);
            out.push(HEX[usize::from(b & 15)] as char);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_forms_ignition_uses() {
        let url = DataUrl::parse("data:,configs%3A%20null%0A").unwrap();
        assert!(!url.base64);
        assert_eq!(url.decode().unwrap().as_ref(), b"configs: null\n");

        let url = DataUrl::parse("data:;base64,aGVsbG8=").unwrap();
        assert!(url.base64);
        assert_eq!(url.media_type, "");
        assert_eq!(url.decode().unwrap().as_ref(), b"hello");

        let url = DataUrl::parse("data:text/plain;base64,aGVsbG8=").unwrap();
        assert_eq!(url.media_type, "text/plain");
        assert_eq!(url.decode().unwrap().as_ref(), b"hello");

        let url = DataUrl::parse("data:text/plain;charset=utf-8,a+b").unwrap();
        assert_eq!(url.decode().unwrap().as_ref(), b"a+b", "+ is not a space");
    }

    #[test]
    fn unescaped_text_is_borrowed() {
        assert!(matches!(decode("data:,abc").unwrap(), Cow::Borrowed(_)));
    }

    #[test]
    fn errors() {
        assert_eq!(decode("https://x/y"), Err(DataUrlError::NotDataUrl));
        assert_eq!(decode("data:abc"), Err(DataUrlError::NoComma));
        assert_eq!(
            decode("data:,a%2"),
            Err(DataUrlError::Percent { offset: 1 })
        );
        assert_eq!(
            decode("data:,%zz"),
            Err(DataUrlError::Percent { offset: 0 })
        );
        assert!(matches!(
            decode("data:;base64,aGV*bG8="),
            Err(DataUrlError::Base64 { .. })
        ));
        assert_eq!(decode("da"), Err(DataUrlError::NotDataUrl));
        assert_eq!(decode("dat\u{e9}:,x"), Err(DataUrlError::NotDataUrl));
    }

    proptest::proptest! {
        #[test]
        fn percent_round_trip(data: Vec<u8>) {
            let url = format!("data:,{}", percent_encode(&data));
            proptest::prop_assert_eq!(decode(&url).unwrap().into_owned(), data);
        }

        #[test]
        fn never_panics(s: String) {
            // Whatever the text: an answer, never a panic; only a `data:` URL decodes.
            if decode(&s).is_ok() {
                proptest::prop_assert!(s.get(..5).is_some_and(|p| p.eq_ignore_ascii_case("data:")));
            }
        }
    }
}
