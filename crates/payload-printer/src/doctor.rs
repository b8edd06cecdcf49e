//! `doctor`: the join chain of each cluster, as text, its JSON and YAML document, JUnit and
//! GitHub annotations.
//!
//! Text shows each cluster with its first broken link first (object, field, what was seen,
//! what the controller needs, where upstream needs it), then the whole chain a line per link:
//! `✓` holds, `✗` broken, `!` warning, `?` unknown, `-` not applicable.

use std::io::Write;
use std::time::Duration;

use payload_doctor::{ClusterChain, Diagnosis, Link, State};
use quick_junit::{NonSuccessKind, Report, TestCase, TestCaseStatus, TestSuite};

use crate::Result;
use crate::style::{BOLD, DIM, ERROR, INFO, OK, WARN, safe};

/// The mark and style of a state in text.
fn mark(state: State) -> (anstyle::Style, &'static str) {
    match state {
        State::Holds => (OK, "✓"),
        State::Broken => (ERROR, "✗"),
        State::Warning => (WARN, "!"),
        State::Unknown => (INFO, "?"),
        _ => (DIM, "-"),
    }
}

/// `namespace/name`, terminal-safe.
fn title(c: &ClusterChain) -> String {
    safe(&format!("{}/{}", c.namespace, c.name)).into_owned()
}

/// What a link read, for one line: `Kind ns/name field`.
fn read(link: &Link) -> String {
    let mut out = link
        .object
        .as_ref()
        .map(ToString::to_string)
        .unwrap_or_default();
    if !link.field.is_empty() {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(&link.field);
    }
    safe(&out).into_owned()
}

/// Writes the diagnosis for people.
///
/// ```
/// use payload_doctor::{DoctorOptions, Inventory, diagnose};
///
/// let dump = br#"{"apiVersion": "cluster.x-k8s.io/v1beta1", "kind": "Cluster",
///   "metadata": {"name": "demo", "namespace": "fleet"},
///   "spec": {"controlPlaneRef": {"apiVersion": "controlplane.cluster.x-k8s.io/v1beta2", "kind": "RKE2ControlPlane", "name": "demo"}},
///   "status": {"infrastructureReady": false}}"#;
/// let mut inventory = Inventory::new(Default::default());
/// inventory.read("dump.json", dump)?;
/// let diagnosis = diagnose(&inventory, &DoctorOptions::default());
///
/// let mut out = Vec::new();
/// payload_printer::doctor::text(&mut out, &diagnosis)?;
/// let text = String::from_utf8(out)?;
/// assert!(text.contains("fleet/demo"));
/// // Styled as ANSI escapes, which the caller's sink keeps or strips.
/// assert!(text.contains("broken at \u{1b}[1m\u{1b}[31minfrastructure-provisioned"));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn text(out: &mut impl Write, diagnosis: &Diagnosis) -> Result<()> {
    for unread in &diagnosis.unread {
        writeln!(
            out,
            "{INFO}?{INFO:#} {} not read ({}): {}",
            safe(&unread.resource),
            unread.reason,
            safe(&unread.message)
        )?;
    }
    for (i, c) in diagnosis.clusters.iter().enumerate() {
        if i > 0 || !diagnosis.unread.is_empty() {
            writeln!(out)?;
        }
        cluster(out, c)?;
    }
    for s in &diagnosis.skipped_clusters {
        writeln!(
            out,
            "{DIM}- {} left alone: its control plane is a {}{DIM:#}",
            safe(&format!("{}/{}", s.namespace, s.name)),
            safe(&s.control_plane)
        )?;
    }
    let summary = &diagnosis.summary;
    writeln!(
        out,
        "\n{} cluster(s): {} broken, {} warning(s), {} unknown link(s)",
        summary.clusters, summary.broken, summary.warnings, summary.unknown
    )?;
    Ok(())
}

/// One cluster: its first broken link in full, then the chain.
fn cluster(out: &mut impl Write, c: &ClusterChain) -> Result<()> {
    let warnings = c.in_state(State::Warning).count();
    match c.first_broken() {
        Some(link) => {
            writeln!(
                out,
                "{ERROR}✗{ERROR:#} {BOLD}{}{BOLD:#}  broken at {ERROR}{}{ERROR:#}",
                title(c),
                link.id
            )?;
            detail(out, link)?;
        }
        None if warnings > 0 => writeln!(
            out,
            "{WARN}!{WARN:#} {BOLD}{}{BOLD:#}  no broken link, {warnings} warning(s)",
            title(c)
        )?,
        None => writeln!(
            out,
            "{OK}✓{OK:#} {BOLD}{}{BOLD:#}  no broken link",
            title(c)
        )?,
    }
    for link in &c.links {
        let (style, sign) = mark(link.state);
        let what = read(link);
        let seen = safe(&link.seen);
        let sep = if what.is_empty() || seen.is_empty() {
            ""
        } else {
            ": "
        };
        writeln!(
            out,
            "  {style}{sign}{style:#} {:<27} {DIM}{what}{DIM:#}{sep}{seen}",
            link.id.as_str()
        )?;
    }
    Ok(())
}

/// A link in full: what it read, saw and needs, and the upstream source.
fn detail(out: &mut impl Write, link: &Link) -> Result<()> {
    let what = read(link);
    if !what.is_empty() {
        writeln!(out, "    object: {what}")?;
    }
    writeln!(out, "    seen:   {}", safe(&link.seen))?;
    writeln!(out, "    needed: {}", safe(&link.needed))?;
    writeln!(out, "    {DIM}source: {}{DIM:#}", link.source)?;
    writeln!(out)?;
    Ok(())
}

/// Writes the diagnosis as its JSON document (schema [`payload_doctor::DOCTOR_SCHEMA`]), pretty.
pub fn json(out: &mut impl Write, diagnosis: &Diagnosis) -> Result<()> {
    crate::document::json(out, diagnosis)
}

/// Writes the diagnosis as its YAML document (the JSON document, as block YAML).
pub fn yaml(out: &mut impl Write, diagnosis: &Diagnosis) -> Result<()> {
    crate::document::yaml(out, diagnosis)
}

/// Writes the diagnosis as JUnit XML: a suite per cluster (`namespace/name`), a case per link
/// (named by its id, `classname="rke2-payload.doctor.NAMESPACE/NAME"`): a broken link is a
/// `<failure type="broken">`, a warning a `<failure type="warning">`, an unknown or
/// not-applicable link is `<skipped>` with what was seen; what holds passes, with what was
/// seen in `<system-out>`.
///
/// ```
/// use payload_doctor::{DoctorOptions, Inventory, diagnose};
///
/// let dump = br#"{"apiVersion": "cluster.x-k8s.io/v1beta1", "kind": "Cluster",
///   "metadata": {"name": "demo", "namespace": "fleet"},
///   "spec": {"controlPlaneRef": {"apiVersion": "controlplane.cluster.x-k8s.io/v1beta2", "kind": "RKE2ControlPlane", "name": "demo"}},
///   "status": {"infrastructureReady": false}}"#;
/// let mut inventory = Inventory::new(Default::default());
/// inventory.read("dump.json", dump)?;
/// let diagnosis = diagnose(&inventory, &DoctorOptions::default());
///
/// let mut out = Vec::new();
/// payload_printer::doctor::junit(&mut out, &diagnosis)?;
/// let xml = String::from_utf8(out)?;
/// assert!(xml.contains("<testcase name=\"infrastructure-provisioned\" classname=\"rke2-payload.doctor.fleet/demo\""));
/// assert!(xml.contains("type=\"broken\""));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn junit(out: &mut impl Write, diagnosis: &Diagnosis) -> Result<()> {
    let mut report = Report::new("rke2-payload doctor");
    for c in &diagnosis.clusters {
        let name = title(c);
        let mut suite = TestSuite::new(&*name);
        for link in &c.links {
            let message = safe(&link.seen).into_owned();
            let description = format!(
                "{}\nneeded: {}\nsource: {}",
                read(link),
                safe(&link.needed),
                link.source
            );
            let status = match link.state {
                State::Holds => TestCaseStatus::success(),
                State::Broken | State::Warning => {
                    let mut s = TestCaseStatus::non_success(NonSuccessKind::Failure);
                    s.set_type(link.state.as_str());
                    s.set_message(&*message);
                    s.set_description(&*description);
                    s
                }
                _ => {
                    let mut s = TestCaseStatus::skipped();
                    s.set_message(format!("{}: {message}", link.state.as_str()));
                    s
                }
            };
            let mut case = TestCase::new(link.id.as_str(), status);
            case.set_classname(format!("rke2-payload.doctor.{name}"));
            case.set_time(Duration::ZERO);
            if link.state == State::Holds {
                case.set_system_out(&*message);
            }
            suite.add_test_case(case);
        }
        report.add_test_suite(suite);
    }
    crate::junit::write(out, &report)
}

/// Writes GitHub Actions annotations: an `::error` per broken link and a `::warning` per
/// warning, titled `doctor LINK (namespace/name)`, with GitHub's toolkit escapes.
pub fn github(out: &mut impl Write, diagnosis: &Diagnosis) -> Result<()> {
    for c in &diagnosis.clusters {
        for link in &c.links {
            let level = match link.state {
                State::Broken => "error",
                State::Warning => "warning",
                _ => continue,
            };
            let title = format!("doctor {} ({})", link.id, title(c));
            let message = format!("{}: {} (needed: {})", read(link), link.seen, link.needed);
            writeln!(
                out,
                "::{level} title={}::{}",
                crate::github::property(&title),
                crate::github::data(&message)
            )?;
        }
    }
    Ok(())
}
