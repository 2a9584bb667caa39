#!/usr/bin/env bash
# The seed's table of Tandem fills, both sides in one call (issue 5):
# phobos-bench-tandem-gpu (our GPU fills through wgpu against the zero-fill
# ceiling of the same run) and bench/peers/peers.py (cuRAND Philox4x32-10
# through CuPy and PyTorch against their own memset / zero_ ceilings), one
# table each, the same row names and element counts.
#
#   bench/tandem-table.sh [BINARY] [LOG2_N] [FILTER ...]
#
# BINARY defaults to target/release/phobos-bench-tandem-gpu (build it with
# `cargo build --release -p phobos-bench`); LOG2_N (default 28) and FILTERs
# (substrings of row names) go to both sides. PHOBOS_TANDEM_K picks the K of
# the Rust rows not named K=4. PYTHON picks the interpreter (default
# python3). Where the Vulkan loader is missing but the .deb files of
# PERFORMANCE.md lie in $PHOBOS_GL_DEBS (default .gl), they are unpacked
# first and VK_DRIVER_FILES points at NVIDIA's ICD when it is there.
# A side that fails or is missing prints why; the other still runs.

set -u
cd "$(dirname "$0")/.." || exit 1

bin=target/release/phobos-bench-tandem-gpu
if [ $# -gt 0 ] && { [ -f "$1" ] || [[ "$1" == */* ]]; }; then
    bin=$1
    shift
fi
python=${PYTHON:-python3}

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

start=$(date +%s)
echo "## Tandem fills (Phobos, wgpu) — $(date -u +%Y-%m-%dT%H:%MZ), commit $(git rev-parse --short HEAD 2>/dev/null || echo '?')"
echo
if [ -x "$bin" ]; then
    "$bin" "$@"
    rc=$?
    [ $rc -eq 0 ] || echo "phobos-bench-tandem-gpu exited with status $rc"
else
    echo "n/a: no executable $bin (cargo build --release -p phobos-bench)"
fi
mid=$(date +%s)
echo
echo "## The same rows on the peers (cuRAND through CuPy, PyTorch)"
echo
if command -v "$python" >/dev/null; then
    "$python" bench/peers/peers.py "$@"
    rc=$?
    [ $rc -eq 0 ] || echo "peers.py exited with status $rc"
else
    echo "n/a: no $python"
fi
end=$(date +%s)
echo
echo "(Phobos side $((mid - start)) s, peers $((end - mid)) s)"
