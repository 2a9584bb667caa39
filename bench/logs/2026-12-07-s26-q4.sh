#!/bin/bash
# Session 26, fourth call: the standing of issue 29's fast products at the
# end of the session (b0d5672, phobosc-g) against session 25's binary
# (d2720d1, phobosc-n): values first (the same bytes), then matmul.ph, the
# 128 x 128 tiles, Triton's loop over K and the attention forward, with
# the hand-written GEMM, torch.matmul and SDPA with dropout in the same call.
for f in .gl/*.deb; do dpkg -x $f / >/dev/null; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
mkdir -p target/dev && for f in target/devz/*.gz; do gzip -dc $f > target/dev/$(basename $f .gz); chmod +x target/dev/$(basename $f .gz); done
B=$PWD/target/dev; P=$B/phobosc-g
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
echo "# $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)"
W=$(mktemp -d)
python3 - $W <<'PY'
import sys
import numpy as np
out = sys.argv[1]; rng = np.random.default_rng(26)
for name, (m, k, n) in {"sq": (256, 256, 256), "rag": (200, 72, 136)}.items():
    np.save(f"{out}/A_{name}.npy", rng.uniform(-1, 1, (m, k)).astype(np.float16))
    np.save(f"{out}/B_{name}.npy", rng.uniform(-1, 1, (k, n)).astype(np.float16))
for nm in "QKV":
    np.save(f"{out}/{nm}.npy", rng.uniform(-1, 1, (4, 256, 64)).astype(np.float16))
PY
echo "## values, fast: g against n"
ATT="--arg scale=0.125 --arg p=0.1 --arg key=2027"
for v in g n; do
  for case in sq rag; do
    timeout 20 $B/phobosc-$v run examples/matmul.ph --backend gpu --precision fast --config BM=64 --config BN=64 \
      --input A=$W/A_$case.npy --input B=$W/B_$case.npy --output C=$W/C_${case}_$v.npy >/dev/null 2>$W/err || head -3 $W/err
  done
  timeout 20 $B/phobosc-$v run bench/s15/matmul_spellings.ph --kernel matmul_loop --backend gpu --precision fast --config BM=64 --config BN=64 \
    --input A=$W/A_sq.npy --input B=$W/B_sq.npy --output C=$W/L_$v.npy >/dev/null 2>$W/err || head -3 $W/err
  timeout 20 $B/phobosc-$v run examples/attention_dropout.ph --backend gpu --precision fast --config BM=16 --config BN=32 $ATT \
    --input Q=$W/Q.npy --input K=$W/K.npy --input V=$W/V.npy --output O=$W/O_$v.npy --output L=$W/Lse_$v.npy >/dev/null 2>$W/err || head -3 $W/err
done
for f in C_sq C_rag L O Lse; do echo "$f: $(cmp -s $W/${f}_g.npy $W/${f}_n.npy && echo same || echo DIFFER)"; done
python3 bench/s26/check_dot.py $W/A_sq.npy $W/B_sq.npy $W/C_sq_g.npy $W/A_rag.npy $W/B_rag.npy $W/C_rag_g.npy $W/A_sq.npy $W/B_sq.npy $W/L_g.npy
echo "## speed, fast (median of 21, tuned; $(el) s)"
row() { # label, binary, then bench arguments
  local label=$1 bin=$2; shift 2
  timeout 150 $bin bench "$@" --backend gpu --precision fast --json 2>/dev/null | python3 -c "
import json,sys; j=json.load(sys.stdin); print('$label\t%.4f ms\tconfig %s wg %s' % (j['median_ms'], j['config'], j['workgroup_size']))" || echo "$label	failed"
}
for n in 2048 4096; do
  MM="--dim M=$n --dim N=$n --dim K=$n"
  row "matmul.ph $n^3 (g)" $P examples/matmul.ph $MM
  row "matmul.ph $n^3 (n)" $B/phobosc-n examples/matmul.ph $MM
  row "mm_f16 $n^3, BM/BN up to 128 (g)" $P bench/s26/matmul_tiles.ph --kernel mm_f16 $MM
done
row "matmul_loop 2048^3 (g)" $P bench/s15/matmul_spellings.ph --kernel matmul_loop --dim M=2048 --dim N=2048 --dim K=2048
row "matmul_loop 2048^3 (n)" $B/phobosc-n bench/s15/matmul_spellings.ph --kernel matmul_loop --dim M=2048 --dim N=2048 --dim K=2048
for d in 64 128; do
  row "attention forward BH=64 S=1024 D=$d (g)" $P examples/attention_dropout.ph --dim BH=64 --dim S=1024 --dim D=$d $ATT
  row "attention forward BH=64 S=1024 D=$d (n)" $B/phobosc-n examples/attention_dropout.ph --dim BH=64 --dim S=1024 --dim D=$d $ATT
done
echo "## hand-written GEMM ($(el) s)"
timeout 60 $B/phobos-bench-gemm 2048 4096 2>&1 | grep -i "coop direct" | head -4
echo "## peers ($(el) s)"
timeout 120 python3 bench/peers/attention.py 2>&1 | grep "matmul\|S=1024" | head -8
echo "took $(el) s"
