use super::*;

fn masked(text: &str) -> String {
    userdata(text, &Known::default(), false)
        .expect("masked")
        .text
}

#[test]
fn rke2_config_is_an_allow_list() {
    let config = "token: Zq8vK2mLp4XwT9nB\n't': Zq8vK2mLp4XwT9nC\nAGENT_TOKEN: [Zq8vK2mLp4XwT9nD]\ncni: Zq8vK2mLp4XwT9nB\nmy-flag: {a: Zq8vK2mLp4XwT9nE}\nnode-label+: [a=b]\ndatastore-endpoint: postgres://postgres:postgres@db:5432/postgres\n";
    let userdata_text = format!(
        "#cloud-config\nwrite_files:\n- path: /etc/rancher/rke2//config.yaml\n  content: {}\n",
        tree::quoted(config)
    );
    let out = masked(&userdata_text);
    assert!(!out.contains("Zq8vK2mLp4XwT9n"), "{out}");
    let docs = tree::parse(&out).expect("parses");
    let content = docs[0].get("write_files").and_then(|f| match f {
        Node::Seq(items) => items[0]
            .get("content")
            .and_then(Node::as_str)
            .map(str::to_owned),
        _ => None,
    });
    let content = content.expect("content");
    assert!(content.contains("node-label+: [a=b]"), "{content}");
    assert!(
        content.contains("postgres://postgres:REDACTED@db:5432/postgres"),
        "{content}"
    );
    assert!(content.contains("my-flag: {a: REDACTED}"), "{content}");
}

#[test]
fn in_place_keeps_comments_and_types() {
    let text = "#cloud-config\n# a comment\nusers:\n- name: ops\n  lock_passwd: false\n  passwd: $6$abc$Zq8vK2mLp4XwT9nB\nruncmd:\n- [rke2, agent, --token, Zq8vK2mLp4XwT9nQ]\n- rke2 agent -t Zq8vK2mLp4XwT9nR\n";
    let out = masked(text);
    assert_eq!(
        out,
        "#cloud-config\n# a comment\nusers:\n- name: ops\n  lock_passwd: false\n  passwd: REDACTED\nruncmd:\n- [rke2, agent, --token, REDACTED]\n- rke2 agent -t REDACTED\n"
    );
}

#[test]
fn folded_values_are_written_again() {
    let text = "#cloud-config\nwrite_files:\n- path: /var/lib/rancher/rke2/server/token\n  content: >\n    Zq8vK2mLp4XwT9nB\n    Zq8vK2mLp4XwT9nC\n";
    let out = masked(text);
    assert!(!out.contains("Zq8v"), "{out}");
    assert!(out.starts_with("#cloud-config\n{"), "{out}");
}

#[test]
fn ignition_sources_and_headers() {
    let key = "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\n-----END PRIVATE KEY-----\n";
    let text = format!(
        "{{\"ignition\":{{\"version\":\"3.3.0\",\"security\":{{\"tls\":{{\"certificateAuthorities\":[{{\"source\":\"data:;base64,{}\"}}]}}}}}},\"storage\":{{\"files\":[{{\"path\":\"/x\",\"contents\":{{\"source\":\"https://h/x\",\"httpHeaders\":[{{\"name\":\"Authorization\",\"value\":\"Bearer Zq8vK2mLp4XwT9nB\"}}]}}}}],\"luks\":[{{\"name\":\"d\",\"keyFile\":{{\"source\":\"data:,Zq8vK2mLp4XwT9nC\"}}}}]}}}}",
        b64::encode(key.as_bytes())
    );
    let out = masked(&text);
    assert!(!out.contains("Zq8v"), "{out}");
    assert!(!out.contains(&b64::encode(key.as_bytes())), "{out}");
    assert!(out.contains("\"name\":\"Authorization\""), "{out}");
    serde_json::from_str::<serde_json::Value>(&out).expect("JSON");
}

#[test]
fn nesting_is_bounded() {
    let mut config = String::from("{\"ignition\":{\"version\":\"3.3.0\"}}");
    for _ in 0..40 {
        config = format!(
            "{{\"ignition\":{{\"version\":\"3.3.0\",\"config\":{{\"merge\":[{{\"source\":\"data:;base64,{}\"}}]}}}}}}",
            b64::encode(config.as_bytes())
        );
    }
    let err = userdata(&config, &Known::default(), false).expect_err("refused");
    assert!(err.why.contains("deep"), "{err:?}");
}

#[test]
fn keys_and_known_secrets_in_comments_are_masked() {
    let text = "#cloud-config\n# -----BEGIN OPENSSH PRIVATE KEY-----\n# b3BlbnNzaC1rZXktdjEAAAAA\n# AAAABG5vbmU\n# -----END OPENSSH PRIVATE KEY-----\npassword: Zq8vK2mLp4XwT9nB # was Zq8vK2mLp4XwT9nB\n";
    assert_eq!(
        masked(text),
        "#cloud-config\n# -----BEGIN OPENSSH PRIVATE KEY-----\n# REDACTED\n#\n# -----END OPENSSH PRIVATE KEY-----\npassword: REDACTED # was REDACTED\n"
    );
}

#[test]
fn review_cases() {
    // Ignition keys in any case.
    let ignition = r#"{"ignition":{"version":"3.3.0"},"Storage":{"Files":[{"Path":"/etc/rancher/rke2/config.yaml","Contents":{"Source":"data:,t%3A%20abcsecret99"}}]}}"#;
    assert!(!masked(ignition).contains("abcsecret99"));
    // A token as URL user-info, a known token reappearing there.
    let config = "token: K9xQ2mZp7Lw4\nserver: https://K9xQ2mZp7Lw4@10.0.0.1:9345\n";
    let text = format!(
        "#cloud-config\nwrite_files:\n- path: /etc/rancher/rke2/config.yaml\n  content: {}\n",
        tree::quoted(config)
    );
    assert!(!masked(&text).contains("K9xQ2mZp7Lw4"));
    // The detector in comments.
    let out = masked("#cloud-config\n# password: hunter2xyz\nruncmd: [reboot]\n");
    assert!(!out.contains("hunter2xyz"), "{out}");
    // A merge key, a MIME message past its first line: refused.
    for refused in [
        "#cloud-config\nwrite_files:\n- <<: {path: /etc/rancher/rke2/config.yaml, content: 't: abcsecret99'}\n",
        "X-Note: x\nMIME-Version: 1.0\nContent-Type: multipart/mixed; boundary=b\n\n--b\n\nt: abcsecret99\n--b--\n",
        "#cloud-config-archive\n- content: 't: abcsecret99'\n",
    ] {
        assert!(
            userdata(refused, &Known::default(), false).is_err(),
            "{refused}"
        );
    }
}

#[test]
fn cloud_init_module_keys() {
    let out = masked(
        "#cloud-config\nrh_subscription:\n  activation-key: ab12cd\n  org: 1234\nlandscape:\n  client:\n    registration_key: xy99zz\n",
    );
    assert!(
        !out.contains("ab12cd") && !out.contains("xy99zz") && out.contains("org: 1234"),
        "{out}"
    );
}

#[test]
fn debug_never_shows_a_known_value() {
    let mut known = Known::default();
    known.add("Zq8vK2mLp4XwT9nBdebug");
    let masker = Masker::knowing(known);
    assert!(!format!("{masker:?}").contains("Zq8v"));
}

#[test]
fn a_merge_key_in_config_yaml_is_refused_not_masked_whole() {
    let text = "#cloud-config\nwrite_files:\n- path: /etc/rancher/rke2/config.yaml\n  content: |\n    server: https://cp.example.com:9345\n    base: &b {token: Zq8vK2mLp4XwT9nB}\n    <<: *b\n";
    let err = userdata(text, &Known::default(), false).expect_err("refused");
    assert!(err.why.contains("merge key"), "{}", err.why);
    assert!(err.part.ends_with("config.yaml"), "{}", err.part);
    // Another file that does not read is masked whole, as before.
    let other =
        "#cloud-config\nwrite_files:\n- path: /opt/app.bin\n  encoding: b64\n  content: '%%%'\n";
    assert!(!masked(other).contains("%%%"));
}

#[test]
fn redacting_twice_gives_the_same_text() {
    let text = "#cloud-config\nwrite_files:\n- path: /etc/rancher/rke2/config.yaml\n  content: |\n    token: !!binary WnE4dksybUxwNFh3VDluQg==\n    server: https://cp.example.com:9345\nruncmd:\n- sh -c 'mysql -uroot -pZq8vK2mLp4XwT9nQ -e \"select 1\"'\n- echo x | nerdctl login -u bot --password-stdin registry.example.com\n";
    let once = masked(text);
    assert!(!once.contains("Zq8vK2mLp4XwT9nQ"), "{once}");
    assert!(once.contains("registry.example.com"), "{once}");
    assert_eq!(masked(&once), once);
}

/// Known values are found leftmost-longest, a long periodic one (a word of one letter, whose
/// automaton a DFA builds in quadratic time) as any other.
#[test]
fn known_values_are_found_leftmost_longest_long_or_periodic() {
    let mut known = Known::default();
    let long = "a".repeat(45_000);
    for value in ["Zq8vK2mLp4XwT9nB", "Zq8vK2mLp4XwT9nBextra", long.as_str()] {
        known.add(value);
    }
    let text = format!("x Zq8vK2mLp4XwT9nBextra Zq8vK2mLp4XwT9nB b{long}a");
    let mut spans = Vec::new();
    known.occurrences(&text, &mut spans);
    let found: Vec<&str> = spans.iter().map(|s| &text[s.clone()]).collect();
    assert_eq!(
        found,
        ["Zq8vK2mLp4XwT9nBextra", "Zq8vK2mLp4XwT9nB", long.as_str()]
    );
    // A long word masked in user data is masked whole.
    let data = format!("#!/bin/sh\necho {long}\n");
    let masked = userdata(&data, &Known::default(), false).expect("masked");
    assert!(
        !masked.text.contains("aaaaaaaaaaaa"),
        "{}",
        &masked.text[..80]
    );
}

#[test]
fn a_boolean_argument_is_shown_a_secret_one_is_not() {
    let config = "kube-apiserver-arg: [anonymous-auth=true, request-timeout=60s, oidc-client-secret=Zq8vK2mLp4XwT9nB]\nkubelet-arg: anonymous-auth=True,read-only-port=0\nkube-proxy-arg: anonymous-auth=true,oidc-client-secret=Zq8vK2mLp4XwT9nC\nkube-scheduler-arg: oidc-client-secret=true,Zq8vK2mLp4XwT9nD\n";
    let text = format!(
        "#cloud-config\nwrite_files:\n- path: /etc/rancher/rke2/config.yaml\n  content: {}\n",
        tree::quoted(config)
    );
    let out = masked(&text);
    assert!(!out.contains("Zq8vK2mLp4XwT9n"), "{out}");
    let docs = tree::parse(&out).expect("parses");
    let out = docs[0]
        .get("write_files")
        .and_then(|f| match f {
            Node::Seq(items) => items[0].get("content").and_then(Node::as_str),
            _ => None,
        })
        .expect("content")
        .to_owned();
    for kept in [
        "kube-apiserver-arg: [anonymous-auth=true, request-timeout=60s, oidc-client-secret=REDACTED]",
        "kubelet-arg: anonymous-auth=True,read-only-port=0",
        "kube-proxy-arg: anonymous-auth=true,oidc-client-secret=REDACTED",
        // A name that names the secret: its whole text is the value.
        "kube-scheduler-arg: oidc-client-secret=REDACTED",
    ] {
        assert!(out.contains(kept), "{kept:?} not in {out}");
    }
}
