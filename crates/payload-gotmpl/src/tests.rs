//! Outputs compared with what Go's `text/template` with Sprig prints.

use super::{TemplateError, render};

/// Renders `t` on `data` (JSON text), panicking on error.
fn r(t: &str, data: &str) -> String {
    let data: serde_json::Value = serde_json::from_str(data).expect("test data is JSON");
    match render(t, &data) {
        Ok(s) => s,
        Err(e) => panic!("{t:?} failed: {e}"),
    }
}

/// Renders `t` on `data`, expecting an error.
fn e(t: &str, data: &str) -> TemplateError {
    let data: serde_json::Value = serde_json::from_str(data).expect("test data is JSON");
    match render(t, &data) {
        Ok(s) => panic!("{t:?} rendered {s:?}"),
        Err(e) => e,
    }
}

#[test]
fn basics() {
    assert_eq!(r("hello", "{}"), "hello");
    assert_eq!(r("{{ .a }}", r#"{"a":"x"}"#), "x");
}

/// The data ClusterClass patches see.
const CAPI: &str = r#"{
  "builtin": {"cluster": {"name": "c1", "namespace": "ns"},
              "controlPlane": {"replicas": 3, "version": "v1.31.0"},
              "machineDeployment": {"topologyName": "md-0", "replicas": 1000000}},
  "tlsSans": ["a.example", "b.example"],
  "cni": "calico",
  "host": "h",
  "port": 6443,
  "half": 1.5,
  "registry": {"mirrors": {"docker.io": {"endpoint": ["https://m<1>"]}}},
  "empty": "",
  "nul": null,
  "flags": {"b": true, "a": 2}
}"#;

#[test]
fn clusterclass_templates() {
    assert_eq!(
        r(
            "{{ .builtin.cluster.name }}-{{ .builtin.machineDeployment.topologyName }}",
            CAPI
        ),
        "c1-md-0"
    );
    assert_eq!(
        r(
            "{{- range $i, $s := .tlsSans }}{{ if $i }},{{ end }}{{ $s }}{{ end }}",
            CAPI
        ),
        "a.example,b.example"
    );
    assert_eq!(
        r(
            r#"{{ if eq .cni "calico" }}calico{{ else }}canal{{ end }}"#,
            CAPI
        ),
        "calico"
    );
    assert_eq!(
        r(r#"{{ printf "%s:%d" .host (int .port) }}"#, CAPI),
        "h:6443"
    );
    assert_eq!(
        r("{{ .registry.mirrors | toJson }}", CAPI),
        r#"{"docker.io":{"endpoint":["https://m\u003c1\u003e"]}}"#
    );
    assert_eq!(
        r(r#"{{ default "v1.31.0+rke2r1" .version | quote }}"#, CAPI),
        r#""v1.31.0+rke2r1""#
    );
    assert_eq!(r(r#"- {{ join "," (list "a" "b") }}"#, CAPI), "- a,b");
}

#[test]
fn numbers_print_as_go_float64() {
    assert_eq!(r("{{ .builtin.controlPlane.replicas }}", CAPI), "3");
    assert_eq!(
        r("{{ .builtin.machineDeployment.replicas }}", CAPI),
        "1e+06"
    );
    assert_eq!(r("{{ .half }}", CAPI), "1.5");
    assert_eq!(r("{{ add .builtin.controlPlane.replicas 1 }}", CAPI), "4");
    assert_eq!(
        r(
            "{{ div 7 2 }} {{ mod 7 2 }} {{ mul 2 3 4 }} {{ sub 1 5 }}",
            CAPI
        ),
        "3 1 24 -4"
    );
    assert_eq!(
        r("{{ 1e3 }} {{ 0x1F }} {{ 010 }} {{ 'a' }} {{ 1.0 }}", CAPI),
        "1000 31 8 97 1"
    );
    assert_eq!(
        r("{{ .builtin.machineDeployment.replicas | toJson }}", CAPI),
        "1000000"
    );
    assert_eq!(
        r("{{ 0.000001 }} {{ 123456 }} {{ 1234567.0 }}", CAPI),
        "1e-06 123456 1.234567e+06"
    );
}

#[test]
fn missing_and_nil() {
    assert_eq!(r("{{ .nope }}", CAPI), "<no value>");
    assert_eq!(r("{{ .nope.deeper }}", CAPI), "<no value>");
    assert_eq!(r("{{ .nul }}", CAPI), "<no value>");
    assert_eq!(
        r("{{ $x := .nul }}{{ $x }} {{ (.nul) }}", CAPI),
        "<no value> <no value>"
    );
    assert_eq!(
        r("{{ .nul | print }} {{ printf \"%v\" .nul }}", CAPI),
        "<nil> <nil>"
    );
    assert!(
        matches!(e("{{ .nul.x }}", CAPI), TemplateError::Exec { message, .. } if message == "nil pointer evaluating interface {}.x")
    );
    assert!(
        matches!(e("{{ .cni.x }}", CAPI), TemplateError::Exec { message, .. } if message == "can't evaluate field x in type string")
    );
    assert_eq!(r("{{ print .nope }}", CAPI), "<nil>");
    assert_eq!(r(r#"{{ eq .nope "x" }}"#, CAPI), "false");
    assert_eq!(r(r#"{{ index .flags "zz" }}"#, CAPI), "<no value>");
    assert_eq!(r("{{ if .nope }}y{{ else }}n{{ end }}", CAPI), "n");
}

#[test]
fn go_type_checks() {
    assert!(
        matches!(e("{{ eq .port 6443 }}", CAPI), TemplateError::Exec { message, .. } if message == "error calling eq: incompatible types for comparison")
    );
    assert_eq!(
        r("{{ eq .port 6443.0 }} {{ eq (int .port) 6443 }}", CAPI),
        "true true"
    );
    assert!(
        matches!(e("{{ indent .port \"x\" }}", CAPI), TemplateError::Exec { message, .. } if message == "wrong type for value; expected int; got float64")
    );
    assert!(
        matches!(e("{{ upper 3 }}", CAPI), TemplateError::Exec { message, .. } if message == "expected string; found 3")
    );
    assert_eq!(r(r#"{{ printf "%d" .port }}"#, CAPI), "%!d(float64=6443)");
    assert!(matches!(
        e("{{ lt 1 \"a\" }}", CAPI),
        TemplateError::Exec { .. }
    ));
    assert_eq!(
        r(
            "{{ lt 1 2 }} {{ ge 2.5 2.5 }} {{ gt \"b\" \"a\" }} {{ le 3 2 }}",
            CAPI
        ),
        "true true true false"
    );
    assert_eq!(
        r("{{ eq 1 2 3 1 }} {{ ne \"a\" \"b\" }}", CAPI),
        "true true"
    );
    assert!(
        matches!(e("{{ upper }}", CAPI), TemplateError::Exec { message, .. } if message == "wrong number of args for upper: want 1 got 0")
    );
}

#[test]
fn parse_errors() {
    assert!(
        matches!(e("{{ toYaml . }}", CAPI), TemplateError::Parse { message, .. } if message.starts_with("function \"toYaml\" not defined"))
    );
    assert!(
        matches!(e("{{ now }}", CAPI), TemplateError::Parse { message, .. } if message.starts_with("function \"now\" not defined"))
    );
    assert!(
        matches!(e("{{ nosuch 1 }}", CAPI), TemplateError::Parse { message, .. } if message == "function \"nosuch\" not defined")
    );
    assert!(matches!(
        e("a\n{{ .x ", CAPI),
        TemplateError::Parse { line: 2, .. }
    ));
    assert!(
        matches!(e("{{ $x }}", CAPI), TemplateError::Parse { message, .. } if message == "undefined variable \"$x\"")
    );
    assert!(matches!(
        e("{{ if .a }}", CAPI),
        TemplateError::Parse { .. }
    ));
    assert!(matches!(e("{{ end }}", CAPI), TemplateError::Parse { .. }));
    assert!(matches!(
        e("{{ break }}", CAPI),
        TemplateError::Parse { .. }
    ));
    assert!(
        matches!(e("{{ . | \"x\" }}", CAPI), TemplateError::Parse { message, .. } if message == "non executable command in pipeline stage 2")
    );
    assert!(
        matches!(e("{{ genPrivateKey \"rsa\" }}", CAPI), TemplateError::Unsupported { name } if name == "genPrivateKey")
    );
}

#[test]
fn trim_and_comments() {
    assert_eq!(r("a  {{- 1 -}}  \n b", "{}"), "a1b");
    assert_eq!(r("a {{/* c */}} b", "{}"), "a  b");
    assert_eq!(r("a {{- /* c */ -}} b", "{}"), "ab");
    assert_eq!(r("{{ `raw\\n` }}|{{ \"x\\ty\" }}", "{}"), "raw\\n|x\ty");
    assert_eq!(r("{{3 -}}\n  x", "{}"), "3x");
}

#[test]
fn control_flow() {
    assert_eq!(
        r(
            "{{ if .empty }}a{{ else if .cni }}b{{ else }}c{{ end }}",
            CAPI
        ),
        "b"
    );
    assert_eq!(r("{{ with .cni }}{{ . }}{{ end }}", CAPI), "calico");
    assert_eq!(
        r(
            "{{ with .empty }}x{{ else with .cni }}{{ . }}!{{ end }}",
            CAPI
        ),
        "calico!"
    );
    assert_eq!(r("{{ range .flags }}{{ . }},{{ end }}", CAPI), "2,true,");
    assert_eq!(
        r(
            "{{ range $k, $v := .flags }}{{ $k }}={{ $v }};{{ end }}",
            CAPI
        ),
        "a=2;b=true;"
    );
    assert_eq!(
        r("{{ range .nope }}x{{ else }}empty{{ end }}", CAPI),
        "empty"
    );
    assert_eq!(
        r(
            "{{ range $i := until 5 }}{{ if eq $i 3 }}{{ break }}{{ end }}{{ if eq $i 1 }}{{ continue }}{{ end }}{{ $i }}{{ end }}",
            CAPI
        ),
        "02"
    );
    assert_eq!(r("{{ range 3 }}{{ . }}{{ end }}", CAPI), "012");
    assert_eq!(
        r(
            "{{ $x := 1 }}{{ if true }}{{ $x = 2 }}{{ end }}{{ $x }}",
            CAPI
        ),
        "2"
    );
    assert_eq!(
        r("{{ range .tlsSans }}{{ $.cni }}{{ end }}", CAPI),
        "calicocalico"
    );
    assert_eq!(
        r(
            r#"{{ define "x" }}[{{ . }}]{{ end }}{{ template "x" .cni }}"#,
            CAPI
        ),
        "[calico]"
    );
    assert_eq!(r(r#"{{ block "y" .host }}<{{ . }}>{{ end }}"#, CAPI), "<h>");
    assert_eq!(
        r(
            "{{ (index .tlsSans 1) }} {{ (dict \"a\" (dict \"b\" 5)).a.b }}",
            CAPI
        ),
        "b.example 5"
    );
}

#[test]
fn and_or_not() {
    assert_eq!(
        r(
            "{{ and 1 0 2 }} {{ or 0 \"\" \"x\" }} {{ not .empty }} {{ and 1 2 }}",
            CAPI
        ),
        "0 x true 2"
    );
    // or short-circuits: the failing call is never made.
    assert_eq!(r("{{ or 1 (fail \"no\") }}", CAPI), "1");
    assert!(
        matches!(e("{{ fail \"stop here\" }}", CAPI), TemplateError::Exec { message, .. } if message == "error calling fail: stop here")
    );
}

#[test]
fn printing() {
    assert_eq!(r("{{ .tlsSans }}", CAPI), "[a.example b.example]");
    assert_eq!(r("{{ .flags }}", CAPI), "map[a:2 b:true]");
    assert_eq!(
        r("{{ print 1 2 \"a\" 3 }}|{{ println \"x\" 1 }}", CAPI),
        "1 2a3|x 1\n"
    );
    assert_eq!(
        r(
            r#"{{ printf "%5s|%-5s|%05d|%.2f|%q|%v|%t|%x" "a" "b" 42 3.14159 "q\"" .tlsSans true 255 }}"#,
            CAPI
        ),
        r#"    a|b    |00042|3.14|"q\""|[a.example b.example]|true|ff"#
    );
    assert_eq!(r(r#"{{ printf "%s %d" "a" }}"#, CAPI), "a %!d(MISSING)");
    assert_eq!(
        r(
            r#"{{ printf "%T %T %T %T|%6T|" .port .host .tlsSans .nul true }}"#,
            CAPI
        ),
        "float64 string []interface {} <nil>|  bool|"
    );
    assert_eq!(r(r#"{{ printf "%s" "a" 3 }}"#, CAPI), "a%!(EXTRA int=3)");
    assert_eq!(
        r(
            r#"{{ html "<a&b>" }} {{ urlquery "a b&c" }} {{ js "it's" }}"#,
            CAPI
        ),
        r#"&lt;a&amp;b&gt; a+b%26c it\'s"#
    );
    assert_eq!(
        r(
            r#"{{ len .tlsSans }} {{ len "abc" }} {{ len .flags }}"#,
            CAPI
        ),
        "2 3 2"
    );
}

#[test]
fn sprig_strings() {
    assert_eq!(
        r(
            r#"{{ upper "ab" }} {{ lower "AB" }} {{ title "hello world" }} {{ trim "  x " }}"#,
            CAPI
        ),
        "AB ab Hello World x"
    );
    assert_eq!(
        r(
            r#"{{ trimAll "$" "$5$" }} {{ trimPrefix "v" "v1.2" }} {{ trimSuffix ".0" "1.0" }} {{ trunc 3 "abcdef" }} {{ trunc -2 "abcdef" }}"#,
            CAPI
        ),
        "5 1.2 1 abc ef"
    );
    assert_eq!(
        r(
            r#"{{ replace "." "-" "a.b.c" }} {{ repeat 3 "ab" }} {{ contains "b" "abc" }} {{ hasPrefix "a" "abc" }} {{ hasSuffix "c" "abc" }}"#,
            CAPI
        ),
        "a-b-c ababab true true true"
    );
    assert_eq!(
        r(
            "{{ \"a\\nb\" | indent 2 }}|{{ \"a\\nb\" | nindent 2 }}",
            CAPI
        ),
        "  a\n  b|\n  a\n  b"
    );
    assert_eq!(
        r(
            r#"{{ nospace "a b c" }} {{ cat "a" 1 nil "b" }} {{ squote "x" }} {{ quote 1 "a" }}"#,
            CAPI
        ),
        r#"abc a 1 b 'x' "1" "a""#
    );
    assert_eq!(
        r(
            r#"{{ splitList "," "a,b" }} {{ (split "," "a,b")._1 }} {{ abbrev 5 "hello world" }}"#,
            CAPI
        ),
        "[a b] b he..."
    );
    assert_eq!(
        r(
            r#"{{ snakecase "FirstName" }} {{ kebabcase "FirstName" }} {{ camelcase "http_server" }}"#,
            CAPI
        ),
        "first_name first-name HttpServer"
    );
    assert_eq!(
        r(
            r#"{{ b64enc "hello" }} {{ b64dec "aGVsbG8=" }} {{ sha256sum "a" | trunc 8 }} {{ sha1sum "a" | trunc 8 }} {{ adler32sum "a" }}"#,
            CAPI
        ),
        "aGVsbG8= hello ca978112 86f7e437 6422626"
    );
    assert_eq!(
        r(
            r#"{{ toString 3 }} {{ atoi "42" }} {{ int "0x10" }} {{ int "3.0" }} {{ int "x" }} {{ float64 "1.5" }} {{ int64 .half }}"#,
            CAPI
        ),
        "3 42 16 3 0 1.5 1"
    );
}

#[test]
fn sprig_lists_and_dicts() {
    assert_eq!(
        r(
            r#"{{ list 1 "a" nil }} {{ append (list 1) 2 }} {{ prepend (list 1) 0 }} {{ first .tlsSans }} {{ last .tlsSans }}"#,
            CAPI
        ),
        "[1 a <nil>] [1 2] [0 1] a.example b.example"
    );
    assert_eq!(
        r(
            r#"{{ rest (list 1 2 3) }} {{ initial (list 1 2 3) }} {{ uniq (list 1 1 2) }} {{ without (list 1 2 3) 2 }} {{ has 2 (list 1 2) }}"#,
            CAPI
        ),
        "[2 3] [1 2] [1 2] [1 3] true"
    );
    assert_eq!(
        r(
            r#"{{ compact (list "" "a" 0 1) }} {{ concat (list 1) (list 2 3) }} {{ reverse (list 1 2) }} {{ sortAlpha (list "b" "a") }} {{ slice (list 1 2 3) 1 }}"#,
            CAPI
        ),
        "[a 1] [1 2 3] [2 1] [a b] [2 3]"
    );
    assert_eq!(
        r(
            r#"{{ until 3 }} {{ untilStep 0 10 4 }} {{ seq 3 }} {{ seq 5 -1 1 }}"#,
            CAPI
        ),
        "[0 1 2] [0 4 8] 1 2 3 5 4 3 2 1"
    );
    assert_eq!(
        r(
            r#"{{ $d := dict "b" 1 "a" 2 "odd" }}{{ $d }} {{ keys $d }} {{ values $d }} {{ hasKey $d "a" }} {{ get $d "zz" | quote }}"#,
            CAPI
        ),
        r#"map[a:2 b:1 odd:] [a b odd] [2 1 ] true """#
    );
    assert_eq!(
        r(
            r#"{{ $d := dict }}{{ $_ := set $d "k" "v" }}{{ $d.k }}{{ $_ := unset $d "k" }}{{ $d.k }}"#,
            CAPI
        ),
        "v<no value>"
    );
    assert_eq!(
        r(
            r#"{{ pick .flags "a" }} {{ omit .flags "a" }} {{ dig "flags" "a" "def" . }} {{ dig "x" "y" "def" . }}"#,
            CAPI
        ),
        "map[a:2] map[b:true] 2 def"
    );
    assert_eq!(
        r(
            r#"{{ merge (dict "a" 1) (dict "a" 2 "b" 3) }} {{ mergeOverwrite (dict "a" 1) (dict "a" 2) }}"#,
            CAPI
        ),
        "map[a:1 b:3] map[a:2]"
    );
    assert_eq!(
        r(
            r#"{{ toStrings (list 1 "a") }} {{ join "-" .tlsSans }}"#,
            CAPI
        ),
        "[1 a] a.example-b.example"
    );
}

#[test]
fn sprig_defaults_json_math() {
    assert_eq!(
        r(
            r#"{{ default "d" .empty }} {{ default "d" .cni }} {{ empty 0 }} {{ coalesce .empty .nope "c" }} {{ ternary "y" "n" true }}"#,
            CAPI
        ),
        "d calico true c y"
    );
    assert_eq!(
        r(r#"{{ toPrettyJson .flags }}"#, CAPI),
        "{\n  \"a\": 2,\n  \"b\": true\n}"
    );
    assert_eq!(
        r(r#"{{ toRawJson (list "<a>") }} {{ toJson "<a>" }}"#, CAPI),
        r#"["<a>"] "\u003ca\u003e""#
    );
    assert_eq!(r(r#"{{ (fromJson "{\"a\":[1,2]}").a }}"#, CAPI), "[1 2]");
    assert_eq!(
        r(
            r#"{{ max 1 5 3 }} {{ min 4 2 }} {{ floor 1.7 }} {{ ceil 1.2 }} {{ round 2.567 2 }} {{ add1 .port }}"#,
            CAPI
        ),
        "5 2 1 2 2.57 6444"
    );
    assert!(
        matches!(e("{{ div 1 0 }}", CAPI), TemplateError::Exec { message, .. } if message.contains("divide by zero"))
    );
}

#[test]
fn limits_hold() {
    assert!(matches!(
        e("{{ until 1000000 }}", CAPI),
        TemplateError::Exec { .. }
    ));
    assert!(matches!(
        e(r#"{{ repeat 100000000 "ab" }}"#, CAPI),
        TemplateError::Exec { .. }
    ));
    assert!(matches!(
        e(
            r#"{{ define "r" }}{{ template "r" . }}{{ end }}{{ template "r" . }}"#,
            CAPI
        ),
        TemplateError::Exec { .. }
    ));
    assert!(matches!(
        e(
            r#"{{ $x := "ab" }}{{ range until 100 }}{{ $x = cat $x $x }}{{ end }}"#,
            CAPI
        ),
        TemplateError::Exec { .. }
    ));
    // Nesting a list many thousand levels deep drops without overflowing the stack.
    let t = r#"{{ $x := list }}{{ range until 50000 }}{{ $x = list $x }}{{ end }}{{ len $x }}"#;
    assert_eq!(r(t, CAPI), "1");
    let deep = format!("{}1{}", "{{ if 1 }}".repeat(150), "{{ end }}".repeat(150));
    assert!(matches!(e(&deep, CAPI), TemplateError::Parse { .. }));
    let parens = format!("{{{{ {}1{} }}}}", "(".repeat(200), ")".repeat(200));
    assert!(matches!(e(&parens, CAPI), TemplateError::Parse { .. }));
    assert!(matches!(
        e(
            r#"{{ $d := dict }}{{ $_ := set $d "self" $d }}{{ $d }}"#,
            CAPI
        ),
        TemplateError::Exec { .. }
    ));
}

#[test]
fn messages_are_one_line() {
    let long = format!("{{{{ nosuch{} }}}}", "x".repeat(500));
    let msg = e(&long, CAPI).to_string();
    assert!(msg.len() < 200, "{msg}");
    let msg = e("{{ fail \"a\\nb\" }}", CAPI).to_string();
    assert!(!msg.contains('\n'), "{msg}");
}

proptest::proptest! {
    #[test]
    fn never_panics(t in r#"(\{\{|\}\}|-| |\.|\$|[a-z]{1,6}|"|`|\(|\)|\||:=|=|,|[0-9]{1,3}|'|/\*|\*/|\n)*"#) {
        let data: serde_json::Value = serde_json::from_str(CAPI).expect("test data is JSON");
        let _ = render(&t, &data);
    }

    #[test]
    fn never_panics_on_function_soup(words in proptest::collection::vec(proptest::sample::select(vec![
        "{{", "}}", " ", "list", "dict", "until", "3", "\"a\"", ".tlsSans", ".flags", "|", "(", ")", "range", "end",
        "if", "else", "$x", ":=", "=", "index", "slice", "-1", "printf", "\"%d %s %v\"", "toJson", "set", "default",
        "nil", ".nul", "len", "eq", "lt", "split", "repeat", "indent", "trunc", "substr", "merge", "dig", "break",
    ]), 0..40)) {
        let data: serde_json::Value = serde_json::from_str(CAPI).expect("test data is JSON");
        let t: String = words.concat();
        let _ = render(&t, &data);
    }
}

#[test]
fn naming_templates_have_go_functions_only_and_missing_keys_fail() {
    let data: serde_json::Value =
        serde_json::from_str(r#"{"cluster": {"name": "demo"}, "random": "abcde"}"#).unwrap();
    let name = |t: &str| super::render_name(t, &data);
    assert_eq!(
        name("{{ .cluster.name }}-{{ printf \"%.3s\" .random }}").unwrap(),
        "demo-abc"
    );
    // missingkey=error: Go's message, where a patch template would print <no value>.
    let err = name("{{ .cluster.nmae }}").unwrap_err().to_string();
    assert!(err.contains("map has no entry for key \"nmae\""), "{err}");
    assert_eq!(r("{{ .cluster.nmae }}", r#"{"cluster": {}}"#), "<no value>");
    // No Sprig: `upper` is not defined there.
    let err = name("{{ upper .cluster.name }}").unwrap_err().to_string();
    assert!(err.contains("function \"upper\" not defined"), "{err}");
    assert!(err.contains("Go's functions only"), "{err}");
}

#[test]
fn splits_divisions_and_comparisons_of_lists_and_maps() {
    assert_eq!(
        r(
            r#"{{ split "," "a,b" }} {{ splitn "," 2 "a,b,c" }} {{ mod 7 3 }} {{ div 7 3 }}"#,
            CAPI
        ),
        "map[_0:a _1:b] map[_0:a _1:b,c] 1 2"
    );
    assert!(
        matches!(e("{{ mod 1 0 }}", CAPI), TemplateError::Exec { message, .. } if message.contains("divide by zero"))
    );
    let message = |t: &str| match e(t, CAPI) {
        TemplateError::Exec { message, .. } => message,
        other => panic!("{t:?} failed to parse: {other}"),
    };
    assert!(
        message("{{ eq (list 1) (dict) }}")
            .contains("non-comparable types []interface {} and map[string]interface {}")
    );
    assert!(
        message("{{ eq (dict) (list 1) }}")
            .contains("non-comparable types map[string]interface {} and []interface {}")
    );
    assert!(message("{{ eq (list 1) (list 1) }}").contains("non-comparable type []interface {}"));
    assert!(
        message("{{ eq (dict) (dict) }}").contains("non-comparable type map[string]interface {}")
    );
}
