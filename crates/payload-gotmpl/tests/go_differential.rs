//! The evaluator against Go itself: a table of templates rendered by this crate and by Go's
//! `text/template` with Sprig (`tests/go/main.go`, built here with `go build`), as Cluster API
//! renders them; the outputs must be identical, or both must fail.
//!
//! Where this crate differs on purpose, or lacks a function, the case is listed in [`KNOWN`] with
//! the reason, and the test fails if a listed case stops differing, so the list stays true.
//!
//! Go and the Sprig sources come from Debian's `golang-go` and
//! `golang-github-masterminds-sprig-dev` (built in GOPATH mode, offline, against
//! `/usr/share/gocode`). Without them the test prints a skip line and passes, except under
//! `CI=true`, where it fails.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use payload_gotmpl::{render, render_name};
use serde_json::{Value, json};

/// The data of the patch templates: variables as a ClusterClass patch sees them.
const DATA: &str = r#"{
    "cluster": {"name": "demo", "namespace": "fleet"},
    "replicas": 3, "big": 1000000, "ratio": 0.5, "zero": 0,
    "cni": "calico", "empty": "", "flag": true, "off": false, "none": null,
    "sans": ["a.example.com", "b.example.com"], "emptylist": [],
    "labels": {"tier": "web", "env": "prod"},
    "nested": {"list": [{"name": "x", "port": 80}, {"name": "y", "port": 443}]},
    "text": "  Hello, World  ", "csv": "a,b,c", "json": "{\"k\":[1,2]}",
    "b64": "aGVsbG8=", "multiline": "line1\nline2", "version": "v1.31.4+rke2r1"
}"#;

/// Patch templates (`valueFrom.template`): (name, template), rendered on [`DATA`].
const PATCH: &[(&str, &str)] = &[
    // Actions and values.
    ("text", "plain text"),
    ("field", "{{ .cluster.name }}"),
    ("missing", "{{ .missing }}"),
    ("missing_nested", "{{ .missing.deeper }}"),
    ("null_value", "{{ .none }}"),
    (
        "null_variable",
        "{{ $x := .none }}{{ $x }} {{ (.none) }} {{ .none | print }}",
    ),
    ("field_of_null", "{{ .none.x }}"),
    ("field_of_string", "{{ .cni.x }}"),
    ("number_int", "{{ .replicas }}"),
    ("number_big", "{{ .big }}"),
    ("number_float", "{{ .ratio }}"),
    ("bools", "{{ .flag }} {{ .off }}"),
    ("list_printed", "{{ .sans }}"),
    ("map_printed", "{{ .labels }}"),
    ("nested_printed", "{{ .nested }}"),
    ("comment", "a{{/* a comment */}}b"),
    (
        "root_variable",
        "{{ $.cluster.name }}/{{ $.cluster.namespace }}",
    ),
    (
        "literals",
        "{{ 0x1F }} {{ 1e3 }} {{ 'a' }} {{ \"\\u00e9\\t\" }} {{ `raw\\n` }} {{ 1_000 }} {{ -2 }}",
    ),
    // Pipelines.
    ("pipe_chain", "{{ .cluster.name | upper | quote }}"),
    (
        "pipe_parenthesised",
        "{{ (printf \"%s-%d\" .cluster.name 3) | upper }}",
    ),
    ("pipe_last_argument", "{{ .sans | join \",\" }}"),
    // Control structures.
    ("if_else", "{{ if .flag }}yes{{ else }}no{{ end }}"),
    (
        "if_else_if",
        "{{ if .off }}a{{ else if .flag }}b{{ else }}c{{ end }}",
    ),
    (
        "if_empty_string",
        "{{ if .empty }}x{{ else }}empty{{ end }}",
    ),
    ("if_zero", "{{ if .zero }}x{{ else }}zero{{ end }}"),
    ("if_missing", "{{ if .missing }}x{{ else }}absent{{ end }}"),
    ("range_list", "{{ range .sans }}[{{ . }}]{{ end }}"),
    (
        "range_index",
        "{{ range $i, $s := .sans }}{{ $i }}={{ $s }};{{ end }}",
    ),
    (
        "range_map_sorted",
        "{{ range $k, $v := .labels }}{{ $k }}:{{ $v }},{{ end }}",
    ),
    (
        "range_else",
        "{{ range .emptylist }}x{{ else }}none{{ end }}",
    ),
    (
        "range_break",
        "{{ range .sans }}{{ . }}{{ break }}{{ end }}",
    ),
    (
        "range_continue",
        "{{ range $i, $s := .sans }}{{ if eq $i 0 }}{{ continue }}{{ end }}{{ $s }}{{ end }}",
    ),
    (
        "range_objects",
        "{{ range .nested.list }}{{ .name }}:{{ .port }} {{ end }}",
    ),
    (
        "range_until",
        "{{ range $i, $e := until 3 }}{{ $i }}{{ $e }}{{ end }}",
    ),
    (
        "with",
        "{{ with .cluster }}{{ .name }}/{{ .namespace }}{{ end }}",
    ),
    (
        "with_else",
        "{{ with .missing }}x{{ else }}nothing{{ end }}",
    ),
    // Variables, templates.
    (
        "variable_assign",
        "{{ $x := \"a\" }}{{ $x = \"b\" }}{{ $x }}",
    ),
    (
        "variable_scope",
        "{{ $x := 1 }}{{ if true }}{{ $x := 2 }}{{ $x }}{{ end }}{{ $x }}",
    ),
    (
        "define_template",
        "{{ define \"t\" }}[{{ . }}]{{ end }}{{ template \"t\" .cni }}",
    ),
    ("block", "{{ block \"b\" .cni }}<{{ . }}>{{ end }}"),
    ("undefined_template", "{{ template \"nope\" }}"),
    // Whitespace trimming.
    ("trim_markers", "a  {{- .cni -}}  b"),
    (
        "trim_lines",
        "items:\n{{- range .sans }}\n- {{ . }}\n{{- end }}\n",
    ),
    // Comparisons and logic.
    ("eq_strings", "{{ eq .cni \"calico\" }} {{ ne .cni \"x\" }}"),
    ("eq_several", "{{ eq .cni \"a\" \"b\" \"calico\" }}"),
    ("eq_float_against_int", "{{ eq .replicas 3 }}"),
    ("lt_floats", "{{ lt .replicas 5.0 }} {{ gt .ratio 0.25 }}"),
    ("ordering", "{{ gt \"b\" \"a\" }} {{ le 1 1 }} {{ ge 2 3 }}"),
    (
        "and_or_not",
        "{{ and .flag .cni }} {{ or .empty \"fallback\" }} {{ not .off }} {{ not 0 }}",
    ),
    ("eq_nil", "{{ eq .none nil }}"),
    // printf and friends.
    (
        "printf_verbs",
        "{{ printf \"%s|%q|%v|%d|%5.2f|%x|%t\" \"s\" \"q\" .sans 42 3.14159 255 true }}",
    ),
    ("printf_map", "{{ printf \"%v\" .labels }}"),
    (
        "printf_float_forms",
        "{{ printf \"%g %e %.1f\" .big .ratio .replicas }}",
    ),
    (
        "printf_width_flags",
        "{{ printf \"%-5s|%05d|%+d|%8.3s|\" \"ab\" 42 7 \"abcdef\" }}",
    ),
    ("printf_wrong_verb", "{{ printf \"%d\" \"x\" }}"),
    (
        "printf_type",
        "{{ printf \"%T %T %T\" .replicas .cni .sans }}",
    ),
    (
        "printf_type_of_sprig_results",
        "{{ printf \"%T %T\" (add 1 2) (splitList \",\" \"a,b\") }}",
    ),
    ("printf_type_nil", "{{ printf \"%T|%8T|\" .none .flag }}"),
    ("printf_nil", "{{ printf \"%v\" .none }}"),
    (
        "print_println",
        "{{ print \"a\" 1 2 \"b\" }}{{ println \"c\" 3 }}",
    ),
    // index, slice, len.
    ("index_list", "{{ index .sans 1 }}"),
    ("index_map", "{{ index .labels \"tier\" }}"),
    ("index_map_missing", "{{ index .labels \"nope\" }}"),
    ("index_nested", "{{ index .nested.list 0 \"name\" }}"),
    ("index_out_of_range", "{{ index .sans 5 }}"),
    (
        "slice_list",
        "{{ slice .sans 1 }} {{ slice (list 1 2 3 4) 1 3 }}",
    ),
    ("len", "{{ len .sans }} {{ len .labels }} {{ len .cni }}"),
    ("len_of_null", "{{ len .none }}"),
    // Sprig: strings.
    (
        "default",
        "{{ .missing | default \"d\" }} {{ .empty | default \"e\" }} {{ .cni | default \"x\" }} {{ .zero | default 7 }} {{ .none | default \"n\" }}",
    ),
    (
        "quote_squote",
        "{{ quote .cni \"x\\\"y\" }} {{ squote .cni }}",
    ),
    ("quote_missing", "[{{ quote .missing }}]"),
    (
        "case",
        "{{ upper .cni }} {{ lower \"ABC\" }} {{ title \"hello world\" }} {{ untitle \"Hello\" }}",
    ),
    (
        "trims",
        "[{{ trim .text }}] [{{ trimAll \"x\" \"xxaxx\" }}] [{{ trimPrefix \"v\" .version }}] [{{ trimSuffix \"+rke2r1\" .version }}]",
    ),
    ("replace", "{{ replace \".\" \"-\" \"a.b.c\" }}"),
    (
        "contains_prefix_suffix",
        "{{ contains \"cal\" .cni }} {{ hasPrefix \"v1\" .version }} {{ hasSuffix \"r1\" .version }}",
    ),
    (
        "split_join",
        "{{ $p := split \",\" .csv }}{{ $p._1 }} {{ join \"-\" (splitList \",\" .csv) }}",
    ),
    ("splitn", "{{ splitn \",\" 2 .csv }}"),
    (
        "repeat_substr_trunc",
        "{{ repeat 3 \"ab\" }} {{ substr 1 3 \"hello\" }} {{ trunc 3 \"hello\" }} {{ trunc -2 \"hello\" }}",
    ),
    ("abbrev", "{{ abbrev 5 \"hello world\" }}"),
    (
        "nospace_cat",
        "{{ nospace \"a b c\" }} {{ cat \"a\" \"b\" .cni }}",
    ),
    (
        "indent_nindent",
        "x:{{ .multiline | indent 2 }}\ny:{{ .multiline | nindent 4 }}",
    ),
    ("indent_float_width", "{{ indent .replicas \"x\" }}"),
    (
        "case_conversions",
        "{{ snakecase \"FirstName\" }} {{ camelcase \"http_server\" }} {{ kebabcase \"FirstName\" }}",
    ),
    (
        "plural",
        "{{ plural \"one\" \"many\" 2 }} {{ plural \"one\" \"many\" 1 }}",
    ),
    (
        "conversions",
        "{{ toString 12 }} {{ atoi \"42\" }} {{ int \"7\" }} {{ int64 \"8\" }} {{ float64 \"1.5\" }} {{ int .replicas }}",
    ),
    ("to_strings", "{{ toStrings .sans }}"),
    ("unicode_case", "{{ upper \"straße\" }} {{ lower \"ÀÉ\" }}"),
    (
        "regex_match",
        "{{ regexMatch \"^v1\\\\.[0-9]+\" .version }}",
    ),
    (
        "regex_replace",
        "{{ regexReplaceAll \"[0-9]+\" .version \"N\" }}",
    ),
    // Sprig: encodings and hashes.
    (
        "hashes",
        "{{ sha256sum \"a\" }} {{ sha1sum \"a\" }} {{ adler32sum \"a\" }}",
    ),
    ("sha512sum", "{{ sha512sum \"a\" }}"),
    ("base64", "{{ b64enc .cni }} {{ b64dec .b64 }}"),
    ("base64_invalid", "{{ b64dec \"!!\" }}"),
    // Sprig: lists.
    ("list", "{{ list 1 \"a\" .flag }}"),
    (
        "first_last_rest_initial",
        "{{ first .sans }} {{ last .sans }} {{ rest .sans }} {{ initial .sans }}",
    ),
    (
        "append_prepend_concat",
        "{{ append .sans \"c\" }} {{ prepend .sans \"z\" }} {{ concat .sans (list \"q\") }}",
    ),
    (
        "uniq_compact_without",
        "{{ uniq (list 1 1 2) }} {{ compact (list \"\" \"a\" 0 1) }} {{ without (list 1 2 3) 2 }}",
    ),
    (
        "has_reverse_sort",
        "{{ has \"b\" (list \"a\" \"b\") }} {{ reverse .sans }} {{ sortAlpha (list \"b\" \"a\" \"c\") }}",
    ),
    (
        "until_seq",
        "{{ until 3 }} {{ untilStep 0 10 3 }} {{ seq 3 }} {{ seq 2 5 }} {{ seq 1 2 5 }} {{ seq 5 1 }}",
    ),
    ("until_float", "{{ until .replicas }}"),
    // Sprig: dictionaries.
    (
        "dict_get_set_haskey",
        "{{ $d := dict \"a\" 1 \"b\" \"two\" }}{{ get $d \"b\" }} {{ $_ := set $d \"c\" 3 }}{{ $d }} {{ hasKey $d \"c\" }} {{ keys $d | sortAlpha }}",
    ),
    (
        "dict_pick_omit_unset",
        "{{ $d := dict \"a\" 1 \"b\" 2 \"c\" 3 }}{{ pick $d \"a\" \"c\" }} {{ omit $d \"a\" }} {{ $_ := unset $d \"b\" }}{{ $d }}",
    ),
    ("dict_values", "{{ values .labels | sortAlpha }}"),
    ("get_missing", "[{{ get .labels \"nope\" }}]"),
    (
        "dig",
        "{{ dig \"cluster\" \"name\" \"none\" . }} {{ dig \"cluster\" \"zone\" \"none\" . }}",
    ),
    (
        "merge",
        "{{ merge (dict \"a\" 1) (dict \"a\" 2 \"b\" 3) }} {{ mergeOverwrite (dict \"a\" 1) (dict \"a\" 2) }}",
    ),
    // Sprig: JSON.
    (
        "to_json",
        "{{ toJson .labels }} {{ toJson .sans }} {{ toJson .big }} {{ toJson \"<a&b>\" }} {{ toJson .none }}",
    ),
    ("to_pretty_json", "{{ toPrettyJson .nested }}"),
    ("to_raw_json", "{{ toRawJson \"<a&b>\" }}"),
    (
        "from_json",
        "{{ (fromJson .json).k }} {{ mustFromJson .json }} {{ (fromJson \"[1,2]\") }}",
    ),
    ("from_json_invalid", "{{ fromJson \"{\" }}"),
    ("must_from_json_invalid", "{{ mustFromJson \"{\" }}"),
    // Sprig: flow.
    (
        "ternary",
        "{{ ternary \"yes\" \"no\" .flag }} {{ .off | ternary \"y\" \"n\" }}",
    ),
    (
        "empty",
        "{{ empty .empty }} {{ empty .cni }} {{ empty .zero }} {{ empty .emptylist }} {{ empty .missing }}",
    ),
    (
        "coalesce",
        "{{ coalesce .missing .empty .cni }} {{ coalesce .zero 0 }}",
    ),
    ("all_any", "{{ all 1 \"a\" true }} {{ any 0 \"\" .cni }}"),
    ("fail", "{{ fail \"boom\" }}"),
    // Sprig: arithmetic.
    (
        "integer_arithmetic",
        "{{ add 1 2 3 }} {{ sub 10 4 }} {{ mul 2 3 4 }} {{ div 10 3 }} {{ mod 10 3 }}",
    ),
    (
        "arithmetic_on_json_numbers",
        "{{ add .replicas 1 }} {{ mul .ratio 10 }} {{ sub .big 1 }}",
    ),
    (
        "max_min",
        "{{ max 1 5 3 }} {{ min 4 2 9 }} {{ maxf 1.5 2 }} {{ minf 1.5 2 }} {{ biggest 1 2 }}",
    ),
    (
        "add1_floor_ceil_round",
        "{{ add1 .replicas }} {{ floor 1.7 }} {{ ceil 1.2 }} {{ round 1.255 2 }}",
    ),
    ("divide_by_zero", "{{ div 1 0 }}"),
    // Sprig: paths.
    (
        "paths",
        "{{ base \"/a/b.txt\" }} {{ dir \"/a/b.txt\" }} {{ ext \"x.tar.gz\" }} {{ clean \"/a/../b\" }} {{ isAbs \"/x\" }}",
    ),
    // Go's escapers.
    (
        "escapers",
        "{{ urlquery \"a b&c\" }} {{ html \"<x>\" }} {{ js \"a'b\" }}",
    ),
    // Functions Sprig has that this crate does not implement.
    ("kind_of", "{{ kindOf .cni }}"),
    (
        "semver_compare",
        "{{ semverCompare \">=1.30\" \"1.31.4\" }}",
    ),
    // What is not defined, and what does not parse.
    ("undefined_function", "{{ nope 1 }}"),
    ("helm_to_yaml", "{{ toYaml .labels }}"),
    ("helm_required", "{{ required \"x\" .cni }}"),
    ("nonhermetic_now", "{{ now }}"),
    ("nonhermetic_env", "{{ env \"HOME\" }}"),
    ("unclosed_action", "{{ .cni "),
    ("unclosed_range", "{{ range .sans }}x"),
    ("stray_end", "{{ end }}"),
    ("call_not_a_function", "{{ call .cni }}"),
];

/// The data of the naming templates: what Cluster API's name generator gives them.
const NAMING_DATA: &str = r#"{"cluster": {"name": "demo"}, "random": "x7k2p"}"#;

/// Naming templates (`namingStrategy.template`): Go's builtins only, `missingkey=error`.
const NAMING: &[(&str, &str)] = &[
    ("naming_basic", "{{ .cluster.name }}-{{ .random }}"),
    (
        "naming_printf",
        "{{ printf \"%s-md-%s\" .cluster.name .random }}",
    ),
    ("naming_missing", "{{ .nope }}"),
    ("naming_missing_nested", "{{ .cluster.nope }}"),
    ("naming_sprig_undefined", "{{ upper .cluster.name }}"),
    ("naming_slice_builtin", "{{ slice .random 0 3 }}"),
    ("naming_len", "{{ .cluster.name }}{{ len .random }}"),
];

/// The cases where this crate and Go differ: (name, why). Each must still differ.
const KNOWN: &[(&str, &str)] = &[
    (
        "regex_match",
        "regexMatch and the other regular-expression functions are not implemented (TemplateError::Unsupported)",
    ),
    (
        "regex_replace",
        "regexReplaceAll is not implemented (TemplateError::Unsupported)",
    ),
    (
        "kind_of",
        "the reflection functions (kindOf, typeOf, ...) are not implemented",
    ),
    (
        "semver_compare",
        "semver and semverCompare are not implemented",
    ),
    (
        "sha512sum",
        "Sprig added sha512sum in v3.3.0, which Cluster API uses and this crate follows; Debian's Sprig is v3.2.3",
    ),
    (
        "unicode_case",
        "upper and lower use Rust's full Unicode case mapping (ß becomes SS); Go maps rune by rune (ß stays)",
    ),
    (
        "naming_slice_builtin",
        "a naming template calls Sprig's slice, which refuses a string; Go's builtin slice (the only one a naming template has) slices strings by bytes",
    ),
    (
        "printf_type_of_sprig_results",
        "Sprig's int64 and []string results are an int and a list of interface{} here: %T prints int and []interface {}",
    ),
    (
        "base64_invalid",
        "b64dec of invalid base64 prints the decoder's error as its output; the Rust decoder's words are not Go's",
    ),
];

/// What one side made of a case.
#[derive(Debug, Clone, PartialEq)]
enum Outcome {
    /// The rendered text.
    Output(String),
    /// An error, with its message.
    Error(String),
}

impl Outcome {
    /// Same output, or both errors (the messages may differ).
    fn agrees(&self, other: &Outcome) -> bool {
        match (self, other) {
            (Outcome::Output(a), Outcome::Output(b)) => a == b,
            (Outcome::Error(_), Outcome::Error(_)) => true,
            _ => false,
        }
    }
}

/// Whether a missing Go toolchain must fail the test.
fn required() -> bool {
    std::env::var("CI").is_ok_and(|v| v == "true")
}

/// A line on standard error that the test harness does not capture.
fn say(line: &str) {
    use std::io::Write as _;
    let _ = writeln!(std::io::stderr(), "{line}");
}

/// Skips (or, under `CI=true`, fails) for `why`.
fn skip(why: &str) {
    assert!(
        !required(),
        "CI=true and the Go cross-check cannot run: {why}"
    );
    say(&format!(
        "skipped: the Go cross-check of payload-gotmpl: {why}"
    ));
}

/// Builds the Go renderer into `dir` (GOPATH mode, offline, against Debian's Go sources).
fn build_go(dir: &Path) -> Result<PathBuf, String> {
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/go");
    let binary = dir.join("gotmpl");
    let mut gopath = std::ffi::OsString::from("/usr/share/gocode:");
    gopath.push(dir.join("gopath"));
    if let Some(own) = std::env::var_os("GOPATH") {
        gopath.push(":");
        gopath.push(own);
    }
    let mut command = Command::new("go");
    command
        .arg("build")
        .arg("-o")
        .arg(&binary)
        .arg(".")
        .current_dir(&source)
        .env("GO111MODULE", "off")
        .env("GOPATH", gopath)
        .env("GOFLAGS", "")
        .stdin(Stdio::null());
    if std::env::var_os("GOCACHE").is_none() && std::env::var_os("HOME").is_none() {
        command.env("GOCACHE", dir.join("cache"));
    }
    let output = command
        .output()
        .map_err(|e| format!("`go` cannot be run ({e}); install golang-go"))?;
    if !output.status.success() {
        return Err(format!(
            "`go build` fails (install golang-github-masterminds-sprig-dev): {}",
            String::from_utf8_lossy(&output.stderr).trim()
        ));
    }
    Ok(binary)
}

/// Runs `cases` (template, data, naming) through the Go renderer.
fn run_go(binary: &Path, cases: &[Value]) -> Vec<Outcome> {
    let mut child = Command::new(binary)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the Go renderer starts");
    let input = serde_json::to_vec(cases).expect("the cases are JSON");
    {
        use std::io::Write as _;
        let mut stdin = child.stdin.take().expect("stdin");
        stdin.write_all(&input).expect("the cases are written");
    }
    let output = child.wait_with_output().expect("the Go renderer ends");
    assert!(
        output.status.success(),
        "the Go renderer fails: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let results: Vec<Value> =
        serde_json::from_slice(&output.stdout).expect("the Go renderer writes JSON");
    results
        .into_iter()
        .map(|r| match (r.get("output"), r.get("error")) {
            (Some(Value::String(out)), _) => Outcome::Output(out.clone()),
            (_, Some(Value::String(e))) => Outcome::Error(e.clone()),
            _ => panic!("a result of the Go renderer is neither output nor error: {r}"),
        })
        .collect()
}

/// Every case: (name, template, data, naming).
fn cases() -> Vec<(&'static str, &'static str, Value, bool)> {
    let data: Value = serde_json::from_str(DATA).expect("DATA is JSON");
    let naming: Value = serde_json::from_str(NAMING_DATA).expect("NAMING_DATA is JSON");
    PATCH
        .iter()
        .map(|(name, t)| (*name, *t, data.clone(), false))
        .chain(
            NAMING
                .iter()
                .map(|(name, t)| (*name, *t, naming.clone(), true)),
        )
        .collect()
}

#[test]
fn the_table_is_large_and_its_names_unique() {
    let all = cases();
    assert!(all.len() >= 60, "{} cases", all.len());
    let mut names: Vec<&str> = all.iter().map(|c| c.0).collect();
    names.sort_unstable();
    names.dedup();
    assert_eq!(names.len(), all.len(), "a case name is used twice");
    for (known, _) in KNOWN {
        assert!(names.contains(known), "KNOWN names no case {known}");
    }
}

#[test]
fn renders_as_go_text_template_with_sprig() {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let binary = match build_go(dir.path()) {
        Ok(binary) => binary,
        Err(why) => return skip(&why),
    };
    let all = cases();
    let input: Vec<Value> = all
        .iter()
        .map(|(_, t, data, naming)| json!({"template": t, "data": data, "naming": naming}))
        .collect();
    let go = run_go(&binary, &input);
    assert_eq!(go.len(), all.len(), "one Go result per case");
    let mut wrong = Vec::new();
    let mut agreed = 0;
    for ((name, template, data, naming), go) in all.iter().zip(&go) {
        let ours = if *naming {
            render_name(template, data)
        } else {
            render(template, data)
        };
        let ours = match ours {
            Ok(out) => Outcome::Output(out),
            Err(e) => Outcome::Error(e.to_string()),
        };
        let known = KNOWN.iter().find(|(k, _)| k == name);
        match (ours.agrees(go), known) {
            (true, None) => agreed += 1,
            (false, Some(_)) => {}
            (true, Some((_, why))) => wrong.push(format!(
                "{name}: listed as a known difference ({why}) but both give {ours:?}: remove it from KNOWN"
            )),
            (false, None) => wrong.push(format!(
                "{name}: {template:?}\n    this crate: {ours:?}\n    Go:         {go:?}"
            )),
        }
    }
    say(&format!(
        "payload-gotmpl against Go: {} cases, {agreed} identical, {} known differences",
        all.len(),
        KNOWN.len()
    ));
    assert!(wrong.is_empty(), "\n{}", wrong.join("\n"));
}
