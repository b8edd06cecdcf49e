//! The functions: Go's `text/template` builtins (`funcs.go`) and Sprig v3.3.0's hermetic map
//! (`functions.go`), each with the Go parameter types that decide what `text/template` accepts.
//! Sprig's `slice` replaces Go's builtin, as a `Funcs` entry does.
//!
//! The table is here ([`lookup`]); the functions are in files by family: Go's builtins
//! (`builtins.rs`), strings (`strings.rs`), sequences and lists (`lists.rs`), arithmetic and
//! number conversions (`math.rs`), dictionaries (`dicts.rs`), defaults and JSON (`flow.rs`),
//! paths (`paths.rs`).

mod builtins;
mod dicts;
mod flow;
mod lists;
mod math;
mod paths;
mod strings;

use super::limits;
use super::value::{self, Value};

pub(crate) use math::{to_float64, to_int64};

/// A Go parameter type, as far as `text/template`'s argument checks care.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Ty {
    /// `interface{}`: anything; a missing value becomes `nil`.
    Any,
    /// `reflect.Value` (builtins): anything, a missing value stays missing.
    Val,
    /// `string`
    Str,
    /// `int`
    Int,
    /// `bool`
    Bool,
    /// `float64`
    Float,
    /// `map[string]interface{}`
    Map,
}

impl Ty {
    /// Go's name of the type.
    pub(crate) fn go_name(self) -> &'static str {
        match self {
            Ty::Any => "interface {}",
            Ty::Val => "reflect.Value",
            Ty::Str => "string",
            Ty::Int => "int",
            Ty::Bool => "bool",
            Ty::Float => "float64",
            Ty::Map => "map[string]interface {}",
        }
    }
}

/// How a function failed.
#[derive(Debug)]
pub(crate) enum CallError {
    /// The function returned an error or panicked: `error calling NAME: ...`.
    Failed(String),
    /// A message printed as is (limits).
    Plain(String),
    /// Not implemented here.
    #[allow(
        dead_code,
        reason = "the refusal every unimplemented Sprig function is to use"
    )]
    Unsupported,
}

/// The budget shared by the functions of one execution.
#[derive(Debug, Default)]
pub(crate) struct Ctx {
    /// Bytes (and list items) produced so far.
    work: usize,
}

impl Ctx {
    /// Charges `n` units of work, failing past the limit.
    fn charge(&mut self, n: usize) -> Result<(), CallError> {
        if n > limits::OUTPUT_BYTES {
            return Err(CallError::Plain(format!(
                "a function's result would exceed {} bytes",
                limits::OUTPUT_BYTES
            )));
        }
        self.work = self.work.saturating_add(n);
        if self.work > limits::WORK_BYTES {
            return Err(CallError::Plain(format!(
                "the template's functions produce more than {} bytes",
                limits::WORK_BYTES
            )));
        }
        Ok(())
    }
}

/// An implementation.
type Native = fn(&mut Ctx, Vec<Value>) -> Result<Value, CallError>;

/// How a function runs.
#[derive(Clone, Copy)]
pub(crate) enum Imp {
    /// A plain function of its evaluated arguments.
    Native(Native),
    /// `and` (false) / `or` (true): short-circuit evaluation.
    AndOr(bool),
    /// Sprig has it; this evaluator does not.
    Unsupported,
}

/// A function: its fixed parameters, its variadic parameter, its implementation.
#[derive(Clone, Copy)]
pub(crate) struct Func {
    /// The fixed parameters.
    pub(crate) params: &'static [Ty],
    /// The type of the `...` parameter, if any.
    pub(crate) variadic: Option<Ty>,
    /// The implementation.
    pub(crate) imp: Imp,
}

/// Sprig's `nonhermeticFunctions`, which `HermeticTxtFuncMap` deletes.
const NONHERMETIC: &[&str] = &[
    "date",
    "date_in_zone",
    "date_modify",
    "now",
    "htmlDate",
    "htmlDateInZone",
    "dateInZone",
    "dateModify",
    "randAlphaNum",
    "randAlpha",
    "randAscii",
    "randNumeric",
    "randBytes",
    "uuidv4",
    "env",
    "expandenv",
    "getHostByName",
];

/// Sprig functions that exist in the hermetic map but are not implemented here.
const UNSUPPORTED: &[&str] = &[
    "ago",
    "duration",
    "durationRound",
    "must_date_modify",
    "mustDateModify",
    "mustToDate",
    "toDate",
    "unixEpoch",
    "abbrevboth",
    "initials",
    "swapcase",
    "shuffle",
    "wrap",
    "wrapWith",
    "toDecimal",
    "addf",
    "add1f",
    "subf",
    "divf",
    "mulf",
    "randInt",
    "deepCopy",
    "mustDeepCopy",
    "typeOf",
    "typeIs",
    "typeIsLike",
    "kindOf",
    "kindIs",
    "deepEqual",
    "osBase",
    "osClean",
    "osDir",
    "osExt",
    "osIsAbs",
    "b32enc",
    "b32dec",
    "pluck",
    "chunk",
    "mustChunk",
    "bcrypt",
    "htpasswd",
    "genPrivateKey",
    "derivePassword",
    "buildCustomCert",
    "genCA",
    "genCAWithKey",
    "genSelfSignedCert",
    "genSelfSignedCertWithKey",
    "genSignedCert",
    "genSignedCertWithKey",
    "encryptAES",
    "decryptAES",
    "semver",
    "semverCompare",
    "regexMatch",
    "mustRegexMatch",
    "regexFindAll",
    "mustRegexFindAll",
    "regexFind",
    "mustRegexFind",
    "regexReplaceAll",
    "mustRegexReplaceAll",
    "regexReplaceAllLiteral",
    "mustRegexReplaceAllLiteral",
    "regexSplit",
    "mustRegexSplit",
    "regexQuoteMeta",
    "urlParse",
    "urlJoin",
    "call",
];

/// Whether `name` is one of Sprig's non-hermetic functions (undefined under Cluster API).
pub(crate) fn is_nonhermetic(name: &str) -> bool {
    NONHERMETIC.contains(&name)
}

/// Whether `name` is a function of Cluster API's template (implemented or not): Go's builtins
/// and the hermetic Sprig functions, or, for a naming template, Go's builtins alone.
pub(crate) fn is_defined(name: &str, sprig: bool) -> bool {
    if sprig {
        lookup(name).is_some()
    } else {
        GO_BUILTINS.contains(&name)
    }
}

/// The functions of Go's `text/template` itself, all a naming template has.
const GO_BUILTINS: &[&str] = &[
    "and", "call", "html", "index", "slice", "js", "len", "not", "or", "print", "printf",
    "println", "urlquery", "eq", "ge", "gt", "le", "lt", "ne",
];

/// Shorthands for the table.
use Ty::Any;

/// A fixed-arity function.
const fn f(params: &'static [Ty], imp: Native) -> Option<Func> {
    Some(Func {
        params,
        variadic: None,
        imp: Imp::Native(imp),
    })
}

/// A variadic function.
const fn v(params: &'static [Ty], rest: Ty, imp: Native) -> Option<Func> {
    Some(Func {
        params,
        variadic: Some(rest),
        imp: Imp::Native(imp),
    })
}

/// The function named `name`, if Cluster API's template has one.
pub(crate) fn lookup(name: &str) -> Option<Func> {
    if UNSUPPORTED.contains(&name) {
        return Some(Func {
            params: &[],
            variadic: Some(Any),
            imp: Imp::Unsupported,
        });
    }
    builtins::go_builtins(name)
        .or_else(|| strings::sprig_strings(name))
        .or_else(|| strings::sprig_text(name))
        .or_else(|| lists::sprig_sequences(name))
        .or_else(|| math::sprig_arithmetic(name))
        .or_else(|| lists::sprig_lists(name))
        .or_else(|| lists::sprig_list_sets(name))
        .or_else(|| flow::sprig_flow(name))
        .or_else(|| paths::sprig_paths(name))
        .or_else(|| strings::sprig_encodings(name))
        .or_else(|| dicts::sprig_dicts(name))
}

/// The string argument (the checks guarantee the type).
fn s(v: &Value) -> &str {
    v.as_str().unwrap_or("")
}

/// The int argument (the checks guarantee the type).
fn i(v: &Value) -> i64 {
    match v {
        Value::Int(i) => *i,
        _ => 0,
    }
}

/// A string result, charged to the budget.
fn out(c: &mut Ctx, text: String) -> Result<Value, CallError> {
    c.charge(text.len())?;
    Ok(Value::str(text))
}

/// The result-too-large error.
fn too_big() -> CallError {
    CallError::Plain(format!(
        "a function's result would exceed {} bytes",
        limits::OUTPUT_BYTES
    ))
}

/// A map borrowed while being changed (only through a map that holds itself).
fn busy() -> CallError {
    CallError::Failed("concurrent map access".into())
}

/// Sprig's `strval`: strings as they are, anything else as `%v`.
fn strval(v: &Value) -> Result<String, CallError> {
    match v {
        Value::Str(s) => Ok(s.to_string()),
        other => value::to_v_string(other)
            .map_err(|_| CallError::Plain("the value nests too deeply to print".into())),
    }
}
