//! cloud-init's own JSON schema for cloud-config: the one bundled with the tool (a named
//! cloud-init release, [`BUNDLED_CLOUD_INIT_VERSION`]), or a file given (the one a `cloud-init`
//! package installed, say), so that a verdict does not depend on what the machine running the
//! tool has installed.
//!
//! Without one, the `cloud-config-schema` check relies on the project's own rules for the
//! modules CAPRKE2 uses (the document layer's cloud-config reader).

use std::path::Path;

use serde_json::Value;

use crate::checks::{Check, Finding};

/// The cloud-init release whose schema is bundled ([`CloudInitSchema::bundled`]).
pub const BUNDLED_CLOUD_INIT_VERSION: &str = "26.2";

/// The bundled schema: cloud-init's `schema-cloud-config-v1.json` at
/// [`BUNDLED_CLOUD_INIT_VERSION`], its documentation prose removed by
/// `scripts/cloud-init-schema.py` (which records the tag and commit in the file).
const BUNDLED: &str = include_str!("data/cloud-init-schema.json");

/// Where Debian's and Fedora's `cloud-init` packages install the schema.
pub const CLOUD_INIT_SCHEMA_PATHS: &[&str] = &[
    "/usr/lib/python3/dist-packages/cloudinit/config/schemas/schema-cloud-config-v1.json",
    "/usr/lib/python3/site-packages/cloudinit/config/schemas/schema-cloud-config-v1.json",
];

/// Why a schema file could not be used.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SchemaError {
    /// The file could not be read.
    #[error("{path}: {error}")]
    Read {
        /// The file.
        path: String,
        /// The I/O error.
        error: std::io::Error,
    },
    /// The file is not JSON.
    #[error("{path}: {message}")]
    NotJson {
        /// The file.
        path: String,
        /// The parser's message.
        message: String,
    },
    /// The file is JSON but not a schema the validator can compile.
    #[error("{path}: not a usable schema: {message}")]
    NotASchema {
        /// The file.
        path: String,
        /// The validator's message.
        message: String,
    },
}

/// A compiled cloud-config schema.
pub struct CloudInitSchema {
    validator: jsonschema::Validator,
    path: String,
    version: Option<String>,
}

impl std::fmt::Debug for CloudInitSchema {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CloudInitSchema")
            .field("path", &self.path)
            .field("version", &self.version)
            .finish_non_exhaustive()
    }
}

/// What a subschema marked `deprecated` says: the use of it cloud-init accepts and warns about.
#[derive(Debug)]
struct Deprecation {
    /// The subschema without its annotations: the values it applies to.
    applies: jsonschema::Validator,
    /// cloud-init's `deprecated_version`, when the schema gives it.
    since: Option<String>,
    /// The first line of the subschema's `description` (schema text, not input).
    note: Option<String>,
}

thread_local! {
    /// The deprecated subschemas met by the validation running on this thread: the address of
    /// the instance node and what was deprecated there.
    static MET: std::cell::RefCell<Vec<(usize, std::sync::Arc<Deprecation>)>> =
        const { std::cell::RefCell::new(Vec::new()) };
}

/// The `deprecated` keyword: never fails (cloud-init accepts the value); notes where a value
/// matches the deprecated subschema, so the check reports it as a deprecation.
struct DeprecatedKeyword(std::sync::Arc<Deprecation>);

impl DeprecatedKeyword {
    fn note(&self, instance: &Value) {
        if self.0.applies.is_valid(instance) {
            let at = std::ptr::from_ref(instance) as usize;
            MET.with(|met| met.borrow_mut().push((at, self.0.clone())));
        }
    }
}

impl<'i> jsonschema::Keyword<'i> for DeprecatedKeyword {
    fn validate(&self, instance: &'i Value) -> Result<(), jsonschema::ValidationError<'i>> {
        self.note(instance);
        Ok(())
    }

    fn is_valid(&self, instance: &'i Value) -> bool {
        self.note(instance);
        true
    }
}

/// cloud-init's version, from `cloudinit/version.py` of the package that installed `schema`
/// (`<package>/cloudinit/config/schemas/<file>`): the packaged version when the distribution
/// set one, else `__VERSION__`.
fn cloud_init_version(schema: &Path) -> Option<String> {
    let package = schema.parent()?.parent()?.parent()?;
    let text = std::fs::read_to_string(package.join("version.py")).ok()?;
    let quoted = |name: &str| -> Option<String> {
        text.lines().find_map(|line| {
            let rest = line
                .strip_prefix(name)?
                .trim_start()
                .strip_prefix('=')?
                .trim();
            let quote = rest.chars().next().filter(|c| *c == '"' || *c == '\'')?;
            let inner = &rest[1..];
            let value = &inner[..inner.find(quote)?];
            let ok = !value.is_empty()
                && value.len() <= 64
                && value
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "+-.~_".contains(c));
            ok.then(|| value.to_owned())
        })
    };
    quoted("_PACKAGED_VERSION").or_else(|| quoted("__VERSION__"))
}

impl CloudInitSchema {
    /// Loads and compiles a schema file. A subschema marked `deprecated: true` (cloud-init's
    /// annotation, with `deprecated_version` in later releases) accepts its values, as
    /// cloud-init does; [`CloudInitSchema::validate`] reports their use as deprecations.
    ///
    /// # Errors
    /// [`SchemaError`] when the file cannot be read, is not JSON, or is not a schema.
    pub fn load(path: &Path) -> Result<Self, SchemaError> {
        let shown = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|error| SchemaError::Read {
            path: shown.clone(),
            error,
        })?;
        Self::compile(&text, shown, cloud_init_version(path))
    }

    /// The schema bundled with the tool: cloud-init [`BUNDLED_CLOUD_INIT_VERSION`]'s, whatever
    /// the machine has installed. Findings name it `cloud-init 26.2's schema (bundled)`.
    ///
    /// ```
    /// use rke2_payload::CloudInitSchema;
    ///
    /// let schema = CloudInitSchema::bundled()?;
    /// assert_eq!(schema.version(), Some(rke2_payload::BUNDLED_CLOUD_INIT_VERSION));
    /// assert!(schema.validate("#cloud-config\nruncmd: [date]\n").is_empty());
    /// let findings = schema.validate("#cloud-config\nusers: 5\n");
    /// assert!(findings[0].message.starts_with("cloud-init 26.2's schema (bundled) rejects /users"));
    /// # Ok::<(), rke2_payload::SchemaError>(())
    /// ```
    ///
    /// # Errors
    /// [`SchemaError`] only if the bundled file does not compile, which a test rules out.
    pub fn bundled() -> Result<Self, SchemaError> {
        Self::compile(
            BUNDLED,
            "bundled".to_owned(),
            Some(BUNDLED_CLOUD_INIT_VERSION.to_owned()),
        )
    }

    /// Compiles a schema's text; `path` names it in errors and findings.
    fn compile(text: &str, path: String, version: Option<String>) -> Result<Self, SchemaError> {
        let schema: Value = serde_json::from_str(text).map_err(|e| SchemaError::NotJson {
            path: path.clone(),
            message: e.to_string(),
        })?;
        let not_a_schema = |message: String| SchemaError::NotASchema {
            path: path.clone(),
            message,
        };
        // What a deprecated subschema's `$ref`s point to: the root's definitions.
        let mut definitions = serde_json::Map::new();
        if let Value::Object(root) = &schema {
            for key in ["$schema", "$defs", "definitions"] {
                if let Some(v) = root.get(key) {
                    definitions.insert(key.to_owned(), v.clone());
                }
            }
        }
        let validator = jsonschema::options()
            .with_keyword("deprecated", move |parent, value, _| {
                if value != &Value::Bool(true) {
                    return Ok(Box::new(DeprecatedKeyword(std::sync::Arc::new(
                        Deprecation {
                            applies: jsonschema::validator_for(&Value::Bool(false))
                                .map_err(jsonschema::ValidationError::to_owned)?,
                            since: None,
                            note: None,
                        },
                    ))));
                }
                let mut applies = serde_json::Map::new();
                if parent.values().any(|v| v.to_string().contains("$ref")) {
                    applies.extend(definitions.clone());
                } else if let Some(draft) = definitions.get("$schema") {
                    applies.insert("$schema".to_owned(), draft.clone());
                }
                for (k, v) in parent {
                    if !matches!(
                        k.as_str(),
                        "deprecated" | "deprecated_version" | "deprecated_description"
                    ) {
                        applies.insert(k.clone(), v.clone());
                    }
                }
                let applies = jsonschema::validator_for(&Value::Object(applies))
                    .map_err(jsonschema::ValidationError::to_owned)?;
                let text = |key: &str| {
                    parent
                        .get(key)
                        .and_then(Value::as_str)
                        .and_then(|s| s.lines().next())
                        .map(|s| crate::codec::text::shorten(s.trim(), 200))
                        .filter(|s| !s.is_empty())
                };
                Ok(Box::new(DeprecatedKeyword(std::sync::Arc::new(
                    Deprecation {
                        applies,
                        since: text("deprecated_version"),
                        note: text("deprecated_description").or_else(|| text("description")),
                    },
                ))))
            })
            .build(&schema)
            .map_err(|e| not_a_schema(e.to_string()))?;
        Ok(CloudInitSchema {
            validator,
            path,
            version,
        })
    }

    /// The first schema found at [`CLOUD_INIT_SCHEMA_PATHS`].
    pub fn find() -> Option<Self> {
        CLOUD_INIT_SCHEMA_PATHS
            .iter()
            .map(Path::new)
            .filter(|p| p.is_file())
            .find_map(|p| Self::load(p).ok())
    }

    /// The file it was loaded from (`bundled` for [`CloudInitSchema::bundled`]).
    pub fn path(&self) -> &str {
        &self.path
    }

    /// The version of the cloud-init package the file belongs to, when its `version.py` is
    /// next to it (`None` for a schema file given on its own).
    pub fn version(&self) -> Option<&str> {
        self.version.as_deref()
    }

    /// Which schema this is, as the findings name it: `cloud-init 22.4.2's schema (<path>)`,
    /// or `the cloud-init schema <path>` when the version is not known.
    pub fn source(&self) -> String {
        match &self.version {
            Some(v) => format!("cloud-init {v}'s schema ({})", self.path),
            None => format!("the cloud-init schema {}", self.path),
        }
    }

    /// Validates a cloud-config text, read as cloud-init reads it (YAML 1.1 scalars, as
    /// PyYAML; comments are not part of it). A text that is not YAML yields nothing here (the
    /// parser reports it). Each finding names the schema ([`CloudInitSchema::source`]) and the
    /// key path, and never repeats string values: a value the schema rejects, then each use
    /// of a deprecated key or value form, which cloud-init accepts and warns about.
    pub fn validate(&self, text: &str) -> Vec<Finding> {
        // The values cloud-init sees: PyYAML's YAML 1.1 rules (`0o600` is text, `yes` a bool).
        let Ok(Some(value)) = crate::codec::yaml11::first_document(text) else {
            return Vec::new();
        };
        let source = self.source();
        MET.with(|met| met.borrow_mut().clear());
        let mut out: Vec<Finding> = self
            .validator
            .iter_errors(&value)
            .take(50)
            .map(|e| {
                Finding::located(
                    Check::CloudConfigSchema,
                    format!(
                        "{source} rejects {}: {}",
                        shown_path(&e.instance_path().to_string()),
                        without_strings(&e.to_string())
                    ),
                    None,
                    None,
                )
            })
            .collect();
        let met = MET.with(|met| std::mem::take(&mut *met.borrow_mut()));
        if !met.is_empty() {
            let mut seen = std::collections::HashSet::new();
            let mut paths = Vec::new();
            pointers(&value, &mut String::new(), &mut paths);
            for (at, deprecation) in met {
                let Some((_, path)) = paths.iter().find(|(a, _)| *a == at) else {
                    continue;
                };
                let key = (path.clone(), std::sync::Arc::as_ptr(&deprecation) as usize);
                if !seen.insert(key) || out.len() >= 100 {
                    continue;
                }
                let since = deprecation
                    .since
                    .as_ref()
                    .map(|v| format!(" since cloud-init {v}"))
                    .unwrap_or_default();
                let note = deprecation
                    .note
                    .as_ref()
                    .map(|n| format!(": {n}"))
                    .unwrap_or_default();
                out.push(Finding::located(
                    Check::CloudConfigDeprecated,
                    format!(
                        "{source} accepts {} but marks it deprecated{since} (cloud-init warns, not an error){note}",
                        shown_path(path)
                    ),
                    None,
                    None,
                ));
            }
        }
        out
    }
}

/// A JSON pointer as the findings show it (`/` for the document).
fn shown_path(at: &str) -> String {
    if at.is_empty() {
        "/".to_owned()
    } else {
        crate::codec::text::shorten(at, 200)
    }
}

/// Every node of `value` with its address and its JSON pointer.
fn pointers(value: &Value, at: &mut String, out: &mut Vec<(usize, String)>) {
    out.push((std::ptr::from_ref(value) as usize, at.clone()));
    let len = at.len();
    match value {
        Value::Object(map) => {
            for (k, v) in map {
                at.push('/');
                at.push_str(&k.replace('~', "~0").replace('/', "~1"));
                pointers(v, at, out);
                at.truncate(len);
            }
        }
        Value::Array(items) => {
            for (i, v) in items.iter().enumerate() {
                at.push('/');
                at.push_str(&i.to_string());
                pointers(v, at, out);
                at.truncate(len);
            }
        }
        _ => {}
    }
}

/// Removes double-quoted JSON strings (values from the document) except JSON type names.
fn without_strings(message: &str) -> String {
    const TYPES: &[&str] = &[
        "string", "array", "object", "integer", "number", "boolean", "null",
    ];
    let mut out = String::with_capacity(message.len());
    let mut rest = message;
    while let Some(start) = rest.find('"') {
        out.push_str(&rest[..start]);
        let after = &rest[start + 1..];
        match after.find('"') {
            Some(end) => {
                let inner = &after[..end];
                if TYPES.contains(&inner) {
                    out.push('"');
                    out.push_str(inner);
                    out.push('"');
                } else {
                    out.push('…');
                }
                rest = &after[end + 1..];
            }
            None => {
                out.push('…');
                rest = "";
            }
        }
    }
    out.push_str(rest);
    out.lines().next().unwrap_or("").to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strings_are_removed_but_types_kept() {
        assert_eq!(
            without_strings(r#""hunter22" is not of type "array""#),
            r#"… is not of type "array""#
        );
    }

    #[test]
    fn validates_with_a_small_schema() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("schema.json");
        std::fs::write(
            &path,
            r#"{"$schema":"http://json-schema.org/draft-04/schema#","type":"object","properties":{"runcmd":{"type":"array"}}}"#,
        )
        .unwrap();
        let schema = CloudInitSchema::load(&path).unwrap();
        let problems = schema.validate("#cloud-config\nruncmd: \"s3cr3t-value\"\n");
        assert_eq!(problems.len(), 1);
        assert!(
            problems[0].message.contains("/runcmd"),
            "{}",
            problems[0].message
        );
        assert!(!problems[0].message.contains("s3cr3t"));
        assert!(schema.validate("#cloud-config\nruncmd: []\n").is_empty());
        // The finding names the schema it used.
        assert!(
            problems[0].message.contains(&*path.display().to_string()),
            "{}",
            problems[0].message
        );
    }

    #[test]
    fn comments_do_not_switch_the_check_off() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("schema.json");
        std::fs::write(
            &path,
            r#"{"$schema":"http://json-schema.org/draft-04/schema#","type":"object","properties":{"runcmd":{"type":"array"},"ssh_pwauth":{"type":"boolean"}},"additionalProperties":false}"#,
        )
        .unwrap();
        let schema = CloudInitSchema::load(&path).unwrap();
        for text in [
            "#cloud-config\nruncmd: []\n# a comment\nssh_pwauth: [1]\nbogus: 1\n",
            "#cloud-config\nruncmd: # inline\n  # inside\n  - a # after\nssh_pwauth: [1]\nbogus: 1\n",
            "#cloud-config\n# before\nruncmd: []\nssh_pwauth: [1] # here\n# between\nbogus: 1\n# end\n",
        ] {
            let problems = schema.validate(text);
            let messages: Vec<&str> = problems.iter().map(|p| p.message.as_str()).collect();
            assert_eq!(problems.len(), 2, "{text:?}: {messages:?}");
            assert!(
                messages.iter().any(|m| m.contains("/ssh_pwauth")),
                "{messages:?}"
            );
            assert!(
                messages
                    .iter()
                    .any(|m| m.contains("bogus") || m.contains("rejects /:")),
                "{messages:?}"
            );
        }
    }

    /// cloud-init's annotation: a deprecated key or value form is accepted and reported as a
    /// deprecation, naming the key path, never the value; a value no branch takes is rejected.
    #[test]
    fn deprecated_keys_are_deprecations_not_rejections() {
        let dir = tempfile::tempdir().unwrap();
        // The layout of a cloud-init package: the version is read next to the schema.
        let schemas = dir.path().join("cloudinit/config/schemas");
        std::fs::create_dir_all(&schemas).unwrap();
        std::fs::write(
            dir.path().join("cloudinit/version.py"),
            "__VERSION__ = \"24.1.3\"\n_PACKAGED_VERSION = \"@@PACKAGED_VERSION@@\"\n",
        )
        .unwrap();
        let path = schemas.join("schema-cloud-config-v1.json");
        std::fs::write(
            &path,
            r##"{"$schema":"http://json-schema.org/draft-04/schema#",
            "$defs":{"user":{"type":"object","properties":{
                "name":{"type":"string"},
                "lock-passwd":{"type":"boolean","deprecated":true,"deprecated_version":"22.3","deprecated_description":"Use lock_passwd instead."},
                "uid":{"oneOf":[{"type":"integer"},{"type":"string","deprecated":true,"description":"Use an integer."}]}},
                "additionalProperties":false}},
            "type":"object",
            "properties":{
                "users":{"type":"array","items":{"$ref":"#/$defs/user"}},
                "apt_update":{"type":"boolean","deprecated":true},
                "ca-certs":{"allOf":[{"$ref":"#/$defs/user"},{"deprecated":true,"description":"Use ca_certs."}]}}}"##,
        )
        .unwrap();
        let schema = CloudInitSchema::load(&path).unwrap();
        assert_eq!(schema.version(), Some("24.1.3"));
        let problems = schema.validate(
            "#cloud-config\nusers:\n  # ops\n  - name: ops\n    lock-passwd: true\n    uid: \"s3cr3t-uid\"\n  - name: b\n    uid: 7\napt_update: true\nca-certs: {name: x}\n",
        );
        let messages: Vec<&str> = problems.iter().map(|p| p.message.as_str()).collect();
        assert_eq!(problems.len(), 4, "{messages:?}");
        for m in &messages {
            assert!(m.starts_with("cloud-init 24.1.3's schema ("), "{m}");
            assert!(m.contains("deprecated") && !m.contains("rejects"), "{m}");
            assert!(!m.contains("s3cr3t"), "{m}");
        }
        assert!(messages.iter().any(|m| m.contains("/users/0/lock-passwd")
            && m.contains("since cloud-init 22.3")
            && m.contains("Use lock_passwd instead.")));
        assert!(
            messages
                .iter()
                .any(|m| m.contains("/users/0/uid") && m.contains("Use an integer."))
        );
        assert!(messages.iter().any(|m| m.contains("/apt_update")));
        assert!(
            messages
                .iter()
                .any(|m| m.contains("/ca-certs") && m.contains("Use ca_certs."))
        );
        assert!(
            problems
                .iter()
                .all(|p| p.check == Check::CloudConfigDeprecated
                    && p.severity == Check::CloudConfigDeprecated.severity())
        );
        // A value neither branch takes is still a rejection, and nothing is deprecated there.
        let problems = schema.validate("#cloud-config\nusers: [{name: a, uid: [1]}]\n");
        let messages: Vec<&str> = problems.iter().map(|p| p.message.as_str()).collect();
        assert_eq!(problems.len(), 1, "{messages:?}");
        assert!(messages[0].contains("rejects /users/0/uid"), "{messages:?}");
        // The schema's own values are not rejections: nothing is reported.
        assert!(
            schema
                .validate("#cloud-config\nusers: [{name: a, uid: 1}]\n")
                .is_empty()
        );
    }

    #[test]
    fn the_bundled_schema_is_cloud_init_s_and_names_its_release() {
        let schema = super::CloudInitSchema::bundled().expect("the bundled schema compiles");
        let text: serde_json::Value =
            serde_json::from_str(super::BUNDLED).expect("the bundled schema is JSON");
        assert_eq!(
            text["x-rke2-payload-source"]["tag"],
            super::BUNDLED_CLOUD_INIT_VERSION
        );
        assert_eq!(schema.path(), "bundled");
        // The hyphenated key CAPRKE2's vSphere template uses: accepted, deprecated.
        let found = schema.validate(
            "#cloud-config\nusers:\n- name: capv\n  ssh-authorized-keys: [ssh-ed25519 AAAA x]\n",
        );
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].check, Check::CloudConfigDeprecated);
        assert!(
            found[0].message.contains("/users/0/ssh-authorized-keys")
                && found[0].message.contains("since cloud-init 18.3"),
            "{}",
            found[0].message
        );
        // Real rejections still are.
        let found = schema.validate("#cloud-config\nwrite_files: [{content: x}]\n");
        assert!(
            found.iter().any(|f| f.check == Check::CloudConfigSchema
                && f.message
                    .contains("26.2's schema (bundled) rejects /write_files/0")),
            "{found:?}"
        );
    }
}
