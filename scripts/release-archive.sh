#!/usr/bin/env bash
# Build the release archive of one target, as the release workflow does
# (.github/workflows/release.yml calls this script on each platform's runner):
#
#     scripts/release-archive.sh [TARGET]      # default: the host's target
#
# The archive `rke2-payload-v<version>-<target>.tar.gz` (`.zip` for Windows) lands in `dist/`
# (or $DIST_DIR) with its `.sha256`. It holds one folder of the same name; what is in it is
# listed once, in "The archive's files" below. The binary is built with the `dist` profile
# (Cargo.toml: fat LTO, one codegen unit). The target's Rust standard library must be installed
# (`rustup target add TARGET`) and, for the musl targets, a musl C toolchain (musl-tools).
#
# RKE2_PAYLOAD_BIN=PATH packages that binary instead of building one (the tests archive their
# own build this way; the archive's name still says TARGET).
set -euo pipefail
cd "$(dirname "$0")/.."

host="$(rustc -vV | sed -n 's/^host: //p')"
target="${1:-$host}"
version="$(sed -n 's/^version = "\(.*\)"$/\1/p' Cargo.toml | head -1)"
[ -n "$version" ] || { echo "no version in Cargo.toml's [workspace.package]" >&2; exit 1; }
dist="${DIST_DIR:-dist}"
target_dir="${CARGO_TARGET_DIR:-target}"
name="rke2-payload-v${version}-${target}"
case "$target" in
  *windows*) exe=".exe" complete="kubectl_complete-rke2_payload.cmd" ;;
  *) exe="" complete="kubectl_complete-rke2_payload" ;;
esac

if [ -n "${RKE2_PAYLOAD_BIN:-}" ]; then
  echo "--- packaging $RKE2_PAYLOAD_BIN as $name"
  binary="$RKE2_PAYLOAD_BIN"
else
  echo "--- building $name"
  # The one binary: `kubectl-rke2_payload` is the same program (it looks at the name it is run
  # by), so the archive does not carry it twice; krew links it under that name.
  cargo build --profile dist --locked -p rke2-payload-cli --bin rke2-payload --target "$target"
  binary="$target_dir/$target/dist/rke2-payload$exe"
fi

stage="$(mktemp -d)"
trap 'rm -rf "$stage"' EXIT
root="$stage/$name"

# The archive's files. One folder, `rke2-payload-v<version>-<target>/`, holding:
#
#   rke2-payload[.exe]          the program; run as `kubectl-rke2_payload` (a link or a copy
#                               of that name) it is the kubectl plugin
#   LICENSE                     both licences, MIT and Apache-2.0 (krew wants a file of this name)
#   kubectl_complete-rke2_payload   kubectl's completion of the plugin, the script kubectl runs
#                               from the PATH at `kubectl rke2-payload <TAB>` (`.cmd` on Windows)
#   README.md, CHANGELOG.md
#   schemas/                    the JSON Schemas of the output documents (docs/schemas/)
#   completions/                rke2-payload.bash, _rke2-payload (zsh), rke2-payload.fish,
#                               _rke2-payload.ps1, rke2-payload.elv
#   man/man1/                   rke2-payload.1 and rke2-payload-<subcommand>.1
#
# `files` is that list, checked after staging (a file staged but not listed, or listed but not
# staged, is an error): a new file goes into it and is staged below. krew installs only what
# scripts/krew-manifest.py names (PLUGIN_FILES there).
files=(
  "rke2-payload$exe"
  LICENSE
  "$complete"
  README.md
  CHANGELOG.md
  schemas
  completions/rke2-payload.bash
  completions/_rke2-payload
  completions/rke2-payload.fish
  completions/_rke2-payload.ps1
  completions/rke2-payload.elv
  man/man1
)
mkdir -p "$root/completions" "$root/man/man1" "$root/schemas"
cp "$binary" "$root/rke2-payload$exe"
cp README.md CHANGELOG.md "$root/"
# kubectl's completion of the plugin: the script kubectl runs from the PATH at
# `kubectl rke2-payload <TAB>` (a .cmd on Windows).
case "$target" in
  *windows*) cp crates/payload-cli/kubectl/kubectl_complete-rke2_payload.cmd "$root/" ;;
  *) install -m 0755 crates/payload-cli/kubectl/kubectl_complete-rke2_payload "$root/" ;;
esac
cp docs/schemas/*.json "$root/schemas/"
# One licence file under the name krew-index requires (LICENSE-MIT and LICENSE-APACHE do not
# count): which licences and the choice between them, then both texts, as the repository has them.
{
  echo "rke2-payload is licensed under either of"
  echo
  echo "  * the Apache License, Version 2.0 (the first text below), or"
  echo "  * the MIT license (the second text below)"
  echo
  echo "at your option. SPDX-License-Identifier: MIT OR Apache-2.0"
  echo
  echo "=============================================================================="
  echo
  cat LICENSE-APACHE
  echo
  echo "=============================================================================="
  echo
  cat LICENSE-MIT
} >"$root/LICENSE"

# Completions and manual pages are text, the same for every target: written by the binary just
# built, or, when this machine cannot run it (a cross build), by one built for the host.
generator="$root/rke2-payload$exe"
if ! "$generator" --version >/dev/null 2>&1; then
  echo "--- $target does not run here: the host's build writes completions and manual pages"
  cargo build --profile dist --locked -p rke2-payload-cli --bin rke2-payload
  generator="$target_dir/dist/rke2-payload"
fi
"$generator" completions bash >"$root/completions/rke2-payload.bash"
"$generator" completions zsh >"$root/completions/_rke2-payload"
"$generator" completions fish >"$root/completions/rke2-payload.fish"
"$generator" completions powershell >"$root/completions/_rke2-payload.ps1"
"$generator" completions elvish >"$root/completions/rke2-payload.elv"
"$generator" man --dir "$root/man/man1"
# The pages are written private (0600); in an archive they are for everyone to read.
chmod 0644 "$root"/man/man1/* "$root"/completions/* "$root"/schemas/* "$root"/*.md "$root"/LICENSE
chmod 0755 "$root/rke2-payload$exe"
# Nothing but the listed files (krew and the tests rely on the layout).
for file in "${files[@]}"; do
  [ -e "$root/$file" ] || { echo "the archive lacks $file" >&2; exit 1; }
done
extra="$(cd "$root" && find . -mindepth 1 ! -type d | sed 's|^\./||' | while read -r f; do
  listed=no
  for file in "${files[@]}"; do
    case "$f" in "$file" | "$file"/*) listed=yes ;; esac
  done
  [ "$listed" = yes ] || echo "$f"
done)"
[ -z "$extra" ] || { echo "not in the archive's list of files: $extra" >&2; exit 1; }

mkdir -p "$dist"
case "$target" in
  *windows*)
    archive="$name.zip"
    rm -f "$dist/$archive"
    if command -v 7z >/dev/null 2>&1; then
      (cd "$stage" && 7z a -tzip -bso0 "$archive" "$name") && mv "$stage/$archive" "$dist/"
    else
      (cd "$stage" && zip -qr "$archive" "$name") && mv "$stage/$archive" "$dist/"
    fi
    ;;
  *)
    archive="$name.tar.gz"
    # The archive's entries belong to root, in name order (GNU tar; bsdtar on macOS).
    if tar --version 2>/dev/null | grep -q GNU; then
      owner=(--owner=0 --group=0 --numeric-owner --sort=name)
    else
      owner=(--uid 0 --gid 0)
    fi
    (cd "$stage" && tar -cf - "${owner[@]}" "$name") | gzip -9n >"$dist/$archive"
    ;;
esac

if command -v sha256sum >/dev/null 2>&1; then
  (cd "$dist" && sha256sum "$archive" >"$archive.sha256")
else
  (cd "$dist" && shasum -a 256 "$archive" >"$archive.sha256")
fi
bytes="$(wc -c <"$dist/$archive" | tr -d ' ')"
echo "$dist/$archive $bytes bytes"
cat "$dist/$archive.sha256"
