#!/usr/bin/env python3
"""Makes a `kubectl get secrets -A -o yaml|json` style dump of N Secrets of a fleet of clusters.

The Secrets are rendered by the fixture generator (testdata/gen/generate.py), cluster by cluster,
as a management cluster holds them:

- every cluster has its own name, namespace, join token, tls-san and server address, so no two
  clusters share a payload;
- its Machines: one init control plane, two joining control planes (one RKE2Config template,
  so one payload between them), and two MachineDeployments of 2 to 8 replicas each (each
  MachineDeployment one payload: CAPRKE2 renders every replica from the same template);
- its `<cluster>-token` and `<cluster>-ca` Secrets, which are not bootstrap data;
- clusters cycle through cloud-config / Ignition, gzipUserData off / on and online / air-gapped
  installs, and now and then use the generator's special variants (registry auth, etcd S3 and
  encryption on the init node; the air-gapped checksum line, an empty `format` key, IPv6).

About 30% of the bootstrap Secrets carry a payload not seen before in the dump. `--unique`
gives every Machine a cluster of its own (every payload distinct): the worst case for anything
that reuses work between equal payloads.

    bench/make_dump.py N yaml|json OUT [--unique]
"""
import hashlib
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "testdata" / "gen"))
import generate as g  # noqa: E402  (the fixture generator, used as a library)

KINDS = [(fmt, gz, air) for fmt in ("cloud-config", "ignition") for gz in (False, True) for air in (False, True)]


def cluster_machines(c: int) -> list[tuple[str, g.Variant, int]]:
    """(machine group, variant, replicas) of cluster number c."""
    fmt, gz, air = KINDS[c % len(KINDS)]
    suffix = f"{fmt}{'-gzip' if gz else ''}-{'airgapped' if air else 'online'}"

    def variant(role: str, stem: str, **kw) -> g.Variant:
        return g.Variant(stem, role, fmt, gz, air, **kw)

    if fmt == "cloud-config" and c % 5 == 3:
        init = g.Variant("init-cloud-config-extras", "init", fmt, registry=True, etcd_s3=True, encryption=True,
                         ntp=True, cis=True, extra_files=True, additional_config=g.ADDITIONAL_CLOUD_CONFIG,
                         extra_post=True)
    elif fmt == "ignition" and c % 5 == 3:
        init = g.Variant("init-ignition-extras", "init", fmt, registry=True, etcd_s3=True, encryption=True,
                         ntp=True, extra_files=True)
    else:
        init = variant("init", f"init-{suffix}")
    join = variant("join", f"join-{suffix}")
    md0 = variant("worker", f"worker-{suffix}-md-0")
    md1 = variant("worker", f"worker-{suffix}-md-1")
    if fmt == "cloud-config" and c % 7 == 2:
        md1 = g.Variant("worker-checksum-md-1", "worker", fmt, airgapped=True, checksum=g.AIRGAP_CHECKSUM)
    if fmt == "cloud-config" and not gz and c % 11 == 5:
        md0 = g.Variant("worker-empty-format-md-0", "worker", fmt, declared_format="")
    if fmt == "cloud-config" and c % 13 == 6:
        join = g.Variant("join-ipv6", "join", fmt, gz, air, server=g.SERVER_IPV6)
    return [("control-plane", init, 1), ("control-plane", join, 2),
            ("md-0", md0, 2 + c % 7), ("md-1", md1, 2 + (c * 3) % 5)]


def cluster_objects(c: int, keys, unique: bool) -> list[dict]:
    """The Secrets of cluster number c, as kubectl prints them (sorted later)."""
    name = f"fleet-{c:05d}"
    g.CLUSTER = name
    g.TOKEN = hashlib.sha256(f"rke2-payload bench join token for {name}".encode()).hexdigest()[:32]
    host = f"{name}-apiserver.example.internal"
    g.TLS_SAN = [f"{name}.example.com", host]
    server = f"https://10.{c // 250 % 250}.{c % 250}.10:9345"
    objects = []
    seq = 0
    if unique:  # one Machine per cluster, cycling through the roles and kinds
        fmt, gz, air = KINDS[c % len(KINDS)]
        role = ("init", "join", "worker")[c // len(KINDS) % 3]
        machines = [("md-0" if role == "worker" else "control-plane",
                     g.Variant(f"{role}-unique", role, fmt, gz, air), 1)]
    else:
        machines = cluster_machines(c)
    init_name = None
    for group, v, replicas in machines:
        if v.server == g.SERVER_IPV4:
            v.server = server
        g.build(v, keys)
        for r in range(replicas):
            seq += 1
            v.name = f"{name}-{group}-" + g.stable_pick(f"{name}/{v.stem}/{r}", g.NAME_ALPHABET, 5)
            if group.startswith("md-"):
                v.name += "-" + g.stable_pick(f"{name}/{v.stem}/{r}/m", g.NAME_ALPHABET, 5)
            if v.role == "init":
                init_name = v.name
            obj = g.bootstrap_secret(v, seq)
            obj["metadata"]["namespace"] = name
            objects.append(obj)
    # A unique dump keeps about the fleet's share of non-bootstrap Secrets.
    others = [] if unique and c % 12 else [g.token_secret(seq + 1), g.ca_secret(keys, init_name or name, seq + 2)]
    for obj in others:
        obj["metadata"]["namespace"] = name
        objects.append(obj)
    return objects


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    unique = "--unique" in sys.argv[1:]
    n, fmt, out = int(args[0]), args[1], Path(args[2])
    out.parent.mkdir(parents=True, exist_ok=True)
    keys = g.load_keys()
    items: list[dict] = []
    c = 0
    while len(items) < n:
        items += cluster_objects(c, keys, unique)
        c += 1
    items = items[:n]
    items.sort(key=lambda o: (o["metadata"]["namespace"], o["metadata"]["name"]))
    doc = {"apiVersion": "v1", "items": items, "kind": "List", "metadata": {"resourceVersion": ""}}
    if fmt == "json":
        out.write_text(g.to_kubectl_json(doc))
    else:
        out.write_text(g.to_yaml(doc))
    values = [o["data"]["value"] for o in items if "format" in o["data"]]
    print(f"{out}: {len(items)} Secrets of {c} clusters, {len(values)} bootstrap, "
          f"{len(set(values))} distinct payloads", file=sys.stderr)


if __name__ == "__main__":
    main()
