//! Many Secrets at once: the parallel ordered map over a stream of Secrets, the memo that reads
//! each distinct payload once, and the JSON splice that writes a kept payload report under
//! each Secret's own fields. Private to the crate: the entry points of the reports
//! (`Inspector`, `Sizer`, `Linter`) are built on it.

pub(crate) mod memo;
mod parallel;

use serde::Serialize;

use crate::envelope::{BootstrapSecret, Input, Part, Selector, StreamSummary};
use crate::error::{Error, StreamError};
use crate::options::DecodeOptions;

pub(crate) use memo::Memo;

/// The most worker threads a run starts: more would only add memory (a few batches each) on
/// any machine this runs on, and a request past it is taken as this many.
pub const MAX_JOBS: usize = 256;

/// Runs `work` on every bootstrap Secret of `input` that `selector` picks on `jobs` threads
/// (0: one per CPU; at most [`MAX_JOBS`]), and `sink` on each result in input order: each
/// source of the input in turn, Secrets made in memory on the calling thread.
///
/// A selector that picks no Secret is [`Error::SecretNotFound`]. With several sources, one
/// that holds no bootstrap Secret is counted and passed over (an input without any is the
/// error of the last such source), and an error is named by its source ([`Error::InInput`]).
pub(crate) fn run<'r, T, E>(
    input: impl Into<Input<'r>>,
    options: &DecodeOptions,
    selector: &Selector,
    jobs: usize,
    work: impl Fn(&BootstrapSecret<'_>) -> T + Sync,
    mut sink: impl FnMut(T) -> Result<(), E>,
) -> Result<StreamSummary, StreamError<E>>
where
    T: Send,
{
    run_sourced(input, options, selector, jobs, work, |_, result| {
        sink(result)
    })
}

/// [`run`], with `sink` told the name of the source each result comes from: `Some` when the
/// input has several named sources (the files of a folder, `lint a.yaml b.yaml`), `None` for
/// a single source and for Secrets made in memory.
pub(crate) fn run_sourced<'r, T, E>(
    input: impl Into<Input<'r>>,
    options: &DecodeOptions,
    selector: &Selector,
    jobs: usize,
    work: impl Fn(&BootstrapSecret<'_>) -> T + Sync,
    mut sink: impl FnMut(Option<&str>, T) -> Result<(), E>,
) -> Result<StreamSummary, StreamError<E>>
where
    T: Send,
{
    let threads = match jobs {
        0 => std::thread::available_parallelism().map_or(1, usize::from),
        n => n,
    }
    .min(MAX_JOBS);
    let input = input.into();
    let several = input.len() > 1;
    let mut matched = 0usize;
    let mut total = StreamSummary::default();
    let mut nothing: Option<Error> = None;
    for part in input.parts {
        let source = match &part {
            Part::Read(Some(name), _) if several => Some(name.clone()),
            _ => None,
        };
        let mut deliver = |result: Option<T>| {
            let Some(result) = result else {
                return Ok(());
            };
            matched += 1;
            sink(source.as_deref(), result).map_err(StreamError::Sink)
        };
        let summary = match part {
            Part::Read(name, reader) => {
                match parallel::map_secrets(
                    reader,
                    options,
                    threads,
                    |secret| selector.matches(secret).then(|| work(secret)),
                    &mut deliver,
                ) {
                    Ok(summary) => summary,
                    Err(StreamError::Input(e)) if several && e.holds_no_bootstrap_secret() => {
                        nothing = Some(named(name, e));
                        continue;
                    }
                    Err(StreamError::Input(e)) if several => {
                        return Err(StreamError::Input(named(name, e)));
                    }
                    Err(e) => return Err(e),
                }
            }
            Part::Secrets(secrets) => {
                for secret in &secrets {
                    deliver(selector.matches(secret).then(|| work(secret)))?;
                }
                StreamSummary {
                    syntax: None,
                    secrets: secrets.len(),
                    skipped_secrets: 0,
                    skipped_objects: 0,
                }
            }
        };
        total.add(&summary);
    }
    if total.secrets == 0
        && let Some(e) = nothing
    {
        return Err(StreamError::Input(e));
    }
    if matched == 0 && !selector.is_all() {
        return Err(StreamError::Input(Error::SecretNotFound {
            wanted: selector.to_string(),
            available: total.secrets,
        }));
    }
    Ok(total)
}

/// `e`, named by its source when it has a name.
fn named(name: Option<String>, e: Error) -> Error {
    match name {
        Some(input) => Error::InInput {
            input,
            error: Box::new(e),
        },
        None => e,
    }
}

/// `value`'s JSON object, kept whole: [`json_object`] writes its fields (without the braces)
/// after a Secret's own fields. A value that does not serialise to an object gives `{}`.
pub(crate) fn json_fields(value: &impl Serialize) -> Vec<u8> {
    match serde_json::to_vec(value) {
        Ok(json) if json.len() >= 2 && json.starts_with(b"{") && json.ends_with(b"}") => json,
        _ => b"{}".to_vec(),
    }
}

/// One JSON object: the `own` fields (a Secret's name, namespace, …) and then the fields of
/// `object` (from [`json_fields`]), as `serde_json` writes a struct whose last field is
/// `#[serde(flatten)]`.
pub(crate) fn json_object(own: &[(&str, Option<&str>)], object: &[u8]) -> Vec<u8> {
    let fields = object
        .strip_prefix(b"{")
        .and_then(|f| f.strip_suffix(b"}"))
        .unwrap_or_default();
    let mut out = Vec::with_capacity(fields.len() + 128);
    out.push(b'{');
    for (i, (key, value)) in own.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        // Strings and `null` always serialise.
        let _ = serde_json::to_writer(&mut out, key);
        out.push(b':');
        let _ = serde_json::to_writer(&mut out, value);
    }
    if !fields.is_empty() {
        if !own.is_empty() {
            out.push(b',');
        }
        out.extend_from_slice(fields);
    }
    out.push(b'}');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Serialize)]
    struct Inner {
        format: &'static str,
        n: u32,
    }

    #[derive(Serialize)]
    struct Outer<'a> {
        name: Option<&'a str>,
        namespace: Option<&'a str>,
        #[serde(flatten)]
        inner: Inner,
    }

    #[test]
    fn the_splice_writes_what_serde_writes_for_a_flattened_struct() {
        for (name, namespace) in [(Some("a \"quoted\" name"), None), (None, Some("ns"))] {
            let whole = serde_json::to_vec(&Outer {
                name,
                namespace,
                inner: Inner {
                    format: "ignition",
                    n: 1,
                },
            })
            .expect("JSON");
            let fields = json_fields(&Inner {
                format: "ignition",
                n: 1,
            });
            let spliced = json_object(&[("name", name), ("namespace", namespace)], &fields);
            assert_eq!(
                String::from_utf8_lossy(&spliced),
                String::from_utf8_lossy(&whole)
            );
        }
        assert_eq!(json_object(&[("name", None)], b"{}"), br#"{"name":null}"#);
    }
}
