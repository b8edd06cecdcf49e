//! The envelope's readers, whole and streamed, against each other.

use super::*;

/// A bootstrap Secret as kubectl prints it.
const BOOTSTRAP: &str = "apiVersion: v1\ndata:\n  format: Y2xvdWQtY29uZmln\n  value: IyMgdGVtcGxhdGU6IGppbmphCiNjbG91ZC1jb25maWcK\nkind: Secret\nmetadata:\n  labels:\n    cluster.x-k8s.io/cluster-name: demo\n  name: demo-md-0-a\n  namespace: default\ntype: cluster.x-k8s.io/secret\n";

/// A machine plan that carries `format` and `value` keys holding the same user data.
const PLAN: &str = "apiVersion: v1\ndata:\n  applied-checksum: YWJj\n  format: Y2xvdWQtY29uZmln\n  plan: eyJpbnN0cnVjdGlvbnMiOltdfQ==\n  value: IyMgdGVtcGxhdGU6IGppbmphCiNjbG91ZC1jb25maWcK\nkind: Secret\nmetadata:\n  labels:\n    cluster.x-k8s.io/cluster-name: demo\n    rke.cattle.io/machine-name: demo-md-0-a\n  name: demo-md-0-a-machine-plan\n  namespace: default\ntype: rke.cattle.io/machine-plan\n";

/// Both, as the items of a `kind: List`.
fn list() -> String {
    let item = |text: &str| -> String {
        text.lines()
            .enumerate()
            .map(|(i, l)| format!("{}{l}\n", if i == 0 { "- " } else { "  " }))
            .collect()
    };
    format!(
        "apiVersion: v1\nitems:\n{}{}kind: List\nmetadata:\n  resourceVersion: \"\"\n",
        item(BOOTSTRAP),
        item(PLAN)
    )
}

fn streamed(input: &[u8]) -> Result<(Vec<String>, StreamSummary), Error> {
    let mut names = Vec::new();
    let summary = stream::each_secret(input, &DecodeOptions::default(), |s| {
        names.push(s.name().unwrap_or_default().to_owned());
        Ok::<(), Error>(())
    })?;
    Ok((names, summary))
}

#[test]
fn a_json_sequence_reads_alike_whole_and_streamed() {
    let secret = |name: &str| {
        format!(
            "{{\"kind\": \"Secret\", \"metadata\": {{\"name\": \"{name}\"}},\n \"data\": {{\"format\": \"Y2xvdWQtY29uZmln\", \"value\": \"I2Nsb3VkLWNvbmZpZwo=\"}}}}"
        )
    };
    let list = format!(
        "{{\"kind\": \"List\", \"items\": [{}, {}]}}",
        secret("b"),
        secret("c")
    );
    for input in [
        format!("{}\n{}\n", secret("a"), secret("b")),
        format!("{}{list}\n\n{}", secret("a"), secret("d")),
        format!("{list} {list}"),
    ] {
        let whole = Envelope::parse(input.as_bytes(), &DecodeOptions::default())
            .unwrap_or_else(|e| panic!("{e}: {input}"));
        let parsed: Vec<(String, Option<u64>)> = whole
            .secrets
            .iter()
            .map(|s| (s.name().unwrap_or_default().to_owned(), s.line()))
            .collect();
        let mut streamed = Vec::new();
        let summary = stream::each_secret(input.as_bytes(), &DecodeOptions::default(), |s| {
            streamed.push((s.name().unwrap_or_default().to_owned(), s.line()));
            Ok::<(), Error>(())
        })
        .expect("streamed");
        assert_eq!(streamed, parsed, "{input}");
        assert_eq!(summary.secrets, parsed.len());
        assert!(parsed.iter().all(|(_, line)| line.is_some()), "{input}");
    }
    // What follows an object must be another object.
    let bad = format!("{} 7", secret("a"));
    assert!(Envelope::parse(bad.as_bytes(), &DecodeOptions::default()).is_err());
    assert!(streamed(bad.as_bytes()).is_err());
}

#[test]
fn list_items_split_where_the_parser_splits_them() {
    // Lines the parser reads as part of an item whatever their indentation: a quoted
    // scalar or a flow collection run on at column 0, a comment at column 0, `-` and a tab.
    let shapes = [
        "  metadata:\n    name: b\n    annotations:\n      note: \"one\nkind: List\n- two\"\n",
        "  metadata:\n    name: b\n    annotations: {note: 'it''s\n- more'}\n",
        "  metadata:\n    name: b\n    finalizers: [a,\nb]\n",
        "  metadata:\n    name: b\n    labels: {x: \"]\n\", y: z}\n",
        "  metadata:\n# a comment at column 0\n    name: b\n",
        "  metadata:\n    name: b\n    annotations:\n      note: x\n        \"y\n",
    ];
    let secret = |name: &str, meta: &str| {
        format!(
            "- kind: Secret\n{meta}  stringData:\n    format: cloud-config\n    value: |\n      #cloud-config\n      runcmd: [echo {name}]\n"
        )
    };
    let mut inputs: Vec<String> = shapes
        .iter()
        .map(|meta| {
            let a = secret("a", "  metadata: {name: a}\n");
            let b = secret("b", meta);
            let c = secret("c", "  metadata: {name: c}\n");
            format!("apiVersion: v1\nkind: List\nitems:\n{a}{b}{c}")
        })
        .collect();
    inputs.push(
        "items:\n- kind: Secret\n  metadata: {name: a}\n  stringData: {format: cloud-config, value: \"#cloud-config\\n\"}\n-\tkind: Secret\n  metadata: {name: b}\n  stringData: {format: cloud-config, value: \"#cloud-config\\n\"}\n- kind: Secret\n  metadata: {name: c}\n  stringData: {format: cloud-config, value: \"#cloud-config\\n\"}\n".to_owned(),
    );
    for input in &inputs {
        let envelope = Envelope::parse(input.as_bytes(), &DecodeOptions::default())
            .unwrap_or_else(|e| panic!("{e}: {input}"));
        assert_eq!(envelope.secrets.len(), 3, "{input}");
        let mut read = 0;
        let summary = stream::each_secret(input.as_bytes(), &DecodeOptions::default(), |s| {
            let parsed = &envelope.secrets[read];
            assert_eq!(
                (s.id(), s.value().ok()),
                (parsed.id(), parsed.value().ok()),
                "{input}"
            );
            assert!(s.value().is_ok(), "{input}");
            read += 1;
            Ok::<(), Error>(())
        })
        .unwrap();
        assert_eq!((read, summary.secrets), (3, 3), "{input}");
    }
}

#[test]
fn anchors_reach_the_items_that_use_them_and_items_are_read_whatever_the_kind() {
    let value = "stringData: {format: cloud-config, value: \"#cloud-config\\n\"}";
    let cases = [
        // An item uses an anchor an earlier item defines.
        (
            format!(
                "kind: List\nitems:\n- kind: Secret\n  metadata: &m {{name: a}}\n  {value}\n- kind: Secret\n  metadata: *m\n  {value}\n- kind: Secret\n  metadata: {{name: c}}\n  {value}\n"
            ),
            vec!["a", "a", "c"],
        ),
        // A merge key.
        (
            format!(
                "items:\n- &base\n  kind: Secret\n  metadata: {{name: a}}\n  {value}\n- <<: *base\n  metadata: {{name: b}}\n"
            ),
            vec!["a", "b"],
        ),
        // The anchor is in the document, before its items.
        (
            format!(
                "kind: List\nmetadata: &m {{name: a}}\nitems:\n- kind: Secret\n  metadata: *m\n  {value}\n"
            ),
            vec!["a"],
        ),
        // `items` makes a list of any object (the stream hands them over first).
        (
            format!(
                "kind: Secret\nmetadata: {{name: a}}\n{value}\nitems:\n- kind: Secret\n  metadata: {{name: b}}\n  {value}\n"
            ),
            vec!["b"],
        ),
        (
            "{\"kind\": \"Secret\", \"metadata\": {\"name\": \"a\"}, \"stringData\": {\"format\": \"cloud-config\", \"value\": \"#cloud-config\\n\"}, \"items\": [{\"kind\": \"Secret\", \"metadata\": {\"name\": \"b\"}, \"stringData\": {\"format\": \"cloud-config\", \"value\": \"#cloud-config\\n\"}}]}"
            .to_owned(),
            vec!["b"],
        ),
    ];
    for (input, names) in &cases {
        let envelope = Envelope::parse(input.as_bytes(), &DecodeOptions::default())
            .unwrap_or_else(|e| panic!("{e}: {input}"));
        let parsed: Vec<_> = envelope
            .secrets
            .iter()
            .map(|s| s.name().unwrap_or(""))
            .collect();
        assert_eq!(&parsed, names, "{input}");
        let (streamed, summary) = streamed(input.as_bytes()).unwrap();
        assert_eq!(&streamed, names, "{input}");
        assert_eq!(summary.secrets, names.len());
    }
}

#[test]
fn a_line_of_lone_carriage_returns_longer_than_an_object_is_refused_not_cut() {
    // Lines broken by `\r` alone (old Mac files), all on one `\n` line: read as lines,
    // and refused whole when longer than an object may be (not cut where the read stopped,
    // which left the rest of a key at column 0 and dropped the Secrets after it).
    let item =
        "- kind: Secret\r  metadata: {name: a}\r  stringData: {format: cloud-config, value: x}\r";
    let input = format!("items:\r{}\n", item.repeat(40));
    let mut options = DecodeOptions {
        max_object: 1024,
        ..DecodeOptions::default()
    };
    let mut names = Vec::new();
    let read = stream::each_secret(input.as_bytes(), &options, |s| {
        names.push(s.name().map(str::to_owned));
        Ok::<(), Error>(())
    });
    assert!(
        matches!(read, Err(Error::ObjectTooLarge { .. })),
        "{read:?} {names:?}"
    );
    // Within the limit, every item is read.
    options.max_object = 1 << 20;
    let (names, _) = {
        let mut names = Vec::new();
        let summary = stream::each_secret(input.as_bytes(), &options, |s| {
            names.push(s.name().unwrap_or_default().to_owned());
            Ok::<(), Error>(())
        })
        .unwrap();
        (names, summary)
    };
    assert_eq!(names, vec!["a"; 40]);
}

#[test]
fn a_stray_line_that_ends_the_items_early_is_reported_not_passed_over() {
    // Items at column 2, one at column 0 by mistake: not YAML. The stream has handed over
    // `a` when it sees that; it then reports the rest as unreadable instead of dropping `b`.
    // (The items are in the kubectl shape: the splitter cuts them.)
    let item = |name: &str, at: &str| {
        format!(
            "{at}- kind: Secret\n{at}  metadata:\n{at}    name: {name}\n{at}  stringData:\n{at}    format: cloud-config\n{at}    value: |\n{at}      #cloud-config\n"
        )
    };
    let input = format!(
        "apiVersion: v1\nitems:\n{}{}kind: List\n",
        item("a", "  "),
        item("b", "")
    );
    assert!(Envelope::parse(input.as_bytes(), &DecodeOptions::default()).is_err());
    let mut read = Vec::new();
    stream::each_secret(input.as_bytes(), &DecodeOptions::default(), |s| {
        read.push((s.name().map(str::to_owned), s.value().is_ok()));
        Ok::<(), Error>(())
    })
    .unwrap();
    assert_eq!(read, [(Some("a".to_owned()), true), (None, false)]);
    // A kubectl List reads around its items without a word.
    let (names, summary) = streamed(list().as_bytes()).unwrap();
    assert_eq!((names.len(), summary.skipped_objects), (1, 0));
}

#[test]
fn what_the_parser_refuses_the_stream_does_not_read_as_sound() {
    let secret =
        "kind: Secret\nmetadata:\n  name: a\nstringData:\n  format: cloud-config\n  value: x\n";
    let item = format!("{}\n", secret.trim_end().replace('\n', "\n  "));
    let key = "k".repeat(1025);
    // `n` mappings nested in an item's key, and `n` flow sequences.
    let nested = |n: usize| -> String {
        (0..n)
            .map(|i| format!("{}k{i}:\n", "  ".repeat(i + 2)))
            .collect()
    };
    let flow = |n: usize| format!("{}{}", "[".repeat(n), "]".repeat(n));
    for input in [
        // A block scalar whose first line is blank and indented more than its content: not
        // in the shape (the gate refuses a block scalar that starts blank), and an error to
        // the parser, which the fast path would not have seen (it skips blank lines).
        "kind: Secret\nmetadata:\n  annotations:\n    note: |\n         \n      x\n  name: a\nstringData:\n  format: cloud-config\n  value: x\n".to_owned(),
        // A key of 1,025 characters, which the parser refuses: in a document, in an item of
        // a List, as an item's first key.
        format!("{key}: v\n{secret}"),
        format!("apiVersion: v1\nkind: List\nitems:\n- {}  {key}: v\n", secret.replace('\n', "\n  ")),
        format!("apiVersion: v1\nkind: List\nitems:\n- {key}: v\n  {}", secret.replace('\n', "\n  ")),
        // `items` twice (the parser refuses a key twice; both lists were streamed).
        format!("apiVersion: v1\nkind: List\nitems:\n- {item}items:\n- {item}"),
        format!("apiVersion: v1\nkind: List\nitems:\n- {item}items: x\n"),
        // An item nested within the depth limit alone, past it in its List (the List's
        // mapping and items are two levels more): in the shape, outside it (a flow
        // sequence), and in an item that is no Secret (read again leniently).
        format!("apiVersion: v1\nkind: List\nitems:\n- {item}  x:\n{}", nested(62)),
        format!("apiVersion: v1\nkind: List\nitems:\n- {item}  x: {}\n", flow(62)),
        format!("apiVersion: v1\nkind: List\nitems:\n- {item}- kind: ConfigMap\n  x: {}\n", flow(62)),
        // JSON the item splitter passes over, around the items: a raw control character in
        // a string, a `kind` that is not a string, `items` twice.
        format!("{{\"kind\": \"Li\u{1}st\", \"items\": [{JSON_SECRET}]}}"),
        format!("{{\"items\": [{JSON_SECRET}], \"kind\": 5}}"),
        format!("{{\"items\": [{JSON_SECRET}], \"items\": []}}"),
    ]
    .map(String::into_bytes)
    .into_iter()
    // A byte that is not UTF-8 in a JSON string no field keeps, around the items and in
    // one (the JSON parser reading bytes passes over such a string unchecked).
    .chain({
        let in_item = JSON_SECRET.replacen(", ", ", \"x\": \"\u{7f}\", ", 1);
        [
            format!("{{\"items\": [{JSON_SECRET}], \"x\": \"\u{7f}\"}}"),
            format!("{{\"items\": [{in_item}]}}"),
            format!("{{\"items\": [{JSON_SECRET}, {{\"kind\": \"ConfigMap\", \"x\": \"\u{7f}\"}}]}}"),
        ]
        .map(|s| {
            let bytes = s.into_bytes().into_iter();
            bytes.map(|c| if c == 0x7f { 0x91 } else { c }).collect()
        })
    })
    {
        let shown = String::from_utf8_lossy(&input);
        assert!(
            Envelope::parse(&input, &DecodeOptions::default()).is_err(),
            "{shown}"
        );
        let mut broken = Vec::new();
        let read = stream::each_secret(&input[..], &DecodeOptions::default(), |s| {
            broken.push(s.is_broken());
            Ok::<(), Error>(())
        });
        assert!(
            read.is_err() || broken.contains(&true),
            "{shown:.60}: the stream read {} sound Secrets",
            broken.len()
        );
    }
    // One level less, and both read it.
    for input in [
        format!(
            "apiVersion: v1\nkind: List\nitems:\n- {item}  x:\n{}",
            nested(61)
        ),
        format!(
            "apiVersion: v1\nkind: List\nitems:\n- {item}  x: {}\n",
            flow(61)
        ),
    ] {
        let envelope = Envelope::parse(input.as_bytes(), &DecodeOptions::default()).unwrap();
        assert_eq!(envelope.secrets.len(), 1);
        assert_eq!(streamed(input.as_bytes()).unwrap().0, ["a"]);
    }
}

/// A bootstrap Secret in JSON.
const JSON_SECRET: &str = r#"{"kind": "Secret", "metadata": {"name": "a"}, "stringData": {"format": "cloud-config", "value": "x"}}"#;

#[test]
fn a_json_list_whose_items_key_is_escaped_is_still_a_list() {
    let input = format!("{{\"kind\": \"List\", \"it\\u0065ms\": [{JSON_SECRET}]}}");
    let envelope = Envelope::parse(input.as_bytes(), &DecodeOptions::default()).unwrap();
    assert_eq!(envelope.secrets.len(), 1);
    let (names, _) = streamed(input.as_bytes()).unwrap();
    assert_eq!(names, ["a"]);
}

#[test]
fn a_machine_plan_is_skipped_and_counted_whatever_its_keys() {
    // The fast path reads the plan itself (it is not left to the full parser).
    let object = fast::object(PLAN, 64).expect("the fast path reads the machine plan");
    assert_eq!(
        object.secret_type.map(|t| t.0),
        Some(Cow::Borrowed(MACHINE_PLAN_SECRET_TYPE))
    );
    let yaml = list();
    let json = serde_json::to_string(&serde_saphyr::from_str::<serde_json::Value>(&yaml).unwrap())
        .unwrap();
    let documents = format!("{BOOTSTRAP}---\n{PLAN}");
    for input in [&yaml, &json, &documents] {
        let envelope = Envelope::parse(input.as_bytes(), &DecodeOptions::default()).unwrap();
        let names: Vec<_> = envelope.secrets.iter().map(|s| s.name()).collect();
        assert_eq!(names, [Some("demo-md-0-a")], "{input}");
        assert_eq!(envelope.skipped_secrets, 1);
        // Streamed (the kubectl fast path, the JSON item splitter): the same.
        let (names, summary) = streamed(input.as_bytes()).unwrap();
        assert_eq!(names, ["demo-md-0-a"]);
        assert_eq!((summary.secrets, summary.skipped_secrets), (1, 1));
    }
}

#[test]
fn an_input_of_machine_plans_only_holds_no_bootstrap_secret() {
    let plan = "apiVersion: v1\nkind: Secret\nmetadata: {name: m-machine-plan}\ntype: rke.cattle.io/machine-plan\nstringData:\n  format: cloud-config\n  value: \"#cloud-config\\nruncmd: [reboot]\\n\"\n";
    let e = Envelope::parse(plan.as_bytes(), &DecodeOptions::default()).unwrap_err();
    assert!(
        matches!(e, Error::NoBootstrapSecret { secrets: 1 }),
        "{e:?}"
    );
    assert_eq!(
        e.to_string(),
        "no bootstrap Secret in the input: 1 Secret(s) without bootstrap data were skipped"
    );
    let twice = format!("{plan}---\n{PLAN}");
    match streamed(twice.as_bytes()) {
        Err(Error::NoBootstrapSecret { secrets: 2 }) => {}
        other => panic!("{other:?}"),
    }
    // The same Secret of the bootstrap type is read as bootstrap data.
    let bootstrap = plan.replace("rke.cattle.io/machine-plan", CLUSTER_SECRET_TYPE);
    let envelope = Envelope::parse(bootstrap.as_bytes(), &DecodeOptions::default()).unwrap();
    assert_eq!(envelope.secrets.len(), 1);
}

#[test]
fn a_key_that_is_not_a_string_is_named_by_its_field_not_by_serde() {
    // envsubst turns an unset variable into nothing: `${REGISTRY}:` becomes a null key.
    let template = "kind: RKE2ControlPlane\nspec:\n  registry:\n    configs:\n      :\n        authSecret: {name: x}\n";
    let secret = "kind: Secret\nmetadata:\n  name: s\n  labels:\n    ~: a\nstringData:\n  value: \"#cloud-config\\n\"\n";
    let list = "kind: List\nitems:\n- kind: Secret\n  metadata:\n    name: s\n  data:\n    ? [a]\n    : b\n";
    for (text, field, line) in [
        (template, "spec.registry.configs has a null key", 5),
        (secret, "metadata.labels has a null key", 5),
        (
            list,
            "items[0].data has a key that is a mapping or a list",
            7,
        ),
    ] {
        let mut errors = vec![super::objects(text.as_bytes()).expect_err("objects")];
        // The Secret reader reads only Secrets whole.
        if !text.starts_with("kind: RKE2") {
            errors.push(
                Envelope::parse(text.as_bytes(), &DecodeOptions::default()).expect_err("parse"),
            );
        }
        for error in errors {
            let message = error.to_string();
            assert!(message.contains(field), "{message}");
            assert!(
                message.contains("the keys of an object are strings"),
                "{message}"
            );
            assert!(
                message.contains(&format!("at line {line}, column ")),
                "{message}"
            );
            assert!(!message.contains("Option<"), "{message}");
            assert!(!message.contains("deserialize"), "{message}");
        }
    }
}

#[test]
fn a_template_line_that_does_not_read_says_to_substitute_its_variables() {
    let text = "kind: Cluster\nspec:\n  endpoint: [https://${REGISTRY}]\n";
    let message = super::objects(text.as_bytes())
        .expect_err("not YAML")
        .to_string();
    assert!(
        message
            .contains("that line holds a ${…} variable: substitute the template's variables first"),
        "{message}"
    );
    assert!(!message.contains("REGISTRY"), "{message}");
}
