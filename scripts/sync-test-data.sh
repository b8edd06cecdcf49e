#!/usr/bin/env bash
# Copy the fixtures the library's unit tests read into the library's own folder, so that they
# travel in its package (`cargo package -p rke2-payload`) and its tests run from crates.io's
# copy. `testdata/` stays the source (written by `testdata/gen/generate.py`); a unit test
# (`testdata::the_copies_are_the_repository_s`) fails when a copy and its source differ.
set -euo pipefail
cd "$(dirname "$0")/.."

src=testdata/secrets
dst=crates/rke2-payload/tests/data/secrets
rm -rf "$dst"
mkdir -p "$dst"
# Every file but the JSON copies of the Lists (no unit test reads them): the index, every single
# Secret and its user data, the two YAML Lists and the multi-document file.
for file in "$src"/*; do
  case "$(basename "$file")" in
    list-*.json) ;;
    *) cp "$file" "$dst"/ ;;
  esac
done
cp testdata/go-gzip-sizes.json crates/rke2-payload/tests/data/go-gzip-sizes.json
echo "copied $(find "$dst" -type f | wc -l) files into $dst"
