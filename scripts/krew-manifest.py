#!/usr/bin/env python3
"""Write the krew plugin manifest (rke2-payload.yaml) of a release from its SHA256SUMS.

    scripts/krew-manifest.py --version 0.3.0 --checksums dist/SHA256SUMS \
        --base-url https://github.com/OWNER/rke2-payload/releases/download/v0.3.0 \
        > dist/rke2-payload.yaml

Each krew platform takes the archive that scripts/release-archive.sh made for its target (the
static musl builds on Linux) and installs the program and the licence from it (PLUGIN_FILES);
krew links the program as `kubectl-rke2_payload`, the name that makes it the plugin. An archive
missing from the checksums is an error naming it. Only the standard library: the release job
runs it on a bare runner. The test `the_krew_manifest_passes_krew_s_checks` applies
krew-index's checks to what this writes.
"""

import argparse
import re
import sys

# krew's (os, arch) selector -> the Rust target whose archive it installs.
PLATFORMS = [
    ("linux", "amd64", "x86_64-unknown-linux-musl"),
    ("linux", "arm64", "aarch64-unknown-linux-musl"),
    ("darwin", "amd64", "x86_64-apple-darwin"),
    ("darwin", "arm64", "aarch64-apple-darwin"),
    ("windows", "amd64", "x86_64-pc-windows-msvc"),
]

HOMEPAGE = "https://github.com/rke2-payload/rke2-payload"
# At most 50 bytes: `kubectl krew search` cuts it there.
SHORT = "Decode, size and lint CAPRKE2 bootstrap Secrets"

# What krew installs from an archive's folder, each into the plugin's folder (`to: "."`): the
# program (`{exe}`: `.exe` on Windows) and the licence file krew-index requires by name.
PLUGIN_FILES = ["rke2-payload{exe}", "LICENSE"]
BIN = "rke2-payload{exe}"
DESCRIPTION = """\
Reads the bootstrap Secrets that the Cluster API RKE2 bootstrap provider
(CAPRKE2) writes for every Machine: decodes the cloud-config or Ignition
payload, shows what the node will do (inspect), measures it against each
cloud's user-data limit (size), lints it, re-encodes, converts and redacts
it, and renders the Secrets a cluster template or ClusterClass will produce.
No output contains a Secret's value unless asked for.
"""

# Shown by `kubectl krew install`: krew links only the plugin's binary into its bin folder, so
# kubectl's completion script (kubectl 1.26 or newer) is the user's to put there.
CAVEATS = """\
Completion of `kubectl rke2-payload <TAB>` (kubectl 1.26 or newer) needs a
script on the PATH that krew does not link. Once, in a POSIX shell:

  d="${KREW_ROOT:-$HOME/.krew}/bin"
  printf '#!/bin/sh\\nexec kubectl-rke2_payload __complete "$@"\\n' \\
    > "$d/kubectl_complete-rke2_payload"
  chmod +x "$d/kubectl_complete-rke2_payload"
"""


def read_checksums(path):
    """name -> sha256 from `sha256sum` lines (`<hex>  <name>`, `*<name>` in binary mode)."""
    sums = {}
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            line = line.strip()
            if not line:
                continue
            match = re.fullmatch(r"([0-9a-fA-F]{64}) [ *](\S+)", line)
            if not match:
                sys.exit(f"{path}:{number}: not a sha256sum line: {line!r}")
            sums[match.group(2)] = match.group(1).lower()
    return sums


def quoted(text):
    """A YAML double-quoted scalar (JSON's escapes are YAML's)."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def manifest(version, sums, base_url):
    lines = [
        "apiVersion: krew.googlecontainertools.github.com/v1alpha2",
        "kind: Plugin",
        "metadata:",
        "  name: rke2-payload",
        "spec:",
        f"  version: {quoted('v' + version)}",
        f"  homepage: {quoted(HOMEPAGE)}",
        f"  shortDescription: {quoted(SHORT)}",
        "  description: |",
    ]
    lines += ["    " + line for line in DESCRIPTION.splitlines()]
    lines.append("  caveats: |")
    lines += [("    " + line).rstrip() for line in CAVEATS.splitlines()]
    lines.append("  platforms:")
    missing = []
    for os_name, arch, target in PLATFORMS:
        folder = f"rke2-payload-v{version}-{target}"
        archive = folder + (".zip" if os_name == "windows" else ".tar.gz")
        if archive not in sums:
            missing.append(archive)
            continue
        exe = ".exe" if os_name == "windows" else ""
        lines += [
            "  - selector:",
            "      matchLabels:",
            f"        os: {os_name}",
            f"        arch: {arch}",
            f"    uri: {quoted(base_url.rstrip('/') + '/' + archive)}",
            f"    sha256: {quoted(sums[archive])}",
            "    files:",
        ]
        for file in PLUGIN_FILES:
            lines += [
                f"    - from: {quoted(folder + '/' + file.format(exe=exe))}",
                '      to: "."',
            ]
        lines += [
            f"    bin: {quoted(BIN.format(exe=exe))}",
        ]
    if missing:
        sys.exit("no checksum for " + ", ".join(missing))
    return "\n".join(lines) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--version", required=True, help="the release's version, without v")
    parser.add_argument("--checksums", required=True, help="the release's SHA256SUMS")
    parser.add_argument("--base-url", required=True, help="where the release's archives are")
    args = parser.parse_args()
    version = args.version.removeprefix("v")
    if not re.fullmatch(r"\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?", version):
        sys.exit(f"not a semantic version: {args.version!r}")
    sys.stdout.write(manifest(version, read_checksums(args.checksums), args.base_url))


if __name__ == "__main__":
    main()
