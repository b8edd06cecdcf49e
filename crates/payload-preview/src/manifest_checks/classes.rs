//! The ClusterClasses of the input checked on their own (`topology::class`): what Cluster
//! API's webhook and controllers refuse of a class before any Cluster uses it, and, for a class
//! no Cluster of the input uses, the manifest checks of the objects a Cluster that sets none
//! of its variables would get, on what the class's patches write into them.

use rke2_payload::Finding;

use super::{config_spec, schemas};
use crate::manifests::Manifests;
use crate::topology::class::{check_class, expand_class, used};

/// What the ClusterClasses of the input are found to have wrong.
#[derive(Debug, Default)]
pub(crate) struct Classes {
    /// The findings, each placed in the class, its templates or its patches.
    pub(crate) findings: Vec<Finding>,
    /// The classes no topology Cluster of the input uses (`ClusterClass namespace/name`),
    /// checked on their own.
    pub(crate) alone: Vec<String>,
}

/// Checks every ClusterClass of `m`; `seed` makes the names of the expansion of a class on its
/// own the same on every run (they appear in messages).
pub(crate) fn classes(m: &Manifests, seed: Option<u64>) -> Classes {
    let mut out = Classes::default();
    let mut rng = crate::topology::rng(seed);
    for class in m.of_kind("ClusterClass") {
        let check = check_class(m, class);
        out.findings.extend(check.findings);
        if used(m, class) {
            // Its Cluster's expansion applies the patches and checks what they write.
            continue;
        }
        out.alone.push(class.title());
        // A class Cluster API refuses, or whose templates are missing, expands for no Cluster.
        if !check.sound {
            continue;
        }
        let Some(expansion) = expand_class(m, class, &mut rng) else {
            continue;
        };
        out.findings.extend(expansion.findings);
        let expanded = Manifests {
            objects: expansion.objects,
        };
        // What a patch wrote, checked where it lands; the rest is the templates', which are
        // checked as they are written.
        schemas(&expanded, &mut out.findings);
        for o in &expanded.objects {
            match o.kind() {
                "RKE2ControlPlane" | "RKE2Config" => {
                    config_spec(&expanded, o, o.get(&["spec"]), "spec", &mut out.findings);
                }
                "RKE2ConfigTemplate" => config_spec(
                    &expanded,
                    o,
                    o.get(&["spec", "template", "spec"]),
                    "spec.template.spec",
                    &mut out.findings,
                ),
                _ => {}
            }
        }
    }
    out
}
