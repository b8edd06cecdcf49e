#!/usr/bin/env bash
# Build and push the container image of a published release by hand, as the release workflow's
# `image` job does (docs/release.md, "The container image"): from the release's two static Linux
# archives, checked against their checksums, for linux/amd64 and linux/arm64, with podman:
#
#     scripts/push-image.sh VERSION IMAGE [OWNER/REPO]   # IMAGE: e.g. ghcr.io/owner/rke2-payload
#
# Log in first (`podman login ghcr.io`). Pushes IMAGE:VERSION and IMAGE:latest.
set -euo pipefail
[ $# -ge 2 ] || { echo "usage: $0 VERSION IMAGE [OWNER/REPO]" >&2; exit 2; }
version="${1#v}"
image="$2"
repo="${3:-$(gh repo view --json nameWithOwner -q .nameWithOwner)}"
cd "$(dirname "$0")/.."
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
gh release download "v$version" -R "$repo" -D "$work/dist" \
  -p "rke2-payload-v$version-*-unknown-linux-musl.tar.gz*"
bash scripts/image-context.sh "$work/dist" "$work/image"
podman manifest rm "$image:$version" >/dev/null 2>&1 || true
podman build --platform linux/amd64,linux/arm64 --manifest "$image:$version" \
  -f Containerfile "$work/image"
podman manifest push --all "$image:$version" "docker://$image:$version"
podman manifest push --all "$image:$version" "docker://$image:latest"
