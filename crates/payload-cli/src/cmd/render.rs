//! `rke2-payload render`: the bootstrap Secrets CAPRKE2 will write, from the manifests.

use std::path::PathBuf;

use anyhow::{Context, Result, bail};
use payload_preview::{RenderOptions, RoleChoice, Source, render};
use rke2_payload::{DecodeOptions, Severity};

use super::{Outcome, input_name};
use crate::cli::{RenderArgs, RenderRole, SecretFormat};
use crate::output::write_bytes;
use payload_printer::style::safe;

pub(crate) fn run(args: &RenderArgs) -> Result<Outcome> {
    let mut paths: Vec<PathBuf> = args.inputs.iter().chain(&args.filename).cloned().collect();
    if paths.is_empty() {
        paths.push(PathBuf::from("-"));
    }
    let options = DecodeOptions::default();
    let mut files: Vec<(String, Vec<u8>)> = Vec::new();
    if args.stdin_filename.is_some() && !paths.iter().any(|p| p.as_os_str() == "-") {
        bail!(
            "--stdin-filename names what standard input stands for, and the input does not read it"
        );
    }
    for file in rke2_payload::input_files(&paths, true)? {
        let bytes = rke2_payload::read_input(&file, &options)?;
        let name = match &args.stdin_filename {
            Some(name) if file.as_os_str() == "-" => name.display().to_string(),
            _ => input_name(&file),
        };
        files.push((name, bytes));
    }
    let sources: Vec<Source<'_>> = files
        .iter()
        .map(|(name, bytes)| Source { name, bytes })
        .collect();
    let mut render_options = RenderOptions::new().with_role(match args.role {
        RenderRole::All => RoleChoice::All,
        RenderRole::Init => RoleChoice::Init,
        RenderRole::Join => RoleChoice::Join,
        RenderRole::Worker => RoleChoice::Worker,
    });
    if let Some(server) = &args.server {
        render_options = render_options.with_server(server.trim());
    }
    if let Some(path) = &args.token_file {
        let token = std::fs::read_to_string(path).with_context(|| {
            format!(
                "reading the token file {}",
                safe(&path.display().to_string())
            )
        })?;
        let token = token.trim_end_matches(['\n', '\r']);
        if token.is_empty() {
            bail!(
                "the token file {} is empty",
                safe(&path.display().to_string())
            );
        }
        render_options = render_options.with_token(token);
    }
    if let Some(seed) = args.seed {
        render_options = render_options.with_seed(seed);
    }
    if let Some(bytes) = args.placeholder_bytes {
        render_options = render_options.with_placeholder_bytes(bytes as usize);
    }
    let preview = render(&sources, &render_options).context("rendering the manifests")?;
    tell_findings(&preview.findings);
    let refused = preview.findings.iter().any(|f| f.is_refusal());
    if preview.secrets.is_empty() {
        // Nothing of the input renders: exit 2 and nothing on standard output, as for every
        // reader (README).
        if refused {
            bail!(
                "nothing was rendered: CAPRKE2 writes no bootstrap Secret for these manifests (see the error above)"
            );
        }
        if !preview.classes.is_empty() {
            bail!(
                "nothing was rendered: no Cluster of the input uses {} (`{} lint` checks a ClusterClass on its own)",
                safe(&preview.classes.join(", ")),
                crate::program_name()
            );
        }
        bail!("nothing was rendered (see the findings above)");
    }
    let text = match args.output {
        SecretFormat::Yaml => preview.to_yaml(),
        SecretFormat::Json => preview.to_json(),
    };
    write_bytes(text.as_bytes(), args.to.to_file.as_deref(), args.to.force)?;
    // What CAPRKE2 (or the API server) refuses: the preview is written, and it fails.
    Ok(if refused {
        Outcome::CheckFailed
    } else {
        Outcome::Ok
    })
}

/// Says on standard error what the manifests' findings are: each error and warning on a line
/// of its own with where it is (`file:line`), the notes as one line that counts them by check
/// (`lint` shows them in full, once per object: a CI log that renders every template and then
/// lints each preview is not told every note twice).
fn tell_findings(findings: &[rke2_payload::Finding]) {
    let mut notes: Vec<(&str, usize)> = Vec::new();
    for f in findings {
        let level = match f.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
            _ => {
                match notes.iter_mut().find(|(id, _)| *id == f.check.id()) {
                    Some((_, n)) => *n += 1,
                    None => notes.push((f.check.id(), 1)),
                }
                continue;
            }
        };
        let at = match &f.manifest {
            Some(site) => match site.line {
                Some(line) => format!(" ({}:{line})", safe(&site.file)),
                None => format!(" ({})", safe(&site.file)),
            },
            None => String::new(),
        };
        eprintln!(
            "rke2-payload: {level}: {}: {}{at}",
            f.check.id(),
            safe(&f.message)
        );
    }
    if !notes.is_empty() {
        let total: usize = notes.iter().map(|(_, n)| n).sum();
        let ids: Vec<String> = notes
            .iter()
            .map(|(id, n)| {
                if *n == 1 {
                    (*id).to_owned()
                } else {
                    format!("{id} x{n}")
                }
            })
            .collect();
        eprintln!(
            "rke2-payload: {total} note(s) about the manifests ({}): {} lint shows them",
            ids.join(", "),
            crate::program_name()
        );
    }
}
