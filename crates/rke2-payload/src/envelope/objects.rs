//! Every object of an input, as data: the YAML documents or the JSON document, each `List`
//! flattened into its items (what `render` and the encoder read; the streaming reader is
//! [`super::for_each_secret`]).

use serde_json::Value;

use crate::error::{Error, Syntax};

/// Every object of the input (YAML documents and `List` items, in order), as data.
pub(crate) fn objects(input: &[u8]) -> Result<Vec<Value>, Error> {
    let text = std::str::from_utf8(input).map_err(|_| Error::Syntax {
        syntax: Syntax::Yaml,
        message: "invalid UTF-8".to_owned(),
        at: None,
    })?;
    let docs: Vec<Value> = if super::looks_like_json(text.trim_start().as_bytes()) {
        vec![serde_json::from_str(text).map_err(|e| Error::Syntax {
            syntax: Syntax::Json,
            message: crate::codec::text::scrub(&e.to_string()),
            at: None,
        })?]
    } else {
        let mut options = serde_saphyr::Options::default();
        options.with_snippet = false;
        let docs: Vec<Option<Value>> = serde_saphyr::from_str_multiple_with_options(text, options)
            .map_err(|e| Error::Syntax {
                syntax: Syntax::Yaml,
                message: crate::codec::text::scrub(&e.to_string()),
                at: None,
            })?;
        docs.into_iter().flatten().collect()
    };
    let mut objects = Vec::new();
    for doc in docs {
        flatten_lists(doc, &mut objects);
    }
    Ok(objects)
}

fn flatten_lists(doc: Value, out: &mut Vec<Value>) {
    let is_list = doc
        .get("kind")
        .and_then(Value::as_str)
        .is_some_and(|k| k.ends_with("List"))
        || (doc.get("kind").is_none() && doc.get("items").is_some());
    if is_list {
        if let Some(Value::Array(items)) = doc.get("items") {
            for item in items.clone() {
                flatten_lists(item, out);
            }
        }
    } else {
        out.push(doc);
    }
}
