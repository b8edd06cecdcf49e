//! `--from-cluster`: the Secrets read through kubectl, so that the user's kubeconfig, context
//! and credential plugins apply as they do for every other kubectl command (as `kubectl
//! view-secret` does it). kubectl's JSON is streamed into the same pipeline as a file.

use std::ffi::OsString;
use std::io::Read;
use std::process::{Child, ChildStdout, Command, Stdio};
use std::thread::JoinHandle;

use anyhow::{Context as _, Result};

use crate::cli::{InputArgs, KubectlArgs};

/// The type of the Secrets Cluster API's bootstrap providers write (and of its other Secrets:
/// the CAs, the kubeconfig), asked for by a field selector so that no other Secret of the
/// cluster (service account tokens, Helm releases) is fetched.
const BOOTSTRAP_SECRET_TYPE: &str = "cluster.x-k8s.io/secret";

/// The label Cluster API sets on a cluster's objects.
const CLUSTER_NAME_LABEL: &str = "cluster.x-k8s.io/cluster-name";

/// At most this much of kubectl's standard error is kept for the message.
const STDERR_KEPT: u64 = 16 << 10;

/// The kubectl program: `$KUBECTL`, else `kubectl` on the PATH.
fn program() -> OsString {
    std::env::var_os("KUBECTL")
        .filter(|k| !k.is_empty())
        .unwrap_or_else(|| "kubectl".into())
}

/// Which namespaces a `kubectl get` reads, by kubectl's rules: the one `-n` names, every one
/// with `-A`, else the kubeconfig context's (no flag: kubectl's own default).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Namespaces<'a> {
    /// The context's namespace (else `default`): no namespace flag is passed.
    Context,
    /// This namespace (`--namespace NS`).
    One(&'a str),
    /// Every namespace (`--all-namespaces`).
    All,
}

impl<'a> Namespaces<'a> {
    /// The namespaces of `-n NS` (or NAMESPACE/NAME's) and `-A`.
    pub(crate) fn of(namespace: Option<&'a str>, all: bool) -> Self {
        match (namespace, all) {
            (Some(ns), _) => Namespaces::One(ns),
            (None, true) => Namespaces::All,
            (None, false) => Namespaces::Context,
        }
    }

    /// kubectl's flags for them.
    fn flags(self) -> Vec<OsString> {
        match self {
            Namespaces::Context => Vec::new(),
            Namespaces::One(ns) => vec!["--namespace".into(), ns.into()],
            Namespaces::All => vec!["--all-namespaces".into()],
        }
    }
}

impl InputArgs {
    /// The namespaces the selection flags read from the cluster: NAMESPACE/NAME's, -n's, every
    /// one with -A, else the context's.
    pub(crate) fn namespaces(&self) -> Namespaces<'_> {
        let in_name = self
            .name
            .as_deref()
            .and_then(|n| n.split_once('/'))
            .map(|(ns, _)| ns);
        Namespaces::of(in_name.or(self.namespace.as_deref()), self.all_namespaces)
    }
}

/// kubectl's arguments for the selection flags: `get secret NAME` for --name (in its namespace,
/// -n's or the context's), `get secrets` by name with -A, else `get secrets` of the bootstrap
/// type in the namespaces of [`InputArgs::namespaces`]; `-l` and --cluster-name as labels when
/// listing (a Secret fetched by name is matched against them afterwards, as kubectl refuses a
/// name with a selector).
pub(crate) fn arguments(args: &InputArgs) -> Vec<OsString> {
    let mut out = connection(&args.kubectl);
    out.push("get".into());
    let namespaces = args.namespaces();
    let name = args
        .name
        .as_deref()
        .map(|n| n.split_once('/').map_or(n, |(_, name)| name));
    match (name, namespaces) {
        // A name in every namespace: kubectl gets one object by name in one namespace only.
        (Some(name), Namespaces::All) => {
            out.push("secrets".into());
            out.push(format!("--field-selector=metadata.name={name}").into());
        }
        (Some(name), _) => out.extend(["secret".into(), name.into()]),
        (None, _) => {
            out.push("secrets".into());
            out.push(format!("--field-selector=type={BOOTSTRAP_SECRET_TYPE}").into());
        }
    }
    out.extend(namespaces.flags());
    let listing = name.is_none() || namespaces == Namespaces::All;
    let mut labels: Vec<String> = args.selector.clone();
    if let Some(cluster) = &args.cluster_name {
        labels.push(format!("{CLUSTER_NAME_LABEL}={cluster}"));
    }
    if listing && !labels.is_empty() {
        out.push("--selector".into());
        out.push(labels.join(",").into());
    }
    out.push("--output=json".into());
    out
}

/// The Secrets of the cluster as kubectl writes them, streamed. The reader fails at its end if
/// kubectl did, with what kubectl said.
pub(crate) fn secrets(args: &InputArgs) -> Result<Kubectl> {
    spawn(arguments(args), &args.kubectl)
}

/// kubectl's flags are for --from-cluster: given without it, a usage error that names the
/// first. `--cluster` says what it means now (before 0.3.0 it picked the Cluster API Cluster).
pub(crate) fn only_from_cluster(from_cluster: bool, args: &KubectlArgs) -> Result<()> {
    if from_cluster {
        return Ok(());
    }
    if let Some(cluster) = &args.cluster {
        anyhow::bail!(
            "--cluster {cluster} names a cluster of the kubeconfig (kubectl's --cluster) and needs --from-cluster; to pick the Cluster API Cluster {cluster}, use --cluster-name {cluster}"
        );
    }
    if let Some(flag) = connection(args).first() {
        anyhow::bail!(
            "{} is kubectl's flag: it needs --from-cluster",
            flag.to_string_lossy()
        );
    }
    Ok(())
}

/// kubectl's flags that pick the cluster, the user and the timeout (`--kubeconfig`,
/// `--context`, `--cluster`, `--user`, `--as`, `--as-group`, `--as-uid`, `--request-timeout`),
/// each value as given.
pub(crate) fn connection(args: &KubectlArgs) -> Vec<OsString> {
    let mut out: Vec<OsString> = Vec::new();
    if let Some(kubeconfig) = &args.kubeconfig {
        out.push("--kubeconfig".into());
        out.push(kubeconfig.into());
    }
    let named = [
        ("--context", args.context.as_deref()),
        ("--cluster", args.cluster.as_deref()),
        ("--user", args.user.as_deref()),
        ("--as", args.as_user.as_deref()),
    ];
    let groups = args
        .as_group
        .iter()
        .map(|g| ("--as-group", Some(g.as_str())));
    let last = [
        ("--as-uid", args.as_uid.as_deref()),
        ("--request-timeout", args.request_timeout.as_deref()),
    ];
    for (flag, value) in named.into_iter().chain(groups).chain(last) {
        if let Some(value) = value {
            out.push(flag.into());
            out.push(value.into());
        }
    }
    out
}

/// `kubectl get RESOURCE -o json` in `namespaces`, with a label and a field selector when
/// given, with the `kubectl` flags.
pub(crate) fn get(
    kubectl: &KubectlArgs,
    resource: &str,
    namespaces: Namespaces<'_>,
    labels: Option<&str>,
    fields: Option<&str>,
) -> Result<Kubectl> {
    let mut out = connection(kubectl);
    out.extend(["get".into(), resource.into()]);
    out.extend(namespaces.flags());
    if let Some(labels) = labels {
        out.push(format!("--selector={labels}").into());
    }
    if let Some(fields) = fields {
        out.push(format!("--field-selector={fields}").into());
    }
    out.push("--output=json".into());
    spawn(out, kubectl)
}

/// Runs kubectl with `arguments` (which hold the `kubectl` flags), its standard output
/// streamed.
fn spawn(arguments: Vec<OsString>, kubectl: &KubectlArgs) -> Result<Kubectl> {
    let program = program();
    let mut child = Command::new(&program)
        .args(arguments)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .with_context(|| {
            format!(
                "running {} (install kubectl, or name it with KUBECTL)",
                program.to_string_lossy()
            )
        })?;
    let stdout = child
        .stdout
        .take()
        .context("kubectl's standard output was not opened")?;
    let stderr = child.stderr.take().map(|mut e| {
        std::thread::spawn(move || {
            let mut kept = Vec::new();
            let _ = (&mut e).take(STDERR_KEPT).read_to_end(&mut kept);
            // The rest is read and dropped, so that kubectl never blocks on a full pipe.
            let _ = std::io::copy(&mut e, &mut std::io::sink());
            kept
        })
    });
    Ok(Kubectl {
        child,
        stdout,
        stderr,
        done: false,
        said: None,
        cluster: kubectl.cluster.clone(),
    })
}

/// kubectl's standard output, ending in an error if kubectl fails.
pub(crate) struct Kubectl {
    child: Child,
    stdout: ChildStdout,
    stderr: Option<JoinHandle<Vec<u8>>>,
    done: bool,
    /// The last line of kubectl's standard error, when it failed.
    said: Option<String>,
    /// The kubeconfig cluster it was given (`--cluster`), for the hint when kubectl knows none
    /// of that name.
    cluster: Option<String>,
}

impl Kubectl {
    /// Waits for kubectl at the end of its output: an error (its standard error's last line)
    /// if it failed.
    fn finish(&mut self) -> std::io::Result<()> {
        self.done = true;
        let status = self.child.wait()?;
        let said = self
            .stderr
            .take()
            .and_then(|h| h.join().ok())
            .unwrap_or_default();
        if status.success() {
            return Ok(());
        }
        let said = String::from_utf8_lossy(&said);
        let last = said
            .lines()
            .map(str::trim)
            .rfind(|l| !l.is_empty())
            .unwrap_or("(it said nothing)");
        self.said = Some(last.to_owned());
        let code = status.code().map_or_else(
            || "was stopped by a signal".to_owned(),
            |c| format!("exited with {c}"),
        );
        // `--cluster` was the Cluster API Cluster's flag before 0.3.0.
        let hint = match &self.cluster {
            Some(cluster) if last.contains(&format!("cluster \"{cluster}\"")) => {
                " (--cluster names a cluster of the kubeconfig, as kubectl's does; the Secrets of a Cluster API Cluster are picked with --cluster-name)"
            }
            _ => "",
        };
        Err(std::io::Error::other(format!(
            "kubectl {code}: {}{hint}",
            rke2_payload::terminal_safe(last)
        )))
    }
}

impl Kubectl {
    /// What kubectl said last on standard error, once it has failed.
    pub(crate) fn said(&self) -> Option<&str> {
        self.said.as_deref()
    }
}

impl Read for Kubectl {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.done {
            return Ok(0);
        }
        let n = self.stdout.read(buf)?;
        if n == 0 && !buf.is_empty() {
            self.finish()?;
        }
        Ok(n)
    }
}

impl Drop for Kubectl {
    fn drop(&mut self) {
        if !self.done {
            // Read no further (a selector matched nothing, or an error stopped the reader).
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// The cluster's bootstrap Secrets read whole, each with the delivery path the infrastructure
/// object of its Machine names (`size --from-cluster` measures against that path, as for a
/// preview, instead of every platform). The Machines and the infrastructure kinds they name,
/// then the Clusters and theirs, are read with a `kubectl get` of their own; a kind that cannot
/// be read (for any reason: they only add paths) leaves its Secrets without what it adds, and
/// standard error says what that leaves.
pub(crate) fn live_secrets(
    args: &InputArgs,
    options: &rke2_payload::DecodeOptions,
) -> Result<rke2_payload::Input<'static>> {
    let bytes = rke2_payload::read_all(secrets(args)?, crate::cli::FROM_CLUSTER, options)?;
    let mut inventory = payload_doctor::Inventory::new(options.clone());
    let label = args
        .cluster_name
        .as_ref()
        .map(|c| format!("{CLUSTER_NAME_LABEL}={c}"));
    let namespaces = args.namespaces();
    // What a kind that cannot be read leaves the Secrets with.
    const EVERY_PLATFORM: &str = "its Secrets are measured against every platform";
    const WITHOUT_CLUSTER: &str = "the Secrets are measured on their Machines' paths without what the cluster's infrastructure adds (a LinodeCluster's object store: the 16 KB metadata limit is applied)";
    let read = |inventory: &mut payload_doctor::Inventory,
                resource: &str,
                labels: Option<&str>,
                consequence: &str|
     -> Result<bool> {
        let mut kubectl = get(&args.kubectl, resource, namespaces, labels, None)?;
        let name = format!("kubectl get {resource}");
        match rke2_payload::read_all(&mut kubectl, &name, options) {
            Ok(bytes) => {
                inventory.read(&name, &bytes)?;
                Ok(true)
            }
            // What is read here only adds delivery paths: whatever keeps a kind from being
            // read, the Secrets are measured without it, and standard error says why and how.
            Err(error) => {
                let why = kubectl
                    .said()
                    .map_or_else(|| error.to_string(), str::to_owned);
                eprintln!(
                    "rke2-payload: {resource} not read ({}): {consequence}",
                    rke2_payload::terminal_safe(&why)
                );
                Ok(false)
            }
        }
    };
    if read(
        &mut inventory,
        payload_doctor::Kind::Machine.resource(),
        label.as_deref(),
        EVERY_PLATFORM,
    )? {
        for kind in payload_doctor::infrastructure_kinds(&inventory) {
            read(&mut inventory, &kind, None, EVERY_PLATFORM)?;
        }
        // The Clusters, for the infrastructure objects some paths depend on (Linode's object
        // store); without them, the Machines' own paths.
        if read(
            &mut inventory,
            payload_doctor::Kind::Cluster.resource(),
            None,
            WITHOUT_CLUSTER,
        )? {
            for kind in payload_doctor::cluster_infrastructure_kinds(&inventory) {
                read(&mut inventory, &kind, None, WITHOUT_CLUSTER)?;
            }
        }
    }
    // No bootstrap Secret is an error, as it is for every reader: a gate never passes on
    // nothing.
    let secrets = match rke2_payload::Envelope::parse(&bytes, options) {
        Ok(envelope) => envelope.secrets,
        Err(e) => {
            return Err(
                anyhow::Error::new(e).context(format!("reading {}", crate::cli::FROM_CLUSTER))
            );
        }
    };
    let secrets = secrets
        .into_iter()
        .map(|secret| {
            let origin = payload_doctor::live_origin(&inventory, &secret);
            let secret = secret.into_owned();
            match origin {
                Some(origin) => secret.with_origin(origin),
                None => secret,
            }
        })
        .collect();
    Ok(rke2_payload::Input::secrets(secrets))
}
