#!/usr/bin/env bash
# The crates stand alone: package the library as crates.io would serve it, unpack the package
# into a folder of its own and run its unit tests and doctests there, away from the repository
# (no testdata/, no fuzz/, no workspace). Then package the CLI: its library is not on crates.io
# yet, and `cargo package` given both resolves the CLI against the library's package.
#
#     scripts/package-check.sh
#
# The unpacked crate builds in target/package-check/target (a folder of its own, kept between
# runs so that a second run only rebuilds what changed). Works offline once `cargo fetch` ran.
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

work="$target_dir/package-check"
rm -rf "$work/$crate"
mkdir -p "$work"
tar -xzf "$archive" -C "$work"
for path in README.md tests/data/secrets/INDEX.json src/lib.rs; do
  [ -f "$work/$crate/$path" ] || { echo "the package lacks $path" >&2; exit 1; }
done
[ ! -e "$work/$crate/tests/it" ] || { echo "the package carries tests/it/" >&2; exit 1; }

echo "--- cargo test in the unpacked $crate"
# The package's own lock file (cargo package writes one), offline: every crate it needs is the
# workspace's, already fetched.
(
  cd "$work/$crate"
  CARGO_TARGET_DIR="$work/target" cargo test --offline --locked
)

echo "--- cargo package -p rke2-payload -p rke2-payload-cli (the CLI against the library's package)"
cargo package -p rke2-payload -p rke2-payload-cli --locked --no-verify --allow-dirty
ls -l "$target_dir/package/"*"-$version.crate"
