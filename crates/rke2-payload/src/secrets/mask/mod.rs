//! What is secret in user data, decided on the parsed document, and the document written again
//! with every secret replaced by the placeholder.
//!
//! Every value reaches a decision after the parser (quoting, escapes, tags, anchors, folded
//! scalars resolved) and after every encoding it sits in (base64, gzip, `data:` URLs,
//! `write_files` encodings). Where the structure is known the decision is an allow-list:
//!
//! - RKE2's `config.yaml` and its drop-ins: only keys known to carry no secret keep their values
//!   (the table in `rke2_flags`, built from RKE2's own flags); keys compare as RKE2's config
//!   loader reads them (case, `_` for `-`, one-letter aliases, a trailing `+`); any other key,
//!   unknown ones included, is masked whatever its type; `datastore-endpoint` keeps all but its
//!   password; `*-arg` lists keep all but the values of secret options.
//! - `registries.yaml`: everything under a registry's `auth` is masked.
//! - Files that are secrets by what they are (token files, the node password, private keys) are
//!   masked whole.
//! - cloud-config and Ignition: the fields that hold passwords and keys are masked, commands are
//!   read word by word (also in argv form), files by their path.
//!
//! Free text (commands, scripts, units, files of no known structure) goes through the detector
//! ([`text`]). A value known to be secret is masked wherever else it appears (`cni: <token>`).
//! Booleans, nulls and numbers under keys not known to be secret are kept (they carry no
//! text).
//!
//! The result is written back into the text at each value's place ([`crate::codec::tree`]);
//! where a value cannot be written there (a folded scalar), the document is written again in
//! flow style from the masked tree.

pub(crate) mod text;

use std::cell::OnceCell;

use aho_corasick::{AhoCorasick, MatchKind};
use std::collections::{HashMap, HashSet};
use std::ops::Range;

use crate::codec::tree::{self, Edit, Node, Style};
use crate::codec::{b64, dataurl, gzip};

use super::rke2_flags;

/// What `redact` writes in place of a secret.
const PLACEHOLDER: &str = super::PLACEHOLDER;
/// The most bytes a compressed part may inflate to.
const INFLATE_CAP: u64 = 64 << 20;
/// Known values shorter than this are masked where they stand, not searched for elsewhere
/// (they would mask ordinary words).
pub(crate) const MIN_SEARCHED: usize = 6;
/// How deep documents may nest in one another.
const MAX_NESTING: usize = 16;
/// Longer values (a whole copy of an object in an annotation) are masked where they stand.
const MAX_SEARCHED: usize = 64 << 10;

/// Why a part could not be masked: it could hold a secret and cannot be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct MaskError {
    /// The part (`the cloud-config`, a file's path).
    pub(crate) part: String,
    /// Why, with no input text.
    pub(crate) why: String,
}

fn refuse(part: impl Into<String>, why: impl Into<String>) -> MaskError {
    MaskError {
        part: part.into(),
        why: why.into(),
    }
}

/// Values known to be secret (searched for wherever text is kept), and the parts of
/// structured values that were decided public (a URL's scheme, user, host and path), which a
/// secret equal to one of them cannot be told from.
#[derive(Clone, Default)]
pub(crate) struct Known {
    /// In the order found.
    values: Vec<String>,
    seen: HashSet<String>,
    public: HashSet<String>,
    /// The values searched for, longest first, and their automaton (made again after each
    /// change).
    searched: OnceCell<(Vec<String>, Option<AhoCorasick>)>,
    /// Whether values are searched for yet: not while they are still being found (a first
    /// pass, the reports' collection), where each new value would build the automaton again.
    quiet: bool,
}

/// Counts only: the values are secrets.
impl std::fmt::Debug for Known {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Known")
            .field("values", &self.values.len())
            .field("public", &self.public.len())
            .finish_non_exhaustive()
    }
}

/// Whether `value` is the placeholder in base64 (a `!!binary` value redact wrote): already
/// masked, so a second redaction leaves it as it is.
fn is_placeholder_b64(value: &str) -> bool {
    value.len() == crate::codec::b64::encoded_len(PLACEHOLDER.len() as u64) as usize
        && crate::codec::b64::encode(PLACEHOLDER.as_bytes()) == value
}

impl Known {
    /// Adds a secret value (a document's text, a JSON or YAML collection, is masked where it
    /// stands but not searched for: its pieces are ordinary text).
    pub(crate) fn add(&mut self, value: &str) {
        let value = value.trim();
        if value.len() >= MIN_SEARCHED
            && value.len() <= MAX_SEARCHED
            && value != PLACEHOLDER
            && !is_placeholder_b64(value)
            && !value.starts_with(['{', '['])
            && !text::harmless(value)
            && !dictionary_word(value)
            && self.seen.insert(value.to_owned())
        {
            self.values.push(value.to_owned());
            self.searched = OnceCell::new();
        }
    }

    /// Adds a part decided public.
    fn add_public(&mut self, value: &str) {
        if !value.is_empty() && self.public.insert(value.to_owned()) {
            self.searched = OnceCell::new();
        }
    }

    /// The secret values to search for: longest first, without those equal to a public part.
    pub(crate) fn searched(&self) -> &[String] {
        &self.search().0
    }

    fn search(&self) -> &(Vec<String>, Option<AhoCorasick>) {
        self.searched.get_or_init(|| {
            let mut out: Vec<String> = self
                .values
                .iter()
                .filter(|v| !self.public.contains(*v))
                .cloned()
                .collect();
            out.sort_by_key(|v| std::cmp::Reverse(v.len()));
            let automaton = (!out.is_empty())
                .then(|| {
                    AhoCorasick::builder()
                        .match_kind(MatchKind::LeftmostLongest)
                        .build(&out)
                        .ok()
                })
                .flatten();
            (out, automaton)
        })
    }

    /// Every occurrence of a searched value in `text` (all values at once: linear in the text).
    pub(crate) fn occurrences(&self, text: &str, spans: &mut Vec<Range<usize>>) {
        if self.quiet {
            return;
        }
        if let (_, Some(automaton)) = self.search() {
            spans.extend(automaton.find_iter(text).map(|m| m.start()..m.end()));
        }
    }

    /// Merges another set in.
    pub(crate) fn extend(&mut self, other: &Known) {
        for v in &other.values {
            self.add(v);
        }
        for p in &other.public {
            self.add_public(p);
        }
    }
}

/// A short word of lower-case letters (`rancher`, `postgres`): masked where it stands as a
/// secret, but not searched for elsewhere, where it is far more often a name or a path.
fn dictionary_word(value: &str) -> bool {
    value.len() < 12 && value.bytes().all(|b| b.is_ascii_lowercase())
}

/// Whether a key names a reference to a secret rather than the secret (`client-secret-file`,
/// `client-id`, `token_path`, `auth-url`): its last part says so.
fn reference_name(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    let last = lower.rsplit(['-', '_', '.']).next().unwrap_or("");
    matches!(
        last,
        "file"
            | "path"
            | "dir"
            | "ref"
            | "name"
            | "type"
            | "mode"
            | "url"
            | "endpoint"
            | "id"
            | "region"
            | "username"
            | "user"
    ) || lower.ends_with("id") && lower.len() > 2 && lower[..lower.len() - 2].ends_with(['-', '_'])
}

/// Whether a key's name says its value is secret. A key with spaces (a command line YAML read
/// as a mapping: `curl -H 'Authorization: …'`) is judged by its last word.
pub(crate) fn secret_key(name: &str) -> bool {
    let last = name
        .rsplit([' ', '\t'])
        .next()
        .unwrap_or(name)
        .trim_matches(['"', '\'']);
    let lower = last.to_ascii_lowercase().replace('_', "-");
    super::secret_name(name)
        || super::secret_name(last)
        || lower.ends_with("authorization")
        // cloud-init modules' keys: `rh_subscription.activation-key`,
        // `landscape.client.registration_key`.
        || lower.ends_with("activation-key")
        || lower.ends_with("registration-key")
}

/// One scalar to write again.
#[derive(Debug, Clone)]
pub(crate) struct Change {
    span: Range<usize>,
    style: Style,
    column: usize,
    value: String,
}

/// How a document of a known kind is walked.
type Walk<'a> = dyn FnMut(&mut Masker, &Node, &mut Vec<Change>) -> Result<(), MaskError> + 'a;
/// What is done to the bytes under a resource's `data:` URL.
type Inner<'a> = dyn FnMut(&mut Masker, Vec<u8>) -> Result<Vec<u8>, MaskError> + 'a;

/// Decides and writes; one per payload, run twice (the second run knows every secret the first
/// one found, and masks where they reappear).
#[derive(Debug, Default)]
pub(crate) struct Masker {
    /// Secrets found so far (and, on the second run, every one of the first).
    pub(crate) known: Known,
    /// Files `config.yaml` names as holding a token (`token-file`, `agent-token-file`): masked
    /// whole wherever they are written.
    token_files: Vec<String>,
    /// Only find the secrets (for the reports): nothing is written.
    collect_only: bool,
    /// How many documents the one being read is inside.
    depth: usize,
    /// Why a file of known structure inside the document being read cannot be masked (its
    /// enclosing document then refuses, rather than mask the file whole and lose it).
    refused: Option<MaskError>,
}

/// User data with its secrets masked, and what was masked.
#[derive(Debug)]
pub(crate) struct Masked {
    /// The new text.
    pub(crate) text: String,
    /// The secrets masked and the parts decided public.
    pub(crate) known: Known,
}

/// Masks user data (a cloud-config, an Ignition config, a shell script): the text again, and
/// what it masked.
///
/// # Errors
/// A part that could hold a secret and cannot be read.
pub(crate) fn userdata(text: &str, known: &Known) -> Result<Masked, MaskError> {
    // The first pass finds; the second masks, with every value found, where they reappear.
    let mut quiet = known.clone();
    quiet.quiet = true;
    let mut first = Masker {
        known: quiet,
        token_files: Vec::new(),
        collect_only: false,
        depth: 0,
        refused: None,
    };
    first.userdata(text)?;
    let mut found = first.known.clone();
    found.quiet = false;
    let mut second = Masker {
        known: found,
        token_files: first.token_files.clone(),
        collect_only: false,
        depth: 0,
        refused: None,
    };
    let out = second.userdata(text)?;
    second.known.extend(&first.known);
    Ok(Masked {
        text: out,
        known: second.known,
    })
}

impl Masker {
    /// A masker that knows these secrets already.
    pub(crate) fn knowing(known: Known) -> Self {
        Masker {
            known,
            ..Masker::default()
        }
    }

    /// User data: Ignition (JSON), cloud-config, or a script.
    pub(crate) fn userdata(&mut self, text: &str) -> Result<String, MaskError> {
        let trimmed = text.trim_start_matches(['\u{feff}', ' ', '\t', '\r', '\n']);
        if trimmed.starts_with('{') {
            return self.ignition(text);
        }
        let first = trimmed.lines().next().unwrap_or("");
        // cloud-init reads a MIME message wherever its headers are, and an archive or include
        // list by its first line: parts redact does not read.
        let head = trimmed
            .get(..trimmed.len().min(4096))
            .unwrap_or(trimmed)
            .to_ascii_lowercase();
        if head.contains("mime-version:")
            || head.starts_with("content-type:")
            || first.starts_with("#include")
            || first.starts_with("#cloud-config-archive")
        {
            return Err(refuse(
                "the user data",
                "it is a MIME multi-part, an archive or an include list, which redact does not read",
            ));
        }
        let jinja = first.starts_with("## template:");
        let cloud_config = first.starts_with("#cloud-config")
            || (jinja
                && trimmed
                    .lines()
                    .nth(1)
                    .is_some_and(|l| l.starts_with("#cloud-config")));
        if cloud_config {
            return self.document(text, "the cloud-config", &mut |m, node, out| {
                m.cloud_config(node, out);
                Ok(())
            });
        }
        if first.starts_with("#!") || jinja {
            return Ok(self.free(text));
        }
        // Anything else cloud-init would not run as a cloud-config; read it as YAML if it is,
        // as text otherwise.
        match tree::parse(text) {
            Ok(docs) if docs.iter().any(|d| matches!(d, Node::Map(_))) => {
                self.document(text, "the user data", &mut |m, node, out| {
                    m.cloud_config(node, out);
                    Ok(())
                })
            }
            _ => Ok(self.free(text)),
        }
    }

    /// Free text with its secret parts masked (each part found is known from then on).
    pub(crate) fn free(&mut self, text: &str) -> String {
        let spans = text::spans(text, &self.known);
        text::replace_spans(text, &spans, |secret| {
            self.known.add(secret);
            PLACEHOLDER.to_owned()
        })
    }

    /// Parses a YAML (or JSON) text, walks each document with `walk`, and writes the text
    /// again: in place where each value allows, else the whole text in flow style; the result
    /// is read back and must hold the masked values.
    fn document(
        &mut self,
        text: &str,
        part: &str,
        walk: &mut Walk<'_>,
    ) -> Result<String, MaskError> {
        let (docs, repaired) = match tree::parse(text) {
            Ok(docs) => (docs, None),
            // A merge key is refused as it is, never "repaired" into text.
            Err(e) if !e.syntax => return Err(refuse(part, e.message)),
            Err(e) => {
                // CAPRKE2's unquoted `airGappedChecksum` item: read as the document layer
                // repairs it.
                let fixed = crate::codec::yaml::repaired(text, e.line)
                    .ok_or_else(|| refuse(part, e.message.clone()))?;
                let docs = tree::parse(&fixed).map_err(|e| refuse(part, e.message))?;
                (docs, Some(fixed))
            }
        };
        let source = repaired.as_deref().unwrap_or(text);
        let mut changes = Vec::new();
        // Documents inside documents (a config in a data URL in a merged config …) nest only
        // so deep.
        if self.depth >= MAX_NESTING {
            return Err(refuse(
                part,
                format!("it nests documents more than {MAX_NESTING} deep"),
            ));
        }
        self.depth += 1;
        let walked: Result<(), MaskError> = docs
            .iter()
            .try_for_each(|doc| walk(self, doc, &mut changes));
        self.depth -= 1;
        walked?;
        if let Some(e) = self.refused.take() {
            return Err(e);
        }
        if self.collect_only {
            return Ok(text.to_owned());
        }
        let out = if changes.is_empty() {
            text.to_owned()
        } else {
            write(source, &docs, changes).ok_or_else(|| {
                refuse(
                    part,
                    "it could not be written again with its secrets masked",
                )
            })?
        };
        Ok(self.mask_comments(out))
    }

    /// `text` (a YAML document written again) with its comments masked too: a private key
    /// written in comment lines, known secrets and what the detector finds (`# password: …`
    /// beside the real key). Kept only if the documents still read the same.
    pub(crate) fn mask_comments(&self, out: String) -> String {
        let commented = self.comments(&out);
        if commented == out {
            return out;
        }
        // Comments only: the documents read the same (their spans moved).
        let same_documents = match (tree::parse(&commented), tree::parse(&out)) {
            (Ok(a), Ok(b)) => {
                a.len() == b.len() && a.iter().zip(&b).all(|(x, y)| same(x, y, &|_| None))
            }
            _ => false,
        };
        if same_documents { commented } else { out }
    }

    /// `text` with the secret parts of its comments masked.
    fn comments(&self, text: &str) -> String {
        if !text.contains('#') {
            return text.to_owned();
        }
        let mut out = String::with_capacity(text.len());
        // A private key written in comment lines: its body lines become `#`, the first one
        // `# REDACTED`.
        let mut key_body: Option<bool> = None;
        for line in text.split_inclusive('\n') {
            let trimmed = line.trim_start();
            if trimmed.starts_with('#') {
                let indent = &line[..line.len() - trimmed.len()];
                let break_ = &line[line.trim_end_matches(['\n', '\r']).len()..];
                match key_body {
                    Some(first) if !trimmed.contains("-----END ") => {
                        out.push_str(indent);
                        out.push_str(if first { "# REDACTED" } else { "#" });
                        out.push_str(break_);
                        key_body = Some(false);
                        continue;
                    }
                    Some(_) => key_body = None,
                    None if trimmed.contains("-----BEGIN ")
                        && (trimmed.contains("PRIVATE") || trimmed.contains("SECRET")) =>
                    {
                        key_body = Some(true);
                    }
                    None => {}
                }
            } else {
                key_body = None;
            }
            let at = if trimmed.starts_with('#') {
                Some(line.len() - trimmed.len())
            } else {
                line.find(" #")
            };
            match at {
                Some(at) => {
                    let (code, comment) = line.split_at(at);
                    out.push_str(code);
                    out.push_str(&splice(comment, &text::spans(comment, &self.known)));
                }
                None => out.push_str(line),
            }
        }
        out
    }

    // ---- values --------------------------------------------------------------------------

    /// Writes `value` in place of a scalar's.
    pub(crate) fn set(&mut self, node: &Node, mut value: String, out: &mut Vec<Change>) {
        if let Node::Scalar {
            span,
            style,
            column,
            value: old,
            ..
        } = node
            && *old != value
        {
            // A block scalar keeps its final line breaks (its header's chomping decides them,
            // and the header stays): the placeholder of `|` text ends as the text did.
            if matches!(style, Style::Literal | Style::Folded) && !value.ends_with('\n') {
                let breaks = old.len() - old.trim_end_matches('\n').len();
                value.push_str(&"\n".repeat(breaks));
            }
            out.push(Change {
                span: span.clone(),
                style: *style,
                column: *column,
                value,
            });
        }
    }

    /// Every scalar of a subtree masked (booleans and nulls carry no text and stay).
    pub(crate) fn mask_all(&mut self, node: &Node, out: &mut Vec<Change>) {
        match node {
            Node::Scalar { value, tag, .. } => {
                if node.is_plain_bool_or_null() || value.is_empty() || value == PLACEHOLDER {
                    return;
                }
                self.known.add(value);
                // A `!!binary` value stays binary: the placeholder's bytes, base64-encoded.
                let binary = tag.as_deref().is_some_and(|t| t.ends_with(":binary"));
                if binary {
                    let compact: String = value.chars().filter(|c| !c.is_whitespace()).collect();
                    if let Ok(decoded) = b64::decode(&compact)
                        && let Ok(text) = String::from_utf8(decoded)
                    {
                        self.known.add(&text);
                    }
                    self.set(node, b64::encode(PLACEHOLDER.as_bytes()), out);
                } else {
                    self.set(node, PLACEHOLDER.to_owned(), out);
                }
            }
            Node::Seq(items) => items.iter().for_each(|i| self.mask_all(i, out)),
            Node::Map(entries) => entries.iter().for_each(|(_, v)| self.mask_all(v, out)),
        }
    }

    /// A value under a key whose name says secret: masked, unless it is a boolean, a null or
    /// a path.
    fn secret_value(&mut self, node: &Node, out: &mut Vec<Change>) {
        match node {
            Node::Scalar { value, .. } if text::harmless(value) => {}
            // A mapping under `auth:` or `credentials:`: every value masked but those whose
            // key names a reference (a file, a path, an id, a URL).
            Node::Map(entries) => {
                for (k, v) in entries {
                    if reference_name(k.as_str().unwrap_or("")) {
                        self.generic(v, out);
                    } else {
                        self.secret_value(v, out);
                    }
                }
            }
            _ => self.mask_all(node, out),
        }
    }

    /// A scalar of free text.
    fn text_value(&mut self, node: &Node, out: &mut Vec<Change>) {
        if let Node::Scalar { value, tag, .. } = node {
            if node.is_plain_non_string() {
                return;
            }
            if tag.as_deref().is_some_and(|t| t.ends_with(":binary")) {
                return self.binary(node, out);
            }
            let new = self.free(value);
            self.set(node, new, out);
        }
    }

    /// A `!!binary` scalar: its decoded bytes are the value.
    fn binary(&mut self, node: &Node, out: &mut Vec<Change>) {
        let Some(value) = node.as_str() else { return };
        let compact: String = value.chars().filter(|c| !c.is_whitespace()).collect();
        match b64::decode(&compact)
            .ok()
            .and_then(|b| String::from_utf8(b).ok())
        {
            Some(decoded) => {
                let new = self.free(&decoded);
                if new != decoded {
                    self.set(node, b64::encode(new.as_bytes()), out);
                }
            }
            None => self.mask_all(node, out),
        }
    }

    /// A scalar decided public: only known secrets that reappear in it, and a URL's password.
    fn public_value(&mut self, node: &Node, out: &mut Vec<Change>) {
        match node {
            Node::Scalar { value, tag, .. } => {
                if node.is_plain_non_string() {
                    return;
                }
                if tag.as_deref().is_some_and(|t| t.ends_with(":binary")) {
                    return self.binary(node, out);
                }
                let new = self.url(value);
                let mut spans = Vec::new();
                self.known.occurrences(&new, &mut spans);
                let new = splice(&new, &text::merge(spans));
                self.set(node, new, out);
            }
            Node::Seq(items) => items.iter().for_each(|i| self.public_value(i, out)),
            Node::Map(entries) => entries.iter().for_each(|(_, v)| self.public_value(v, out)),
        }
    }

    /// A URL with its password and secret query values masked; its other parts are public.
    fn url(&mut self, value: &str) -> String {
        let Some(scheme_end) = value.find("://") else {
            return value.to_owned();
        };
        let scheme = &value[..scheme_end];
        if scheme.is_empty()
            || !scheme
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"+.-".contains(&b))
        {
            return value.to_owned();
        }
        self.known.add_public(scheme);
        let rest_start = scheme_end + 3;
        let rest = &value[rest_start..];
        let query = rest.find(['?', '#']).unwrap_or(rest.len());
        let mut spans = Vec::new();
        let mut authority_end = rest[..query].find('/').unwrap_or(query);
        if let Some(at) = rest[..query].rfind('@') {
            authority_end = rest[at..query].find('/').map_or(query, |s| at + s);
            let userinfo = &rest[..at];
            match userinfo.split_once(':') {
                Some((user, password)) if !password.is_empty() => {
                    self.known.add_public(user);
                    let start = rest_start + user.len() + 1;
                    spans.push(start..start + password.len());
                    self.known.add(password);
                }
                // `https://<token>@host`: user-info alone is often a token.
                _ if !userinfo.is_empty() => {
                    spans.push(rest_start..rest_start + userinfo.trim_end_matches(':').len());
                    self.known.add(userinfo.trim_end_matches(':'));
                }
                _ => {}
            }
            let host = &rest[at + 1..authority_end];
            self.known.add_public(host);
            if let Some((h, _)) = host.rsplit_once(':') {
                self.known.add_public(h);
            }
        } else {
            self.known.add_public(&rest[..authority_end]);
        }
        // Query values under secret names.
        if query < rest.len() {
            let mut at = rest_start + query + 1;
            for pair in rest[query + 1..].split(['&', ';', '#']) {
                if let Some((k, v)) = pair.split_once('=')
                    && secret_key(k)
                    && !v.is_empty()
                {
                    let start = at + k.len() + 1;
                    spans.push(start..start + v.len());
                    self.known.add(v);
                }
                at += pair.len() + 1;
            }
        }
        splice(value, &spans)
    }

    /// Any structure of no known schema: keys that say secret are masked, the rest is free
    /// text; a Kubernetes Secret's values are masked.
    pub(crate) fn generic(&mut self, node: &Node, out: &mut Vec<Change>) {
        match node {
            Node::Scalar { .. } => self.text_value(node, out),
            Node::Seq(items) => items.iter().for_each(|i| self.generic(i, out)),
            Node::Map(entries) => {
                let secret_object = node.get("kind").and_then(Node::as_str) == Some("Secret");
                for (k, v) in entries {
                    self.key(k, out);
                    let key = k.as_str().unwrap_or("");
                    if secret_object && matches!(key, "data" | "stringData") {
                        self.mask_all(v, out);
                    } else if secret_key(key) {
                        self.secret_value(v, out);
                    } else if matches!(v, Node::Scalar { .. })
                        && key.to_ascii_lowercase().contains("url")
                    {
                        let url = self.url(v.as_str().unwrap_or(""));
                        let new = self.free(&url);
                        self.set(v, new, out);
                    } else {
                        self.generic(v, out);
                    }
                }
            }
        }
    }

    // ---- cloud-config --------------------------------------------------------------------

    fn cloud_config(&mut self, node: &Node, out: &mut Vec<Change>) {
        let Node::Map(entries) = node else {
            return self.generic(node, out);
        };
        for (k, v) in entries {
            match k.as_str().unwrap_or("") {
                "write_files" => match v {
                    Node::Seq(files) => {
                        for file in files {
                            self.write_file(file, out);
                        }
                    }
                    _ => self.generic(v, out),
                },
                "runcmd" | "bootcmd" => match v {
                    Node::Seq(items) => items.iter().for_each(|i| self.command(i, out)),
                    _ => self.command(v, out),
                },
                "users" => match v {
                    Node::Seq(users) => users.iter().for_each(|u| self.user(u, out)),
                    _ => self.generic(v, out),
                },
                "chpasswd" => self.chpasswd(v, out),
                "password" => self.mask_all(v, out),
                "ssh_keys" => match v {
                    Node::Map(keys) => {
                        for (name, key) in keys {
                            let name = name.as_str().unwrap_or("");
                            if name.contains("private")
                                || (!name.contains("public") && !name.contains("cert"))
                            {
                                // A key in armour keeps its armour; its body goes.
                                if key.as_str().is_some_and(|k| k.contains("-----BEGIN ")) {
                                    self.text_value(key, out);
                                } else {
                                    self.mask_all(key, out);
                                }
                            } else {
                                self.public_value(key, out);
                            }
                        }
                    }
                    _ => self.mask_all(v, out),
                },
                "ssh_authorized_keys" => self.public_value(v, out),
                _ => self.generic_keyed(k, v, out),
            }
        }
    }

    /// A key of a mapping of no known schema: free text too (a command line YAML read as a
    /// mapping has half of it in its key).
    fn key(&mut self, key: &Node, out: &mut Vec<Change>) {
        if let Node::Scalar { value, .. } = key
            && !key.is_plain_non_string()
        {
            let new = self.free(value);
            self.set(key, new, out);
        }
    }

    /// A key and its value in a mapping of no known schema.
    fn generic_keyed(&mut self, key: &Node, value: &Node, out: &mut Vec<Change>) {
        self.key(key, out);
        if secret_key(key.as_str().unwrap_or("")) {
            self.secret_value(value, out);
        } else {
            self.generic(value, out);
        }
    }

    /// A `runcmd` item: a shell line, or argv.
    fn command(&mut self, node: &Node, out: &mut Vec<Change>) {
        match node {
            Node::Seq(argv) => {
                let words: Vec<&str> = argv.iter().map(|w| w.as_str().unwrap_or("")).collect();
                let secret = text::argv_secrets(&words);
                for (i, word) in argv.iter().enumerate() {
                    match secret.iter().find(|(w, _)| *w == i) {
                        Some(&(_, offset)) => {
                            let value = word.as_str().unwrap_or("");
                            let (keep, hidden) = value.split_at(offset.min(value.len()));
                            self.known.add(hidden);
                            self.set(word, format!("{keep}{PLACEHOLDER}"), out);
                        }
                        None => self.text_value(word, out),
                    }
                }
            }
            _ => self.generic(node, out),
        }
    }

    fn user(&mut self, node: &Node, out: &mut Vec<Change>) {
        let Node::Map(entries) = node else {
            return self.generic(node, out);
        };
        for (k, v) in entries {
            match k.as_str().unwrap_or("") {
                "passwd" | "hashed_passwd" | "plain_text_passwd" | "password" => {
                    self.mask_all(v, out);
                }
                "ssh_authorized_keys"
                | "ssh-authorized-keys"
                | "name"
                | "gecos"
                | "groups"
                | "shell"
                | "sudo"
                | "homedir"
                | "primary_group"
                | "ssh_import_id" => {
                    self.public_value(v, out);
                }
                _ => self.generic_keyed(k, v, out),
            }
        }
    }

    fn chpasswd(&mut self, node: &Node, out: &mut Vec<Change>) {
        let Node::Map(entries) = node else {
            return self.mask_all(node, out);
        };
        for (k, v) in entries {
            match (k.as_str().unwrap_or(""), v) {
                ("list", Node::Scalar { value, .. }) => {
                    let new: String = value
                        .split_inclusive('\n')
                        .map(|line| self.name_password(line))
                        .collect();
                    self.set(v, new, out);
                }
                ("list", Node::Seq(items)) => {
                    for item in items {
                        if let Some(line) = item.as_str() {
                            let new = self.name_password(line);
                            self.set(item, new, out);
                        }
                    }
                }
                ("users", Node::Seq(users)) => {
                    for user in users {
                        match user {
                            Node::Map(fields) => {
                                for (f, value) in fields {
                                    if matches!(f.as_str(), Some("name" | "type")) {
                                        self.public_value(value, out);
                                    } else {
                                        self.mask_all(value, out);
                                    }
                                }
                            }
                            _ => self.mask_all(user, out),
                        }
                    }
                }
                ("expire", _) => {}
                _ => self.mask_all(v, out),
            }
        }
    }

    /// `name:password` (a `chpasswd` line): the password masked.
    fn name_password(&mut self, line: &str) -> String {
        let body = line.trim_end_matches(['\n', '\r']);
        match body.split_once(':') {
            Some((name, password)) if !password.trim().is_empty() && password != PLACEHOLDER => {
                self.known.add(password.trim());
                format!("{name}:{PLACEHOLDER}{}", &line[body.len()..])
            }
            _ => line.to_owned(),
        }
    }

    /// A `write_files` entry: its content decoded as its `encoding` says, masked as the file at
    /// its path, and encoded again.
    fn write_file(&mut self, node: &Node, out: &mut Vec<Change>) {
        let Node::Map(entries) = node else {
            return self.generic(node, out);
        };
        let path = node.get("path").and_then(Node::as_str).unwrap_or("");
        let encoding = node
            .get("encoding")
            .and_then(Node::as_str)
            .unwrap_or("")
            .to_ascii_lowercase();
        for (k, v) in entries {
            match k.as_str().unwrap_or("") {
                "content" => {
                    if let Err(e) = self.file_content(path, &encoding, v, out) {
                        if known_structure(path) {
                            // RKE2's config and registries: masked whole they would lose
                            // what is public in them (the server, tls-san); refused instead.
                            self.refused.get_or_insert(e);
                        } else {
                            // Unreadable content: masked whole (it could hold anything).
                            self.mask_all(v, out);
                        }
                    }
                }
                "path" | "owner" | "permissions" | "encoding" | "append" | "defer" => {
                    self.public_value(v, out);
                }
                "source" => self.generic(v, out),
                _ => self.generic_keyed(k, v, out),
            }
        }
    }

    fn file_content(
        &mut self,
        path: &str,
        encoding: &str,
        node: &Node,
        out: &mut Vec<Change>,
    ) -> Result<(), MaskError> {
        let Node::Scalar { value, tag, .. } = node else {
            self.mask_all(node, out);
            return Ok(());
        };
        let gz = matches!(
            encoding,
            "gz" | "gzip"
                | "gz+base64"
                | "gzip+base64"
                | "gz+b64"
                | "gzip+b64"
                | "application/x-gzip"
        );
        let base64 = encoding.contains("b64")
            || encoding.contains("base64")
            || tag.as_deref().is_some_and(|t| t.ends_with(":binary"));
        let mut bytes = if base64 {
            let compact: String = value.chars().filter(|c| !c.is_ascii_whitespace()).collect();
            b64::decode(&compact).map_err(|e| refuse(path, e))?
        } else {
            value.as_bytes().to_vec()
        };
        if gz || gzip::is_gzip(&bytes) && base64 {
            bytes = gzip::inflate(&bytes, INFLATE_CAP).map_err(|e| refuse(path, e.to_string()))?;
        }
        let new = self.file(path, &bytes)?;
        if new == bytes {
            return Ok(());
        }
        let mut new = new;
        if gz || (base64 && gzip::is_gzip(&bytes)) {
            new = gzip::deflate(&new, 9);
        }
        let value = if base64 || gz {
            b64::encode(&new)
        } else {
            String::from_utf8(new).map_err(|_| refuse(path, "not UTF-8 text"))?
        };
        self.set(node, value, out);
        Ok(())
    }

    // ---- files ---------------------------------------------------------------------------

    /// A file's content, masked as what its path says it is.
    ///
    /// # Errors
    /// A file of known structure that does not read.
    pub(crate) fn file(&mut self, path: &str, bytes: &[u8]) -> Result<Vec<u8>, MaskError> {
        let path = normalise(path);
        let name = path.rsplit('/').next().unwrap_or("");
        // A key file in armour keeps its armour (and any certificate beside the key).
        let armoured = memchr::memmem::find(bytes, b"-----BEGIN ").is_some();
        let token_file = self.token_files.iter().any(|t| normalise(t) == path);
        if (token_file || whole_secret_file(&path)) && !armoured {
            if bytes.is_empty() {
                return Ok(Vec::new());
            }
            if let Ok(text) = std::str::from_utf8(bytes) {
                self.known.add(text.trim());
            }
            let mut out = PLACEHOLDER.as_bytes().to_vec();
            if bytes.ends_with(b"\n") {
                out.push(b'\n');
            }
            return Ok(out);
        }
        let Ok(text) = std::str::from_utf8(bytes) else {
            // Binary content: nothing readable to keep.
            if bytes.is_empty() {
                return Ok(Vec::new());
            }
            return Ok(PLACEHOLDER.as_bytes().to_vec());
        };
        let rke2_dir =
            path.starts_with("/etc/rancher/rke2/") || path.starts_with("/etc/rancher/k3s/");
        let out = if rke2_dir
            && (name == "config.yaml" || name == "config.yml" || path.contains("/config.yaml.d/"))
        {
            self.document(text, &path, &mut |m, node, out| {
                m.rke2_config(node, out);
                Ok(())
            })?
        } else if name == "registries.yaml" || name == "registries.yml" {
            self.document(text, &path, &mut |m, node, out| {
                m.registries(node, out);
                Ok(())
            })?
        } else if structured(name, text) {
            match tree::parse(text) {
                Ok(docs) if docs.iter().any(|d| !matches!(d, Node::Scalar { .. })) => self
                    .document(text, &path, &mut |m, node, out| {
                        m.generic(node, out);
                        Ok(())
                    })?,
                _ => self.free(text),
            }
        } else {
            self.free(text)
        };
        Ok(out.into_bytes())
    }

    // ---- RKE2 ----------------------------------------------------------------------------

    fn rke2_config(&mut self, node: &Node, out: &mut Vec<Change>) {
        let Node::Map(entries) = node else {
            return self.mask_all(node, out);
        };
        for (k, v) in entries {
            let Some(key) = k.as_str() else {
                self.mask_all(v, out);
                continue;
            };
            let kind = rke2_key(key);
            if kind == Rke2Key::Public
                && key
                    .trim_end_matches('+')
                    .replace('_', "-")
                    .to_ascii_lowercase()
                    .ends_with("token-file")
                && let Some(path) = v.as_str()
                && !self.token_files.iter().any(|t| t == path)
            {
                self.token_files.push(path.to_owned());
            }
            match kind {
                Rke2Key::Public => self.public_value(v, out),
                Rke2Key::Args => self.rke2_args(v, out),
                Rke2Key::Url => match v {
                    Node::Scalar { value, .. } if value.contains("://") => {
                        let new = self.url(value);
                        let new = self.free(&new);
                        self.set(v, new, out);
                    }
                    _ => self.mask_all(v, out),
                },
                Rke2Key::Secret => self.mask_all(v, out),
            }
        }
    }

    /// `kubelet-arg` and its kind: `name=value` items, the values of secret names masked.
    fn rke2_args(&mut self, node: &Node, out: &mut Vec<Change>) {
        match node {
            Node::Scalar { value, .. } => {
                let new = match value.split_once('=') {
                    Some((name, v)) if secret_key(name) && !v.is_empty() => {
                        self.known.add(v);
                        format!("{name}={PLACEHOLDER}")
                    }
                    _ => self.free(value),
                };
                self.set(node, new, out);
            }
            Node::Seq(items) => items.iter().for_each(|i| self.rke2_args(i, out)),
            Node::Map(_) => self.mask_all(node, out),
        }
    }

    fn registries(&mut self, node: &Node, out: &mut Vec<Change>) {
        let Node::Map(entries) = node else {
            return self.mask_all(node, out);
        };
        for (k, v) in entries {
            match (k.as_str().unwrap_or(""), v) {
                ("configs", Node::Map(hosts)) => {
                    for (_, config) in hosts {
                        let Node::Map(fields) = config else {
                            self.mask_all(config, out);
                            continue;
                        };
                        for (f, value) in fields {
                            match f.as_str().unwrap_or("") {
                                "auth" => self.mask_all(value, out),
                                "tls" => self.generic(value, out),
                                _ => self.generic_keyed(f, value, out),
                            }
                        }
                    }
                }
                ("mirrors", _) => self.mirrors(v, out),
                _ => self.generic_keyed(k, v, out),
            }
        }
    }

    fn mirrors(&mut self, node: &Node, out: &mut Vec<Change>) {
        match node {
            Node::Scalar { value, .. } => {
                let new = self.url(value);
                let new = self.free(&new);
                self.set(node, new, out);
            }
            Node::Seq(items) => items.iter().for_each(|i| self.mirrors(i, out)),
            Node::Map(entries) => {
                for (k, v) in entries {
                    if secret_key(k.as_str().unwrap_or("")) {
                        self.mask_all(v, out);
                    } else {
                        self.mirrors(v, out);
                    }
                }
            }
        }
    }

    // ---- Ignition ------------------------------------------------------------------------

    fn ignition(&mut self, text: &str) -> Result<String, MaskError> {
        let owned;
        let text = match tree::parse(text) {
            Ok(_) => text,
            Err(_) => {
                // JSON the YAML reader does not take (tabs, say): written again as plain JSON.
                let value: serde_json::Value = serde_json::from_str(text).map_err(|e| {
                    refuse(
                        "the Ignition config",
                        crate::codec::text::parser_message(&e.to_string()),
                    )
                })?;
                owned = serde_json::to_string(&value)
                    .map_err(|e| refuse("the Ignition config", e.to_string()))?;
                &owned
            }
        };
        self.document(text, "the Ignition config", &mut |m, node, out| {
            // Ignition reads its keys whatever their case (Go's JSON decoder): so are they
            // here, on a copy whose values keep their places.
            m.ignition_root(&lower_keys(node), out)
        })
    }

    fn ignition_root(&mut self, node: &Node, out: &mut Vec<Change>) -> Result<(), MaskError> {
        let Node::Map(entries) = node else {
            return Err(refuse("the Ignition config", "it is not a JSON object"));
        };
        for (k, v) in entries {
            match k.as_str().unwrap_or("") {
                "ignition" => self.ignition_section(v, out)?,
                "storage" => self.storage(v, out)?,
                "passwd" => self.passwd(v, out),
                "systemd" => self.generic(v, out),
                _ => self.generic_keyed(k, v, out),
            }
        }
        Ok(())
    }

    fn ignition_section(&mut self, node: &Node, out: &mut Vec<Change>) -> Result<(), MaskError> {
        let Node::Map(entries) = node else {
            self.generic(node, out);
            return Ok(());
        };
        for (k, v) in entries {
            match (k.as_str().unwrap_or(""), v) {
                ("config", Node::Map(fields)) => {
                    for (f, refs) in fields {
                        match (f.as_str().unwrap_or(""), refs) {
                            ("merge", Node::Seq(items)) => {
                                for item in items {
                                    self.resource(item, out, &mut |m, bytes| {
                                        let text = std::str::from_utf8(&bytes).map_err(|_| {
                                            refuse("a merged Ignition config", "not UTF-8 text")
                                        })?;
                                        Ok(m.ignition(text)?.into_bytes())
                                    })?;
                                }
                            }
                            ("replace", item) => {
                                self.resource(item, out, &mut |m, bytes| {
                                    let text = std::str::from_utf8(&bytes).map_err(|_| {
                                        refuse("a replacing Ignition config", "not UTF-8 text")
                                    })?;
                                    Ok(m.ignition(text)?.into_bytes())
                                })?;
                            }
                            _ => self.generic_keyed(f, refs, out),
                        }
                    }
                }
                ("security", _) => {
                    // certificateAuthorities sources: certificates stay, keys go.
                    self.walk_resources(v, out, "a certificate authority")?;
                }
                ("proxy", Node::Map(fields)) => {
                    for (f, value) in fields {
                        match value {
                            Node::Scalar { value: s, .. } if s.contains("://") => {
                                let new = self.url(s);
                                let new = self.free(&new);
                                self.set(value, new, out);
                            }
                            _ => self.generic_keyed(f, value, out),
                        }
                    }
                }
                _ => self.generic_keyed(k, v, out),
            }
        }
        Ok(())
    }

    /// Every resource (`source` + `compression`) below `node`, masked as free text.
    fn walk_resources(
        &mut self,
        node: &Node,
        out: &mut Vec<Change>,
        what: &str,
    ) -> Result<(), MaskError> {
        match node {
            Node::Map(_) if node.get("source").is_some() => {
                let what = what.to_owned();
                self.resource(node, out, &mut |m, bytes| m.file(&what, &bytes))
            }
            Node::Map(entries) => {
                for (k, v) in entries {
                    if secret_key(k.as_str().unwrap_or("")) {
                        self.mask_all(v, out);
                    } else {
                        self.walk_resources(v, out, what)?;
                    }
                }
                Ok(())
            }
            Node::Seq(items) => {
                for i in items {
                    self.walk_resources(i, out, what)?;
                }
                Ok(())
            }
            Node::Scalar { .. } => {
                self.text_value(node, out);
                Ok(())
            }
        }
    }

    /// An Ignition resource: `source` (a `data:` URL is decoded, `compression` undone, the
    /// bytes masked by `inner`, and encoded again), `httpHeaders` values masked, the rest kept.
    fn resource(
        &mut self,
        node: &Node,
        out: &mut Vec<Change>,
        inner: &mut Inner<'_>,
    ) -> Result<(), MaskError> {
        let Node::Map(entries) = node else {
            self.generic(node, out);
            return Ok(());
        };
        let gz = node.get("compression").and_then(Node::as_str) == Some("gzip");
        for (k, v) in entries {
            match k.as_str().unwrap_or("") {
                "source" => {
                    let Some(source) = v.as_str() else {
                        self.generic(v, out);
                        continue;
                    };
                    match dataurl::DataUrl::parse(source) {
                        Ok(url) => {
                            let bytes = url
                                .decode()
                                .map_err(|e| refuse("a data URL", e.to_string()))?
                                .into_owned();
                            let plain = if gz {
                                gzip::inflate(&bytes, INFLATE_CAP)
                                    .map_err(|e| refuse("a data URL", e.to_string()))?
                            } else {
                                bytes
                            };
                            let new = inner(self, plain.clone())?;
                            if new != plain {
                                let encoded = if gz {
                                    format!(
                                        "data:{};base64,{}",
                                        url.media_type,
                                        b64::encode(&gzip::deflate(&new, 9))
                                    )
                                } else if url.base64 {
                                    format!("data:{};base64,{}", url.media_type, b64::encode(&new))
                                } else {
                                    format!(
                                        "data:{},{}",
                                        url.media_type,
                                        dataurl::percent_encode(&new)
                                    )
                                };
                                self.set(v, encoded, out);
                            }
                        }
                        // A remote source is never fetched; its URL may carry credentials.
                        Err(_) => {
                            let new = self.url(source);
                            let new = self.free(&new);
                            self.set(v, new, out);
                        }
                    }
                }
                "httpheaders" => self.headers(v, out),
                "verification" | "compression" => self.public_value(v, out),
                _ => self.generic_keyed(k, v, out),
            }
        }
        Ok(())
    }

    /// `httpHeaders`: every value masked (names stay).
    fn headers(&mut self, node: &Node, out: &mut Vec<Change>) {
        match node {
            Node::Seq(items) => {
                for item in items {
                    match item {
                        Node::Map(fields) => {
                            // Headers that only describe the content keep their values.
                            let public = item.get("name").and_then(Node::as_str).is_some_and(|n| {
                                matches!(
                                    n.to_ascii_lowercase().as_str(),
                                    "accept"
                                        | "accept-encoding"
                                        | "accept-language"
                                        | "content-type"
                                        | "user-agent"
                                        | "cache-control"
                                        | "if-none-match"
                                )
                            });
                            for (f, v) in fields {
                                if f.as_str() == Some("name") || public {
                                    self.public_value(v, out);
                                } else {
                                    self.mask_all(v, out);
                                }
                            }
                        }
                        _ => self.mask_all(item, out),
                    }
                }
            }
            _ => self.mask_all(node, out),
        }
    }

    fn storage(&mut self, node: &Node, out: &mut Vec<Change>) -> Result<(), MaskError> {
        let Node::Map(entries) = node else {
            self.generic(node, out);
            return Ok(());
        };
        for (k, v) in entries {
            match (k.as_str().unwrap_or(""), v) {
                ("files", Node::Seq(files)) => {
                    for file in files {
                        self.ignition_file(file, out)?;
                    }
                }
                ("luks", Node::Seq(volumes)) => {
                    for volume in volumes {
                        let Node::Map(fields) = volume else {
                            self.mask_all(volume, out);
                            continue;
                        };
                        for (f, value) in fields {
                            match f.as_str().unwrap_or("") {
                                "keyfile" => self.resource(value, out, &mut |m, bytes| {
                                    if let Ok(t) = std::str::from_utf8(&bytes) {
                                        m.known.add(t.trim());
                                    }
                                    Ok(if bytes.is_empty() {
                                        bytes
                                    } else {
                                        PLACEHOLDER.as_bytes().to_vec()
                                    })
                                })?,
                                "clevis" | "options" | "openoptions" => {
                                    self.walk_secret_text(value, out)
                                }
                                _ => self.generic_keyed(f, value, out),
                            }
                        }
                    }
                }
                _ => self.generic_keyed(k, v, out),
            }
        }
        Ok(())
    }

    /// A subtree of free text where a secret-named key masks its value.
    fn walk_secret_text(&mut self, node: &Node, out: &mut Vec<Change>) {
        self.generic(node, out);
    }

    fn ignition_file(&mut self, node: &Node, out: &mut Vec<Change>) -> Result<(), MaskError> {
        let Node::Map(entries) = node else {
            self.generic(node, out);
            return Ok(());
        };
        let path = node
            .get("path")
            .and_then(Node::as_str)
            .unwrap_or("")
            .to_owned();
        for (k, v) in entries {
            match (k.as_str().unwrap_or(""), v) {
                ("contents", _) => {
                    let p = path.clone();
                    self.resource(v, out, &mut |m, bytes| m.file(&p, &bytes))?;
                }
                ("append", Node::Seq(items)) => {
                    for item in items {
                        let p = path.clone();
                        self.resource(item, out, &mut |m, bytes| m.file(&p, &bytes))?;
                    }
                }
                ("path" | "mode" | "overwrite" | "user" | "group", _) => self.public_value(v, out),
                _ => self.generic_keyed(k, v, out),
            }
        }
        Ok(())
    }

    fn passwd(&mut self, node: &Node, out: &mut Vec<Change>) {
        let Node::Map(entries) = node else {
            return self.generic(node, out);
        };
        for (k, v) in entries {
            match (k.as_str().unwrap_or(""), v) {
                ("users", Node::Seq(users)) => {
                    for user in users {
                        let Node::Map(fields) = user else {
                            self.generic(user, out);
                            continue;
                        };
                        for (f, value) in fields {
                            match f.as_str().unwrap_or("") {
                                "passwordhash" => self.mask_all(value, out),
                                "sshauthorizedkeys" | "name" | "groups" | "shell" | "homedir" => {
                                    self.public_value(value, out);
                                }
                                _ => self.generic_keyed(f, value, out),
                            }
                        }
                    }
                }
                _ => self.generic_keyed(k, v, out),
            }
        }
    }
}

/// The secret values of one file as `redact` decides them, for the reports' redactor (one
/// classification for every output): RKE2's `config.yaml` and drop-ins (aliases, unknown keys
/// and values of any type included), `registries.yaml`, token files. Other files are left to
/// the detector the reports run on every text they show.
pub(crate) fn file_secrets(path: &str, bytes: &[u8]) -> Vec<String> {
    let normal = normalise(path);
    let name = normal.rsplit('/').next().unwrap_or("");
    let relevant = normal.starts_with("/etc/rancher/")
        && (name.starts_with("config.y")
            || normal.contains("/config.yaml.d/")
            || name.starts_with("registries.y"))
        || whole_secret_file(&normal);
    // A `registries.yaml` without `auth` has nothing masked but URL passwords, which the
    // reports' detector finds by shape.
    let no_auth =
        name.starts_with("registries.y") && memchr::memmem::find(bytes, b"auth").is_none();
    // A key in armour is the reports' own to describe (its body is never shown).
    let armoured = memchr::memmem::find(bytes, b"-----BEGIN ").is_some();
    if !relevant || no_auth || armoured || plain_rke2_config(&normal, bytes) {
        return Vec::new();
    }
    let mut masker = Masker {
        collect_only: true,
        ..Masker::default()
    };
    masker.known.quiet = true;
    // A file that does not read keeps what the reports' own readers find in it.
    let _ = masker.file(path, bytes);
    masker.known.values
}

/// Whether a `config.yaml` holds only what the reports' own reader takes apart: every top-level
/// key written plainly and known public, a list of arguments, or the two tokens (which that
/// reader hides). The common case, read without building a tree.
fn plain_rke2_config(path: &str, bytes: &[u8]) -> bool {
    let name = path.rsplit('/').next().unwrap_or("");
    if !name.starts_with("config.y") || path.contains("/config.yaml.d/") {
        return false;
    }
    let Ok(text) = std::str::from_utf8(bytes) else {
        return false;
    };
    text.lines().all(|line| {
        let Some(first) = line.bytes().next() else {
            return true;
        };
        if matches!(first, b' ' | b'-' | b'#') {
            return true;
        }
        let Some((key, value)) = line.split_once(':') else {
            return false;
        };
        // The tokens, when written as one plain word (the reader takes no other shape).
        let value = value.trim();
        let plain_token = matches!(key, "token" | "agent-token")
            && value
                .bytes()
                .next()
                .is_some_and(|b| b.is_ascii_alphanumeric())
            && !value.contains([' ', '\t', '#']);
        key.bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
            && (plain_token || matches!(rke2_key(key), Rke2Key::Public | Rke2Key::Args))
            && key.len() > 1
    })
}

/// A copy of a tree with every key in lower case (values and their places unchanged).
fn lower_keys(node: &Node) -> Node {
    match node {
        Node::Scalar { .. } => node.clone(),
        Node::Seq(items) => Node::Seq(items.iter().map(lower_keys).collect()),
        Node::Map(entries) => Node::Map(
            entries
                .iter()
                .map(|(k, v)| {
                    let key = match k {
                        Node::Scalar {
                            value,
                            style,
                            tag,
                            span,
                            column,
                        } => Node::Scalar {
                            value: value.to_ascii_lowercase(),
                            style: *style,
                            tag: tag.clone(),
                            span: span.clone(),
                            column: *column,
                        },
                        other => lower_keys(other),
                    };
                    (key, lower_keys(v))
                })
                .collect(),
        ),
    }
}

/// How RKE2 reads a `config.yaml` key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Rke2Key {
    /// Known to carry no secret.
    Public,
    /// A list of `name=value` arguments for a component.
    Args,
    /// A URL whose password is secret (`datastore-endpoint`, `etcd-s3-proxy`).
    Url,
    /// A secret, or a key not known.
    Secret,
}

/// A `config.yaml` key as RKE2's loader reads it: case and `_` folded, a trailing `+`
/// (append) dropped, a short alias taken for its flag.
fn rke2_key(key: &str) -> Rke2Key {
    let key = key
        .trim()
        .trim_end_matches('+')
        .trim_start_matches('-')
        .to_ascii_lowercase()
        .replace('_', "-");
    let long = rke2_flags::ALIASES
        .iter()
        .find(|(alias, _)| *alias == key)
        .map_or(key.as_str(), |(_, long)| *long);
    if rke2_flags::PUBLIC_KEYS.binary_search(&long).is_ok() {
        Rke2Key::Public
    } else if rke2_flags::ARG_KEYS.contains(&long) {
        Rke2Key::Args
    } else if matches!(long, "datastore-endpoint" | "etcd-s3-proxy" | "s3-proxy") {
        Rke2Key::Url
    } else {
        Rke2Key::Secret
    }
}

/// A path as the node resolves it: `//` and `/./` collapsed, `..` taken back.
pub(crate) fn normalise(path: &str) -> String {
    if path.starts_with('/') && !path.contains("//") && !path.contains("/.") && !path.ends_with('/')
    {
        return path.to_owned();
    }
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            p => parts.push(p),
        }
    }
    let mut out = String::with_capacity(path.len());
    for p in parts {
        out.push('/');
        out.push_str(p);
    }
    if out.is_empty() {
        out.push('/');
    }
    out
}

/// Whether `path` (as written) is a file whose structure the masking knows: RKE2's
/// `config.yaml`, its drop-ins and `registries.yaml`.
fn known_structure(path: &str) -> bool {
    let normal = normalise(path);
    let in_rke2 =
        normal.starts_with("/etc/rancher/rke2/") || normal.starts_with("/etc/rancher/k3s/");
    let name = normal.rsplit('/').next().unwrap_or("");
    in_rke2
        && (matches!(
            name,
            "config.yaml" | "config.yml" | "registries.yaml" | "registries.yml"
        ) || normal.contains("/config.yaml.d/"))
}

/// Files whose whole content is a secret: RKE2's and k3s's token files and node password, the
/// server's credentials, private keys by their name.
fn whole_secret_file(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or("");
    let rancher = ["/var/lib/rancher/rke2/", "/var/lib/rancher/k3s/"]
        .iter()
        .any(|p| path.starts_with(p));
    (rancher
        && (matches!(
            name,
            "token" | "agent-token" | "node-token" | "passwd" | "node-passwd"
        ) || path.contains("/server/cred/")
            && !name.ends_with(".json")
            && !name.ends_with(".yaml")))
        || path == "/etc/rancher/node/password"
        || name.ends_with(".key")
        || (name.starts_with("id_") && !name.ends_with(".pub") && path.contains("/.ssh/"))
        || {
            // A file named for a secret, with no extension or a plain-text one (not a unit,
            // a script or a configuration that merely mentions one: `token-refresh.service`,
            // `/etc/pam.d/passwd`).
            let (stem, extension) = name.split_once('.').unwrap_or((name, ""));
            matches!(extension, "" | "txt" | "env" | "secret")
                && !stem.is_empty()
                && !path.starts_with("/etc/pam.d/")
                && secret_key(stem)
        }
}

/// Whether a file is read as YAML or JSON: by its name, or by a JSON object's brace.
fn structured(name: &str, text: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    lower.ends_with(".yaml")
        || lower.ends_with(".yml")
        || lower.ends_with(".json")
        || lower == "kubeconfig"
        || text.trim_start().starts_with('{')
}

/// `text` with each span replaced by the placeholder.
fn splice(text: &str, spans: &[Range<usize>]) -> String {
    text::replace_spans(text, spans, |_| PLACEHOLDER.to_owned())
}

/// The text with the changes written at their places, or the documents written again in flow
/// style; `None` when neither reads back as the masked tree.
pub(crate) fn write(text: &str, docs: &[Node], changes: Vec<Change>) -> Option<String> {
    // One change per span: two decisions on one value (an anchor reached twice) keep the
    // placeholder if either masked it whole.
    let mut by_span: Vec<Change> = Vec::with_capacity(changes.len());
    let mut index: HashMap<(usize, usize), usize> = HashMap::with_capacity(changes.len());
    for change in changes {
        match index.get(&(change.span.start, change.span.end)) {
            Some(&i) => {
                let existing = &mut by_span[i];
                if existing.value != change.value && change.value == PLACEHOLDER {
                    existing.value = change.value;
                } else if existing.value != change.value && existing.value != PLACEHOLDER {
                    existing.value = PLACEHOLDER.to_owned();
                }
            }
            None => {
                index.insert((change.span.start, change.span.end), by_span.len());
                by_span.push(change);
            }
        }
    }
    let lookup = |span: &Range<usize>| {
        index
            .get(&(span.start, span.end))
            .map(|&i| by_span[i].value.clone())
    };
    let in_place: Option<Vec<Edit>> = by_span
        .iter()
        .map(|c| {
            tree::scalar_text(
                c.style,
                c.column,
                &c.value,
                text.get(c.span.clone()).unwrap_or(""),
            )
            .map(|t| Edit {
                span: c.span.clone(),
                text: t,
            })
        })
        .collect();
    if let Some(mut edits) = in_place {
        let out = tree::apply(text, &mut edits);
        if reads_as(&out, docs, &lookup) {
            return Some(out);
        }
    }
    // Written again: the comment lines that head the text (`#cloud-config`), then each
    // document in flow style.
    let head: String = text
        .split_inclusive('\n')
        .take_while(|l| l.starts_with('#') || l.trim().is_empty())
        .collect();
    let mut out = head;
    for (i, doc) in docs.iter().enumerate() {
        if i > 0 {
            out.push_str("---\n");
        }
        out.push_str(&tree::to_flow(doc, &lookup));
        out.push('\n');
    }
    reads_as(&out, docs, &lookup).then_some(out)
}

/// Whether `text` parses to `docs` with each changed scalar holding its new value.
fn reads_as(text: &str, docs: &[Node], lookup: &dyn Fn(&Range<usize>) -> Option<String>) -> bool {
    let Ok(again) = tree::parse(text) else {
        return false;
    };
    again.len() == docs.len() && docs.iter().zip(&again).all(|(a, b)| same(a, b, lookup))
}

fn same(old: &Node, new: &Node, lookup: &dyn Fn(&Range<usize>) -> Option<String>) -> bool {
    match (old, new) {
        (Node::Scalar { value, span, .. }, Node::Scalar { value: v2, .. }) => match lookup(span) {
            Some(expected) => *v2 == expected,
            None => value == v2 && old.is_plain_non_string() == new.is_plain_non_string(),
        },
        (Node::Seq(a), Node::Seq(b)) => {
            a.len() == b.len() && a.iter().zip(b).all(|(x, y)| same(x, y, lookup))
        }
        (Node::Map(a), Node::Map(b)) => {
            a.len() == b.len()
                && a.iter()
                    .zip(b)
                    .all(|((k1, v1), (k2, v2))| same(k1, k2, lookup) && same(v1, v2, lookup))
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests;
