#!/usr/bin/env bash
# Issue 11's one table from one call: phobos-bench-table (Tandem fills, the
# seed's dropout_rows, Tandem dropout and noise, compile rows, the ceilings'
# ablations, all against the true ceilings of its own run) and
# bench/peers/peers.py --table (cuRAND through CuPy, PyTorch, and Triton
# kernels written for the comparison, against the fastest CUDA memset /
# copy of its own run), then both sides merged into one table by peers.py.
#
#   bench/table.sh [BINARY] [LOG2_N] [--no-compile] [--no-ablations]
#
# BINARY defaults to target/release/phobos-bench-table (build it with
# `cargo build --release -p phobos-bench`); LOG2_N (default 28) goes to both
# sides; --no-compile skips the compile rows of both, --no-ablations the
# Rust side's ablations. PYTHON picks the interpreter (default python3).
# Where the Vulkan loader is missing but the .deb files of PERFORMANCE.md lie
# in $PHOBOS_GL_DEBS (default .gl), they are unpacked first and
# VK_DRIVER_FILES points at NVIDIA's ICD when it is there. A side that fails
# or is missing prints why; the other still runs, and the merged table shows
# n/a where a side has no figure.

set -u
cd "$(dirname "$0")/.." || exit 1

bin=target/release/phobos-bench-table
if [ $# -gt 0 ] && { [ -f "$1" ] || [[ "$1" == */* ]]; }; then
    bin=$1
    shift
fi
python=${PYTHON:-python3}
rust_args=()
peer_args=()
for a in "$@"; do
    rust_args+=("$a")
    [ "$a" = --no-ablations ] || peer_args+=("$a")
done

# The Vulkan loader, as PERFORMANCE.md's "Running wgpu on the device machine".
debs=${PHOBOS_GL_DEBS:-.gl}
if ! ldconfig -p 2>/dev/null | grep -q 'libvulkan\.so\.1' \
    && compgen -G "$debs/*.deb" >/dev/null && command -v dpkg >/dev/null; then
    echo "(unpacking the Vulkan loader from $debs)"
    for f in "$debs"/*.deb; do dpkg -x "$f" / || echo "dpkg -x $f failed"; done
    ldconfig || true
fi
icd=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
if [ -z "${VK_DRIVER_FILES:-}" ] && [ -f "$icd" ]; then
    export VK_DRIVER_FILES=$icd
fi

tsv=$(mktemp "${TMPDIR:-/tmp}/phobos-table.XXXXXX")
trap 'rm -f "$tsv"' EXIT

start=$(date +%s)
# The device tool's copy of the tree may carry a stale .git: PHOBOS_COMMIT
# names the commit that was built.
commit=${PHOBOS_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo '?')$(git diff --quiet HEAD 2>/dev/null || echo ' + uncommitted changes')}
echo "# One table (issue 11) — $(date -u +%Y-%m-%dT%H:%MZ), commit $commit"
command -v nvidia-smi >/dev/null \
    && echo "driver: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1)"
echo
echo "## Phobos (wgpu)"
echo
if [ -x "$bin" ]; then
    "$bin" --tsv "$tsv" ${rust_args[@]+"${rust_args[@]}"}
    rc=$?
    [ $rc -eq 0 ] || echo "phobos-bench-table exited with status $rc"
else
    echo "n/a: no executable $bin (cargo build --release -p phobos-bench)"
fi
mid=$(date +%s)
echo
echo "## Peers (cuRAND through CuPy, PyTorch, Triton) and the merged table"
echo
if command -v "$python" >/dev/null; then
    "$python" bench/peers/peers.py --table ${peer_args[@]+"${peer_args[@]}"} --phobos "$tsv"
    rc=$?
    [ $rc -eq 0 ] || echo "peers.py exited with status $rc"
else
    echo "n/a: no $python"
fi
end=$(date +%s)
echo
echo "(Phobos side $((mid - start)) s, peers $((end - mid)) s)"
