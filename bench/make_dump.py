#!/usr/bin/env python3
"""Makes a `kubectl get secrets -A -o yaml|json` style dump of N mixed bootstrap Secrets.

The Secrets are the fixture generator's own (testdata/secrets/list-all.*), repeated with unique
names, so every variant (init/join/worker x cloud-config/Ignition x gzip x install) is present
in the proportions of the fixture List, along with the non-bootstrap Secrets it carries.

    bench/make_dump.py N yaml|json OUT
"""
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def items_yaml(text):
    """Splits kubectl YAML List text into its item blocks (lines of one item each)."""
    lines = text.splitlines(keepends=True)
    start = lines.index("items:\n") + 1
    items, current = [], None
    for line in lines[start:]:
        if line.startswith("- "):
            if current:
                items.append(current)
            current = [line]
        elif line.startswith("  ") or line == "\n":
            current.append(line)
        else:
            break
    if current:
        items.append(current)
    return items


def main():
    n, fmt, out = int(sys.argv[1]), sys.argv[2], Path(sys.argv[3])
    out.parent.mkdir(parents=True, exist_ok=True)
    if fmt == "json":
        source = json.loads((ROOT / "testdata/secrets/list-all.json").read_text())
        items = source["items"]
        result = []
        for i in range(n):
            item = json.loads(json.dumps(items[i % len(items)]))
            item["metadata"]["name"] = f'{item["metadata"]["name"]}-{i:06d}'
            result.append(item)
        doc = {"apiVersion": "v1", "items": result, "kind": "List", "metadata": {"resourceVersion": ""}}
        out.write_text(json.dumps(doc, indent=4) + "\n")
    else:
        items = items_yaml((ROOT / "testdata/secrets/list-all.yaml").read_text())
        with out.open("w") as f:
            f.write("apiVersion: v1\nitems:\n")
            for i in range(n):
                block = items[i % len(items)]
                renamed = []
                done = False
                for line in block:
                    if not done and line.startswith("    name: "):
                        line = line.rstrip("\n") + f"-{i:06d}\n"
                        done = True
                    renamed.append(line)
                f.write("".join(renamed))
            f.write('kind: List\nmetadata:\n  resourceVersion: ""\n')


if __name__ == "__main__":
    main()
