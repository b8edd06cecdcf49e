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

pub(crate) use rke2::file_secrets;
use writeback::{same, splice};
pub(crate) use writeback::{write, write_in_place};

mod cloud_config;
mod ignition;
mod positions;
mod rke2;
pub(crate) mod text;
pub(crate) mod words;
mod writeback;

use std::cell::OnceCell;
use std::collections::HashSet;
use std::ops::Range;

use aho_corasick::{AhoCorasick, AhoCorasickKind, MatchKind};

use crate::codec::b64;
use crate::codec::tree::{self, Node, Style};

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
            // A reference (`$(curl`, `${VAR}`) searched for elsewhere would mask the same
            // reference in every command.
            && !words::reference(value)
            && !value.starts_with("$(")
            && !value.starts_with('`')
            && !is_placeholder_b64(value)
            && !value.starts_with(['{', '['])
            && !words::harmless(value)
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
            // An NFA, never a DFA: a DFA's construction follows the failure links of every
            // state for every byte, which is quadratic in a long periodic value (a word of
            // 45,000 `a`s took seconds); an NFA is built in time linear in the values, and finds
            // the same matches. The contiguous one, unless the values are too many for it.
            let build = |kind| {
                AhoCorasick::builder()
                    .match_kind(MatchKind::LeftmostLongest)
                    .kind(Some(kind))
                    .build(&out)
                    .ok()
            };
            let automaton = (!out.is_empty())
                .then(|| {
                    build(AhoCorasickKind::ContiguousNFA)
                        .or_else(|| build(AhoCorasickKind::NoncontiguousNFA))
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
            | "uri"
            | "source"
    ) || lower.ends_with("id") && lower.len() > 2 && lower[..lower.len() - 2].ends_with(['-', '_'])
}

/// Whether a key names something public by what it is: a public key or certificate
/// (`wireguard-public-key`, `certificate-authority-data`), a key's id or fingerprint (`keyid`,
/// `private_key_id`, `fingerprint`, `thumbprint`).
fn public_name(name: &str) -> bool {
    let compact: String = name
        .to_ascii_lowercase()
        .chars()
        .filter(char::is_ascii_alphanumeric)
        .collect();
    let lower = name.to_ascii_lowercase();
    // An id (`tenant-id`, `application-credential-id`, `clientId`): names a thing.
    let id = (lower.ends_with("-id") || lower.ends_with("_id") || name.ends_with("Id"))
        && !lower.contains("secret");
    // A digest by its name (`commit`, `sha`, `checksum`): hex there is no secret.
    let digest = matches!(
        compact.as_str(),
        "commit" | "sha" | "sha1" | "sha256" | "sha512"
    ) || ["checksum", "digest", "commit"]
        .iter()
        .any(|w| compact.ends_with(w));
    words::public_key_name(name)
        || id
        || digest
        || compact.ends_with("keyid")
        || compact.ends_with("fingerprint")
        || compact.ends_with("thumbprint")
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

/// Whether an option whose name says secret (`--anonymous-auth`) is a switch where it stands:
/// the word after it is another long option (`--anonymous-auth --v=2`), so it has no value,
/// and its name does not name the secret itself ([`super::may_be_switch`]; `--token --v=2`
/// sets the token to `--v=2`, as Go's flag parsers read it).
pub(crate) fn switch(option: &str, next: &str) -> bool {
    let long_option = next
        .strip_prefix("--")
        .is_some_and(|n| n.starts_with(|c: char| c.is_ascii_alphabetic()));
    long_option && super::may_be_switch(option)
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
    /// Mask free text whole ([`strict_marker`]) rather than word by word.
    pub(crate) strict: bool,
}

/// What strict masking writes in place of a free text: the placeholder, its line count and
/// its fingerprint (`REDACTED (3 lines, sha256:…)`), so two redactions still tell whether it
/// changed.
pub(crate) fn strict_marker(text: &str) -> String {
    let (lines, fingerprint) = strict_summary(text);
    format!("{PLACEHOLDER} ({lines}, {fingerprint})")
}

/// What strict masking keeps of a free text, in `redact` and in the reports alike: its line
/// count (`1 line`, `3 lines`) and its fingerprint (`sha256:<16 hex>`).
pub(crate) fn strict_summary(text: &str) -> (String, String) {
    let lines = text.lines().count().max(1);
    let sha = crate::codec::digest::sha256_hex(text.as_bytes());
    (
        format!("{lines} line{}", if lines == 1 { "" } else { "s" }),
        format!("sha256:{}", &sha[..16]),
    )
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
pub(crate) fn userdata(text: &str, known: &Known, strict: bool) -> Result<Masked, MaskError> {
    // The first pass finds; the second masks, with every value found, where they reappear.
    let mut quiet = known.clone();
    quiet.quiet = true;
    let mut first = Masker {
        known: quiet,
        strict,
        ..Masker::default()
    };
    first.userdata(text)?;
    let mut found = first.known.clone();
    found.quiet = false;
    let mut second = Masker {
        known: found,
        token_files: first.token_files.clone(),
        strict,
        ..Masker::default()
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
        // Strict masks text of several words whole; one word (a path, a name, a field's
        // value such as Ignition's `compression: gzip`) is judged by the word rules.
        if !self.strict || !text.trim().contains(char::is_whitespace) {
            return self.free_words(text);
        }
        let spans = text::spans(text, &self.known);
        if !text.trim().is_empty() && text != PLACEHOLDER {
            // Whole: what it hides is still known, so it is masked where it reappears.
            for s in spans {
                self.known.add(&text[s]);
            }
            return strict_marker(text);
        }
        text::replace_spans(text, &spans, |secret| {
            self.known.add(secret);
            PLACEHOLDER.to_owned()
        })
    }

    /// A value of known structure that holds words (an RKE2 flag's `name=value`, a URL):
    /// masked word by word, strict or not.
    pub(crate) fn free_words(&mut self, text: &str) -> String {
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
        let Some(commented) = self.comments(&out) else {
            return out;
        };
        // Comments only: the documents read the same (their spans moved).
        let same_documents = match (tree::parse(&commented), tree::parse(&out)) {
            (Ok(a), Ok(b)) => {
                a.len() == b.len() && a.iter().zip(&b).all(|(x, y)| same(x, y, &|_| None))
            }
            _ => false,
        };
        if same_documents { commented } else { out }
    }

    /// `text` with the secret parts of its comments masked; `None` when that changes nothing
    /// (no copy of the text is made then: it can be a whole List).
    fn comments(&self, text: &str) -> Option<String> {
        if !text.contains('#') {
            return None;
        }
        // Written from the first line that changes on.
        let mut out: Option<String> = None;
        let mut start = 0;
        // A private key written in comment lines: its body lines become `#`, the first one
        // `# REDACTED`.
        let mut key_body: Option<bool> = None;
        for line in text.split_inclusive('\n') {
            let new = self.comment_line(line, &mut key_body);
            match (&mut out, new) {
                (Some(out), new) => out.push_str(new.as_deref().unwrap_or(line)),
                (None, Some(new)) if new != line => {
                    let mut written = String::with_capacity(text.len());
                    written.push_str(&text[..start]);
                    written.push_str(&new);
                    out = Some(written);
                }
                (None, _) => {}
            }
            start += line.len();
        }
        out
    }

    /// A line with the secret parts of its comment masked (`None`: it has no comment).
    fn comment_line(&self, line: &str, key_body: &mut Option<bool>) -> Option<String> {
        let trimmed = line.trim_start();
        if trimmed.starts_with('#') {
            let indent = &line[..line.len() - trimmed.len()];
            let break_ = &line[line.trim_end_matches(['\n', '\r']).len()..];
            match *key_body {
                Some(first) if !trimmed.contains("-----END ") => {
                    *key_body = Some(false);
                    return Some(format!(
                        "{indent}{}{break_}",
                        if first { "# REDACTED" } else { "#" }
                    ));
                }
                Some(_) => *key_body = None,
                None if trimmed.contains("-----BEGIN ")
                    && (trimmed.contains("PRIVATE") || trimmed.contains("SECRET")) =>
                {
                    *key_body = Some(true);
                }
                None => {}
            }
        } else {
            *key_body = None;
        }
        let at = if trimmed.starts_with('#') {
            Some(line.len() - trimmed.len())
        } else {
            line.find(" #")
        }?;
        let (code, comment) = line.split_at(at);
        let body = comment.trim_end_matches(['\n', '\r']);
        let words = body.trim_start_matches([' ', '#']);
        // The headers a reader acts on (`#cloud-config`, `## template: jinja`, `#!/bin/sh`)
        // stay; strict writes any other comment whole as its marker.
        let header = ["#cloud-config", "## template:", "#!", "#include"]
            .iter()
            .any(|h| body.trim_start().starts_with(h));
        if self.strict && !header && !words.trim().is_empty() && !words.starts_with(PLACEHOLDER) {
            return Some(format!(
                "{code}{}{}{}",
                &body[..body.len() - words.len()],
                strict_marker(words),
                &comment[body.len()..]
            ));
        }
        Some(format!(
            "{code}{}",
            splice(comment, &text::spans(comment, &self.known))
        ))
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
            Node::Scalar { value, .. } if words::harmless(value) => {}
            // `Bearer x`, `Basic x`: the scheme says how, the rest is the secret.
            Node::Scalar { value, .. }
                if ["Bearer ", "Basic ", "Token ", "Digest ", "Negotiate "]
                    .iter()
                    .any(|s| value.starts_with(s) && value.len() > s.len()) =>
            {
                let (scheme, secret) = value.split_at(value.find(' ').unwrap_or(0) + 1);
                self.known.add(secret);
                self.set(node, format!("{scheme}{PLACEHOLDER}"), out);
            }
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

    /// A URL with its secret parts masked (its password, a user that is no public word, path
    /// segments and query values that are not public: [`words::url`]); its scheme, user and
    /// host are recorded as public, so a secret equal to one of them is not searched for.
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
        let Some(parts) = words::split_url(value) else {
            return value.to_owned();
        };
        self.known.add_public(scheme);
        let mut spans = Vec::new();
        words::url(value, 0, &mut spans);
        let spans = text::merge(spans);
        for s in &spans {
            self.known.add(&value[s.clone()]);
        }
        let public = |r: &Range<usize>| !spans.iter().any(|s| s.start < r.end && r.start < s.end);
        if let Some(user) = parts.user.filter(|u| public(u)) {
            self.known.add_public(&value[user]);
        }
        let host = &value[parts.host.clone()];
        self.known.add_public(host);
        if let Some((h, _)) = host.rsplit_once(':') {
            self.known.add_public(h);
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
                // A `{name: DB_PASSWORD, value: …}` pair (a container's `env`, many tools'
                // variables): the name says what the value is.
                let secret_pair = node
                    .get("name")
                    .and_then(Node::as_str)
                    .is_some_and(secret_key);
                for (k, v) in entries {
                    self.key(k, out);
                    let key = k.as_str().unwrap_or("");
                    if secret_object && matches!(key, "data" | "stringData") {
                        self.mask_all(v, out);
                    } else if secret_key(key) || secret_pair && key == "value" {
                        self.secret_value(v, out);
                    } else if public_name(key) {
                        self.public_value(v, out);
                    } else if matches!(v, Node::Scalar { .. })
                        && key.to_ascii_lowercase().contains("url")
                    {
                        let url = self.url(v.as_str().unwrap_or(""));
                        let new = self.free_words(&url);
                        self.set(v, new, out);
                    } else {
                        self.generic(v, out);
                    }
                }
            }
        }
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
            // A dot file (`.vault_pass`) is named by what follows its dot.
            let bare = name.strip_prefix('.').unwrap_or(name);
            let (stem, extension) = bare.split_once('.').unwrap_or((bare, ""));
            // `rsyncd.secrets`, ppp's `chap-secrets`: the name says it.
            stem == "secrets"
                || stem.ends_with("-secrets")
                || stem.ends_with("_secrets")
                || matches!(extension, "secret" | "secrets") && !stem.is_empty()
                || matches!(extension, "" | "txt" | "env")
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

#[cfg(test)]
mod tests;
