//! JUnit XML, one writer for `size` and `lint`, built on `quick-junit` (nextest's JUnit model
//! and serialiser): the XML escaping, the element order and the counts are its.
//!
//! The document is `<testsuites name="rke2-payload size|lint" tests errors failures>` with a
//! `<testsuite>` per Secret (named by its title, `namespace/name`) and its test cases, each
//! `classname="rke2-payload.size|lint.TITLE"` and `time="0.000"`:
//!
//! - `size`: a case per target (named by the target's id); one that fits carries the measure in
//!   `<system-out>`, one over the limit a `<failure type="over-budget">` whose message says by
//!   how much and whose text is the advice;
//! - `lint`: a case per finding of error or warning severity (named by its check id) with a
//!   `<failure type="error|warning">` whose text is where the finding is; a Secret without one
//!   has a passing case `lint`;
//! - both: a Secret that cannot be read is a suite with one case (`read` for `size`,
//!   `secret-unreadable` for `lint`) holding an `<error>` with the message.
//!
//! Every name and message is terminal-safe (control and bidi characters as visible escapes).
//! The counts are the suites' and their sum; `quick-junit` also writes a `skipped` count, which
//! is kept on the suites (where Jenkins' JUnit schema allows it) and left out of the root
//! (where it does not): nothing here is ever skipped.

use std::io::Write;
use std::time::Duration;

use quick_junit::{NonSuccessKind, Report, TestCase, TestCaseStatus, TestSuite};
use rke2_payload::{BootstrapSecret, Check, Finding, LintReport, Severity, SizeReport};

use crate::placed::place;
use crate::style::{safe, secret_title};
use crate::{Error, Result};

/// What the `size` JUnit report holds for one Secret of the input.
#[derive(Debug, Clone)]
pub enum SizeItem {
    /// A Secret measured.
    Measured(Box<SizeReport>),
    /// A Secret that cannot be read.
    Unreadable {
        /// Its title (terminal-safe): `namespace/name`, or `object #N` by its place in the
        /// input.
        title: String,
        /// Why it cannot be read (the library's message).
        message: String,
    },
}

impl SizeItem {
    /// The item of a Secret that cannot be read, with the library's message.
    pub fn unreadable(secret: &BootstrapSecret<'_>, message: String) -> Self {
        SizeItem::Unreadable {
            title: secret_title(
                secret.namespace(),
                secret.name(),
                &format!("object #{}", secret.id().index + 1),
            ),
            message,
        }
    }
}

/// A test case of `suite`, its class `rke2-payload.KIND.SUITE`.
fn case(kind: &str, suite: &str, name: &str, status: TestCaseStatus) -> TestCase {
    let mut case = TestCase::new(safe(name), status);
    case.set_classname(format!("rke2-payload.{kind}.{suite}"))
        .set_time(Duration::ZERO);
    case
}

/// A status that did not pass: `kind`, its type and message (terminal-safe), and its text.
fn non_success(
    kind: NonSuccessKind,
    ty: &str,
    message: &str,
    text: Option<&str>,
) -> TestCaseStatus {
    let mut status = TestCaseStatus::non_success(kind);
    status.set_type(ty).set_message(safe(message));
    if let Some(text) = text {
        status.set_description(safe(text));
    }
    status
}

/// The suite of a Secret that cannot be read: one case, `name`, that is an error.
fn unreadable(kind: &str, title: &str, name: &str, ty: &str, message: &str) -> TestSuite {
    let suite_name = safe(title);
    let mut suite = TestSuite::new(&*suite_name);
    let status = non_success(NonSuccessKind::Error, ty, message, None);
    suite.add_test_case(case(kind, &suite_name, name, status));
    suite
}

/// Writes the `size` JUnit report: a suite per Secret, a case per target.
///
/// ```
/// use payload_printer::junit::{self, SizeItem};
/// use rke2_payload::{Envelope, Selector, SizeOptions, Sizer, Target, find_cloud};
///
/// let secret = br##"{"kind": "Secret", "metadata": {"name": "md-0-x", "namespace": "default"},
///   "stringData": {"format": "cloud-config", "value": "#cloud-config\nruncmd: [reboot]\n"}}"##;
/// let aws = find_cloud("aws").expect("a known cloud");
/// let sizer = Sizer::new(SizeOptions::new().with_targets(vec![Target::Cloud(aws)]));
/// let envelope = Envelope::parse(secret, &sizer.options().decode)?;
/// let report = sizer.measure(envelope.select(&Selector::default())?)?;
///
/// let mut out = Vec::new();
/// junit::size(&mut out, &[SizeItem::Measured(Box::new(report))])?;
/// let xml = String::from_utf8(out)?;
/// assert!(xml.starts_with("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"rke2-payload size\" tests=\"1\" failures=\"0\" errors=\"0\">"));
/// assert!(xml.contains("<testcase name=\"aws\" classname=\"rke2-payload.size.default/md-0-x\""));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn size(out: &mut impl Write, items: &[SizeItem]) -> Result<()> {
    let mut report = Report::new("rke2-payload size");
    for item in items {
        let sized = match item {
            SizeItem::Measured(sized) => sized,
            SizeItem::Unreadable { title, message } => {
                report.add_test_suite(unreadable(
                    "size",
                    title,
                    "read",
                    "secret-unreadable",
                    message,
                ));
                continue;
            }
        };
        let name = safe(&crate::size::title(sized)).into_owned();
        let mut suite = TestSuite::new(&*name);
        for v in &sized.payload.clouds {
            let summary = format!(
                "{} of {} {} ({:.1}%), budget {}",
                v.counted_bytes,
                v.limit_bytes,
                crate::size::counted_name(v.counted),
                v.used_percent,
                v.budget_bytes
            );
            let case = if v.fits {
                let mut case = case("size", &name, &v.cloud, TestCaseStatus::success());
                case.set_system_out(safe(&summary));
                case
            } else {
                let message = format!(
                    "over by {} bytes: {summary}",
                    v.headroom_bytes.unsigned_abs()
                );
                let advice = v.advice.join("; ");
                let status = non_success(
                    NonSuccessKind::Failure,
                    "over-budget",
                    &message,
                    Some(&advice),
                );
                case("size", &name, &v.cloud, status)
            };
            suite.add_test_case(case);
        }
        report.add_test_suite(suite);
    }
    write(out, &report)
}

/// Writes the `lint` JUnit report: a suite per Secret, a failed case per finding of error or
/// warning severity, a passing case `lint` for a Secret without one, an error case for a
/// Secret that cannot be read.
///
/// ```
/// use rke2_payload::{LintOptions, Linter, Selector};
///
/// let list = br##"{"kind": "List", "items": [{"kind": "Secret", "metadata": {"name": "w"},
///   "stringData": {"format": "cloud-config", "value": "#cloud-config\nruncmd: [reboot]\n"}}]}"##;
/// let report = Linter::new(LintOptions::new()).lint_stream(&list[..], &Selector::default(), 1)?;
///
/// let mut out = Vec::new();
/// payload_printer::junit::lint(&mut out, &report)?;
/// let xml = String::from_utf8(out)?;
/// assert!(xml.contains("<testsuites name=\"rke2-payload lint\" tests=\"1\" failures=\"1\" errors=\"0\">"));
/// assert!(xml.contains("<testcase name=\"rke2-config-missing\" classname=\"rke2-payload.lint.w\""));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn lint(out: &mut impl Write, report: &LintReport) -> Result<()> {
    let failing = |f: &&Finding| matches!(f.severity, Severity::Error | Severity::Warning);
    let mut junit = Report::new("rke2-payload lint");
    // The findings about the manifests (what the API server or CAPRKE2 refuses, an update a
    // webhook refuses, ...), one suite: a gate they fail is a failing suite.
    if !report.manifests.is_empty() {
        let mut suite = TestSuite::new("manifests");
        let found: Vec<&Finding> = report.manifests.iter().filter(failing).collect();
        if found.is_empty() {
            suite.add_test_case(case("lint", "manifests", "lint", TestCaseStatus::success()));
        }
        for f in found {
            let at = f
                .manifest
                .as_ref()
                .map(|site| crate::style::file_line(&site.file, site.line));
            let status = non_success(
                NonSuccessKind::Failure,
                f.severity.as_str(),
                &f.message,
                at.as_deref(),
            );
            suite.add_test_case(case("lint", "manifests", f.id(), status));
        }
        junit.add_test_suite(suite);
    }
    for s in &report.secrets {
        let title = crate::lint::title(s);
        if let Some(e) = &s.error {
            let id = Check::SecretUnreadable.id();
            junit.add_test_suite(unreadable("lint", &title, id, id, &e.message));
            continue;
        }
        let name = safe(&title).into_owned();
        let mut suite = TestSuite::new(&*name);
        let found: Vec<&Finding> = s.findings.iter().filter(failing).collect();
        if found.is_empty() {
            suite.add_test_case(case("lint", &name, "lint", TestCaseStatus::success()));
        }
        for f in found {
            let status = non_success(
                NonSuccessKind::Failure,
                f.severity.as_str(),
                &f.message,
                Some(&place(s, f)),
            );
            suite.add_test_case(case("lint", &name, f.id(), status));
        }
        junit.add_test_suite(suite);
    }
    write(out, &junit)
}

/// Serialises a report, without the root's `skipped` count (see the module's documentation).
pub(crate) fn write(out: &mut impl Write, report: &Report) -> Result<()> {
    let mut xml = Vec::new();
    report
        .serialize(&mut xml)
        .map_err(|e| Error::Xml(Box::new(e)))?;
    let skipped = format!(" skipped=\"{}\"", report.skipped);
    if let Some(root) = find(&xml, b"<testsuites ") {
        let end = root + find(&xml[root..], b">").unwrap_or(0);
        if let Some(at) = find(&xml[root..end], skipped.as_bytes()) {
            xml.drain(root + at..root + at + skipped.len());
        }
    }
    out.write_all(&xml)?;
    Ok(())
}

/// Where `needle` first is in `haystack`.
fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    memchr::memmem::find(haystack, needle)
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_root_has_no_skipped_count_and_the_suites_keep_theirs() {
        // A report of no Secret: manifests whose findings are all there is, and none.
        let report =
            rke2_payload::Linter::new(rke2_payload::LintOptions::new()).lint_unrendered(Vec::new());
        let mut out = Vec::new();
        super::lint(&mut out, &report).unwrap();
        let xml = String::from_utf8(out).unwrap();
        assert!(
            xml.contains(
                "<testsuites name=\"rke2-payload lint\" tests=\"0\" failures=\"0\" errors=\"0\""
            ),
            "{xml}"
        );
        assert!(!xml.contains("skipped"), "{xml}");
    }
}
