//! What a node will do at first boot, for every bootstrap Secret of a file: role, join server,
//! install step, files and commands. Secrets are shown as fingerprints.
//!
//!     cargo run -p rke2-payload --example inspect_file -- testdata/secrets/list-all.yaml

use rke2_payload::{Envelope, InspectOptions, Inspector, Role};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = std::env::args().nth(1).ok_or("usage: inspect_file FILE")?;
    let inspector = Inspector::new(InspectOptions::default());
    let input = rke2_payload::read_input(path.as_ref(), &inspector.options().decode)?;
    let envelope = Envelope::parse(&input, &inspector.options().decode)?;
    for secret in &envelope.secrets {
        let report = inspector.inspect(secret)?;
        let p = &report.payload;
        println!(
            "{}: {} {}, role {}, server {}",
            secret.id(),
            p.format,
            if p.gzip { "(gzip)" } else { "" },
            p.role.map_or("unknown", Role::as_str),
            p.rke2.server.as_deref().unwrap_or("none"),
        );
        if let Some(install) = &p.install {
            let how = if install.airgapped {
                "air-gapped"
            } else {
                "online"
            };
            println!("  install: {how}, version {:?}", install.version);
        }
        println!("  {} files, {} commands", p.files.len(), p.commands.len());
        for finding in &p.findings {
            println!(
                "  {} {}: {}",
                finding.severity.as_str(),
                finding.id(),
                finding.message
            );
        }
    }
    Ok(())
}
