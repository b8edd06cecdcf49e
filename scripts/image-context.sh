#!/usr/bin/env bash
# The container image's build context (Containerfile) from the release archives:
#
#     scripts/image-context.sh DIST CONTEXT
#
# takes DIST's `rke2-payload-v<version>-{x86_64,aarch64}-unknown-linux-musl.tar.gz`, checks each
# against its `.sha256`, and writes CONTEXT/linux/amd64/rke2-payload,
# CONTEXT/linux/arm64/rke2-payload (the platforms as buildx names them, TARGETPLATFORM) and
# CONTEXT/LICENSE. A missing archive is skipped with a note; none at all is an error.
set -euo pipefail
[ $# -eq 2 ] || { echo "usage: $0 DIST CONTEXT" >&2; exit 2; }
dist="$1"
context="$2"
cd "$(dirname "$0")/.."
version="$(sed -n 's/^version = "\(.*\)"$/\1/p' Cargo.toml | head -1)"
found=0
for pair in amd64:x86_64 arm64:aarch64; do
  platform="${pair%%:*}"
  name="rke2-payload-v${version}-${pair#*:}-unknown-linux-musl"
  if [ ! -f "$dist/$name.tar.gz" ]; then
    echo "note: no $dist/$name.tar.gz: no linux/$platform in the context" >&2
    continue
  fi
  (cd "$dist" && sha256sum -c --quiet "$name.tar.gz.sha256")
  mkdir -p "$context/linux/$platform"
  tar -xzf "$dist/$name.tar.gz" -C "$context/linux/$platform" --strip-components=1 \
    "$name/rke2-payload" "$name/LICENSE"
  mv "$context/linux/$platform/LICENSE" "$context/LICENSE"
  found=$((found + 1))
done
[ "$found" -gt 0 ] || { echo "no linux musl archive of v$version in $dist" >&2; exit 1; }
ls -lR "$context"
