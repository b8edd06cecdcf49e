//! The output formats of `rke2-payload`: what the tool writes, for people and for programs, from
//! the reports of the [`rke2_payload`] library. Each printer takes a sink (`&mut impl Write`)
//! and a report type of the library; the caller decides where the output goes and whether text
//! is coloured. A module per format; this page is the wire format.
//!
//! ```
//! use rke2_payload::{LintOptions, Linter, Selector};
//!
//! let list = br##"{"kind": "List", "items": [{"kind": "Secret", "metadata": {"name": "w"},
//!   "stringData": {"format": "cloud-config", "value": "#cloud-config\nruncmd: [reboot]\n"}}]}"##;
//! let report = Linter::new(LintOptions::new()).lint_stream(&list[..], &Selector::default(), 1)?;
//!
//! let mut out = Vec::new();
//! payload_printer::lint::json(&mut out, &report)?;
//! let doc: serde_json::Value = serde_json::from_slice(&out)?;
//! assert_eq!(doc["schema"], "rke2-payload/lint/v1");
//! assert_eq!(doc["summary"]["errors"], 1);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Stability
//!
//! The JSON and YAML documents carry a `schema` id (`rke2-payload/<command>/v1`). Within one
//! id, fields are only added: none is removed, renamed or given another type, so a reader that
//! ignores fields it does not know keeps working. The library's report types are the reference
//! for every field below the top level, and read the documents back (`Deserialize`). The CI
//! formats (SARIF, GitHub, GitLab, JUnit) follow their consumers' specifications; their
//! fingerprints (`rke2PayloadFinding/v1`, GitLab's `fingerprint`) stay the same for the same
//! finding from release to release. Text and Markdown are for people: their layout may
//! change in any release, so nothing should parse them.
//!
//! Each document has a JSON Schema (draft 2020-12) generated from these types
//! ([`schema`], feature `schema`), committed as `docs/schemas/<name>-v1.json`, attached to every
//! release and printed by `rke2-payload schema NAME`. The schemas are strict (an unknown field,
//! a missing one, another type or an unknown check id fails them): they describe the output of
//! their release, and a later release of the same id only adds to them.
//!
//! YAML is always the JSON document emitted as block YAML, with the same fields. No JSON or
//! YAML output holds a control, bidi or invisible character: inside strings they are written as
//! `\uXXXX` escapes, which mean the same character ([`document::escape_unsafe`]); text shows
//! them as visible escapes (`\x1b`, `\u{202e}`: [`style::safe`]).
//!
//! # `inspect`: JSON and YAML ([`document`], schema [`rke2_payload::INSPECT_SCHEMA`])
//!
//! One JSON object, `{"schema":…,"secrets":[` then one compact object per Secret, a line each,
//! in input order, then the other fields and a line break. Stable fields, top level:
//!
//! | field | what |
//! |---|---|
//! | `schema` | `"rke2-payload/inspect/v1"` |
//! | `secrets` | one [`rke2_payload::SecretReport`] per bootstrap Secret: `name`, `namespace`, `cluster`, then its payload's fields (`format`, `declared_format`, `gzip`, `compression`, `role`, `rke2`, `install`, `certificates`, `keys`, `files`, `commands`, `size`, `findings`); a Secret that cannot be read is `{"name", "namespace", "cluster", "line", "error": {"message"}}` |
//! | `skipped_secrets` | Secrets of the input without bootstrap data |
//! | `skipped_objects` | objects of the input that are not Secrets |
//! | `skipped_other_providers` | the bootstrap Secrets of other providers (kubeadm's, …) passed over, each `name`, `namespace`, `provider`, `reason`; left out when there are none ([`document::skipped_other_providers`]) |
//!
//! # `size`: JSON and YAML ([`document`], schema [`rke2_payload::SIZE_SCHEMA`])
//!
//! The same frame as `inspect`. Stable fields, top level:
//!
//! | field | what |
//! |---|---|
//! | `schema` | `"rke2-payload/size/v1"` |
//! | `secrets` | one [`rke2_payload::SizeReport`] per bootstrap Secret: `name`, `namespace`, then `format`, `compression`, `value_bytes`, `base64_bytes`, `userdata_bytes`, `gzip_value_bytes`, `gzip_base64_bytes`, `clouds` (a [`rke2_payload::Verdict`] per target: `cloud`, `limit_bytes`, `counted`, `counted_bytes`, `budget_bytes`, `headroom_bytes`, `used_percent`, `fits`, `fits_with_gzip`, `advice`, `path`, `chosen_by_manifests`), `contributors` (when asked for); the error object of `inspect` for a Secret that cannot be read |
//! | `fits` | whether every Secret fits every target |
//! | `skipped_other_providers` | as in `inspect` |
//!
//! # `lint`: JSON and YAML ([`lint`], schema [`rke2_payload::LINT_SCHEMA`])
//!
//! The [`rke2_payload::LintReport`], pretty-printed. Stable fields, top level:
//!
//! | field | what |
//! |---|---|
//! | `schema` | `"rke2-payload/lint/v1"` |
//! | `secrets` | one [`rke2_payload::LintedSecret`] per Secret linted: `name`, `namespace`, `cluster`, `role`, `findings` (each `id`, `severity`, `message`, and when known `path`, `line`, `column`, `manifest`), and when known `line`, `rendered_from`, `error` |
//! | `manifests` | the findings about the manifests the Secrets were rendered from, each once per object (left out when empty) |
//! | `skipped` | the bootstrap Secrets of other providers passed over, each `name`, `namespace`, `provider`, `reason` (left out when empty) |
//! | `summary` | `errors`, `warnings`, `infos`, `unreadable`: the counts |
//!
//! `lint --list-checks` writes `{"schema": "rke2-payload/checks/v1", "checks": [...]}`, each
//! check `id`, `severity` (its default), `summary`, `explanation` ([`lint::checks_json`]).
//!
//! `-o name` ([`document::name`]) writes a line `secret/NAMESPACE/NAME` per Secret, as
//! kubectl's `-o name`: for `inspect` every bootstrap Secret, for `lint` those that fail the
//! gate ([`lint::names`]), for `size` those that do not fit. Stable.
//!
//! # `diff`: JSON ([`diff`], schema [`rke2_payload::DIFF_SCHEMA`])
//!
//! The [`rke2_payload::DiffReport`], pretty-printed. Stable fields, top level:
//!
//! | field | what |
//! |---|---|
//! | `schema` | `"rke2-payload/diff/v1"` |
//! | `pairs` | the Secrets paired, in the first input's order: `before` and `after` (`name`, `namespace`, `cluster`, `role`), `paired_by`, `changes` (each `area`, `item`, `kind`, and when there are `before`, `after`, `detail`) |
//! | `only_before` | Secrets of the first input with no partner |
//! | `only_after` | Secrets of the second input with no partner |
//! | `ignored` | what was left out of the comparison (`token`, `ca`) |
//!
//! # `doctor`: JSON and YAML ([`doctor`], schema [`payload_doctor::DOCTOR_SCHEMA`])
//!
//! The [`payload_doctor::Diagnosis`], pretty-printed. Stable fields, top level:
//!
//! | field | what |
//! |---|---|
//! | `schema` | `"rke2-payload/doctor/v1"` |
//! | `clusters` | one [`payload_doctor::ClusterChain`] per RKE2 cluster, in namespace and name order: `namespace`, `name`, `api_version` (of its `Cluster`, null when none was read), `first_broken` (a link id or null), `links` |
//! | `clusters[].links` | every link in chain order ([`payload_doctor::LINKS`]), each `id`, `state` (`holds`, `broken`, `warning`, `unknown`, `not-applicable`), `object` (`kind`, `namespace`, `name`; null when none), `field`, `seen`, `needed`, `source` (upstream file and lines) |
//! | `skipped_clusters` | clusters of another control plane, each `namespace`, `name`, `control_plane` (its kind) |
//! | `unread` | kinds that could not be read through kubectl, each `resource`, `reason` (`refused`, `not-served`), `message` (kubectl's) |
//! | `summary` | `clusters`, `broken` (clusters with a broken link), `warnings`, `unknown` (links) |
//!
//! JUnit: a suite per cluster, a case per link (`classname="rke2-payload.doctor.NS/NAME"`), a
//! `<failure type="broken|warning">`, `<skipped>` for unknown and not-applicable links. GitHub:
//! `::error|warning title=doctor LINK (NS/NAME)::…` per broken link and warning.
//!
//! # `clouds`: JSON and YAML ([`clouds`], schema [`clouds::CLOUDS_SCHEMA`])
//!
//! `schema` (`"rke2-payload/clouds/v1"`) and `clouds`: the table of platforms, each a
//! [`rke2_payload::Cloud`].
//!
//! # `version`: JSON and YAML ([`version`], schema [`version::VERSION_SCHEMA`])
//!
//! `schema` (`"rke2-payload/version/v1"`), `version`, `commit` (the full hash, null when the
//! build did not know it), `commit_date` (`YYYY-MM-DD`, null with it), `target` (the target
//! triple), `documents` (each document's name and schema id, [`schema::DOCUMENTS`]).
//!
//! # SARIF ([`sarif`])
//!
//! SARIF 2.1.0, pretty JSON: `version` (`"2.1.0"`), `$schema`, and `runs` with one run:
//! `tool.driver` (`name` `rke2-payload`, `version`, `informationUri`, `rules`: one per check, in
//! the order of [`rke2_payload::Check::ALL`], with `id`, `name`, descriptions, `help`,
//! `helpUri`, `defaultConfiguration.level`, and `properties` `tags` `["security"]` and
//! `security-severity` for the checks whose findings weaken security), `automationDetails.id`
//! (`rke2-payload/`, what was linted, `/`: [`sarif::automation_id`]), `invocations` (one,
//! `executionSuccessful`, and a notification when results were left out), `results` (one per
//! finding, most severe first, at most [`sarif::MAX_RESULTS`]: `ruleId`, `ruleIndex`, `level`,
//! `message.text`, `locations` with the file and line and the place inside the payload as a
//! logical location, `partialFingerprints."rke2PayloadFinding/v1"`, `properties` `secret` or
//! `object` and `rule`), and `originalUriBaseIds` (`%SRCROOT%`, the repository root) when the
//! repository is known. Stable: the rule ids, the levels, the fingerprints, the locations, the
//! automation id.
//!
//! # GitHub ([`github`])
//!
//! Workflow commands, one a line: `::error|warning|notice file=…,line=…,title=CHECK
//! (PLACE)::MESSAGE`, most severe first, at most [`github::PER_LEVEL`] of a level (the last one
//! counting the rest); and a Markdown step summary with every finding
//! ([`github::step_summary`]). Stable: the level, file, line and the check id opening the
//! title.
//!
//! # GitLab ([`gitlab`])
//!
//! A Code Quality report, pretty JSON: an array of issues, each `description`, `check_name`
//! (the check id), `fingerprint` (16 hex digits), `severity` (`critical`, `major`, `info`),
//! `location` (`path`, `lines.begin`). All stable.
//!
//! # JUnit ([`junit`])
//!
//! JUnit XML that validates against Jenkins' JUnit schema (`junit-10.xsd`): `<testsuites
//! name="rke2-payload size|lint" tests failures errors>`, a `<testsuite name=TITLE tests
//! skipped errors failures>` per Secret, and its `<testcase name classname time>`s: for `size` a
//! case per target (a `<failure type="over-budget">` when it does not fit), for `lint` a case
//! per finding of error or warning severity (a `<failure type="error|warning">`) or a passing
//! `lint` case, and for both an `<error>` case for a Secret that cannot be read. Stable: the
//! suite and case names, the class names (`rke2-payload.size|lint.TITLE`), the failure and
//! error types and messages, the counts. The XML's layout (indentation, attribute order) is
//! the `quick-junit` crate's.
//!
//! # Text and Markdown ([`inspect`], [`size`], [`lint`], [`diff`], [`clouds`], [`doctor`])
//!
//! For people: a block per Secret (or pair), styled, every string from the input
//! terminal-safe. Not stable.
//!
//! # Colour
//!
//! The text printers write their styles ([`style::BOLD`], …) as ANSI escapes, always, and take
//! no colour flag: whether colour is shown is the caller's decision, made once where the output
//! goes. The `rke2-payload` binary hands them a sink from `anstream`, which passes the escapes
//! to a terminal that shows them and strips them otherwise (a pipe, a file, `NO_COLOR`,
//! `--color never`). So this crate knows nothing of terminals, and the formats for programs
//! (JSON, YAML, SARIF, GitHub, GitLab, JUnit) never hold an escape: they are written with no
//! style at all.

#![deny(missing_docs)]

pub mod clouds;
pub mod diff;
pub mod doctor;
pub mod document;
mod error;
pub mod github;
pub mod gitlab;
pub mod inspect;
pub mod junit;
pub mod lint;
mod placed;
pub mod sarif;
pub mod schema;
pub mod size;
pub mod style;
pub mod version;

pub use error::{Error, Result};
pub use placed::Repository;

/// The README's example compiles and runs.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
