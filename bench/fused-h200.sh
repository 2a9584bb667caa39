#!/usr/bin/env bash
# Issue 14's comparison from one call on the device: softmax + dropout and
# layer norm + dropout (examples/softmax_dropout.ph, layernorm_dropout.ph)
# through `phobosc bench` on the GPU, beside PyTorch eager, torch.compile and
# a fused Triton kernel against the CUDA copy ceiling of the same bytes; then
# `phobosc bench --backend cpu` (Cranelift, every core) beside NumPy's
# unfused version. bench/peers/fused.py does the measuring (its docstring
# says how); this script runs its modes in order and prints the merged
# tables.
#
#   bench/fused-h200.sh [PHOBOSC] [--log2 L] [--cpu-log2 L] [--rows N,..]
#                       [--precision exact,fast] [--no-compile] [--no-gpu] [--no-cpu]
#
# PHOBOSC defaults to target/release/phobosc. GPU rows have 2^L elements
# (default 26), CPU rows 2^L (default 24); rows of N = 1024, 2048, 4096,
# 8192 unless --rows; --precision picks the Phobos GPU precisions (default
# both); --no-compile skips torch.compile. PYTHON picks the interpreter
# (default python3). The Vulkan loader must be set up first (on the device:
# `for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig; export
# VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json`).
# A part that fails or is missing prints why and the others still run.
#
# The Phobos figures are judged against the CUDA copy ceiling of the
# peers' run: neither `phobosc bench` nor `phobos-bench-table` prints
# wgpu's true copy ceiling alone.

set -u
phobosc=target/release/phobosc
if [ $# -gt 0 ] && [[ "$1" != --* ]]; then
    phobosc=$1
    shift
fi
# A path is resolved before the cd below; a bare name is looked up on PATH.
if [[ "$phobosc" == */* ]] && [ -e "$phobosc" ]; then
    phobosc=$(cd "$(dirname "$phobosc")" && pwd)/$(basename "$phobosc")
fi
cd "$(dirname "$0")/.." || exit 1

gpu_log2=26 cpu_log2=24 rows= precision=exact,fast compile=1 gpu=1 cpu=1
while [ $# -gt 0 ]; do
    case $1 in
        --log2) gpu_log2=${2:?--log2 needs a value}; shift 2 ;;
        --cpu-log2) cpu_log2=${2:?--cpu-log2 needs a value}; shift 2 ;;
        --rows) rows=${2:?--rows needs a value}; shift 2 ;;
        --precision) precision=${2:?--precision needs a value}; shift 2 ;;
        --no-compile) compile=0; shift ;;
        --no-gpu) gpu=0; shift ;;
        --no-cpu) cpu=0; shift ;;
        *) echo "unknown argument $1 (see the head of $0)" >&2; exit 2 ;;
    esac
done
python=${PYTHON:-python3}
fused=bench/peers/fused.py
row_args=()
[ -n "$rows" ] && row_args=(--rows "$rows")

dir=$(mktemp -d "${TMPDIR:-/tmp}/phobos-fused.XXXXXX")
trap 'rm -rf "$dir"' EXIT
# One fresh tuning cache for the run: tuned rows tune now, on this device.
export PHOBOS_CACHE_DIR=${PHOBOS_CACHE_DIR:-$dir/cache}

# The device tool's copy of the tree may carry a stale .git: PHOBOS_COMMIT
# names the commit that was built.
commit=${PHOBOS_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo '?')$(git diff --quiet HEAD 2>/dev/null || echo ' + uncommitted changes')}
echo "# Fused softmax / layer norm + dropout (issue 14) — $(date -u +%Y-%m-%dT%H:%MZ), commit $commit"
command -v nvidia-smi >/dev/null \
    && echo "driver: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1)"
echo "host: $(nproc) cores; phobosc: $phobosc; GPU 2^$gpu_log2 elements, CPU 2^$cpu_log2"

have_phobosc=1
if ! command -v "$phobosc" >/dev/null; then
    echo "n/a: no executable $phobosc (cargo build --release -p phobosc); the Phobos rows are skipped"
    have_phobosc=0
fi
if ! command -v "$python" >/dev/null; then
    echo "n/a: no $python; nothing can be measured or merged"
    exit 1
fi

start=$(date +%s)
phase() {
    echo
    echo "## $1 ($(($(date +%s) - start)) s into the run)"
    echo
}
if [ $gpu -eq 1 ]; then
    if [ $have_phobosc -eq 1 ]; then
        phase "Phobos on the GPU (phobosc bench --backend gpu)"
        "$python" "$fused" phobos "$phobosc" --backend gpu --log2 "$gpu_log2" ${row_args[@]+"${row_args[@]}"} \
            --precision "$precision" --timeout 90 --tsv "$dir/phobos-gpu.tsv" \
            || echo "fused.py phobos --backend gpu exited with status $?"
    fi
    phase "Peers on the GPU (PyTorch eager, torch.compile, Triton) and the CUDA copy ceiling"
    compile_args=()
    [ $compile -eq 1 ] || compile_args=(--no-compile)
    "$python" "$fused" gpu --log2 "$gpu_log2" ${row_args[@]+"${row_args[@]}"} --budget 150 \
        ${compile_args[@]+"${compile_args[@]}"} --tsv "$dir/peers-gpu.tsv" \
        || echo "fused.py gpu exited with status $?"
fi
if [ $cpu -eq 1 ]; then
    if [ $have_phobosc -eq 1 ]; then
        phase "Phobos on the CPU (phobosc bench --backend cpu, every core)"
        "$python" "$fused" phobos "$phobosc" --backend cpu --log2 "$cpu_log2" ${row_args[@]+"${row_args[@]}"} \
            --runs 7 --timeout 90 --tsv "$dir/phobos-cpu.tsv" \
            || echo "fused.py phobos --backend cpu exited with status $?"
    fi
    phase "NumPy, unfused, on the CPU"
    "$python" "$fused" numpy --log2 "$cpu_log2" ${row_args[@]+"${row_args[@]}"} --runs 7 --tsv "$dir/numpy.tsv" \
        || echo "fused.py numpy exited with status $?"
fi
phase "Merged"
tsvs=()
for f in "$dir"/*.tsv; do [ -f "$f" ] && tsvs+=("$f"); done
if [ ${#tsvs[@]} -gt 0 ]; then
    "$python" "$fused" report "${tsvs[@]}" || echo "fused.py report exited with status $?"
else
    echo "no figures"
fi
echo
echo "(whole run $(($(date +%s) - start)) s)"
