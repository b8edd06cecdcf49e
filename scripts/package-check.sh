#!/usr/bin/env bash
# The crates stand alone: package the engines (rke2-payload-gotmpl, rke2-payload-kube-schema),
# the library (rke2-payload), the preview (rke2-payload-preview) and the doctor
# (rke2-payload-doctor) as crates.io would serve
# them, unpack each package into a folder of its own and run its tests there, away from the
# repository (no testdata/, no fuzz/, no workspace): the engines' whole test suites, the
# library's unit tests and doctests, the preview's and the doctor's unit tests and doctests
# against the unpacked engines and library. Then package the printers and the CLI: none of them is on crates.io yet, and
# `cargo package` given them all resolves each against the others' packages.
#
#     scripts/package-check.sh
#
# The unpacked crates (in a temporary folder) build in target/, beside the workspace: the crates
# both builds need with the same features and profile are built once. Their tests run offline:
# `cargo fetch` has brought every crate they need.
set -euo pipefail
cd "$(dirname "$0")/.."

target_dir="${CARGO_TARGET_DIR:-$(pwd)/target}"
version="$(sed -n 's/^version = "\(.*\)"$/\1/p' Cargo.toml | head -1)"
library="rke2-payload-$version"
preview="rke2-payload-preview-$version"
doctor="rke2-payload-doctor-$version"
engines=(rke2-payload-gotmpl rke2-payload-kube-schema)
engine_args=()
for name in "${engines[@]}"; do engine_args+=(-p "$name"); done
crate_args=("${engine_args[@]}" -p rke2-payload -p rke2-payload-preview -p rke2-payload-doctor)

echo "--- cargo package ${crate_args[*]}"
# --no-verify: the test runs below are the verification, with the tests and not only the build.
cargo package "${crate_args[@]}" --locked --no-verify --allow-dirty
for crate in "$library" "$preview" "$doctor"; do
  archive="$target_dir/package/$crate.crate"
  echo "$archive: $(wc -c <"$archive" | tr -d ' ') bytes"
done

# Unpacked outside the repository (inside it, cargo would take it for a workspace member).
unpacked="$(mktemp -d)"
trap 'rm -rf "$unpacked"' EXIT
for name in "${engines[@]}" rke2-payload rke2-payload-preview rke2-payload-doctor; do
  tar -xzf "$target_dir/package/$name-$version.crate" -C "$unpacked"
done
# A package's files all carry one fixed date (cargo writes reproducible archives), and its
# crate's build hash does not depend on the folder: without a fresh date, a second run would
# take the test binaries of the first (built in a folder since removed) for up to date.
find "$unpacked" -type f -exec touch {} +
for path in README.md Cargo.lock tests/data/secrets/INDEX.json src/lib.rs; do
  [ -f "$unpacked/$library/$path" ] || { echo "the library's package lacks $path" >&2; exit 1; }
done
for path in README.md Cargo.lock src/lib.rs src/crds/cluster.x-k8s.io.json \
  tests/data/caprke2/README.md tests/go/jsonpatch/main.go; do
  [ -f "$unpacked/$preview/$path" ] || { echo "the preview's package lacks $path" >&2; exit 1; }
done
for path in README.md Cargo.lock src/lib.rs; do
  [ -f "$unpacked/$doctor/$path" ] || { echo "the doctor's package lacks $path" >&2; exit 1; }
done
[ ! -e "$unpacked/$doctor/tests" ] || { echo "the package $doctor carries tests/" >&2; exit 1; }
for crate in "$library" "$preview"; do
  [ ! -e "$unpacked/$crate/tests/it" ] || { echo "the package $crate carries tests/it/" >&2; exit 1; }
done

# A package names the crates below it by version, as crates.io will serve them; until they are
# published, the unpacked crates stand in for them.
patches=()
for name in "${engines[@]}"; do
  echo "--- cargo test in the unpacked $name-$version"
  (
    cd "$unpacked/$name-$version"
    CARGO_TARGET_DIR="$target_dir" cargo test --offline --locked
  )
  patches+=(--config "patch.crates-io.$name.path=\"$unpacked/$name-$version\"")
done

# The package's own lock file (cargo package writes one), offline: every crate it needs is the
# workspace's, already fetched.
echo "--- cargo test in the unpacked $library"
(
  cd "$unpacked/$library"
  CARGO_TARGET_DIR="$target_dir" cargo test --offline
)
patches+=(--config "patch.crates-io.rke2-payload.path=\"$unpacked/$library\"")

echo "--- cargo test in the unpacked $preview"
(
  cd "$unpacked/$preview"
  CARGO_TARGET_DIR="$target_dir" cargo test --offline "${patches[@]}"
)

echo "--- cargo test in the unpacked $doctor"
(
  cd "$unpacked/$doctor"
  CARGO_TARGET_DIR="$target_dir" cargo test --offline "${patches[@]}"
)

echo "--- cargo package ${crate_args[*]} -p rke2-payload-printer -p rke2-payload-cli (the printers and the CLI against the packages)"
cargo package "${crate_args[@]}" -p rke2-payload-printer -p rke2-payload-cli --locked --no-verify --allow-dirty
ls -l "$target_dir/package/"*"-$version.crate"
