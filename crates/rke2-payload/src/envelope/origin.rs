//! Where a bootstrap Secret comes from, as a typed value: a preview hands it to the reports
//! with the Secret ([`Provenance::Rendered`]), and the two annotations `render` writes on its
//! output are read back into it here, and only here, when the user asks for it
//! ([`DecodeOptions::render_annotations`](crate::options::DecodeOptions::render_annotations),
//! [`Provenance::Annotations`]). Nothing else of the input decides what a report measures or
//! reports.

use serde::Deserialize;

use crate::checks::{
    Check, Finding, IGNORE_CHECK_ANNOTATION_PREFIX, Ignores, ManifestSite, Severity, Suppression,
};
use crate::clouds::Delivery;
use crate::codec::text::terminal_safe;

/// Who says where a Secret comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Provenance {
    /// The preview made it from the manifests read in this run: its delivery path is the one
    /// its infrastructure machine template names, and `size` measures against it.
    Rendered,
    /// The input's own annotations say so (`render` output read back, when asked): they are
    /// reported, and the delivery path they name is measured as well as every target the
    /// user would get without them, never instead.
    Annotations,
    /// The live objects of the cluster the Secret was read from say so: the infrastructure
    /// object of the Machine it was written for names the delivery path, and `size` measures
    /// against it, as for a preview.
    Live,
}

/// Where a bootstrap Secret comes from: the object it was rendered from, the path its user
/// data takes to the machine, and the manifest findings that concern it.
///
/// ```
/// use rke2_payload::{ManifestSite, Origin, Provenance};
///
/// let site = ManifestSite::new("cluster.yaml", "RKE2ControlPlane default/cp", Some(12));
/// let origin = Origin::rendered(Some(site));
/// assert_eq!(origin.provenance, Provenance::Rendered);
/// assert!(origin.delivery.is_none() && origin.findings.is_empty());
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Origin {
    /// The object it was rendered from and where that is written.
    pub site: Option<ManifestSite>,
    /// The path its user data takes (an entry of the delivery table), when known.
    pub delivery: Option<Delivery>,
    /// The manifest findings that concern it.
    pub findings: Vec<Finding>,
    /// Who says so.
    pub provenance: Provenance,
    /// The checks the objects it comes from suppress on it (their
    /// `ignore-check.rke2-payload.io/…` annotations: the object it was rendered from and its
    /// Cluster), as the preview read them.
    pub suppressions: Vec<Suppression>,
}

impl Origin {
    /// The origin of a Secret a preview made from `site`'s object (`None`: an object whose
    /// place is not known).
    pub fn rendered(site: Option<ManifestSite>) -> Self {
        Origin {
            site,
            delivery: None,
            findings: Vec::new(),
            provenance: Provenance::Rendered,
            suppressions: Vec::new(),
        }
    }

    /// The origin of a Secret read from a live cluster, whose Machine's infrastructure object
    /// sends its data by `delivery`.
    ///
    /// ```
    /// use rke2_payload::{Delivery, Origin, Provenance, delivery_for};
    ///
    /// let delivery = delivery_for("AWSMachineTemplate", "infrastructure.cluster.x-k8s.io/v1beta2",
    ///     &serde_json::json!({}), false);
    /// let origin = Origin::live(delivery.expect("in the table"));
    /// assert_eq!(origin.provenance, Provenance::Live);
    /// assert_eq!(origin.delivery.map(|d| d.cloud).as_deref(), Some("aws"));
    /// ```
    pub fn live(delivery: Delivery) -> Self {
        Origin {
            site: None,
            delivery: Some(delivery),
            findings: Vec::new(),
            provenance: Provenance::Live,
            suppressions: Vec::new(),
        }
    }

    /// Sets [`Origin::delivery`].
    pub fn with_delivery(mut self, delivery: Option<Delivery>) -> Self {
        self.delivery = delivery;
        self
    }

    /// Sets [`Origin::findings`].
    pub fn with_findings(mut self, findings: Vec<Finding>) -> Self {
        self.findings = findings;
        self
    }

    /// Sets [`Origin::suppressions`].
    pub fn with_suppressions(mut self, suppressions: Vec<Suppression>) -> Self {
        self.suppressions = suppressions;
        self
    }

    /// What the two annotations of `render` output say (`findings`: the JSON text of
    /// [`FINDINGS_ANNOTATION`](super::FINDINGS_ANNOTATION), `rendered_from`: that of
    /// [`RENDERED_FROM_ANNOTATION`](super::RENDERED_FROM_ANNOTATION)); `None` when neither
    /// reads. Unknown check ids are dropped; every string is made terminal-safe (it is input).
    pub(crate) fn from_annotations(
        findings: Option<&str>,
        rendered_from: Option<&str>,
    ) -> Option<Self> {
        #[derive(Deserialize)]
        struct From {
            #[serde(flatten)]
            site: ManifestSite,
            delivery: Option<Delivery>,
        }
        let from: Option<From> = rendered_from.and_then(|t| serde_json::from_str(t).ok());
        let findings = findings.map(annotated_findings).unwrap_or_default();
        if from.is_none() && findings.is_empty() {
            return None;
        }
        let (site, delivery) = match from {
            Some(f) => (Some(f.site.terminal_safe()), f.delivery),
            None => (None, None),
        };
        Some(Origin {
            site,
            delivery: delivery.map(|d| Delivery {
                cloud: d.cloud,
                reason: terminal_safe(&d.reason).into_owned(),
                parsed_as_yaml: d.parsed_as_yaml,
            }),
            findings,
            provenance: Provenance::Annotations,
            suppressions: Vec::new(),
        })
    }
}

/// The findings of a [`FINDINGS_ANNOTATION`](super::FINDINGS_ANNOTATION): known check ids
/// only, at the severity written (or the check's own), messages made safe.
fn annotated_findings(text: &str) -> Vec<Finding> {
    #[derive(Deserialize)]
    struct Annotated {
        id: String,
        #[serde(default)]
        severity: Option<Severity>,
        #[serde(default)]
        message: String,
        #[serde(default)]
        manifest: Option<ManifestSite>,
        /// The reason of the ignore-check annotation of the finding's object, when it has one
        /// for the finding's check.
        #[serde(default)]
        ignored: Option<String>,
    }
    let list: Vec<Annotated> = serde_json::from_str(text).unwrap_or_default();
    list.into_iter()
        .filter_map(|a| {
            let check = Check::from_id(&a.id)?;
            let mut f = Finding::new(check, terminal_safe(&a.message).into_owned());
            if let Some(severity) = a.severity {
                f.severity = severity;
            }
            f.manifest = a.manifest.map(|site| {
                let site = site.terminal_safe();
                match &a.ignored {
                    Some(reason) => {
                        let key = format!("{IGNORE_CHECK_ANNOTATION_PREFIX}{}", check.id());
                        let ignores = Ignores::from_annotations(
                            [(key.as_str(), reason.as_str())],
                            &site.object,
                        );
                        site.with_ignores(Some(ignores))
                    }
                    None => site,
                }
            });
            Some(f)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn annotations_read_back_with_unknown_checks_dropped_and_text_made_safe() {
        let findings = r#"[{"id":"no-such-check","message":"x"},{"id":"rke2-config-missing","severity":"warning","message":"a\u001b[31mb"}]"#;
        let from = r#"{"file":"c.yaml","object":"RKE2ControlPlane d/cp","line":3,"delivery":{"cloud":"aws","reason":"AWSMachineTemplate"}}"#;
        let origin = Origin::from_annotations(Some(findings), Some(from)).expect("an origin");
        assert_eq!(origin.provenance, Provenance::Annotations);
        assert_eq!(origin.findings.len(), 1);
        assert_eq!(origin.findings[0].severity, Severity::Warning);
        assert!(!origin.findings[0].message.contains('\u{1b}'));
        assert_eq!(origin.site.as_ref().and_then(|s| s.line), Some(3));
        assert_eq!(origin.delivery.map(|d| d.cloud).as_deref(), Some("aws"));
        assert_eq!(Origin::from_annotations(Some("not json"), None), None);
    }

    #[test]
    fn a_manifest_finding_read_back_keeps_what_its_object_s_annotation_says() {
        let findings = r#"[{"id":"manifest-provider-id-literal","message":"m","manifest":{"file":"c.yaml","object":"RKE2ConfigTemplate d/t","line":9},"ignored":"one Machine\u001b"},
            {"id":"manifest-provider-id-literal","message":"n","manifest":{"file":"c.yaml","object":"RKE2ConfigTemplate d/u","line":19}}]"#;
        let origin = Origin::from_annotations(Some(findings), None).expect("an origin");
        let by = origin.findings[0]
            .manifest
            .as_ref()
            .and_then(|site| site.ignores.as_deref())
            .and_then(|i| i.of(Check::ManifestProviderIdLiteral))
            .expect("suppressed on its object");
        assert_eq!(by.object, "RKE2ConfigTemplate d/t");
        assert!(by.reason.starts_with("one Machine") && !by.reason.contains('\u{1b}'));
        assert!(
            origin.findings[1]
                .manifest
                .as_ref()
                .is_some_and(|site| site.ignores.is_none())
        );
    }
}
