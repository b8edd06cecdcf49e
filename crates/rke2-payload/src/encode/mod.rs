//! The inverse path: user data → payload (`data.value`) → Secret.
//!
//! Compression is deterministic (gzip header mtime 0, level 6 as Go's default). When the
//! compression asked for is the one a payload already has, the original bytes are kept.

use std::borrow::Cow;

use serde_json::Value;

pub(crate) mod convert;

use crate::codec::{b64, gzip};
use crate::envelope::{BootstrapSecret, CLUSTER_SECRET_TYPE};
use crate::error::{Error, Syntax};
use crate::payload::{Compression, Format, Payload, ignition_gzip_wrapper};

/// The `data.value` bytes for user data in `format`, gzipped the way CAPRKE2 does with
/// `gzipUserData: true` when `gzip` is set (raw gzip for cloud-config, the `config.replace`
/// wrapper for Ignition).
pub fn compress(userdata: &[u8], format: Format, gzip: bool) -> Vec<u8> {
    match (gzip, format) {
        (false, _) => userdata.to_vec(),
        (true, Format::CloudConfig) => gzip::deflate(userdata, 6),
        (true, Format::Ignition) => ignition_gzip_wrapper(userdata),
    }
}

/// Standard padded base64 of `bytes` (what a `user_data_base64` argument takes).
pub fn to_base64(bytes: &[u8]) -> String {
    b64::encode(bytes)
}

/// Re-encodes a decoded payload with or without gzip. The stored bytes are returned unchanged
/// when they already have the compression asked for (`None`: keep it as it is).
pub fn reencode<'p>(payload: &'p Payload<'_>, gzip: Option<bool>) -> Cow<'p, [u8]> {
    let current = payload.compression().is_gzip();
    let plain_wrapper = payload.compression() == Compression::IgnitionWrapper { gzip: false };
    let keep = match gzip {
        None => true,
        Some(true) => current,
        // A wrapper without gzip is unwrapped too.
        Some(false) => !current && !plain_wrapper,
    };
    if keep {
        return Cow::Borrowed(payload.value());
    }
    let wanted = gzip.unwrap_or(current);
    Cow::Owned(compress(payload.userdata(), payload.format(), wanted))
}

/// Writes one Secret of the input again with a new `data.value` (and `format`), keeping all its
/// metadata. The output is YAML, or JSON when `json` is set.
///
pub fn secret_with_value(
    input: &[u8],
    secret: &BootstrapSecret<'_>,
    value: &[u8],
    format: Format,
    json: bool,
) -> Result<Vec<u8>, Error> {
    let mut object = if secret.is_bare() {
        serde_json::json!({
            "apiVersion": "v1",
            "kind": "Secret",
            "type": CLUSTER_SECRET_TYPE,
            "metadata": {"name": "bootstrap-data"},
        })
    } else {
        find_object(input, secret.id().index)?
    };
    let Some(map) = object.as_object_mut() else {
        return Err(Error::NotASecret {
            found: "not a mapping".to_owned(),
        });
    };
    if let Some(Value::Object(string_data)) = map.get_mut("stringData") {
        string_data.remove("value");
        string_data.remove("format");
    }
    if map
        .get("stringData")
        .is_some_and(|v| v.as_object().is_some_and(|m| m.is_empty()))
    {
        map.remove("stringData");
    }
    let data = map
        .entry("data")
        .or_insert_with(|| Value::Object(serde_json::Map::new()));
    if !data.is_object() {
        *data = Value::Object(serde_json::Map::new());
    }
    if let Value::Object(data) = data {
        data.insert(
            "format".to_owned(),
            Value::String(b64::encode(format.as_str().as_bytes())),
        );
        data.insert("value".to_owned(), Value::String(b64::encode(value)));
    }
    if json {
        let mut out = serde_json::to_vec_pretty(&object).map_err(|e| Error::Write {
            syntax: Syntax::Json,
            message: e.to_string(),
        })?;
        out.push(b'\n');
        Ok(out)
    } else {
        serde_saphyr::to_string(&object)
            .map(String::into_bytes)
            .map_err(|e| Error::Write {
                syntax: Syntax::Yaml,
                message: e.to_string(),
            })
    }
}

/// The `index`-th object of the input (YAML documents and `List` items, in order), as data.
fn find_object(input: &[u8], index: usize) -> Result<Value, Error> {
    crate::envelope::objects(input)?
        .into_iter()
        .nth(index)
        .ok_or(Error::NotASecret {
            found: format!("no object #{}", index + 1),
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::options::DecodeOptions;
    use crate::payload::DeclaredFormat;

    const CC: &[u8] = b"## template: jinja\n#cloud-config\nruncmd: []\n";

    #[test]
    fn reencode_keeps_bytes_when_nothing_changes() {
        let gz = gzip::deflate(CC, 9);
        let p = Payload::decode(
            Cow::Borrowed(&gz),
            DeclaredFormat::CloudConfig,
            &DecodeOptions::default(),
        )
        .unwrap();
        assert_eq!(reencode(&p, None).as_ref(), &gz[..]);
        assert_eq!(reencode(&p, Some(true)).as_ref(), &gz[..]);
        assert_eq!(reencode(&p, Some(false)).as_ref(), CC);
        let plain = Payload::decode(
            Cow::Borrowed(CC),
            DeclaredFormat::CloudConfig,
            &DecodeOptions::default(),
        )
        .unwrap();
        let again = reencode(&plain, Some(true));
        assert_eq!(again.as_ref(), &gzip::deflate(CC, 6)[..]);
        assert_eq!(reencode(&plain, Some(true)), again, "deterministic");
    }

    #[test]
    fn secret_keeps_metadata() {
        let input = b"apiVersion: v1\nkind: Secret\nmetadata:\n  name: a\n  ownerReferences:\n  - kind: RKE2Config\n    name: a\nstringData:\n  format: cloud-config\n  value: x\n";
        let env = crate::envelope::Envelope::parse(input, &DecodeOptions::default()).unwrap();
        let out =
            secret_with_value(input, &env.secrets[0], CC, Format::CloudConfig, false).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(text.contains("ownerReferences"), "{text}");
        assert!(!text.contains("stringData"), "{text}");
        let env =
            crate::envelope::Envelope::parse(text.as_bytes(), &DecodeOptions::default()).unwrap();
        let p = env.secrets[0].decode(&DecodeOptions::default()).unwrap();
        assert_eq!(p.userdata(), CC);
    }

    proptest::proptest! {
        #[test]
        fn compress_is_the_inverse_of_decode(text in "[ -~\n]{0,400}", gzip: bool) {
            let userdata = format!("## template: jinja\n#cloud-config\n{text}");
            let value = compress(userdata.as_bytes(), Format::CloudConfig, gzip);
            let p = Payload::decode(Cow::Owned(value), DeclaredFormat::CloudConfig, &DecodeOptions::default()).unwrap();
            proptest::prop_assert_eq!(p.userdata(), userdata.as_bytes());
            proptest::prop_assert_eq!(p.compression().is_gzip(), gzip);
            let ign = format!(r#"{{"ignition":{{"version":"3.3.0"}},"x":{}}}"#, serde_json::Value::String(text.clone()));
            let value = compress(ign.as_bytes(), Format::Ignition, gzip);
            let p = Payload::decode(Cow::Owned(value), DeclaredFormat::Ignition, &DecodeOptions::default()).unwrap();
            proptest::prop_assert_eq!(p.userdata(), ign.as_bytes());
            let again = reencode(&p, Some(gzip));
            proptest::prop_assert_eq!(again.as_ref(), p.value());
        }
    }
}
