//! The keys of RKE2's `/etc/rancher/rke2/config.yaml`, sorted by whether their values may be shown.
//!
//! RKE2 turns each top-level key of its config file into the command-line flag of the same name,
//! for `rke2 server` and `rke2 agent` alike: the keys are the flags' long names without `--`. Its
//! loader (k3s's `configfilearg`) also takes a flag's alias as a key (`t:` sets `--token`), and a
//! key ending in `+` appends to a list flag (`node-label+:`): strip the `+` before a look-up.
//!
//! Every flag that `rke2 server` or `rke2 agent` accepts is in exactly one of three lists:
//!
//! - [`PUBLIC_KEYS`]: no legitimate value can be a credential. Names, hosts, IP addresses, CIDRs,
//!   ports, booleans, numbers, durations, enumerations, image references, labels, taints, SANs,
//!   and paths to files or directories: a path is public even when the file it names is secret
//!   (`token-file`, `agent-token-file`, `private-registry`, `datastore-keyfile`).
//! - [`SECRET_KEYS`]: the value is, or can embed, a credential: the join tokens, the datastore
//!   DSN (it holds the database password), the S3 access key, secret key and session token, the
//!   S3 proxy URL (it may carry `user:password@`), the name of the S3 config Secret (kept here by
//!   the rule that a `*secret*` key is never shown), and the control-plane components' extra
//!   environment variables (`NAME=value` items that may hold cloud credentials).
//! - [`ARG_KEYS`]: lists of extra arguments for a component (`kubelet-arg`, …). An item is
//!   `flag=value` and may hold a secret, so these go to the argument-level detector instead.
//!
//! The rule: a key is public only when none of its valid values can hold a secret; in doubt it is
//! secret. [`SECRET_KEYS`] also names a few secret-bearing keys that are not flags of `server` or
//! `agent` but can sit in the same file: `vpn-auth` (a k3s flag RKE2 drops), and `etcd-token` and
//! the `s3-*` credentials and proxy of `rke2 etcd-snapshot`, which reads the same file. A key in
//! none of the lists, and not an alias in [`ALIASES`], is unknown: treat its value as secret.
//!
//! # Sources
//!
//! Only flag names (facts) were taken; no code or text was copied.
//!
//! - `rancher/rke2` at commit `6ce1a8019e9d0b81eb7a715edbc2b8ac12d26da0` (master, RKE2
//!   v1.36.4-rke2r1): `pkg/cli/cmds/server.go` and `pkg/cli/cmds/agent.go` (the k3s flags each
//!   command keeps, hides or drops, and RKE2's own `cni`, `ingress-controller`,
//!   `enable-servicelb`, `prime` and agent `system-default-registry`), `pkg/cli/cmds/root.go`
//!   (the flags common to both commands), `pkg/images/images.go` and `pkg/podtemplate/types.go`
//!   (the names the image, `*-extra-mount` and `*-extra-env` flags are built from), and
//!   `pkg/cli/cmds/k3sopts.go`: RKE2 refuses to start if a k3s flag is missing from a command's
//!   table, so each table names every k3s flag of that command. Hidden flags (`v`, `vmodule`,
//!   `log`, `alsologtostderr`, `disable-agent`, `secrets-encryption`, `prime`) are still accepted
//!   and are listed; dropped ones are not (except `vpn-auth`, above).
//! - `k3s-io/k3s` as pinned by that commit's `go.mod`: `v1.35.1-0.20260817230842-2a1e2e8cf41b`
//!   (commit `2a1e2e8cf41b`), `pkg/cli/cmds/server.go` and `pkg/cli/cmds/agent.go`, whose flag
//!   set the RKE2 tables mirror. That tree was not readable here, so the aliases come from the
//!   `k3s server --help` and `k3s agent --help` output in `k3s-io/docs` (`docs/cli/server.md` at
//!   `02434960d6d5881e47ae8a1c857c4b51f23deec6`, `docs/cli/agent.md` at
//!   `1f023c058c5f999a8857644625779e7298d13936`), matching RKE2's own help output in
//!   `rancher/rke2-docs` (`docs/reference/windows_agent_config.md` at
//!   `9477b7b1df1f0bd431cdabbb39fbdcd21cb82602`).

/// Long names of the `rke2 server` and `rke2 agent` flags whose values hold no secret (sorted).
pub(super) const PUBLIC_KEYS: &[&str] = &[
    "advertise-address",
    "agent-token-file",
    "airgap-extra-registry",
    "alsologtostderr",
    "audit-policy-file",
    "bind-address",
    "cloud-controller-manager-extra-mount",
    "cloud-controller-manager-image",
    "cloud-provider-config",
    "cloud-provider-name",
    "cluster-cidr",
    "cluster-dns",
    "cluster-domain",
    "cluster-reset",
    "cluster-reset-restore-path",
    "cni",
    "config",
    "container-runtime-endpoint",
    "control-plane-probe-configuration",
    "control-plane-resource-limits",
    "control-plane-resource-requests",
    "data-dir",
    "datastore-cafile",
    "datastore-certfile",
    "datastore-keyfile",
    "debug",
    "default-runtime",
    "disable",
    "disable-agent",
    "disable-apiserver",
    "disable-cloud-controller",
    "disable-controller-manager",
    "disable-default-registry-endpoint",
    "disable-etcd",
    "disable-kube-proxy",
    "disable-scheduler",
    "egress-selector-mode",
    "embedded-registry",
    "enable-pprof",
    "enable-servicelb",
    "etcd-disable-snapshots",
    "etcd-expose-metrics",
    "etcd-extra-mount",
    "etcd-image",
    "etcd-s3",
    "etcd-s3-bucket",
    "etcd-s3-bucket-lookup-type",
    "etcd-s3-endpoint",
    "etcd-s3-endpoint-ca",
    "etcd-s3-folder",
    "etcd-s3-insecure",
    "etcd-s3-region",
    "etcd-s3-retention",
    "etcd-s3-skip-ssl-verify",
    "etcd-s3-timeout",
    "etcd-snapshot-compress",
    "etcd-snapshot-dir",
    "etcd-snapshot-name",
    "etcd-snapshot-reconcile-interval",
    "etcd-snapshot-retention",
    "etcd-snapshot-schedule-cron",
    "helm-job-image",
    "image-credential-provider-bin-dir",
    "image-credential-provider-config",
    "ingress-controller",
    "kube-apiserver-extra-mount",
    "kube-apiserver-image",
    "kube-controller-manager-extra-mount",
    "kube-controller-manager-image",
    "kube-proxy-extra-mount",
    "kube-proxy-image",
    "kube-scheduler-extra-mount",
    "kube-scheduler-image",
    "kubelet-path",
    "lb-server-port",
    "log",
    "node-external-dns",
    "node-external-ip",
    "node-internal-dns",
    "node-ip",
    "node-label",
    "node-name",
    "node-name-from-cloud-provider-metadata",
    "node-taint",
    "nonroot-devices",
    "pause-image",
    "pod-security-admission-config-file",
    "prime",
    "private-registry",
    "profile",
    "protect-kernel-defaults",
    "resolv-conf",
    "runtime-image",
    "secrets-encryption",
    "secrets-encryption-provider",
    "selinux",
    "server",
    "service-cidr",
    "service-node-port-range",
    "servicelb-namespace",
    "snapshotter",
    "supervisor-metrics",
    "system-default-registry",
    "tls-san",
    "tls-san-security",
    "token-file",
    "v",
    "vmodule",
    "with-node-id",
    "write-kubeconfig",
    "write-kubeconfig-group",
    "write-kubeconfig-mode",
    "write-kubeconfig-name",
];

/// Long names whose values are, or can embed, a credential (sorted).
#[cfg(test)]
pub(super) const SECRET_KEYS: &[&str] = &[
    "agent-token",
    "cloud-controller-manager-extra-env",
    "datastore-endpoint",
    "etcd-extra-env",
    "etcd-s3-access-key",
    "etcd-s3-config-secret",
    "etcd-s3-proxy",
    "etcd-s3-secret-key",
    "etcd-s3-session-token",
    "etcd-token",
    "kube-apiserver-extra-env",
    "kube-controller-manager-extra-env",
    "kube-proxy-extra-env",
    "kube-scheduler-extra-env",
    "s3-access-key",
    "s3-proxy",
    "s3-secret-key",
    "s3-session-token",
    "token",
    "vpn-auth",
];

/// Long names of the extra-argument list flags, left to the argument-level detector (sorted).
pub(super) const ARG_KEYS: &[&str] = &[
    "etcd-arg",
    "helm-controller-arg",
    "kube-apiserver-arg",
    "kube-cloud-controller-manager-arg",
    "kube-controller-manager-arg",
    "kube-proxy-arg",
    "kube-scheduler-arg",
    "kubelet-arg",
];

/// Each alias a config-file key may use, with the long name it stands for (sorted by alias).
pub(super) const ALIASES: &[(&str, &str)] = &[
    ("c", "config"),
    ("d", "data-dir"),
    ("i", "node-ip"),
    ("l", "log"),
    ("o", "write-kubeconfig"),
    ("s", "server"),
    ("t", "token"),
];

#[cfg(test)]
mod tests {
    use super::{ALIASES, ARG_KEYS, PUBLIC_KEYS, SECRET_KEYS};

    fn strictly_sorted(keys: &[&str]) -> bool {
        keys.windows(2).all(|pair| pair[0] < pair[1])
    }

    #[test]
    fn lists_are_sorted_unique_and_disjoint() {
        assert!(strictly_sorted(PUBLIC_KEYS));
        assert!(strictly_sorted(SECRET_KEYS));
        assert!(strictly_sorted(ARG_KEYS));
        let aliases: Vec<&str> = ALIASES.iter().map(|&(alias, _)| alias).collect();
        assert!(strictly_sorted(&aliases));
        for key in PUBLIC_KEYS {
            assert!(
                !SECRET_KEYS.contains(key),
                "{key} is both public and secret"
            );
            assert!(
                !ARG_KEYS.contains(key),
                "{key} is both public and an argument list"
            );
        }
        for key in SECRET_KEYS {
            assert!(
                !ARG_KEYS.contains(key),
                "{key} is both secret and an argument list"
            );
        }
        for key in ARG_KEYS {
            assert!(key.ends_with("-arg") || key.ends_with("-args"), "{key}");
        }
    }

    #[test]
    fn aliases_name_known_keys() {
        for &(alias, long) in ALIASES {
            let known = [PUBLIC_KEYS, SECRET_KEYS, ARG_KEYS];
            assert!(
                known.iter().any(|list| list.contains(&long)),
                "{alias} -> {long}"
            );
            assert!(
                known.iter().all(|list| !list.contains(&alias)),
                "{alias} is a long name"
            );
        }
    }
}
