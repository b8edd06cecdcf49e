#!/usr/bin/env bash
# Build the release archive of one target, as the release workflow does
# (.github/workflows/release.yml calls this script on each platform's runner):
#
#     scripts/release-archive.sh [TARGET]      # default: the host's target
#
# The archive `rke2-payload-v<version>-<target>.tar.gz` (`.zip` for Windows) lands in `dist/`
# (or $DIST_DIR) with its `.sha256`. It holds one folder of the same name with both binaries
# (`rke2-payload`, `kubectl-rke2_payload`), kubectl's completion script for the plugin
# (`kubectl_complete-rke2_payload`, `.cmd` on Windows), README.md, CHANGELOG.md, the two licences,
# the shell completions (completions/), the manual pages (man/man1/) and the JSON Schemas of the
# output documents (schemas/, docs/schemas/ of the repository). The target's Rust standard library
# must be installed (`rustup target add TARGET`) and, for the musl targets, a musl C toolchain
# (musl-tools).
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
  *windows*) exe=".exe" ;;
  *) exe="" ;;
esac

echo "--- building $name"
cargo build --release --locked -p rke2-payload-cli --target "$target"
bin_dir="$target_dir/$target/release"

stage="$(mktemp -d)"
trap 'rm -rf "$stage"' EXIT
root="$stage/$name"
mkdir -p "$root/completions" "$root/man/man1" "$root/schemas"
cp "$bin_dir/rke2-payload$exe" "$bin_dir/kubectl-rke2_payload$exe" "$root/"
cp README.md CHANGELOG.md LICENSE-MIT LICENSE-APACHE "$root/"
# kubectl's completion of the plugin: the script kubectl runs from the PATH at
# `kubectl rke2-payload <TAB>` (a .cmd on Windows).
case "$target" in
  *windows*) cp crates/payload-cli/kubectl/kubectl_complete-rke2_payload.cmd "$root/" ;;
  *) install -m 0755 crates/payload-cli/kubectl/kubectl_complete-rke2_payload "$root/" ;;
esac
cp docs/schemas/*.json "$root/schemas/"

# Completions and manual pages are text, the same for every target: written by the binary just
# built, or, when this machine cannot run it (a cross build), by one built for the host.
generator="$root/rke2-payload$exe"
if ! "$generator" --version >/dev/null 2>&1; then
  echo "--- $target does not run here: the host's build writes completions and manual pages"
  cargo build --release --locked -p rke2-payload-cli --bin rke2-payload
  generator="$target_dir/release/rke2-payload"
fi
"$generator" completions bash >"$root/completions/rke2-payload.bash"
"$generator" completions zsh >"$root/completions/_rke2-payload"
"$generator" completions fish >"$root/completions/rke2-payload.fish"
"$generator" completions powershell >"$root/completions/_rke2-payload.ps1"
"$generator" completions elvish >"$root/completions/rke2-payload.elv"
"$generator" man --dir "$root/man/man1"
# The pages are written private (0600); in an archive they are for everyone to read.
chmod 0644 "$root"/man/man1/* "$root"/completions/* "$root"/schemas/* "$root"/*.md "$root"/LICENSE-*

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
