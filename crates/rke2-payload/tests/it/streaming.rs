//! The streaming reader hands over exactly the Secrets the in-memory parser finds, in order.

use std::path::PathBuf;

use crate::sha256_hex;
use rke2_payload::{DecodeOptions, Envelope, StreamError, for_each_secret};

fn testdata() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../testdata")
}

type Seen = Vec<(String, u64, String)>;

fn streamed(input: &[u8]) -> Result<(Seen, usize), String> {
    let options = DecodeOptions::default();
    let mut seen = Vec::new();
    let summary = for_each_secret(input, &options, |s| {
        let payload = s.decode(&options)?;
        seen.push((
            s.id().to_string(),
            s.base64_len(),
            sha256_hex(payload.userdata()),
        ));
        Ok::<(), rke2_payload::Error>(())
    })
    .map_err(|e| e.to_string())?;
    assert_eq!(summary.secrets, seen.len());
    Ok((seen, summary.skipped_secrets))
}

fn parsed(input: &[u8]) -> Result<(Seen, usize), String> {
    let options = DecodeOptions::default();
    let envelope = Envelope::parse(input, &options).map_err(|e| e.to_string())?;
    let mut seen = Vec::new();
    for s in &envelope.secrets {
        let payload = s.decode(&options).map_err(|e| e.to_string())?;
        seen.push((
            s.id().to_string(),
            s.base64_len(),
            sha256_hex(payload.userdata()),
        ));
    }
    Ok((seen, envelope.skipped_secrets))
}

#[test]
fn stream_equals_parse_on_every_fixture_and_bad_input() {
    let mut inputs: Vec<(String, Vec<u8>)> = Vec::new();
    for dir in ["secrets", "bad"] {
        for entry in std::fs::read_dir(testdata().join(dir)).expect("dir") {
            let path = entry.expect("entry").path();
            let name = path.display().to_string();
            let bytes = std::fs::read(&path).expect("read");
            inputs.push((
                format!("{name} (CRLF)"),
                String::from_utf8_lossy(&bytes)
                    .replace('\n', "\r\n")
                    .into_bytes(),
            ));
            inputs.push((name, bytes));
        }
    }
    // Several documents with a List among them, empty documents and a leading marker.
    let list = std::fs::read_to_string(testdata().join("secrets/list-all.yaml")).expect("list");
    let one = std::fs::read_to_string(testdata().join("secrets/worker-cloud-config-online.yaml"))
        .expect("one");
    inputs.push((
        "mixed".into(),
        format!("---\n{one}---\n# just a comment\n---\n{list}...\n---\n{one}").into_bytes(),
    ));
    // An item line that reads as a document marker once dedented (found by fuzzing), and a
    // byte-order mark before bare user data.
    inputs.push((
        "marker inside an item".into(),
        b"kind: List\nitems:\n- kind: Secret\n  metadata: {name: a}\n  stringData:\n    format: cloud-config\n    value: \"#cloud-config\\n\"\n  --- x: 1\n  ...: 2\n".to_vec(),
    ));
    inputs.push((
        "bom and bare user data".into(),
        b"\xef\xbb\xbf#cloud-config\nruncmd: [a]\n".to_vec(),
    ));
    for (name, input) in inputs {
        let (a, b) = (streamed(&input), parsed(&input));
        match (&a, &b) {
            (Ok(a), Ok(b)) => assert_eq!(a, b, "{name}"),
            (Err(_), Err(_)) => {}
            _ => panic!("{name}: stream {a:?} vs parse {b:?}"),
        }
    }
}

#[test]
fn a_callback_error_stops_the_stream() {
    let list = std::fs::read(testdata().join("secrets/list-all.json")).expect("list");
    let mut n = 0;
    let result = for_each_secret(&list[..], &DecodeOptions::default(), |_| {
        n += 1;
        if n == 3 { Err("stop") } else { Ok(()) }
    });
    assert!(matches!(result, Err(StreamError::Sink("stop"))));
    assert_eq!(n, 3);
}
