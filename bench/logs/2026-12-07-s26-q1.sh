#!/bin/bash
# Session 26, first call: issue 29's tensor-core products with their f16
# operands loaded straight from the tensors (afbb452, phobosc-d) against
# the same binary staging them (PHOBOS_COOP_DIRECT=0) and session 25's
# binary (phobosc-n, d2720d1), beside the hand-written GEMM and
# torch.matmul / SDPA in the same call. Values first: direct and staged
# must give the same bytes, and both stay within 2^-10 of float64.
for f in .gl/*.deb; do dpkg -x $f / >/dev/null; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
mkdir -p target/dev && for f in target/devz/*.gz; do gzip -dc $f > target/dev/$(basename $f .gz); chmod +x target/dev/$(basename $f .gz); done
B=$PWD/target/dev; P=$B/phobosc-d
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
echo "# $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader) d=afbb452 n=d2720d1"
W=$(mktemp -d)
python3 - $W <<'PY'
import sys
import numpy as np
out = sys.argv[1]; rng = np.random.default_rng(26)
for name, (m, k, n) in {"sq": (256, 256, 256), "rag": (200, 72, 136), "k80": (128, 80, 128)}.items():
    np.save(f"{out}/A_{name}.npy", rng.uniform(-1, 1, (m, k)).astype(np.float16))
    np.save(f"{out}/B_{name}.npy", rng.uniform(-1, 1, (k, n)).astype(np.float16))
for nm in "QKV":
    np.save(f"{out}/{nm}.npy", rng.uniform(-1, 1, (4, 256, 64)).astype(np.float16))
PY
echo "## values, fast"
triples=""
for case in sq rag k80; do for cfg in "BM=64 BN=64" "BM=32 BN=16"; do set -- $cfg
  o=$W/C_${case}_${1#BM=}x${2#BN=}
  for v in d s; do
    [ $v = s ] && export PHOBOS_COOP_DIRECT=0
    timeout 20 $P run examples/matmul.ph --backend gpu --precision fast --config $1 --config $2 \
      --input A=$W/A_$case.npy --input B=$W/B_$case.npy --output C=${o}_$v.npy >/dev/null 2>$W/err || head -3 $W/err
    unset PHOBOS_COOP_DIRECT
  done
  echo "matmul $case $1 $2: direct vs staged $(cmp -s ${o}_d.npy ${o}_s.npy && echo same bytes || echo DIFFER)"
  triples="$triples $W/A_$case.npy $W/B_$case.npy ${o}_d.npy"
done; done
python3 bench/s26/check_dot.py $triples
ATT="--arg scale=0.125 --arg p=0.1 --arg key=2027"
for v in d s; do
  [ $v = s ] && export PHOBOS_COOP_DIRECT=0
  timeout 20 $P run examples/attention_dropout.ph --backend gpu --precision fast --config BM=16 --config BN=32 $ATT \
    --input Q=$W/Q.npy --input K=$W/K.npy --input V=$W/V.npy --output O=$W/O_$v.npy --output L=$W/L_$v.npy >/dev/null 2>$W/err || head -3 $W/err
  unset PHOBOS_COOP_DIRECT
done
echo "attention O: direct vs staged $(cmp -s $W/O_d.npy $W/O_s.npy && echo same bytes || echo DIFFER); L: $(cmp -s $W/L_d.npy $W/L_s.npy && echo same || echo DIFFER)"
echo "## the plan on this device (matmul 2048^3, tuned)"
timeout 60 $P bench examples/matmul.ph --backend gpu --precision fast --dim M=2048 --dim N=2048 --dim K=2048 --runs 3 --explain 2>&1 | grep -i "dot\|workgroup\|config" | head -8
echo "## speed, fast (median of 21, tuned; $(el) s)"
row() { # label, binary, then bench arguments
  local label=$1 bin=$2; shift 2
  timeout 150 $bin bench "$@" --backend gpu --precision fast --json 2>/dev/null | python3 -c "
import json,sys; j=json.load(sys.stdin); print('$label\t%.4f ms\tconfig %s wg %s' % (j['median_ms'], j['config'], j.get('workgroup_size', j.get('provenance', {}).get('workgroup_size'))))" || echo "$label	failed"
}
for n in 2048 4096; do
  MM="examples/matmul.ph --dim M=$n --dim N=$n --dim K=$n"
  row "matmul $n^3 direct (d)" $P $MM
  PHOBOS_COOP_DIRECT=0 row "matmul $n^3 staged (d)" $P $MM
  row "matmul $n^3 session 25 (n)" $B/phobosc-n $MM
done
row "matmul_loop 2048^3 direct (d)" $P bench/s15/matmul_spellings.ph --kernel matmul_loop --dim M=2048 --dim N=2048 --dim K=2048
for d in 64 128; do
  AT="examples/attention_dropout.ph --dim BH=64 --dim S=1024 --dim D=$d $ATT"
  row "attention forward BH=64 S=1024 D=$d direct (d)" $P $AT
  PHOBOS_COOP_DIRECT=0 row "attention forward BH=64 S=1024 D=$d staged (d)" $P $AT
done
echo "## hand-written GEMM ($(el) s)"
timeout 60 $B/phobos-bench-gemm 2048 4096 2>&1 | grep -i "coop\|#" | head -8
echo "## peers ($(el) s)"
timeout 120 python3 bench/peers/attention.py 2>&1 | grep "matmul\|S=1024" | head -8
echo "took $(el) s"
