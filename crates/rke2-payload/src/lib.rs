//! Decode, inspect and measure the bootstrap Secrets that the Cluster API RKE2 bootstrap provider
//! (CAPRKE2) writes for every Machine.
//!
//! A bootstrap Secret holds `data.format` (`cloud-config` or `ignition`) and `data.value`: a
//! cloud-config document, an Ignition 3.x config, raw gzip of a cloud-config, or an Ignition config
//! that wraps a gzipped config in a `data:` URL. This crate reads them layer by layer:
//!
//! bytes → [`Envelope`] (one Secret, a `List`, several YAML documents, or bare user data) →
//! [`BootstrapSecret`] → [`Payload`] (format, compression, final user data).
//!
//! ```
//! use rke2_payload::{DecodeOptions, Envelope, Format};
//!
//! let secret = br#"
//! apiVersion: v1
//! kind: Secret
//! type: cluster.x-k8s.io/secret
//! metadata: {name: worker-1, namespace: default}
//! data:
//!   format: Y2xvdWQtY29uZmln
//!   value: IyMgdGVtcGxhdGU6IGppbmphCiNjbG91ZC1jb25maWcKcnVuY21kOiBbXQo=
//! "#;
//! let options = DecodeOptions::default();
//! let envelope = Envelope::parse(secret, &options)?;
//! let payload = envelope.select(Some("worker-1"))?.decode(&options)?;
//! assert_eq!(payload.format(), Format::CloudConfig);
//! assert!(payload.userdata().starts_with(b"## template: jinja\n#cloud-config\n"));
//! # Ok::<(), rke2_payload::Error>(())
//! ```
//!
//! No output of this crate (`Debug`, `Display`, error messages) contains the value of a Secret.

#![warn(missing_docs)]

mod b64;
pub mod clouds;
pub mod convert;
pub mod dataurl;
pub mod document;
pub mod encode;
pub mod envelope;
pub mod error;
pub mod findings;
pub mod fuzzing;
pub mod gzip;
pub mod input;
pub mod lint;
pub mod memo;
pub mod options;
pub mod payload;
pub mod pki;
pub mod redact;
pub mod report;
pub mod rke2;
pub mod schema;
pub mod secret;
pub mod sensitive;
pub mod size;
mod time;

pub use envelope::{BootstrapSecret, Envelope};
pub use error::{Error, PayloadError, SecretId};
pub use options::DecodeOptions;
pub use payload::{Compression, Content, DeclaredFormat, Format, Payload};

impl<'a> BootstrapSecret<'a> {
    /// The bytes of `data.value`, refusing a value larger than [`DecodeOptions::max_value`]
    /// before decoding it.
    pub fn value_within(
        &self,
        options: &DecodeOptions,
    ) -> Result<std::borrow::Cow<'a, [u8]>, Error> {
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
    pub fn decode(&self, options: &DecodeOptions) -> Result<Payload<'a>, Error> {
        let declared = self.declared_format()?;
        let value = self.value_within(options)?;
        Payload::decode(value, declared, options).map_err(|error| Error::Payload {
            secret: self.id().clone(),
            error,
        })
    }
}

/// The README's examples compile.
#[cfg(doctest)]
#[doc = include_str!("../../../README.md")]
struct ReadmeDoctests;
