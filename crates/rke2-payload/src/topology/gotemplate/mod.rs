//! An evaluator of Go `text/template` with the Sprig function library, as Cluster API runs
//! ClusterClass inline patches' `valueFrom.template`.
//!
//! What it follows:
//!
//! - Cluster API (`core/reconcilers/topology/cluster/patches/inline/json_patch_generator.go`,
//!   `renderValueTemplate`) parses with `template.New("tpl").Funcs(sprig.HermeticTxtFuncMap())`
//!   and sets no `Option`, so a missing map key is Go's default `missingkey=default`: it yields
//!   the invalid value, printed `<no value>`, and a field of it is again `<no value>`; a field of
//!   a JSON `null` is the error `nil pointer evaluating interface {}.x`.
//! - The data is the variables JSON-decoded into `interface{}` (`calculateTemplateData`), so every
//!   JSON number is a Go `float64`: `{{ .replicas }}` of 3 prints `3`, of 1000000 prints `1e+06`,
//!   `eq .replicas 3` fails (float64 against int), and a function with an `int` parameter
//!   (`indent`, `repeat`, `until`, ...) refuses a JSON number (`wrong type for value`).
//! - The function names are Go's builtins plus Sprig v3.3.0's `genericMap` less its
//!   `nonhermeticFunctions` (`now`, `env`, `randAlpha`, `uuidv4`, ...). A name outside that set
//!   is a parse error (`function "x" not defined`), as Go reports it; this includes Helm's
//!   `toYaml`, `include`, `tpl` and `required`. A Sprig function this evaluator does not
//!   implement is [`TemplateError::Unsupported`] when it is called.
//!
//! Deviations from Go, all at the edges: strings are Rust strings, so byte-slicing functions
//! (`trunc`, `substr`, `slice` of text) round to a character boundary and invalid UTF-8 from
//! `\x` escapes or `b64dec` becomes U+FFFD; `%q` escapes control characters but treats every
//! other character as printable; `keys` and `values` are sorted by key where Go's order is
//! random; the nesting and size limits ([`limits`]) are lower than Go's.
//!
//! Never panics on any input, and is bounded in time and memory by [`limits`].

mod exec;
mod fmt;
mod funcs;
mod parse;
mod value;

#[cfg(test)]
mod tests;

/// Bounds on what a template may cost (it comes from user input).
pub(crate) mod limits {
    /// The largest output, and the largest string a function may build, in bytes.
    pub(crate) const OUTPUT_BYTES: usize = 16 << 20;
    /// The deepest nesting of `template` / `block` calls (Go allows 100000).
    pub(crate) const TEMPLATE_DEPTH: usize = 100;
    /// The deepest nesting of actions and parentheses in the template text.
    pub(crate) const PARSE_DEPTH: usize = 100;
    /// The most steps (range iterations, function calls, actions) one execution may take.
    pub(crate) const STEPS: u64 = 2_000_000;
    /// The most bytes all functions together may produce in one execution.
    pub(crate) const WORK_BYTES: usize = 256 << 20;
    /// The longest list `until`, `untilStep` and `seq` may build.
    pub(crate) const SEQUENCE: usize = 100_000;
    /// The deepest nesting of lists and maps that printing or JSON encoding descends.
    pub(crate) const VALUE_DEPTH: usize = 200;
}

/// Why a template could not be rendered.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum TemplateError {
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
/// Cluster API renders a patch's `valueFrom.template`.
pub(crate) fn render(template: &str, data: &serde_json::Value) -> Result<String, TemplateError> {
    let parsed = parse::parse(template, true)?;
    exec::execute(template, &parsed, value::Value::from_json(data), false)
}

/// Renders a naming template (`namingStrategy.template` / `naming.template`) as Cluster API's
/// `names.templateGenerator` does: `template.New(…).Option("missingkey=error")` with no
/// functions added, so Go's builtins only (a Sprig function is `not defined`) and a missing
/// key is an error (`map has no entry for key "x"`).
pub(crate) fn render_name(
    template: &str,
    data: &serde_json::Value,
) -> Result<String, TemplateError> {
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
