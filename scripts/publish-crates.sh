#!/usr/bin/env bash
# Publish the workspace's crates to crates.io, each after those it depends on (docs/release.md,
# step 6):
#
#     scripts/publish-crates.sh --dry-run    # what would be published, nothing uploaded
#     scripts/publish-crates.sh              # publish (a crates.io token: `cargo login`)
#
# cargo publish waits until each crate is in the index before the next one resolves against it.
# A crate whose version is already on crates.io is skipped, so a run that stopped half-way can
# be run again.
set -euo pipefail
cd "$(dirname "$0")/.."
dry=()
[ "${1:-}" = "--dry-run" ] && dry=(--dry-run)
version="$(sed -n 's/^version = "\(.*\)"$/\1/p' Cargo.toml | head -1)"
for crate in rke2-payload-gotmpl rke2-payload-kube-schema rke2-payload rke2-payload-preview \
  rke2-payload-doctor rke2-payload-printer rke2-payload-cli; do
  if cargo info --registry crates-io "$crate@$version" >/dev/null 2>&1; then
    echo "--- $crate $version is on crates.io already"
    continue
  fi
  echo "--- cargo publish -p $crate ${dry[*]}"
  cargo publish -p "$crate" --locked "${dry[@]}"
done
