//! Suppressions an object asks for in its own annotations, as kube-linter's
//! `ignore-check.kube-linter.io/<check>`: `ignore-check.rke2-payload.io/<check-id>: "<reason>"`.
//!
//! They are read from the parsed annotations map of the object (a bootstrap Secret, by the
//! envelope; a manifest object, by the preview crate), never from text. A key of the prefix
//! whose check id is not in the table suppresses nothing: it is a finding of its own,
//! [`Check::IgnoreCheckUnknown`].

use super::{Check, Finding};
use crate::codec::text::{shorten, terminal_safe};

/// The prefix of the annotation that suppresses a check on the object that carries it; the
/// check's id follows it, the value is the reason (`ignore-check.rke2-payload.io/provider-id-missing:
/// "CAPD sets it"`).
pub const IGNORE_CHECK_ANNOTATION_PREFIX: &str = "ignore-check.rke2-payload.io/";

/// The most characters of a reason kept (the rest is cut with `…`).
const MAX_REASON: usize = 300;

/// One check an object's annotation suppresses, and why.
///
/// ```
/// use rke2_payload::{Check, Ignores};
///
/// let annotations = [("ignore-check.rke2-payload.io/provider-id-missing", "CAPD sets it")];
/// let ignores = Ignores::from_annotations(annotations, "Secret default/w");
/// assert_eq!(ignores.suppressions[0].check, Check::ProviderIdMissing);
/// assert_eq!(ignores.suppressions[0].reason, "CAPD sets it");
/// assert_eq!(ignores.suppressions[0].object, "Secret default/w");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[non_exhaustive]
pub struct Suppression {
    /// The check suppressed, as its id.
    pub check: Check,
    /// The annotation's value: why (terminal-safe, at most 300 characters; may be empty).
    pub reason: String,
    /// The object whose annotation says so: `Kind namespace/name` (terminal-safe).
    pub object: String,
}

impl Suppression {
    /// `check` suppressed on `object` for `reason`.
    pub fn new(check: Check, reason: impl Into<String>, object: impl Into<String>) -> Self {
        Suppression {
            check,
            reason: reason.into(),
            object: object.into(),
        }
    }
}

/// What an object's `ignore-check.rke2-payload.io/…` annotations say: the checks suppressed on
/// it, and the ids that name no check.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct Ignores {
    /// The checks suppressed, in the order of the annotations.
    pub suppressions: Vec<Suppression>,
    /// The ids after the prefix that name no check (terminal-safe), in the order of the
    /// annotations.
    pub unknown: Vec<String>,
    /// The object that carries the annotations: `Kind namespace/name` (terminal-safe).
    pub object: String,
}

impl Ignores {
    /// The suppressions in `annotations` (key, value) of `object` (`Kind namespace/name`, as
    /// messages name it); keys without the prefix are passed over.
    pub fn from_annotations<'a>(
        annotations: impl IntoIterator<Item = (&'a str, &'a str)>,
        object: &str,
    ) -> Self {
        let object = terminal_safe(object).into_owned();
        let mut out = Ignores {
            object: object.clone(),
            ..Ignores::default()
        };
        for (key, value) in annotations {
            let Some(id) = key.strip_prefix(IGNORE_CHECK_ANNOTATION_PREFIX) else {
                continue;
            };
            match Check::from_id(id) {
                Some(check) => out.suppressions.push(Suppression {
                    check,
                    reason: shorten(&terminal_safe(value), MAX_REASON),
                    object: object.clone(),
                }),
                None => out.unknown.push(shorten(&terminal_safe(id), 80)),
            }
        }
        out
    }

    /// Whether no annotation of the prefix was found.
    pub fn is_empty(&self) -> bool {
        self.suppressions.is_empty() && self.unknown.is_empty()
    }

    /// The suppression of `check`, if the annotations hold one.
    pub fn of(&self, check: Check) -> Option<&Suppression> {
        self.suppressions.iter().find(|s| s.check == check)
    }

    /// One [`Check::IgnoreCheckUnknown`] finding per id that names no check.
    pub fn unknown_findings(&self) -> Vec<Finding> {
        self.unknown
            .iter()
            .map(|id| {
                Finding::new(
                    Check::IgnoreCheckUnknown,
                    format!(
                        "{}: the annotation {IGNORE_CHECK_ANNOTATION_PREFIX}{id} names no check, so it suppresses nothing (`rke2-payload lint --list-checks` lists the ids)",
                        self.object
                    ),
                )
            })
            .collect()
    }
}

/// Whether an annotation can suppress `check`: not [`Check::SecretUnreadable`], since an object
/// that does not read has no annotations to trust.
pub(crate) fn suppressible(check: Check) -> bool {
    check != Check::SecretUnreadable
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_ids_suppress_unknown_ids_are_named_and_text_is_made_safe() {
        let ignores = Ignores::from_annotations(
            [
                ("note", "x"),
                (
                    "ignore-check.rke2-payload.io/gzip-unsafe",
                    "we \u{1b}[31mknow",
                ),
                ("ignore-check.rke2-payload.io/gzip-unsafer", ""),
            ],
            "Secret a/b",
        );
        assert_eq!(ignores.suppressions.len(), 1);
        assert!(!ignores.suppressions[0].reason.contains('\u{1b}'));
        assert!(ignores.of(Check::GzipUnsafe).is_some());
        assert_eq!(ignores.unknown, ["gzip-unsafer"]);
        let found = ignores.unknown_findings();
        assert_eq!(found[0].check, Check::IgnoreCheckUnknown);
        assert!(found[0].message.contains("gzip-unsafer names no check"));
        assert!(Ignores::from_annotations([("a", "b")], "x").is_empty());
    }
}
