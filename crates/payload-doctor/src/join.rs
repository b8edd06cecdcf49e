//! The links every join waits on: the token Secret, a Ready control plane, its addresses, the
//! join targets the RKE2ControlPlane publishes, and the `server` each waiting payload names.

use rke2_payload::Role;
use serde_json::Value;

use crate::chain::{missing, secret_ref, unknown};
use crate::cluster::ClusterObjects;
use rke2_payload::codec::sha256_hex;

use crate::inventory::Kind;
use crate::link::{Link, LinkId, State};
use crate::view;

/// The supervisor port every join URL names.
pub(crate) const JOIN_PORT: u16 = 9345;

/// A fingerprint for people: `sha256:` and 12 hex digits.
fn short(sha: &str) -> String {
    format!("sha256:{}", sha.get(..12).unwrap_or(sha))
}

/// The token a `-token` Secret holds: `data.value` (base64) or `stringData.value`.
fn token_sha256(secret: &Value) -> Option<String> {
    if let Some(text) = view::str_at(secret, &["data", "value"]) {
        return rke2_payload::codec::decode_base64(text).map(|b| sha256_hex(&b));
    }
    view::str_at(secret, &["stringData", "value"]).map(|t| sha256_hex(t.as_bytes()))
}

/// `token-secret`.
pub(crate) fn token(c: &ClusterObjects<'_>) -> Link {
    let id = LinkId::TokenSecret;
    let name = format!("{}-token", c.name);
    let with_token: Vec<_> = c
        .machines
        .iter()
        .filter_map(|m| Some((m, m.payload?.token_sha256.as_deref()?)))
        .collect();
    let Some(secret) = c.token else {
        if let Some(why) = c.inventory.missing(Kind::Secret) {
            return unknown(id, why);
        }
        if c.machines.iter().all(|m| m.secret.is_none()) {
            return Link::new(id, State::NotApplicable)
                .on(Some(secret_ref(c, &name)), "")
                .seen("no bootstrap data written yet: the token is made with the first");
        }
        return Link::new(id, State::Broken)
            .on(Some(secret_ref(c, &name)), "data.value")
            .seen("not found")
            .needed("the Secret RKE2Config writes the cluster's token into and every join payload reads it from");
    };
    let link = Link::new(id, State::Holds).on(Some(secret_ref(c, &name)), "data.value");
    let Some(want) = token_sha256(secret) else {
        return Link {
            state: State::Broken,
            ..link.seen("holds no readable token (no base64 data.value)")
        };
    };
    if let Some((m, got)) = with_token.iter().find(|(_, got)| *got != want) {
        return Link {
            state: State::Broken,
            ..link
                .seen(format!(
                    "the payload of Machine {} (Secret {}) carries token {}, the {name} Secret holds {}",
                    m.name(),
                    m.secret.unwrap_or_default(),
                    short(got),
                    short(&want)
                ))
                .needed("the token of every payload is the cluster's: a node with another one is refused by the supervisor")
        };
    }
    let unreadable = c
        .machines
        .iter()
        .filter(|m| m.payload_unreadable().is_some())
        .count();
    let mut seen = format!(
        "{} ({} payload(s) carry it)",
        short(&want),
        with_token.len()
    );
    if unreadable > 0 {
        seen.push_str(&format!("; {unreadable} payload(s) could not be read"));
    }
    link.seen(seen)
}

/// `ready-control-plane`; `stuck`: the Machines whose remediation is blocked.
pub(crate) fn ready(c: &ClusterObjects<'_>, stuck: &[&str]) -> Link {
    let id = LinkId::ReadyControlPlane;
    let control_planes: Vec<_> = c.control_planes().collect();
    if let Some(why) = control_planes
        .is_empty()
        .then(|| c.inventory.missing(Kind::Machine))
        .flatten()
    {
        return unknown(id, why);
    }
    if let Some(ready) = control_planes.iter().find(|m| m.is_ready()) {
        let count = control_planes.iter().filter(|m| m.is_ready()).count();
        return Link::new(id, State::Holds)
            .on(Some(ready.reference()), "status.conditions[Ready]")
            .seen(format!("{count} of {} Ready", control_planes.len()));
    }
    let seen: Vec<String> = control_planes
        .iter()
        .map(|m| {
            let ready = m
                .ready()
                .map_or("no Ready condition".to_owned(), |r| r.describe("Ready"));
            format!("{}: {ready}", m.name())
        })
        .collect();
    let object = control_planes
        .iter()
        .find(|m| m.is_init())
        .or(control_planes.first())
        .map(|m| m.reference())
        .or_else(|| c.control_plane_ref());
    // Machines a MachineHealthCheck marked are not Ready; when their remediation is blocked,
    // that is the break to mend, and this link points there.
    let state = if all_stuck(&control_planes, stuck) {
        State::Warning
    } else {
        State::Broken
    };
    let needed = if state == State::Warning {
        "a Ready control-plane Machine: every one is marked for remediation by a MachineHealthCheck, and the remediation is blocked (see the remediation link)"
    } else {
        "a Ready control-plane Machine (it has its Node, and the control plane's checks pass): RKE2ControlPlane publishes join targets only from Ready Machines"
    };
    Link::new(id, state)
        .on(object, "status.conditions[Ready]")
        .seen(if seen.is_empty() {
            "no control-plane Machine".to_owned()
        } else {
            seen.join("; ")
        })
        .needed(needed)
}

/// The address types a registration method reads, in its order of preference.
fn address_types(method: &str) -> Option<&'static [&'static str]> {
    match method {
        "internal-first" => Some(&["InternalIP", "ExternalIP"]),
        "internal-only-ips" => Some(&["InternalIP"]),
        "external-only-ips" => Some(&["ExternalIP"]),
        _ => None,
    }
}

/// `registration-address`.
pub(crate) fn registration_address(c: &ClusterObjects<'_>) -> Link {
    let id = LinkId::RegistrationAddress;
    let Some(method) = c.registration_method() else {
        return unknown(id, missing(c, Kind::Rke2ControlPlane));
    };
    let Some(types) = address_types(method) else {
        return Link::new(id, State::NotApplicable)
            .on(c.control_plane_ref(), "spec.registrationMethod")
            .seen(format!(
                "registrationMethod {method}: no Machine address is read"
            ));
    };
    let ready: Vec<_> = c.control_planes().filter(|m| m.is_ready()).collect();
    let wanted = types.join(" or ");
    let has_address = |m: &crate::cluster::Machine<'_>| {
        m.addresses()
            .iter()
            .any(|(t, a)| types.contains(t) && !a.is_empty())
    };
    let describe = |m: &crate::cluster::Machine<'_>| {
        let addresses: Vec<String> = m
            .addresses()
            .iter()
            .map(|(t, a)| format!("{t} {a}"))
            .collect();
        if addresses.is_empty() {
            "no address".to_owned()
        } else {
            addresses.join(", ")
        }
    };
    let without: Vec<_> = ready.iter().filter(|m| !has_address(m)).collect();
    // A Ready Machine without the address is passed over; only when none has one does the
    // RKE2ControlPlane publish no join target.
    if let Some(first) = without.first() {
        let all = without.len() == ready.len();
        let state = if all { State::Broken } else { State::Warning };
        let needed = if all {
            format!(
                "an {wanted} address on the Ready control-plane Machines (registrationMethod {method}); with none, RKE2ControlPlane fails its status update (\"ready but they have no IP Address available\", in the controller's log only) and availableServerIPs stays empty"
            )
        } else {
            format!(
                "an {wanted} address on every Ready control-plane Machine (registrationMethod {method}): one without is never a join target"
            )
        };
        return Link::new(id, state)
            .on(Some(first.reference()), "status.addresses")
            .seen(format!(
                "{} of {} Ready control-plane Machines without an {wanted} address; {}: {}",
                without.len(),
                ready.len(),
                first.name(),
                describe(first)
            ))
            .needed(needed);
    }
    let state = if ready.is_empty() {
        State::Unknown
    } else {
        State::Holds
    };
    Link::new(id, state)
        .on(c.control_plane_ref(), "spec.registrationMethod")
        .seen(format!(
            "registrationMethod {method}: {} Ready control-plane Machines with an {wanted} address",
            ready.len()
        ))
}

/// Whether every one of `control_planes` waits for a remediation that is blocked (`stuck`).
fn all_stuck(control_planes: &[&crate::cluster::Machine<'_>], stuck: &[&str]) -> bool {
    !control_planes.is_empty() && control_planes.iter().all(|m| stuck.contains(&m.name()))
}

/// `available-server-ips`; `stuck`: the Machines whose remediation is blocked.
pub(crate) fn available_server_ips(c: &ClusterObjects<'_>, stuck: &[&str]) -> Link {
    let id = LinkId::AvailableServerIps;
    let Some(ips) = c.available_server_ips() else {
        return unknown(id, missing(c, Kind::Rke2ControlPlane));
    };
    let link = Link::new(id, State::Holds).on(c.control_plane_ref(), "status.availableServerIPs");
    if !ips.is_empty() {
        return link.seen(ips.join(", "));
    }
    let ready = c.control_planes().filter(|m| m.is_ready()).count();
    let why = if ready == 0 {
        "no control-plane Machine is Ready".to_owned()
    } else {
        format!(
            "{ready} control-plane Machines are Ready, yet it is empty: RKE2ControlPlane could not reach the workload API server through the {}-kubeconfig Secret, or could not update its status",
            c.name
        )
    };
    let control_planes: Vec<_> = c.control_planes().collect();
    let (state, needed) = if ready == 0 && all_stuck(&control_planes, stuck) {
        (
            State::Warning,
            "at least one join target: it fills again once a control-plane Machine is Ready, which waits on the blocked remediation (see the remediation link)",
        )
    } else {
        (
            State::Broken,
            "at least one join target: RKE2Config writes no join data (control planes or workers) while it is empty",
        )
    };
    Link {
        state,
        ..link.seen(format!("[] ({why})")).needed(needed)
    }
}

/// The hosts a join payload may name now: the published targets (`availableServerIPs`, whose
/// first CAPRKE2 writes into join payloads), the endpoint host and the registration address;
/// each once.
fn targets<'a>(c: &ClusterObjects<'a>) -> Vec<&'a str> {
    let mut targets = c.available_server_ips().unwrap_or_default();
    targets.extend(c.endpoint().map(|(h, _)| h));
    targets.extend(
        c.control_plane
            .and_then(|r| view::str_at(r, &["spec", "registrationAddress"])),
    );
    let mut seen = std::collections::HashSet::new();
    targets.retain(|t| !t.is_empty() && seen.insert(*t));
    targets
}

/// `join-target`.
pub(crate) fn join_target(c: &ClusterObjects<'_>) -> Link {
    let id = LinkId::JoinTarget;
    let waiting: Vec<_> = c
        .machines
        .iter()
        .filter(|m| m.joins() && m.node().is_none() && m.deleting().is_none())
        .collect();
    let joins = c.machines.iter().filter(|m| m.joins()).count();
    let unreadable_waiting = c
        .machines
        .iter()
        .any(|m| m.node().is_none() && m.deleting().is_none() && m.payload_unreadable().is_some());
    if joins == 0 && !unreadable_waiting {
        if let Some(why) = c.inventory.missing(Kind::Secret) {
            return unknown(id, why);
        }
        return Link::new(id, State::NotApplicable).seen("no join payload in the input");
    }
    if waiting.is_empty() && !unreadable_waiting {
        return Link::new(id, State::Holds).seen(format!(
            "{joins} join payloads; every Machine they were written for has its Node"
        ));
    }
    let targets = targets(c);
    if targets.is_empty() && !unreadable_waiting {
        return unknown(
            id,
            "no current join target to compare with (availableServerIPs is empty)".to_owned(),
        );
    }
    // A waiting Machine whose payload cannot be read never boots from it.
    if let Some(m) = c
        .machines
        .iter()
        .find(|m| m.node().is_none() && m.deleting().is_none() && m.payload_unreadable().is_some())
    {
        return Link::new(id, State::Broken)
            .on(Some(m.reference()), "data.value")
            .seen(format!(
                "the payload of Machine {} (Secret {}) cannot be read: {}; the Machine has no Node",
                m.name(),
                m.secret.unwrap_or_default(),
                m.payload_unreadable().unwrap_or_default()
            ))
            .needed("a payload the node can read, naming a current join target");
    }
    for m in &waiting {
        let Some(server) = m.payload.and_then(|p| p.server.as_deref()) else {
            return Link::new(id, State::Broken)
                .on(Some(m.reference()), "config.yaml server")
                .seen(format!(
                    "the payload of Machine {} (Secret {}) names no server (its config.yaml has no server key, or could not be read), and the Machine has no Node",
                    m.name(),
                    m.secret.unwrap_or_default()
                ))
                .needed(format!("server: https://<one of {}>:{JOIN_PORT}", targets.join(", ")));
        };
        let (host, port) = view::host_port(server);
        if !targets.contains(&host) || port != Some(JOIN_PORT) {
            let role = match m.payload.and_then(|p| p.role) {
                Some(Role::Server) => "control-plane join",
                _ => "worker",
            };
            return Link::new(id, State::Broken)
                .on(Some(m.reference()), "config.yaml server")
                .seen(format!(
                    "the {role} payload of Machine {} (Secret {}) names {server}, and the Machine has no Node",
                    m.name(),
                    m.secret.unwrap_or_default(),
                ))
                .needed(format!(
                    "https://<one of {}>:{JOIN_PORT}: the payload was written for a join target that is no longer current; deleting the Machine lets its owner make one with a current payload",
                    targets.join(", ")
                ));
        }
    }
    Link::new(id, State::Holds).seen(format!(
        "{} Machines wait for their Node; each payload names a current target ({})",
        waiting.len(),
        targets.join(", ")
    ))
}
