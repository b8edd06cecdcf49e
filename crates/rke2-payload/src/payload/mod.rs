//! The payload layer: from `data.value` bytes to the user data the node's first-boot agent acts on.
//!
//! It reads the `format` key against what the bytes are, undoes CAPRKE2's compression (raw gzip for
//! cloud-config, the `config.replace` data-URL wrapper for Ignition), and recognises the two-line
//! `## template: jinja` / `#cloud-config` header.

use std::borrow::Cow;

use serde::Deserialize;

use crate::codec::gzip::{self, GzipError};
use crate::codec::text::shorten;
use crate::codec::{b64, dataurl};
use crate::envelope::BootstrapSecret;
use crate::error::{Error, PayloadError};
use crate::options::DecodeOptions;

/// The `format` key of a bootstrap Secret, as declared. In JSON it is what the key holds:
/// `"cloud-config"`, `"ignition"`, `""` (empty), or `null` (no key).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum DeclaredFormat {
    /// `cloud-config`.
    CloudConfig,
    /// `ignition`.
    Ignition,
    /// The key is present but empty; CAPRKE2 then renders cloud-config.
    Empty,
    /// There is no `format` key (or the input is bare user data).
    Missing,
}

impl DeclaredFormat {
    /// What the key holds (`None` when there is no key).
    ///
    /// ```
    /// use rke2_payload::DeclaredFormat;
    /// assert_eq!(DeclaredFormat::Empty.as_str(), Some(""));
    /// assert_eq!(DeclaredFormat::Missing.as_str(), None);
    /// ```
    pub fn as_str(self) -> Option<&'static str> {
        match self {
            DeclaredFormat::CloudConfig => Some("cloud-config"),
            DeclaredFormat::Ignition => Some("ignition"),
            DeclaredFormat::Empty => Some(""),
            DeclaredFormat::Missing => None,
        }
    }

    /// The format CAPRKE2 renders for this declaration, if it says one.
    pub fn format(self) -> Option<Format> {
        match self {
            DeclaredFormat::CloudConfig | DeclaredFormat::Empty => Some(Format::CloudConfig),
            DeclaredFormat::Ignition => Some(Format::Ignition),
            DeclaredFormat::Missing => None,
        }
    }
}

impl serde::Serialize for DeclaredFormat {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self.as_str() {
            Some(text) => serializer.serialize_str(text),
            None => serializer.serialize_none(),
        }
    }
}

/// The `format` key as stored: `cloud-config`, `ignition`, empty, or null when missing.
#[cfg(feature = "schema")]
impl schemars::JsonSchema for DeclaredFormat {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "DeclaredFormat".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "description": "The `format` key as stored: `cloud-config`, `ignition`, empty, or null when the key is missing.",
            "type": ["string", "null"],
            "enum": ["cloud-config", "ignition", "", null],
        })
    }
}

impl<'de> serde::Deserialize<'de> for DeclaredFormat {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = <Option<std::borrow::Cow<'de, str>>>::deserialize(deserializer)?;
        Ok(match text.as_deref() {
            None | Some("missing") => DeclaredFormat::Missing,
            Some("" | "empty") => DeclaredFormat::Empty,
            Some("cloud-config") => DeclaredFormat::CloudConfig,
            Some("ignition") => DeclaredFormat::Ignition,
            Some(other) => {
                return Err(serde::de::Error::custom(format_args!(
                    "unknown declared format {other:?}"
                )));
            }
        })
    }
}

/// A user data format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum Format {
    /// A cloud-init cloud-config document.
    CloudConfig,
    /// An Ignition 3.x JSON config.
    Ignition,
}

impl Format {
    /// The name used in the `format` key.
    pub fn as_str(self) -> &'static str {
        match self {
            Format::CloudConfig => "cloud-config",
            Format::Ignition => "ignition",
        }
    }
}

impl std::fmt::Display for Format {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// How `data.value` is compressed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "kebab-case", tag = "kind")]
#[non_exhaustive]
pub enum Compression {
    /// Not compressed: the value is the user data.
    None,
    /// The value is raw gzip bytes (CAPRKE2 `gzipUserData: true` with cloud-config).
    Gzip,
    /// The value is an Ignition config whose `ignition.config.replace.source` is a `data:` URL
    /// holding the real config (CAPRKE2 `gzipUserData: true` with Ignition).
    IgnitionWrapper {
        /// Whether the wrapped config is gzip (`compression: gzip`), as CAPRKE2 writes it.
        gzip: bool,
    },
}

impl Compression {
    /// Whether any gzip is involved.
    pub fn is_gzip(self) -> bool {
        matches!(
            self,
            Compression::Gzip | Compression::IgnitionWrapper { gzip: true }
        )
    }
}

/// What the user data itself looks like, from its first bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum UserDataKind {
    /// `#cloud-config` text; `jinja` when it starts with CAPRKE2's `## template: jinja` line.
    CloudConfig {
        /// Whether the `## template: jinja` line comes first.
        jinja: bool,
    },
    /// An Ignition config (a JSON object with `ignition.version`).
    Ignition,
    /// Some other cloud-init input: a script (`#!`), `#include`, or MIME multipart.
    OtherCloudInit,
    /// Nothing recognisable; the declared format is trusted.
    Unrecognised,
}

/// A decoded payload: the stored value, how it was compressed, and the final user data.
#[derive(Clone)]
pub struct Payload<'a> {
    declared: DeclaredFormat,
    format: Format,
    content: UserDataKind,
    compression: Compression,
    ignition_version: Option<String>,
    value: Cow<'a, [u8]>,
    inflated: Option<Vec<u8>>,
}

impl std::fmt::Debug for Payload<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Payload")
            .field("declared", &self.declared)
            .field("format", &self.format)
            .field("content", &self.content)
            .field("compression", &self.compression)
            .field("value_bytes", &self.value.len())
            .field("userdata_bytes", &self.userdata().len())
            .finish_non_exhaustive()
    }
}

impl<'a> Payload<'a> {
    /// Decodes `value` (the bytes of `data.value`) declared as `declared`.
    pub fn decode(
        value: Cow<'a, [u8]>,
        declared: DeclaredFormat,
        options: &DecodeOptions,
    ) -> Result<Self, PayloadError> {
        let cap = options.max_inflated;
        let (compression, inflated) = if gzip::is_gzip(&value) {
            let inflated = gzip::inflate(&value, cap).map_err(|error| PayloadError::Gzip {
                what: "data.value".to_owned(),
                error,
            })?;
            if gzip::is_gzip(&inflated) {
                return Err(PayloadError::NestedGzip);
            }
            (Compression::Gzip, Some(inflated))
        } else if looks_like_json(&value) {
            match unwrap_ignition(&value, cap)? {
                Some((gzip, inner)) => (Compression::IgnitionWrapper { gzip }, Some(inner)),
                None => (Compression::None, None),
            }
        } else {
            (Compression::None, None)
        };
        let userdata: &[u8] = inflated.as_deref().unwrap_or(&value);
        let (content, ignition_version) = sniff(userdata, declared)?;
        let format = match content {
            UserDataKind::CloudConfig { .. } | UserDataKind::OtherCloudInit => Format::CloudConfig,
            UserDataKind::Ignition => Format::Ignition,
            UserDataKind::Unrecognised => declared.format().unwrap_or(Format::CloudConfig),
        };
        Ok(Payload {
            declared,
            format,
            content,
            compression,
            ignition_version,
            value,
            inflated,
        })
    }

    /// The `format` key as declared.
    pub fn declared_format(&self) -> DeclaredFormat {
        self.declared
    }

    /// The format of the user data: from its content, or from the `format` key when the content
    /// is not recognisable.
    pub fn format(&self) -> Format {
        self.format
    }

    /// Whether the `format` key names a different format than the content has.
    pub fn format_mismatch(&self) -> bool {
        let content = match self.content {
            UserDataKind::CloudConfig { .. } | UserDataKind::OtherCloudInit => Format::CloudConfig,
            UserDataKind::Ignition => Format::Ignition,
            UserDataKind::Unrecognised => return false,
        };
        self.declared.format().is_some_and(|d| d != content)
    }

    /// What the user data looks like.
    pub fn content(&self) -> UserDataKind {
        self.content
    }

    /// How the value was compressed.
    pub fn compression(&self) -> Compression {
        self.compression
    }

    /// `ignition.version` of the (inner) Ignition config.
    pub fn ignition_version(&self) -> Option<&str> {
        self.ignition_version.as_deref()
    }

    /// The bytes of `data.value`, exactly as stored.
    pub fn value(&self) -> &[u8] {
        &self.value
    }

    /// The user data the first-boot agent acts on: decompressed and unwrapped.
    pub fn userdata(&self) -> &[u8] {
        self.inflated.as_deref().unwrap_or(&self.value)
    }

    /// The user data as text, if it is UTF-8.
    pub fn userdata_text(&self) -> Option<&str> {
        std::str::from_utf8(self.userdata()).ok()
    }
}

/// The payload step of a Secret: what its `format` key declares, and its `value` decoded.
impl<'a> BootstrapSecret<'a> {
    /// The `format` key as declared.
    ///
    /// # Errors
    /// [`Error::Base64`] when the key is not base64, [`Error::UnknownFormat`] when it names
    /// neither `cloud-config` nor `ignition`.
    pub fn declared_format(&self) -> Result<DeclaredFormat, Error> {
        let Some(text) = self.format_key()? else {
            return Ok(DeclaredFormat::Missing);
        };
        match text.trim() {
            "" => Ok(DeclaredFormat::Empty),
            "cloud-config" => Ok(DeclaredFormat::CloudConfig),
            "ignition" => Ok(DeclaredFormat::Ignition),
            // Never the value itself: an unexpected `format` could hold anything.
            other => Err(Error::UnknownFormat {
                secret: self.id().clone(),
                format: format!(
                    "sha256:{}",
                    &crate::codec::digest::sha256_hex(other.as_bytes())[..16]
                ),
            }),
        }
    }

    /// The bytes of `data.value`, refusing a value larger than [`DecodeOptions::max_value`]
    /// before decoding it.
    ///
    /// # Errors
    /// [`Error::ValueTooLarge`] (bare user data: [`Error::ObjectTooLarge`]), or
    /// [`Error::Base64`] when the value is not base64.
    pub fn value_within(&self, options: &DecodeOptions) -> Result<Cow<'a, [u8]>, Error> {
        if self.is_bare() && self.base64_len() / 4 * 3 > options.max_object {
            return Err(Error::ObjectTooLarge {
                at: "the start of the input (bare user data)".to_owned(),
                limit: options.max_object,
            });
        }
        let estimated = self.base64_len() / 4 * 3;
        if !self.is_bare() && estimated > options.max_value.saturating_add(2) {
            return Err(Error::ValueTooLarge {
                secret: self.id().clone(),
                bytes: estimated,
                limit: options.max_value,
            });
        }
        self.value()
    }

    /// Decodes this Secret's value into a [`Payload`].
    ///
    /// # Errors
    /// As [`BootstrapSecret::declared_format`] and [`BootstrapSecret::value_within`], and
    /// [`Error::Payload`] when the value cannot be decoded (gzip, the Ignition wrapper).
    pub fn decode(&self, options: &DecodeOptions) -> Result<Payload<'a>, Error> {
        let declared = self.declared_format()?;
        let value = self.value_within(options)?;
        Payload::decode(value, declared, options).map_err(|error| Error::Payload {
            secret: self.id().clone(),
            error,
        })
    }
}

/// The Ignition config CAPRKE2 writes for `gzipUserData: true`: a 3.3.0 config whose
/// `ignition.config.replace` carries `inner` gzipped (level 6, mtime 0) in a base64 `data:` URL.
pub(crate) fn ignition_gzip_wrapper(inner: &[u8]) -> Vec<u8> {
    let data = b64::encode(&gzip::deflate(inner, 6));
    format!(
        concat!(
            r#"{{"ignition":{{"config":{{"replace":{{"compression":"gzip","source":"#,
            r#""data:text/plain;base64,{}","verification":{{}}}}}},"proxy":{{}},"#,
            r#""security":{{"tls":{{}}}},"timeouts":{{}},"version":"3.3.0"}},"#,
            r#""kernelArguments":{{}},"passwd":{{}},"storage":{{}},"systemd":{{}}}}"#
        ),
        data
    )
    .into_bytes()
}

/// The length of [`ignition_gzip_wrapper`] around a gzip stream of `gzip_len` bytes, computed
/// without building it.
pub(crate) fn ignition_gzip_wrapper_len(gzip_len: u64) -> u64 {
    static OVERHEAD: std::sync::LazyLock<u64> = std::sync::LazyLock::new(|| {
        // The wrapper around an empty gzip text: the template's own length.
        let empty = ignition_gzip_wrapper(b"");
        let data = b64::encoded_len(gzip::deflate(b"", 6).len() as u64);
        empty.len() as u64 - data
    });
    *OVERHEAD + b64::encoded_len(gzip_len)
}

fn looks_like_json(bytes: &[u8]) -> bool {
    bytes
        .iter()
        .find(|b| !b.is_ascii_whitespace())
        .is_some_and(|&b| b == b'{')
}

#[derive(Deserialize)]
struct IgnitionProbe<'a> {
    #[serde(borrow, default)]
    ignition: Option<IgnitionSection<'a>>,
}

#[derive(Deserialize)]
struct IgnitionSection<'a> {
    #[serde(borrow, default)]
    version: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    config: Option<ConfigSection<'a>>,
}

#[derive(Deserialize)]
struct ConfigSection<'a> {
    #[serde(borrow, default)]
    replace: Option<Resource<'a>>,
}

#[derive(Deserialize)]
struct Resource<'a> {
    #[serde(borrow, default)]
    source: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    compression: Option<Cow<'a, str>>,
}

/// If `value` is an Ignition config whose `config.replace` carries the real config in a `data:`
/// URL, returns whether it was gzip and the inner config.
fn unwrap_ignition(value: &[u8], cap: u64) -> Result<Option<(bool, Vec<u8>)>, PayloadError> {
    let Ok(probe) = serde_json::from_slice::<IgnitionProbe<'_>>(value) else {
        // Not JSON (or not an object): the content sniffer reports it.
        return Ok(None);
    };
    let Some(replace) = probe
        .ignition
        .and_then(|i| i.config)
        .and_then(|c| c.replace)
    else {
        return Ok(None);
    };
    let Some(source) = replace.source.filter(|s| s.starts_with("data:")) else {
        // A remote replacement (https, s3, …) is never fetched: the wrapper is the user data.
        return Ok(None);
    };
    let bytes = dataurl::decode(&source).map_err(|error| PayloadError::DataUrl {
        what: "the Ignition wrapper's config.replace.source".to_owned(),
        error,
    })?;
    let inner = match replace.compression.as_deref().unwrap_or("") {
        "" => bytes.into_owned(),
        "gzip" => gzip::inflate(&bytes, cap).map_err(|error| match error {
            GzipError::NotGzip => PayloadError::Wrapper {
                detail: "compression is gzip, but the data URL does not hold gzip".to_owned(),
            },
            error => PayloadError::Gzip {
                what: "the Ignition wrapper's data URL".to_owned(),
                error,
            },
        })?,
        other => {
            return Err(PayloadError::Wrapper {
                detail: format!(
                    "unknown compression {:?} (Ignition knows \"gzip\" only)",
                    shorten(other, 20)
                ),
            });
        }
    };
    if gzip::is_gzip(&inner) {
        return Err(PayloadError::Wrapper {
            detail: "the wrapped config is still gzip after unwrapping (double compression)"
                .to_owned(),
        });
    }
    Ok(Some((
        replace.compression.as_deref() == Some("gzip"),
        inner,
    )))
}

/// Recognises the user data, and checks an Ignition version.
fn sniff(
    userdata: &[u8],
    declared: DeclaredFormat,
) -> Result<(UserDataKind, Option<String>), PayloadError> {
    let start = userdata
        .iter()
        .position(|b| !b.is_ascii_whitespace())
        .unwrap_or(userdata.len());
    let text = &userdata[start..];
    let text = text.strip_prefix("\u{feff}".as_bytes()).unwrap_or(text);
    if text.starts_with(b"## template: jinja") {
        let second = text
            .iter()
            .position(|&b| b == b'\n')
            .map(|i| &text[i + 1..])
            .unwrap_or_default();
        let second = second.strip_prefix(b"\r").unwrap_or(second);
        return Ok(if second.starts_with(b"#cloud-config") {
            (UserDataKind::CloudConfig { jinja: true }, None)
        } else {
            (UserDataKind::OtherCloudInit, None)
        });
    }
    if [&b"#cloud-config-archive"[..], b"#cloud-config-jsonp"]
        .iter()
        .any(|p| text.starts_with(p))
    {
        return Ok((UserDataKind::OtherCloudInit, None));
    }
    if text.starts_with(b"#cloud-config") {
        return Ok((UserDataKind::CloudConfig { jinja: false }, None));
    }
    if [
        &b"#!"[..],
        b"#include",
        b"UserDataKind-Type:",
        b"#cloud-boothook",
        b"#part-handler",
        b"#upstart-job",
    ]
    .iter()
    .any(|p| text.starts_with(p))
    {
        return Ok((UserDataKind::OtherCloudInit, None));
    }
    if text.starts_with(b"{") {
        match serde_json::from_slice::<IgnitionProbe<'_>>(userdata) {
            Ok(IgnitionProbe {
                ignition: Some(section),
            }) => {
                let version = section.version.unwrap_or_default();
                check_ignition_version(&version)?;
                return Ok((UserDataKind::Ignition, Some(version.into_owned())));
            }
            Ok(_) if declared == DeclaredFormat::Ignition => {
                return Err(PayloadError::NotIgnition {
                    detail: "no `ignition` section".to_owned(),
                });
            }
            Err(e) if declared == DeclaredFormat::Ignition => {
                return Err(PayloadError::NotIgnition {
                    detail: format!(
                        "invalid JSON at line {}, column {} ({})",
                        e.line(),
                        e.column(),
                        match e.classify() {
                            serde_json::error::Category::Eof => "truncated",
                            serde_json::error::Category::Syntax => "syntax error",
                            serde_json::error::Category::Data => "unexpected value",
                            serde_json::error::Category::Io => "read error",
                        }
                    ),
                });
            }
            _ => {}
        }
    }
    Ok((UserDataKind::Unrecognised, None))
}

fn check_ignition_version(version: &str) -> Result<(), PayloadError> {
    let base = version.strip_suffix("-experimental").unwrap_or(version);
    let supported = match base.split('.').collect::<Vec<_>>().as_slice() {
        ["3", minor, "0"] => minor.parse::<u8>().is_ok_and(|m| m <= 6),
        _ => false,
    };
    if supported {
        Ok(())
    } else {
        Err(PayloadError::IgnitionVersion {
            version: shorten(version, 40),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode(value: &[u8], declared: DeclaredFormat) -> Result<Payload<'_>, PayloadError> {
        Payload::decode(Cow::Borrowed(value), declared, &DecodeOptions::default())
    }

    const CC: &[u8] = b"## template: jinja\n#cloud-config\n\nruncmd:\n  - 'true'\n";
    const IGN: &[u8] = br#"{"ignition":{"config":{"replace":{"verification":{}}},"version":"3.3.0"},"storage":{}}"#;

    #[test]
    fn plain_cloud_config() {
        let p = decode(CC, DeclaredFormat::CloudConfig).unwrap();
        assert_eq!(p.format(), Format::CloudConfig);
        assert_eq!(p.content(), UserDataKind::CloudConfig { jinja: true });
        assert_eq!(p.compression(), Compression::None);
        assert_eq!(p.userdata(), CC);
        assert!(!p.format_mismatch());
    }

    #[test]
    fn gzip_cloud_config() {
        let gz = gzip::deflate(CC, 6);
        let p = decode(&gz, DeclaredFormat::Empty).unwrap();
        assert_eq!(p.compression(), Compression::Gzip);
        assert_eq!(p.userdata(), CC);
        assert_eq!(p.value(), &gz[..]);
        assert_eq!(p.format(), Format::CloudConfig);
    }

    #[test]
    fn nested_gzip_is_an_error() {
        let gz = gzip::deflate(&gzip::deflate(CC, 6), 6);
        assert_eq!(
            decode(&gz, DeclaredFormat::CloudConfig).unwrap_err(),
            PayloadError::NestedGzip
        );
    }

    fn wrapper(inner: &[u8], compression: &str, media: &str) -> Vec<u8> {
        let data = if compression == "gzip" {
            gzip::deflate(inner, 6)
        } else {
            inner.to_vec()
        };
        format!(
            r#"{{"ignition":{{"config":{{"replace":{{"compression":"{compression}","source":"data:{media};base64,{}","verification":{{}}}}}},"proxy":{{}},"security":{{"tls":{{}}}},"timeouts":{{}},"version":"3.3.0"}},"kernelArguments":{{}},"passwd":{{}},"storage":{{}},"systemd":{{}}}}"#,
            b64::encode(&data)
        )
        .into_bytes()
    }

    #[test]
    fn the_wrapper_this_crate_writes_decodes_back() {
        let w = ignition_gzip_wrapper(IGN);
        assert!(w.starts_with(br#"{"ignition":{"config":{"replace":{"compression":"gzip","source":"data:text/plain;base64,H4sIAAAAAAAA/"#));
        let p = decode(&w, DeclaredFormat::Ignition).unwrap();
        assert_eq!(p.userdata(), IGN);
        assert_eq!(p.compression(), Compression::IgnitionWrapper { gzip: true });
    }

    #[test]
    fn wrapper_length_without_building_it() {
        for inner in [IGN, &IGN.repeat(30)[..]] {
            assert_eq!(
                ignition_gzip_wrapper_len(gzip::deflate(inner, 6).len() as u64),
                ignition_gzip_wrapper(inner).len() as u64
            );
        }
    }

    #[test]
    fn ignition_wrapper() {
        let w = wrapper(IGN, "gzip", "text/plain");
        let p = decode(&w, DeclaredFormat::Ignition).unwrap();
        assert_eq!(p.compression(), Compression::IgnitionWrapper { gzip: true });
        assert_eq!(p.userdata(), IGN);
        assert_eq!(p.format(), Format::Ignition);
        assert_eq!(p.ignition_version(), Some("3.3.0"));

        let w = wrapper(IGN, "", "");
        let p = decode(&w, DeclaredFormat::Ignition).unwrap();
        assert_eq!(
            p.compression(),
            Compression::IgnitionWrapper { gzip: false }
        );
        assert_eq!(p.userdata(), IGN);
    }

    #[test]
    fn broken_wrappers() {
        let w = wrapper(IGN, "", "").replace_bytes("base64,", "base64,*");
        assert!(matches!(
            decode(&w, DeclaredFormat::Ignition),
            Err(PayloadError::DataUrl { .. })
        ));
        let w =
            wrapper(IGN, "", "").replace_bytes("\"compression\":\"\"", "\"compression\":\"gzip\"");
        assert!(matches!(
            decode(&w, DeclaredFormat::Ignition),
            Err(PayloadError::Wrapper { .. })
        ));
    }

    #[test]
    fn plain_ignition_and_versions() {
        let p = decode(IGN, DeclaredFormat::Ignition).unwrap();
        assert_eq!(p.compression(), Compression::None);
        assert_eq!(p.format(), Format::Ignition);
        assert!(!p.format_mismatch());
        let p = decode(IGN, DeclaredFormat::CloudConfig).unwrap();
        assert!(p.format_mismatch());

        let bad = br#"{"ignition":{"version":"9.9.9"}}"#;
        assert_eq!(
            decode(bad, DeclaredFormat::Ignition).unwrap_err(),
            PayloadError::IgnitionVersion {
                version: "9.9.9".into()
            }
        );
        let old = br#"{"ignition":{"version":"2.2.0"}}"#;
        assert!(decode(old, DeclaredFormat::Ignition).is_err());
        for ok in ["3.0.0", "3.4.0", "3.6.0-experimental"] {
            let cfg = format!(r#"{{"ignition":{{"version":"{ok}"}}}}"#);
            assert!(
                decode(cfg.as_bytes(), DeclaredFormat::Ignition).is_ok(),
                "{ok}"
            );
        }
    }

    #[test]
    fn json_that_is_not_ignition() {
        assert!(matches!(
            decode(br#"{"a":1}"#, DeclaredFormat::Ignition),
            Err(PayloadError::NotIgnition { .. })
        ));
        assert!(matches!(
            decode(br#"{"ignition":"#, DeclaredFormat::Ignition),
            Err(PayloadError::NotIgnition { .. })
        ));
        // Declared cloud-config: trusted, the lint layer reports it.
        let p = decode(br#"{"a":1}"#, DeclaredFormat::CloudConfig).unwrap();
        assert_eq!(p.content(), UserDataKind::Unrecognised);
    }

    trait ReplaceBytes {
        fn replace_bytes(&self, from: &str, to: &str) -> Vec<u8>;
    }
    impl ReplaceBytes for Vec<u8> {
        fn replace_bytes(&self, from: &str, to: &str) -> Vec<u8> {
            String::from_utf8_lossy(self)
                .replacen(from, to, 1)
                .into_bytes()
        }
    }
}
