//! Secret values and where they hide: the value type, the classifier of secret-bearing keys and
//! files, the redactor that hides known values in text, and the placeholder `redact` writes.
//!
//! Imports only [`crate::codec`]: every layer above may ask what is secret.

mod classify;
mod redactor;
mod value;

pub(crate) use classify::{classify, secret_key_name};
pub(crate) use redactor::Redactor;
pub(crate) use value::SecretValue;

/// What `redact` writes in place of a secret value, and what a redacted private key holds.
pub const PLACEHOLDER: &str = "REDACTED";
