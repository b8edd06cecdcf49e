//! The checks across the payloads of one cluster: the few facts of each that they compare.

use crate::checks::{Check, Finding};
use crate::facts::Facts;
use crate::facts::rke2::{self, Role};

use super::payload::is_ip;

/// What the cluster checks compare of one payload: kept for every Secret of an input, so it is
/// small.
#[derive(Debug, Clone, Default)]
pub(crate) struct ClusterFacts {
    pub(super) role: Option<Role>,
    config_found: bool,
    server: Option<String>,
    token_sha256: Option<String>,
    /// The first control plane's `agent-token`: agents may join with it instead of the token.
    agent_token_sha256: Option<String>,
    token_ca_hash: Option<String>,
    tls_san: Vec<String>,
    server_ca_sha256: Option<String>,
    /// Whether RKE2 is installed online (from get.rke2.io) at boot.
    online: bool,
}

/// The path of the cluster's server CA on the first control plane.
const SERVER_CA_PATH: &str = "/var/lib/rancher/rke2/server/tls/server-ca.crt";

impl ClusterFacts {
    pub(crate) fn of(facts: &Facts) -> Self {
        let config = facts.config.as_ref();
        ClusterFacts {
            role: facts.role,
            config_found: config.is_some(),
            server: config.and_then(|c| c.server.clone()),
            token_sha256: config.and_then(|c| c.token.as_ref()).map(|t| t.sha256()),
            agent_token_sha256: config
                .and_then(|c| c.agent_token.as_ref())
                .map(|t| t.sha256()),
            token_ca_hash: config
                .and_then(|c| c.token.as_ref())
                .and_then(|t| rke2::token_ca_hash(t.expose()))
                .map(str::to_owned),
            tls_san: config.map(|c| c.tls_san.clone()).unwrap_or_default(),
            server_ca_sha256: facts
                .files()
                .find(|(f, _)| f.path == SERVER_CA_PATH)
                .and_then(|(f, _)| f.sha256()),
            online: facts.install.as_ref().is_some_and(|i| !i.airgapped),
        }
    }
}

/// One Secret as the cluster checks see it.
pub(crate) struct Member<'a> {
    pub(crate) name: Option<&'a str>,
    pub(crate) namespace: Option<&'a str>,
    pub(crate) cluster: Option<&'a str>,
    pub(crate) facts: &'a ClusterFacts,
}

/// How many other Secrets' names `egress-required` lists before it counts the rest.
const NAMED: usize = 4;

/// `egress-required`, once per cluster: on the first of its Secrets that installs online,
/// counting and naming the others (a Secret without a cluster label is a cluster of its own).
fn egress(
    (namespace, cluster): (Option<&str>, Option<&str>),
    members: &[(usize, &Member<'_>)],
    out: &mut Vec<(usize, Finding)>,
) {
    use crate::codec::text::terminal_safe;
    const ONE: &str =
        "the online install downloads from get.rke2.io at boot: the node needs internet egress";
    let online: Vec<(usize, &Member<'_>)> = members
        .iter()
        .filter(|(_, m)| m.facts.online)
        .map(|(i, m)| (*i, *m))
        .collect();
    let Some(cluster) = cluster else {
        out.extend(
            online
                .iter()
                .map(|(i, _)| (*i, Finding::new(Check::EgressRequired, ONE))),
        );
        return;
    };
    let Some(((first, _), others)) = online.split_first() else {
        return;
    };
    if others.is_empty() {
        out.push((*first, Finding::new(Check::EgressRequired, ONE)));
        return;
    }
    let mut names: Vec<String> = others
        .iter()
        .take(NAMED)
        .map(|(_, m)| terminal_safe(m.name.unwrap_or("(unnamed)")).into_owned())
        .collect();
    if others.len() > NAMED {
        names.push(format!("{} more", others.len() - NAMED));
    }
    let cluster = match namespace {
        Some(ns) => format!("{}/{}", terminal_safe(ns), terminal_safe(cluster)),
        None => terminal_safe(cluster).into_owned(),
    };
    out.push((
        *first,
        Finding::new(
            Check::EgressRequired,
            format!(
                "the online install downloads from get.rke2.io at boot: the nodes of {} Secrets of cluster {cluster} (this one, {}) need internet egress",
                online.len(),
                names.join(", ")
            ),
        ),
    ));
}

/// Checks across the payloads of one cluster. Returns (index into `members`, finding).
pub(crate) fn lint_cluster(members: &[Member<'_>]) -> Vec<(usize, Finding)> {
    let mut out = Vec::new();
    // One pass to group: a fleet dump has thousands of clusters.
    type Key<'k> = (Option<&'k str>, Option<&'k str>);
    let mut clusters: std::collections::BTreeMap<Key<'_>, Vec<(usize, &Member<'_>)>> =
        std::collections::BTreeMap::new();
    for (i, m) in members.iter().enumerate() {
        clusters
            .entry((m.namespace, m.cluster))
            .or_default()
            .push((i, m));
    }
    // A cluster is its namespace and name: the same name in two namespaces is two clusters.
    for (key, members) in clusters {
        egress(key, &members, &mut out);
        let Some((_, init)) = members
            .iter()
            .find(|(_, m)| m.facts.role == Some(Role::Init) && m.facts.config_found)
        else {
            continue;
        };
        let init_name = init.name.unwrap_or("init");
        let server_ca_sha = &init.facts.server_ca_sha256;
        for (i, join) in members
            .iter()
            .filter(|(_, m)| matches!(m.facts.role, Some(Role::Server | Role::Agent)))
        {
            let r = join.facts;
            // An agent may join with the servers' `agent-token` instead (RKE2 accepts either).
            let agent_token = r.role == Some(Role::Agent)
                && r.token_sha256.is_some()
                && r.token_sha256 == init.facts.agent_token_sha256;
            if let (Some(a), Some(b)) = (&r.token_sha256, &init.facts.token_sha256)
                && a != b
                && !agent_token
            {
                out.push((
                    *i,
                    Finding::new(
                        Check::TokenMismatch,
                        format!(
                            "the token differs from the first control plane's ({init_name}): this node cannot join"
                        ),
                    )
                    .at_path(rke2::CONFIG_PATH),
                ));
            }
            if let Some((host, _)) = r.server.as_deref().and_then(rke2::server_host_port)
                && !is_ip(&host)
                && !init
                    .facts
                    .tls_san
                    .iter()
                    .any(|s| s.eq_ignore_ascii_case(&host))
            {
                out.push((
                    *i,
                    Finding::new(
                        Check::JoinHostNotInSan,
                        format!(
                            "joins through {host}, which is not in the tls-san of the first control plane ({init_name}): TLS verification fails"
                        ),
                    )
                    .at_path(rke2::CONFIG_PATH),
                ));
            }
            if let (Some(hash), Some(ca)) = (&r.token_ca_hash, server_ca_sha)
                && !hash.eq_ignore_ascii_case(ca)
            {
                out.push((
                    *i,
                    Finding::new(
                        Check::TokenCaHash,
                        "the K10 token's CA hash does not match the server CA of the first control plane: the agent will refuse the server",
                    )
                    .at_path(rke2::CONFIG_PATH),
                ));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn member<'a>(name: &'a str, cluster: Option<&'a str>, facts: &'a ClusterFacts) -> Member<'a> {
        Member {
            name: Some(name),
            namespace: Some("ns"),
            cluster,
            facts,
        }
    }

    #[test]
    fn egress_required_is_said_once_per_cluster_on_its_first_online_secret() {
        let online = ClusterFacts {
            online: true,
            ..ClusterFacts::default()
        };
        let offline = ClusterFacts::default();
        let members = [
            member("air", Some("a"), &offline),
            member("a-1", Some("a"), &online),
            member("b-1", Some("b"), &online),
            member("a-2", Some("a"), &online),
            member("a-3", Some("a"), &online),
            member("bare-1", None, &online),
            member("bare-2", None, &online),
        ];
        let mut found: Vec<(usize, String)> = lint_cluster(&members)
            .into_iter()
            .filter(|(_, f)| f.check == Check::EgressRequired)
            .map(|(i, f)| (i, f.message))
            .collect();
        found.sort();
        let at: Vec<usize> = found.iter().map(|(i, _)| *i).collect();
        // Cluster a on a-1 (the air-gapped one needs nothing), b on b-1, each unlabelled alone.
        assert_eq!(at, [1, 2, 5, 6]);
        assert!(
            found[0]
                .1
                .contains("the nodes of 3 Secrets of cluster ns/a (this one, a-2, a-3)"),
            "{}",
            found[0].1
        );
        assert!(found[1].1.ends_with("the node needs internet egress"));
        // More than a few others are counted, not all named.
        let many: Vec<String> = (0..9).map(|i| format!("m-{i}")).collect();
        let members: Vec<Member<'_>> = many.iter().map(|n| member(n, Some("m"), &online)).collect();
        let found = lint_cluster(&members);
        assert_eq!(found.len(), 1);
        assert!(
            found[0]
                .1
                .message
                .contains("(this one, m-1, m-2, m-3, m-4, 4 more)"),
            "{}",
            found[0].1.message
        );
    }
}
