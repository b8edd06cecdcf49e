//! The reports: `inspect` (what a node will do), `size` (each cloud's user-data limit) and
//! `lint` (what keeps nodes from joining), `diff` (what changed between two inputs). Each reads the
//! [facts](crate::facts) of a payload; none reads another report's output.

#[cfg(feature = "cloud-init-schema")]
pub(crate) mod cloud_init_schema;
pub(crate) mod diff;
pub(crate) mod inspect;
pub(crate) mod lint;
pub(crate) mod size;
