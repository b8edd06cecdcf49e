//! The embedded CRD schemas: `<group>.json` beside this file, written by
//! `scripts/crd-schemas.py`, parsed once per group and compiled once per kind and version, on
//! first use.

use std::sync::OnceLock;

use serde_json::Value;

use payload_kube_schema::{Schema, Violation};

/// The generated files, by API group.
const GROUPS: &[(&str, &str)] = &[
    ("cluster.x-k8s.io", include_str!("cluster.x-k8s.io.json")),
    (
        "bootstrap.cluster.x-k8s.io",
        include_str!("bootstrap.cluster.x-k8s.io.json"),
    ),
    (
        "controlplane.cluster.x-k8s.io",
        include_str!("controlplane.cluster.x-k8s.io.json"),
    ),
];

/// Where one schema came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Origin {
    /// "Cluster API" or "CAPRKE2".
    pub(crate) project: String,
    /// The repository's URL.
    pub(crate) repository: String,
    /// The tag read.
    pub(crate) tag: String,
    /// The tag's commit.
    pub(crate) commit: String,
    /// The CRD file in the repository.
    pub(crate) path: String,
}

/// One kind and version of a group, compiled when first asked for.
struct Slot {
    /// The version (`v1beta2`).
    version: String,
    /// The kind (`RKE2ControlPlane`).
    kind: String,
    /// The schema as generated.
    schema: Value,
    /// Where it came from.
    origin: Origin,
    /// CEL rules the extractor kept.
    cel_rules: usize,
    /// "group/version Kind from Project tag".
    label: String,
    /// The compiled schema (None if the embedded data does not compile, which a test rules out).
    compiled: OnceLock<Option<CrdSchema>>,
}

/// A CRD's schema for one kind and version: a compiled validator and where it came from.
#[derive(Debug)]
#[cfg_attr(
    not(test),
    allow(
        dead_code,
        reason = "where a schema came from and its CEL rules are for the tests; findings name it by `source`"
    )
)]
pub(crate) struct CrdSchema {
    /// The compiled `openAPIV3Schema`.
    root: Schema,
    /// "cluster.x-k8s.io/v1beta2 Cluster from Cluster API v1.14.0".
    label: String,
    /// Where it came from.
    origin: Origin,
    /// CEL rules of the CRD (run by the compiled schema).
    cel_rules: usize,
    /// The group (`cluster.x-k8s.io`).
    group: &'static str,
    /// The version (`v1beta2`).
    version: &'static str,
    /// The kind (`Cluster`).
    kind: &'static str,
}

impl CrdSchema {
    /// The problems of an object as the API server finds them when it is created: the CRD's
    /// defaults filled in, then what the mutating webhooks of Cluster API and CAPRKE2 set
    /// (`admission.rs`), then [`CrdSchema::validate`].
    pub(crate) fn admit(&self, object: &Value) -> Vec<Violation> {
        let mut admitted = self.default_object(object.clone());
        super::admission::defaulted(self.group, self.version, self.kind, &mut admitted);
        self.validate(&admitted)
    }

    /// The problems of an object (the whole manifest: `apiVersion`, `kind`, `metadata`, `spec`,
    /// …) as the API server would see them with strict field validation: schema violations and
    /// fields the schema does not declare (which the API server itself prunes silently). The
    /// root `metadata` is checked loosely as ObjectMeta; `status` is not checked (a
    /// subresource: the API server ignores it on create and update), then the CRD's CEL rules.
    pub(crate) fn validate(&self, object: &Value) -> Vec<Violation> {
        self.root.validate(object)
    }

    /// Where the schema came from: "cluster.x-k8s.io/v1beta2 Cluster from Cluster API v1.14.0".
    pub(crate) fn source(&self) -> &str {
        &self.label
    }

    /// The repository, tag, commit and file the schema was extracted from.
    #[cfg(test)]
    pub(crate) fn origin(&self) -> &Origin {
        &self.origin
    }

    /// How many CEL rules (`x-kubernetes-validations`) the CRD has for this version, as the
    /// extractor counted them.
    #[cfg(test)]
    pub(crate) fn cel_rules(&self) -> usize {
        self.cel_rules
    }

    /// The object with the CRD's defaults filled in, as the API server stores it: null fields
    /// that are not nullable dropped (or defaulted), then structural defaulting (see
    /// `Schema::default_value`).
    pub(crate) fn default_object(&self, mut object: Value) -> Value {
        self.root.prune_nulls(&mut object);
        self.root.default_value(Some(object)).unwrap_or(Value::Null)
    }
}

/// Reads one generated file into its slots.
fn parse_group(text: &str) -> Vec<Slot> {
    let Ok(Value::Object(mut document)) = serde_json::from_str::<Value>(text) else {
        return Vec::new();
    };
    let group = document
        .get("group")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    let Some(Value::Array(schemas)) = document.remove("schemas") else {
        return Vec::new();
    };
    let text_of = |v: &Value, key: &str| {
        v.get(key)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned()
    };
    schemas
        .into_iter()
        .filter_map(|mut entry| {
            let schema = entry.get_mut("schema").map(Value::take)?;
            let source = entry.get("source")?;
            let origin = Origin {
                project: text_of(source, "project"),
                repository: text_of(source, "repository"),
                tag: text_of(source, "tag"),
                commit: text_of(source, "commit"),
                path: text_of(source, "path"),
            };
            let version = text_of(&entry, "version");
            let kind = text_of(&entry, "kind");
            let label = format!(
                "{group}/{version} {kind} from {} {}",
                origin.project, origin.tag
            );
            let cel_rules = entry.get("celRules").and_then(Value::as_u64).unwrap_or(0);
            Some(Slot {
                version,
                kind,
                schema,
                origin,
                cel_rules: usize::try_from(cel_rules).unwrap_or(usize::MAX),
                label,
                compiled: OnceLock::new(),
            })
        })
        .collect()
}

/// The parsed groups, each parsed on first use.
fn group_slots(index: usize) -> &'static [Slot] {
    static PARSED: [OnceLock<Vec<Slot>>; 3] = [OnceLock::new(), OnceLock::new(), OnceLock::new()];
    match (PARSED.get(index), GROUPS.get(index)) {
        (Some(cell), Some((_, text))) => cell.get_or_init(|| parse_group(text)),
        _ => &[],
    }
}

/// The CRD schema for `apiVersion` (`group/version`) and `kind`, if this crate carries it:
/// Cluster, ClusterClass, MachineDeployment, MachinePool and Machine of `cluster.x-k8s.io`, and
/// RKE2ControlPlane(Template) and RKE2Config(Template) of CAPRKE2's groups, in `v1beta1` and
/// `v1beta2`. Compiled once per kind and version.
pub(crate) fn crd_schema(api_version: &str, kind: &str) -> Option<&'static CrdSchema> {
    let (group, version) = api_version.split_once('/')?;
    let index = GROUPS.iter().position(|(name, _)| *name == group)?;
    let slot = group_slots(index)
        .iter()
        .find(|slot| slot.version == version && slot.kind == kind)?;
    slot.compiled
        .get_or_init(|| {
            let root = Schema::custom_resource(&slot.schema).ok()?;
            Some(CrdSchema {
                root,
                label: slot.label.clone(),
                origin: slot.origin.clone(),
                cel_rules: slot.cel_rules,
                group: GROUPS.get(index).map_or("", |(name, _)| *name),
                version: &slot.version,
                kind: &slot.kind,
            })
        })
        .as_ref()
}

/// The versions the CRDs this crate carries serve for `kind` of `group` (the API server's
/// `versions` with `served: true`: only those are embedded), or `None` when the group or the
/// kind is not one of them.
///
/// CAPRKE2 v0.25 and Cluster API serve `v1beta1` and `v1beta2`: an object of another version
/// (CAPHV's templates still write `controlplane.cluster.x-k8s.io/v1alpha1`) is refused with "no
/// matches for kind".
pub(crate) fn served_versions(group: &str, kind: &str) -> Option<Vec<&'static str>> {
    let index = GROUPS.iter().position(|(name, _)| *name == group)?;
    let versions: Vec<&'static str> = group_slots(index)
        .iter()
        .filter(|slot| slot.kind == kind)
        .map(|slot| slot.version.as_str())
        .collect();
    (!versions.is_empty()).then_some(versions)
}

/// Every (apiVersion, kind) covered, in the generated files' order.
#[cfg(test)]
pub(crate) fn covered() -> Vec<(String, String)> {
    (0..GROUPS.len())
        .flat_map(|index| {
            let group = GROUPS.get(index).map_or("", |(name, _)| *name);
            group_slots(index)
                .iter()
                .map(move |slot| (format!("{group}/{}", slot.version), slot.kind.clone()))
        })
        .collect()
}
