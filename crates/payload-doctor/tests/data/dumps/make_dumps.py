#!/usr/bin/env python3
"""Generate the `rke2-payload doctor` test dumps in this folder.

Stdlib only; output is deterministic (no clock, no RNG): every uid, token,
instance id and name suffix is derived from a hash of a fixed seed.
Run:  python3 make_dumps.py        (writes next to this script)

Shapes follow cluster-api v1.13.5 and cluster-api-provider-rke2 v0.25.0; see
README.md for the upstream file:line each shape was taken from.
"""

import base64
import copy
import hashlib
import json
import os
import re
from datetime import datetime, timedelta, timezone

OUT = os.path.dirname(os.path.abspath(__file__))

# "Now" of every dump: the moment `kubectl get` ran. All timestamps are before it.
NOW = datetime(2026, 5, 12, 10, 0, 0, tzinfo=timezone.utc)
RKE2_VERSION = "v1.31.4+rke2r1"

CAPI_VERSION = "v1.13.5"
CAPRKE2_VERSION = "v0.25.0"
CAPA_VERSION = "v2.10.0"

G_CORE = "cluster.x-k8s.io"
G_CP = "controlplane.cluster.x-k8s.io"
G_BS = "bootstrap.cluster.x-k8s.io"
G_INFRA = "infrastructure.cluster.x-k8s.io"
INFRA_V = G_INFRA + "/v1beta2"  # CAPA's own API version

LBL_CLUSTER = "cluster.x-k8s.io/cluster-name"
LBL_CP = "cluster.x-k8s.io/control-plane"
LBL_CP_NAME = "cluster.x-k8s.io/control-plane-name"


# ---------------------------------------------------------------- helpers
def h(seed, n=32):
    return hashlib.sha256(seed.encode()).hexdigest()[:n]


def uid(seed):
    x = h("uid:" + seed, 32)
    return "%s-%s-%s-%s-%s" % (x[:8], x[8:12], "4" + x[13:16], "a" + x[17:20], x[20:32])


ALNUM = "bcdfghjklmnpqrstvwxz2456789"  # k8s.io/apiserver names.SimpleNameGenerator alphabet


def suffix(seed, n=5):
    d = hashlib.sha256(("sfx:" + seed).encode()).digest()
    return "".join(ALNUM[b % len(ALNUM)] for b in d[:n])


def token(seed):
    # CAPRKE2 pkg/util.Random(16): hex of 16 random bytes -> 32 hex chars
    return h("token:" + seed, 32)


def instance_id(seed):
    return "i-0" + h("iid:" + seed, 16)


def ts(minutes_ago):
    return (NOW - timedelta(minutes=minutes_ago)).strftime("%Y-%m-%dT%H:%M:%SZ")


_rv = [48211000]


def rv():
    _rv[0] += 137
    return str(_rv[0])


def b64(s):
    if isinstance(s, str):
        s = s.encode()
    return base64.b64encode(s).decode()


def meta(name, ns, seed_extra="", created=600, labels=None, annotations=None, owners=None, gen=None, finalizers=None):
    m = {
        "name": name,
        "namespace": ns,
        "uid": uid(ns + "/" + name + seed_extra),
        "resourceVersion": rv(),
        "creationTimestamp": ts(created),
    }
    if gen is not None:
        m["generation"] = gen
    if labels:
        m["labels"] = labels
    if annotations:
        m["annotations"] = annotations
    if owners:
        m["ownerReferences"] = owners
    if finalizers:
        m["finalizers"] = finalizers
    return m


def owner(api_version, kind, name, ns, controller=True, block=True):
    o = {"apiVersion": api_version, "kind": kind, "name": name, "uid": uid(ns + "/" + name)}
    if block:
        o["blockOwnerDeletion"] = True
    if controller:
        o["controller"] = True
    return o


def c2(ctype, status, reason, message=None, ago=300, gen=1):
    """metav1.Condition (v1beta2 conditions)."""
    c = {"type": ctype, "status": status, "reason": reason, "lastTransitionTime": ts(ago), "observedGeneration": gen}
    if message:
        c["message"] = message
    return c


def c1(ctype, status, reason=None, message=None, severity=None, ago=300):
    """cluster-api v1beta1 Condition (with severity for False conditions)."""
    c = {"type": ctype, "status": status, "lastTransitionTime": ts(ago)}
    if status == "False":
        c["severity"] = severity or "Warning"
    if reason:
        c["reason"] = reason
    if message:
        c["message"] = message
    return c


# ---------------------------------------------------------------- YAML emitter (kubectl style)
_PLAIN_RE = re.compile(r"^[A-Za-z0-9_./+=@()\[\]-][A-Za-z0-9 _./:+=@,()\[\]<>*-]*$")
_RESERVED = {"", "y", "n", "yes", "no", "true", "false", "on", "off", "null", "~"}


def _needs_quote(s):
    if s.lower() in _RESERVED:
        return True
    if s != s.strip():
        return True
    if re.match(r"^[-+]?(\d[\d_]*)?(\.\d*)?([eE][-+]?\d+)?$", s) and any(ch.isdigit() for ch in s):
        return True
    if re.match(r"^0[xo]?[0-9a-fA-F]+$", s):
        return True
    if re.match(r"^\d{4}-\d\d-\d\d", s):
        return True
    if ": " in s or " #" in s or s.endswith(":"):
        return True
    if s[0] in "-?:,[]{}#&*!|>'\"%@`" and not (s[0] == "-" and len(s) > 1 and s[1] not in " "):
        return True
    if s.startswith("- "):
        return True
    return not _PLAIN_RE.match(s)


def _scalar(v):
    if v is None:
        return "null"
    if v is True:
        return "true"
    if v is False:
        return "false"
    if isinstance(v, (int, float)):
        return str(v)
    s = str(v)
    if _needs_quote(s):
        return json.dumps(s)  # kubectl (sigs.k8s.io/yaml) double-quotes ambiguous scalars
    return s


def _block(s, indent):
    pad = " " * indent
    chomp = "|" if s.endswith("\n") else "|-"
    body = s[:-1] if s.endswith("\n") else s
    lines = body.split("\n")
    if any(l != l.rstrip() for l in lines):
        return json.dumps(s)  # block scalars cannot hold trailing spaces reliably
    return chomp + "\n" + "\n".join((pad + l) if l else "" for l in lines)


def to_yaml(obj, indent=0):
    pad = " " * indent
    out = []
    if isinstance(obj, dict):
        for k in sorted(obj):
            v = obj[k]
            key = _scalar(k)
            if isinstance(v, dict):
                if not v:
                    out.append("%s%s: {}" % (pad, key))
                else:
                    out.append("%s%s:" % (pad, key))
                    out.append(to_yaml(v, indent + 2))
            elif isinstance(v, list):
                if not v:
                    out.append("%s%s: []" % (pad, key))
                else:
                    out.append("%s%s:" % (pad, key))
                    out.append(to_yaml(v, indent))
            elif isinstance(v, str) and "\n" in v:
                out.append("%s%s: %s" % (pad, key, _block(v, indent + 2)))
            else:
                out.append("%s%s: %s" % (pad, key, _scalar(v)))
    elif isinstance(obj, list):
        for item in obj:
            if isinstance(item, dict) and item:
                sub = to_yaml(item, indent + 2)
                out.append(pad + "- " + sub[indent + 2:])
            elif isinstance(item, list) and item:
                sub = to_yaml(item, indent + 2)
                out.append(pad + "- " + sub[indent + 2:])
            elif isinstance(item, str) and "\n" in item:
                out.append(pad + "- " + _block(item, indent + 2))
            else:
                out.append(pad + "- " + (_scalar(item) if not isinstance(item, (dict, list)) else ("{}" if isinstance(item, dict) else "[]")))
    return "\n".join(out)


def klist(items):
    return {"apiVersion": "v1", "items": items, "kind": "List", "metadata": {"resourceVersion": ""}}


def write_yaml(path, items):
    with open(path, "w") as f:
        f.write(to_yaml(klist(items)) + "\n")


def write_json(path, items):
    with open(path, "w") as f:
        f.write(json.dumps(klist(items), indent=4, sort_keys=True) + "\n")


# ---------------------------------------------------------------- RKE2 payload (cloud-config)
def _yaml_v3_list(key, vals):
    return [key + ":"] + ["  - " + _scalar(v) for v in vals]


def rke2_config_yaml(m, cl):
    """/etc/rancher/rke2/config.yaml as CAPRKE2 marshals it with yaml.v3 (indent 2).
    Field order = struct order: rke2AgentConfig (inline) first, then ServerConfig fields
    (pkg/rke2/config.go ServerConfig / rke2AgentConfig)."""
    lines = []
    if cl.cloud_provider_name:
        lines.append("cloud-provider-name: " + cl.cloud_provider_name)
    kubelet = m.payload_kubelet_args
    if kubelet:
        lines += _yaml_v3_list("kubelet-arg", kubelet)
    if m.payload_server:
        lines.append("server: https://%s:9345" % m.payload_server)
    lines.append("token: " + m.payload_token)
    if m.role == "cp":
        lines += _yaml_v3_list("cni", [cl.cni])
        lines += _yaml_v3_list("tls-san", cl.tls_san + [cl.endpoint_host or ""])
        lines.append("cluster-cidr: 10.42.0.0/16")
        lines.append("service-cidr: 10.43.0.0/16")
    return "\n".join(lines) + "\n"


def cloud_config(m, cl):
    """Mirrors bootstrap/internal/cloudinit templates (controlPlaneCloudInit / workerCloudInit)."""
    content = rke2_config_yaml(m, cl)
    indented = "\n".join("      " + l for l in content.split("\n"))
    out = "## template: jinja\n#cloud-config\n\n"
    out += "write_files:\n-   path: /etc/rancher/rke2/config.yaml\n    owner: root:root\n    permissions: '0640'\n    content: |\n"
    out += indented + "\n\n\n"
    if m.role == "cp":
        out += "\nruncmd:\n"
        out += "  - 'curl -sfL https://get.rke2.io | INSTALL_RKE2_VERSION=%s sh -s - server' \n" % cl.rke2_version
        out += "  - 'systemctl mask rke2-agent.service || true'\n"
        out += "  - 'systemctl enable rke2-server.service'\n"
        out += "  - 'systemctl start rke2-server.service'\n"
    else:
        out += "runcmd:\n"
        out += "  - 'curl -sfL https://get.rke2.io | INSTALL_RKE2_VERSION=%s INSTALL_RKE2_TYPE=\"agent\" sh -s -'\n" % cl.rke2_version
        out += "  - 'systemctl mask rke2-server.service || true'\n"
        out += "  - 'systemctl enable rke2-agent.service'\n"
        out += "  - 'systemctl start rke2-agent.service'\n"
    out += "  - 'mkdir -p /run/cluster-api'\n"
    out += "  - 'echo success > /run/cluster-api/bootstrap-success.complete'\n"
    return out


# ---------------------------------------------------------------- model
class M:
    """One Machine (+ its RKE2Config, infra machine id and bootstrap Secret)."""

    def __init__(self, cl, role, idx, **kw):
        self.cl = cl
        self.role = role
        self.idx = idx
        if role == "cp":
            self.name = "%s-control-plane-%s" % (cl.name, suffix(cl.name + "cp%d" % idx))
            self.config_name = "%s-control-plane-%s" % (cl.name, suffix(cl.name + "cpcfg%d" % idx))
            self.ip = "10.%d.1.%d" % (cl.net, 20 + idx)
        else:
            self.ms = "%s-md-0-%s" % (cl.name, suffix(cl.name + "ms", 10)[:10])
            self.name = "%s-%s" % (self.ms, suffix(cl.name + "w%d" % idx))
            self.config_name = "%s-md-0-%s" % (cl.name, suffix(cl.name + "wcfg%d" % idx))
            self.ip = "10.%d.2.%d" % (cl.net, 30 + idx)
        self.instance = instance_id(cl.name + self.name)
        self.zone = ["us-east-1a", "us-east-1b", "us-east-1c"][idx % 3]
        self.provider_id = "aws:///%s/%s" % (self.zone, self.instance)
        self.node_name = "ip-%s.ec2.internal" % self.ip.replace(".", "-")
        self.addresses = [
            {"type": "InternalIP", "address": self.ip},
            {"type": "InternalDNS", "address": self.node_name},
        ]
        self.created = 240 - idx * 5 if role == "cp" else 200 - idx * 3
        self.infra_ready = True
        self.has_provider_id = True
        self.bootstrap = "join"  # init | join | none
        self.has_node = True
        self.node_ready = "True"
        self.node_msg = None
        self.agent = "True"
        self.etcd = "True"
        self.deleting = False
        self.mhc = None  # None | "healthy" | "unhealthy"
        self.payload_server = None  # host written into server: (None for init)
        self.payload_token = None
        self.payload_kubelet_args = None
        self.extra_ready_msg = None
        self.extra_annotations = None
        for k, v in kw.items():
            setattr(self, k, v)

    @property
    def ready(self):
        # Machine Ready (machine_controller_status.go setReadyCondition) summarises Deleting, Updating,
        # BootstrapConfigReady, InfrastructureReady, NodeHealthy and HealthCheckSucceeded; CAPRKE2 sets no
        # readinessGates, so AgentHealthy/EtcdMemberHealthy do not affect it.
        return (self.has_node and self.node_ready == "True" and self.infra_ready and self.bootstrap != "none"
                and not self.deleting and self.mhc != "unhealthy"
                # NodeHealthy stays Unknown ("Waiting for Cluster control plane to be initialized") until then
                and self.cl.cp_initialized)


class C:
    """One RKE2 cluster."""

    def __init__(self, name, ns, api, net, **kw):
        self.name = name
        self.ns = ns
        self.api = api  # "v1beta1" | "v1beta2"
        self.net = net
        self.rke2_version = RKE2_VERSION
        self.endpoint_host = "%s-apiserver-%s.elb.us-east-1.amazonaws.com" % (name, h(name + "elb", 8))
        self.endpoint_port = 6443
        self.reg_method = "internal-first"
        self.reg_address = None
        self.cloud_provider_name = "external"
        self.cni = "calico"
        self.tls_san = []
        self.infra_provisioned = True
        self.cp_initialized = True
        self.cp_replicas = 3
        self.md_replicas = 2
        self.token = token(ns + "/" + name)
        self.token_secret = "present"  # present | missing | other
        self.other_token = token(ns + "/" + name + "/recreated")
        self.available_ips = None  # computed if None
        self.remote_ok = True
        self.created = 260
        self.machines = []
        self.rcp_extra_conditions = []
        self.mhc = False
        self.rcp_annotations = None
        self.last_remediation = None
        for k, v in kw.items():
            setattr(self, k, v)

    # convenience
    def cps(self):
        return [m for m in self.machines if m.role == "cp"]

    def workers(self):
        return [m for m in self.machines if m.role == "worker"]

    @property
    def rcp_name(self):
        return self.name + "-control-plane"

    def tokens_used(self):
        t = set()
        if self.token_secret in ("present", "missing"):
            t.add(self.token)
        if self.token_secret == "other":
            t.add(self.other_token)
        for m in self.machines:
            if m.payload_token:
                t.add(m.payload_token)
        return t

    def compute_available_ips(self):
        if self.available_ips is not None:
            return self.available_ips
        ready_cps = [m for m in self.cps() if m.ready]
        if not ready_cps:
            return []
        if self.reg_method in ("control-plane-endpoint", ""):
            return [self.endpoint_host]
        if self.reg_method == "address":
            return [self.reg_address]
        ips = []
        for m in ready_cps:
            for a in m.addresses:
                if self.reg_method == "internal-only-ips" and a["type"] == "InternalIP":
                    ips.append(a["address"])
                    break
                if self.reg_method == "external-only-ips" and a["type"] == "ExternalIP":
                    ips.append(a["address"])
                    break
                if self.reg_method == "internal-first" and a["type"] in ("InternalIP", "ExternalIP"):
                    ips.append(a["address"])
                    break
        return ips


def standard_cluster(name, ns, api, net, n_cp=3, n_w=2, **kw):
    cl = C(name, ns, api, net, **kw)
    for i in range(n_cp):
        m = M(cl, "cp", i)
        m.bootstrap = "init" if i == 0 else "join"
        cl.machines.append(m)
    for i in range(n_w):
        cl.machines.append(M(cl, "worker", i))
    finalize_payloads(cl)
    return cl


def finalize_payloads(cl):
    """Fill the payload fields the way the RKE2Config controller would have: init has no server:,
    joiners point at status.availableServerIPs[0] at the time the payload was generated."""
    first = cl.compute_available_ips()
    if not first:
        # compute what the IPs were when joiners were generated (all cps ready at that time)
        first = [cl.cps()[0].ip] if cl.cps() else []
    for m in cl.machines:
        if m.bootstrap == "none":
            # no bootstrap data -> the infrastructure provider has not created the instance yet
            m.payload_token = None
            m.infra_ready = False
            m.has_provider_id = False
            continue
        if m.payload_token is None:
            m.payload_token = cl.token
        if m.bootstrap == "init":
            m.payload_server = None
        elif m.payload_server is None:
            m.payload_server = first[0] if first else None


# ---------------------------------------------------------------- renderers
def cluster_obj(cl):
    ready_cps = [m for m in cl.cps() if m.ready]
    ready_ws = [m for m in cl.workers() if m.ready]
    n_cp, n_w = len(cl.cps()), len(cl.workers())
    cp_avail = cl.cp_initialized and bool(ready_cps)
    all_ok = cp_avail and len(ready_cps) == cl.cp_replicas and len(ready_ws) == cl.md_replicas and cl.remote_ok
    labels = {"cluster.x-k8s.io/cluster-name": cl.name} if False else None
    gen = 2
    spec_common_net = {"pods": {"cidrBlocks": ["10.42.0.0/16"]}, "services": {"cidrBlocks": ["10.43.0.0/16"]}}
    endpoint = {}
    if cl.endpoint_host:
        endpoint = {"host": cl.endpoint_host, "port": cl.endpoint_port}
    phase = "Provisioned" if cl.infra_provisioned else "Provisioning"

    # ---- v1beta2 conditions (api/core/v1beta2/cluster_types.go condition consts)
    conds = []
    if all_ok:
        conds.append(c2("Available", "True", "Available", ago=150, gen=gen))
    else:
        missing = []
        if not cl.infra_provisioned:
            missing.append("* InfrastructureReady: AWSCluster status.initialization.provisioned is false")
        if not cp_avail:
            missing.append("* ControlPlaneAvailable: Control plane not yet available" if cl.cp_initialized or cl.infra_provisioned else "* ControlPlaneAvailable: Waiting for RKE2ControlPlane to report status")
        if not cl.remote_ok:
            missing.append("* RemoteConnectionProbe: Remote connection probe failed")
        if cp_avail and len(ready_ws) < cl.md_replicas:
            missing.append("* WorkersAvailable: MachineDeployment %s-md-0: %d available replicas, at least %d required" % (cl.name, len(ready_ws), cl.md_replicas))
        conds.append(c2("Available", "False", "NotAvailable", "\n".join(missing) or None, ago=60, gen=gen))
    conds.append(c2("ControlPlaneAvailable", "True" if cp_avail else "False", "Available" if cp_avail else "NotAvailable",
                    None if cp_avail else ("Waiting for at least one machine to be ready for control plane " + cl.rcp_name if cl.cp_initialized else "Control plane not yet initialized"), ago=180, gen=gen))
    if cl.cp_initialized:
        conds.append(c2("ControlPlaneInitialized", "True", "Initialized", ago=200, gen=gen))
    else:
        conds.append(c2("ControlPlaneInitialized", "False", "NotInitialized", "Control plane not yet initialized", ago=cl.created - 5, gen=gen))
    if n_cp:
        bad = [m for m in cl.cps() if not m.ready]
        conds.append(c2("ControlPlaneMachinesReady", "False" if bad else "True", "NotReady" if bad else "Ready",
                        ("* Machine %s: NotReady" % bad[0].name) if bad else None, ago=120, gen=gen))
    else:
        conds.append(c2("ControlPlaneMachinesReady", "True", "NoReplicas", ago=cl.created - 5, gen=gen))
    conds.append(c2("Deleting", "False", "NotDeleting", ago=cl.created, gen=gen))
    conds.append(c2("InfrastructureReady", "True" if cl.infra_provisioned else "False", "Ready" if cl.infra_provisioned else "NotReady",
                    None if cl.infra_provisioned else "* LoadBalancerReady: 0 of 1 completed", ago=230 if cl.infra_provisioned else 30, gen=gen))
    conds.append(c2("Paused", "False", "NotPaused", ago=cl.created, gen=gen))
    if cl.remote_ok and cl.infra_provisioned and cl.endpoint_host and (n_cp and any(m.has_node for m in cl.cps())):
        conds.append(c2("RemoteConnectionProbe", "True", "ProbeSucceeded", ago=200, gen=gen))
    elif not cl.remote_ok:
        conds.append(c2("RemoteConnectionProbe", "False", "ProbeFailed", "Remote connection probe failed, probe last succeeded at %s" % ts(95), ago=90, gen=gen))
    else:
        conds.append(c2("RemoteConnectionProbe", "False", "ProbeFailed", "Remote connection probe failed, probe last succeeded at 0001-01-01T00:00:00Z", ago=cl.created - 5, gen=gen))
    if n_w:
        badw = [m for m in cl.workers() if not m.ready]
        conds.append(c2("WorkerMachinesReady", "False" if badw else "True", "NotReady" if badw else "Ready",
                        ("* Machine %s: NotReady" % badw[0].name) if badw else None, ago=100, gen=gen))
    else:
        conds.append(c2("WorkerMachinesReady", "True", "NoReplicas", ago=cl.created - 5, gen=gen))
    w_ok = len(ready_ws) >= cl.md_replicas
    conds.append(c2("WorkersAvailable", "True" if w_ok else "False", "Available" if w_ok else "NotAvailable",
                    None if w_ok else "* MachineDeployment %s-md-0: %d available replicas, at least %d required" % (cl.name, len(ready_ws), cl.md_replicas), ago=100, gen=gen))

    cpst = {"desiredReplicas": cl.cp_replicas, "replicas": n_cp, "readyReplicas": len(ready_cps),
            "availableReplicas": len(ready_cps), "upToDateReplicas": n_cp}
    wst = {"desiredReplicas": cl.md_replicas, "replicas": n_w, "readyReplicas": len(ready_ws),
           "availableReplicas": len(ready_ws), "upToDateReplicas": n_w}

    # ---- v1beta1 conditions (api/core/v1beta1/condition_consts.go)
    v1c = []
    if all_ok:
        v1c.append(c1("Ready", "True", ago=150))
    elif not cl.infra_provisioned:
        v1c.append(c1("Ready", "False", "WaitingForInfrastructure", "0 of 1 completed", "Info", ago=30))
    elif not cl.cp_initialized:
        v1c.append(c1("Ready", "False", "WaitingForControlPlane", None, "Info", ago=cl.created - 5))
    else:
        v1c.append(c1("Ready", "False", "ScalingUp" if len(cl.cps()) < cl.cp_replicas else "WaitingForControlPlaneAvailable",
                      "Scaling up control plane to %d replicas (actual %d)" % (cl.cp_replicas, len(cl.cps())) if len(cl.cps()) < cl.cp_replicas else None,
                      "Warning" if len(cl.cps()) < cl.cp_replicas else "Info", ago=60))
    if cl.cp_initialized:
        v1c.append(c1("ControlPlaneInitialized", "True", ago=200))
    else:
        v1c.append(c1("ControlPlaneInitialized", "False", "WaitingForControlPlaneProviderInitialized",
                      "Waiting for control plane provider to indicate the control plane has been initialized", "Info", ago=cl.created - 5))
    if cp_avail and len(ready_cps) == cl.cp_replicas:
        v1c.append(c1("ControlPlaneReady", "True", ago=150))
    else:
        v1c.append(c1("ControlPlaneReady", "False", "WaitingForControlPlane", None, "Info", ago=60))
    if cl.infra_provisioned:
        v1c.append(c1("InfrastructureReady", "True", ago=230))
    else:
        v1c.append(c1("InfrastructureReady", "False", "WaitingForInfrastructure", "0 of 1 completed", "Info", ago=30))

    cp_ref_v2 = {"apiGroup": G_CP, "kind": "RKE2ControlPlane", "name": cl.rcp_name}
    infra_ref_v2 = {"apiGroup": G_INFRA, "kind": "AWSCluster", "name": cl.name}
    md = meta(cl.name, cl.ns, created=cl.created, gen=gen, finalizers=["cluster.cluster.x-k8s.io"],
              labels={"cluster.x-k8s.io/cluster-name": cl.name, "environment": cl.ns})
    if cl.api == "v1beta2":
        status = {
            "conditions": conds,
            "initialization": {"infrastructureProvisioned": cl.infra_provisioned},
            "phase": phase,
            "observedGeneration": gen,
            "deprecated": {"v1beta1": {"conditions": v1c}},
        }
        if cl.cp_initialized:
            status["initialization"]["controlPlaneInitialized"] = True
        if cl.infra_provisioned:
            status["controlPlane"] = cpst
            status["workers"] = wst
        spec = {"clusterNetwork": spec_common_net, "controlPlaneRef": cp_ref_v2, "infrastructureRef": infra_ref_v2}
        if endpoint or not cl.infra_provisioned:
            if endpoint:
                spec["controlPlaneEndpoint"] = endpoint
        return {"apiVersion": G_CORE + "/v1beta2", "kind": "Cluster", "metadata": md, "spec": spec, "status": status}
    # v1beta1
    status = {
        "conditions": v1c,
        "controlPlaneReady": bool(cp_avail),
        "infrastructureReady": cl.infra_provisioned,
        "phase": phase,
        "observedGeneration": gen,
        "v1beta2": {"conditions": conds},
    }
    if cl.infra_provisioned:
        status["v1beta2"]["controlPlane"] = cpst
        status["v1beta2"]["workers"] = wst
    spec = {
        "clusterNetwork": spec_common_net,
        "controlPlaneEndpoint": endpoint if endpoint else {"host": "", "port": 0},
        "controlPlaneRef": {"apiVersion": G_CP + "/v1beta1", "kind": "RKE2ControlPlane", "name": cl.rcp_name, "namespace": cl.ns},
        "infrastructureRef": {"apiVersion": INFRA_V, "kind": "AWSCluster", "name": cl.name, "namespace": cl.ns},
    }
    return {"apiVersion": G_CORE + "/v1beta1", "kind": "Cluster", "metadata": md, "spec": spec, "status": status}


def machine_obj(cl, m):
    gen = 3 if m.ready else 2
    is_cp = m.role == "cp"
    labels = {LBL_CLUSTER: cl.name}
    if is_cp:
        labels[LBL_CP] = ""
        labels[LBL_CP_NAME] = cl.rcp_name
        owners = [owner(G_CP + "/" + cl.api, "RKE2ControlPlane", cl.rcp_name, cl.ns)]
        ann = {
            "controlplane.cluster.x-k8s.io/rke2-server-configuration": json.dumps({"cni": cl.cni, "cloudProviderName": cl.cloud_provider_name}, separators=(",", ":")),
            "pre-terminate.delete.hook.machine.cluster.x-k8s.io/rke2-cleanup": "",
        }
    else:
        labels["cluster.x-k8s.io/deployment-name"] = cl.name + "-md-0"
        labels["cluster.x-k8s.io/set-name"] = m.ms
        labels["machine-template-hash"] = str(int(h(cl.name + "mth", 8), 16) % 4294967295)
        owners = [owner(G_CORE + "/" + cl.api, "MachineSet", m.ms, cl.ns)]
        ann = None
    if m.extra_annotations:
        ann = dict(ann or {}, **m.extra_annotations)
    md = meta(m.name, cl.ns, created=m.created, labels=labels, annotations=ann, owners=owners, gen=gen,
              finalizers=["machine.cluster.x-k8s.io"])
    if m.deleting:
        md["deletionTimestamp"] = ts(m.deleting)
        md["deletionGracePeriodSeconds"] = 0
    infra_kind = "AWSMachine"
    infra_name = m.name
    has_data = m.bootstrap != "none"
    node_t = m.node_ready

    # ---- v1beta2 machine conditions (api/core/v1beta2/machine_types.go + CAPRKE2 AgentHealthy/EtcdMemberHealthy)
    conds = []
    ready = m.ready
    if ready:
        conds.append(c2("Available", "True", "Available", ago=m.created - 20, gen=gen))
        conds.append(c2("Ready", "True", "Ready", ago=m.created - 20, gen=gen))
    else:
        reasons = []
        if not has_data:
            reasons.append("* BootstrapConfigReady: RKE2Config status.initialization.dataSecretCreated is false")
        if not m.infra_ready:
            reasons.append("* InfrastructureReady: AWSMachine status.initialization.provisioned is false")
        if m.deleting:
            reasons.append("* Deleting: Machine deletion in progress, stage: WaitingForPreTerminateHook")
        if has_data and m.infra_ready and not m.has_node:
            reasons.append("* NodeHealthy: %s" % node_message(cl, m))
        elif m.has_node and node_t != "True":
            reasons.append("* NodeHealthy: %s" % (m.node_msg or "Node not ready"))
        if is_cp and m.agent != "True":
            reasons.append("* AgentHealthy: %s" % ("Node %s is not ready" % m.node_name))
        if is_cp and m.etcd != "True":
            reasons.append("* EtcdMemberHealthy: %s" % ("Machine %s is deleting" % m.name if m.deleting else "Etcd member is unhealthy"))
        if m.mhc == "unhealthy":
            reasons.append("* HealthCheckSucceeded: Health check failed: marked for remediation via cluster.x-k8s.io/remediate-machine annotation")
        if m.extra_ready_msg:
            reasons.append(m.extra_ready_msg)
        conds.append(c2("Available", "False", "NotReady", ago=m.created - 1, gen=gen))
        conds.append(c2("Ready", "False", "NotReady", "\n".join(reasons) or None, ago=30, gen=gen))
    conds.append(c2("UpToDate", "True", "UpToDate", ago=m.created, gen=gen))
    if has_data:
        conds.append(c2("BootstrapConfigReady", "True", "Ready", ago=m.created - 2, gen=gen))
    else:
        conds.append(c2("BootstrapConfigReady", "False", "NotReady", "RKE2Config status.initialization.dataSecretCreated is false", ago=m.created, gen=gen))
    conds.append(c2("Deleting", "True" if m.deleting else "False", "WaitingForPreTerminateHook" if m.deleting else "NotDeleting",
                    "Waiting for pre-terminate hooks to succeed (hooks: rke2-cleanup)" if m.deleting else None, ago=m.deleting or m.created, gen=gen))
    if m.infra_ready:
        conds.append(c2("InfrastructureReady", "True", "Ready", ago=m.created - 3, gen=gen))
    else:
        conds.append(c2("InfrastructureReady", "False", "NotReady", "AWSMachine status.initialization.provisioned is false", ago=m.created, gen=gen))
    ns_, nr_, nm_ = node_conditions(cl, m)
    conds.append(c2("NodeHealthy", ns_, nr_, nm_, ago=m.created - 8 if ns_ == "True" else 25, gen=gen))
    conds.append(c2("NodeReady", ns_, "NodeReady" if ns_ == "True" else nr_, nm_ if ns_ != "True" else None, ago=m.created - 8 if ns_ == "True" else 25, gen=gen))
    conds.append(c2("Paused", "False", "NotPaused", ago=m.created, gen=gen))
    conds.append(c2("Updating", "False", "NotUpdating", ago=m.created, gen=gen))
    if is_cp and cl.cp_initialized:
        conds += cp_machine_conditions_v2(cl, m, gen)
    if m.mhc:
        conds += mhc_conditions_v2(cl, m, gen)

    spec = {"clusterName": cl.name, "version": cl.rke2_version}
    if m.has_provider_id:
        spec["providerID"] = m.provider_id
    spec["failureDomain"] = m.zone

    status_common = {"observedGeneration": gen, "phase": machine_phase(m)}
    if m.infra_ready and m.has_provider_id:
        status_common["addresses"] = m.addresses
    if cl.api == "v1beta2":
        spec["bootstrap"] = {"configRef": {"apiGroup": G_BS, "kind": "RKE2Config", "name": m.config_name}}
        if has_data:
            spec["bootstrap"]["dataSecretName"] = m.config_name
        spec["infrastructureRef"] = {"apiGroup": G_INFRA, "kind": infra_kind, "name": infra_name}
        if is_cp:
            spec["deletion"] = {"nodeDeletionTimeoutSeconds": 10}
        else:
            spec["deletion"] = {"nodeDeletionTimeoutSeconds": 10}
        st = dict(status_common)
        st["conditions"] = conds
        st["initialization"] = {"infrastructureProvisioned": m.infra_ready}
        if has_data:
            st["initialization"]["bootstrapDataSecretCreated"] = True
        if m.has_node:
            st["nodeRef"] = {"name": m.node_name}
            st["nodeInfo"] = node_info(m)
        st["lastUpdated"] = ts(m.created - 8 if m.has_node else m.created - 3)
        if m.deleting:
            st["deletion"] = {"nodeDrainStartTime": ts(m.deleting - 1), "waitForNodeVolumeDetachStartTime": ts(m.deleting - 2)}
        st["deprecated"] = {"v1beta1": {"conditions": machine_conditions_v1(cl, m, with_rke2=False)}}
        return {"apiVersion": G_CORE + "/v1beta2", "kind": "Machine", "metadata": md, "spec": spec, "status": st}
    # v1beta1
    spec["bootstrap"] = {"configRef": {"apiVersion": G_BS + "/v1beta1", "kind": "RKE2Config", "name": m.config_name, "namespace": cl.ns, "uid": uid(cl.ns + "/" + m.config_name)}}
    if has_data:
        spec["bootstrap"]["dataSecretName"] = m.config_name
    spec["infrastructureRef"] = {"apiVersion": INFRA_V, "kind": infra_kind, "name": infra_name, "namespace": cl.ns, "uid": uid(cl.ns + "/awsm/" + infra_name)}
    spec["nodeDeletionTimeout"] = "10s"
    st = dict(status_common)
    st["bootstrapReady"] = has_data
    st["infrastructureReady"] = m.infra_ready
    st["conditions"] = machine_conditions_v1(cl, m, with_rke2=True)
    st["v1beta2"] = {"conditions": conds}
    if m.has_node:
        st["nodeRef"] = {"apiVersion": "v1", "kind": "Node", "name": m.node_name, "uid": uid("node/" + cl.name + m.node_name)}
        st["nodeInfo"] = node_info(m)
    st["lastUpdated"] = ts(m.created - 8 if m.has_node else m.created - 3)
    if m.deleting:
        st["deletion"] = {"nodeDrainStartTime": ts(m.deleting - 1), "waitForNodeVolumeDetachStartTime": ts(m.deleting - 2)}
    return {"apiVersion": G_CORE + "/v1beta1", "kind": "Machine", "metadata": md, "spec": spec, "status": st}


def node_info(m):
    return {
        "architecture": "amd64",
        "bootID": uid("boot" + m.name),
        "containerRuntimeVersion": "containerd://1.7.23-k3s2",
        "kernelVersion": "5.15.0-1071-aws",
        "kubeProxyVersion": "v1.31.4+rke2r1",
        "kubeletVersion": "v1.31.4+rke2r1",
        "machineID": h("mid" + m.name, 32),
        "operatingSystem": "linux",
        "osImage": "Ubuntu 22.04.5 LTS",
        "systemUUID": "ec2" + h("sys" + m.name, 5) + "-" + uid("sys" + m.name)[9:],
    }


def machine_phase(m):
    if m.deleting:
        return "Deleting"
    if m.has_node:
        return "Running"
    if m.has_provider_id and m.infra_ready:
        return "Provisioned"
    if m.bootstrap == "none":
        return "Pending"
    return "Provisioning"


def node_message(cl, m):
    if not cl.cp_initialized:
        return "Waiting for Cluster control plane to be initialized"
    if m.has_provider_id:
        return "Waiting for a Node with spec.providerID %s to exist" % m.provider_id
    return "Waiting for AWSMachine to report spec.providerID"


def node_conditions(cl, m):
    """setNodeHealthyAndReadyConditions (internal/controllers/machine/machine_controller_status.go)."""
    if not cl.infra_provisioned:
        return "Unknown", "InspectionFailed", "Waiting for Cluster status.initialization.infrastructureProvisioned to be true"
    if not cl.cp_initialized:
        return "Unknown", "InspectionFailed", "Waiting for Cluster control plane to be initialized"
    if not m.has_node:
        return "Unknown", "InspectionFailed", node_message(cl, m)
    if m.node_ready == "True":
        return "True", "NodeHealthy", None
    if m.node_ready == "Unknown":
        return "Unknown", "NodeHealthyUnknown", m.node_msg or "* Node.Ready: Kubelet stopped posting node status."
    return "False", "NodeNotHealthy", m.node_msg or "* Node.Ready: container runtime network not ready"


def cp_machine_conditions_v2(cl, m, gen):
    out = []
    if not m.has_node:
        out.append(c2("AgentHealthy", "Unknown", "InspectionFailed", "Waiting for node to be provisioned", ago=m.created - 2, gen=gen))
        out.append(c2("EtcdMemberHealthy", "Unknown", "InspectionFailed", "Waiting for node to be provisioned", ago=m.created - 2, gen=gen))
        return out
    if m.deleting:
        out.append(c2("AgentHealthy", "False", "Deleting", "Machine is deleting", ago=m.deleting, gen=gen))
    elif m.agent == "True":
        out.append(c2("AgentHealthy", "True", "Healthy", ago=m.created - 10, gen=gen))
    elif m.agent == "Unknown":
        out.append(c2("AgentHealthy", "Unknown", "InspectionFailed", "Node %s is unreachable" % m.node_name, ago=20, gen=gen))
    else:
        out.append(c2("AgentHealthy", "False", "PodFailed", "Node %s is not ready" % m.node_name, ago=25, gen=gen))
    if m.deleting:
        # workload_cluster_conditions.go: deleting machines get EtcdMemberHealthy False with reason "Healthy"
        out.append(c2("EtcdMemberHealthy", "False", "Healthy", "Machine %s is deleting" % m.name, ago=m.deleting, gen=gen))
    elif m.etcd == "True":
        out.append(c2("EtcdMemberHealthy", "True", "Healthy", ago=m.created - 10, gen=gen))
    elif m.etcd == "Unknown":
        out.append(c2("EtcdMemberHealthy", "Unknown", "InspectionFailed", "Waiting for node to be provisioned", ago=20, gen=gen))
    else:
        out.append(c2("EtcdMemberHealthy", "False", "InspectionFailed",
                      "Etcd member status reports errors: etcdserver: no leader", ago=20, gen=gen))
    out.append(c2("NodeMetadataUpToDate", "True", "UpToDate", ago=m.created - 9, gen=gen))
    return out


def mhc_conditions_v2(cl, m, gen):
    if m.mhc == "healthy":
        return [c2("HealthCheckSucceeded", "True", "HealthCheckSucceeded", ago=m.created - 12, gen=gen)]
    return [
        c2("HealthCheckSucceeded", "False", "HasRemediateAnnotation",
           "Health check failed: marked for remediation via cluster.x-k8s.io/remediate-machine annotation", ago=40, gen=gen),
        c2("OwnerRemediated", "False", "CannotBeRemediated",
           "RKE2ControlPlane can't remediate if current replicas are less or equal to 1", ago=39, gen=gen),
    ]


def machine_conditions_v1(cl, m, with_rke2):
    """v1beta1 conditions. with_rke2: also the CAPRKE2 v1beta1-era AgentHealthy/EtcdMemberHealthy
    (set with conditions.MarkTrue/MarkFalse in v0.16.0 pkg/rke2/workload_cluster.go)."""
    out = []
    has_data = m.bootstrap != "none"
    if m.ready:
        out.append(c1("Ready", "True", ago=m.created - 20))
    elif m.deleting:
        out.append(c1("Ready", "False", "Deleting", None, "Info", ago=m.deleting))
    elif not has_data:
        out.append(c1("Ready", "False", "WaitingForDataSecret", None, "Info", ago=m.created))
    elif not m.has_node:
        out.append(c1("Ready", "False", "WaitingForNodeRef", None, "Info", ago=m.created - 3))
    elif not cl.cp_initialized:
        out.append(c1("Ready", "False", "NodeProvisioning", None, "Info", ago=m.created - 8))
    else:
        out.append(c1("Ready", "False", "NodeConditionsFailed", m.node_msg, "Warning", ago=25))
    out.append(c1("BootstrapReady", "True", ago=m.created - 2) if has_data else
               c1("BootstrapReady", "False", "WaitingForDataSecret", None, "Info", ago=m.created))
    out.append(c1("InfrastructureReady", "True", ago=m.created - 3) if m.infra_ready else
               c1("InfrastructureReady", "False", "WaitingForInfrastructure", None, "Info", ago=m.created))
    if not m.has_node:
        if m.has_provider_id and cl.cp_initialized:
            out.append(c1("NodeHealthy", "False", "NodeProvisioning", None, "Warning", ago=m.created - 3))
        else:
            out.append(c1("NodeHealthy", "False", "WaitingForNodeRef", None, "Info", ago=m.created - 3))
    elif not cl.cp_initialized:
        out.append(c1("NodeHealthy", "False", "NodeProvisioning", None, "Info", ago=m.created - 8))
    elif m.node_ready == "True":
        out.append(c1("NodeHealthy", "True", ago=m.created - 8))
    else:
        out.append(c1("NodeHealthy", "False", "NodeConditionsFailed", m.node_msg, "Warning", ago=25))
    if m.role == "cp" and with_rke2 and cl.cp_initialized:
        if not m.has_node:
            pass
        else:
            if m.deleting:
                out.append(c1("AgentHealthy", "False", "Deleting", None, "Info", ago=m.deleting))
                out.append(c1("EtcdMemberHealthy", "False", "Deleting", None, "Info", ago=m.deleting))
            else:
                out.append(c1("AgentHealthy", "True", ago=m.created - 10) if m.agent == "True" else
                           c1("AgentHealthy", "False", "PodFailed", "Node %s is not ready" % m.node_name, "Error", ago=25))
                out.append(c1("EtcdMemberHealthy", "True", ago=m.created - 10) if m.etcd == "True" else
                           c1("EtcdMemberHealthy", "False", "EtcdMemberUnhealthy",
                              "Etcd member status reports errors: etcdserver: no leader", "Error", ago=20))
            out.append(c1("NodeMetadataUpToDate", "True", ago=m.created - 9))
    if m.mhc == "healthy":
        out.append(c1("HealthCheckSucceeded", "True", ago=m.created - 12))
    elif m.mhc == "unhealthy":
        out.append(c1("HealthCheckSucceeded", "False", "HasRemediateMachineAnnotation",
                      "Marked for remediation via remediate-machine annotation", "Warning", ago=40))
        out.append(c1("OwnerRemediated", "False", "WaitingForRemediation",
                      "RKE2ControlPlane can't remediate if current replicas are less or equal to 1", "Warning", ago=39))
    # Ready first, then alphabetical (cluster-api v1beta1 conditions ordering)
    return [out[0]] + sorted(out[1:], key=lambda c: c["type"])


def rcp_obj(cl):
    gen = 2
    cps = cl.cps()
    ready = [m for m in cps if m.ready]
    ips = cl.compute_available_ips()
    labels = {LBL_CLUSTER: cl.name}
    owners = [owner(G_CORE + "/" + cl.api, "Cluster", cl.name, cl.ns)]
    md = meta(cl.rcp_name, cl.ns, created=cl.created - 1, labels=labels, owners=owners, gen=gen,
              annotations=cl.rcp_annotations, finalizers=["rke2.controlplane.cluster.x-k8s.io"])
    server_cfg = {"cloudProviderName": cl.cloud_provider_name, "cni": cl.cni,
                  "etcd": {"backupConfig": {"retention": "5", "scheduleCron": "0 */12 * * *"}}}
    if cl.tls_san:
        server_cfg["tlsSan"] = cl.tls_san
    spec = {
        "agentConfig": {"nodeAnnotations": {"cluster.x-k8s.io/managed-by": "caprke2"}} if False else {},
        "replicas": cl.cp_replicas,
        "rolloutStrategy": {"rollingUpdate": {"maxSurge": 1}, "type": "RollingUpdate"},
        "serverConfig": server_cfg,
        "version": cl.rke2_version,
    }
    if not spec["agentConfig"]:
        del spec["agentConfig"]
    if cl.reg_method:
        spec["registrationMethod"] = cl.reg_method
    if cl.reg_address:
        spec["registrationAddress"] = cl.reg_address
    if cl.mhc:
        spec["remediationStrategy"] = {"maxRetry": 3, "retryPeriod": "5m0s", "minHealthyPeriod": "1h0m0s"}

    # ---- v1beta2 conditions (controlplane/api/v1beta2/condition_consts.go)
    gen_ok = cl.cp_initialized
    conds = []
    if gen_ok and ready and ips:
        conds.append(c2("Available", "True", "Available", ago=200, gen=gen))
    elif gen_ok and not ready:
        conds.append(c2("Available", "False", "WaitingForRKE2Server",
                        "Waiting for at least one machine to be ready for control plane " + cl.rcp_name, ago=60, gen=gen))
    else:
        conds.append(c2("Available", "False", "NotAvailable", "Control plane not yet initialized" if not gen_ok else
                        "some Control Plane machines exist and are ready but they have no IP Address available", ago=60, gen=gen))
    if cps:
        conds.append(c2("CertificatesAvailable", "True", "Available", ago=cl.created - 2, gen=gen))
    if gen_ok:
        comp_ok = all(m.agent == "True" and not m.deleting for m in cps if m.has_node) and bool(ready)
        conds.append(c2("ControlPlaneComponentsHealthy", "True" if comp_ok else "False",
                        "Healthy" if comp_ok else "NotHealthy",
                        None if comp_ok else "\n".join("* Machine %s:\n  * AgentHealthy: Node %s is not ready" % (m.name, m.node_name) for m in cps if m.has_node and m.agent != "True") or "* No ready control plane machines", ago=120, gen=gen))
        etcd_ok = all(m.etcd == "True" and not m.deleting for m in cps if m.has_node)
        conds.append(c2("EtcdClusterHealthy", "True" if etcd_ok else "False", "Healthy" if etcd_ok else "NotHealthy",
                        None if etcd_ok else "\n".join("* Machine %s:\n  * EtcdMemberHealthy: %s" % (m.name, "Machine %s is deleting" % m.name if m.deleting else "Node does not exist") for m in cps if m.has_node and (m.etcd != "True" or m.deleting)), ago=110, gen=gen))
    else:
        conds.append(c2("ControlPlaneComponentsHealthy", "Unknown", "InspectionFailed", "Waiting for Cluster control plane to be initialized", ago=cl.created - 2, gen=gen))
        conds.append(c2("EtcdClusterHealthy", "Unknown", "InspectionFailed", "Waiting for Cluster control plane to be initialized", ago=cl.created - 2, gen=gen))
    conds.append(c2("Deleting", "False", "NotDeleting", ago=cl.created, gen=gen))
    conds.append(c2("Initialized", "True" if gen_ok else "False", "Initialized" if gen_ok else "NotInitialized", ago=200 if gen_ok else cl.created - 2, gen=gen))
    badm = [m for m in cps if not m.ready]
    if not cps:
        conds.append(c2("MachinesReady", "True", "NoReplicas", ago=cl.created - 2, gen=gen))
    else:
        conds.append(c2("MachinesReady", "False" if badm else "True", "NotReady" if badm else "Ready",
                        ("* Machine %s: NotReady" % badm[0].name) if badm else None, ago=90, gen=gen))
    conds.append(c2("MachinesUpToDate", "True", "UpToDate" if cps else "NoReplicas", ago=cl.created - 2, gen=gen))
    conds.append(c2("Paused", "False", "NotPaused", ago=cl.created, gen=gen))
    unhealthy = [m for m in cps if m.mhc == "unhealthy"]
    conds.append(c2("Remediating", "False", "NotRemediating",
                    ("Machine %s is not healthy (not to be remediated by RKE2ControlPlane)" % unhealthy[0].name) if unhealthy else None, ago=38 if unhealthy else cl.created, gen=gen))
    conds.append(c2("RollingOut", "False", "NotRollingOut", ago=cl.created, gen=gen))
    conds.append(c2("ScalingDown", "False", "NotScalingDown", ago=cl.created, gen=gen))
    if len(cps) < cl.cp_replicas:
        msg = "Scaling up from %d to %d replicas" % (len(cps), cl.cp_replicas)
        blocks = []
        if any(m.deleting for m in cps):
            blocks.append("* waiting for a control plane Machine to complete deletion")
        if gen_ok and any(m.etcd != "True" for m in cps if m.has_node):
            blocks.append("* waiting for etcd cluster to become healthy")
        if gen_ok and any(m.agent != "True" for m in cps if m.has_node):
            blocks.append("* waiting for control plane components to become healthy")
        if blocks:
            msg += " is blocked because:\n" + "\n".join(blocks)
        conds.append(c2("ScalingUp", "True", "ScalingUp", msg, ago=80, gen=gen))
    else:
        conds.append(c2("ScalingUp", "False", "NotScalingUp", ago=150, gen=gen))
    conds += cl.rcp_extra_conditions

    if cl.api == "v1beta2":
        spec["machineTemplate"] = {"spec": {"infrastructureRef": {"apiGroup": G_INFRA, "kind": "AWSMachineTemplate", "name": cl.name + "-control-plane"},
                                            "deletion": {"nodeDrainTimeoutSeconds": 300}}}
        st = {"conditions": conds, "observedGeneration": gen, "replicas": len(cps), "readyReplicas": len(ready),
              "availableReplicas": len(ready), "upToDateReplicas": len(cps)}
        if cps:
            st["version"] = cl.rke2_version
        if gen_ok:
            st["initialization"] = {"controlPlaneInitialized": True}
        if ips:
            st["availableServerIPs"] = ips
        if cl.last_remediation:
            st["lastRemediation"] = cl.last_remediation
        if not cps:
            st = {"conditions": conds, "observedGeneration": gen, "replicas": 0, "readyReplicas": 0, "availableReplicas": 0, "upToDateReplicas": 0}
        return {"apiVersion": G_CP + "/v1beta2", "kind": "RKE2ControlPlane", "metadata": md, "spec": spec, "status": st}
    # v1beta1 (controlplane/api/v1beta1/rke2controlplane_types.go RKE2ControlPlaneStatus)
    spec["machineTemplate"] = {"infrastructureRef": {"apiVersion": INFRA_V, "kind": "AWSMachineTemplate", "name": cl.name + "-control-plane", "namespace": cl.ns},
                               "nodeDrainTimeout": "5m0s"}
    spec["infrastructureRef"] = {}
    v1 = []
    all_ready = len(ready) == cl.cp_replicas and len(cps) == cl.cp_replicas
    if gen_ok and all_ready and ips:
        v1.append(c1("Ready", "True", ago=150))
    elif len(cps) < cl.cp_replicas and gen_ok:
        v1.append(c1("Ready", "False", "ScalingUp", "Scaling up control plane to %d replicas (actual %d)" % (cl.cp_replicas, len(cps)), "Warning", ago=80))
    else:
        v1.append(c1("Ready", "False", "WaitingForRKE2Server", None, "Info", ago=60))
    if gen_ok and ready and ips:
        v1.append(c1("Available", "True", ago=200))
    else:
        v1.append(c1("Available", "False", "WaitingForRKE2Server", None, "Info", ago=60))
    v1.append(c1("CertificatesAvailable", "True", ago=cl.created - 2))
    if gen_ok:
        comp_ok = all(m.agent == "True" for m in cps if m.has_node) and bool(ready)
        v1.append(c1("ControlPlaneComponentsHealthy", "True", ago=120) if comp_ok else
                  c1("ControlPlaneComponentsHealthy", "False", "ControlPlaneComponentsUnhealthy", "Following machines are reporting control plane errors: " + ", ".join(m.name for m in cps if m.agent != "True") if any(m.agent != "True" for m in cps) else None, "Error", ago=120))
        etcd_ok = all(m.etcd == "True" for m in cps if m.has_node)
        v1.append(c1("EtcdClusterHealthy", "True", ago=110) if etcd_ok else
                  c1("EtcdClusterHealthy", "False", "EtcdClusterUnhealthy", "Following machines are reporting etcd member errors: " + ", ".join(m.name for m in cps if m.etcd != "True"), "Error", ago=20))
    v1.append(c1("MachinesReady", "True", ago=90) if cps and not badm else
              c1("MachinesReady", "False", "NodeConditionsFailed" if cps else "WaitingForInfrastructure", None, "Warning" if cps else "Info", ago=90))
    v1.append(c1("MachinesSpecUpToDate", "True", ago=cl.created - 2))
    v1.append(c1("Resized", "True", ago=150) if len(cps) >= cl.cp_replicas else
              c1("Resized", "False", "ScalingUp", "Scaling up control plane to %d replicas (actual %d)" % (cl.cp_replicas, len(cps)), "Warning", ago=80))
    v1 = [v1[0]] + sorted(v1[1:], key=lambda c: c["type"])
    st = {
        "conditions": v1,
        "initialized": bool(gen_ok),
        "observedGeneration": gen,
        "ready": bool(gen_ok and ready and ips),
        "readyReplicas": len(ready),
        "replicas": len(cps),
        "unavailableReplicas": len(cps) - len(ready),
        "updatedReplicas": len(cps),
        "v1beta2": {"conditions": conds, "readyReplicas": len(ready), "availableReplicas": len(ready), "upToDateReplicas": len(cps)},
    }
    if cps:
        st["version"] = cl.rke2_version
    if ips:
        st["availableServerIPs"] = ips
    if cl.last_remediation:
        st["lastRemediation"] = cl.last_remediation
    return {"apiVersion": G_CP + "/v1beta1", "kind": "RKE2ControlPlane", "metadata": md, "spec": spec, "status": st}


def rke2config_obj(cl, m):
    is_cp = m.role == "cp"
    labels = {LBL_CLUSTER: cl.name}
    if is_cp:
        labels[LBL_CP] = ""
    else:
        labels["cluster.x-k8s.io/deployment-name"] = cl.name + "-md-0"
        labels["cluster.x-k8s.io/set-name"] = m.ms
    owners = [owner(G_CORE + "/" + cl.api, "Machine", m.name, cl.ns)]
    ann = None
    if not is_cp:
        ann = {"cluster.x-k8s.io/cloned-from-groupkind": "RKE2ConfigTemplate.bootstrap.cluster.x-k8s.io",
               "cluster.x-k8s.io/cloned-from-name": cl.name + "-md-0"}
    md = meta(m.config_name, cl.ns, created=m.created + 0, labels=labels, annotations=ann, owners=owners, gen=1)
    spec = {}
    if m.payload_kubelet_args:
        spec["agentConfig"] = {"kubelet": {"extraArgs": m.payload_kubelet_args}}
    has_data = m.bootstrap != "none"
    if cl.api == "v1beta2":
        conds = []
        if has_data:
            conds.append(c2("Ready", "True", "Ready", ago=m.created - 1))
            conds.append(c2("CertificatesAvailable", "True", "Available", ago=m.created - 1))
            conds.append(c2("DataSecretAvailable", "True", "Available", ago=m.created - 1))
        else:
            conds.append(c2("Ready", "Unknown", "ReadyUnknown",
                            "* DataSecretAvailable: Condition not yet reported\n* CertificatesAvailable: Condition not yet reported", ago=m.created))
        conds.append(c2("Paused", "False", "NotPaused", ago=m.created))
        st = {"conditions": conds, "observedGeneration": 1}
        if has_data:
            st["dataSecretName"] = m.config_name
            st["initialization"] = {"dataSecretCreated": True}
        return {"apiVersion": G_BS + "/v1beta2", "kind": "RKE2Config", "metadata": md, "spec": spec, "status": st}
    # v1beta1 (v1beta1-era condition types: Ready, "Available" (DataSecretAvailableCondition), CertificatesAvailable)
    if has_data:
        v1 = [c1("Ready", "True", ago=m.created - 1), c1("Available", "True", ago=m.created - 1),
              c1("CertificatesAvailable", "True", ago=m.created - 1)]
        v2 = [c2("Ready", "True", "Ready", ago=m.created - 1), c2("CertificatesAvailable", "True", "Available", ago=m.created - 1),
              c2("DataSecretAvailable", "True", "Available", ago=m.created - 1), c2("Paused", "False", "NotPaused", ago=m.created)]
    else:
        v1 = [c1("Ready", "False", "WaitingForControlPlaneAvailable" if is_cp or True else None, None, "Info", ago=m.created)]
        v2 = [c2("Ready", "Unknown", "ReadyUnknown", "* DataSecretAvailable: Condition not yet reported\n* CertificatesAvailable: Condition not yet reported", ago=m.created),
              c2("Paused", "False", "NotPaused", ago=m.created)]
    v1 = [v1[0]] + sorted(v1[1:], key=lambda c: c["type"])
    st = {"conditions": v1, "observedGeneration": 1, "ready": has_data, "v1beta2": {"conditions": v2}}
    if has_data:
        st["dataSecretName"] = m.config_name
    return {"apiVersion": G_BS + "/v1beta1", "kind": "RKE2Config", "metadata": md, "spec": spec, "status": st}


def bootstrap_secret(cl, m):
    md = meta(m.config_name, cl.ns, seed_extra="/secret", created=m.created - 1,
              labels={LBL_CLUSTER: cl.name},
              owners=[owner(G_BS + "/" + cl.api, "RKE2Config", m.config_name, cl.ns, controller=True, block=False)])
    return {"apiVersion": "v1", "kind": "Secret", "metadata": md, "type": "cluster.x-k8s.io/secret",
            "data": {"format": b64("cloud-config"), "value": b64(cloud_config(m, cl))}}


def token_secret(cl):
    if cl.token_secret == "missing":
        return None
    val = cl.token if cl.token_secret == "present" else cl.other_token
    created = cl.created - 3 if cl.token_secret == "present" else 45
    md = meta(cl.name + "-token", cl.ns, seed_extra="/tok" + cl.token_secret, created=created,
              labels={LBL_CLUSTER: cl.name},
              owners=[owner(G_CORE + "/" + cl.api, "Cluster", cl.name, cl.ns, controller=True, block=False)])
    return {"apiVersion": "v1", "kind": "Secret", "metadata": md, "type": "cluster.x-k8s.io/secret", "data": {"value": b64(val)}}


FAKE_CERT = ("-----BEGIN CERTIFICATE-----\nMIIBdzCCAR2gAwIBAgIBADAKBggqhkjOPQQDAjAjMSEwHwYDVQQDDBhya2UyLXNl\n"
             "cnZlci1jYUBURVNURklYVFVSRTAeFw0yNjA1MTIwNjAwMDBaFw0zNjA1MTAwNjAw\nMDBaMCMxITAfBgNVBAMMGHJrZTItc2VydmVyLWNhQFRFU1RGSVhUVVJF\n-----END CERTIFICATE-----\n")
FAKE_KEY = "-----BEGIN EC PRIVATE KEY-----\nTEST-FIXTURE-NOT-A-REAL-KEY\n-----END EC PRIVATE KEY-----\n"


def ca_secret(cl, cp0):
    md = meta(cl.name + "-ca", cl.ns, seed_extra="/ca", created=cl.created - 3, labels={LBL_CLUSTER: cl.name},
              owners=[owner(G_BS + "/" + cl.api, "RKE2Config", cp0.config_name, cl.ns, controller=True, block=True)])
    return {"apiVersion": "v1", "kind": "Secret", "metadata": md, "type": "cluster.x-k8s.io/secret",
            "data": {"tls.crt": b64(FAKE_CERT), "tls.key": b64(FAKE_KEY)}}


def kubeconfig_secret(cl):
    kc = ("apiVersion: v1\nclusters:\n- cluster:\n    certificate-authority-data: %s\n    server: https://%s:%d\n  name: %s\n"
          "contexts:\n- context:\n    cluster: %s\n    user: %s-admin\n  name: %s-admin@%s\ncurrent-context: %s-admin@%s\nkind: Config\n"
          "preferences: {}\nusers:\n- name: %s-admin\n  user:\n    client-certificate-data: %s\n    client-key-data: %s\n") % (
        b64(FAKE_CERT), cl.endpoint_host, cl.endpoint_port, cl.name, cl.name, cl.name, cl.name, cl.name, cl.name, cl.name,
        cl.name, b64(FAKE_CERT), b64(FAKE_KEY))
    md = meta(cl.name + "-kubeconfig", cl.ns, seed_extra="/kc", created=cl.created - 4, labels={LBL_CLUSTER: cl.name},
              owners=[owner(G_CP + "/" + cl.api, "RKE2ControlPlane", cl.rcp_name, cl.ns, controller=True, block=True)])
    # pkg/kubeconfig GenerateSecretWithOwner sets no Type -> Opaque
    return {"apiVersion": "v1", "kind": "Secret", "metadata": md, "type": "Opaque", "data": {"value": b64(kc)}}


def mhc_obj(cl):
    api = cl.api
    md = meta(cl.name + "-control-plane-mhc", cl.ns, created=cl.created - 2, labels={LBL_CLUSTER: cl.name},
              owners=[owner(G_CORE + "/" + api, "Cluster", cl.name, cl.ns, controller=False, block=False)], gen=1)
    unhealthy = [m for m in cl.cps() if m.mhc == "unhealthy"]
    if api == "v1beta2":
        spec = {"clusterName": cl.name, "selector": {"matchLabels": {LBL_CP: ""}},
                "checks": {"nodeStartupTimeoutSeconds": 600,
                           "unhealthyNodeConditions": [{"type": "Ready", "status": "Unknown", "timeoutSeconds": 300},
                                                       {"type": "Ready", "status": "False", "timeoutSeconds": 300}]},
                "remediation": {"triggerIf": {"unhealthyLessThanOrEqualTo": "100%"}}}
        st = {"expectedMachines": len(cl.cps()), "currentHealthy": len(cl.cps()) - len(unhealthy),
              "remediationsAllowed": 1, "observedGeneration": 1, "targets": [m.name for m in cl.cps()],
              "conditions": [c2("RemediationAllowed", "True", "RemediationAllowed", ago=200), c2("Paused", "False", "NotPaused", ago=cl.created)]}
        return {"apiVersion": G_CORE + "/v1beta2", "kind": "MachineHealthCheck", "metadata": md, "spec": spec, "status": st}
    spec = {"clusterName": cl.name, "selector": {"matchLabels": {LBL_CP: ""}}, "nodeStartupTimeout": "10m0s",
            "maxUnhealthy": "100%",
            "unhealthyConditions": [{"type": "Ready", "status": "Unknown", "timeout": "5m0s"}, {"type": "Ready", "status": "False", "timeout": "5m0s"}]}
    st = {"expectedMachines": len(cl.cps()), "currentHealthy": len(cl.cps()) - len(unhealthy), "remediationsAllowed": 1,
          "observedGeneration": 1, "targets": [m.name for m in cl.cps()], "conditions": [c1("RemediationAllowed", "True", ago=200)]}
    return {"apiVersion": G_CORE + "/v1beta1", "kind": "MachineHealthCheck", "metadata": md, "spec": spec, "status": st}


def providers(core_version=CAPI_VERSION):
    out = []
    for ns, name, ptype, pname, ver in [
        ("capi-system", "cluster-api", "CoreProvider", "cluster-api", core_version),
        ("rke2-bootstrap-system", "bootstrap-rke2", "BootstrapProvider", "rke2", CAPRKE2_VERSION),
        ("rke2-control-plane-system", "control-plane-rke2", "ControlPlaneProvider", "rke2", CAPRKE2_VERSION),
        ("capa-system", "infrastructure-aws", "InfrastructureProvider", "aws", CAPA_VERSION),
    ]:
        md = meta(name, ns, seed_extra="/provider", created=60 * 24 * 30,
                  labels={"clusterctl.cluster.x-k8s.io": "", "clusterctl.cluster.x-k8s.io/core": "inventory",
                          "cluster.x-k8s.io/provider": name})
        out.append({"apiVersion": "clusterctl.cluster.x-k8s.io/v1alpha3", "kind": "Provider", "metadata": md,
                    "providerName": pname, "type": ptype, "version": ver})
    return out


def cluster_objects(cl):
    """All objects of one cluster, grouped by kind (the order `kubectl get a,b,c` prints them)."""
    by_kind = {"Cluster": [cluster_obj(cl)], "RKE2ControlPlane": [rcp_obj(cl)], "Machine": [], "RKE2Config": [], "Secret": [],
               "MachineHealthCheck": []}
    for m in cl.machines:
        by_kind["Machine"].append(machine_obj(cl, m))
        by_kind["RKE2Config"].append(rke2config_obj(cl, m))
    if cl.cps() and cl.infra_provisioned and cl.endpoint_host:
        init = [m for m in cl.cps() if m.bootstrap == "init"]
        by_kind["Secret"].append(ca_secret(cl, init[0] if init else cl.cps()[0]))
        by_kind["Secret"].append(kubeconfig_secret(cl))
        t = token_secret(cl)
        if t:
            by_kind["Secret"].append(t)
    for m in cl.machines:
        if m.bootstrap != "none":
            by_kind["Secret"].append(bootstrap_secret(cl, m))
    if cl.mhc:
        by_kind["MachineHealthCheck"].append(mhc_obj(cl))
    return by_kind


KIND_ORDER = ["Cluster", "Machine", "RKE2ControlPlane", "RKE2Config", "KubeadmControlPlane", "KubeadmConfig",
              "MachineHealthCheck", "Secret", "Provider"]


def merge(*groups):
    out = {}
    for g in groups:
        for k, v in g.items():
            out.setdefault(k, []).extend(v)
    return out


def flatten(by_kind):
    items = []
    for k in KIND_ORDER:
        items += sorted(by_kind.get(k, []), key=lambda o: (o["metadata"].get("namespace", ""), o["metadata"]["name"]))
    return items


# ---------------------------------------------------------------- kubeadm cluster (must be ignored)
def kubeadm_cluster(name, ns, net):
    created = 900
    kcp = name + "-control-plane"
    out = {"Cluster": [], "KubeadmControlPlane": [], "Machine": [], "KubeadmConfig": [], "Secret": []}
    cl = {"apiVersion": G_CORE + "/v1beta2", "kind": "Cluster",
          "metadata": meta(name, ns, created=created, gen=2, finalizers=["cluster.cluster.x-k8s.io"]),
          "spec": {"clusterNetwork": {"pods": {"cidrBlocks": ["192.168.0.0/16"]}},
                   "controlPlaneEndpoint": {"host": "%s-apiserver-%s.elb.us-east-1.amazonaws.com" % (name, h(name, 8)), "port": 6443},
                   "controlPlaneRef": {"apiGroup": G_CP, "kind": "KubeadmControlPlane", "name": kcp},
                   "infrastructureRef": {"apiGroup": G_INFRA, "kind": "AWSCluster", "name": name}},
          "status": {"conditions": [c2("Available", "True", "Available", ago=800, gen=2),
                                    c2("ControlPlaneAvailable", "True", "Available", ago=820, gen=2),
                                    c2("ControlPlaneInitialized", "True", "Initialized", ago=840, gen=2),
                                    c2("InfrastructureReady", "True", "Ready", ago=880, gen=2),
                                    c2("RemoteConnectionProbe", "True", "ProbeSucceeded", ago=840, gen=2)],
                     "initialization": {"infrastructureProvisioned": True, "controlPlaneInitialized": True},
                     "controlPlane": {"desiredReplicas": 1, "replicas": 1, "readyReplicas": 1, "availableReplicas": 1, "upToDateReplicas": 1},
                     "phase": "Provisioned", "observedGeneration": 2}}
    out["Cluster"].append(cl)
    out["KubeadmControlPlane"].append({
        "apiVersion": G_CP + "/v1beta2", "kind": "KubeadmControlPlane",
        "metadata": meta(kcp, ns, created=created - 1, gen=1, labels={LBL_CLUSTER: name},
                         owners=[owner(G_CORE + "/v1beta2", "Cluster", name, ns)], finalizers=["kubeadm.controlplane.cluster.x-k8s.io"]),
        "spec": {"replicas": 1, "version": "v1.33.4",
                 "machineTemplate": {"spec": {"infrastructureRef": {"apiGroup": G_INFRA, "kind": "AWSMachineTemplate", "name": kcp}}},
                 "kubeadmConfigSpec": {"initConfiguration": {"nodeRegistration": {"kubeletExtraArgs": [{"name": "cloud-provider", "value": "external"}], "name": "{{ ds.meta_data.local_hostname }}"}},
                                       "joinConfiguration": {"nodeRegistration": {"kubeletExtraArgs": [{"name": "cloud-provider", "value": "external"}], "name": "{{ ds.meta_data.local_hostname }}"}}}},
        "status": {"conditions": [c2("Available", "True", "Available", ago=820), c2("Initialized", "True", "Initialized", ago=840)],
                   "initialization": {"controlPlaneInitialized": True}, "replicas": 1, "readyReplicas": 1, "availableReplicas": 1,
                   "upToDateReplicas": 1, "version": "v1.33.4", "observedGeneration": 1,
                   "selector": "cluster.x-k8s.io/cluster-name=%s,cluster.x-k8s.io/control-plane" % name}})
    mname = kcp + "-" + suffix(name + "kcpm")
    cfg = kcp + "-" + suffix(name + "kcfg")
    ip = "10.%d.1.10" % net
    node = "ip-%s.ec2.internal" % ip.replace(".", "-")
    out["Machine"].append({
        "apiVersion": G_CORE + "/v1beta2", "kind": "Machine",
        "metadata": meta(mname, ns, created=created - 2, gen=2, labels={LBL_CLUSTER: name, LBL_CP: "", LBL_CP_NAME: kcp},
                         owners=[owner(G_CP + "/v1beta2", "KubeadmControlPlane", kcp, ns)], finalizers=["machine.cluster.x-k8s.io"]),
        "spec": {"clusterName": name, "version": "v1.33.4", "providerID": "aws:///us-east-1a/" + instance_id(mname),
                 "bootstrap": {"configRef": {"apiGroup": G_BS, "kind": "KubeadmConfig", "name": cfg}, "dataSecretName": cfg},
                 "infrastructureRef": {"apiGroup": G_INFRA, "kind": "AWSMachine", "name": mname}, "failureDomain": "us-east-1a"},
        "status": {"conditions": [c2("Available", "True", "Available", ago=830), c2("Ready", "True", "Ready", ago=830),
                                  c2("NodeHealthy", "True", "NodeHealthy", ago=835), c2("NodeReady", "True", "NodeReady", ago=835)],
                   "initialization": {"infrastructureProvisioned": True, "bootstrapDataSecretCreated": True},
                   "nodeRef": {"name": node}, "addresses": [{"type": "InternalIP", "address": ip}, {"type": "InternalDNS", "address": node}],
                   "phase": "Running", "observedGeneration": 2}})
    out["KubeadmConfig"].append({
        "apiVersion": G_BS + "/v1beta2", "kind": "KubeadmConfig",
        "metadata": meta(cfg, ns, created=created - 2, gen=1, labels={LBL_CLUSTER: name, LBL_CP: ""},
                         owners=[owner(G_CORE + "/v1beta2", "Machine", mname, ns)]),
        "spec": {"initConfiguration": {"nodeRegistration": {"name": "{{ ds.meta_data.local_hostname }}"}}},
        "status": {"conditions": [c2("Ready", "True", "Ready", ago=880), c2("DataSecretAvailable", "True", "Available", ago=880)],
                   "initialization": {"dataSecretCreated": True}, "dataSecretName": cfg, "observedGeneration": 1}})
    payload = ("## template: jinja\n#cloud-config\n\nwrite_files:\n-   path: /run/kubeadm/kubeadm.yaml\n    owner: root:root\n"
               "    permissions: '0640'\n    content: |\n      ---\n      apiVersion: kubeadm.k8s.io/v1beta4\n      kind: InitConfiguration\n"
               "      nodeRegistration:\n        name: '{{ ds.meta_data.local_hostname }}'\n\n"
               "runcmd:\n  - 'kubeadm init --config /run/kubeadm/kubeadm.yaml  && echo success > /run/cluster-api/bootstrap-success.complete'\n")
    out["Secret"].append({"apiVersion": "v1", "kind": "Secret", "type": "cluster.x-k8s.io/secret",
                          "metadata": meta(cfg, ns, seed_extra="/secret", created=created - 3, labels={LBL_CLUSTER: name},
                                           owners=[owner(G_BS + "/v1beta2", "KubeadmConfig", cfg, ns, controller=True, block=False)]),
                          "data": {"format": b64("cloud-config"), "value": b64(payload)}})
    out["Secret"].append({"apiVersion": "v1", "kind": "Secret", "type": "cluster.x-k8s.io/secret",
                          "metadata": meta(name + "-kubeconfig", ns, seed_extra="/kc", created=created - 4, labels={LBL_CLUSTER: name},
                                           owners=[owner(G_CP + "/v1beta2", "KubeadmControlPlane", kcp, ns)]),
                          "data": {"value": b64("apiVersion: v1\nkind: Config\nclusters: []\n")}})
    return out


# ---------------------------------------------------------------- scenarios
EXPECTED = {"chain": [
    "infrastructure-provisioned", "control-plane-endpoint", "init-machine", "init-node", "control-plane-initialized",
    "token-secret", "ready-control-plane", "registration-address", "available-server-ips", "join-target",
    "preflight", "remediation", "provider-versions"],
    "warning_only_links": ["provider-versions"],
    "dump_time": NOW.strftime("%Y-%m-%dT%H:%M:%SZ"),
    "files": {}}


def expect(fname, clusters, secrets, notes=None, ignored=None):
    entry = {"clusters": clusters, "exit": 1 if any(c["first_broken"] for c in clusters) else 0,
             "secrets": sorted(secrets)}
    for c in clusters:
        c["exit"] = 1 if c["first_broken"] else 0
    if ignored:
        entry["ignored_clusters"] = ignored
    if notes:
        entry["notes"] = notes
    EXPECTED["files"][fname] = entry


def ce(cl, first_broken, obj, warnings=None):
    return {"namespace": cl.ns, "cluster": cl.name, "first_broken": first_broken, "object": obj, "warnings": warnings or []}


def healthy(name, ns, api, net, **kw):
    cl = standard_cluster(name, ns, api, net, **kw)
    for m in cl.machines:
        m.created = m.created + 0
    return cl


# --- broken scenarios (each returns the cluster and the expectations entry) ------------------------------
def s_infra(name="golf-new", ns="golf", api="v1beta1", net=31):
    cl = C(name, ns, api, net, infra_provisioned=False, cp_initialized=False, created=25)
    cl.endpoint_host = None
    cl.md_replicas = 2
    return cl, ce(cl, "infrastructure-provisioned", "Cluster %s/%s" % (ns, name))


def s_endpoint(name="hotel-lb", ns="hotel", api="v1beta2", net=32):
    cl = C(name, ns, api, net, cp_initialized=False, created=70)
    cl.endpoint_host = None  # AWSCluster provisioned but no endpoint copied (e.g. externally managed LB, spec left empty)
    return cl, ce(cl, "control-plane-endpoint", "Cluster %s/%s" % (ns, name))


def s_init_machine(name="india-split", ns="india", api="v1beta1", net=33):
    cl = standard_cluster(name, ns, api, net, n_cp=2, n_w=0)
    a, b = cl.cps()
    a.bootstrap = "init"
    b.bootstrap = "init"
    b.payload_server = None
    b.has_node = False  # formed its own single-node etcd cluster; never registers here
    b.agent = "Unknown"
    b.etcd = "Unknown"
    cl.md_replicas = 0
    finalize_payloads(cl)
    b.payload_server = None
    return cl, ce(cl, "init-machine", "Machine %s/%s" % (ns, b.name))


def s_init_node(name="juliet-pid", ns="juliet", api="v1beta2", net=34, workers=1):
    cl = C(name, ns, api, net, cp_initialized=False, created=190)
    m = M(cl, "cp", 0, bootstrap="init", has_node=False, agent="Unknown", etcd="Unknown", created=185)
    m.payload_kubelet_args = ["provider-id=aws:///%s" % m.instance]
    cl.machines.append(m)
    for i in range(workers):
        cl.machines.append(M(cl, "worker", i, bootstrap="none", has_node=False, created=183))
    finalize_payloads(cl)
    return cl, ce(cl, "init-node", "Machine %s/%s" % (ns, m.name))


def s_cp_initialized(name="kilo-serving", ns="kilo", api="v1beta1", net=35):
    cl = C(name, ns, api, net, cp_initialized=False, created=150)
    m = M(cl, "cp", 0, bootstrap="init", has_node=True, created=145)
    cl.machines.append(m)
    cl.machines.append(M(cl, "worker", 0, bootstrap="none", has_node=False, created=143))
    finalize_payloads(cl)
    return cl, ce(cl, "control-plane-initialized", "Cluster %s/%s" % (ns, name))


def s_token(name="lima-notoken", ns="lima", api="v1beta2", net=36, mode="missing"):
    cl = C(name, ns, api, net, token_secret=mode, cp_replicas=3, md_replicas=2)
    m0 = M(cl, "cp", 0, bootstrap="init")
    cl.machines.append(m0)
    # second CP and the workers were created after the Secret vanished / was recreated: no (or no matching) data
    cl.machines.append(M(cl, "cp", 1, bootstrap="none", has_node=False, created=40))
    cl.machines.append(M(cl, "worker", 0, bootstrap="none", has_node=False, created=38))
    cl.machines.append(M(cl, "worker", 1, bootstrap="none", has_node=False, created=38))
    finalize_payloads(cl)
    if mode == "other":
        # The Secret was deleted and re-created (45m ago) with a new value. Worker 0 got its payload
        # before that (old = real cluster token); the second server and worker 1 got the new value,
        # which the running cluster (init node) does not know: none of them can join.
        w = cl.workers()[0]
        w.bootstrap = "join"
        w.payload_token = cl.token
        w.created = 60
        for j in (cl.cps()[1], cl.workers()[1]):
            j.bootstrap = "join"
            j.payload_token = cl.other_token
        for j in (w, cl.cps()[1], cl.workers()[1]):
            j.payload_server = m0.ip
            j.infra_ready = True
            j.has_provider_id = True
            j.has_node = False
    return cl, ce(cl, "token-secret", "Secret %s/%s-token" % (ns, name))


def s_ready_cp(name="mike-cni", ns="mike", api="v1beta1", net=37):
    cl = C(name, ns, api, net)
    m = M(cl, "cp", 0, bootstrap="init", node_ready="False", agent="False",
          node_msg="* Node.Ready: container runtime network not ready: NetworkReady=false reason:NetworkPluginNotReady message:Network plugin returns error: cni plugin not initialized")
    cl.machines.append(m)
    cl.machines.append(M(cl, "worker", 0, bootstrap="none", has_node=False, created=200))
    cl.machines.append(M(cl, "worker", 1, bootstrap="none", has_node=False, created=200))
    cl.available_ips = []
    finalize_payloads(cl)
    return cl, ce(cl, "ready-control-plane", "Machine %s/%s" % (ns, m.name))


def s_reg_address(name="november-extip", ns="november", api="v1beta2", net=38):
    cl = C(name, ns, api, net, reg_method="internal-only-ips")
    m = M(cl, "cp", 0, bootstrap="init")
    m.addresses = [{"type": "Hostname", "address": "%s-cp-0" % name}, {"type": "ExternalIP", "address": "203.0.113.%d" % (40 + net)}]
    cl.machines.append(m)
    cl.machines.append(M(cl, "cp", 1, bootstrap="none", has_node=False, created=150))
    cl.machines.append(M(cl, "worker", 0, bootstrap="none", has_node=False, created=148))
    cl.available_ips = []
    finalize_payloads(cl)
    # The object is the Ready Machine without the address the method reads.
    return cl, ce(cl, "registration-address", "Machine %s/%s" % (ns, m.name))


def s_avail_ips(name="oscar-noips", ns="oscar", api="v1beta1", net=39):
    cl = C(name, ns, api, net, reg_method="control-plane-endpoint", remote_ok=False, cp_replicas=1, md_replicas=2)
    m = M(cl, "cp", 0, bootstrap="init")
    cl.machines.append(m)
    w0 = M(cl, "worker", 0)
    cl.machines.append(w0)
    cl.machines.append(M(cl, "worker", 1, bootstrap="none", has_node=False, created=50))
    finalize_payloads(cl)
    w0.payload_server = cl.endpoint_host
    cl.available_ips = []
    return cl, ce(cl, "available-server-ips", "RKE2ControlPlane %s/%s" % (ns, cl.rcp_name))


def s_join_target(name="papa-stale", ns="papa", api="v1beta2", net=40):
    cl = standard_cluster(name, ns, api, net, n_cp=3, n_w=2)
    # control plane was rolled out: Machines 3..5 replaced 0..2; the second worker's payload was
    # generated before the rollout and points at the deleted first server.
    for i, m in enumerate(cl.cps()):
        m.ip = "10.%d.1.%d" % (net, 40 + i)
        m.node_name = "ip-%s.ec2.internal" % m.ip.replace(".", "-")
        m.addresses = [{"type": "InternalIP", "address": m.ip}, {"type": "InternalDNS", "address": m.node_name}]
        m.payload_server = None
        m.created = 120 - i * 10
    cl.cps()[0].bootstrap = "join"  # the original init machine is gone
    for w in cl.workers():
        w.payload_server = None
    finalize_payloads(cl)
    old_first = "10.%d.1.20" % net
    cl.cps()[0].payload_server = old_first          # joined through the old server while it still existed
    cl.cps()[1].payload_server = cl.cps()[0].ip
    cl.cps()[2].payload_server = cl.cps()[0].ip
    stale = cl.workers()[1]
    stale.payload_server = "10.%d.1.20" % net
    stale.has_node = False
    stale.created = 200
    return cl, ce(cl, "join-target", "Machine %s/%s" % (ns, stale.name))


def s_preflight(name="quebec-etcd", ns="quebec", api="v1beta1", net=41):
    cl = standard_cluster(name, ns, api, net, n_cp=2, n_w=2)
    cl.cp_replicas = 3
    bad = cl.cps()[1]
    bad.etcd = "False"
    return cl, ce(cl, "preflight", "Machine %s/%s" % (ns, bad.name))


def s_remediation(name="romeo-single", ns="romeo", api="v1beta2", net=42):
    cl = standard_cluster(name, ns, api, net, n_cp=1, n_w=2, cp_replicas=1, mhc=True)
    m = cl.cps()[0]
    # an operator asked MHC to replace the only server; node itself is fine
    m.mhc = "unhealthy"
    m.extra_annotations = {"cluster.x-k8s.io/remediate-machine": ""}
    for w in cl.workers():
        w.mhc = None
    # rke2controlplane_controller.go: no Ready CP Machine -> status.availableServerIPs = nil
    cl.available_ips = []
    e = ce(cl, "remediation", "Machine %s/%s" % (ns, m.name))
    e["also_failing"] = ["ready-control-plane", "available-server-ips"]
    return cl, e


# ---------------------------------------------------------------- main
def main():
    # healthy-v1beta2 ----------------------------------------------------------
    cl = healthy("alpha-prod", "team-alpha", "v1beta2", 11)
    write_yaml(os.path.join(OUT, "healthy-v1beta2.yaml"), flatten(merge(cluster_objects(cl), {"Provider": providers()})))
    expect("healthy-v1beta2.yaml", [ce(cl, None, None)], cl.tokens_used())

    # healthy-v1beta1 ----------------------------------------------------------
    cl = healthy("bravo-prod", "team-bravo", "v1beta1", 12)
    write_yaml(os.path.join(OUT, "healthy-v1beta1.yaml"), flatten(merge(cluster_objects(cl), {"Provider": providers()})))
    expect("healthy-v1beta1.yaml", [ce(cl, None, None)], cl.tokens_used())

    # healthy-two-clusters.json -------------------------------------------------
    a = standard_cluster("charlie-edge", "edge", "v1beta2", 13, reg_method="address", reg_address="10.13.0.100",
                         tls_san=["10.13.0.100"])
    for m in a.machines:
        if m.bootstrap == "join":
            m.payload_server = "10.13.0.100"
    b = healthy("delta-ci", "ci", "v1beta2", 14, cp_replicas=1, n_cp=1, n_w=3, md_replicas=3)
    k = kubeadm_cluster("echo-kubeadm", "legacy", 15)
    write_json(os.path.join(OUT, "healthy-two-clusters.json"),
               flatten(merge(cluster_objects(a), cluster_objects(b), k, {"Provider": providers()})))
    expect("healthy-two-clusters.json", [ce(a, None, None), ce(b, None, None)], a.tokens_used() | b.tokens_used(),
           ignored=[{"namespace": "legacy", "cluster": "echo-kubeadm", "reason": "controlPlaneRef is a KubeadmControlPlane (not RKE2)"}])

    # healthy-folder/ -----------------------------------------------------------
    cl = healthy("foxtrot-stage", "staging", "v1beta2", 16)
    d = os.path.join(OUT, "healthy-folder")
    os.makedirs(d, exist_ok=True)
    g = cluster_objects(cl)
    for fname, kind in [("clusters.yaml", "Cluster"), ("machines.yaml", "Machine"), ("rke2controlplanes.yaml", "RKE2ControlPlane"),
                        ("rke2configs.yaml", "RKE2Config"), ("secrets.yaml", "Secret")]:
        write_yaml(os.path.join(d, fname), flatten({kind: g[kind]}))
    expect("healthy-folder", [ce(cl, None, None)], cl.tokens_used(),
           notes="No clusterctl Provider objects in this bundle: provider-versions cannot be evaluated; the doctor may say so, but it is neither a break nor a provider-versions warning.")

    # broken-* -----------------------------------------------------------------
    scen = [
        ("infrastructure-provisioned", s_infra),
        ("control-plane-endpoint", s_endpoint),
        ("init-machine", s_init_machine),
        ("init-node", s_init_node),
        ("control-plane-initialized", s_cp_initialized),
        ("token-secret", s_token),
        ("ready-control-plane", s_ready_cp),
        ("registration-address", s_reg_address),
        ("available-server-ips", s_avail_ips),
        ("join-target", s_join_target),
        ("preflight", s_preflight),
        ("remediation", s_remediation),
    ]
    notes = {
        "infrastructure-provisioned": "Cluster v1beta1 status.infrastructureReady false; no Machines, no Secrets yet.",
        "control-plane-endpoint": "Infrastructure provisioned but spec.controlPlaneEndpoint omitted (v1beta2 omitzero); RCP has not created any Machine.",
        "init-machine": "Both control-plane payloads lack server:; the first init Machine runs the cluster, the second formed its own etcd and never got a node. Same token in both (second read the existing <cluster>-token).",
        "init-node": "Machine spec.providerID aws:///us-east-1a/<id> vs kubelet-arg provider-id=aws:///<id> in the init payload; no nodeRef after ~3h; cluster not initialized, worker has no bootstrap data yet.",
        "control-plane-initialized": "Init Machine has status.nodeRef, but the Cluster v1beta1 condition ControlPlaneInitialized is False (WaitingForControlPlaneProviderInitialized) and RCP status.initialized is false (RCP never saw the rke2-serving secret). Machine Ready is False only because NodeHealthy waits for initialization.",
        "token-secret": "<cluster>-token Secret is missing; the second server and the workers have no bootstrap data (joinControlplane/joinWorker fail to read the token).",
        "ready-control-plane": "Initialized, the only control-plane Machine has a node that is NotReady (CNI not initialized); RCP status.availableServerIPs is absent, workers have no bootstrap data.",
        "registration-address": "registrationMethod internal-only-ips; the Ready control-plane Machine reports only Hostname/ExternalIP addresses, so availableServerIPs is absent.",
        "available-server-ips": "registrationMethod control-plane-endpoint; a Ready control-plane Machine exists but status.availableServerIPs is absent (RCP status update fails at the workload-cluster connection: Cluster RemoteConnectionProbe False); one worker joined earlier via the endpoint, the other waits for bootstrap data.",
        "join-target": "The control plane was rolled out (servers now 10.40.1.40-42); the second worker's payload still says server: https://10.40.1.20:9345 and it has no nodeRef. The first current server also joined via 10.40.1.20, but it has a node, so that payload must NOT be reported.",
        "preflight": "RCP wants 3 replicas, has 2; Machine with EtcdMemberHealthy False (v1beta1 severity Error) blocks scale-up (ScalingUp message lists the preflight reason). Machine Ready stays True (CAPRKE2 sets no readinessGates).",
        "remediation": "Single-replica RCP; the MHC marked the only server (remediate-machine annotation) HealthCheckSucceeded False and RCP set OwnerRemediated False/CannotBeRemediated. Because Machine Ready summarises HealthCheckSucceeded, ready-control-plane and available-server-ips also fail formally; the doctor should attribute them to remediation (see also_failing).",
    }
    for link, fn in scen:
        cl, exp = fn()
        fname = "broken-%s.yaml" % link
        write_yaml(os.path.join(OUT, fname), flatten(merge(cluster_objects(cl), {"Provider": providers()})))
        expect(fname, [exp], cl.tokens_used(), notes=notes[link])

    # provider-versions (warning only) --------------------------------------------
    cl = healthy("sierra-newcore", "sierra", "v1beta2", 43)
    write_yaml(os.path.join(OUT, "broken-provider-versions.yaml"),
               flatten(merge(cluster_objects(cl), {"Provider": providers(core_version="v1.14.0")})))
    e = ce(cl, None, "Provider capi-system/cluster-api", ["provider-versions"])
    expect("broken-provider-versions.yaml", [e], cl.tokens_used(),
           notes="Core cluster-api v1.14.0 is newer than the v1.13.x CAPRKE2 v0.25.0 is built and tested against (go.mod: sigs.k8s.io/cluster-api v1.13.2). Warning only: first_broken is null and exit is 0.")

    # multi.yaml ----------------------------------------------------------------------
    t = healthy("tango-ok", "fleet-a", "v1beta2", 51)
    u, ue = s_init_node("uniform-pid", "fleet-b", "v1beta2", 52, workers=2)
    v, ve = s_join_target("victor-stale", "fleet-c", "v1beta2", 53)
    w, we = s_token("whiskey-notoken", "fleet-d", "v1beta2", 54, mode="other")
    write_yaml(os.path.join(OUT, "multi.yaml"),
               flatten(merge(cluster_objects(t), cluster_objects(u), cluster_objects(v), cluster_objects(w), {"Provider": providers()})))
    expect("multi.yaml", [ce(t, None, None), ue, ve, we],
           t.tokens_used() | u.tokens_used() | v.tokens_used() | w.tokens_used(),
           notes="whiskey-notoken: the <cluster>-token Secret exists but was recreated with a different value than the token inside the existing join payload (worker); the second control plane and the other worker have no bootstrap data yet.")

    # sanity: tokens never shared between clusters
    seen = {}
    for f, e in EXPECTED["files"].items():
        for tok in e["secrets"]:
            assert len(tok) == 32
            seen.setdefault(tok, set()).add(f)
    for tok, fs in seen.items():
        assert len(fs) == 1, (tok, fs)

    with open(os.path.join(OUT, "expected.json"), "w") as f:
        f.write(json.dumps(EXPECTED, indent=2, sort_keys=False) + "\n")


if __name__ == "__main__":
    main()
