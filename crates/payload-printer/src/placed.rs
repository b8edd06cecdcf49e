//! Where the CI formats place each finding, and the repository they place it in.

use std::path::{Component, Path, PathBuf};

use rke2_payload::{Finding, LintReport, LintedSecret};

use crate::lint::title;
use crate::style::safe;

/// Where the files of the CI reports are: the working directory (what a relative input path
/// is relative to) and the root of the repository it is in, which SARIF and GitHub
/// annotations name files relative to.
///
/// The caller finds them (the `rke2-payload` binary: the working directory, and its nearest
/// ancestor with a `.git`, else `GITHUB_WORKSPACE`); the printers read the file system only to
/// follow symbolic links between a file and the root.
///
/// ```
/// use payload_printer::Repository;
///
/// let repository = Repository::new("/home/me/repo/sub".into(), Some("/home/me/repo".into()));
/// assert_eq!(repository.relative("../manifests/x.yaml").as_deref(), Some("manifests/x.yaml"));
/// assert_eq!(repository.relative("/elsewhere/x.yaml"), None);
/// ```
#[derive(Debug, Clone)]
pub struct Repository {
    cwd: PathBuf,
    root: Option<PathBuf>,
}

impl Repository {
    /// The working directory `cwd` (absolute) and the repository root, if there is one.
    pub fn new(cwd: PathBuf, root: Option<PathBuf>) -> Self {
        Repository { cwd, root }
    }

    /// The file relative to the repository root when it is inside it (`/`-separated),
    /// however it was typed (`./x`, `x`, `/abs/x`, or through a symbolic link).
    pub fn relative(&self, file: &str) -> Option<String> {
        let absolute = normal(&self.cwd.join(file));
        let root = normal(self.root.as_ref()?);
        absolute
            .strip_prefix(&root)
            .ok()
            .map(Path::to_path_buf)
            .or_else(|| {
                // The same place through a symbolic link.
                let real = std::fs::canonicalize(&absolute).ok()?;
                let real_root = std::fs::canonicalize(&root).ok()?;
                real.strip_prefix(real_root).ok().map(Path::to_path_buf)
            })
            .map(|relative| slashed(&relative))
    }

    /// The file's location in SARIF: relative to the repository root when it is inside it
    /// (with the base id), else its absolute `file:` URI.
    pub(crate) fn locate(&self, file: &str) -> serde_json::Value {
        match self.relative(file) {
            Some(relative) => serde_json::json!({
                "uri": uri_reference(&relative),
                "uriBaseId": "%SRCROOT%",
            }),
            None => {
                let absolute = normal(&self.cwd.join(file));
                serde_json::json!({"uri": format!("file://{}", uri_reference(&slashed(&absolute)))})
            }
        }
    }

    /// SARIF's `originalUriBaseIds`: where `%SRCROOT%` is.
    pub(crate) fn base_ids(&self) -> Option<serde_json::Value> {
        let root = normal(self.root.as_ref()?);
        let mut uri = format!("file://{}", uri_reference(&slashed(&root)));
        if !uri.ends_with('/') {
            uri.push('/');
        }
        Some(serde_json::json!({"%SRCROOT%": {"uri": uri}}))
    }

    /// A file as GitHub's annotations name it: relative to the repository root when it is
    /// inside it (however it was typed), else as given.
    pub(crate) fn repository_path(&self, file: &str) -> String {
        self.relative(file).unwrap_or_else(|| file.to_owned())
    }
}

/// The path with `.` and `..` resolved without touching the file system.
fn normal(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

/// A path with `/` between its parts.
fn slashed(path: &Path) -> String {
    let parts: Vec<String> = path
        .components()
        .filter_map(|c| match c {
            Component::Normal(p) => Some(p.to_string_lossy().into_owned()),
            _ => None,
        })
        .collect();
    let joined = parts.join("/");
    if path.has_root() {
        format!("/{joined}")
    } else {
        joined
    }
}

/// A path as a URI reference: every byte outside RFC 3986's unreserved characters and `/`
/// percent-encoded (a backslash is a file name character here, not a separator).
fn uri_reference(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    for b in path.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' | b'/' => {
                out.push(b as char);
            }
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

/// A finding of a report with where the CI formats place it: the Secret's findings at the
/// line of its value in the input file, the manifests' at their object's line in the file it
/// came from (the input, or a file `render` read).
pub(crate) struct Placed<'r> {
    pub(crate) finding: &'r Finding,
    /// The Secret or object, in words (with the file and line inside the payload).
    pub(crate) place: String,
    /// `Kind namespace/name` or the Secret's title: what the message is about.
    pub(crate) who: String,
    pub(crate) file: Option<String>,
    pub(crate) line: Option<u64>,
    /// What identifies the finding from run to run.
    pub(crate) key: String,
}

impl Placed<'_> {
    /// The finding's message for a CI report, after `about` (the Secret's title or place),
    /// unless it is a manifest finding, whose message names its object already.
    pub(crate) fn message(&self, about: &str) -> String {
        if self.finding.manifest.is_some() {
            self.finding.message.clone()
        } else {
            format!("{about}: {}", self.finding.message)
        }
    }
}

/// Every finding of a report, placed; `input` is the file the input stands for (`None`:
/// standard input or the cluster, with no name).
pub(crate) fn placed<'r>(report: &'r LintReport, input: Option<&Path>) -> Vec<Placed<'r>> {
    let input = input.map(|path| path.display().to_string());
    let mut out = Vec::new();
    for f in &report.manifests {
        let (who, file, line) = match &f.manifest {
            Some(site) => (
                site.object.clone(),
                (site.file != "-").then(|| site.file.clone()),
                site.line,
            ),
            None => ("manifests".to_owned(), input.clone(), None),
        };
        out.push(Placed {
            finding: f,
            place: who.clone(),
            key: format!("{}\n{who}\n\n{}", f.id(), f.message),
            who,
            file,
            line,
        });
    }
    for s in &report.secrets {
        // A rendered Secret's findings point at the object it was rendered from, in its file;
        // a Secret read from one of several input files, at its line in that file.
        let (file, line) = match &s.rendered_from {
            Some(site) if site.file != "-" => (Some(site.file.clone()), site.line),
            _ => (s.file.clone().or_else(|| input.clone()), s.line),
        };
        for f in &s.findings {
            out.push(Placed {
                finding: f,
                place: place(s, f),
                who: title(s),
                file: file.clone(),
                line,
                key: finding_key(s, f),
            });
        }
    }
    out
}

/// Where a finding is, in words: the Secret, the file of its payload, the line in the user data.
pub(crate) fn place(s: &LintedSecret, f: &Finding) -> String {
    let mut at = title(s);
    if let Some(p) = &f.path {
        at.push_str(&format!(" {}", safe(p)));
    }
    if let Some(l) = f.line {
        at.push_str(&format!(" line {l}"));
    }
    at
}

/// What identifies a finding from run to run: the check, the Secret (and the input file it was
/// read from, of several), the file of its payload, the message.
fn finding_key(s: &LintedSecret, f: &Finding) -> String {
    let who = match &s.file {
        Some(file) => format!("{} in {file}", title(s)),
        None => title(s),
    };
    format!(
        "{}\n{who}\n{}\n{}",
        f.id(),
        f.path.as_deref().unwrap_or(""),
        f.message
    )
}

/// A short stable fingerprint of a finding (FNV-1a, 64 bits, in hex): the same finding in the
/// same Secret keeps it from run to run.
pub(crate) fn fingerprint(key: &str) -> String {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for b in key.bytes() {
        hash ^= u64::from(b);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    format!("{hash:016x}")
}

#[cfg(test)]
mod tests {
    use super::{Repository, fingerprint, uri_reference};

    #[test]
    fn fingerprints_are_fnv1a() {
        // FNV-1a of the empty string and of "a", as published.
        assert_eq!(fingerprint(""), "cbf29ce484222325");
        assert_eq!(fingerprint("a"), "af63dc4c8601ec8c");
    }

    #[test]
    fn uris_escape_what_is_not_unreserved() {
        assert_eq!(uri_reference("a b/c\\d%"), "a%20b/c%5Cd%25");
    }

    #[test]
    fn files_outside_the_repository_are_absolute_uris() {
        let repository = Repository::new("/r/sub".into(), Some("/r".into()));
        assert_eq!(
            repository.locate("./x.yaml"),
            serde_json::json!({"uri": "sub/x.yaml", "uriBaseId": "%SRCROOT%"})
        );
        assert_eq!(
            repository.locate("/o/x y.yaml"),
            serde_json::json!({"uri": "file:///o/x%20y.yaml"})
        );
        assert_eq!(
            repository.base_ids(),
            Some(serde_json::json!({"%SRCROOT%": {"uri": "file:///r/"}}))
        );
        assert_eq!(Repository::new("/r".into(), None).repository_path("x"), "x");
    }
}
