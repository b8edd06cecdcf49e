//! The preview crate's integration tests: one test binary, a module per concern.

mod class_lint;
mod layers;
mod schema;
mod topology;
