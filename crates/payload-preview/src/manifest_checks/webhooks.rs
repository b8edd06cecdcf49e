//! `manifest-webhook-refuses`: what CAPRKE2's validating admission webhooks refuse when an object
//! is created, for the checks that are pure functions of the one object (CAPRKE2 v0.25.0):
//!
//! - `bootstrap/api/v1beta2/rke2config_webhook.go:174-240` (`ValidateRKE2ConfigSpec`, run for an
//!   RKE2Config, an RKE2ControlPlane and an RKE2ControlPlaneTemplate; an RKE2ConfigTemplate's
//!   webhook checks nothing): a private registry config with neither `authSecret` nor `tls`
//!   (:193-209); with `agentConfig.format: ignition`, a file of encoding `gzip` or
//!   `gzip+base64` (:226-236).
//! - `controlplane/api/v1beta2/rke2controlplane_webhook.go:199-209` (`validateCNI`, also the
//!   template's): `serverConfig.cniMultusEnable` without `serverConfig.cni`; `:262-290`
//!   (`validateSpec`): `replicas` of 0 or less (the defaulter sets 1 when it is absent, :90-93).
//!
//! The webhooks are registered on v1beta2, the hub: a v1beta1 object is converted first, and its
//! fields of these checks have the same names and places. The other create checks are elsewhere:
//! the registration address (`manifest-registration-address-missing`), the schema's bounds
//! (`manifest-schema`: the deletion timeouts have `minimum: 0` there).
//!
//! An object a ClusterClass expansion made is not judged here: its class's templates are, as
//! they are written.

use payload_kube_schema::PathSeg;
use rke2_payload::{Check, Finding};
use serde_json::Value;

use crate::manifests::{Manifests, Object, at, flag, string};

/// Every refusal of CAPRKE2's webhooks on the objects of `m`.
pub(super) fn check(m: &Manifests, out: &mut Vec<Finding>) {
    for o in &m.objects {
        one(o, out);
    }
}

/// Whether CAPRKE2's webhooks refuse `o`: it is never created, so nothing is made from it.
/// (Besides the checks here, an RKE2ControlPlane with `registrationMethod: address` and no
/// address, `validateRegistrationMethod`, reported as `manifest-registration-address-missing`.)
pub(crate) fn refuses(o: &Object) -> bool {
    let mut out = Vec::new();
    one(o, &mut out);
    let no_address = o.made_for.is_none()
        && o.kind() == "RKE2ControlPlane"
        && string(&o.value, &["spec", "registrationMethod"]) == "address"
        && string(&o.value, &["spec", "registrationAddress"]).is_empty();
    !out.is_empty() || no_address
}

/// The refusals of one object.
fn one(o: &Object, out: &mut Vec<Finding>) {
    if o.made_for.is_some() {
        return;
    }
    let spec: &[&str] = match o.kind() {
        "RKE2Config" | "RKE2ControlPlane" => &["spec"],
        "RKE2ControlPlaneTemplate" => &["spec", "template", "spec"],
        _ => return,
    };
    config_spec(o, spec, out);
    if o.kind() != "RKE2Config" {
        cni(o, spec, out);
    }
    if o.kind() == "RKE2ControlPlane" {
        replicas(o, out);
    }
}

/// A path of keys as schema path steps, for the finding's line.
fn steps(path: &[&str]) -> Vec<PathSeg> {
    path.iter().map(|k| PathSeg::Key((*k).to_owned())).collect()
}

/// One refusal at `path` of `o`.
fn refused(o: &Object, path: Vec<PathSeg>, why: &str, out: &mut Vec<Finding>) {
    out.push(
        Finding::new(
            Check::ManifestWebhookRefuses,
            format!(
                "{}: {}: {why}, so CAPRKE2's admission webhook refuses the object",
                o.title(),
                rke2_payload::terminal_safe(&payload_kube_schema::pointer(&path))
            ),
        )
        .in_manifest(o.field_site(&path)),
    );
}

/// `ValidateRKE2ConfigSpec`: registry configs and Ignition's file encodings.
fn config_spec(o: &Object, spec: &[&str], out: &mut Vec<Finding>) {
    let configs = [spec, &["privateRegistriesConfig", "configs"]].concat();
    if let Some(Value::Object(registries)) = at(&o.value, &configs) {
        for (registry, config) in registries {
            let set = |key: &str| match config.get(key) {
                Some(Value::Object(fields)) => !fields.is_empty(),
                Some(Value::Null) | None => false,
                Some(_) => true,
            };
            if !set("authSecret") && !set("tls") {
                let mut path = steps(&configs);
                path.push(PathSeg::Key(registry.clone()));
                refused(
                    o,
                    path,
                    "a private registry config needs credentials (authSecret), TLS settings or both",
                    out,
                );
            }
        }
    }
    let format = [spec, &["agentConfig", "format"]].concat();
    if string(&o.value, &format) == "ignition" {
        let files = [spec, &["files"]].concat();
        for (i, file) in at(&o.value, &files)
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .enumerate()
        {
            let encoding = file.get("encoding").and_then(Value::as_str).unwrap_or("");
            if matches!(encoding, "gzip" | "gzip+base64") {
                let mut path = steps(&files);
                path.extend([PathSeg::Index(i), PathSeg::Key("encoding".to_owned())]);
                refused(
                    o,
                    path,
                    "a gzip encoding cannot be used with the Ignition format",
                    out,
                );
            }
        }
    }
}

/// `validateCNI`: Multus needs a CNI to chain.
fn cni(o: &Object, spec: &[&str], out: &mut Vec<Finding>) {
    let multus = [spec, &["serverConfig", "cniMultusEnable"]].concat();
    let cni = [spec, &["serverConfig", "cni"]].concat();
    if flag(&o.value, &multus) && string(&o.value, &cni).is_empty() {
        refused(
            o,
            steps(&cni),
            "must be set when serverConfig.cniMultusEnable is true",
            out,
        );
    }
}

/// `validateSpec`: at least one replica (absent is defaulted to 1).
fn replicas(o: &Object, out: &mut Vec<Finding>) {
    if let Some(n) = o.get(&["spec", "replicas"]).and_then(Value::as_i64)
        && n <= 0
    {
        refused(
            o,
            steps(&["spec", "replicas"]),
            "cannot be less than or equal to 0",
            out,
        );
    }
}

#[cfg(test)]
mod tests {
    use rke2_payload::Check;

    fn refusals(yaml: &str) -> Vec<String> {
        let m = crate::manifests::Manifests::of_text(yaml);
        let mut out = Vec::new();
        super::check(&m, &mut out);
        assert!(out.iter().all(|f| f.check == Check::ManifestWebhookRefuses));
        out.into_iter().map(|f| f.message).collect()
    }

    const RCP: &str = "apiVersion: controlplane.cluster.x-k8s.io/v1beta2\nkind: RKE2ControlPlane\nmetadata: {name: cp, namespace: capi}\nspec:\n  replicas: 3\n  version: v1.32.5+rke2r1\n";

    #[test]
    fn what_the_webhooks_refuse_on_create() {
        assert!(refusals(RCP).is_empty());
        let zero = refusals(&RCP.replace("replicas: 3", "replicas: 0"));
        assert_eq!(
            zero,
            [
                "RKE2ControlPlane capi/cp: spec.replicas: cannot be less than or equal to 0, so CAPRKE2's admission webhook refuses the object"
            ]
        );
        let multus = refusals(&format!("{RCP}  serverConfig: {{cniMultusEnable: true}}\n"));
        assert!(
            multus[0].contains(
                "spec.serverConfig.cni: must be set when serverConfig.cniMultusEnable is true"
            ),
            "{multus:?}"
        );
        assert!(
            refusals(&format!(
                "{RCP}  serverConfig: {{cniMultusEnable: true, cni: calico}}\n"
            ))
            .is_empty()
        );
        let registry = refusals(&format!(
            "{RCP}  privateRegistriesConfig:\n    configs:\n      reg.example:\n        tls: {{}}\n      ok.example:\n        authSecret: {{name: creds}}\n"
        ));
        assert_eq!(registry.len(), 1, "{registry:?}");
        assert!(registry[0].contains(r#"spec.privateRegistriesConfig.configs["reg.example"]: a private registry config needs credentials"#), "{registry:?}");
        let gzip = refusals(&format!(
            "{RCP}  agentConfig: {{format: ignition}}\n  files:\n  - {{path: /a, content: x}}\n  - {{path: /b, content: x, encoding: gzip+base64}}\n"
        ));
        assert!(
            gzip[0].contains(
                "spec.files[1].encoding: a gzip encoding cannot be used with the Ignition format"
            ),
            "{gzip:?}"
        );
        // cloud-config takes gzip files.
        assert!(
            refusals(&format!(
                "{RCP}  files:\n  - {{path: /b, content: x, encoding: gzip+base64}}\n"
            ))
            .is_empty()
        );
    }

    #[test]
    fn an_rke2_config_template_is_not_checked_and_a_config_has_no_cni_check() {
        let template = "apiVersion: bootstrap.cluster.x-k8s.io/v1beta2\nkind: RKE2ConfigTemplate\nmetadata: {name: t, namespace: capi}\nspec:\n  template:\n    spec:\n      privateRegistriesConfig: {configs: {r: {}}}\n";
        assert!(refusals(template).is_empty());
        let config = "apiVersion: bootstrap.cluster.x-k8s.io/v1beta2\nkind: RKE2Config\nmetadata: {name: c, namespace: capi}\nspec:\n  privateRegistriesConfig: {configs: {r: {}}}\n";
        assert_eq!(refusals(config).len(), 1);
    }
}
