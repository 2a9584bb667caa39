#!/usr/bin/env bash
# Every module `phobosc build` writes for every example, ok fixture and
# spelling, in every configuration and both precisions, into DIR: with its
# dims symbolic, and specialised to the file's `// dims:` line where it has
# one (as a launch specialises it). One directory per file, precision and
# dims; a file the build refuses leaves its message in `error.txt`. Run it before and after a change that must not
# move bits, then `diff -r BEFORE AFTER`.
#
#   tests/build-all.sh DIR [PHOBOSC]    (PHOBOSC: default target/debug/phobosc)
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: tests/build-all.sh DIR [PHOBOSC]}
phobosc=${2:-${CARGO_TARGET_DIR:-target}/debug/phobosc}
mkdir -p "$out"
build() { # DIR FILE ARGS...
  local d=$1 f=$2; shift 2
  rm -rf "$d"; mkdir -p "$d"
  if ! "$phobosc" build "$f" -o "$d" "$@" 2>"$d/stderr.txt"; then
    mv "$d/stderr.txt" "$d/error.txt"
  else
    rm "$d/stderr.txt"
  fi
}
for f in examples/*.ph tests/fixtures/ok/*.ph tests/spellings/*.ph; do
  stem="$out/$(basename "${f%.ph}")-$(basename "$(dirname "$f")")"
  dims=()
  for x in $(sed -n 's|^// dims: *||p' "$f" | head -1 | tr ',' ' '); do dims+=(--dim "$x"); done
  for p in exact fast; do
    build "$stem-$p" "$f" --precision "$p"
    [ ${#dims[@]} -eq 0 ] || build "$stem-$p-dims" "$f" --precision "$p" "${dims[@]}"
  done
done
echo "built into $out: $(find "$out" -name '*.wgsl' | wc -l) WGSL, $(find "$out" -name '*.spv' | wc -l) SPIR-V, $(find "$out" -name error.txt | wc -l) refused"
