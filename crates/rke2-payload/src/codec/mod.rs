//! The bottom layer: encodings and helpers that know nothing of Secrets or payloads.
//!
//! Base64 as Kubernetes reads it, gzip with bounds, `data:` URLs, SHA-256 fingerprints, RFC 3339
//! times, message text that never quotes input, and the character check every YAML fast path
//! makes first. Nothing here imports another layer of the crate.

pub(crate) mod b64;
pub(crate) mod dataurl;
pub(crate) mod digest;
pub(crate) mod gzip;
pub(crate) mod text;
pub(crate) mod time;
pub(crate) mod tree;
pub(crate) mod yaml;
pub(crate) mod yaml11;
