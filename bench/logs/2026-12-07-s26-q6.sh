#!/bin/bash
# Session 26, sixth call (cfe7e6c, phobosc-i, beside phobosc-h of q5): products
# whose blocks the plan knows to lie inside load straight with no test and
# no staged path (always_direct). Values at 256^3 (always direct) against
# the staged path (PHOBOS_COOP_DIRECT=0) and float64; then speed, fast,
# tuned, median of 21, with the hand-written GEMM and torch.matmul.
for f in .gl/*.deb; do dpkg -x $f / >/dev/null; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
mkdir -p target/dev && for f in target/devz/*.gz; do gzip -dc $f > target/dev/$(basename $f .gz); chmod +x target/dev/$(basename $f .gz); done
B=$PWD/target/dev; P=$B/phobosc-i
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
echo "# $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)"
W=$(mktemp -d)
python3 -c "
import numpy as np; rng=np.random.default_rng(26)
np.save('$W/A.npy', rng.uniform(-1,1,(256,256)).astype(np.float16)); np.save('$W/B.npy', rng.uniform(-1,1,(256,256)).astype(np.float16))"
for v in i s; do
  [ $v = s ] && export PHOBOS_COOP_DIRECT=0
  timeout 20 $P run examples/matmul.ph --backend gpu --precision fast --config BM=64 --config BN=64 --input A=$W/A.npy --input B=$W/B.npy --output C=$W/C_$v.npy --explain 2>&1 | grep -o "loaded straight[^;]*" | head -1
  unset PHOBOS_COOP_DIRECT
done
echo "matmul 256^3: always direct vs staged $(cmp -s $W/C_i.npy $W/C_s.npy && echo same || echo DIFFER)"
python3 bench/s26/check_dot.py $W/A.npy $W/B.npy $W/C_i.npy
row() { # label, binary, then bench arguments
  local label=$1 bin=$2; shift 2
  timeout 100 $bin bench "$@" --backend gpu --precision fast --json 2>/dev/null | python3 -c "
import json,sys; j=json.load(sys.stdin); print('$label\t%.4f ms\tconfig %s wg %s' % (j['median_ms'], j['config'], j['workgroup_size']))" || echo "$label	failed"
}
for n in 2048 4096; do
  MM="--dim M=$n --dim N=$n --dim K=$n"
  [ $n = 2048 ] && row "matmul.ph $n^3 (i)" $P examples/matmul.ph $MM
  for k in mm_f16 mm_f32; do
    row "$k $n^3 (i)" $P bench/s26/matmul_tiles.ph --kernel $k $MM
    row "$k $n^3 (h)" $B/phobosc-h bench/s26/matmul_tiles.ph --kernel $k $MM
  done
done
timeout 60 $B/phobos-bench-gemm 2048 4096 2>&1 | grep -i "coop direct" | head -4
timeout 40 python3 -c "
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
