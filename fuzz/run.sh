#!/usr/bin/env bash
# Runs fuzz targets on this project's stable toolchain.
#   fuzz/run.sh [SECONDS] [TARGET...]     default: 10 seconds, every target
# Seeds each corpus from testdata/ and fuzz/regressions/, uses the keys dictionary, and copies
# any crash into fuzz/regressions/<target>/ so plain `cargo test` guards it from then on.
set -euo pipefail
cd "$(dirname "$0")"
seconds="${1:-10}"; shift || true
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  targets=(envelope stream payload cloudconfig ignition dataurl pki rke2_config inspect roundtrip redact convert terminal render)
fi
export RUSTC_BOOTSTRAP=1 CARGO_CACHE_RUSTC_INFO=0
for t in "${targets[@]}"; do
  corpus="corpus/$t"
  mkdir -p "$corpus" "regressions/$t" artifacts/"$t"
  case "$t" in
    envelope|inspect|stream) cp -n ../testdata/secrets/*.yaml ../testdata/secrets/*.json ../testdata/bad/* "$corpus"/ 2>/dev/null || true ;;
    payload|cloudconfig|ignition|convert) cp -n ../testdata/secrets/*.userdata "$corpus"/ 2>/dev/null || true ;;
    pki) cp -n ../testdata/gen/keys/*.crt ../testdata/gen/keys/*.key "$corpus"/ 2>/dev/null || true ;;
    render) cp -n ../testdata/manifests/*.yaml "$corpus"/ 2>/dev/null || true ;;
    *) ;;
  esac
  cp -n regressions/"$t"/* "$corpus"/ 2>/dev/null || true
  echo "--- fuzz $t for ${seconds}s"
  if ! cargo fuzz run "$t" "$corpus" -- -max_total_time="$seconds" -dict=dict/keys.dict \
      -rss_limit_mb=2048 -timeout=10 -artifact_prefix=artifacts/"$t"/ -print_final_stats=1; then
    cp artifacts/"$t"/* regressions/"$t"/ 2>/dev/null || true
    echo "fuzz target $t failed; the input is saved under fuzz/regressions/$t/" >&2
    exit 1
  fi
done
