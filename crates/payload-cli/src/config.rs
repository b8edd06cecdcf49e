//! The config file of defaults (`.rke2-payload.yaml`): where it is found, what it may say, and
//! how its settings give way to the flags.
//!
//! Found, first that applies: `--config FILE`; else `$RKE2_PAYLOAD_CONFIG` (when set and not
//! empty); else `.rke2-payload.yaml` or `.rke2-payload.yml` in the current directory or the
//! nearest parent, up to the repository root (the nearest directory holding `.git`, included;
//! outside a repository only the current directory is looked in). `--no-config` reads none.
//! Both names in one directory is an error: one would be silently ignored.
//!
//! The file holds settings at the top, which every subcommand that has them takes, and
//! sections `lint:`, `size:` and `doctor:`, whose settings override the top's for that
//! subcommand. A flag given overrides both, except `allow`, whose checks add up (the file's
//! and the flag's). A key the file may not hold, or a value that does not read, is an error
//! (exit 2) naming the key and the file. There is no environment variable per setting.

use std::path::{Path, PathBuf};

use anyhow::{Context as _, Result, anyhow, bail};
use clap::Args;
use serde::Deserialize;

/// Where the defaults come from: the config file (see "Suppressing findings and setting
/// defaults" in the README).
#[derive(Debug, Args)]
pub(crate) struct ConfigArgs {
    /// Read defaults from this config file (default: $RKE2_PAYLOAD_CONFIG, else
    /// .rke2-payload.yaml or .rke2-payload.yml in this directory or the nearest parent up to
    /// the repository root). Flags override it.
    #[arg(long, value_name = "FILE", help_heading = "Defaults")]
    pub(crate) config: Option<PathBuf>,
    /// Read no config file.
    #[arg(long, conflicts_with = "config", help_heading = "Defaults")]
    pub(crate) no_config: bool,
}

/// The environment variable that names the config file when `--config` does not.
pub(crate) const CONFIG_ENV: &str = "RKE2_PAYLOAD_CONFIG";

/// The names looked for in each directory, in this order.
const NAMES: [&str; 2] = [".rke2-payload.yaml", ".rke2-payload.yml"];

/// `deny:` in the file (and `--deny`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum Deny {
    /// Fail (exit 1) on warnings too.
    Warnings,
    /// Fail on errors only (the default; overrides a `deny: warnings` above it).
    None,
}

/// `min-severity:` in the file (and `--min-severity`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum MinSeverity {
    /// Errors only.
    Error,
    /// Errors and warnings.
    Warning,
    /// Every finding (the default).
    Info,
}

impl MinSeverity {
    pub(crate) fn severity(self) -> rke2_payload::Severity {
        match self {
            MinSeverity::Error => rke2_payload::Severity::Error,
            MinSeverity::Warning => rke2_payload::Severity::Warning,
            MinSeverity::Info => rke2_payload::Severity::Info,
        }
    }
}

/// The settings of `lint`, at the top of the file or in its `lint:` section.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub(crate) struct LintDefaults {
    pub(crate) cloud: Option<Vec<String>>,
    pub(crate) headroom: Option<f64>,
    pub(crate) allow: Option<Vec<String>>,
    pub(crate) deny: Option<Deny>,
    pub(crate) min_severity: Option<MinSeverity>,
    pub(crate) cert_expiry_days: Option<i64>,
}

/// The settings of `size`, in its `size:` section (the top's `cloud` and `headroom` too).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub(crate) struct SizeDefaults {
    pub(crate) cloud: Option<Vec<String>>,
    pub(crate) headroom: Option<f64>,
}

/// The settings of `doctor`, in its `doctor:` section (the top's `deny` too).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub(crate) struct DoctorDefaults {
    pub(crate) deny: Option<Deny>,
}

/// The file as written.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
struct FileDoc {
    cloud: Option<Vec<String>>,
    headroom: Option<f64>,
    allow: Option<Vec<String>>,
    deny: Option<Deny>,
    min_severity: Option<MinSeverity>,
    cert_expiry_days: Option<i64>,
    lint: Option<LintDefaults>,
    size: Option<SizeDefaults>,
    doctor: Option<DoctorDefaults>,
}

/// The defaults of one run: what the file found says, each section merged over the top.
#[derive(Debug, Default)]
pub(crate) struct Defaults {
    pub(crate) lint: LintDefaults,
    pub(crate) size: SizeDefaults,
    pub(crate) doctor: DoctorDefaults,
}

/// The defaults `args` lead to: the file found, read and checked; none with `--no-config`
/// or when no file is found.
pub(crate) fn load(args: &ConfigArgs) -> Result<Defaults> {
    let Some(path) = find(args)? else {
        return Ok(Defaults::default());
    };
    let name = path.to_string_lossy().into_owned();
    let text = std::fs::read_to_string(&path)
        .with_context(|| format!("the config file {name} cannot be read"))?;
    parse(&text).map_err(|e| anyhow!("the config file {name}: {e}"))
}

/// The config file to read, by the search the module documentation describes.
fn find(args: &ConfigArgs) -> Result<Option<PathBuf>> {
    if args.no_config {
        return Ok(None);
    }
    if let Some(path) = &args.config {
        return Ok(Some(path.clone()));
    }
    if let Some(path) = std::env::var_os(CONFIG_ENV).filter(|p| !p.is_empty()) {
        return Ok(Some(PathBuf::from(path)));
    }
    let cwd = std::env::current_dir().context("the current directory cannot be read")?;
    let in_repository = cwd.ancestors().any(|d| d.join(".git").exists());
    for dir in cwd.ancestors() {
        if let Some(found) = in_dir(dir)? {
            return Ok(Some(found));
        }
        if !in_repository || dir.join(".git").exists() {
            break;
        }
    }
    Ok(None)
}

/// The config file of one directory; an error when it holds both names.
fn in_dir(dir: &Path) -> Result<Option<PathBuf>> {
    let found: Vec<PathBuf> = NAMES
        .iter()
        .map(|n| dir.join(n))
        .filter(|p| p.is_file())
        .collect();
    match found.as_slice() {
        [] => Ok(None),
        [one] => Ok(Some(one.clone())),
        _ => bail!(
            "{} holds both {} and {}: keep one",
            dir.to_string_lossy(),
            NAMES[0],
            NAMES[1]
        ),
    }
}

/// The defaults a config file's text says, each section merged over the top.
fn parse(text: &str) -> Result<Defaults> {
    let mut options = serde_saphyr::Options::default();
    options.with_snippet = false;
    let doc: Option<FileDoc> = serde_saphyr::from_str_with_options(text, options).map_err(|e| {
        let m = e.to_string();
        match e.location() {
            Some(l) if !m.contains(" line ") => {
                anyhow!("{m} (line {}, column {})", l.line(), l.column())
            }
            _ => anyhow!(m),
        }
    })?;
    let doc = doc.unwrap_or_default();
    let top = LintDefaults {
        cloud: doc.cloud,
        headroom: doc.headroom,
        allow: doc.allow,
        deny: doc.deny,
        min_severity: doc.min_severity,
        cert_expiry_days: doc.cert_expiry_days,
    };
    let section = doc.lint.unwrap_or_default();
    let lint = LintDefaults {
        cloud: section.cloud.or_else(|| top.cloud.clone()),
        headroom: section.headroom.or(top.headroom),
        allow: section.allow.or_else(|| top.allow.clone()),
        deny: section.deny.or(top.deny),
        min_severity: section.min_severity.or(top.min_severity),
        cert_expiry_days: section.cert_expiry_days.or(top.cert_expiry_days),
    };
    let section = doc.size.unwrap_or_default();
    let size = SizeDefaults {
        cloud: section.cloud.or(top.cloud),
        headroom: section.headroom.or(top.headroom),
    };
    let doctor = DoctorDefaults {
        deny: doc.doctor.unwrap_or_default().deny.or(top.deny),
    };
    for headroom in [lint.headroom, size.headroom].into_iter().flatten() {
        if !(0.0..100.0).contains(&headroom) {
            bail!("headroom must be at least 0 and less than 100");
        }
    }
    for id in [&lint.cloud, &size.cloud].into_iter().flatten().flatten() {
        if id != "all" && rke2_payload::find_cloud(id).is_none() {
            bail!(
                "cloud: unknown cloud {id:?}; known: {}",
                rke2_payload::CLOUDS
                    .iter()
                    .map(|c| c.id)
                    .collect::<Vec<_>>()
                    .join(", ")
            );
        }
    }
    for id in lint.allow.iter().flatten() {
        if rke2_payload::Check::from_id(id).is_none() {
            bail!("allow: {id:?} names no check (`rke2-payload lint --list-checks` lists them)");
        }
        if id == rke2_payload::Check::SecretUnreadable.id() {
            bail!("allow: {id} cannot be allowed");
        }
    }
    Ok(Defaults { lint, size, doctor })
}

impl LintDefaults {
    /// The checks `allow` names (checked when the file was read).
    pub(crate) fn allowed(&self) -> Vec<rke2_payload::Check> {
        self.allow
            .iter()
            .flatten()
            .filter_map(|id| rke2_payload::Check::from_id(id))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sections_override_the_top_and_unknown_keys_are_refused() {
        let d = parse(
            "cloud: [aws]\nheadroom: 10\ndeny: warnings\nsize: {headroom: 5}\nlint: {deny: none}\n",
        )
        .expect("reads");
        assert_eq!(d.lint.headroom, Some(10.0));
        assert_eq!(d.size.headroom, Some(5.0));
        assert_eq!(d.size.cloud.as_deref(), Some(&["aws".to_owned()][..]));
        assert_eq!(d.lint.deny, Some(Deny::None));
        assert_eq!(d.doctor.deny, Some(Deny::Warnings));
        let e = parse("clod: [aws]\n").expect_err("a typo");
        assert!(e.to_string().contains("clod"), "{e}");
        let e = parse("size: {allow: [gzip-unsafe]}\n").expect_err("not size's");
        assert!(e.to_string().contains("allow"), "{e}");
        assert!(parse("allow: [no-such]\n").is_err());
        assert!(parse("cloud: [moon]\n").is_err());
        assert!(parse("headroom: 100\n").is_err());
        assert!(parse("").is_ok());
    }
}
