//! The serde shape of a Kubernetes object, as much of it as this tool reads.
//!
//! Strings borrow from the input where the parser allows it (plain YAML scalars, JSON strings
//! without escapes); everything not named here is skipped without being built.

use std::borrow::Cow;
use std::fmt;

use crate::checks::IGNORE_CHECK_ANNOTATION_PREFIX;
use serde::Deserialize;
use serde::de::{self, IgnoredAny, MapAccess, SeqAccess, Visitor};

/// A string that borrows from the input when it can.
///
/// serde deserialises a bare `Cow<str>` inside containers as owned; this wrapper keeps the borrow.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(transparent)]
pub(crate) struct Str<'a>(#[serde(borrow)] pub(crate) Cow<'a, str>);

/// A YAML or JSON document: either a mapping (a Kubernetes object, or bare Ignition JSON) or
/// something else, named for the error message.
#[derive(Debug)]
pub(crate) enum Doc<'a> {
    Object(Box<RawObject<'a>>),
    Other(&'static str),
}

/// The fields of a Kubernetes object (or a `List`) that matter here.
#[derive(Debug, Default, Deserialize)]
pub(crate) struct RawObject<'a> {
    #[serde(borrow, default)]
    pub(crate) kind: Option<Str<'a>>,
    #[serde(borrow, default)]
    pub(crate) metadata: Option<RawMeta<'a>>,
    #[serde(borrow, default, rename = "type")]
    pub(crate) secret_type: Option<Str<'a>>,
    #[serde(borrow, default)]
    pub(crate) data: Option<Pairs<'a>>,
    #[serde(borrow, default, rename = "stringData")]
    pub(crate) string_data: Option<Pairs<'a>>,
    #[serde(borrow, default)]
    pub(crate) items: Option<Vec<Doc<'a>>>,
    /// Present on bare Ignition JSON.
    #[serde(default)]
    pub(crate) ignition: Option<IgnoredAny>,
}

/// `metadata`: name, namespace, labels.
#[derive(Debug, Default, Deserialize)]
pub(crate) struct RawMeta<'a> {
    #[serde(borrow, default)]
    pub(crate) name: Option<Str<'a>>,
    #[serde(borrow, default)]
    pub(crate) namespace: Option<Str<'a>>,
    #[serde(borrow, default)]
    pub(crate) labels: Option<Pairs<'a>>,
    #[serde(borrow, default)]
    pub(crate) annotations: Option<Annotations<'a>>,
    #[serde(borrow, default, rename = "ownerReferences")]
    pub(crate) owner_references: Option<Vec<OwnerRef<'a>>>,
}

/// One of `metadata.ownerReferences`: who owns the object.
#[derive(Debug, Default, Deserialize)]
pub(crate) struct OwnerRef<'a> {
    #[serde(borrow, default, rename = "apiVersion")]
    pub(crate) api_version: Option<Str<'a>>,
    #[serde(borrow, default)]
    pub(crate) kind: Option<Str<'a>>,
}

/// `metadata.annotations`, of which only [`FINDINGS_ANNOTATION`](super::FINDINGS_ANNOTATION),
/// [`RENDERED_FROM_ANNOTATION`](super::RENDERED_FROM_ANNOTATION) and those of
/// [`IGNORE_CHECK_ANNOTATION_PREFIX`] are kept (the others are skipped without being built).
#[derive(Debug, Default)]
pub(crate) struct Annotations<'a> {
    pub(crate) findings: Option<Str<'a>>,
    pub(crate) rendered_from: Option<Str<'a>>,
    /// The `ignore-check.rke2-payload.io/…` annotations, in input order.
    pub(crate) ignore: Vec<(Str<'a>, Str<'a>)>,
}

impl<'de: 'a, 'a> Deserialize<'de> for Annotations<'a> {
    fn deserialize<D: de::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct AnnotationsVisitor;
        impl<'de> Visitor<'de> for AnnotationsVisitor {
            type Value = Annotations<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a mapping of annotations")
            }
            fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
                Ok(Annotations::default())
            }
            fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
                Ok(Annotations::default())
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut out = Annotations::default();
                while let Some(key) = map.next_key::<Str<'de>>()? {
                    if key.0 == super::FINDINGS_ANNOTATION {
                        out.findings = Some(map.next_value::<Str<'de>>()?);
                    } else if key.0 == super::RENDERED_FROM_ANNOTATION {
                        out.rendered_from = Some(map.next_value::<Str<'de>>()?);
                    } else if key.0.starts_with(IGNORE_CHECK_ANNOTATION_PREFIX) {
                        let value = map.next_value::<Option<Str<'de>>>()?;
                        out.ignore
                            .push((key, value.unwrap_or(Str(Cow::Borrowed("")))));
                    } else {
                        map.next_value::<IgnoredAny>()?;
                    }
                }
                Ok(out)
            }
        }
        deserializer.deserialize_any(AnnotationsVisitor)
    }
}

/// A string-to-string mapping in input order. A `null` value reads as an empty string; a
/// repeated key is an error (the API server would not have stored it).
#[derive(Debug, Default)]
pub(crate) struct Pairs<'a>(pub(crate) Vec<(Str<'a>, Str<'a>)>);

impl<'a> Pairs<'a> {
    pub(crate) fn get(&self, key: &str) -> Option<&Cow<'a, str>> {
        self.0
            .iter()
            .find(|(k, _)| k.0 == key)
            .map(|(_, value)| &value.0)
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for Pairs<'a> {
    fn deserialize<D: de::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct PairsVisitor;
        impl<'de> Visitor<'de> for PairsVisitor {
            type Value = Pairs<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a mapping of string keys to string values")
            }
            fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
                Ok(Pairs::default())
            }
            fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
                Ok(Pairs::default())
            }
            fn visit_some<D: de::Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
                d.deserialize_map(self)
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut pairs: Vec<(Str<'de>, Str<'de>)> = Vec::new();
                while let Some(key) = map.next_key::<Str<'de>>()? {
                    let value: Option<Str<'de>> = map.next_value()?;
                    if pairs.iter().any(|(k, _)| k.0 == key.0) {
                        return Err(de::Error::custom(format_args!(
                            "duplicate key `{}`",
                            crate::codec::text::shorten(&key.0, 40)
                        )));
                    }
                    pairs.push((key, value.unwrap_or(Str(Cow::Borrowed("")))));
                }
                Ok(Pairs(pairs))
            }
        }
        deserializer.deserialize_option(PairsVisitor)
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for Doc<'a> {
    fn deserialize<D: de::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct DocVisitor;
        impl<'de> Visitor<'de> for DocVisitor {
            type Value = Doc<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a Kubernetes object")
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
                RawObject::deserialize(de::value::MapAccessDeserializer::new(map))
                    .map(|o| Doc::Object(Box::new(o)))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
                while seq.next_element::<IgnoredAny>()?.is_some() {}
                Ok(Doc::Other("a sequence"))
            }
            fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
                Ok(Doc::Other("an empty document"))
            }
            fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
                Ok(Doc::Other("an empty document"))
            }
            fn visit_some<D: de::Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
                d.deserialize_any(self)
            }
            fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
                Ok(Doc::Other("a boolean"))
            }
            fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> {
                Ok(Doc::Other("a number"))
            }
            fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> {
                Ok(Doc::Other("a number"))
            }
            fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
                Ok(Doc::Other("a number"))
            }
            fn visit_str<E: de::Error>(self, _: &str) -> Result<Self::Value, E> {
                Ok(Doc::Other("a plain text scalar"))
            }
            fn visit_bytes<E: de::Error>(self, _: &[u8]) -> Result<Self::Value, E> {
                Ok(Doc::Other("binary data"))
            }
        }
        deserializer.deserialize_any(DocVisitor)
    }
}
