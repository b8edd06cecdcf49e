//! Secret values and where they hide: the value type, the classifier of secret-bearing keys and
//! files, the detector of credentials by their shape, the redactor that hides them in text, and
//! the placeholder `redact` writes.
//!
//! Imports only [`crate::codec`]: every layer above may ask what is secret.

mod classify;
mod detect;
pub(crate) mod mask;
mod redactor;
mod rke2_flags;
mod value;

pub(crate) use classify::{classify, secret_key_name};
pub(crate) use detect::{boolean, credential_spans, may_be_switch, secret_name};
pub(crate) use redactor::Redactor;
pub(crate) use value::SecretValue;

/// What `redact` writes in place of a secret value, and what a redacted private key holds.
pub const PLACEHOLDER: &str = "REDACTED";
