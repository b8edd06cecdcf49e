#!/usr/bin/env bash
# The crates stand alone: package the library as crates.io would serve it, unpack the package
# into a folder of its own and run its unit tests and doctests there, away from the repository
# (no testdata/, no fuzz/, no workspace). Then package the CLI: its library is not on crates.io
# yet, and `cargo package` given both resolves the CLI against the library's package.
#
#     scripts/package-check.sh
#
# The unpacked crate (in a temporary folder) builds in target/, beside the workspace: the crates
# both builds need with the same features and profile are built once. Its tests run offline:
# `cargo fetch` has brought every crate they need.
set -euo pipefail
cd "$(dirname "$0")/.."

target_dir="${CARGO_TARGET_DIR:-$(pwd)/target}"
version="$(sed -n 's/^version = "\(.*\)"$/\1/p' Cargo.toml | head -1)"
crate="rke2-payload-$version"

echo "--- cargo package -p rke2-payload"
# --no-verify: the test run below is the verification, with the tests and not only the build.
cargo package -p rke2-payload --locked --no-verify --allow-dirty
archive="$target_dir/package/$crate.crate"
echo "$archive: $(wc -c <"$archive" | tr -d ' ') bytes"

# Unpacked outside the repository (inside it, cargo would take it for a workspace member).
unpacked="$(mktemp -d)"
trap 'rm -rf "$unpacked"' EXIT
tar -xzf "$archive" -C "$unpacked"
for path in README.md Cargo.lock tests/data/secrets/INDEX.json src/lib.rs; do
  [ -f "$unpacked/$crate/$path" ] || { echo "the package lacks $path" >&2; exit 1; }
done
[ ! -e "$unpacked/$crate/tests/it" ] || { echo "the package carries tests/it/" >&2; exit 1; }

echo "--- cargo test in the unpacked $crate"
# The package's own lock file (cargo package writes one), offline: every crate it needs is the
# workspace's, already fetched.
(
  cd "$unpacked/$crate"
  CARGO_TARGET_DIR="$target_dir" cargo test --offline --locked
)

echo "--- cargo package -p rke2-payload -p rke2-payload-cli (the CLI against the library's package)"
cargo package -p rke2-payload -p rke2-payload-cli --locked --no-verify --allow-dirty
ls -l "$target_dir/package/"*"-$version.crate"
