//! Entry points of the fuzz targets under `fuzz/` that exercise this crate (`render`,
//! `template`), and the regression tests that run every saved input of theirs with plain
//! `cargo test`. Each one must return without panicking, in bounded time and memory, for any
//! input; they assert the properties they check.
//!
//! Behind the `fuzzing` feature: these functions panic by design when a property breaks. The
//! library's targets are `rke2_payload::fuzzing`.

use rke2_payload::{DecodeOptions, Envelope};

/// A fuzz entry point.
pub type Target = fn(&[u8]);

/// Every fuzz target of this crate by name, for the regression tests.
pub const TARGETS: &[(&str, Target)] = &[("render", render), ("template", template)];

/// The preview: any input either fails with an error or renders Secrets that read back as
/// bootstrap Secrets of the format they declare, whose user data decodes; and an input checked
/// as an update of itself is never refused.
pub fn render(data: &[u8]) {
    let source = [crate::render::Source {
        name: "fuzz",
        bytes: data,
    }];
    // A revision is never a refused update of itself.
    if let Ok(found) = crate::render::updates(&source, &source) {
        assert!(found.is_empty(), "an unchanged revision refused: {found:?}");
    }
    let mut options = crate::render::RenderOptions::new().with_seed(0);
    options.reuse_keys = true;
    let Ok(preview) = crate::render::render(&source, &options) else {
        return;
    };
    if preview.secrets.is_empty() {
        // Nothing rendered: the findings say why (CAPRKE2 would refuse), or the input is
        // ClusterClasses no Cluster uses (checked on their own: the reader says so).
        assert!(
            !preview.findings.is_empty() || !preview.classes.is_empty(),
            "nothing rendered and no finding says why"
        );
        return;
    }
    let yaml = preview.to_yaml();
    let envelope = Envelope::parse(yaml.as_bytes(), &DecodeOptions::default())
        .expect("a preview reads as Secrets");
    assert_eq!(
        envelope.secrets.len(),
        preview.secrets.len(),
        "every rendered Secret is read back"
    );
    for (secret, rendered) in envelope.secrets.iter().zip(&preview.secrets) {
        let payload = secret
            .decode(&DecodeOptions::default())
            .expect("a rendered value decodes");
        assert_eq!(
            payload.format(),
            rendered.format,
            "the format key says what the value is"
        );
        assert_eq!(
            payload.userdata(),
            &rendered.userdata[..],
            "the value holds the user data"
        );
    }
    let json = preview.to_json();
    let from_json = Envelope::parse(json.as_bytes(), &DecodeOptions::default())
        .expect("the JSON preview reads");
    assert_eq!(from_json.secrets.len(), preview.secrets.len());
}

/// The Go template evaluator of ClusterClass patches and naming templates: the input is a
/// template and, after the first `0xFF` byte, its data as JSON (variables like a ClusterClass's
/// when absent or not JSON). Never panics; output stays within the evaluator's limit; a naming
/// template (Go's functions, `missingkey=error`) renders only what a patch template renders.
pub fn template(data: &[u8]) {
    use payload_gotmpl as gotemplate;
    let (text, json) = match memchr::memchr(0xFF, data) {
        Some(i) => (&data[..i], &data[i + 1..]),
        None => (data, &b""[..]),
    };
    let text = String::from_utf8_lossy(text);
    let vars = serde_json::from_slice::<serde_json::Value>(json).unwrap_or_else(|_| {
        serde_json::json!({
            "cluster": {"name": "demo"}, "random": "abcde", "cni": "calico",
            "replicas": 3, "sans": ["a.example.com", "b.example.com"],
            "builtin": {"cluster": {"name": "demo", "namespace": "fleet"},
                        "controlPlane": {"replicas": 3, "version": "v1.34.1+rke2r1"}},
            "registration": {"method": "control-plane-endpoint", "enabled": true},
        })
    });
    let patch = gotemplate::render(&text, &vars);
    if let Ok(out) = &patch {
        assert!(
            out.len() <= gotemplate::limits::OUTPUT_BYTES,
            "output over the limit"
        );
    }
    if let Ok(name) = gotemplate::render_name(&text, &vars) {
        assert!(
            name.len() <= gotemplate::limits::OUTPUT_BYTES,
            "output over the limit"
        );
        assert_eq!(
            patch.as_ref().ok(),
            Some(&name),
            "a naming template renders as the same template of a patch"
        );
    }
}

/// Every saved fuzz input (`fuzz/regressions/<target>/`) and every fixture runs through the same
/// function its fuzz target calls, so plain `cargo test` guards them without nightly tools.
#[cfg(test)]
mod tests {
    use std::path::{Path, PathBuf};

    use super::TARGETS;

    /// The repository's root; `None` from a packaged crate, which carries neither
    /// `fuzz/regressions/` nor the repository's `testdata/` (the tests then skip, saying so).
    fn root(what: &str) -> Option<PathBuf> {
        crate::testdata::repository(what)
    }

    fn files(dir: &Path) -> Vec<PathBuf> {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return Vec::new();
        };
        let mut out: Vec<PathBuf> = entries
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| p.is_file())
            // `.gitkeep` keeps a folder in git; it is not an input.
            .filter(|p| {
                !p.file_name()
                    .is_some_and(|n| n.to_string_lossy().starts_with('.'))
            })
            .collect();
        out.sort();
        out
    }

    #[test]
    fn saved_crashes_and_corpus_files_stay_fixed() {
        let Some(root) = root("the saved fuzz inputs (fuzz/regressions/)") else {
            return;
        };
        let mut empty = Vec::new();
        let mut ran = 0;
        for (name, target) in TARGETS {
            let saved = files(&root.join("fuzz/regressions").join(name));
            if saved.is_empty() {
                empty.push(*name);
            }
            for file in saved {
                let data = std::fs::read(&file).expect("read");
                target(&data);
                ran += 1;
            }
        }
        assert!(
            empty.is_empty(),
            "no saved input for the fuzz targets {empty:?} under fuzz/regressions/"
        );
        eprintln!("{ran} saved fuzz inputs");
    }

    #[test]
    fn every_fixture_through_every_target() {
        let Some(root) = root("the repository's fixtures (testdata/) through the fuzz targets")
        else {
            return;
        };
        let mut inputs = files(&root.join("testdata/secrets"));
        inputs.extend(files(&root.join("testdata/bad")));
        inputs.extend(files(&root.join("testdata/gen/keys")));
        inputs.extend(files(&root.join("testdata/manifests")));
        inputs.extend(files(&root.join("examples/preview")));
        assert!(inputs.len() > 60);
        for file in &inputs {
            let data = std::fs::read(file).expect("read");
            for (_, target) in TARGETS {
                target(&data);
            }
        }
    }
}
