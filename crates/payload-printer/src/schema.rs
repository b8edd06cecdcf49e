//! The published output contract: every JSON (and YAML) document the tool writes, its schema
//! id, and its JSON Schema.
//!
//! [`DOCUMENTS`] names them. With the feature `schema` (off by default: an embedder that
//! does not publish schemas does not build `schemars`), `Document::json_schema` generates each
//! document's JSON Schema (draft 2020-12) from the report types with
//! [`schemars`](https://docs.rs/schemars), as they serialise. The repository commits them under
//! `docs/schemas/<name>-v1.json` (a test fails when they differ from what the types generate)
//! and attaches them to every release; `rke2-payload schema NAME` prints them.
//!
//! The schemas are strict: an object of a document has `additionalProperties: false` (or
//! `unevaluatedProperties: false` where it is made of several parts), every field the tool
//! always writes is `required`, and the `schema` field is the document's id (`const`). They
//! describe the output of the release they come with: a later release of the same id may add
//! fields (and check ids, link ids, enum values), never remove, rename or retype one, so a
//! reader written against an older file keeps working on newer output as long as it ignores
//! what it does not know (validate newer output against the newer file).
//!
//! ```
//! let lint = payload_printer::schema::document("lint").expect("a document");
//! assert_eq!(lint.schema, "rke2-payload/lint/v1");
//! assert_eq!(lint.file_name(), "lint-v1.json");
//! assert!(lint.id().ends_with("/docs/schemas/lint-v1.json"));
//! ```

/// Where the schema files are published: the `$id` of each is this and its file name.
pub const BASE_URL: &str =
    "https://raw.githubusercontent.com/rke2-payload/rke2-payload/main/docs/schemas/";

/// One document the tool writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Document {
    /// Its short name (`lint`), the argument of `rke2-payload schema`.
    pub name: &'static str,
    /// The value of its `schema` field (`rke2-payload/lint/v1`).
    pub schema: &'static str,
    /// The command that writes it.
    pub command: &'static str,
}

/// Every JSON and YAML document the tool writes, in the order of the README's table.
pub const DOCUMENTS: &[Document] = &[
    Document {
        name: "inspect",
        schema: rke2_payload::INSPECT_SCHEMA,
        command: "inspect -o json|yaml",
    },
    Document {
        name: "size",
        schema: rke2_payload::SIZE_SCHEMA,
        command: "size -o json|yaml",
    },
    Document {
        name: "lint",
        schema: rke2_payload::LINT_SCHEMA,
        command: "lint -o json|yaml",
    },
    Document {
        name: "checks",
        schema: crate::lint::CHECKS_SCHEMA,
        command: "lint --list-checks -o json|yaml",
    },
    Document {
        name: "diff",
        schema: rke2_payload::DIFF_SCHEMA,
        command: "diff -o json",
    },
    Document {
        name: "doctor",
        schema: payload_doctor::DOCTOR_SCHEMA,
        command: "doctor -o json|yaml",
    },
    Document {
        name: "clouds",
        schema: crate::clouds::CLOUDS_SCHEMA,
        command: "clouds -o json|yaml",
    },
    Document {
        name: "version",
        schema: crate::version::VERSION_SCHEMA,
        command: "version -o json|yaml",
    },
];

/// The document named `name` (`lint`), if there is one.
pub fn document(name: &str) -> Option<&'static Document> {
    DOCUMENTS.iter().find(|d| d.name == name)
}

impl Document {
    /// The version part of its id (`v1`).
    pub fn version(&self) -> &'static str {
        self.schema.rsplit('/').next().unwrap_or(self.schema)
    }

    /// The name of its schema file (`lint-v1.json`).
    pub fn file_name(&self) -> String {
        format!("{}-{}.json", self.name, self.version())
    }

    /// The `$id` of its schema: [`BASE_URL`] and the file name.
    pub fn id(&self) -> String {
        format!("{BASE_URL}{}", self.file_name())
    }

    /// Its JSON Schema (draft 2020-12), generated from the types it serialises, made strict
    /// (see the module's documentation), with its `$id`, a title, and its `schema` field's
    /// value as a `const`.
    #[cfg(feature = "schema")]
    pub fn json_schema(&self) -> serde_json::Value {
        let mut value = match self.name {
            "inspect" => generate::<types::InspectDocument>(),
            "size" => generate::<types::SizeDocument>(),
            "lint" => generate::<rke2_payload::LintReport>(),
            "checks" => generate::<crate::lint::ChecksDocument>(),
            "diff" => generate::<rke2_payload::DiffReport>(),
            "doctor" => generate::<payload_doctor::Diagnosis>(),
            "clouds" => generate::<crate::clouds::CloudsDocument>(),
            _ => generate::<crate::version::VersionDocument>(),
        };
        strict::close(&mut value);
        let mut head = serde_json::Map::new();
        if let serde_json::Value::Object(map) = &mut value {
            head.insert(
                "$schema".to_owned(),
                map.remove("$schema")
                    .unwrap_or_else(|| "https://json-schema.org/draft/2020-12/schema".into()),
            );
            head.insert("$id".to_owned(), self.id().into());
            head.insert(
                "title".to_owned(),
                format!("rke2-payload {} ({})", self.command, self.schema).into(),
            );
            map.remove("title");
            if let Some(serde_json::Value::Object(schema)) =
                map.get_mut("properties").and_then(|p| p.get_mut("schema"))
            {
                schema.insert("const".to_owned(), self.schema.into());
            }
            head.append(map);
        }
        serde_json::Value::Object(head)
    }
}

/// The schema of `T` as it serialises.
#[cfg(feature = "schema")]
fn generate<T: schemars::JsonSchema>() -> serde_json::Value {
    let generator = schemars::generate::SchemaSettings::draft2020_12()
        .for_serialize()
        .into_generator();
    generator.into_root_schema_for::<T>().to_value()
}

#[cfg(feature = "schema")]
mod strict {
    //! Closing the objects of a generated schema, and its descriptions made plain text.

    use serde_json::Value;

    /// Every object schema with `properties` and no word on other properties gets
    /// `additionalProperties: false`, or `unevaluatedProperties: false` when it is made of
    /// parts too (`allOf`, `anyOf`, `oneOf`), which sees the parts' properties. Descriptions
    /// (the types' documentation) lose rustdoc's link brackets.
    pub(super) fn close(schema: &mut Value) {
        match schema {
            Value::Object(map) => {
                let parts = ["allOf", "anyOf", "oneOf"]
                    .iter()
                    .any(|k| map.contains_key(*k));
                let said = map.contains_key("additionalProperties")
                    || map.contains_key("unevaluatedProperties");
                if map.contains_key("properties") && !said {
                    let key = if parts {
                        "unevaluatedProperties"
                    } else {
                        "additionalProperties"
                    };
                    map.insert(key.to_owned(), false.into());
                }
                if let Some(Value::String(text)) = map.get_mut("description") {
                    *text = text.replace("[`", "`").replace("`]", "`");
                }
                for (key, value) in map.iter_mut() {
                    // Values, not schemas.
                    if !matches!(key.as_str(), "const" | "enum" | "examples" | "default") {
                        close(value);
                    }
                }
            }
            Value::Array(items) => items.iter_mut().for_each(close),
            _ => {}
        }
    }
}

/// The shapes of the two documents written item by item ([`crate::document::Items`]), for
/// their schemas: nothing builds them.
#[cfg(feature = "schema")]
pub mod types {
    use rke2_payload::{SecretReport, SizeReport, SkippedSecret};

    use crate::document::UnreadableItem;

    /// The `inspect` document.
    #[derive(Debug, serde::Serialize, schemars::JsonSchema)]
    pub struct InspectDocument {
        /// Always [`rke2_payload::INSPECT_SCHEMA`].
        pub schema: String,
        /// One item per bootstrap Secret, in input order.
        pub secrets: Vec<InspectItem>,
        /// Secrets in the input that carry no bootstrap data.
        pub skipped_secrets: usize,
        /// Objects in the input that are not Secrets.
        pub skipped_objects: usize,
        /// The bootstrap Secrets of other providers passed over (left out when none).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        pub skipped_other_providers: Vec<SkippedSecret>,
    }

    /// One Secret of the `inspect` document: its report, or why it could not be read.
    #[derive(Debug, serde::Serialize, schemars::JsonSchema)]
    #[serde(untagged)]
    pub enum InspectItem {
        /// The report of a Secret read.
        Secret(SecretReport),
        /// A Secret that could not be read.
        Unreadable(UnreadableItem),
    }

    /// The `size` document.
    #[derive(Debug, serde::Serialize, schemars::JsonSchema)]
    pub struct SizeDocument {
        /// Always [`rke2_payload::SIZE_SCHEMA`].
        pub schema: String,
        /// One item per bootstrap Secret, in input order.
        pub secrets: Vec<SizeItem>,
        /// Whether every Secret fits every target.
        pub fits: bool,
        /// The bootstrap Secrets of other providers passed over (left out when none).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        pub skipped_other_providers: Vec<SkippedSecret>,
    }

    /// One Secret of the `size` document: its measure, or why it could not be read.
    #[derive(Debug, serde::Serialize, schemars::JsonSchema)]
    #[serde(untagged)]
    pub enum SizeItem {
        /// The measure of a Secret read.
        Secret(SizeReport),
        /// A Secret that could not be read.
        Unreadable(UnreadableItem),
    }
}
