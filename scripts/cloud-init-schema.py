#!/usr/bin/env python3
"""Extract cloud-init's JSON schema for cloud-config, as `lint` bundles it.

Writes crates/rke2-payload/src/reports/data/cloud-init-schema.json: cloud-init's
`cloudinit/config/schemas/schema-cloud-config-v1.json` at a release tag, with the
documentation prose removed (`description`, `changed_description`, `label`, `examples`,
`title`, `$comment`) and everything the validator reads kept: types, properties, patterns,
enums, bounds, `$ref`s and their definitions, and the deprecation annotations
(`deprecated`, `deprecated_version`, and the first line of `deprecated_description`, which
says what replaces the key). A top-level `x-rke2-payload-source` records the tag and commit.

Regenerate (after `git clone https://github.com/canonical/cloud-init`, bare or not):

    python3 scripts/cloud-init-schema.py --cloud-init cloud-init --tag 26.2

Needs python3 only. Output is deterministic (the schema's own key order is kept).
"""

import argparse
import json
import os
import subprocess

SCHEMA = "cloudinit/config/schemas/schema-cloud-config-v1.json"
PROSE = {"description", "changed_description", "label", "examples", "title", "$comment"}
# Keys whose value maps names to schemas (the names are the input's keys, never keywords).
SCHEMA_MAPS = {"properties", "patternProperties", "$defs", "definitions", "dependencies"}
# Keys whose value is data, kept as it is.
DATA = {"enum", "const", "default", "required"}


def git(repo, *args):
    return subprocess.run(["git", "-C", repo, *args], check=True, capture_output=True).stdout


def strip(node):
    if isinstance(node, list):
        return [strip(v) for v in node]
    if not isinstance(node, dict):
        return node
    out = {}
    for key, value in node.items():
        if key in PROSE:
            continue
        if key == "deprecated_description":
            first = value.strip().splitlines()[0].strip() if value.strip() else ""
            if first:
                out[key] = first
        elif key in SCHEMA_MAPS and isinstance(value, dict):
            out[key] = {name: strip(sub) for name, sub in value.items()}
        elif key in DATA:
            out[key] = value
        else:
            out[key] = strip(value)
    return out


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cloud-init", required=True, help="a clone or bare git dir of canonical/cloud-init")
    parser.add_argument("--tag", default="26.2")
    parser.add_argument("--out", default=os.path.normpath(os.path.join(
        here, "..", "crates", "rke2-payload", "src", "reports", "data", "cloud-init-schema.json")))
    args = parser.parse_args()
    ref = "refs/tags/" + args.tag
    commit = git(args.cloud_init, "rev-parse", ref + "^{commit}").decode().strip()
    schema = json.loads(git(args.cloud_init, "show", "%s:%s" % (ref, SCHEMA)))
    stripped = strip(schema)
    document = {"x-rke2-payload-source": {
        "project": "cloud-init", "repository": "https://github.com/canonical/cloud-init",
        "tag": args.tag, "commit": commit, "path": SCHEMA,
        "generatedBy": "scripts/cloud-init-schema.py"}}
    document.update(stripped)
    text = json.dumps(document, separators=(",", ":"), ensure_ascii=False) + "\n"
    with open(args.out, "w", encoding="utf-8") as f:
        f.write(text)
    print("%s: %d bytes (cloud-init %s, %s)" % (args.out, len(text.encode()), args.tag, commit[:12]))


if __name__ == "__main__":
    main()
