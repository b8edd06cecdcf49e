//! Lints a `kubectl get secrets -A -o yaml` List: each payload, and the Secrets of each cluster
//! together (token, tls-san, CA hash). Prints every finding with its check's explanation once.
//!
//!     cargo run -p rke2-payload --example lint_list -- testdata/secrets/list-all.yaml

use std::collections::BTreeSet;

use rke2_payload::{LintOptions, Linter};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = std::env::args().nth(1).ok_or("usage: lint_list FILE")?;
    let linter = Linter::new(LintOptions::new());
    let report = linter.lint_stream(
        std::fs::File::open(path)?,
        &rke2_payload::Selector::default(),
        0,
    )?;
    let mut seen = BTreeSet::new();
    for secret in &report.secrets {
        for finding in &secret.findings {
            println!(
                "{}/{}: {} {}: {}",
                secret.namespace.as_deref().unwrap_or("-"),
                secret.name.as_deref().unwrap_or("user data"),
                finding.severity.as_str(),
                finding.id(),
                finding.message
            );
            seen.insert(finding.check);
        }
    }
    println!();
    for check in seen {
        println!("{}: {}", check.id(), check.explanation());
    }
    let s = report.summary;
    println!(
        "\n{} error(s), {} warning(s), {} info",
        s.errors, s.warnings, s.infos
    );
    Ok(())
}
