//! Answers the lookups CAPRKE2 makes while rendering (Secrets, ConfigMaps) from the input, and
//! stands in a placeholder, with a finding that names it, for what the input does not hold.

use rand::rngs::StdRng;
use rand::{Rng as _, SeedableRng as _};
use rke2_payload::{Check, Finding};
use sha2::Digest as _;

use crate::manifests::{Manifests, Ref};

/// The lookups of one render, and what they noticed.
pub(crate) struct Resolver<'m> {
    pub(crate) manifests: &'m Manifests,
    /// The size of every placeholder, when the user set one (else a realistic size per kind).
    pub(crate) placeholder_bytes: Option<usize>,
    pub(crate) findings: Vec<Finding>,
    /// What was generated rather than read (for the preview annotation).
    pub(crate) generated: Vec<String>,
}

impl Resolver<'_> {
    fn finding(&mut self, check: Check, message: String) {
        if !self
            .findings
            .iter()
            .any(|f| f.check == check && f.message == message)
        {
            self.findings.push(Finding::new(check, message));
        }
    }

    pub(crate) fn note_generated(&mut self, what: &str) {
        if !self.generated.iter().any(|g| g == what) {
            self.generated.push(what.to_owned());
        }
    }

    /// Text that looks like what it stands in for (base64 lines, which compress as PEM does),
    /// of the user's size or `realistic` bytes. Its bytes are a function of `what` (the object
    /// and key it stands in for) and its size alone: every Secret that reads that key gets the
    /// same placeholder, and every render of the input too, whatever the seed.
    fn placeholder(&self, what: &str, realistic: usize) -> Vec<u8> {
        let len = self
            .placeholder_bytes
            .unwrap_or(realistic)
            .min(super::MAX_PLACEHOLDER);
        let mut hasher = sha2::Sha256::new();
        hasher.update(what.as_bytes());
        hasher.update(len.to_le_bytes());
        let mut seed = [0u8; 32];
        seed.copy_from_slice(&hasher.finalize());
        let mut raw = vec![0u8; len];
        StdRng::from_seed(seed).fill_bytes(&mut raw);
        let text = rke2_payload::to_base64(&raw);
        let mut out = Vec::with_capacity(len + len / 64 + 1);
        for line in text.as_bytes().chunks(64) {
            out.extend_from_slice(line);
            out.push(b'\n');
        }
        out.truncate(len);
        if len > 0 {
            out[len - 1] = b'\n';
        }
        out
    }

    fn missing(&mut self, owner: &str, field: &str, kind: &str, r: &Ref, key: &str, len: usize) {
        let len = self
            .placeholder_bytes
            .unwrap_or(len)
            .min(super::MAX_PLACEHOLDER);
        if kind == "Secret"
            && let Some(maker) = self.made_by_capz(r, key)
        {
            // Never in the manifests, and there when CAPRKE2 reads it: a note, not a warning.
            let message = format!(
                "{owner}: {field} names {kind} {r}, which CAPZ creates at run time for {maker} (its azure.json controllers); a placeholder of {len} bytes stands in for its key {}",
                rke2_payload::terminal_safe(key)
            );
            if !self.findings.iter().any(|f| f.message == message) {
                self.findings.push(
                    Finding::new(Check::ManifestMissingReference, message)
                        .with_severity(rke2_payload::Severity::Info),
                );
            }
        } else {
            self.finding(
                Check::ManifestMissingReference,
                format!(
                    "{owner}: {field} names {kind} {r}, which is not in the input; a placeholder of {len} bytes stands in for its key {}",
                    rke2_payload::terminal_safe(key)
                ),
            );
        }
        self.note_generated(&format!(
            "placeholders for objects not in the input ({kind} {r})"
        ));
    }

    /// The object a Secret is CAPZ's `<name>-azure-json` of, when the input holds it: CAPZ's
    /// azure.json controllers write that Secret, with the keys `control-plane-azure.json` and
    /// `worker-node-azure.json`, for every AzureMachineTemplate, AzureMachine and
    /// AzureMachinePool (cluster-api-provider-azure `controllers/helpers.go`
    /// `GetCloudProviderSecret`).
    fn made_by_capz(&self, r: &Ref, key: &str) -> Option<String> {
        let base = r.name.strip_suffix("-azure-json")?;
        if !matches!(key, "control-plane-azure.json" | "worker-node-azure.json") {
            return None;
        }
        self.manifests
            .objects
            .iter()
            .find(|o| {
                matches!(
                    o.kind(),
                    "AzureMachineTemplate" | "AzureMachine" | "AzureMachinePool"
                ) && o.name() == base
                    && o.namespace() == r.namespace
            })
            .map(|o| o.title())
    }

    fn missing_key(&mut self, owner: &str, field: &str, kind: &str, r: &Ref, key: &str) {
        self.finding(
            Check::ManifestMissingKey,
            format!(
                "{owner}: {field} names {kind} {r}, which has no key {}; CAPRKE2 fails to render this Machine's bootstrap data",
                rke2_payload::terminal_safe(key)
            ),
        );
    }

    /// The bytes of a Secret's key CAPRKE2 requires (a placeholder, and a finding, when it is
    /// not there).
    pub(crate) fn secret_bytes(
        &mut self,
        owner: &str,
        r: &Ref,
        key: &str,
        field: &str,
        realistic: usize,
    ) -> Vec<u8> {
        match self.manifests.secret_key(r, key) {
            Ok(Some(bytes)) => bytes,
            Ok(None) => {
                self.missing_key(owner, field, "Secret", r, key);
                self.placeholder(&format!("Secret {r} {key}"), realistic)
            }
            Err(_) => {
                self.missing(owner, field, "Secret", r, key, realistic);
                self.placeholder(&format!("Secret {r} {key}"), realistic)
            }
        }
    }

    pub(crate) fn secret_text(
        &mut self,
        owner: &str,
        r: &Ref,
        key: &str,
        field: &str,
        realistic: usize,
    ) -> String {
        String::from_utf8_lossy(&self.secret_bytes(owner, r, key, field, realistic)).into_owned()
    }

    /// A key CAPRKE2 reads only when present (`None` when the Secret is there without it; a
    /// placeholder when the Secret is not there at all, as the common case has it).
    pub(crate) fn optional_secret_text(&mut self, r: &Ref, key: &str) -> Option<String> {
        match self.manifests.secret_key(r, key) {
            Ok(bytes) => bytes.map(|b| String::from_utf8_lossy(&b).into_owned()),
            Err(_) => Some(
                String::from_utf8_lossy(&self.placeholder(&format!("Secret {r} {key}"), 1100))
                    .into_owned(),
            ),
        }
    }

    pub(crate) fn config_map(
        &mut self,
        owner: &str,
        r: &Ref,
        key: &str,
        field: &str,
        realistic: usize,
    ) -> String {
        match self.manifests.config_map_key(r, key) {
            Ok(Some(text)) => text,
            Ok(None) => {
                self.missing_key(owner, field, "ConfigMap", r, key);
                let what = format!("ConfigMap {r} {key}");
                String::from_utf8_lossy(&self.placeholder(&what, realistic)).into_owned()
            }
            Err(_) => {
                self.missing(owner, field, "ConfigMap", r, key, realistic);
                let what = format!("ConfigMap {r} {key}");
                String::from_utf8_lossy(&self.placeholder(&what, realistic)).into_owned()
            }
        }
    }

    /// Every key of the manifests ConfigMap (one placeholder manifest when it is not there).
    pub(crate) fn manifests_config_map(&mut self, owner: &str, r: &Ref) -> Vec<(String, String)> {
        match self.manifests.config_map_data(r) {
            Ok(data) => data,
            Err(_) => {
                let field = "spec.manifestsConfigMapReference";
                self.missing(owner, field, "ConfigMap", r, "(every key)", 2000);
                let what = format!("ConfigMap {r}");
                let text = String::from_utf8_lossy(&self.placeholder(&what, 2000)).into_owned();
                vec![("placeholder.yaml".to_owned(), text)]
            }
        }
    }

    /// A registry TLS file (`tls.crt`, `tls.key`, `ca.crt`): `None` when the Secret lacks it.
    pub(crate) fn registry_tls(&mut self, owner: &str, r: &Ref, key: &str) -> Option<String> {
        let field = "spec.privateRegistriesConfig.configs.*.tls.tlsConfigSecret";
        match self.manifests.secret_key(r, key) {
            Ok(bytes) => bytes.map(|b| String::from_utf8_lossy(&b).into_owned()),
            Err(_) if key == "ca.crt" => None,
            Err(_) => {
                let len = if key == "tls.key" { 230 } else { 600 };
                self.missing(owner, field, "Secret", r, key, len);
                let what = format!("Secret {r} {key}");
                Some(String::from_utf8_lossy(&self.placeholder(&what, len)).into_owned())
            }
        }
    }

    /// The `auth` entries of a registry (`(value, registries.yaml key)`); `None` when the Secret
    /// holds neither `username` and `password` nor `identity-token`, on which CAPRKE2 gives up on
    /// the registries without an error and writes them empty.
    pub(crate) fn registry_auth(
        &mut self,
        owner: &str,
        r: &Ref,
    ) -> Option<Vec<(String, &'static str)>> {
        let field = "spec.privateRegistriesConfig.configs.*.authSecret";
        let get = |m: &Manifests, key: &str| {
            m.secret_key(r, key)
                .map(|b| b.map(|b| String::from_utf8_lossy(&b).into_owned()))
        };
        let (user, password, token) = (
            get(self.manifests, "username"),
            get(self.manifests, "password"),
            get(self.manifests, "identity-token"),
        );
        let (Ok(user), Ok(password), Ok(token)) = (user, password, token) else {
            self.missing(owner, field, "Secret", r, "username, password", 40);
            let user =
                String::from_utf8_lossy(&self.placeholder(&format!("Secret {r} username"), 12))
                    .trim()
                    .to_owned();
            let password =
                String::from_utf8_lossy(&self.placeholder(&format!("Secret {r} password"), 40))
                    .trim()
                    .to_owned();
            return Some(vec![(password, "password"), (user, "username")]);
        };
        let mut out = Vec::new();
        if let (Some(u), Some(p)) = (user, password) {
            out.push((p, "password"));
            out.push((u, "username"));
        }
        if let Some(t) = token {
            out.push((t, "identitytoken"));
        }
        if out.is_empty() {
            self.finding(
                Check::ManifestMissingKey,
                format!(
                    "{owner}: {field} names Secret {r}, which has neither username and password nor identity-token; CAPRKE2 then writes registries.yaml with no mirrors and no configs (and none of their TLS files), without an error"
                ),
            );
            return None;
        }
        Some(out)
    }

    pub(crate) fn only_one_registry_config(&mut self, owner: &str, count: usize) {
        self.finding(
            Check::ManifestRegistryConfigsDropped,
            format!(
                "{owner}: spec.privateRegistriesConfig.configs has {count} registries, but CAPRKE2 writes only one of them (a random one) into registries.yaml; the preview keeps the last by name"
            ),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_placeholder_is_a_function_of_what_it_stands_for_and_its_size() {
        let m = Manifests::default();
        let resolver = Resolver {
            manifests: &m,
            placeholder_bytes: None,
            findings: Vec::new(),
            generated: Vec::new(),
        };
        let a = resolver.placeholder("Secret ns/s key", 300);
        assert_eq!(a.len(), 300);
        assert!(a.ends_with(b"\n"));
        assert_eq!(a, resolver.placeholder("Secret ns/s key", 300));
        assert_ne!(a, resolver.placeholder("Secret ns/s other", 300));
        assert_ne!(
            a[..200],
            resolver.placeholder("Secret ns/s key", 200)[..200]
        );
        let sized = Resolver {
            placeholder_bytes: Some(10),
            ..resolver
        };
        assert_eq!(sized.placeholder("Secret ns/s key", 300).len(), 10);
    }
}
