#!/bin/sh
# Packs what fuzz/device-run.sh needs on a machine without a Rust toolchain
# into fuzz/carry/ (git-ignored): the front_end target built here (libFuzzer,
# no sanitizer, debug info stripped), the C++ runtime it links, and its corpus, merged to a minimal set
# that keeps the coverage, as a tarball. Run from anywhere, after
# fuzz/seed.sh (and any runs that grew fuzz/corpus/front_end).
#
# Environment: CARGO_TARGET_DIR (default fuzz/target), as cargo-fuzz uses it.
set -eu
cd "$(dirname "$0")"
target_dir=${CARGO_TARGET_DIR:-target}
cargo +nightly fuzz build -s none --target-dir "$target_dir" front_end
bin="$target_dir/x86_64-unknown-linux-gnu/release/front_end"
rm -rf carry
mkdir -p carry/corpus
objcopy --strip-debug "$bin" carry/front_end
# libFuzzer is C++: carry the C++ runtime it links, for a machine without
# one (device-run.sh uses it only when the binary does not start without).
mkdir -p carry/lib
for lib in libstdc++.so.6 libgcc_s.so.1; do
    cp -L "$(ldd carry/front_end | awk -v l="$lib" '$1 == l { print $3 }')" carry/lib/
done
# The minimal corpus with the same coverage; crashes in it would stop here.
./carry/front_end -merge=1 -rss_limit_mb=2048 -timeout=10 carry/corpus corpus/front_end \
    > carry/merge.log 2>&1
tar -C carry -czf carry/corpus.tar.gz corpus
rm -rf carry/corpus
ls -l carry/front_end carry/lib carry/corpus.tar.gz
du -sh carry
