#!/usr/bin/env python3
"""Runs every subcommand, in every output format, on every fixture, on the manifest examples
and on the bench dumps, and writes what each run printed (stdout, stderr, exit code, and
GitHub's step summary) to a folder: the way to show that a change kept behaviour byte for byte.

    python3 bench/snapshot.py BIN OUT_DIR [--dumps 2000]
    diff -r OLD_DIR NEW_DIR && echo identical

BIN is an `rke2-payload` binary (for example an old build copied aside, then the new one). The
dumps are made by bench/make_dump.py when missing.
"""
import argparse
import hashlib
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# (name, arguments after the input file); `{out}` is a fresh file path to write to.
RUNS = [
    ("decode", ["decode"]),
    ("decode-raw", ["decode", "--raw"]),
    ("inspect-text", ["inspect"]),
    ("inspect-verbose", ["inspect", "--verbose"]),
    ("inspect-json", ["inspect", "--output", "json"]),
    ("inspect-json-secrets", ["inspect", "--output", "json", "--show-secrets"]),
    ("size-text", ["size"]),
    ("size-json", ["size", "--output", "json"]),
    ("size-junit", ["size", "--output", "junit", "--cloud", "aws,openstack", "--headroom", "10"]),
    ("size-budget", ["size", "--budget", "4096:base64"]),
    ("lint-text", ["lint", "--cloud-init-schema", "none"]),
    ("lint-json", ["lint", "--output", "json", "--cloud-init-schema", "none"]),
    ("lint-sarif", ["lint", "--output", "sarif", "--cloud-init-schema", "none"]),
    ("lint-cloud", ["lint", "--output", "json", "--cloud", "aws", "--deny", "warnings"]),
    ("lint-schema", ["lint", "--output", "json"]),
    ("encode", ["encode"]),
    ("encode-gzip", ["encode", "--gzip"]),
    ("encode-nogzip-value", ["encode", "--no-gzip", "--emit", "value"]),
    ("encode-json-b64", ["encode", "--gzip", "--emit", "base64"]),
    ("encode-json", ["encode", "--output", "json"]),
    ("encode-to-ignition", ["encode", "--to", "ignition"]),
    ("encode-to-cloud-config", ["encode", "--to", "cloud-config", "--gzip"]),
    ("redact", ["redact"]),
    ("inspect-yaml", ["inspect", "--output", "yaml"]),
    ("inspect-color", ["inspect", "--color", "always", "--verbose"]),
    ("size-yaml", ["size", "--output", "yaml"]),
    ("size-color", ["size", "--color", "always", "--cloud", "all"]),
    ("size-junit-default", ["size", "--output", "junit"]),
    ("lint-yaml", ["lint", "--output", "yaml", "--cloud-init-schema", "none"]),
    ("lint-github", ["lint", "--output", "github", "--cloud-init-schema", "none"]),
    ("lint-gitlab", ["lint", "--output", "gitlab", "--cloud-init-schema", "none"]),
    ("lint-junit", ["lint", "--output", "junit", "--cloud-init-schema", "none"]),
    ("lint-color", ["lint", "--color", "always", "--cloud-init-schema", "none"]),
]

# Runs on manifests (each file of examples/preview and examples/templates, rendered first).
MANIFEST_RUNS = ["inspect-text", "inspect-json", "size-text", "size-json", "size-junit",
                 "lint-text", "lint-json", "lint-sarif", "lint-github", "lint-gitlab",
                 "lint-junit", "lint-color"]

# Commands that read no input.
PLAIN_RUNS = [
    ("clouds-yaml", ["clouds", "--output", "yaml"]),
    ("checks-text", ["lint", "--list-checks"]),
    ("checks-json", ["lint", "--list-checks", "--output", "json"]),
    ("checks-yaml", ["lint", "--list-checks", "--output", "yaml"]),
]

DIFF_FORMATS = [("text", []), ("json", ["--output", "json"]), ("markdown", ["--output", "markdown"]),
                ("color", ["--color", "always"]), ("strict", ["--strict"]),
                ("ignore", ["--ignore", "token", "--ignore", "ca"])]

DUMP_RUNS = {"inspect-json", "inspect-text", "size-json", "size-text", "size-junit",
             "lint-text", "lint-json", "lint-sarif", "redact", "lint-github", "lint-gitlab",
             "lint-junit"}


def fixtures():
    for folder in ("testdata/secrets", "testdata/bad"):
        for path in sorted((ROOT / folder).iterdir()):
            if path.suffix in (".yaml", ".json", ".userdata", ".txt"):
                yield path


def record(binary, args, out_dir, label, env=None):
    # A step summary is written only where a run asks for one.
    env = dict({k: v for k, v in os.environ.items() if k != "GITHUB_STEP_SUMMARY"},
               NO_COLOR="1", **(env or {}))
    proc = subprocess.run([binary] + args, capture_output=True, env=env, cwd=ROOT, timeout=600)
    stdout = proc.stdout
    # Large outputs are kept as a digest, so the folder stays small.
    if len(stdout) > 200_000:
        stdout = f"sha256 {hashlib.sha256(stdout).hexdigest()} {len(stdout)} bytes\n".encode()
    (out_dir / f"{label}.out").write_bytes(stdout)
    (out_dir / f"{label}.err").write_bytes(proc.stderr.replace(str(ROOT).encode(), b"ROOT"))
    (out_dir / f"{label}.rc").write_text(f"{proc.returncode}\n")


def record_manifests(binary, out_dir):
    """Every manifest example through the reports, and GitHub's step summary of each."""
    count = 0
    runs = dict(RUNS)
    for folder in ("examples/preview", "examples/templates"):
        for path in sorted((ROOT / folder).glob("*.yaml")):
            rel = str(path.relative_to(ROOT))
            stem = rel.replace("/", "_")
            for name in MANIFEST_RUNS:
                extra = runs[name]
                record(binary, extra[:1] + [rel] + extra[1:], out_dir, f"{stem}.{name}")
                count += 1
            with tempfile.TemporaryDirectory() as tmp:
                summary = Path(tmp) / "summary.md"
                extra = runs["lint-github"]
                record(binary, extra[:1] + [rel] + extra[1:], out_dir, f"{stem}.lint-github-summary",
                       env={"GITHUB_STEP_SUMMARY": str(summary)})
                (out_dir / f"{stem}.lint-github-summary.md").write_bytes(
                    summary.read_bytes() if summary.exists() else b"(none)\n")
                count += 1
    return count


def record_diffs(binary, out_dir):
    """`diff` of neighbouring fixtures, of a fixture with itself, and of manifests."""
    files = [p for p in fixtures() if p.parent.name == "secrets" and p.suffix == ".yaml"]
    pairs = list(zip(files, files[1:])) + [(files[0], files[0])]
    pairs.append((ROOT / "examples/preview/demo-cluster.yaml",
                  ROOT / "examples/preview/clusterclass.yaml"))
    count = 0
    for before, after in pairs:
        a, b = (str(p.relative_to(ROOT)) for p in (before, after))
        for fmt, extra in DIFF_FORMATS:
            label = f"diff.{a.replace('/', '_')}.{b.replace('/', '_')}.{fmt}"
            record(binary, ["diff", a, b] + extra, out_dir, label)
            count += 1
    return count


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("binary")
    ap.add_argument("out_dir")
    ap.add_argument("--dumps", default="2000", help="dump sizes, comma-separated ('' for none)")
    args = ap.parse_args()
    binary = str(Path(args.binary).resolve())
    out_dir = Path(args.out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    inputs = [(p, {name for name, _ in RUNS}) for p in fixtures()]
    for n in [s for s in args.dumps.split(",") if s]:
        for kind in ("fleet", "unique"):
            for fmt in ("yaml", "json"):
                dump = ROOT / "bench" / "out" / f"{kind}-{n}.{fmt}"
                if not dump.exists():
                    make = [sys.executable, str(ROOT / "bench/make_dump.py"), n, fmt, str(dump)]
                    subprocess.run(make + (["--unique"] if kind == "unique" else []), check=True)
                inputs.append((dump, DUMP_RUNS))
    count = 0
    for name, extra in (("clouds-text", ["clouds"]), ("clouds-json", ["clouds", "--output", "json"])):
        record(binary, extra, out_dir, name)
        count += 1
    for name, extra in PLAIN_RUNS:
        record(binary, extra, out_dir, name)
        count += 1
    count += record_manifests(binary, out_dir)
    count += record_diffs(binary, out_dir)
    # Picking one Secret by name (and one that is not there), on a List, in every command.
    for list_file in ("testdata/secrets/list-all.yaml", "testdata/secrets/list-all.json"):
        for name in ("default/demo-control-plane-5mm8p", "demo-control-plane-4fplp", "nope"):
            for cmd in (["decode"], ["inspect", "--output", "json"], ["inspect"], ["size"],
                        ["lint", "--output", "json", "--cloud-init-schema", "none"],
                        ["encode", "--gzip"]):
                label = f"{list_file.replace('/', '_')}.name-{name.replace('/', '_')}.{'-'.join(cmd)}"
                record(binary, cmd + [list_file, "--name", name], out_dir, label)
                count += 1
        for jobs in ("1", "2", "7"):
            record(binary, ["inspect", "--output", "json", "--jobs", jobs, list_file], out_dir,
                   f"{list_file.replace('/', '_')}.jobs-{jobs}")
            count += 1
    for path, wanted in inputs:
        rel = path.relative_to(ROOT)
        stem = str(rel).replace("/", "_")
        for name, extra in RUNS:
            if name not in wanted:
                continue
            record(binary, extra[:1] + [str(rel)] + extra[1:], out_dir, f"{stem}.{name}")
            count += 1
        # Standard input, and a file written with -o.
        with tempfile.TemporaryDirectory() as tmp:
            if "inspect-json" in wanted:
                with open(path, "rb") as f:
                    env = dict(os.environ, NO_COLOR="1")
                    proc = subprocess.run([binary, "lint", "--output", "sarif", "--cloud-init-schema",
                                           "none"], stdin=f, capture_output=True, env=env)
                    (out_dir / f"{stem}.stdin-sarif.out").write_bytes(proc.stdout)
                    (out_dir / f"{stem}.stdin-sarif.rc").write_text(f"{proc.returncode}\n")
                count += 1
    print(f"{count} runs recorded in {out_dir}")


if __name__ == "__main__":
    main()
