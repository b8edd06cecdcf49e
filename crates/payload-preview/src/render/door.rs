//! The door every report reads through: named sources (files, standard input), each told
//! apart by its first bytes ([`sniff_input`]). Sources of bootstrap Secrets alone are streamed
//! as they are; when any source holds template manifests, every source is read whole and
//! [`answer`]ed together, so that the Secrets any of them holds answer the templates of their
//! Clusters.

use std::io::Read;

use rke2_payload::{DecodeOptions, Error, Finding, Input};

use super::{Answer, RenderError, RenderOptions, Sniffed, Source, answer, sniff_input};

/// One named source: what messages call it, and its bytes.
pub type Named = (String, Box<dyn Read>);

/// What the reports read of their sources.
#[derive(Debug)]
#[non_exhaustive]
pub enum Door {
    /// Secrets to report on: streamed, read from the sources, or previewed.
    Secrets {
        /// The Secrets, as the reports read them.
        input: Input<'static>,
        /// How they were found, when any source held templates (`None`: streamed as they are).
        answer: Option<Answer>,
    },
    /// Template manifests of which nothing renders, and no Secret: the findings say why.
    Nothing {
        /// The sources' name (the file, or how many).
        name: String,
        /// The preview's findings.
        findings: Vec<Finding>,
        /// The ClusterClasses no Cluster of the sources uses, checked on their own
        /// ([`Preview::classes`](super::Preview::classes)): with none, nothing was checked
        /// either.
        classes: Vec<String>,
    },
}

impl Door {
    /// The manifest findings that say the data never reaches a machine
    /// ([`Finding::is_undeliverable`]: CAPRKE2 or the API server refuses an object, or the
    /// infrastructure provider the data) of a preview that made Secrets: a gate fails on them.
    pub fn refusals(&self) -> Vec<Finding> {
        match self {
            Door::Secrets {
                answer: Some(answer),
                ..
            } if !answer.preview.secrets.is_empty() => answer
                .preview
                .findings
                .iter()
                .filter(|f| f.is_undeliverable())
                .cloned()
                .collect(),
            _ => Vec::new(),
        }
    }
}

/// Why the door could not be opened.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DoorError {
    /// A source could not be read.
    #[error(transparent)]
    Read(#[from] Error),
    /// The manifests of `name` could not be rendered.
    #[error("rendering the manifests of {name}: {error}")]
    Render {
        /// The sources' name (the file, or how many).
        name: String,
        /// Why.
        error: RenderError,
    },
}

/// Opens the door on `sources` (a single source keeps its errors unnamed, as they always
/// were; several are named), previews templates with `render` options.
///
/// ```
/// use payload_preview::{Door, RenderOptions, open};
/// use rke2_payload::DecodeOptions;
///
/// let secret = b"kind: Secret\nmetadata: {name: a}\nstringData: {format: cloud-config, value: \"#cloud-config\\n\"}\n";
/// let sources = vec![("a.yaml".to_owned(), Box::new(&secret[..]) as Box<dyn std::io::Read>)];
/// let door = open(sources, &DecodeOptions::new(), &RenderOptions::new().with_seed(0))?;
/// assert!(matches!(door, Door::Secrets { answer: None, .. }));
/// # Ok::<(), payload_preview::DoorError>(())
/// ```
///
/// # Errors
/// [`DoorError::Read`] when a source cannot be read (or what may be manifests is over
/// [`DecodeOptions::max_input`]); [`DoorError::Render`] when templates do not render.
pub fn open(
    sources: Vec<Named>,
    decode: &DecodeOptions,
    render: &RenderOptions,
) -> Result<Door, DoorError> {
    let several = sources.len() > 1;
    let mut sniffed = Vec::with_capacity(sources.len());
    for (name, reader) in sources {
        let told = sniff_input(reader, &name, decode)?;
        sniffed.push((name, told));
    }
    if !sniffed
        .iter()
        .any(|(_, s)| matches!(s, Sniffed::Manifests(_)))
    {
        let input = sniffed
            .into_iter()
            .filter_map(|(name, told)| match told {
                Sniffed::Secrets(reader) if several => Some(Input::named(&name, reader)),
                Sniffed::Secrets(reader) => Some(Input::from(reader)),
                Sniffed::Manifests(_) => None,
            })
            .reduce(Input::and)
            .unwrap_or_else(|| Input::secrets(Vec::new()));
        return Ok(Door::Secrets {
            input,
            answer: None,
        });
    }
    let mut whole: Vec<(String, Vec<u8>)> = Vec::with_capacity(sniffed.len());
    for (name, told) in sniffed {
        let bytes = match told {
            Sniffed::Manifests(bytes) => bytes,
            Sniffed::Secrets(reader) => rke2_payload::read_all(reader, &name, decode)?,
        };
        whole.push((name, bytes));
    }
    let name = match whole.as_slice() {
        [(name, _)] => name.clone(),
        many => format!("{} files", many.len()),
    };
    let sources: Vec<Source<'_>> = whole
        .iter()
        .map(|(name, bytes)| Source { name, bytes })
        .collect();
    let mut answered = answer(&sources, render, decode).map_err(|error| DoorError::Render {
        name: name.clone(),
        error,
    })?;
    if answered.secrets.is_empty() {
        return Ok(Door::Nothing {
            name,
            findings: answered.preview.findings,
            classes: answered.preview.classes,
        });
    }
    let input = Input::secrets(std::mem::take(&mut answered.secrets));
    Ok(Door::Secrets {
        input,
        answer: Some(answered),
    })
}
