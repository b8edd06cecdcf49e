//! Every object of an input, as data: the YAML documents or the JSON document, each `List`
//! flattened into its items (what the preview crate and the encoder read; the streaming reader is
//! [`super::for_each_secret`]).

use serde_json::Value;

use crate::error::{Error, Syntax};

/// Every object of the input (YAML documents and `List` items, in order), as data: what the
/// preview reads manifests with. An object is a `serde_json::Value`: it may be of any kind and
/// shape, and JSON's data model is what every reader of it works on.
///
/// ```
/// let input = b"kind: List\nitems:\n- kind: Cluster\n---\nkind: Machine\n";
/// let objects = rke2_payload::objects(input)?;
/// assert_eq!(objects.len(), 2);
/// assert_eq!(objects[1]["kind"], "Machine");
/// # Ok::<(), rke2_payload::Error>(())
/// ```
///
/// # Errors
/// [`Error::Syntax`] when the input is not UTF-8, YAML or JSON (the message never quotes it).
pub fn objects(input: &[u8]) -> Result<Vec<Value>, Error> {
    let text = std::str::from_utf8(input).map_err(|_| Error::Syntax {
        syntax: Syntax::Yaml,
        message: "invalid UTF-8".to_owned(),
        at: None,
    })?;
    let docs: Vec<Value> = if super::looks_like_json(text.trim_start().as_bytes()) {
        // One value, or a sequence of them (`jq -c`, `kubectl get -w -o json`).
        serde_json::Deserializer::from_str(text)
            .into_iter::<Value>()
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| Error::Syntax {
                syntax: Syntax::Json,
                message: crate::codec::text::scrub(&e.to_string()),
                at: None,
            })?
    } else {
        let mut options = serde_saphyr::Options::default();
        options.with_snippet = false;
        let docs: Vec<Option<Value>> = serde_saphyr::from_str_multiple_with_options(text, options)
            .map_err(|e| super::yaml_error(&e, text, 0))?;
        docs.into_iter().flatten().collect()
    };
    let mut objects = Vec::new();
    for doc in docs {
        flatten_lists(doc, &mut objects);
    }
    Ok(objects)
}

/// A `List`'s items in its place, as the envelope reads a List: an object with `items` is the
/// list of them whatever its `kind` says; one whose `kind` ends in `List` without them holds
/// nothing.
fn flatten_lists(doc: Value, out: &mut Vec<Value>) {
    match doc {
        Value::Object(mut object) => match object.remove("items") {
            Some(Value::Array(items)) => {
                for item in items {
                    flatten_lists(item, out);
                }
            }
            items => {
                let is_list = object
                    .get("kind")
                    .and_then(Value::as_str)
                    .is_some_and(|k| k.ends_with("List"));
                if !is_list {
                    if let Some(items) = items {
                        object.insert("items".to_owned(), items);
                    }
                    out.push(Value::Object(object));
                }
            }
        },
        other => out.push(other),
    }
}

/// What an object of the input is, decided once on its parsed value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ObjectClass {
    /// A Secret that may carry RKE2 bootstrap data (a `value` key, no other provider's owner).
    BootstrapSecret,
    /// A bootstrap Secret of another Cluster API bootstrap provider (owned by a
    /// `bootstrap.cluster.x-k8s.io` kind other than `RKE2Config`): passed over.
    OtherProviderSecret,
    /// Any other Secret (a cluster's `-ca`, `-token`, `-kubeconfig`, a referenced file's).
    Secret,
    /// An object as it exists on a cluster (`metadata.uid`, `resourceVersion`,
    /// `creationTimestamp`, `ownerReferences` or a `status`): read as what exists, never
    /// rendered.
    Live,
    /// An object as written in a template or manifest file.
    Template,
}

/// The class of one object (a `List` item or document, as [`objects`] returns them).
///
/// ```
/// use rke2_payload::{ObjectClass, classify};
/// use serde_json::json;
///
/// assert_eq!(classify(&json!({"kind": "Cluster", "metadata": {"uid": "1"}})), ObjectClass::Live);
/// assert_eq!(classify(&json!({"kind": "Cluster"})), ObjectClass::Template);
/// ```
pub fn classify(object: &Value) -> ObjectClass {
    let meta = object.get("metadata");
    if object.get("kind").and_then(Value::as_str) == Some("Secret") {
        let has_value = ["data", "stringData"]
            .iter()
            .any(|k| object.get(k).and_then(|d| d.get("value")).is_some());
        let owners = meta
            .and_then(|m| m.get("ownerReferences"))
            .and_then(Value::as_array);
        let other = owners.into_iter().flatten().any(|o| {
            let group = o
                .get("apiVersion")
                .and_then(Value::as_str)
                .and_then(|v| v.split('/').next());
            let kind = o.get("kind").and_then(Value::as_str).unwrap_or_default();
            group == Some("bootstrap.cluster.x-k8s.io") && kind != "RKE2Config" && !kind.is_empty()
        });
        return match (has_value, other) {
            (true, true) => ObjectClass::OtherProviderSecret,
            (true, false) => ObjectClass::BootstrapSecret,
            (false, _) => ObjectClass::Secret,
        };
    }
    let set = |v: Option<&Value>| match v {
        None | Some(Value::Null) => false,
        Some(Value::Object(m)) => !m.is_empty(),
        Some(Value::Array(a)) => !a.is_empty(),
        Some(Value::String(s)) => !s.is_empty(),
        Some(_) => true,
    };
    let live = set(object.get("status"))
        || [
            "uid",
            "resourceVersion",
            "creationTimestamp",
            "ownerReferences",
        ]
        .iter()
        .any(|k| set(meta.and_then(|m| m.get(*k))));
    if live {
        ObjectClass::Live
    } else {
        ObjectClass::Template
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_list_is_read_by_the_envelope_s_rule() {
        let names = |yaml: &str| -> Vec<String> {
            objects(yaml.as_bytes())
                .expect("YAML")
                .iter()
                .map(|o| o["metadata"]["name"].as_str().unwrap_or("?").to_owned())
                .collect()
        };
        // `items` makes a List whatever the kind says; a List without them holds nothing.
        let items = "items:\n- {kind: Secret, metadata: {name: a}}\n- {kind: Secret, metadata: {name: b}}\n";
        assert_eq!(names(&format!("kind: List\n{items}")), ["a", "b"]);
        assert_eq!(names(&format!("kind: SecretList\n{items}")), ["a", "b"]);
        assert_eq!(names(&format!("kind: Whatever\n{items}")), ["a", "b"]);
        assert_eq!(
            names("kind: SecretList\nmetadata: {name: x}\n"),
            Vec::<String>::new()
        );
        assert_eq!(names("kind: Secret\nmetadata: {name: c}\n"), ["c"]);
        let secrets = format!("kind: Whatever\n{items}").replace(
            "Secret,",
            "Secret, stringData: {value: '#cloud-config', format: cloud-config},",
        );
        let envelope = crate::envelope::Envelope::parse(
            secrets.as_bytes(),
            &crate::options::DecodeOptions::default(),
        )
        .expect("a List");
        assert_eq!(envelope.secrets.len(), 2);
    }

    #[test]
    fn objects_are_classified_on_their_parsed_values() {
        let class = |yaml: &str| {
            let objects = objects(yaml.as_bytes()).expect("YAML");
            classify(&objects[0])
        };
        assert_eq!(
            class("kind: Cluster\nmetadata: {name: a}\nspec: {}\n"),
            ObjectClass::Template
        );
        assert_eq!(
            class("kind: Cluster\nmetadata: {name: a}\nstatus: {}\n"),
            ObjectClass::Template
        );
        assert_eq!(
            class("kind: Cluster\nmetadata: {name: a, uid: x}\n"),
            ObjectClass::Live
        );
        assert_eq!(
            class("kind: RKE2Config\nmetadata: {name: a}\nstatus: {ready: true}\n"),
            ObjectClass::Live
        );
        assert_eq!(
            class("kind: Machine\nmetadata: {name: a, ownerReferences: [{kind: MachineSet}]}\n"),
            ObjectClass::Live
        );
        assert_eq!(
            class("kind: Secret\nmetadata: {name: a-ca}\ndata: {tls.crt: eA==}\n"),
            ObjectClass::Secret
        );
        assert_eq!(
            class(
                "kind: Secret\nmetadata: {name: a}\nstringData: {value: x, format: cloud-config}\n"
            ),
            ObjectClass::BootstrapSecret
        );
        let kubeadm = "kind: Secret\nmetadata:\n  name: a\n  ownerReferences:\n  - {apiVersion: bootstrap.cluster.x-k8s.io/v1beta1, kind: KubeadmConfig, name: a}\nstringData: {value: x, format: cloud-config}\n";
        assert_eq!(class(kubeadm), ObjectClass::OtherProviderSecret);
        assert_eq!(
            class(&kubeadm.replace("KubeadmConfig", "RKE2Config")),
            ObjectClass::BootstrapSecret
        );
    }
}
