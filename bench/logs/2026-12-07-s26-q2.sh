#!/bin/bash
# Session 26, second call: the store that takes a product's tiles as the
# subgroups finish them and the loop over K that carries its accumulators (b477728, phobosc-e) against the first call's
# binary (afbb452, phobosc-d) and session 25's (d2720d1, phobosc-n); the
# values first (every binary and knob must give the same bytes), then
# matmul.ph, larger tiles (bench/s26/matmul_tiles.ph: f16 and f32
# outputs), Triton's loop over K and the attention forward, fast, tuned.
for f in .gl/*.deb; do dpkg -x $f / >/dev/null; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
mkdir -p target/dev && for f in target/devz/*.gz; do gzip -dc $f > target/dev/$(basename $f .gz); chmod +x target/dev/$(basename $f .gz); done
B=$PWD/target/dev; P=$B/phobosc-e
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
echo "# $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader) e=b477728 d=afbb452 n=d2720d1"
W=$(mktemp -d)
python3 - $W <<'PY'
import sys
import numpy as np
out = sys.argv[1]; rng = np.random.default_rng(26)
for name, (m, k, n) in {"sq": (256, 256, 256), "rag": (200, 72, 136)}.items():
    np.save(f"{out}/A_{name}.npy", rng.uniform(-1, 1, (m, k)).astype(np.float16))
    np.save(f"{out}/B_{name}.npy", rng.uniform(-1, 1, (k, n)).astype(np.float16))
PY
echo "## values, fast"
triples=""
for case in sq rag; do for cfg in "BM=64 BN=64" "BM=32 BN=16"; do set -- $cfg
  o=$W/C_${case}_${1#BM=}x${2#BN=}
  for v in e es d n; do
    bin=$B/phobosc-${v%s}; [ $v = es ] && export PHOBOS_COOP_DIRECT=0
    timeout 20 $bin run examples/matmul.ph --backend gpu --precision fast --config $1 --config $2 \
      --input A=$W/A_$case.npy --input B=$W/B_$case.npy --output C=${o}_$v.npy >/dev/null 2>$W/err || head -3 $W/err
    unset PHOBOS_COOP_DIRECT
  done
  echo "matmul $case $1 $2: e vs e staged / d / n: $(for v in es d n; do cmp -s ${o}_e.npy ${o}_$v.npy && echo -n "same " || echo -n "DIFFER "; done)"
  triples="$triples $W/A_$case.npy $W/B_$case.npy ${o}_e.npy"
done; done
for v in e n; do
  timeout 20 $B/phobosc-$v run bench/s15/matmul_spellings.ph --kernel matmul_loop --backend gpu --precision fast --config BM=64 --config BN=64 \
    --input A=$W/A_sq.npy --input B=$W/B_sq.npy --output C=$W/L_$v.npy >/dev/null 2>$W/err || head -3 $W/err
done
echo "matmul_loop sq 64x64: e vs n $(cmp -s $W/L_e.npy $W/L_n.npy && echo same || echo DIFFER)"
triples="$triples $W/A_sq.npy $W/B_sq.npy $W/L_e.npy"
python3 bench/s26/check_dot.py $triples
echo "## the plan on this device (matmul 2048^3, tuned; $(el) s)"
timeout 60 $P bench examples/matmul.ph --backend gpu --precision fast --dim M=2048 --dim N=2048 --dim K=2048 --runs 3 --explain 2>&1 | grep -i "dot\|workgroup\|config" | head -8
echo "## speed, fast (median of 21, tuned; $(el) s)"
row() { # label, binary, then bench arguments
  local label=$1 bin=$2; shift 2
  timeout 150 $bin bench "$@" --backend gpu --precision fast --json 2>/dev/null | python3 -c "
import json,sys; j=json.load(sys.stdin); print('$label\t%.4f ms\tconfig %s wg %s' % (j['median_ms'], j['config'], j['workgroup_size']))" || echo "$label	failed"
}
for n in 2048 4096; do
  MM="--dim M=$n --dim N=$n --dim K=$n"
  row "matmul.ph $n^3 (e)" $P examples/matmul.ph $MM
  row "matmul.ph $n^3 (d)" $B/phobosc-d examples/matmul.ph $MM
  row "mm_f16 $n^3, BM/BN up to 128 (e)" $P bench/s26/matmul_tiles.ph --kernel mm_f16 $MM
  row "mm_f32 $n^3, BM/BN up to 128 (e)" $P bench/s26/matmul_tiles.ph --kernel mm_f32 $MM
done
row "matmul_loop 2048^3 (e)" $P bench/s15/matmul_spellings.ph --kernel matmul_loop --dim M=2048 --dim N=2048 --dim K=2048
ATT="--arg scale=0.125 --arg p=0.1 --arg key=2027"
row "attention forward BH=64 S=1024 D=64 (e)" $P examples/attention_dropout.ph --dim BH=64 --dim S=1024 --dim D=64 $ATT
echo "## hand-written GEMM ($(el) s)"
timeout 60 $B/phobos-bench-gemm 2048 4096 2>&1 | grep -i "coop" | head -8
echo "## peers ($(el) s)"
timeout 60 python3 -c "
import torch,statistics
for n in (2048,4096):
    a=torch.randn(n,n,device='cuda',dtype=torch.float16); b=torch.randn(n,n,device='cuda',dtype=torch.float16)
    for _ in range(3): a@b
    ms=[]
    for _ in range(21):
        s=torch.cuda.Event(enable_timing=True); e=torch.cuda.Event(enable_timing=True); s.record(); a@b; e.record(); torch.cuda.synchronize(); ms.append(s.elapsed_time(e))
    m=statistics.median(ms); print(f'peer\tmatmul f16\t{n}^3\t{m:.4f} ms\t{2*n**3/m/1e9:.1f} TFLOP/s')
"
echo "took $(el) s"
