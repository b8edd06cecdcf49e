#!/usr/bin/env python3
"""Measures rke2-payload on kubectl dumps of 2,000 and 20,000 bootstrap Secrets, against what
users run today (a Python script with PyYAML's C loader) and the bare decode floor.

    python3 bench/run.py [--sizes 2000,20000] [--runs 3] [--dumps fleet,unique]

Two kinds of dump (bench/make_dump.py): `fleet`, a management cluster's Secrets (MachineDeployment
replicas share their payload, about 30% of payloads are distinct), and `unique`, where every
payload is distinct (the worst case: nothing read once can be reused).

Prints, per dump: wall time (best of N) and the CPU time of that run, MB/s of input, peak RSS
(/usr/bin/time), and ratios.
"""
import argparse
import itertools
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "bench" / "out"
BIN = ROOT / "target" / "release"


def build():
    subprocess.run(["cargo", "build", "--release", "-q", "-p", "rke2-payload-cli"], cwd=ROOT, check=True)
    subprocess.run(["cargo", "build", "--release", "-q", "-p", "rke2-payload-bench"], cwd=ROOT, check=True)


def measure(cmd, runs):
    """Best wall time of `runs` runs, the CPU time (user + system) of that run, and peak RSS,
    as /usr/bin/time reports them."""
    best, cpu, rss = None, 0.0, 0
    for _ in range(runs):
        with tempfile.NamedTemporaryFile("r") as t:
            start = time.perf_counter()
            proc = subprocess.run(["/usr/bin/time", "-f", "%M %U %S", "-o", t.name] + cmd,
                                  stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            wall = time.perf_counter() - start
            if proc.returncode not in (0, 1):
                sys.exit(f"{cmd} failed: {proc.stderr.decode()[-500:]}")
            kb, user, system = t.read().split()[-3:]
        if best is None or wall < best:
            best, cpu = wall, float(user) + float(system)
        rss = max(rss, int(kb))
    return best, cpu, rss / 1024


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="2000,20000")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--dumps", default="fleet,unique")
    args = ap.parse_args()
    build()
    sizes = [int(s) for s in args.sizes.split(",")]
    for n, kind, fmt in itertools.product(sizes, args.dumps.split(","), ("yaml", "json")):
        dump = OUT / f"{kind}-{n}.{fmt}"
        if not dump.exists():
            make = [sys.executable, str(ROOT / "bench/make_dump.py"), str(n), fmt, str(dump)]
            subprocess.run(make + (["--unique"] if kind == "unique" else []), check=True)
        mb = dump.stat().st_size / 1e6
        rows = {
            "rke2-payload inspect": [str(BIN / "rke2-payload"), "inspect", "--output", "json", str(dump)],
            "rke2-payload size": [str(BIN / "rke2-payload"), "size", "--output", "json", str(dump)],
            "envelope only": [str(BIN / "envelope-only"), str(dump)],
            "decode floor": [str(BIN / "decode-floor"), str(dump)],
            "python reference": [sys.executable, str(ROOT / "bench/reference.py"), str(dump)],
        }
        results = {}
        for name, cmd in rows.items():
            slow = name == "python reference" and n > 5000
            if slow and os.environ.get("BENCH_SKIP_SLOW"):
                continue
            # The Python reference takes seconds at 20,000 Secrets: one run is enough there.
            results[name] = measure(cmd, 1 if slow else args.runs)
        once = "; the Python reference once" if n > 5000 else ""
        print(f"\n{kind} dump: {n} Secrets, {fmt.upper()}, {mb:.1f} MB (best of {args.runs}{once})")
        print(f"  {'':24} {'wall ms':>9} {'CPU ms':>8} {'MB/s':>8} {'RSS MiB':>8}")
        for name, (wall, cpu, rss) in results.items():
            print(f"  {name:24} {wall * 1000:9.1f} {cpu * 1000:8.0f} {mb / max(wall, 1e-6):8.0f} {rss:8.1f}")
        py = results.get("python reference", (None,))[0]
        insp, size = results["rke2-payload inspect"][0], results["rke2-payload size"][0]
        floor, env = results["decode floor"][0], results["envelope only"][0]
        if py:
            print(f"  inspect is {py / max(insp, 1e-6):.1f}x faster than the Python reference")
        print(f"  size takes {size / max(floor, 1e-6):.2f}x the decode floor, "
              f"{size / max(env, 1e-6):.2f}x the envelope alone")


if __name__ == "__main__":
    main()
