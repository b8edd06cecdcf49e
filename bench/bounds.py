#!/usr/bin/env python3
"""Measures rke2-payload on hostile inputs under 1 MiB that once broke its bounds (every input
under 1 MiB done in under 10 s and 1 GiB), and on a 15 MB fleet dump for `redact`'s peak memory.

    bench/bounds.py BINARY [--cases keys,nested,files,gzip,list] [--out DIR] [--scale 1.0]

Cases (each input generated here, into --out, default a temporary folder):

- `keys`: a `#cloud-config` with 200,000 top-level keys, gzipped in a bootstrap Secret:
  `inspect`, `inspect -v`, `lint`, `redact`, `diff` of two such Secrets;
- `nested`: the same with the 200,000 keys in one nested map;
- `files`: `diff` of two Secrets whose payloads each write 50,000 small files (and of two
  that each run 50,000 commands);
- `gzip`: `redact` (and `inspect`) of a Secret whose value is 45,000 concatenated one-byte gzip
  members (user data that is one 45,000-letter word);
- `list`: `redact` of a `kind: List` of 2,000 bootstrap Secrets, every payload distinct
  (bench/make_dump.py --unique; about 15 MB), in YAML and in JSON: its peak RSS.

Prints one line per command: wall time, peak RSS (as /usr/bin/time reports them), exit code,
input size (and the end of the error of a command that exits 2). A command that runs past
--timeout seconds is stopped and reported as such.
"""
import argparse
import base64
import gzip
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def secret(name: str, value: bytes, fmt: bytes = b"cloud-config") -> bytes:
    """A bootstrap Secret as kubectl prints it, with `value` as its stored bytes."""
    return (
        "apiVersion: v1\n"
        "data:\n"
        f"  format: {base64.b64encode(fmt).decode()}\n"
        f"  value: {base64.b64encode(value).decode()}\n"
        "kind: Secret\n"
        "metadata:\n"
        "  labels:\n"
        "    cluster.x-k8s.io/cluster-name: demo\n"
        f"  name: {name}\n"
        "  namespace: default\n"
        "type: cluster.x-k8s.io/secret\n"
    ).encode()


def gz(data: bytes) -> bytes:
    return gzip.compress(data, compresslevel=9, mtime=0)


def many_keys(n: int, nested: bool, tag: str) -> bytes:
    """A cloud-config with n small keys, at the top level or in one nested map."""
    indent = "  " if nested else ""
    head = "#cloud-config\nruncmd:\n  - echo hi\n" + ("extra:\n" if nested else "")
    body = "".join(f"{indent}k{i}: 1\n" for i in range(n))
    return (head + body + f"{indent}tag: {tag}\n").encode()


def many_files(n: int, tag: str) -> bytes:
    """A cloud-config writing n small files."""
    files = "".join(f"- path: /etc/f/{i:06d}\n  content: x{i}\n" for i in range(n))
    return f"#cloud-config\nwrite_files:\n{files}- path: /etc/tag\n  content: {tag}\n".encode()


def many_commands(n: int, tag: str) -> bytes:
    """A cloud-config running n small commands (in CAPRKE2's shape, which the fast path reads)."""
    lines = "".join(f"- echo {tag}{i}\n" for i in range(n))
    return f"#cloud-config\nruncmd:\n{lines}".encode()


def gzip_members(n: int) -> bytes:
    """n one-byte gzip members, concatenated (as `cat` of many `gzip -n` outputs); together
    they read `a` n times (user data that is one long word)."""
    return b"".join(gzip.compress(b"a", mtime=0) for _ in range(n))


def write(out: Path, name: str, data: bytes) -> Path:
    path = out / name
    path.write_bytes(data)
    return path


def cases(out: Path, scale: float, wanted: set[str]):
    """(case, command arguments, input paths) to run, generating the inputs."""
    k, f, m, s = int(200_000 * scale), int(50_000 * scale), int(45_000 * scale), int(2_000 * scale)
    if "keys" in wanted or "nested" in wanted:
        for kind in ("keys", "nested"):
            if kind not in wanted:
                continue
            a = write(out, f"{kind}-a.yaml", secret("a", gz(many_keys(k, kind == "nested", "a"))))
            b = write(out, f"{kind}-b.yaml", secret("a", gz(many_keys(k, kind == "nested", "b"))))
            for cmd in (["inspect"], ["inspect", "-v"], ["lint"], ["redact"]):
                yield kind, cmd + [str(a)], [a]
            yield kind, ["diff", str(a), str(b)], [a, b]
            # 200,000 keys are more nodes than redact's YAML reader takes (it refuses, early);
            # 120,000 are read and masked.
            c = write(out, f"{kind}-120k.yaml", secret("a", gz(many_keys(k * 3 // 5, kind == "nested", "a"))))
            yield kind, ["redact", str(c)], [c]
    if "files" in wanted:
        a = write(out, "files-a.yaml", secret("a", gz(many_files(f, "a"))))
        b = write(out, "files-b.yaml", secret("a", gz(many_files(f, "b"))))
        yield "files", ["diff", str(a), str(b)], [a, b]
        yield "files", ["inspect", str(a)], [a]
        a = write(out, "commands-a.yaml", secret("a", gz(many_commands(f, "a"))))
        b = write(out, "commands-b.yaml", secret("a", gz(many_commands(f, "b"))))
        yield "files", ["diff", str(a), str(b)], [a, b]
    if "gzip" in wanted:
        a = write(out, "gzip.yaml", secret("a", gzip_members(m)))
        yield "gzip", ["redact", str(a)], [a]
        yield "gzip", ["inspect", str(a)], [a]
    if "list" in wanted:
        # Every payload distinct (the fleet's 2,000 Secrets are about 15 MB so), in both syntaxes.
        for fmt in ("yaml", "json"):
            a = out / f"list-{s}.{fmt}"
            if not a.exists():
                subprocess.run([sys.executable, str(ROOT / "bench" / "make_dump.py"), str(s), fmt, str(a),
                                "--unique"], check=True)
            yield "list", ["redact", str(a)], [a]


def measure(binary: str, args: list[str], timeout: float):
    """Wall time, peak RSS in MiB and exit code of one run (None for a run stopped at timeout)."""
    with tempfile.NamedTemporaryFile("r") as t:
        start = time.perf_counter()
        try:
            proc = subprocess.run(["/usr/bin/time", "-f", "%M", "-o", t.name, binary] + args,
                                  stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=timeout)
        except subprocess.TimeoutExpired:
            return time.perf_counter() - start, None, None, ""
        wall = time.perf_counter() - start
        lines = t.read().split()
        rss = int(lines[-1]) / 1024 if lines else float("nan")
        error = proc.stderr.decode(errors="replace").strip() if proc.returncode not in (0, 1) else ""
        return wall, rss, proc.returncode, error


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("binary")
    ap.add_argument("--cases", default="keys,nested,files,gzip,list")
    ap.add_argument("--out", default=None)
    ap.add_argument("--scale", type=float, default=1.0)
    ap.add_argument("--timeout", type=float, default=120.0)
    args = ap.parse_args()
    out = Path(args.out) if args.out else Path(tempfile.mkdtemp(prefix="rke2-bounds-"))
    out.mkdir(parents=True, exist_ok=True)
    print(f"{'case':8} {'wall s':>8} {'RSS MiB':>9} {'exit':>4} {'input KiB':>10}  command")
    for case, cmd, inputs in cases(out, args.scale, set(args.cases.split(","))):
        wall, rss, code, error = measure(args.binary, cmd, args.timeout)
        size = sum(p.stat().st_size for p in inputs) / 1024
        shown = " ".join(a if not a.startswith(str(out)) else Path(a).name for a in cmd)
        if rss is None:
            print(f"{case:8} {wall:8.2f} {'timeout':>9} {'-':>4} {size:10.0f}  {shown}")
        else:
            print(f"{case:8} {wall:8.2f} {rss:9.1f} {code:4} {size:10.0f}  {shown}")
        if error:
            # (A refusal is an answer too: 200,000 keys are more than redact's reader takes.)
            print(f"{'':8} {error[:200]}")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
