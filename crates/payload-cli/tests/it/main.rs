//! The command-line tests: one test binary, a module per subcommand or concern.

mod cluster;
mod code_scanning;
mod common;
mod convert_fields;
mod decode;
mod delivery;
mod diff;
mod ecosystem;
mod encode_redact;
mod free_text;
mod hostile;
mod inputs;
mod inspect;
mod jobs;
mod json_types;
mod kubectl;
mod lint;
mod main_branch;
mod readme;
mod redact_corpus;
mod release;
mod render;
mod replicas;
mod size;
mod trust;
