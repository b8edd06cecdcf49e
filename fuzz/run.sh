#!/usr/bin/env bash
# Runs fuzz targets on this project's stable toolchain.
#   fuzz/run.sh [SECONDS] [TARGET...]          explore: SECONDS per target (default 10), random
#                                              seed, the corpus kept under fuzz/corpus/
#   FUZZ_RUNS=N fuzz/run.sh [TARGET...]        check: N inputs per target from seed FUZZ_SEED
#                                              (default 1) on a fresh corpus of the saved inputs,
#                                              so the same commit gives the same run anywhere
# Seeds each corpus from testdata/ and fuzz/regressions/, uses the keys dictionary, and copies
# any crash into fuzz/regressions/<target>/ so plain `cargo test` guards it from then on.
set -euo pipefail
cd "$(dirname "$0")"
runs="${FUZZ_RUNS:-}"
seconds=10
if [ -z "$runs" ]; then
  seconds="${1:-10}"; shift || true
fi
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  targets=(envelope stream payload cloudconfig ignition dataurl pki rke2_config inspect roundtrip redact convert terminal render)
fi
export RUSTC_BOOTSTRAP=1 CARGO_CACHE_RUSTC_INFO=0
for t in "${targets[@]}"; do
  if [ -n "$runs" ]; then
    corpus="$(mktemp -d)"
    limits=(-runs="$runs" -seed="${FUZZ_SEED:-1}" -max_total_time=300)
  else
    corpus="corpus/$t"
    limits=(-max_total_time="$seconds")
  fi
  mkdir -p "$corpus" "regressions/$t" artifacts/"$t"
  case "$t" in
    envelope|inspect|stream) cp -n ../testdata/secrets/*.yaml ../testdata/secrets/*.json ../testdata/bad/* "$corpus"/ 2>/dev/null || true ;;
    payload|cloudconfig|ignition|convert) cp -n ../testdata/secrets/*.userdata "$corpus"/ 2>/dev/null || true ;;
    pki) cp -n ../testdata/gen/keys/*.crt ../testdata/gen/keys/*.key "$corpus"/ 2>/dev/null || true ;;
    render) cp -n ../testdata/manifests/*.yaml "$corpus"/ 2>/dev/null || true ;;
    *) ;;
  esac
  cp -n regressions/"$t"/* "$corpus"/ 2>/dev/null || true
  echo "--- fuzz $t: ${limits[*]}"
  if ! cargo fuzz run "$t" "$corpus" -- "${limits[@]}" -dict=dict/keys.dict \
      -rss_limit_mb=2048 -timeout=10 -artifact_prefix=artifacts/"$t"/ -print_final_stats=1; then
    echo "fuzz target $t failed; the input is saved under fuzz/regressions/$t/" >&2
    for found in artifacts/"$t"/*; do
      [ -f "$found" ] || continue
      cp "$found" regressions/"$t"/
      # The input itself, at the end of the log, so that a run elsewhere can be repeated here:
      # gzip, then base64 (minimized first when that is still long).
      packed="$(gzip -9c "$found" | base64 -w 0)"
      if [ "${#packed}" -gt 6000 ]; then
        cargo fuzz tmin "$t" "$found" -- -max_total_time=60 -artifact_prefix=artifacts/"$t"/min- \
          >/dev/null 2>&1 || true
        small="$(ls -S artifacts/"$t"/min-* 2>/dev/null | tail -n 1)"
        if [ -n "$small" ]; then packed="$(gzip -9c "$small" | base64 -w 0)"; fi
      fi
      if [ "${#packed}" -le 6000 ]; then
        echo "--- $(basename "$found") (base64 -d | gunzip > fuzz/regressions/$t/$(basename "$found")):"
        echo "$packed"
      fi
    done
    exit 1
  fi
  if [ -n "$runs" ]; then rm -rf "$corpus"; fi
done
