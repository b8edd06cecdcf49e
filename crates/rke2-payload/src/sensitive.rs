//! Which files of a payload hold secrets, and the secret values themselves (for redaction).

use serde_json::Value;

use crate::document::File;
use crate::secret::SecretString;

/// What in a file is secret, and the secret values found in it.
#[derive(Debug, Clone, Default)]
pub struct Sensitive {
    /// A short description of what is secret (`private key`, `registry credentials`, …).
    pub what: Option<&'static str>,
    /// Secret values found, to be hidden from every other output.
    pub values: Vec<SecretString>,
}

/// Classifies one file.
pub fn classify(file: &File) -> Sensitive {
    let Some(bytes) = file.bytes() else {
        return Sensitive::default();
    };
    let name = file.path.rsplit('/').next().unwrap_or("");
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
        "config.yaml" if file.path.starts_with("/etc/rancher/rke2/") => Sensitive {
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
fn yaml_values(text: &str, keys: &[&str]) -> Vec<SecretString> {
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
fn json_values(text: &str, keys: &[&str]) -> Vec<SecretString> {
    serde_json::from_str::<Value>(text)
        .map(|v| collect(&v, keys))
        .unwrap_or_default()
}

fn collect(value: &Value, keys: &[&str]) -> Vec<SecretString> {
    let mut out = Vec::new();
    let mut stack = vec![value];
    while let Some(v) = stack.pop() {
        match v {
            Value::Object(map) => {
                for (k, v) in map {
                    match v {
                        Value::String(s) if keys.contains(&k.to_ascii_lowercase().as_str()) => {
                            out.push(SecretString::new(s.clone()));
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
pub fn secret_key_name(key: &str) -> bool {
    let key = key.to_ascii_lowercase();
    ["token", "password", "secret", "access-key", "private"]
        .iter()
        .any(|w| key.contains(w))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::document::Content;

    fn file(path: &str, text: &str) -> File {
        File {
            path: path.into(),
            mode: None,
            owner: None,
            encoding: None,
            content: Content::Inline(text.as_bytes().to_vec()),
            append: false,
        }
    }

    #[test]
    fn registry_credentials_and_encryption_keys() {
        let reg = classify(&file(
            "/etc/rancher/rke2/registries.yaml",
            "configs:\n  r.example:5000:\n    auth:\n      password: s3cr3t-pass\n      username: robot\nmirrors: {}\n",
        ));
        assert_eq!(reg.what, Some("registry credentials"));
        assert_eq!(reg.values[0].expose(), "s3cr3t-pass");
        let plain = classify(&file(
            "/etc/rancher/rke2/registries.yaml",
            "configs: null\nmirrors: {}\n",
        ));
        assert_eq!(plain.what, None);
        let enc = classify(&file(
            "/var/lib/rancher/rke2/server/cred/encryption-config.json",
            r#"{"resources":[{"providers":[{"secretbox":{"keys":[{"name":"k","secret":"dGVzdF9rZXk="}]}}]}]}"#,
        ));
        assert_eq!(enc.values[0].expose(), "dGVzdF9rZXk=");
        assert_eq!(
            classify(&file("/x/tls.key", "whatever")).what,
            Some("private key")
        );
        assert!(secret_key_name("etcd-s3-secret-key"));
        assert!(!secret_key_name("cni"));
    }
}
