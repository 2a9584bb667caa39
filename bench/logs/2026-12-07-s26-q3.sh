#!/bin/bash
# Session 26, third call: whole f16 words stored with one atomic store
# (c597a19, phobosc-f: also no barrier in the carried loop) against b477728 (phobosc-e); values first (same
# bytes), then matmul.ph and the 128 x 128 tiles, fast, tuned, with the
# hand-written GEMM and torch.matmul in the same call.
for f in .gl/*.deb; do dpkg -x $f / >/dev/null; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
mkdir -p target/dev && for f in target/devz/*.gz; do gzip -dc $f > target/dev/$(basename $f .gz); chmod +x target/dev/$(basename $f .gz); done
B=$PWD/target/dev
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
echo "# $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader) f=c597a19 e=b477728"
W=$(mktemp -d)
python3 - $W <<'PY'
import sys
import numpy as np
out = sys.argv[1]; rng = np.random.default_rng(26)
for name, (m, k, n) in {"sq": (256, 256, 256), "rag": (200, 72, 136), "odd": (96, 64, 72)}.items():
    np.save(f"{out}/A_{name}.npy", rng.uniform(-1, 1, (m, k)).astype(np.float16))
    np.save(f"{out}/B_{name}.npy", rng.uniform(-1, 1, (k, n)).astype(np.float16))
PY
echo "## values, fast"
triples=""
for case in sq rag odd; do for cfg in "BM=64 BN=64" "BM=32 BN=16"; do set -- $cfg
  o=$W/C_${case}_${1#BM=}x${2#BN=}
  for v in f e; do
    timeout 20 $B/phobosc-$v run examples/matmul.ph --backend gpu --precision fast --config $1 --config $2 \
      --input A=$W/A_$case.npy --input B=$W/B_$case.npy --output C=${o}_$v.npy >/dev/null 2>$W/err || head -3 $W/err
  done
  echo "matmul $case $1 $2: f vs e $(cmp -s ${o}_f.npy ${o}_e.npy && echo same || echo DIFFER)"
  triples="$triples $W/A_$case.npy $W/B_$case.npy ${o}_f.npy"
done; done
python3 bench/s26/check_dot.py $triples
echo "## speed, fast (median of 21, tuned; $(el) s)"
row() { # label, binary, then bench arguments
  local label=$1 bin=$2; shift 2
  timeout 150 $bin bench "$@" --backend gpu --precision fast --json 2>/dev/null | python3 -c "
import json,sys; j=json.load(sys.stdin); print('$label\t%.4f ms\tconfig %s wg %s' % (j['median_ms'], j['config'], j['workgroup_size']))" || echo "$label	failed"
}
for n in 2048 4096; do
  MM="--dim M=$n --dim N=$n --dim K=$n"
  for v in f e; do
    row "matmul.ph $n^3 ($v)" $B/phobosc-$v examples/matmul.ph $MM
    row "mm_f16 $n^3, BM/BN up to 128 ($v)" $B/phobosc-$v bench/s26/matmul_tiles.ph --kernel mm_f16 $MM
  done
done
for v in f e; do
  row "matmul_loop 2048^3 ($v)" $B/phobosc-$v bench/s15/matmul_spellings.ph --kernel matmul_loop --dim M=2048 --dim N=2048 --dim K=2048
done
for v in f e; do
  timeout 20 $B/phobosc-$v run bench/s15/matmul_spellings.ph --kernel matmul_loop --backend gpu --precision fast --config BM=64 --config BN=64 \
    --input A=$W/A_sq.npy --input B=$W/B_sq.npy --output C=$W/L_$v.npy >/dev/null 2>$W/err || head -3 $W/err
done
echo "matmul_loop sq 64x64: f vs e $(cmp -s $W/L_f.npy $W/L_e.npy && echo same || echo DIFFER)"
echo "## hand-written GEMM ($(el) s)"
timeout 60 $B/phobos-bench-gemm 2048 4096 2>&1 | grep -i "coop direct" | head -4
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
