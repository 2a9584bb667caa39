#!/usr/bin/env bash
# Builds the playground's assets into playground/dist/, which `phobosc`
# embeds (compiler/cli/build.rs) and `phobosc serve` serves:
#   phobos_playground.wasm  the compiler (this crate) for wasm32, size-optimised
#   app.js, worker.js       the page and its interpreter worker, with CodeMirror 6,
#                           bundled offline by esbuild from web/node_modules
#   index.html, style.css   copied from web/
# Needs `rustup target add wasm32-unknown-unknown` and `npm ci` in web/ (this
# script runs it when node_modules is missing). wasm-opt (Debian's binaryen)
# runs when it is on PATH; see README.md for what it saves.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
out="$here/dist"
target="${CARGO_TARGET_DIR:-$here/../target}"
mkdir -p "$out"
# Size over speed for the wasm: opt-level s, one codegen unit, LTO, no
# unwinding, no symbols. Set through the environment so that the workspace's
# release profile (benchmarks) is left as it is.
CARGO_PROFILE_RELEASE_OPT_LEVEL=s CARGO_PROFILE_RELEASE_LTO=true \
CARGO_PROFILE_RELEASE_CODEGEN_UNITS=1 CARGO_PROFILE_RELEASE_PANIC=abort \
CARGO_PROFILE_RELEASE_STRIP=true \
  cargo build --manifest-path "$here/Cargo.toml" -p phobos-playground \
    --target wasm32-unknown-unknown --release --target-dir "$target/playground-wasm"
wasm="$target/playground-wasm/wasm32-unknown-unknown/release/phobos_playground.wasm"
if command -v wasm-opt >/dev/null && [ -z "${PHOBOS_NO_WASM_OPT:-}" ]; then
  wasm-opt -Oz --enable-bulk-memory --enable-sign-ext --enable-nontrapping-float-to-int \
    --enable-mutable-globals --enable-reference-types --enable-multivalue "$wasm" -o "$out/phobos_playground.wasm.tmp"
  mv "$out/phobos_playground.wasm.tmp" "$out/phobos_playground.wasm"
else
  cp "$wasm" "$out/phobos_playground.wasm"
fi
cd "$here/web"
[ -d node_modules ] || npm ci --no-audit --no-fund
common=(--bundle --format=esm --target=es2022 --minify --legal-comments=none --loader:.ph=text)
node_modules/.bin/esbuild src/main.js "${common[@]}" --outfile="$out/app.js" --log-level=warning
node_modules/.bin/esbuild src/worker.js "${common[@]}" --outfile="$out/worker.js" --log-level=warning
cp index.html style.css "$out/"
ls -l "$out"
