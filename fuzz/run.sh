#!/usr/bin/env bash
# Runs fuzz targets on this project's stable toolchain.
#   fuzz/run.sh [SECONDS] [TARGET...]          explore: SECONDS per target (default 10), random
#                                              seed, the corpus kept under fuzz/corpus/
#   FUZZ_RUNS=N fuzz/run.sh [TARGET...]        check: N inputs per target (at most 5 minutes a
#                                              target) from seed FUZZ_SEED (default 1), on a
#                                              fresh corpus of the saved inputs, without
#                                              AddressSanitizer (the crates are safe Rust: a
#                                              check looks for panics and hangs, and builds in
#                                              about half the time)
# Seeds each corpus from testdata/ and fuzz/regressions/, uses the keys dictionary, and copies
# any crash into fuzz/regressions/<target>/ so plain `cargo test` guards it from then on; the
# log then ends with the input (gzip, base64), so a failure seen elsewhere can be saved here.
set -euo pipefail
cd "$(dirname "$0")"
runs="${FUZZ_RUNS:-}"
seconds=10
build=()
if [ -n "$runs" ]; then build=(--sanitizer none); fi
if [ -z "$runs" ]; then
  seconds="${1:-10}"; shift || true
elif [[ "${1:-}" =~ ^[0-9]+$ ]]; then
  echo "FUZZ_RUNS is set: the number of inputs is $runs, not $1 seconds" >&2
  exit 2
fi
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  targets=(envelope stream payload cloudconfig ignition dataurl pki rke2_config inspect roundtrip redact convert terminal render diff template free_text doctor)
fi
export RUSTC_BOOTSTRAP=1 CARGO_CACHE_RUSTC_INFO=0

# Prints a failing input at the end of the log: gzip then base64, minimized first if long.
show() {
  local t="$1" found="$2" packed small
  packed="$(gzip -9cn "$found" | base64 -w 0)"
  if [ "${#packed}" -gt 6000 ]; then
    small="$(mktemp -d)"
    cargo fuzz tmin "${build[@]}" "$t" "$found" -- -max_total_time=60 -artifact_prefix="$small"/ \
      >/dev/null 2>&1 || true
    for m in "$small"/*; do
      [ -f "$m" ] && packed="$(gzip -9cn "$m" | base64 -w 0)"
    done
    rm -rf "$small"
  fi
  if [ "${#packed}" -le 6000 ]; then
    echo "--- $(basename "$found") (base64 -d | gunzip > fuzz/regressions/$t/$(basename "$found")):"
    echo "$packed"
  else
    echo "--- $(basename "$found") is too long to print, even minimized ($(wc -c < "$found") bytes)"
  fi
}

for t in "${targets[@]}"; do
  if [ -n "$runs" ]; then
    corpus="$(mktemp -d)"
    limits=(-runs="$runs" -seed="${FUZZ_SEED:-1}" -max_total_time=300)
  else
    corpus="corpus/$t"
    limits=(-max_total_time="$seconds")
  fi
  # A fresh folder for what this run finds (old finds are not this run's).
  found_in="$(mktemp -d)"
  mkdir -p "$corpus" "regressions/$t"
  case "$t" in
    envelope|inspect|stream) cp -n ../testdata/secrets/*.yaml ../testdata/secrets/*.json ../testdata/bad/* "$corpus"/ 2>/dev/null || true ;;
    payload|cloudconfig|ignition|convert) cp -n ../testdata/secrets/*.userdata "$corpus"/ 2>/dev/null || true ;;
    pki) cp -n ../testdata/gen/keys/*.crt ../testdata/gen/keys/*.key "$corpus"/ 2>/dev/null || true ;;
    render) cp -n ../testdata/manifests/*.yaml ../examples/preview/*.yaml "$corpus"/ 2>/dev/null || true ;;
    doctor) cp -n ../crates/payload-doctor/tests/data/dumps/*.yaml ../crates/payload-doctor/tests/data/dumps/*.json "$corpus"/ 2>/dev/null || true ;;
    diff)
      # Two inputs in one, cut at a 0xFF byte: each fixture against the online worker.
      for a in ../testdata/secrets/*.yaml; do
        { cat "$a"; printf '\377'; cat ../testdata/secrets/worker-cloud-config-online.yaml; } \
          > "$corpus/pair-$(basename "$a")"
      done ;;
    *) ;;
  esac
  cp -n regressions/"$t"/* "$corpus"/ 2>/dev/null || true
  echo "--- fuzz $t: ${limits[*]}"
  if ! cargo fuzz run "${build[@]}" "$t" "$corpus" -- "${limits[@]}" -dict=dict/keys.dict \
      -rss_limit_mb=2048 -timeout=10 -artifact_prefix="$found_in"/ -print_final_stats=1; then
    echo "fuzz target $t failed; the input is saved under fuzz/regressions/$t/" >&2
    for found in "$found_in"/*; do
      [ -f "$found" ] || continue
      cp "$found" regressions/"$t"/
      show "$t" "$found"
    done
    rm -rf "$found_in"
    if [ -n "$runs" ]; then rm -rf "$corpus"; fi
    exit 1
  fi
  rm -rf "$found_in"
  if [ -n "$runs" ]; then rm -rf "$corpus"; fi
done
