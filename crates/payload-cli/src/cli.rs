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
#[command(name = "rke2-payload", version, propagate_version = true)]
pub(crate) struct Cli {
    #[command(subcommand)]
    pub(crate) command: Command,
}

#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// Write the user data a node acts on: unwrapped and decompressed.
    #[command(after_help = "Examples:\n  \
        rke2-payload decode secret.yaml\n  \
        kubectl get secret -n capi my-cp-abcde -o yaml | rke2-payload decode\n  \
        rke2-payload decode list.json --name capi/my-cp-abcde -o userdata.txt\n  \
        rke2-payload decode secret.yaml --raw -o value.gz")]
    Decode(DecodeArgs),
    /// Show what a node will do at first boot: RKE2 facts, CA material, files, commands.
    ///
    /// Secrets (the join token, keys, passwords) are shown as SHA-256 fingerprints unless
    /// --show-secrets is given.
    #[command(after_help = "Examples:\n  \
        rke2-payload inspect secret.yaml\n  \
        kubectl get secrets -A -o json | rke2-payload inspect --output json\n  \
        rke2-payload inspect list.yaml --name capi/my-cp-abcde --show-secrets")]
    Inspect(InspectArgs),
    /// List the built-in table of platforms and their user-data limits.
    #[command(after_help = "Examples:\n  rke2-payload clouds\n  rke2-payload clouds --output json")]
    Clouds(CloudsArgs),
}

/// Options shared by the commands that read Secrets.
#[derive(Debug, Args)]
pub(crate) struct InputArgs {
    /// The input file, or `-` for standard input.
    #[arg(value_name = "FILE", default_value = "-")]
    pub(crate) file: PathBuf,
    /// The most bytes any gzip stream may inflate to (a guard against gzip bombs).
    #[arg(long, value_name = "BYTES", default_value_t = 16 << 20)]
    pub(crate) max_inflated: u64,
}

#[derive(Debug, Args)]
pub(crate) struct DecodeArgs {
    #[command(flatten)]
    pub(crate) input: InputArgs,
    /// Pick the Secret by `name` or `namespace/name` (needed when the input holds several).
    #[arg(long, short = 'n', value_name = "NAME")]
    pub(crate) name: Option<String>,
    /// Write `data.value` exactly as stored (still compressed or wrapped).
    #[arg(long)]
    pub(crate) raw: bool,
    /// Write to this file instead of standard output.
    #[arg(long, short = 'o', value_name = "OUT")]
    pub(crate) output: Option<PathBuf>,
    /// Overwrite OUT if it exists.
    #[arg(long)]
    pub(crate) force: bool,
}

#[derive(Debug, Args)]
pub(crate) struct InspectArgs {
    #[command(flatten)]
    pub(crate) input: InputArgs,
    /// Only the Secret with this `name` or `namespace/name`.
    #[arg(long, short = 'n', value_name = "NAME")]
    pub(crate) name: Option<String>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub(crate) output: Format,
    /// Show secret values (the join token, datastore password) instead of fingerprints.
    #[arg(long)]
    pub(crate) show_secrets: bool,
    /// List every file and command, not only a summary.
    #[arg(long, short = 'v')]
    pub(crate) verbose: bool,
}

#[derive(Debug, Args)]
pub(crate) struct CloudsArgs {
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub(crate) output: Format,
}

/// Output formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum Format {
    /// Aligned text for people.
    Text,
    /// A JSON document.
    Json,
}
