//! The names the controllers give the objects they make, and so the bootstrap Secrets: a
//! Secret bears its RKE2Config's name (CAPRKE2 v0.25.0
//! `bootstrap/internal/controllers/rke2config_controller.go:1042`).
//!
//! - A control plane's RKE2Config: `names.SimpleNameGenerator.GenerateName(rcp.Name + "-")`
//!   (`controlplane/internal/controllers/scale.go:436`), the base cut to 58 bytes and five
//!   random characters added (`k8s.io/apiserver/pkg/storage/names`).
//! - A MachineDeployment's worker: the MachineSet is `computeNewMachineSetName(md.Name + "-")`,
//!   the same cut (Cluster API v1.14.0
//!   `core/reconcilers/machinedeployment/machinedeployment_sync.go:102-108`); the Machine is the
//!   MachineSet's `machineNaming.template` (default `{{ .machineSet.name }}-{{ .random }}`,
//!   `core/reconcilers/machineset/machineset_controller.go:1225-1234`) through
//!   `internal/topology/names`' template generator, which cuts a name over 63 bytes to 58 and
//!   adds five new random characters (`internal/topology/names/names.go:145-150`); the
//!   RKE2Config cloned for it takes the Machine's name (`machineset_controller.go:1957`,
//!   `controllers/external/util.go:209`).
//!
//! The random parts are not random here: each is a function of the object it names and what
//! for ([`suffix`]), so that two renders of one input, and `render` and `lint` of it, give the
//! same names.

use rand::SeedableRng as _;
use rand::rngs::StdRng;
use serde_json::json;
use sha2::Digest as _;

use crate::manifests::{Object, str_at};

/// The longest name the generators make (a DNS label).
const MAX_NAME: usize = 63;
/// How many random characters they add.
const RANDOM_LENGTH: usize = 5;
/// How long a base they keep before the random characters.
const MAX_BASE: usize = MAX_NAME - RANDOM_LENGTH;
/// Cluster API's default Machine name template of a MachineSet.
const DEFAULT_MACHINE_TEMPLATE: &str = "{{ .machineSet.name }}-{{ .random }}";

/// Five characters of Kubernetes' random alphabet, a function of `parts` alone (the object a
/// name is generated for, and what for).
pub(super) fn suffix(parts: &[&str]) -> String {
    let mut hasher = sha2::Sha256::new();
    for part in parts {
        hasher.update(part.as_bytes());
        hasher.update([0]);
    }
    let digest = hasher.finalize();
    let mut seed = [0u8; 32];
    seed.copy_from_slice(&digest);
    super::random_suffix(&mut StdRng::from_seed(seed))
}

/// `SimpleNameGenerator.GenerateName(base)`: `base` cut to 58 bytes (at a character boundary:
/// names are ASCII when the API server takes them), then `random`.
pub(super) fn generate_name(base: &str, random: &str) -> String {
    let mut name = base[..char_floor(base, MAX_BASE)].to_owned();
    name.push_str(random);
    name
}

/// A generated name over 63 bytes cut to 58 and given new random characters, as the
/// template generator does.
fn cut_long(name: String, random: &str) -> String {
    if name.len() <= MAX_NAME {
        return name;
    }
    generate_name(&name, random)
}

/// The RKE2Config (and bootstrap Secret) name of a control plane Machine; `purpose` tells the
/// first control plane from a joining one.
pub(super) fn control_plane_config(rcp: &Object, purpose: &str) -> String {
    let random = suffix(&[rcp.namespace(), rcp.kind(), rcp.name(), purpose]);
    generate_name(&format!("{}-", rcp.name()), &random)
}

/// The RKE2Config (and bootstrap Secret) name of a worker of a MachineDeployment (or a
/// MachinePool that names a template): its MachineSet's name, then the Machine's by the naming
/// template. `Err` says why the template does not render (then Cluster API makes no Machine).
pub(super) fn worker_config(w: &Object, cluster: &str) -> Result<String, String> {
    let id = |what: &str| suffix(&[w.namespace(), w.kind(), w.name(), what]);
    let machine_set = generate_name(&format!("{}-", w.name()), &id("machineset"));
    let random = id("machine");
    let template = str_at(&w.value, &["spec", "machineNaming", "template"])
        .or_else(|| str_at(&w.value, &["spec", "machineNamingStrategy", "template"]))
        .filter(|t| !t.is_empty());
    let default = format!("{machine_set}-{random}");
    let name = match template {
        None | Some(DEFAULT_MACHINE_TEMPLATE) => default,
        Some(template) => {
            let data = json!({
                "cluster": {"name": cluster},
                "random": random,
                "machineSet": {"name": machine_set},
            });
            payload_gotmpl::render_name(template, &data).map_err(|e| e.to_string())?
        }
    };
    Ok(cut_long(name, &id("machine-cut")))
}

/// The largest character boundary of `s` at or below `max`.
fn char_floor(s: &str, max: usize) -> usize {
    let mut i = max.min(s.len());
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// An object of the input, for the tests.
#[cfg(test)]
fn object(kind: &str, name: &str, spec: serde_json::Value) -> Object {
    Object::of_value(
        json!({"kind": kind, "metadata": {"name": name, "namespace": "ns"}, "spec": spec}),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn alphabet(s: &str) -> bool {
        s.len() == RANDOM_LENGTH && s.bytes().all(|b| super::super::NAME_ALPHABET.contains(&b))
    }

    #[test]
    fn a_short_control_plane_name_keeps_its_dash_and_gets_five_characters() {
        let rcp = object("RKE2ControlPlane", "demo-cp", json!({}));
        let init = control_plane_config(&rcp, "init");
        let join = control_plane_config(&rcp, "join");
        assert!(
            init.starts_with("demo-cp-") && alphabet(&init[8..]),
            "{init}"
        );
        assert_ne!(init, join, "two Machines, two names");
        // A function of the object: the same every time, another for another namespace.
        assert_eq!(init, control_plane_config(&rcp, "init"));
        let mut other = rcp.clone();
        other.value["metadata"]["namespace"] = json!("elsewhere");
        assert_ne!(init, control_plane_config(&other, "init"));
    }

    #[test]
    fn long_names_are_cut_to_58_bytes_and_five_characters_as_the_generators_cut_them() {
        // 60 characters: `name + "-"` is 61, cut to 58 (the dash goes), five added: 63.
        let long = "a".repeat(60);
        let rcp = object("RKE2ControlPlane", &long, json!({}));
        let init = control_plane_config(&rcp, "init");
        assert_eq!(init.len(), 63, "{init}");
        assert_eq!(&init[..58], &long[..58]);
        assert!(alphabet(&init[58..]), "{init}");
        // A MachineDeployment of 57 characters: the MachineSet is `md-` + 5 = 63, the Machine
        // `ms-` + 5 = 69, cut to the MachineSet's first 58 and five new characters.
        let md_name = format!("{}-md", "c".repeat(54));
        let md = object("MachineDeployment", &md_name, json!({}));
        let worker = worker_config(&md, "c").expect("the default template");
        assert_eq!(worker.len(), 63, "{worker}");
        assert_eq!(&worker[..58], &format!("{md_name}-")[..58]);
        assert!(alphabet(&worker[58..]), "{worker}");
        // A short one keeps both parts: `md-xxxxx-yyyyy`.
        let md = object("MachineDeployment", "md", json!({}));
        let worker = worker_config(&md, "c").expect("the default template");
        assert_eq!(worker.len(), 2 + 1 + 5 + 1 + 5, "{worker}");
        assert!(
            alphabet(&worker[3..8]) && alphabet(&worker[9..]),
            "{worker}"
        );
    }

    #[test]
    fn a_machine_naming_template_names_the_worker() {
        let md = object(
            "MachineDeployment",
            "md",
            json!({"machineNaming": {"template": "{{ .cluster.name }}-w-{{ .random }}"}}),
        );
        let worker = worker_config(&md, "prod").expect("renders");
        assert!(
            worker.starts_with("prod-w-") && alphabet(&worker[7..]),
            "{worker}"
        );
        // v1beta1's field.
        let md = object(
            "MachineDeployment",
            "md",
            json!({"machineNamingStrategy": {"template": "x-{{ .machineSet.name }}-{{ .random }}"}}),
        );
        assert!(
            worker_config(&md, "prod")
                .expect("renders")
                .starts_with("x-md-")
        );
        let md = object(
            "MachineDeployment",
            "md",
            json!({"machineNaming": {"template": "{{ .nope }}-{{ .random }}"}}),
        );
        let why = worker_config(&md, "prod").expect_err("a missing key");
        assert!(why.contains("nope"), "{why}");
    }
}
