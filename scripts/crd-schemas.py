#!/usr/bin/env python3
"""Extract the structural facts of the Cluster API and CAPRKE2 CRD schemas.

Writes crates/payload-preview/src/crds/<group>.json: for each served version of each
CRD below, its `openAPIV3Schema` with the prose removed (description, example, title,
externalDocs). Only the facts the validator reads stay: types, properties, required, enum,
pattern, format, bounds, items, additionalProperties, nullable, anyOf/allOf/oneOf/not, default,
the x-kubernetes-* markers, and the CEL rules (x-kubernetes-validations: each rule with the
message the API server answers when it fails, its fieldPath and reason; counted per schema). The root `status` is replaced by a schema that accepts anything: both
sources serve it as a subresource, so the API server ignores it on create and update.

Regenerate (after `git clone` of both repositories, bare or not):

    git clone https://github.com/kubernetes-sigs/cluster-api
    git clone https://github.com/rancher/cluster-api-provider-rke2
    python3 scripts/crd-schemas.py \\
        --capi cluster-api --capi-tag v1.14.0 \\
        --caprke2 cluster-api-provider-rke2 --caprke2-tag v0.25.0

Files read (at the tags):
  Cluster API:  core/config/crd/bases/cluster.x-k8s.io_{clusters,clusterclasses,
                machinedeployments,machinepools,machines}.yaml   (v1beta1 and v1beta2)
  CAPRKE2:      controlplane/config/crd/bases/controlplane.cluster.x-k8s.io_rke2controlplanes.yaml
                controlplane/config/crd/bases/controlplane.cluster.x-k8s.io_rke2controlplanetemplates.yaml
                bootstrap/config/crd/bases/bootstrap.cluster.x-k8s.io_rke2configs.yaml
                bootstrap/config/crd/bases/bootstrap.cluster.x-k8s.io_rke2configtemplates.yaml

Needs python3 and PyYAML. Output is deterministic (sorted keys are not used: the schema's own
order is kept, so that the Rust side lists sibling fields in the CRD's order).
"""

import argparse
import gzip
import json
import os
import subprocess
import sys

import yaml

CAPI_FILES = [
    "core/config/crd/bases/cluster.x-k8s.io_%s.yaml" % name
    for name in ("clusters", "clusterclasses", "machinedeployments", "machinepools", "machines")
]
CAPRKE2_FILES = [
    "controlplane/config/crd/bases/controlplane.cluster.x-k8s.io_rke2controlplanes.yaml",
    "controlplane/config/crd/bases/controlplane.cluster.x-k8s.io_rke2controlplanetemplates.yaml",
    "bootstrap/config/crd/bases/bootstrap.cluster.x-k8s.io_rke2configs.yaml",
    "bootstrap/config/crd/bases/bootstrap.cluster.x-k8s.io_rke2configtemplates.yaml",
]
WANTED_VERSIONS = ("v1beta1", "v1beta2")

# Keys whose value is a schema, a list of schemas, or a map of schemas.
SCHEMA_KEYS = {"items", "not"}
SCHEMA_LIST_KEYS = {"anyOf", "allOf", "oneOf"}
SCHEMA_MAP_KEYS = {"properties"}
# Facts kept as they are.
PLAIN_KEYS = {
    "type", "required", "enum", "pattern", "format", "minimum", "maximum",
    "exclusiveMinimum", "exclusiveMaximum", "minLength", "maxLength", "minItems", "maxItems",
    "minProperties", "maxProperties", "uniqueItems", "nullable", "default",
    "x-kubernetes-preserve-unknown-fields", "x-kubernetes-int-or-string",
    "x-kubernetes-embedded-resource", "x-kubernetes-list-type", "x-kubernetes-list-map-keys",
    "x-kubernetes-map-type",
}
DROPPED_KEYS = {"description", "example", "title", "externalDocs"}
# Kept of each CEL rule.
RULE_KEYS = ("rule", "message", "messageExpression", "fieldPath", "reason", "optionalOldSelf")


def git(repo, *args):
    """Run git against a clone or a bare git directory."""
    return subprocess.run(["git", "-C", repo, *args], check=True, capture_output=True).stdout


def strip(schema, counter, where):
    """The schema without prose; CEL rules kept and counted into counter."""
    if not isinstance(schema, dict):
        raise SystemExit("%s: a schema that is not a mapping" % where)
    out = {}
    for key, value in schema.items():
        if key == "x-kubernetes-validations":
            counter[0] += len(value)
            rules = []
            for rule in value:
                unknown = set(rule) - set(RULE_KEYS)
                if unknown or "rule" not in rule:
                    raise SystemExit("%s: a CEL rule with keys %r (teach the script about them)" % (where, sorted(rule)))
                rules.append({k: rule[k] for k in RULE_KEYS if k in rule})
            out[key] = rules
        elif key in DROPPED_KEYS:
            continue
        elif key in SCHEMA_KEYS:
            out[key] = strip(value, counter, where + "." + key)
        elif key in SCHEMA_LIST_KEYS:
            out[key] = [strip(v, counter, where + "." + key) for v in value]
        elif key in SCHEMA_MAP_KEYS:
            out[key] = {k: strip(v, counter, where + "." + k) for k, v in value.items()}
        elif key == "additionalProperties":
            out[key] = value if isinstance(value, bool) else strip(value, counter, where + ".*")
        elif key in PLAIN_KEYS:
            out[key] = value
        else:
            raise SystemExit("%s: unknown schema key %r (teach the script about it)" % (where, key))
    return out


def extract(repo, tag, paths, label, groups):
    commit = git(repo, "rev-parse", tag + "^{commit}").decode().strip()
    for path in paths:
        crd = yaml.safe_load(git(repo, "show", "%s:%s" % (tag, path)))
        spec = crd["spec"]
        group, kind = spec["group"], spec["names"]["kind"]
        found = []
        for version in spec["versions"]:
            name = version["name"]
            if not version.get("served") or name not in WANTED_VERSIONS:
                continue
            counter = [0]
            schema = strip(version["schema"]["openAPIV3Schema"], counter, "%s/%s %s" % (group, name, kind))
            if "status" in version.get("subresources", {}) and "status" in schema.get("properties", {}):
                schema["properties"]["status"] = {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
            found.append(name)
            groups.setdefault(group, []).append({
                "version": name,
                "kind": kind,
                "source": {"project": label, "repository": repo_url(label), "tag": tag,
                           "commit": commit, "path": path},
                "celRules": counter[0],
                "schema": schema,
            })
        missing = [v for v in WANTED_VERSIONS if v not in found]
        if missing:
            print("warning: %s %s at %s serves no %s" % (kind, path, tag, ", ".join(missing)), file=sys.stderr)


def repo_url(label):
    return {
        "Cluster API": "https://github.com/kubernetes-sigs/cluster-api",
        "CAPRKE2": "https://github.com/rancher/cluster-api-provider-rke2",
    }[label]


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--capi", required=True,
                        help="a clone or bare git dir of kubernetes-sigs/cluster-api")
    parser.add_argument("--capi-tag", default="v1.14.0")
    parser.add_argument("--caprke2", required=True,
                        help="a clone or bare git dir of rancher/cluster-api-provider-rke2")
    parser.add_argument("--caprke2-tag", default="v0.25.0")
    parser.add_argument("--out", default=os.path.normpath(os.path.join(here, "..", "crates", "payload-preview", "src", "crds")))
    parser.add_argument("--gzip-over", type=int, default=1_500_000,
                        help="store gzip (.json.gz) when the minified JSON of all groups is over this many bytes")
    args = parser.parse_args()

    groups = {}
    extract(args.capi, args.capi_tag, CAPI_FILES, "Cluster API", groups)
    extract(args.caprke2, args.caprke2_tag, CAPRKE2_FILES, "CAPRKE2", groups)

    texts = {}
    for group, schemas in sorted(groups.items()):
        document = {
            "generatedBy": "scripts/crd-schemas.py",
            "group": group,
            "schemas": schemas,
        }
        texts[group] = json.dumps(document, separators=(",", ":"), ensure_ascii=False) + "\n"
    total = sum(len(t.encode()) for t in texts.values())
    zipped = total > args.gzip_over
    os.makedirs(args.out, exist_ok=True)
    for group, text in texts.items():
        for stale in (group + ".json", group + ".json.gz"):
            path = os.path.join(args.out, stale)
            if os.path.exists(path):
                os.remove(path)
        if zipped:
            path = os.path.join(args.out, group + ".json.gz")
            with open(path, "wb") as f:
                f.write(gzip.compress(text.encode(), compresslevel=9, mtime=0))
        else:
            path = os.path.join(args.out, group + ".json")
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)
        print("%s: %d schemas, %d bytes" % (path, len(groups[group]), os.path.getsize(path)))
    print("total minified JSON: %d bytes%s" % (total, " (stored as gzip)" if zipped else ""))


if __name__ == "__main__":
    main()
