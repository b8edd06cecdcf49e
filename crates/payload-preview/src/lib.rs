//! A preview of the bootstrap Secrets the Cluster API RKE2 bootstrap provider (CAPRKE2) will
//! write, made offline from the manifests of a cluster: `Cluster`, `RKE2ControlPlane`,
//! `RKE2ConfigTemplate`/`RKE2Config`, `MachineDeployment`/`MachinePool`, the `Secret`s and
//! `ConfigMap`s they reference, and ClusterClass topologies, expanded first as Cluster API's
//! topology controller does it.
//!
//! Built on the library `rke2-payload` (the Secret side: decode, inspect, size, lint, diff): a
//! preview's Secrets are [`rke2_payload::BootstrapSecret`]s ([`Preview::to_secrets`]), its
//! findings are [`rke2_payload::Finding`]s, and what it writes is what the library reads back.
//! The library knows nothing of this crate.
//!
//! - [`render`]: the Secrets CAPRKE2 will write for the manifests of some sources, with the
//!   manifest checks' findings ([`Preview`], [`PreviewSecret`]), as YAML or JSON
//!   ([`Preview::to_yaml`], [`Preview::to_json`]) or typed ([`Preview::to_secrets`]).
//! - [`answer`]: an input that may hold both, read as what it holds (its bootstrap Secrets)
//!   and the preview of its templates where no Secret of the input answers them ([`Answer`]).
//! - [`sniff_input`]: manifests told from Secrets by an input's first MiB ([`Sniffed`],
//!   [`may_hold_manifests`], [`holds_manifests`]), as the command line does.
//!
//! No `Debug`, `Display` or error of this crate holds the user data, a generated token or key,
//! or a value of the input (manifests hold Secrets).
//!
//! # Render
//!
//! ```
//! use payload_preview::{RenderOptions, Source, render};
//! use rke2_payload::{LintOptions, Linter, Role};
//!
//! let manifests = br#"
//! apiVersion: cluster.x-k8s.io/v1beta2
//! kind: Cluster
//! metadata: {name: demo, namespace: default}
//! spec:
//!   controlPlaneEndpoint: {host: demo.example.com, port: 6443}
//!   controlPlaneRef: {apiGroup: controlplane.cluster.x-k8s.io, kind: RKE2ControlPlane, name: demo-cp}
//! ---
//! apiVersion: controlplane.cluster.x-k8s.io/v1beta2
//! kind: RKE2ControlPlane
//! metadata: {name: demo-cp, namespace: default}
//! spec: {version: v1.32.5+rke2r1, replicas: 3}
//! "#;
//! // A seed makes the generated token, CA key pairs and names the same on every run.
//! let options = RenderOptions::new().with_seed(1);
//! let preview = render(&[Source { name: "cluster.yaml", bytes: manifests }], &options)?;
//! let roles: Vec<Role> = preview.secrets.iter().map(|s| s.role).collect();
//! assert_eq!(roles, [Role::Init, Role::Server]);
//! assert!(preview.to_yaml().starts_with("apiVersion: v1\nkind: List\n"));
//! // The library's reports read the preview's Secrets as they read a cluster's.
//! let linter = Linter::new(LintOptions::new());
//! for secret in preview.to_secrets() {
//!     let report = linter.lint(&secret)?;
//!     assert_eq!(report.name.as_deref(), secret.name());
//!     // Each Secret knows the object it was rendered from.
//!     let from = report.rendered_from.map(|site| site.object);
//!     assert_eq!(from.as_deref(), Some("RKE2ControlPlane default/demo-cp"));
//! }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Nothing to render
//!
//! When nothing renders (a topology that does not expand, a control plane the API server
//! rejects), the findings say why; the library's linter reports them without Secrets.
//!
//! ```
//! use payload_preview::{RenderOptions, Source, render};
//! use rke2_payload::{Check, LintOptions, Linter};
//!
//! let cluster = b"apiVersion: cluster.x-k8s.io/v1beta2
//! kind: Cluster
//! metadata: {name: demo, namespace: fleet}
//! spec:
//!   topology: {classRef: {name: missing}, version: v1.34.1+rke2r1}
//! ";
//! let sources = [Source { name: "cluster.yaml", bytes: cluster }];
//! let preview = render(&sources, &RenderOptions::new())?;
//! assert!(preview.secrets.is_empty());
//! let report = Linter::new(LintOptions::new()).lint_unrendered(preview.findings);
//! assert!(report.fails(false));
//! assert_eq!(report.manifests[0].check, Check::TopologyExpansionFails);
//! # Ok::<(), payload_preview::RenderError>(())
//! ```
//!
//! # Cargo features
//!
//! - `fuzzing`: the entry points the fuzz targets call (they panic by design when a property
//!   breaks); not for other use.

#![deny(missing_docs)]

mod crds;
mod manifest_checks;
mod manifests;
mod render;
#[cfg(test)]
mod testdata;
mod topology;

#[cfg(any(test, feature = "fuzzing"))]
pub mod fuzzing;

pub use render::{
    Answer, Door, DoorError, KeyError, MAX_PLACEHOLDER, Named, PREVIEW_ANNOTATION, Preview,
    PreviewSecret, RenderError, RenderOptions, RoleChoice, SOURCE_ANNOTATION, Sniffed, Source,
    answer, holds_manifests, may_hold_manifests, open, render, sniff_input, updates,
};

/// The README's examples compile.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
