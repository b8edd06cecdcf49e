//! Go's `text/template` with the [Sprig](https://masterminds.github.io/sprig/) function library,
//! evaluated in Rust as [Cluster API](https://cluster-api.sigs.k8s.io/) runs it: a ClusterClass
//! inline patch's `valueFrom.template` ([`render`]) and a naming strategy's template
//! ([`render_name`]). It knows templates, JSON data and Go's formatting, nothing of any
//! particular provider.
//!
//! ```
//! use serde_json::json;
//!
//! let data = json!({"cluster": {"name": "demo"}, "sans": ["a.example", "b.example"]});
//! let out = payload_gotmpl::render(
//!     r#"name: {{ .cluster.name | upper }}
//! sans: {{ join "," .sans | quote }}"#,
//!     &data,
//! )?;
//! assert_eq!(out, "name: DEMO\nsans: \"a.example,b.example\"");
//! # Ok::<(), payload_gotmpl::TemplateError>(())
//! ```
//!
//! What it follows:
//!
//! - Cluster API (`core/reconcilers/topology/cluster/patches/inline/json_patch_generator.go`,
//!   `renderValueTemplate`) parses with `template.New("tpl").Funcs(sprig.HermeticTxtFuncMap())`
//!   and sets no `Option`, so a missing map key is Go's default `missingkey=default`: it yields
//!   the invalid value, printed `<no value>`, and a field of it is again `<no value>`; a field of
//!   a JSON `null` is the error `nil pointer evaluating interface {}.x`, and a pipeline whose
//!   value is `null` prints `<no value>` too (Go digs into an `interface{}` result).
//! - The data is the variables JSON-decoded into `interface{}` (`calculateTemplateData`), so every
//!   JSON number is a Go `float64`: `{{ .replicas }}` of 3 prints `3`, of 1000000 prints `1e+06`,
//!   `eq .replicas 3` fails (float64 against int), and a function with an `int` parameter
//!   (`indent`, `repeat`, `until`, ...) refuses a JSON number (`wrong type for value`).
//! - The function names are Go's builtins plus Sprig v3.3.0's `genericMap` less its
//!   `nonhermeticFunctions` (`now`, `env`, `randAlpha`, `uuidv4`, ...). A name outside that set
//!   is a parse error (`function "x" not defined`), as Go reports it; this includes Helm's
//!   `toYaml`, `include`, `tpl` and `required`. A Sprig function this evaluator does not
//!   implement (the regular expressions, dates, cryptography, `semver`, among others) is
//!   [`TemplateError::Unsupported`] when it is called.
//!
//! Deviations from Go, all at the edges: strings are Rust strings, so byte-slicing functions
//! (`trunc`, `substr`, `slice` of text) round to a character boundary and invalid UTF-8 from
//! `\x` escapes or `b64dec` becomes U+FFFD; `%q` judges which characters are printable by an
//! approximation of Go's `unicode.IsPrint`; `upper`, `lower` and the case conversions use
//! Rust's full Unicode case mapping (`ß` becomes `SS`; Go maps rune by rune and leaves it); a
//! naming template's `slice` is Sprig's (lists only), not Go's builtin (which also slices
//! strings); `keys` and `values` are sorted by key where Go's order is random; the nesting and
//! size limits ([`limits`]) are lower than Go's. The crate's tests run a table of templates
//! through Go itself (`tests/go_differential.rs`) and list every difference they find.
//!
//! Never panics on any input, and is bounded in time and memory by [`limits`].

#![deny(missing_docs)]

mod exec;
mod fmt;
mod funcs;
mod parse;
mod quote;
mod value;

pub use quote::go_quote;

#[cfg(test)]
mod tests;

/// Bounds on what a template may cost (it may come from user input). A template that goes past
/// one fails with [`TemplateError::Exec`] (or [`TemplateError::Parse`] for the nesting of its
/// text) instead of using more time or memory.
///
/// ```
/// let huge = r#"{{ repeat 20000000 "x" }}"#;
/// assert!(payload_gotmpl::render(huge, &serde_json::json!({})).is_err());
/// assert!(payload_gotmpl::limits::OUTPUT_BYTES < 20_000_000);
/// ```
pub mod limits {
    /// The largest output, and the largest string a function may build, in bytes.
    pub const OUTPUT_BYTES: usize = 16 << 20;
    /// The deepest nesting of `template` / `block` calls (Go allows 100000).
    pub const TEMPLATE_DEPTH: usize = 100;
    /// The deepest nesting of actions and parentheses in the template text.
    pub const PARSE_DEPTH: usize = 100;
    /// The most steps (range iterations, function calls, actions) one execution may take.
    pub const STEPS: u64 = 2_000_000;
    /// The most bytes all functions together may produce in one execution.
    pub const WORK_BYTES: usize = 256 << 20;
    /// The longest list `until`, `untilStep` and `seq` may build.
    pub const SEQUENCE: usize = 100_000;
    /// The deepest nesting of lists and maps that printing or JSON encoding descends.
    pub const VALUE_DEPTH: usize = 200;
}

/// Why a template could not be rendered.
///
/// ```
/// use payload_gotmpl::{TemplateError, render};
/// use serde_json::json;
///
/// let error = render("{{ .a", &json!({})).unwrap_err();
/// assert!(matches!(error, TemplateError::Parse { line: 1, .. }));
/// let error = render("{{ toYaml .a }}", &json!({})).unwrap_err();
/// assert!(error.to_string().contains(r#"function "toYaml" not defined"#));
/// let error = render("{{ .a.b }}", &json!({"a": null})).unwrap_err();
/// assert!(matches!(error, TemplateError::Exec { line: 1, .. }));
/// assert!(error.to_string().contains("nil pointer evaluating interface {}.b"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TemplateError {
    /// The template text does not parse: what, and where.
    #[error(
        "the template does not parse at line {line} column {column} (byte {offset}): {message}"
    )]
    Parse {
        /// Byte offset within the template.
        offset: usize,
        /// 1-based line.
        line: usize,
        /// 1-based column, in characters.
        column: usize,
        /// What is wrong (Go's wording where it has one).
        message: String,
    },
    /// A Sprig function that this evaluator does not implement, by name.
    #[error("template function {name} is not supported by this preview")]
    Unsupported {
        /// The function's name.
        name: String,
    },
    /// A function or an action failed while executing.
    #[error("the template fails at line {line} column {column}: {message}")]
    Exec {
        /// 1-based line of the failing action.
        line: usize,
        /// 1-based column of the failing action, in characters.
        column: usize,
        /// What failed (Go's wording where it has one).
        message: String,
    },
}

/// Renders `template` (Go `text/template` with Sprig's hermetic functions) on `data`, as
/// Cluster API renders a patch's `valueFrom.template`: JSON numbers are Go `float64`s, a
/// missing key prints `<no value>`.
///
/// ```
/// use serde_json::json;
///
/// let data = json!({"replicas": 3, "cni": "calico"});
/// let out = payload_gotmpl::render(
///     "{{ .cni | default \"canal\" }} x{{ .replicas }} {{ .missing }}",
///     &data,
/// )?;
/// assert_eq!(out, "calico x3 <no value>");
/// # Ok::<(), payload_gotmpl::TemplateError>(())
/// ```
///
/// # Errors
///
/// [`TemplateError::Parse`] when the text does not parse (a function outside Go's builtins and
/// Sprig's hermetic map included), [`TemplateError::Unsupported`] when it calls a Sprig function
/// this crate does not implement, [`TemplateError::Exec`] when an action fails or a
/// [limit](limits) is reached.
pub fn render(template: &str, data: &serde_json::Value) -> Result<String, TemplateError> {
    let parsed = parse::parse(template, true)?;
    exec::execute(template, &parsed, value::Value::from_json(data), false)
}

/// Renders a naming template (`namingStrategy.template` / `naming.template`) as Cluster API's
/// `names.templateGenerator` does: `template.New(…).Option("missingkey=error")` with no
/// functions added, so Go's builtins only (a Sprig function is `not defined`) and a missing
/// key is an error (`map has no entry for key "x"`).
///
/// ```
/// use serde_json::json;
///
/// let data = json!({"cluster": {"name": "demo"}, "random": "x7k2p"});
/// let name = payload_gotmpl::render_name("{{ .cluster.name }}-md-{{ .random }}", &data)?;
/// assert_eq!(name, "demo-md-x7k2p");
/// assert!(payload_gotmpl::render_name("{{ .nope }}", &data).is_err());
/// assert!(payload_gotmpl::render_name("{{ upper .random }}", &data).is_err());
/// # Ok::<(), payload_gotmpl::TemplateError>(())
/// ```
///
/// # Errors
///
/// As [`render`], and [`TemplateError::Exec`] for a missing key.
pub fn render_name(template: &str, data: &serde_json::Value) -> Result<String, TemplateError> {
    let parsed = parse::parse(template, false)?;
    exec::execute(template, &parsed, value::Value::from_json(data), true)
}

/// The 1-based line and column (in characters) of byte `offset` in `text`.
pub(crate) fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let mut offset = offset.min(text.len());
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    let before = &text[..offset];
    let line = before.matches('\n').count() + 1;
    let start = before.rfind('\n').map_or(0, |i| i + 1);
    (line, before[start..].chars().count() + 1)
}

/// `text` fit for a one-line message: at most about 60 characters, control characters escaped.
pub(crate) fn excerpt(text: &str) -> String {
    let mut out = String::new();
    for (count, c) in text.chars().enumerate() {
        if count >= 60 {
            out.push('…');
            break;
        }
        if c.is_control() {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    out
}

/// The README's example runs.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
