//! `--from-cluster`: the Secrets read through kubectl, so that the user's kubeconfig, context
//! and credential plugins apply as they do for every other kubectl command (as `kubectl
//! view-secret` does it). kubectl's JSON is streamed into the same pipeline as a file.

use std::io::Read;
use std::process::{Child, ChildStdout, Command, Stdio};
use std::thread::JoinHandle;

use anyhow::{Context as _, Result};

use crate::cli::InputArgs;

/// The type of the Secrets Cluster API's bootstrap providers write (and of its other Secrets:
/// the CAs, the kubeconfig), asked for by a field selector so that no other Secret of the
/// cluster (service account tokens, Helm releases) is fetched.
const BOOTSTRAP_SECRET_TYPE: &str = "cluster.x-k8s.io/secret";

/// The label Cluster API sets on a cluster's objects.
const CLUSTER_NAME_LABEL: &str = "cluster.x-k8s.io/cluster-name";

/// At most this much of kubectl's standard error is kept for the message.
const STDERR_KEPT: u64 = 16 << 10;

/// The kubectl program: `$KUBECTL`, else `kubectl` on the PATH.
fn kubectl() -> std::ffi::OsString {
    std::env::var_os("KUBECTL")
        .filter(|k| !k.is_empty())
        .unwrap_or_else(|| "kubectl".into())
}

/// kubectl's arguments for the selection flags: `get secret NAME -n NS` for a namespaced
/// --name, `get secrets` by name in every namespace for a bare one, else `get secrets` of the
/// bootstrap type in the namespace (`-n`) or all of them; `-l` and --cluster as labels.
pub(crate) fn arguments(args: &InputArgs) -> Vec<std::ffi::OsString> {
    let mut out = connection(args.kubeconfig.as_deref(), args.context.as_deref());
    out.push("get".into());
    let (namespace, name) = match args.name.as_deref().map(|n| n.split_once('/')) {
        Some(Some((ns, name))) => (Some(ns.to_owned()), Some(name.to_owned())),
        Some(None) => (args.namespace.clone(), args.name.clone()),
        None => (args.namespace.clone(), None),
    };
    match (&namespace, &name) {
        (Some(ns), Some(name)) => {
            out.extend([
                "secret".into(),
                name.into(),
                "--namespace".into(),
                ns.into(),
            ]);
        }
        // A name alone is looked for in every namespace, as the selection flags mean it.
        (None, Some(name)) => {
            out.push("secrets".into());
            out.push(format!("--field-selector=metadata.name={name}").into());
            out.push("--all-namespaces".into());
        }
        (namespace, None) => {
            out.push("secrets".into());
            out.push(format!("--field-selector=type={BOOTSTRAP_SECRET_TYPE}").into());
            match namespace {
                Some(ns) => out.extend(["--namespace".into(), ns.into()]),
                None => out.push("--all-namespaces".into()),
            }
        }
    }
    let mut labels: Vec<String> = args.selector.clone();
    if let Some(cluster) = &args.cluster {
        labels.push(format!("{CLUSTER_NAME_LABEL}={cluster}"));
    }
    if !labels.is_empty() {
        out.push("--selector".into());
        out.push(labels.join(",").into());
    }
    out.push("--output=json".into());
    out
}

/// The Secrets of the cluster as kubectl writes them, streamed. The reader fails at its end if
/// kubectl did, with what kubectl said.
pub(crate) fn secrets(args: &InputArgs) -> Result<Kubectl> {
    spawn(arguments(args))
}

/// kubectl's flags that pick the cluster: `--kubeconfig`, `--context`.
pub(crate) fn connection(
    kubeconfig: Option<&std::path::Path>,
    context: Option<&str>,
) -> Vec<std::ffi::OsString> {
    let mut out: Vec<std::ffi::OsString> = Vec::new();
    if let Some(kubeconfig) = kubeconfig {
        out.push("--kubeconfig".into());
        out.push(kubeconfig.into());
    }
    if let Some(context) = context {
        out.push("--context".into());
        out.push(context.into());
    }
    out
}

/// `kubectl get RESOURCE -o json` in `namespace` (else every namespace), with a label and a
/// field selector when given, after the `connection` flags.
pub(crate) fn get(
    connection: &[std::ffi::OsString],
    resource: &str,
    namespace: Option<&str>,
    labels: Option<&str>,
    fields: Option<&str>,
) -> Result<Kubectl> {
    let mut out = connection.to_vec();
    out.extend(["get".into(), resource.into()]);
    match namespace {
        Some(ns) => out.extend(["--namespace".into(), ns.into()]),
        None => out.push("--all-namespaces".into()),
    }
    if let Some(labels) = labels {
        out.push(format!("--selector={labels}").into());
    }
    if let Some(fields) = fields {
        out.push(format!("--field-selector={fields}").into());
    }
    out.push("--output=json".into());
    spawn(out)
}

/// Runs kubectl with `arguments`, its standard output streamed.
fn spawn(arguments: Vec<std::ffi::OsString>) -> Result<Kubectl> {
    let program = kubectl();
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
        Err(std::io::Error::other(format!(
            "kubectl {code}: {}",
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
/// preview, instead of every platform). The Machines and then each infrastructure kind they
/// name are read with a `kubectl get` of their own; a kind that cannot be read (for any reason:
/// they only add paths) leaves its Secrets without a path, and standard error says so.
pub(crate) fn live_secrets(
    args: &InputArgs,
    options: &rke2_payload::DecodeOptions,
) -> Result<rke2_payload::Input<'static>> {
    let bytes = rke2_payload::read_all(secrets(args)?, crate::cli::FROM_CLUSTER, options)?;
    let mut inventory = payload_doctor::Inventory::new(options.clone());
    let connection = connection(args.kubeconfig.as_deref(), args.context.as_deref());
    let label = args
        .cluster
        .as_ref()
        .map(|c| format!("{CLUSTER_NAME_LABEL}={c}"));
    let namespace = args
        .name
        .as_deref()
        .and_then(|n| n.split_once('/').map(|(ns, _)| ns))
        .or(args.namespace.as_deref());
    let read = |inventory: &mut payload_doctor::Inventory,
                resource: &str,
                labels: Option<&str>|
     -> Result<bool> {
        let mut kubectl = get(&connection, resource, namespace, labels, None)?;
        let name = format!("kubectl get {resource}");
        match rke2_payload::read_all(&mut kubectl, &name, options) {
            Ok(bytes) => {
                inventory.read(&name, &bytes)?;
                Ok(true)
            }
            // What is read here only adds delivery paths: whatever keeps a kind from being
            // read, its Secrets are measured against every platform, and standard error says
            // why.
            Err(error) => {
                let why = kubectl
                    .said()
                    .map_or_else(|| error.to_string(), str::to_owned);
                eprintln!(
                    "rke2-payload: {resource} not read ({}): its Secrets are measured against every platform",
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
    )? {
        for kind in payload_doctor::infrastructure_kinds(&inventory) {
            read(&mut inventory, &kind, None)?;
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
