//! Command-line arguments.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

/// Decode, inspect and measure Cluster API RKE2 (CAPRKE2) bootstrap Secrets.
///
/// Input is a bootstrap Secret in YAML or JSON, a `kubectl get secrets -o yaml|json` List,
/// several YAML documents, or bare user data. Use `-` (or nothing) for standard input.
///
/// Exit codes: 0 success, 1 a check failed, 2 usage or input error.
#[derive(Debug, Parser)]
#[command(name = "rke2-payload", version = crate::version_text(), propagate_version = true)]
pub(crate) struct Cli {
    /// When to colour text output (`auto`: on a terminal, unless `NO_COLOR` is set).
    #[arg(long, value_enum, global = true, default_value_t = ColorWhen::Auto, value_name = "WHEN")]
    pub(crate) color: ColorWhen,
    #[command(subcommand)]
    pub(crate) command: Command,
}

/// `--color`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum ColorWhen {
    /// Colour on a terminal, unless `NO_COLOR` is set (`CLICOLOR_FORCE` forces it).
    Auto,
    /// Always colour.
    Always,
    /// Never colour.
    Never,
}

#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// Write the user data a node acts on: unwrapped and decompressed.
    #[command(after_help = "Examples:\n  \
        rke2-payload decode secret.yaml\n  \
        kubectl get secret -n capi my-cp-abcde -o yaml | rke2-payload decode\n  \
        rke2-payload decode list.json -n capi --name my-cp-abcde --to-file userdata.txt\n  \
        rke2-payload decode secret.yaml -o raw --to-file value.gz")]
    Decode(DecodeArgs),
    /// Show what a node will do at first boot: RKE2 facts, CA material, files, commands.
    ///
    /// Secrets (the join token, keys, passwords) are shown as SHA-256 fingerprints unless
    /// --show-secrets is given.
    #[command(after_help = "Examples:\n  \
        rke2-payload inspect secret.yaml\n  \
        kubectl get secrets -A -o json | rke2-payload inspect -o json\n  \
        rke2-payload inspect list.yaml -n capi -l cluster.x-k8s.io/control-plane\n  \
        rke2-payload inspect list.yaml --name capi/my-cp-abcde --show-secrets")]
    Inspect(InspectArgs),
    /// Measure each payload against each cloud's user-data limit, on the bytes that cloud counts.
    ///
    /// Exits 1 when any Secret does not fit a chosen limit (less the headroom), or when the
    /// manifests it previews are refused (by the API server or CAPRKE2, so nothing is written,
    /// or by the infrastructure provider, which then delivers nothing): usable as a CI gate.
    #[command(after_help = "Examples:\n  \
        rke2-payload size secret.yaml\n  \
        rke2-payload size list.yaml --cloud aws,openstack --headroom 10\n  \
        rke2-payload size secret.yaml --budget 65535:base64 -o junit > size.xml\n  \
        kubectl get secrets -A -o json | rke2-payload size --cluster-name demo --cloud aws -o json")]
    Size(SizeArgs),
    /// Find the misconfigurations that keep nodes from joining, before boot.
    ///
    /// Checks each payload, and across the payloads of one cluster (token, tls-san, CA hash).
    /// Exits 1 on any error finding (or warning, with --deny warnings).
    #[command(after_help = "Examples:\n  \
        rke2-payload lint secret.yaml\n  \
        kubectl get secrets -A -o yaml | rke2-payload lint --deny warnings\n  \
        rke2-payload lint list.json --cloud aws --allow provider-id-missing -o sarif > lint.sarif\n  \
        rke2-payload lint list.json -o github        # annotations in a GitHub Actions run\n  \
        rke2-payload lint templates/ --previous base/templates/   # an update the API server takes?")]
    Lint(LintArgs),
    /// Write a payload again: compressed or not, as a Secret, as the raw value, or as base64.
    ///
    /// Output is deterministic. Without --gzip/--no-gzip the compression is kept and so are the
    /// original bytes.
    #[command(after_help = "Examples:\n  \
        rke2-payload encode secret.yaml --gzip --to-file secret-gzip.yaml\n  \
        rke2-payload encode secret.yaml --no-gzip --emit value --to-file userdata\n  \
        rke2-payload encode secret.yaml --gzip --emit base64   # for a user_data_base64 argument\n  \
        rke2-payload encode list.json -n capi --name demo-cp-x -o json\n  \
        rke2-payload encode worker.yaml --to ignition --gzip --to-file worker-ignition.yaml")]
    Encode(EncodeArgs),
    /// Write the same Secret(s) with every secret value replaced by REDACTED: safe to paste.
    ///
    /// Same format and compression; the result still decodes and inspects. Covers the join
    /// token, S3 and registry credentials, encryption keys, datastore passwords, private keys,
    /// and the CA and token Secrets of a List.
    #[command(after_help = "Examples:\n  \
        rke2-payload redact secret.yaml > secret-redacted.yaml\n  \
        kubectl get secrets -A -o yaml | rke2-payload redact --to-file dump-redacted.yaml\n  \
        rke2-payload redact dump.yaml -n capi --cluster-name demo > demo-redacted.yaml")]
    Redact(RedactArgs),
    /// Preview the bootstrap Secrets CAPRKE2 will write, from the manifests alone.
    ///
    /// Reads Cluster, RKE2ControlPlane, RKE2ConfigTemplate / RKE2Config, MachineDeployment and
    /// the Secrets and ConfigMaps they reference (files, directories or standard input) and
    /// writes a List of bootstrap Secrets: the first control plane, a joining one (when there
    /// is more than one replica, or with --role join) and one per MachineDeployment, named as
    /// the controllers name them. What only exists at run time is generated (the join token,
    /// the CA key pairs; --seed makes them repeatable) or taken from the input and flags.
    /// Errors and warnings about the manifests go to standard error (the notes are counted
    /// there), and all of them into an annotation that `lint` reads.
    #[command(after_help = "Examples:\n  \
        rke2-payload render cluster.yaml | rke2-payload size --cloud aws\n  \
        rke2-payload render templates/ | rke2-payload lint\n  \
        clusterctl generate cluster demo --from template.yaml | rke2-payload render --seed 1 -o json\n  \
        rke2-payload render cluster.yaml --role worker --server 10.0.0.5 --token-file token.txt")]
    Render(RenderArgs),
    /// Say what differs between two sets of bootstrap Secrets, as facts.
    ///
    /// Each side is a Secret, a List, a rendered preview, manifests (rendered with the same
    /// seed on both sides, so only the template's changes show), or bare user data (a file
    /// or `-`).
    /// Secrets are paired by namespace/name, else by cluster and role. Compared: format and
    /// compression, role, server, tls-san, version and install step, every config.yaml key
    /// (secret values by fingerprint only), files (owner, mode, size; a unified diff of text
    /// with secret values masked), commands, certificates, and the size per cloud.
    ///
    /// Exits 0 when nothing differs (after --ignore), 1 when something does, 2 on error.
    #[command(after_help = "Examples:\n  \
        rke2-payload diff yesterday.yaml today.yaml\n  \
        rke2-payload diff old-preview.yaml new-preview.yaml --ignore token,ca -o markdown\n  \
        kubectl get secret -n capi a -o yaml | rke2-payload diff - b.yaml -o json")]
    Diff(DiffArgs),
    /// Say why a node does not join: the join chain CAPRKE2's controllers walk, link by link.
    ///
    /// Reads, per cluster, the Cluster, RKE2ControlPlane, Machines, RKE2Configs, bootstrap
    /// Secrets, the <cluster>-token Secret and clusterctl's Providers, from a dump of them
    /// (`kubectl get … -o yaml|json`: files, folders, standard input) or from the cluster
    /// (--from-cluster: one `kubectl get` per kind). Each link holds, is broken, warns, cannot
    /// be decided (unknown) or does not apply; the first broken link comes first, with the
    /// object and field read, what was seen, what the controller needs, and the upstream code.
    /// Secrets are read only to decode and fingerprint: nothing secret is printed.
    ///
    /// Exits 0 when no link is broken (1 with --deny warnings and a warning), 1 when one is,
    /// 2 on an input error.
    #[command(after_help = "Examples:\n  \
        rke2-payload doctor --from-cluster --cluster-name demo -n fleet\n  \
        rke2-payload doctor --from-cluster --context mgmt -o json\n  \
        rke2-payload doctor objects.yaml secrets.yaml   # kubectl get … -o yaml, see the README\n  \
        rke2-payload doctor support-bundle/ -o junit > doctor.xml")]
    Doctor(DoctorArgs),
    /// List the built-in table of platforms and their user-data limits.
    #[command(after_help = "Examples:\n  rke2-payload clouds\n  rke2-payload clouds -o json")]
    Clouds(CloudsArgs),
    /// Print the version, the commit it was built from, the target and the schema id of
    /// every document the tool writes.
    #[command(after_help = "Examples:\n  rke2-payload version\n  rke2-payload version -o json")]
    Version(VersionArgs),
    /// Print the JSON Schema of a document the tool writes (`-o json`), or list them.
    ///
    /// The same files are in the repository (docs/schemas/) and attached to every release.
    #[command(after_help = "Examples:\n  \
        rke2-payload schema\n  \
        rke2-payload schema lint > lint-v1.json")]
    Schema(SchemaArgs),
    /// Print a shell completion script.
    #[command(after_help = "Examples:\n  \
        rke2-payload completions bash > /etc/bash_completion.d/rke2-payload\n  \
        rke2-payload completions zsh > \"${fpath[1]}/_rke2-payload\"\n  \
        rke2-payload completions fish > ~/.config/fish/completions/rke2-payload.fish")]
    Completions(CompletionsArgs),
    /// Print the manual page (roff) of the tool or of one subcommand, or write them all.
    #[command(after_help = "Examples:\n  \
        rke2-payload man | man -l -\n  \
        rke2-payload man inspect | man -l -\n  \
        rke2-payload man --dir /usr/local/share/man/man1")]
    Man(ManArgs),
}

#[derive(Debug, Args)]
pub(crate) struct VersionArgs {
    /// Output format.
    #[arg(short = 'o', long, value_enum, value_name = "FORMAT", default_value_t = Format::Text)]
    pub(crate) output: Format,
}

#[derive(Debug, Args)]
pub(crate) struct SchemaArgs {
    /// The document (default: list them).
    #[arg(value_name = "NAME", value_parser = document_names())]
    pub(crate) name: Option<String>,
}

/// The names `schema` takes, listed so that shells complete them.
fn document_names() -> clap::builder::PossibleValuesParser {
    clap::builder::PossibleValuesParser::new(
        payload_printer::schema::DOCUMENTS.iter().map(|d| d.name),
    )
}

#[derive(Debug, Args)]
pub(crate) struct CompletionsArgs {
    /// The shell.
    #[arg(value_enum)]
    pub(crate) shell: clap_complete::Shell,
}

#[derive(Debug, Args)]
pub(crate) struct ManArgs {
    /// The subcommand whose page to print (default: the tool's own page).
    #[arg(value_name = "SUBCOMMAND")]
    pub(crate) subcommand: Option<String>,
    /// Write every page (`rke2-payload.1`, `rke2-payload-<subcommand>.1`) to this folder.
    #[arg(long, value_name = "DIR", conflicts_with = "subcommand")]
    pub(crate) dir: Option<PathBuf>,
}

/// Options shared by the commands that read Secrets: the input, kubectl's ways of picking
/// Secrets, and the guards.
#[derive(Debug, Args)]
pub(crate) struct InputArgs {
    /// The input: files, folders (every .yaml, .yml and .json file in them and below, in name
    /// order), or `-` for standard input (the default). Several are read as one input, in
    /// order; a file may hold YAML documents, a List, or a sequence of JSON objects.
    #[arg(value_name = "FILE")]
    pub(crate) file: Vec<PathBuf>,
    /// An input, as kubectl's `-f` (the same as FILE; may be repeated).
    #[arg(short = 'f', long = "filename", value_name = "FILE")]
    pub(crate) filename: Vec<PathBuf>,
    /// Read the annotations `render` writes on its output: report the manifest findings they
    /// carry and also measure the delivery path they name (`render … | lint --from-render`).
    /// Without it no annotation of the input changes a report.
    #[arg(long)]
    pub(crate) from_render: bool,
    /// Only Secrets in this namespace. With --from-cluster and neither -n nor -A, kubectl reads
    /// the namespace of the kubeconfig context (else `default`), as every kubectl command does.
    #[arg(
        short = 'n',
        long,
        value_name = "NAMESPACE",
        value_parser = kubectl_value,
        help_heading = "Selecting Secrets"
    )]
    pub(crate) namespace: Option<String>,
    /// Secrets of every namespace (kubectl's -A): the default for files and standard input; with
    /// --from-cluster, without it kubectl reads the context's namespace.
    #[arg(
        short = 'A',
        long,
        conflicts_with = "namespace",
        help_heading = "Selecting Secrets"
    )]
    pub(crate) all_namespaces: bool,
    /// Only the Secret with this name, or NAMESPACE/NAME.
    #[arg(long, value_name = "NAME", value_parser = kubectl_value, help_heading = "Selecting Secrets")]
    pub(crate) name: Option<String>,
    /// Only Secrets whose labels match this kubectl label selector (`a=b`, `a!=b`,
    /// `a in (x,y)`, `a notin (x)`, `a`, `!a`; comma-separated, all must hold).
    #[arg(
        short = 'l',
        long,
        value_name = "SELECTOR",
        value_parser = kubectl_value,
        help_heading = "Selecting Secrets"
    )]
    pub(crate) selector: Vec<String>,
    /// Only the Secrets of this Cluster API Cluster (label `cluster.x-k8s.io/cluster-name`;
    /// `--cluster` is kubectl's: a cluster of the kubeconfig).
    #[arg(long, value_name = "NAME", value_parser = kubectl_value, help_heading = "Selecting Secrets")]
    pub(crate) cluster_name: Option<String>,
    /// Read the Secrets from the cluster: runs `kubectl get secrets -o json` (the bootstrap
    /// Secrets' type, `cluster.x-k8s.io/secret`, unless --name picks one) with -n/-A, --name,
    /// -l and --cluster-name passed on, and kubectl's flags below, so your kubeconfig, context
    /// and credential plugins apply. Without -n or -A, the context's namespace, as kubectl.
    #[arg(
        long,
        conflicts_with_all = ["file", "filename"],
        help_heading = "Reading the cluster"
    )]
    pub(crate) from_cluster: bool,
    #[command(flatten)]
    pub(crate) kubectl: KubectlArgs,
    /// The most bytes any gzip stream may inflate to (a guard against gzip bombs).
    #[arg(long, value_name = "BYTES", default_value_t = 16 << 20)]
    pub(crate) max_inflated: u64,
    /// Threads working on Secrets (0: one per CPU; at most 256). Output order is the input's
    /// either way.
    #[arg(long, value_name = "N", default_value_t = 0, value_parser = parse_jobs)]
    pub(crate) jobs: usize,
}

/// kubectl's own flags that pick the cluster, the user and the time allowed, passed on verbatim to
/// every `kubectl` run. They need --from-cluster (checked by the command: clap counts the flag's
/// default `false` as given). A value is refused before kubectl runs when it is empty or starts
/// with `-`.
#[derive(Debug, Args)]
pub(crate) struct KubectlArgs {
    /// The kubeconfig file kubectl reads (kubectl's --kubeconfig; this and the flags below need
    /// --from-cluster).
    #[arg(
        long,
        value_name = "FILE",
        value_parser = kubectl_path,
        value_hint = clap::ValueHint::FilePath,
        help_heading = "Reading the cluster"
    )]
    pub(crate) kubeconfig: Option<PathBuf>,
    /// The kubeconfig context kubectl uses (kubectl's --context).
    #[arg(
        long,
        value_name = "CONTEXT",
        value_parser = kubectl_value,
        help_heading = "Reading the cluster"
    )]
    pub(crate) context: Option<String>,
    /// The kubeconfig cluster kubectl talks to (kubectl's --cluster; the Cluster API Cluster is
    /// --cluster-name).
    #[arg(
        long,
        value_name = "KUBECONFIG-CLUSTER",
        value_parser = kubectl_value,
        help_heading = "Reading the cluster"
    )]
    pub(crate) cluster: Option<String>,
    /// The kubeconfig user kubectl authenticates as (kubectl's --user).
    #[arg(
        long,
        value_name = "USER",
        value_parser = kubectl_value,
        help_heading = "Reading the cluster"
    )]
    pub(crate) user: Option<String>,
    /// The user to impersonate (kubectl's --as): a user name or a service account
    /// (`system:serviceaccount:NAMESPACE:NAME`).
    #[arg(
        long = "as",
        value_name = "USER",
        value_parser = kubectl_value,
        help_heading = "Reading the cluster"
    )]
    pub(crate) as_user: Option<String>,
    /// A group to impersonate, with --as (kubectl's --as-group; repeat for several: each value is
    /// one group, commas and all).
    #[arg(
        long = "as-group",
        value_name = "GROUP",
        value_parser = kubectl_value,
        requires = "as_user",
        help_heading = "Reading the cluster"
    )]
    pub(crate) as_group: Vec<String>,
    /// The UID to impersonate, with --as (kubectl's --as-uid).
    #[arg(
        long = "as-uid",
        value_name = "UID",
        value_parser = kubectl_value,
        requires = "as_user",
        help_heading = "Reading the cluster"
    )]
    pub(crate) as_uid: Option<String>,
    /// How long kubectl waits for each server request (kubectl's --request-timeout): seconds
    /// (`30`) or a duration (`30s`, `2m`, `1h30m`); `0` waits as long as it takes.
    #[arg(
        long,
        value_name = "DURATION",
        value_parser = parse_request_timeout,
        help_heading = "Reading the cluster"
    )]
    pub(crate) request_timeout: Option<String>,
}

/// A value handed to kubectl as its own argument: not empty, not an option (a leading `-`), no
/// control character.
fn kubectl_value(text: &str) -> Result<String, String> {
    if text.is_empty() {
        return Err("an empty value".to_owned());
    }
    if text.starts_with('-') {
        return Err(format!(
            "{text:?} starts with `-`: kubectl would read it as an option"
        ));
    }
    if text.chars().any(char::is_control) {
        return Err(format!("{text:?} holds a control character"));
    }
    Ok(text.to_owned())
}

/// A file handed to kubectl: as [`kubectl_value`] (`./-file` names a file that starts with `-`).
fn kubectl_path(text: &str) -> Result<PathBuf, String> {
    kubectl_value(text).map(PathBuf::from)
}

/// kubectl's --request-timeout, checked as client-go reads it (`ParseTimeout`): a whole number
/// of seconds, or a Go duration (`1.5h`, `2m30s`, `300ms`; units ns, us, µs, ms, s, m, h), not
/// negative; `0` is no timeout. The text is passed on as given.
fn parse_request_timeout(text: &str) -> Result<String, String> {
    let refused = || {
        format!(
            "{text:?} is not a timeout: a number of seconds (30) or a duration with its unit (30s, 2m, 1h30m); 0 for none"
        )
    };
    let text = kubectl_value(text).map_err(|_| refused())?;
    if go_duration_nanos(&text).is_none_or(|nanos| nanos > i128::from(i64::MAX)) {
        return Err(refused());
    }
    Ok(text)
}

/// The nanoseconds of a non-negative Go duration (`time.ParseDuration`), or of a bare whole
/// number of seconds as client-go also reads it; `None` when it is neither.
fn go_duration_nanos(text: &str) -> Option<i128> {
    if !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit()) {
        return text.parse::<i128>().ok()?.checked_mul(1_000_000_000);
    }
    let mut rest = text.strip_prefix('+').unwrap_or(text);
    if rest == "0" {
        return Some(0);
    }
    if rest.is_empty() {
        return None;
    }
    let mut total: i128 = 0;
    while !rest.is_empty() {
        let number_len = rest
            .find(|c: char| !c.is_ascii_digit() && c != '.')
            .unwrap_or(rest.len());
        let (number, after) = rest.split_at(number_len);
        let (whole, fraction) = number.split_once('.').unwrap_or((number, ""));
        if (whole.is_empty() && fraction.is_empty()) || fraction.contains('.') {
            return None;
        }
        let unit_len = after
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(after.len());
        let (unit, next) = after.split_at(unit_len);
        let scale: i128 = match unit {
            "ns" => 1,
            "us" | "\u{b5}s" | "\u{3bc}s" => 1_000,
            "ms" => 1_000_000,
            "s" => 1_000_000_000,
            "m" => 60_000_000_000,
            "h" => 3_600_000_000_000,
            _ => return None,
        };
        let whole: i128 = if whole.is_empty() {
            0
        } else {
            whole.parse().ok()?
        };
        let mut nanos = whole.checked_mul(scale)?;
        // The fraction's digits, as far as they still count at this scale.
        let mut place = scale;
        for digit in fraction.bytes().take(40) {
            place /= 10;
            nanos = nanos.checked_add(i128::from(digit - b'0') * place)?;
        }
        total = total.checked_add(nanos)?;
        if total > i128::from(i64::MAX) {
            return None;
        }
        rest = next;
    }
    Some(total)
}

/// What the input is called when it is read from the cluster.
pub(crate) const FROM_CLUSTER: &str = "kubectl get secrets";

impl InputArgs {
    /// The input path (`-`: standard input; [`FROM_CLUSTER`] with --from-cluster, a name and
    /// not a file).
    pub(crate) fn path(&self) -> &std::path::Path {
        if self.from_cluster {
            return std::path::Path::new(FROM_CLUSTER);
        }
        self.file
            .first()
            .or(self.filename.first())
            .map_or(std::path::Path::new("-"), PathBuf::as_path)
    }

    /// Every input named (FILE and -f, in that order; `-` when none is), folders not expanded.
    pub(crate) fn paths(&self) -> Vec<PathBuf> {
        let mut paths: Vec<PathBuf> = self.file.iter().chain(&self.filename).cloned().collect();
        if paths.is_empty() {
            paths.push(PathBuf::from("-"));
        }
        paths
    }
}

/// Where a written payload goes.
#[derive(Debug, Args)]
pub(crate) struct ToFileArgs {
    /// Write to this file (created 0600) instead of standard output; `-` is standard output.
    #[arg(long, value_name = "FILE", alias = "out")]
    pub(crate) to_file: Option<PathBuf>,
    /// Overwrite the --to-file FILE if it exists.
    #[arg(long)]
    pub(crate) force: bool,
}

#[derive(Debug, Args)]
pub(crate) struct DecodeArgs {
    #[command(flatten)]
    pub(crate) input: InputArgs,
    /// What to write: `text`, the user data the node acts on (unwrapped and decompressed), or
    /// `raw`, `data.value` exactly as stored (still compressed or wrapped).
    #[arg(short = 'o', long, value_enum, value_name = "FORMAT", default_value_t = DecodeFormat::Text)]
    pub(crate) output: DecodeFormat,
    /// The same as `--output raw`.
    #[arg(long, hide = true)]
    pub(crate) raw: bool,
    #[command(flatten)]
    pub(crate) to: ToFileArgs,
}

/// What `decode` writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum DecodeFormat {
    /// The user data the node acts on: unwrapped and decompressed.
    Text,
    /// `data.value` exactly as stored.
    Raw,
}

#[derive(Debug, Args)]
pub(crate) struct InspectArgs {
    #[command(flatten)]
    pub(crate) input: InputArgs,
    /// Output format.
    #[arg(short = 'o', long, value_enum, value_name = "FORMAT", default_value_t = InspectFormat::Text)]
    pub(crate) output: InspectFormat,
    /// Show secret values (the join token, datastore password) instead of fingerprints.
    #[arg(long)]
    pub(crate) show_secrets: bool,
    /// List every file and command, not only a summary.
    #[arg(long, short = 'v')]
    pub(crate) verbose: bool,
    /// Show commands whole as their fingerprint and line count, not word by word.
    #[arg(long)]
    pub(crate) strict: bool,
}

/// Output formats of `inspect`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum InspectFormat {
    /// Text for people.
    Text,
    /// A JSON document.
    Json,
    /// The JSON document as YAML.
    Yaml,
    /// `secret/NAMESPACE/NAME`, a line per bootstrap Secret (as kubectl's `-o name`).
    Name,
}

#[derive(Debug, Args)]
pub(crate) struct SizeArgs {
    #[command(flatten)]
    pub(crate) input: InputArgs,
    /// Platforms to measure against, comma-separated (see `rke2-payload clouds`), or `all`.
    /// Default: every platform whose limit a source states (not the `unverified` ones), or none
    /// when --budget is given.
    #[arg(
        long,
        value_name = "ID,...",
        value_delimiter = ',',
        value_parser = cloud_ids(),
        hide_possible_values = true
    )]
    pub(crate) cloud: Vec<String>,
    /// A limit of your own: BYTES counted on the raw value, or BYTES:base64 on its base64 text.
    #[arg(long, value_name = "BYTES[:raw|:base64]", value_parser = parse_budget)]
    pub(crate) budget: Option<(u64, rke2_payload::Counted)>,
    /// Percent of each limit to keep free (default: 0, or the config file's `headroom`).
    #[arg(long, value_name = "PERCENT", value_parser = parse_percent)]
    pub(crate) headroom: Option<f64>,
    /// Output format.
    #[arg(short = 'o', long, value_enum, value_name = "FORMAT", default_value_t = SizeFormat::Text)]
    pub(crate) output: SizeFormat,
    #[command(flatten)]
    pub(crate) config: crate::config::ConfigArgs,
}

/// Output formats of `size`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum SizeFormat {
    /// Bars for people.
    Text,
    /// A JSON document.
    Json,
    /// The JSON document as YAML.
    Yaml,
    /// JUnit XML: one test case per Secret and cloud (an error case per unreadable Secret).
    Junit,
    /// `secret/NAMESPACE/NAME`, a line per Secret that does not fit (or cannot be read).
    Name,
}

fn parse_budget(text: &str) -> Result<(u64, rke2_payload::Counted), String> {
    use rke2_payload::Counted;
    let (bytes, counted) = match text.split_once(':') {
        Some((bytes, "raw")) => (bytes, Counted::Raw),
        Some((bytes, "base64")) => (bytes, Counted::Base64),
        Some((_, other)) => return Err(format!("unknown count {other:?}: use raw or base64")),
        None => (text, Counted::Raw),
    };
    let bytes = bytes
        .replace(['_', ','], "")
        .parse::<u64>()
        .map_err(|_| format!("{bytes:?} is not a number of bytes"))?;
    Ok((bytes, counted))
}

/// The ids `--cloud` takes (and `all`), listed so that shells complete them.
fn cloud_ids() -> clap::builder::PossibleValuesParser {
    clap::builder::PossibleValuesParser::new(
        rke2_payload::CLOUDS
            .iter()
            .map(|c| c.id)
            .chain(std::iter::once("all")),
    )
}

/// The check ids `--allow` takes: every check a run can silence, listed so that shells
/// complete them, each refused in words of its own (`parse_check`).
fn check_ids() -> CheckIds {
    CheckIds
}

/// See [`check_ids`].
#[derive(Clone)]
struct CheckIds;

impl clap::builder::TypedValueParser for CheckIds {
    type Value = rke2_payload::Check;

    fn parse_ref(
        &self,
        _: &clap::Command,
        _: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<Self::Value, clap::Error> {
        parse_check(&value.to_string_lossy())
            .map_err(|e| clap::Error::raw(clap::error::ErrorKind::InvalidValue, format!("{e}\n")))
    }

    fn possible_values(
        &self,
    ) -> Option<Box<dyn Iterator<Item = clap::builder::PossibleValue> + '_>> {
        Some(Box::new(
            rke2_payload::Check::ALL
                .iter()
                .filter(|c| **c != rke2_payload::Check::SecretUnreadable)
                .map(|c| clap::builder::PossibleValue::new(c.id())),
        ))
    }
}

fn parse_check(text: &str) -> Result<rke2_payload::Check, String> {
    match rke2_payload::Check::from_id(text.trim()) {
        Some(rke2_payload::Check::SecretUnreadable) => Err(
            "secret-unreadable cannot be allowed: a Secret that cannot be read was not checked"
                .to_owned(),
        ),
        Some(check) => Ok(check),
        None => Err(format!(
            "unknown check id {text:?}; `{} lint --list-checks` lists them",
            crate::program_name()
        )),
    }
}

fn parse_jobs(text: &str) -> Result<usize, String> {
    match text.parse::<usize>() {
        Ok(n) if n <= rke2_payload::MAX_JOBS => Ok(n),
        Ok(_) | Err(_) if text.bytes().all(|b| b.is_ascii_digit()) && !text.is_empty() => {
            Err(format!(
                "at most {} threads (0: one per CPU)",
                rke2_payload::MAX_JOBS
            ))
        }
        _ => Err(format!("{text:?} is not a number of threads")),
    }
}

fn parse_percent(text: &str) -> Result<f64, String> {
    let value: f64 = text
        .trim_end_matches('%')
        .parse()
        .map_err(|_| format!("{text:?} is not a percentage"))?;
    if (0.0..100.0).contains(&value) {
        Ok(value)
    } else {
        Err("headroom must be at least 0 and less than 100".to_owned())
    }
}

#[derive(Debug, Args)]
pub(crate) struct LintArgs {
    #[command(flatten)]
    pub(crate) input: InputArgs,
    /// Output format.
    #[arg(short = 'o', long, value_enum, value_name = "FORMAT", default_value_t = LintFormat::Text)]
    pub(crate) output: LintFormat,
    /// `warnings`: also fail (exit 1) on warnings; `none`: fail on errors only, whatever the
    /// config file says.
    #[arg(long, value_name = "warnings|none", value_parser = ["warnings", "none"])]
    pub(crate) deny: Option<String>,
    /// Silence a check by id (repeat, or comma-separate; `--list-checks` lists them).
    #[arg(
        long,
        value_name = "ID",
        value_delimiter = ',',
        value_parser = check_ids(),
        hide_possible_values = true
    )]
    pub(crate) allow: Vec<rke2_payload::Check>,
    /// List every check (id, default severity, what it catches) and exit; with `--output json`
    /// as JSON.
    #[arg(long)]
    pub(crate) list_checks: bool,
    /// Add the size and gzip-safety checks for these platforms.
    #[arg(
        long,
        value_name = "ID,...",
        value_delimiter = ',',
        value_parser = cloud_ids(),
        hide_possible_values = true
    )]
    pub(crate) cloud: Vec<String>,
    /// With --cloud: percent of each limit to keep free (default: 0, or the config file's
    /// `headroom`).
    #[arg(long, value_name = "PERCENT", value_parser = parse_percent)]
    pub(crate) headroom: Option<f64>,
    /// Warn when a CA expires within this many days (default: 30, or the config file's
    /// `cert-expiry-days`).
    #[arg(long, value_name = "DAYS")]
    pub(crate) cert_expiry_days: Option<i64>,
    /// cloud-init's JSON schema for cloud-config: a file, `installed` for the one the cloud-init
    /// package installed, `none` to use only the tool's own rules (default: the schema of
    /// cloud-init 26.2 bundled with the tool, so the verdict does not depend on the runner).
    #[arg(long, value_name = "FILE")]
    pub(crate) cloud_init_schema: Option<std::path::PathBuf>,
    /// The file standard input stands for, as the SARIF, GitHub and GitLab reports locate
    /// findings (SARIF needs one: code scanning rejects a result without a file).
    #[arg(long, value_name = "PATH")]
    pub(crate) stdin_filename: Option<std::path::PathBuf>,
    /// The manifests as the cluster runs them now (a file or a folder; repeatable): each object
    /// of both revisions is checked as an update of the previous one, as the admission webhooks
    /// check it (immutable fields, references that cannot be removed, topology version steps:
    /// `manifest-update-refused`).
    #[arg(long, value_name = "PATH", conflicts_with = "from_cluster")]
    pub(crate) previous: Vec<std::path::PathBuf>,
    #[command(flatten)]
    pub(crate) show: ShowArgs,
    #[command(flatten)]
    pub(crate) config: crate::config::ConfigArgs,
}

/// What `lint` shows: the findings at or above a severity, or the findings alone.
#[derive(Debug, Args)]
pub(crate) struct ShowArgs {
    /// Report only findings at or above this severity; those below are left out of the
    /// report, the counts and the exit code (default: info, or the config file's
    /// `min-severity`).
    #[arg(
        long,
        value_enum,
        value_name = "SEVERITY",
        help_heading = "Showing findings"
    )]
    pub(crate) min_severity: Option<crate::config::MinSeverity>,
    /// Write only the findings (no line for a Secret without findings, no counts): nothing
    /// when there is none. The exit code is the same; errors still go to standard error.
    /// Text output only.
    #[arg(short = 'q', long, help_heading = "Showing findings")]
    pub(crate) quiet: bool,
}

/// Output formats of `lint`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum LintFormat {
    /// Text for people.
    Text,
    /// A JSON document.
    Json,
    /// The JSON document as YAML.
    Yaml,
    /// SARIF 2.1.0, for code-scanning UIs.
    Sarif,
    /// GitHub Actions workflow commands (`::error …::`): annotations on the run and the pull
    /// request.
    Github,
    /// A GitLab Code Quality report (JSON), for merge-request widgets.
    Gitlab,
    /// JUnit XML: one test case per Secret and check that found something, and one per clean
    /// Secret.
    Junit,
    /// `secret/NAMESPACE/NAME`, a line per Secret that fails the gate (an error finding, or a
    /// warning with --deny warnings).
    Name,
}

#[derive(Debug, Args)]
pub(crate) struct EncodeArgs {
    #[command(flatten)]
    pub(crate) input: InputArgs,
    /// Compress as CAPRKE2 does with gzipUserData: true.
    #[arg(long, conflicts_with = "no_gzip")]
    pub(crate) gzip: bool,
    /// Write the user data uncompressed.
    #[arg(long)]
    pub(crate) no_gzip: bool,
    /// Convert to this format (files, commands, NTP, mounts, users and groups carry over; anything else is an
    /// error that names it).
    #[arg(long, value_enum, value_name = "FORMAT")]
    pub(crate) to: Option<TargetFormat>,
    /// What to write.
    #[arg(long, value_enum, default_value_t = Emit::Secret)]
    pub(crate) emit: Emit,
    /// With --emit secret: the Secret as YAML or JSON.
    #[arg(short = 'o', long, value_enum, value_name = "FORMAT", default_value_t = SecretFormat::Yaml)]
    pub(crate) output: SecretFormat,
    #[command(flatten)]
    pub(crate) dest: ToFileArgs,
}

/// A user data format to convert to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum TargetFormat {
    /// cloud-init cloud-config.
    CloudConfig,
    /// Ignition 3.3.
    Ignition,
}

/// What `encode` writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum Emit {
    /// A Secret with the same metadata and the new value.
    Secret,
    /// The `data.value` bytes.
    Value,
    /// The base64 text of `data.value`.
    Base64,
}

/// Secret output syntax.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum SecretFormat {
    /// YAML.
    Yaml,
    /// JSON.
    Json,
}

#[derive(Debug, Args)]
pub(crate) struct RedactArgs {
    #[command(flatten)]
    pub(crate) input: InputArgs,
    #[command(flatten)]
    pub(crate) to: ToFileArgs,
    /// Mask free text (commands, scripts, files and values of no known structure, comments)
    /// whole, keeping its line count and fingerprint, instead of word by word.
    #[arg(long)]
    pub(crate) strict: bool,
}

#[derive(Debug, Args)]
pub(crate) struct DiffArgs {
    /// The first input: a file, a folder (its .yaml, .yml and .json files), or `-` (standard input).
    #[arg(value_name = "BEFORE")]
    pub(crate) before: PathBuf,
    /// The second input: a file, a folder, or `-` (standard input).
    #[arg(value_name = "AFTER")]
    pub(crate) after: PathBuf,
    /// Leave out what changes in every new cluster: `token`, `ca` (comma-separated or repeated).
    #[arg(long, value_name = "WHAT", value_delimiter = ',', value_parser = ["token", "ca"])]
    pub(crate) ignore: Vec<String>,
    /// Output format.
    #[arg(short = 'o', long, value_enum, value_name = "FORMAT", default_value_t = DiffFormat::Text)]
    pub(crate) output: DiffFormat,
    /// The most bytes any gzip stream may inflate to (a guard against gzip bombs).
    #[arg(long, value_name = "BYTES", default_value_t = 16 << 20)]
    pub(crate) max_inflated: u64,
    /// Show commands and the text of files whole as their fingerprint and line count, not
    /// word by word.
    #[arg(long)]
    pub(crate) strict: bool,
}

/// Output formats of `diff`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum DiffFormat {
    /// Text for people.
    Text,
    /// A JSON document.
    Json,
    /// A Markdown summary, for a pull-request comment.
    Markdown,
}

#[derive(Debug, Args)]
pub(crate) struct RenderArgs {
    /// Manifest files or directories (every .yaml, .yml and .json file in them, in name
    /// order), or `-` for standard input (the default).
    #[arg(value_name = "FILE|DIR")]
    pub(crate) inputs: Vec<PathBuf>,
    /// A manifest file or directory, as kubectl's `-f` (repeatable; the same as FILE).
    #[arg(short = 'f', long = "filename", value_name = "FILE|DIR")]
    pub(crate) filename: Vec<PathBuf>,
    /// The List of Secrets as YAML or JSON.
    #[arg(short = 'o', long, value_enum, value_name = "FORMAT", default_value_t = SecretFormat::Yaml)]
    pub(crate) output: SecretFormat,
    /// The file standard input stands for (`envsubst < t.yaml | rke2-payload render
    /// --stdin-filename t.yaml`): findings name it, and so do the annotations that `lint
    /// --from-render` locates findings by.
    #[arg(long, value_name = "PATH")]
    pub(crate) stdin_filename: Option<PathBuf>,
    /// Which bootstrap Secrets to render.
    #[arg(long, value_enum, value_name = "ROLE", default_value_t = RenderRole::All)]
    pub(crate) role: RenderRole,
    /// The join server's host or IP (for the IP-based registration methods, whose address only
    /// the machines know; it also overrides the endpoint and registrationAddress).
    #[arg(long, value_name = "HOST")]
    pub(crate) server: Option<String>,
    /// Read the join token from this file instead of the <cluster>-token Secret or a fresh one.
    #[arg(long, value_name = "FILE")]
    pub(crate) token_file: Option<PathBuf>,
    /// Make the generated token and CA key pairs the same on every run (names and placeholders
    /// always are: they are made from the input alone).
    #[arg(long, value_name = "N")]
    pub(crate) seed: Option<u64>,
    /// The size of each placeholder for a referenced object the input does not hold (default:
    /// a realistic size for what it stands in for; at most 16 MiB).
    #[arg(long, value_name = "BYTES", value_parser = clap::value_parser!(u32).range(0..=(16 << 20)))]
    pub(crate) placeholder_bytes: Option<u32>,
    #[command(flatten)]
    pub(crate) to: ToFileArgs,
}

/// `render --role`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum RenderRole {
    /// The first control plane, a joining one when there is more than one replica, and the
    /// workers.
    All,
    /// The first control plane.
    Init,
    /// A joining control plane.
    Join,
    /// One worker per MachineDeployment, MachinePool or RKE2Config.
    Worker,
}

#[derive(Debug, Args)]
pub(crate) struct CloudsArgs {
    /// Output format.
    #[arg(short = 'o', long, value_enum, value_name = "FORMAT", default_value_t = Format::Text)]
    pub(crate) output: Format,
}

/// Output formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum Format {
    /// Aligned text for people.
    Text,
    /// A JSON document.
    Json,
    /// The JSON document as YAML.
    Yaml,
}

#[derive(Debug, Args)]
pub(crate) struct DoctorArgs {
    /// The dump: files, folders (every .yaml, .yml and .json file in them and below, in name
    /// order), or `-` for standard input (the default). Several are read as one input.
    #[arg(value_name = "FILE")]
    pub(crate) file: Vec<PathBuf>,
    /// An input, as kubectl's `-f` (the same as FILE; may be repeated).
    #[arg(short = 'f', long = "filename", value_name = "FILE")]
    pub(crate) filename: Vec<PathBuf>,
    /// Only clusters in this namespace. With --from-cluster and neither -n nor -A, kubectl reads
    /// the namespace of the kubeconfig context (else `default`), as every kubectl command does.
    #[arg(
        short = 'n',
        long,
        value_name = "NAMESPACE",
        value_parser = kubectl_value,
        help_heading = "Selecting clusters"
    )]
    pub(crate) namespace: Option<String>,
    /// Clusters of every namespace (kubectl's -A): the default for a dump; with --from-cluster,
    /// without it kubectl reads the context's namespace.
    #[arg(
        short = 'A',
        long,
        conflicts_with = "namespace",
        help_heading = "Selecting clusters"
    )]
    pub(crate) all_namespaces: bool,
    /// Only the Cluster API Cluster of this name (`--cluster` is kubectl's: a cluster of the
    /// kubeconfig).
    #[arg(long, value_name = "NAME", value_parser = kubectl_value, help_heading = "Selecting clusters")]
    pub(crate) cluster_name: Option<String>,
    /// Read the objects from the cluster: one `kubectl get <kind> -o json` per kind, with
    /// -n/-A and --cluster-name passed on, and kubectl's flags below, so your kubeconfig,
    /// context and credential plugins apply. Without -n or -A, the context's namespace, as
    /// kubectl (clusterctl's Providers are read in every namespace). A kind you may not read is
    /// reported as unknown with kubectl's sentence.
    #[arg(long, conflicts_with_all = ["file", "filename"], help_heading = "Reading the cluster")]
    pub(crate) from_cluster: bool,
    #[command(flatten)]
    pub(crate) kubectl: KubectlArgs,
    /// Output format.
    #[arg(short = 'o', long, value_enum, value_name = "FORMAT", default_value_t = DoctorFormat::Text)]
    pub(crate) output: DoctorFormat,
    /// `warnings`: also fail (exit 1) on warnings; `none`: not, whatever the config file says.
    #[arg(long, value_name = "warnings|none", value_parser = ["warnings", "none"])]
    pub(crate) deny: Option<String>,
    /// The most bytes any gzip stream may inflate to (a guard against gzip bombs).
    #[arg(long, value_name = "BYTES", default_value_t = 16 << 20)]
    pub(crate) max_inflated: u64,
    #[command(flatten)]
    pub(crate) config: crate::config::ConfigArgs,
}

impl DoctorArgs {
    /// Every input named (FILE and -f, in that order; `-` when none is), folders not expanded.
    pub(crate) fn paths(&self) -> Vec<PathBuf> {
        let mut paths: Vec<PathBuf> = self.file.iter().chain(&self.filename).cloned().collect();
        if paths.is_empty() {
            paths.push(PathBuf::from("-"));
        }
        paths
    }
}

/// Output formats of `doctor`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum DoctorFormat {
    /// Text for people: each cluster's first broken link, then its chain.
    Text,
    /// A JSON document (schema rke2-payload/doctor/v1).
    Json,
    /// The JSON document as YAML.
    Yaml,
    /// JUnit XML: a suite per cluster, a case per link.
    Junit,
    /// GitHub Actions workflow commands: an annotation per broken link and warning.
    Github,
}
