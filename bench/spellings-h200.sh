#!/usr/bin/env bash
# Issue 28's comparison from one call on the device: every spelling of
# softmax + dropout and layer norm + dropout in tests/spellings/ through
# `phobosc bench` on the GPU (tuned at first launch, a fresh tuning cache
# per binary), in exact and fast mode, at rows of each N in ROWS over
# 2^LOG2 elements; then the bits of each spelling on the GPU against the
# CPU backend (Cranelift, bit-exact with the interpreter) in exact mode.
#
#   bench/spellings-h200.sh LABEL=PHOBOSC [LABEL=PHOBOSC ...]
#
# Several binaries (the commit before and after a change) are measured
# side by side in one call. ROWS (default "1024 4096"), LOG2 (26), KERNELS
# (default: every kernel of both files), PRECISIONS ("exact fast") and
# BITS (1: compare bits; 0: skip) override. The Vulkan loader must be set
# up first (bench/fused-h200.sh's head says how).
set -u
cd "$(dirname "$0")/.." || exit 1
rows=${ROWS:-1024 4096}
log2=${LOG2:-26}
precisions=${PRECISIONS:-exact fast}
files=${FILES:-"tests/spellings/softmax.ph tests/spellings/layernorm.ph"}
names() { grep -o '^kernel [a-z_0-9]*' "$1" | cut -d' ' -f2; }
echo "# spellings (issue 28) — $(date -u +%Y-%m-%dT%H:%MZ), commit ${PHOBOS_COMMIT:-?}"
command -v nvidia-smi >/dev/null && echo "driver: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1)"
printf 'binary\tfile\tkernel\tN\tprecision\tmedian_GiB/s\tfastest_GiB/s\tconfig\n'
for spec in "$@"; do
    label=${spec%%=*} bin=${spec#*=}
    cache=$(mktemp -d)
    for f in $files; do
        for k in ${KERNELS:-$(names "$f")}; do
            grep -q "^kernel $k(" "$f" || continue
            for n in $rows; do
                m=$(( (1 << log2) / n ))
                for p in $precisions; do
                    j=$(PHOBOS_CACHE_DIR=$cache timeout 120 "$bin" bench --backend gpu --precision "$p" --json --runs 21 \
                        --dim M=$m --dim N=$n --arg seed=7 --kernel "$k" "$f" 2>/dev/null)
                    python3 - "$label" "$f" "$k" "$n" "$p" "$j" <<'PY'
import json, sys
label, f, k, n, p, out = sys.argv[1:]
try:
    j = json.loads(out[out.index("{"):])
    cfg = ",".join("%s=%s" % kv for kv in sorted(j.get("config", {}).items()))
    print("\t".join([label, f.split("/")[-1], k, n, p, "%.0f" % j["median_gib_s"], "%.0f" % j["fastest_gib_s"],
                     "%s wg%s" % (cfg, j.get("workgroup_size"))]), flush=True)
except Exception as e:
    print("\t".join([label, f.split("/")[-1], k, n, p, "n/a", "n/a", str(e)[:60]]), flush=True)
PY
                done
            done
        done
    done
    rm -rf "$cache"
done
[ "${BITS:-1}" = 1 ] || exit 0
# Bits: the first binary given, every spelling and R, GPU against CPU.
bin=$1; bin=${bin#*=}
d=$(mktemp -d); bad=0; count=0
for f in $files; do
    for k in $(names "$f"); do
        for r in 1 2 4; do
            for mn in "M=64 N=1000" "M=17 N=8192" "M=300 N=256" "M=9 N=4096"; do
                set -- $mn
                a=(--kernel "$k" --config R=$r --dim "$1" --dim "$2" --arg seed=7 --no-tune)
                "$bin" run "$f" "${a[@]}" --backend gpu --output Y=$d/g.npy >/dev/null 2>$d/err || { echo "$k R=$r $mn: gpu failed: $(tail -1 $d/err)"; bad=1; continue; }
                "$bin" run "$f" "${a[@]}" --backend cpu --output Y=$d/c.npy >/dev/null 2>$d/err || { echo "$k R=$r $mn: cpu failed: $(tail -1 $d/err)"; bad=1; continue; }
                count=$((count + 1))
                cmp -s $d/g.npy $d/c.npy || { echo "$k R=$r $mn: DIFFERENT"; bad=1; }
            done
        done
    done
done
rm -rf "$d"
echo "bits: compared $count; $([ $bad = 0 ] && echo 'all identical' || echo 'DIFFERENCES')"
