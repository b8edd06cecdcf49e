//! The fuzz target's entry point (feature `fuzzing`; compiled for the crate's own tests).

use crate::{DoctorOptions, Inventory, LinkId, State, diagnose};

/// Reads any bytes as a dump and walks the chain: never panics; every cluster has every link
/// once, in chain order; `first_broken` is the first broken one; no secret value the input
/// holds (a payload's token, a `-token` Secret's) is in what a link saw, needs or read.
pub fn doctor(data: &[u8]) {
    let mut inventory = Inventory::new(Default::default());
    // A dump that does not read is the command's exit 2; what it read so far still walks.
    let _ = inventory.read("fuzz", data);
    let diagnosis = diagnose(&inventory, &DoctorOptions::default());
    for c in &diagnosis.clusters {
        let ids: Vec<LinkId> = c.links.iter().map(|l| l.id).collect();
        assert_eq!(ids, LinkId::ALL, "the chain of {}/{}", c.namespace, c.name);
        assert_eq!(
            c.first_broken,
            c.links
                .iter()
                .find(|l| l.state == State::Broken)
                .map(|l| l.id)
        );
        for link in &c.links {
            for secret in inventory.secrets.iter() {
                for text in [&link.seen, &link.needed, &link.field] {
                    assert!(!text.contains(secret), "{} shows a secret", link.id);
                }
            }
        }
    }
    assert_eq!(diagnosis.summary.clusters, diagnosis.clusters.len());
}

#[cfg(test)]
mod tests {
    use std::path::{Path, PathBuf};

    /// The files of `dir` and below, in name order (none when it is not there: a packaged
    /// crate carries neither its dumps nor the repository's saved fuzz inputs).
    fn files(dir: &Path, out: &mut Vec<PathBuf>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        let mut paths: Vec<PathBuf> = entries.filter_map(Result::ok).map(|e| e.path()).collect();
        paths.sort();
        for path in paths {
            if path.is_dir() {
                files(&path, out);
            } else if !path
                .file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with('.'))
            {
                out.push(path);
            }
        }
    }

    /// Every dump of the command-line tests and every saved fuzz input, through the target.
    #[test]
    fn the_dumps_and_the_saved_inputs_hold_the_properties() {
        let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
        let mut inputs = Vec::new();
        files(&root.join("tests/data/dumps"), &mut inputs);
        files(&root.join("../../fuzz/regressions/doctor"), &mut inputs);
        if inputs.is_empty() {
            eprintln!("no dumps and no saved fuzz inputs here (a packaged crate): skipped");
            return;
        }
        for input in &inputs {
            super::doctor(&std::fs::read(input).expect("read"));
        }
        eprintln!("{} inputs", inputs.len());
    }

    /// A token written into a condition message is masked where the doctor shows it.
    #[test]
    fn a_token_in_a_condition_message_is_masked() {
        let dump = br#"{"kind": "List", "items": [
          {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "demo-token", "namespace": "ns"},
           "data": {"value": "c2VjcmV0LXRva2VuLTEyMzQ="}},
          {"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "Cluster", "metadata": {"name": "demo", "namespace": "ns"},
           "spec": {"controlPlaneRef": {"apiGroup": "controlplane.cluster.x-k8s.io", "kind": "RKE2ControlPlane", "name": "demo"}},
           "status": {"conditions": [{"type": "InfrastructureReady", "status": "False", "reason": "X",
             "message": "token secret-token-1234 refused"}]}}]}"#;
        super::doctor(dump);
        let mut inventory = crate::Inventory::new(Default::default());
        inventory.read("dump", dump).expect("reads");
        let d = crate::diagnose(&inventory, &crate::DoctorOptions::default());
        let seen = &d.clusters[0].links[0].seen;
        assert!(seen.contains("token REDACTED refused"), "{seen}");
        // Nor does the inventory's `Debug`, which keeps the token to mask it.
        let debug = format!("{inventory:?} {d:?}");
        assert!(!debug.contains("secret-token-1234"), "{debug}");
        assert!(debug.contains("<1 secret value(s)>"), "{debug}");
    }
}
