#!/bin/bash
# Session 14, the short call for what device time was left after the
# refusals: q1's first items only. The GEMM ceilings, fast mode's matmul
# output on tensor cores (for bench/s14/fast_error.py), then matmul's speed
# on tensor cores and exact, and torch.matmul's.
for f in .gl/*.deb; do dpkg -x $f / >/dev/null; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
echo "# commit ${C:-?}; $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)"
t0=$(date +%s)
B=target/dev; P=$B/phobosc; D=bench/s13/data
timeout 60 $B/phobos-bench-gemm 4096 2>&1 | tail -7
echo "($(( $(date +%s) - t0 )) s)"
F=$OUT/fast; mkdir -p $F
timeout 25 $P run examples/matmul.ph --backend gpu --precision fast --config BM=32 --config BN=64 --input A=$D/A.npy --input B=$D/Bm.npy \
  --output C=$F/C.32x64.npy 2>&1 | grep -i "error\|lowering\|backend" | head -4
MM="examples/matmul.ph --dim M=2048 --dim N=2048 --dim K=2048"
for prec in fast exact; do
  timeout 30 $P bench $MM --precision $prec --backend gpu --json 2>/dev/null | python3 -c "
import json,sys; j=json.load(sys.stdin); print('phobos matmul 2048^3 %s: %.4f ms, %.2f TFLOP/s, config %s' % (j['precision'], j['median_ms'], 2*2048**3/j['median_ms']/1e9, j['config']))" || echo "matmul $prec failed or timed out"
done
echo "($(( $(date +%s) - t0 )) s)"
timeout 40 python3 -c "
import torch
a=torch.randn(4096,4096,device='cuda',dtype=torch.float16); b=torch.randn_like(a)
for _ in range(3): a@b
torch.cuda.synchronize(); s=torch.cuda.Event(enable_timing=True); e=torch.cuda.Event(enable_timing=True)
ms=[]
for _ in range(21):
    s.record(); a@b; e.record(); torch.cuda.synchronize(); ms.append(s.elapsed_time(e))
ms.sort(); print('torch.matmul f16 4096^3: %.4f ms, %.1f TFLOP/s' % (ms[10], 2*4096**3/ms[10]/1e9))
" 2>&1 | tail -2
echo "took $(( $(date +%s) - t0 )) s"
