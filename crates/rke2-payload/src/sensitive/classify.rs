//! Which files of a payload hold secrets, and the secret values themselves (for redaction).

use serde_json::Value;

use super::value::SecretValue;

/// What in a file is secret, and the secret values found in it.
#[derive(Debug, Clone, Default)]
pub(crate) struct Sensitive {
    /// A short description of what is secret (`private key`, `registry credentials`, …).
    pub(crate) what: Option<&'static str>,
    /// Secret values found, to be hidden from every other output.
    pub(crate) values: Vec<SecretValue>,
}

/// Classifies one file a payload writes: its path on the node and its content, when inline.
pub(crate) fn classify(path: &str, content: Option<&[u8]>) -> Sensitive {
    let Some(bytes) = content else {
        return Sensitive::default();
    };
    let name = path.rsplit('/').next().unwrap_or("");
    if memchr::memmem::find(bytes, b"PRIVATE KEY-----").is_some() {
        return Sensitive {
            what: Some("private key"),
            values: Vec::new(),
        };
    }
    match name {
        "registries.yaml" => {
            let values = yaml_values(
                &String::from_utf8_lossy(bytes),
                &["password", "identitytoken", "auth"],
            );
            Sensitive {
                what: (!values.is_empty()).then_some("registry credentials"),
                values,
            }
        }
        "encryption-config.json" => {
            let values = json_values(&String::from_utf8_lossy(bytes), &["secret"]);
            Sensitive {
                what: Some("secrets-encryption keys"),
                values,
            }
        }
        "config.yaml" if path.starts_with("/etc/rancher/rke2/") => Sensitive {
            what: Some("join token"),
            values: Vec::new(),
        },
        "cloud-provider-config" | "credential-config.yaml" => Sensitive {
            what: Some("cloud credentials (may hold passwords)"),
            values: yaml_values(
                &String::from_utf8_lossy(bytes),
                &["password", "secret", "token", "client-secret", "key"],
            ),
        },
        _ if name.ends_with(".key") => Sensitive {
            what: Some("private key"),
            values: Vec::new(),
        },
        _ => Sensitive::default(),
    }
}

/// Values of the given keys anywhere in a YAML document.
fn yaml_values(text: &str, keys: &[&str]) -> Vec<SecretValue> {
    // Nothing to find unless a key is in the text (keys match case-insensitively).
    let lower = text.to_ascii_lowercase();
    if !keys.iter().any(|k| lower.contains(k)) {
        return Vec::new();
    }
    let mut options = serde_saphyr::Options::default();
    options.with_snippet = false;
    match serde_saphyr::from_str_with_options::<Value>(text, options) {
        Ok(value) => collect(&value, keys),
        Err(_) => Vec::new(),
    }
}

/// Values of the given keys anywhere in a JSON document.
fn json_values(text: &str, keys: &[&str]) -> Vec<SecretValue> {
    serde_json::from_str::<Value>(text)
        .map(|v| collect(&v, keys))
        .unwrap_or_default()
}

fn collect(value: &Value, keys: &[&str]) -> Vec<SecretValue> {
    let mut out = Vec::new();
    let mut stack = vec![value];
    while let Some(v) = stack.pop() {
        match v {
            Value::Object(map) => {
                for (k, v) in map {
                    match v {
                        Value::String(s) if keys.contains(&k.to_ascii_lowercase().as_str()) => {
                            out.push(SecretValue::new(s.clone()));
                        }
                        _ => stack.push(v),
                    }
                }
            }
            Value::Array(items) => stack.extend(items),
            _ => {}
        }
    }
    out
}

/// Whether a config key name suggests a secret value.
pub(crate) fn secret_key_name(key: &str) -> bool {
    let key = key.to_ascii_lowercase();
    ["token", "password", "secret", "access-key", "private"]
        .iter()
        .any(|w| key.contains(w))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file<'a>(path: &'a str, text: &'a str) -> (&'a str, Option<&'a [u8]>) {
        (path, Some(text.as_bytes()))
    }

    fn classify_pair((path, content): (&str, Option<&[u8]>)) -> Sensitive {
        classify(path, content)
    }

    #[test]
    fn registry_credentials_and_encryption_keys() {
        let reg = classify_pair(file(
            "/etc/rancher/rke2/registries.yaml",
            "configs:\n  r.example:5000:\n    auth:\n      password: s3cr3t-pass\n      username: robot\nmirrors: {}\n",
        ));
        assert_eq!(reg.what, Some("registry credentials"));
        assert_eq!(reg.values[0].expose(), "s3cr3t-pass");
        let plain = classify_pair(file(
            "/etc/rancher/rke2/registries.yaml",
            "configs: null\nmirrors: {}\n",
        ));
        assert_eq!(plain.what, None);
        let enc = classify_pair(file(
            "/var/lib/rancher/rke2/server/cred/encryption-config.json",
            r#"{"resources":[{"providers":[{"secretbox":{"keys":[{"name":"k","secret":"dGVzdF9rZXk="}]}}]}]}"#,
        ));
        assert_eq!(enc.values[0].expose(), "dGVzdF9rZXk=");
        assert_eq!(
            classify_pair(file("/x/tls.key", "whatever")).what,
            Some("private key")
        );
        assert!(secret_key_name("etcd-s3-secret-key"));
        assert!(!secret_key_name("cni"));
    }
}
