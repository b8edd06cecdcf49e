//! The CRD schemas of Cluster API and CAPRKE2, and admission: Cluster API and CAPRKE2 objects
//! checked against their CRD's OpenAPI v3 schema, and ClusterClass variable values checked and
//! defaulted against the variable's `openAPIV3Schema`.
//!
//! The CRD schemas are structural facts (types, fields, bounds, enums, patterns, defaults; no
//! descriptions) extracted from the CRDs of Cluster API and CAPRKE2 by `scripts/crd-schemas.py`
//! into `src/crds/<group>.json`, embedded in this crate, parsed and compiled once per kind on first
//! use.
//!
//! The validator is the crate `payload_kube_schema` (the subset of OpenAPI v3 that Kubernetes
//! structural schemas allow; it knows nothing of Cluster API's or CAPRKE2's kinds): value checks
//! as the API server's custom resource validation does them, unknown fields as structural
//! pruning finds them (the API server drops such fields silently from a custom resource,
//! kubectl's strict field validation rejects them; Cluster API rejects them in a variable value,
//! `validateUnknownFields`), defaults as structural defaulting fills them. What is this module's:
//!
//! - the CRD schemas of the kinds the preview reads (`embedded.rs`), compiled as custom resources;
//! - an object checked as it is admitted (`CrdSchema::admit`): the CRD's defaults, then
//!   what the mutating webhooks of Cluster API and CAPRKE2 set (`admission.rs`), then the
//!   schema.
//!
//! The CRDs' CEL rules (`x-kubernetes-validations`, kept by the extractor) are run by the schema
//! engine on the admitted object. Not checked: validating webhooks (their pure checks are
//! manifest checks of their own), immutability and cross-object rules.
//!
//! No message quotes a value of the input: a problem says the type found or a length, and the
//! schema's own facts. A field name that is not in the schema is part of the path (it is the
//! input's key), so a caller that prints paths to a terminal must make them safe as it does for
//! any text of the input.

mod admission;
mod embedded;
#[cfg(test)]
mod tests;

pub(crate) use embedded::{crd_schema, served_versions};
pub(crate) use payload_kube_schema::{PathSeg, Problem, VariableSchema, Violation};
