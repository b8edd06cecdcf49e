//! `rke2-payload doctor`: names the inputs (a dump, or kubectl one kind at a time), hands them
//! to the doctor library, and the diagnosis to its printer.

use std::io::Write as _;

use anyhow::{Context as _, Result};
use payload_doctor::{DoctorOptions, Inventory, Kind, diagnose, kubectl_unread};
use rke2_payload::DecodeOptions;

use super::cluster::Namespaces;
use super::{Outcome, input_name, stdin_is_not_a_terminal};
use crate::cli::{DoctorArgs, DoctorFormat};
use crate::output::{raw_stdout, styled};

pub(crate) fn run(args: &DoctorArgs) -> Result<Outcome> {
    super::cluster::only_from_cluster(args.from_cluster, &args.kubectl)?;
    let defaults = crate::config::load(&args.config)?.doctor;
    // A flag given wins over the config file.
    let deny_warnings = match args.deny.as_deref() {
        Some(given) => given == "warnings",
        None => defaults.deny == Some(crate::config::Deny::Warnings),
    };
    let decode = DecodeOptions::new().with_max_inflated(args.max_inflated);
    let mut inventory = Inventory::new(decode.clone());
    if args.from_cluster {
        from_cluster(args, &decode, &mut inventory)?;
    } else {
        for path in rke2_payload::input_files(&args.paths(), true)? {
            if path.as_os_str() == "-" {
                stdin_is_not_a_terminal()?;
            }
            let name = input_name(&path);
            let bytes = rke2_payload::read_input(&path, &decode)
                .with_context(|| format!("reading {name}"))?;
            inventory.read(&name, &bytes)?;
        }
    }
    let options = DoctorOptions::new()
        .with_namespace(args.namespace.clone())
        .with_cluster(args.cluster_name.clone());
    let diagnosis = diagnose(&inventory, &options);
    // A gate never passes on nothing: no RKE2 cluster is an input error.
    if diagnosis.clusters.is_empty() {
        anyhow::bail!(
            "no RKE2 cluster in the input{} ({} cluster(s) of another control plane left alone, {} object(s) of other kinds passed over{}{})",
            match (&args.namespace, &args.cluster_name) {
                (None, None) => String::new(),
                (ns, name) => format!(
                    " matching {}{}",
                    ns.as_deref().map_or(String::new(), |n| format!("-n {n} ")),
                    name.as_deref()
                        .map_or(String::new(), |c| format!("--cluster-name {c}"))
                )
                .trim_end()
                .to_owned(),
            },
            diagnosis.skipped_clusters.len(),
            inventory.others(),
            if diagnosis.unread.is_empty() {
                String::new()
            } else {
                format!("; {} kind(s) could not be read", diagnosis.unread.len())
            },
            if args.from_cluster && args.namespace.is_none() && !args.all_namespaces {
                "; read in the kubeconfig context's namespace, as kubectl reads: -A reads every one"
            } else {
                ""
            }
        );
    }
    let mut out = raw_stdout();
    match args.output {
        DoctorFormat::Json => payload_printer::doctor::json(&mut out, &diagnosis)?,
        DoctorFormat::Yaml => payload_printer::doctor::yaml(&mut out, &diagnosis)?,
        DoctorFormat::Junit => payload_printer::doctor::junit(&mut out, &diagnosis)?,
        DoctorFormat::Github => payload_printer::doctor::github(&mut out, &diagnosis)?,
        DoctorFormat::Text => {
            let mut buf = styled();
            payload_printer::doctor::text(&mut buf, &diagnosis)?;
            out.write_all(&buf.into_inner())?;
        }
    }
    out.flush()?;
    Ok(if diagnosis.exit_code(deny_warnings) == 0 {
        Outcome::Ok
    } else {
        Outcome::CheckFailed
    })
}

/// Reads each kind with its own `kubectl get`, all at once: a kind kubectl refuses (RBAC) or
/// the server does not serve is recorded as such; any other failure of kubectl is the
/// command's.
fn from_cluster(
    args: &DoctorArgs,
    decode: &DecodeOptions,
    inventory: &mut Inventory,
) -> Result<()> {
    let label = args
        .cluster_name
        .as_ref()
        .map(|c| format!("{}={c}", rke2_payload::CLUSTER_NAME_LABEL));
    // The cluster's label narrows the kinds that carry it; Secrets are those of Cluster API's
    // type (the bootstrap Secrets and the cluster's, `-token` among them); clusterctl's
    // Providers are read in every namespace.
    let selected = Namespaces::of(args.namespace.as_deref(), args.all_namespaces);
    let runs = Kind::ALL.map(|kind| {
        let namespaces = if kind.follows_selection() {
            selected
        } else {
            Namespaces::All
        };
        let labels = match kind {
            Kind::Machine | Kind::Rke2Config => label.as_deref(),
            _ => None,
        };
        let fields =
            (kind == Kind::Secret).then(|| format!("type={}", rke2_payload::CLUSTER_SECRET_TYPE));
        let kubectl = super::cluster::get(
            &args.kubectl,
            kind.resource(),
            namespaces,
            labels,
            fields.as_deref(),
        );
        (kind, kubectl)
    });
    // Every kubectl runs at once; each output is read on a thread of its own.
    let read: Vec<KindRead> = std::thread::scope(|scope| {
        let handles: Vec<_> = runs
            .into_iter()
            .map(|(kind, kubectl)| {
                scope.spawn(move || -> Result<KindRead> {
                    let mut kubectl = kubectl?;
                    let name = format!("kubectl get {}", kind.resource());
                    let bytes = rke2_payload::read_all(&mut kubectl, &name, decode);
                    Ok(KindRead {
                        kind,
                        said: kubectl.said().map(str::to_owned),
                        bytes,
                    })
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err(anyhow::anyhow!("a kubectl reader panicked")))
            })
            .collect::<Result<Vec<_>>>()
    })?;
    for KindRead { kind, said, bytes } in read {
        let name = format!("kubectl get {}", kind.resource());
        match bytes {
            Ok(bytes) => inventory.read_kind(kind, &name, &bytes)?,
            Err(error) => match said.as_deref().and_then(kubectl_unread) {
                Some(why) => inventory.unread(kind, why),
                None => return Err(anyhow::Error::new(error).context(format!("running {name}"))),
            },
        }
    }
    Ok(())
}

/// What one `kubectl get` gave: its output, or why it could not be read and what kubectl said
/// last when it failed.
struct KindRead {
    kind: Kind,
    said: Option<String>,
    bytes: Result<Vec<u8>, rke2_payload::Error>,
}
