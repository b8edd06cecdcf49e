//! The links that keep a control plane able to change: the preflight checks before scaling,
//! remediation, and the versions of the installed providers.

use serde_json::Value;

use crate::chain::unknown;
use crate::cluster::{ClusterObjects, Machine};
use crate::inventory::{Inventory, Kind};
use crate::link::{Link, LinkId, ObjectRef, State};
use crate::view;

/// The Machine condition of the RKE2 agent's health (a v1beta2 condition; CAPRKE2 v0.25
/// `controlplane/api/v1beta2/condition_consts.go:151`).
const AGENT_HEALTHY: &[&str] = &["AgentHealthy"];
/// The Machine condition of its etcd member's health (`condition_consts.go:237`).
const ETCD_MEMBER_HEALTHY: &[&str] = &["EtcdMemberHealthy"];

/// `preflight`; `stuck`: the Machines whose remediation is blocked (a failing check of theirs
/// is a consequence: a warning that points at the remediation link).
pub(crate) fn preflight(c: &ClusterObjects<'_>, stuck: &[&str]) -> Link {
    let id = LinkId::Preflight;
    let control_planes: Vec<_> = c.control_planes().collect();
    if control_planes.is_empty() {
        return match c.inventory.missing(Kind::Machine) {
            Some(why) => unknown(id, why),
            None => Link::new(id, State::NotApplicable).seen("no control-plane Machine"),
        };
    }
    if let Some(m) = control_planes.iter().find(|m| m.deleting().is_some()) {
        return Link::new(id, State::Broken)
            .on(Some(m.reference()), "metadata.deletionTimestamp")
            .seen(format!(
                "being deleted since {}",
                m.deleting().unwrap_or_default()
            ))
            .needed("no control-plane Machine being deleted: RKE2ControlPlane scales neither up nor down until it is gone");
    }
    let reported = control_planes.iter().any(|m| {
        view::condition(m.object, AGENT_HEALTHY).is_some()
            || view::condition(m.object, ETCD_MEMBER_HEALTHY).is_some()
    });
    if !reported {
        return unknown(
            id,
            "no control-plane Machine carries AgentHealthy or EtcdMemberHealthy: RKE2ControlPlane has not reported them yet, or the dump left the conditions out".to_owned(),
        );
    }
    let mut consequence = None;
    for m in &control_planes {
        for (name, types) in [
            ("AgentHealthy", AGENT_HEALTHY),
            ("EtcdMemberHealthy", ETCD_MEMBER_HEALTHY),
        ] {
            let condition = view::condition(m.object, types);
            if !condition.is_some_and(|c| c.is_true()) {
                let link = Link::new(id, State::Broken)
                    .on(Some(m.reference()), &format!("status.conditions[{name}]"))
                    .seen(condition.map_or(format!("{name} not reported"), |c| c.describe(name)))
                    .needed("AgentHealthy and EtcdMemberHealthy True on every control-plane Machine (Unknown or missing blocks): until then RKE2ControlPlane neither scales up nor down");
                if !stuck.contains(&m.name()) {
                    return link;
                }
                consequence.get_or_insert(Link {
                    state: State::Warning,
                    ..link.needed("the Machine waits for a remediation that is blocked (see the remediation link); until it is replaced, RKE2ControlPlane neither scales up nor down")
                });
            }
        }
    }
    if let Some(link) = consequence {
        return link;
    }
    Link::new(id, State::Holds).seen(format!(
        "{} control-plane Machines, none being deleted, AgentHealthy and EtcdMemberHealthy True on each",
        control_planes.len()
    ))
}

/// Whether a Machine waits for its owner to remediate it: a MachineHealthCheck found it
/// unhealthy (`HealthCheckSucceeded` False) and its owner has not acted yet (`OwnerRemediated`
/// False).
fn needs_remediation(m: &Machine<'_>) -> bool {
    let is_false =
        |types: &[&str]| view::condition(m.object, types).is_some_and(|c| c.status == "False");
    is_false(&["HealthCheckSucceeded"]) && is_false(&["OwnerRemediated"])
}

/// The control-plane Machines waiting for a remediation that is blocked: those marked for it
/// when the `remediation` link is broken.
pub(crate) fn stuck<'a>(c: &ClusterObjects<'a>, remediation: &Link) -> Vec<&'a str> {
    if remediation.state != State::Broken {
        return Vec::new();
    }
    c.control_planes()
        .filter(|m| needs_remediation(m))
        .map(|m| m.name())
        .collect()
}

/// `remediation`.
pub(crate) fn remediation(c: &ClusterObjects<'_>, initialized: Option<bool>) -> Link {
    let id = LinkId::Remediation;
    let control_planes: Vec<_> = c.control_planes().collect();
    let Some(target) = control_planes.iter().find(|m| needs_remediation(m)) else {
        if control_planes.is_empty() && c.inventory.missing(Kind::Machine).is_some() {
            return unknown(id, crate::chain::missing(c, Kind::Machine));
        }
        return Link::new(id, State::Holds).seen("no control-plane Machine waits for remediation");
    };
    let link = Link::new(id, State::Broken).on(
        Some(target.reference()),
        "status.conditions[OwnerRemediated]",
    );
    if initialized != Some(true) {
        return Link {
            state: State::Holds,
            ..link.seen(format!(
                "{} waits for remediation; before the control plane is initialized nothing blocks it",
                target.name()
            ))
        };
    }
    let replicas = c
        .control_plane
        .and_then(|r| view::at(r, &["spec", "replicas"]))
        .and_then(Value::as_u64)
        .unwrap_or(control_planes.len() as u64);
    let blocked = if replicas <= 1 {
        Some(format!(
            "spec.replicas is {replicas}: a single control plane is never remediated"
        ))
    } else if let Some(other) = control_planes
        .iter()
        .find(|m| m.name() != target.name() && m.deleting().is_some())
    {
        Some(format!("{} is being deleted", other.name()))
    } else if let Some(other) = control_planes
        .iter()
        .find(|m| m.name() != target.name() && m.node().is_none() && !needs_remediation(m))
    {
        Some(format!(
            "{} is still provisioning (no Node yet)",
            other.name()
        ))
    } else {
        quorum_lost(&control_planes, target)
    };
    match blocked {
        Some(why) => link
            .seen(format!("{} waits for remediation, which is blocked: {why}", target.name()))
            .needed("more than one replica, no Machine provisioning without a Node, none being deleted, and an etcd quorum that survives removing the Machine"),
        None => Link {
            state: State::Holds,
            ..link.seen(format!(
                "{} waits for remediation; nothing blocks it",
                target.name()
            ))
        },
    }
}

/// Why removing `target`'s etcd member would lose quorum, if it would.
fn quorum_lost(control_planes: &[&Machine<'_>], target: &Machine<'_>) -> Option<String> {
    let healthy = |m: &Machine<'_>| {
        view::condition(m.object, ETCD_MEMBER_HEALTHY).is_some_and(|c| c.is_true())
    };
    let members = control_planes.len();
    let remaining = members.saturating_sub(1);
    let healthy_remaining = control_planes
        .iter()
        .filter(|m| m.name() != target.name() && healthy(m))
        .count();
    let quorum = remaining / 2 + 1;
    (remaining > 0 && healthy_remaining < quorum).then(|| {
        format!(
            "removing it leaves {healthy_remaining} healthy etcd members of {remaining}, fewer than the quorum of {quorum}"
        )
    })
}

/// The minor versions of Cluster API core CAPRKE2 v0.25 was tested with
/// (`test/e2e/config/e2e_conf.yaml`).
const TESTED_CORE: &[u64] = &[12, 13];

/// The first minor version of Cluster API core with the v1beta2 API CAPRKE2 v0.25 is built on
/// (`api/core/v1beta2` appears in v1.11).
const FIRST_V1BETA2_CORE: u64 = 11;

/// `(major, minor)` of a version (`v1.13.5` → `(1, 13)`).
fn major_minor(version: &str) -> Option<(u64, u64)> {
    let mut parts = version.trim().trim_start_matches('v').split('.');
    let major = parts.next()?.parse().ok()?;
    let minor = parts.next()?.parse().ok()?;
    Some((major, minor))
}

/// `vMAJOR.MINOR` of a version.
fn minor(version: &str) -> String {
    major_minor(version).map_or_else(|| version.to_owned(), |(a, b)| format!("v{a}.{b}"))
}

/// `provider-versions`: the same for every cluster of the management cluster.
pub(crate) fn provider_versions(inventory: &Inventory) -> Link {
    let id = LinkId::ProviderVersions;
    let providers = inventory.of(Kind::Provider);
    let core = providers.iter().find(|p| {
        view::str_at(p, &["type"]) == Some("CoreProvider")
            || view::str_at(p, &["providerName"]) == Some("cluster-api")
    });
    let Some(core) = core else {
        return unknown(
            id,
            inventory
                .missing(Kind::Provider)
                .unwrap_or_else(|| "no clusterctl Provider of Cluster API core".to_owned()),
        );
    };
    let object = ObjectRef::new("Provider", view::namespace(core), view::name(core));
    let version = view::str_at(core, &["version"]).unwrap_or("");
    let rke2 = providers
        .iter()
        .filter(|p| view::str_at(p, &["providerName"]) == Some("rke2"))
        .filter_map(|p| view::str_at(p, &["version"]))
        .next();
    let link = Link::new(id, State::Holds).on(Some(object), "version");
    let mut seen = format!("Cluster API core {version}");
    if let Some(rke2) = rke2 {
        seen.push_str(&format!(", CAPRKE2 {rke2}"));
        if minor(rke2) != "v0.25" {
            return Link {
                state: State::Unknown,
                ..link.seen(format!(
                    "{seen}: this tool knows the versions CAPRKE2 v0.25 was tested with, not {}'s",
                    minor(rke2)
                ))
            };
        }
    }
    let tested: Vec<String> = TESTED_CORE.iter().map(|m| format!("v1.{m}")).collect();
    match major_minor(version) {
        Some((1, m)) if TESTED_CORE.contains(&m) => link.seen(seen),
        Some((1, m)) if m < FIRST_V1BETA2_CORE => Link {
            state: State::Broken,
            ..link.seen(seen).needed(format!(
                "Cluster API core v1.{FIRST_V1BETA2_CORE} or newer: CAPRKE2 v0.25 is built on the v1beta2 API, which older cores do not serve (tested with {})",
                tested.join(", ")
            ))
        },
        Some(_) => Link {
            state: State::Warning,
            ..link.seen(seen).needed(format!(
                "a Cluster API core CAPRKE2 v0.25 was tested with ({}); another is untested, not known broken",
                tested.join(", ")
            ))
        },
        None => Link {
            state: State::Unknown,
            ..link.seen(format!("{seen}: not a version this tool reads"))
        },
    }
}
