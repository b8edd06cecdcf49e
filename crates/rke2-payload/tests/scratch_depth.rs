use rke2_payload::*;
#[test]
fn depth() {
    let y = "kind: Secret\nmetadata:\n  name: a\nstringData:\n  format: cloud-config\n  value: x\n";
    let nest = |n: usize, base: usize| -> String {
        (0..n)
            .map(|i| format!("{}k{i}:\n", " ".repeat(base + 2 * (i + 1))))
            .collect()
    };
    for n in 58..66 {
        let doc = format!("{y}x:\n{}", nest(n, 0));
        let list = format!(
            "apiVersion: v1\nkind: List\nitems:\n- {}x:\n{}",
            y.replace('\n', "\n  "),
            nest(n, 2)
        );
        let d = Envelope::parse(doc.as_bytes(), &DecodeOptions::default()).is_ok();
        let l = Envelope::parse(list.as_bytes(), &DecodeOptions::default()).is_ok();
        let jx = format!("{}{}", "[".repeat(n), "]".repeat(n));
        let jd = format!(
            "{{\"kind\":\"Secret\",\"metadata\":{{\"name\":\"a\"}},\"x\":{jx},\"stringData\":{{\"format\":\"cloud-config\",\"value\":\"x\"}}}}"
        );
        let jl = format!("{{\"kind\":\"List\",\"items\":[{jd}]}}");
        let jdo = Envelope::parse(jd.as_bytes(), &DecodeOptions::default()).is_ok();
        let jlo = Envelope::parse(jl.as_bytes(), &DecodeOptions::default()).is_ok();
        println!("n={n} yaml doc={d} list={l} json doc={jdo} list={jlo}");
    }
    for n in [120usize, 124, 125, 126, 127, 128] {
        let jx = format!("{}{}", "[".repeat(n), "]".repeat(n));
        let jd = format!(
            "{{\"kind\":\"Secret\",\"metadata\":{{\"name\":\"a\"}},\"x\":{jx},\"stringData\":{{\"format\":\"cloud-config\",\"value\":\"x\"}}}}"
        );
        let jl = format!("{{\"kind\":\"List\",\"items\":[{jd}]}}");
        let jdo = Envelope::parse(jd.as_bytes(), &DecodeOptions::default())
            .map(|_| ())
            .map_err(|e| e.to_string());
        let jlo = Envelope::parse(jl.as_bytes(), &DecodeOptions::default())
            .map(|_| ())
            .map_err(|e| e.to_string());
        println!("n={n} json doc={jdo:?} list={jlo:?}");
    }
}
