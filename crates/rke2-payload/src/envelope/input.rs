//! Reading input from a file or standard input.

use std::io::Read;
use std::path::Path;

use crate::codec::text::terminal_safe;
use crate::error::Error;
use crate::options::DecodeOptions;

/// Reads all of `path`, or standard input when `path` is `-`, refusing more than
/// [`DecodeOptions::max_input`] bytes (without reading more than that).
///
/// # Errors
/// [`Error::Io`] when it cannot be read, [`Error::InputTooLarge`] past the cap.
pub fn read_input(path: &Path, options: &DecodeOptions) -> Result<Vec<u8>, Error> {
    let what = if path.as_os_str() == "-" {
        "standard input".to_owned()
    } else {
        terminal_safe(&path.display().to_string()).into_owned()
    };
    if path.as_os_str() == "-" {
        return read_all(std::io::stdin().lock(), &what, options);
    }
    let file = std::fs::File::open(path).map_err(|error| Error::Io {
        what: what.clone(),
        error,
    })?;
    // Room for the whole file at once (read_to_end would double its buffer as it reads,
    // holding up to twice the input): a file that grows meanwhile is read on as before.
    let len = file.metadata().map_or(0, |m| m.len());
    read_into(file, &what, options, len)
}

/// Reads all of `reader`, named `what` in errors (a file path, `standard input`, a command),
/// refusing more than [`DecodeOptions::max_input`] bytes (without reading more than that).
///
/// ```
/// use rke2_payload::{DecodeOptions, read_all};
///
/// let options = DecodeOptions::new().with_max_input(4);
/// assert_eq!(read_all(&b"abcd"[..], "text", &options)?, b"abcd");
/// assert!(read_all(&b"abcde"[..], "text", &options).is_err());
/// # Ok::<(), rke2_payload::Error>(())
/// ```
///
/// # Errors
/// [`Error::Io`] when it cannot be read, [`Error::InputTooLarge`] past the cap.
pub fn read_all(reader: impl Read, what: &str, options: &DecodeOptions) -> Result<Vec<u8>, Error> {
    read_into(reader, what, options, 0)
}

/// [`read_all`] with room for `expected` bytes made first.
fn read_into(
    reader: impl Read,
    what: &str,
    options: &DecodeOptions,
    expected: u64,
) -> Result<Vec<u8>, Error> {
    let limit = options.max_input.saturating_add(1);
    let mut buf = Vec::new();
    buf.reserve_exact(usize::try_from(expected.min(limit)).unwrap_or(0));
    reader
        .take(limit)
        .read_to_end(&mut buf)
        .map_err(|error| Error::Io {
            what: what.to_owned(),
            error,
        })?;
    if buf.len() as u64 > options.max_input {
        return Err(Error::InputTooLarge {
            what: what.to_owned(),
            limit: options.max_input,
        });
    }
    Ok(buf)
}

/// What a report reads: one or more sources in order, each a byte stream (a file, standard
/// input, `kubectl`'s output) or bootstrap Secrets made in memory (a preview's, each with its
/// typed [`Origin`](super::Origin)). A reader converts into one (`Input::from(reader)`), so
/// anything that reads bytes can be given where an `Input` is asked for.
///
/// ```
/// use rke2_payload::{DecodeOptions, Input, InspectOptions, Inspector, Selector};
///
/// let a = "kind: Secret\nmetadata: {name: a}\nstringData: {format: cloud-config, value: \"#cloud-config\\n\"}\n";
/// let b = r##"{"kind": "Secret", "metadata": {"name": "b"}, "stringData": {"format": "cloud-config", "value": "#cloud-config\n"}}
/// {"kind": "Secret", "metadata": {"name": "c"}, "stringData": {"format": "cloud-config", "value": "#cloud-config\n"}}"##;
/// let input = Input::named("a.yaml", a.as_bytes()).and(Input::named("b.json", b.as_bytes()));
/// let inspector = Inspector::new(InspectOptions::new());
/// let mut names = Vec::new();
/// inspector.for_each(input, &Selector::default(), 1, |_, s| s.name().map(str::to_owned), |n| {
///     names.push(n.unwrap_or_default());
///     Ok::<(), std::convert::Infallible>(())
/// })?;
/// assert_eq!(names, ["a", "b", "c"]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct Input<'r> {
    pub(crate) parts: Vec<Part<'r>>,
}

/// One source of an [`Input`].
pub(crate) enum Part<'r> {
    /// Bytes to split into objects, and the source's name for messages (`None`: the only one).
    Read(Option<String>, Box<dyn Read + 'r>),
    /// Secrets made in memory.
    Secrets(Vec<super::BootstrapSecret<'static>>),
}

impl std::fmt::Debug for Input<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let parts: Vec<String> = self
            .parts
            .iter()
            .map(|p| match p {
                Part::Read(name, _) => name.clone().unwrap_or_else(|| "a reader".to_owned()),
                Part::Secrets(s) => format!("{} Secrets", s.len()),
            })
            .collect();
        f.debug_struct("Input").field("parts", &parts).finish()
    }
}

impl<'r, R: Read + 'r> From<R> for Input<'r> {
    fn from(reader: R) -> Self {
        Input {
            parts: vec![Part::Read(None, Box::new(reader))],
        }
    }
}

impl<'r> Input<'r> {
    /// An input of one source named `name` (for messages: a file path, `standard input`).
    pub fn named(name: &str, reader: impl Read + 'r) -> Self {
        Input {
            parts: vec![Part::Read(
                Some(terminal_safe(name).into_owned()),
                Box::new(reader),
            )],
        }
    }

    /// An input of Secrets made in memory (a preview's, `Preview::to_secrets`).
    pub fn secrets(secrets: Vec<super::BootstrapSecret<'static>>) -> Self {
        Input {
            parts: vec![Part::Secrets(secrets)],
        }
    }

    /// This input, then `other`.
    pub fn and(mut self, other: Input<'r>) -> Self {
        self.parts.extend(other.parts);
        self
    }

    /// How many sources it has.
    pub fn len(&self) -> usize {
        self.parts.len()
    }

    /// Whether it has no source.
    pub fn is_empty(&self) -> bool {
        self.parts.is_empty()
    }
}

/// The files `paths` name, in order, as kubectl's `-f` reads them: a file as it is, `-` for
/// standard input, a folder as its files whose names end in `.yaml`, `.yml` or `.json`
/// (sorted by name; with `recursive`, its subfolders' too, as `kubectl -f DIR -R`).
///
/// # Errors
/// [`Error::Io`] when a folder cannot be listed, [`Error::EmptyFolder`] when a folder holds no
/// such file.
pub fn input_files(
    paths: &[std::path::PathBuf],
    recursive: bool,
) -> Result<Vec<std::path::PathBuf>, Error> {
    let mut out = Vec::new();
    for path in paths {
        if path.as_os_str() != "-" && path.is_dir() {
            let before = out.len();
            folder_files(path, recursive, &mut out, 0)?;
            if out.len() == before {
                return Err(Error::EmptyFolder {
                    folder: terminal_safe(&path.display().to_string()).into_owned(),
                });
            }
        } else {
            out.push(path.clone());
        }
    }
    Ok(out)
}

/// Folders nested deeper than this are not followed (a loop of links, a hostile tree).
const MAX_FOLDER_DEPTH: usize = 32;

fn folder_files(
    dir: &Path,
    recursive: bool,
    out: &mut Vec<std::path::PathBuf>,
    depth: usize,
) -> Result<(), Error> {
    let io = |error| Error::Io {
        what: terminal_safe(&dir.display().to_string()).into_owned(),
        error,
    };
    let mut entries: Vec<std::path::PathBuf> = std::fs::read_dir(dir)
        .map_err(io)?
        .map(|e| e.map(|e| e.path()))
        .collect::<Result<_, _>>()
        .map_err(io)?;
    entries.sort();
    for path in entries {
        if path.is_dir() {
            if recursive && depth < MAX_FOLDER_DEPTH {
                folder_files(&path, recursive, out, depth + 1)?;
            }
        } else if path
            .extension()
            .is_some_and(|e| e == "yaml" || e == "yml" || e == "json")
        {
            out.push(path);
        }
    }
    Ok(())
}
