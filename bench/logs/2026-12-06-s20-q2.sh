#!/bin/bash
# Session 20, second call: issue 28's bits on the device (fused-bits.sh),
# then issue 29: the attention forward at larger query and key blocks
# (bench/s20/attention_bm.ph, fast), the hand-written ceilings through wgpu
# (phobos-bench-attention: a FlashAttention-2 forward in WGSL with
# cooperative matrices; phobos-bench-gemm), the bits of bench/attention-h200.sh
# (f16/bf16, `dot` and attention to $OUT/bits, compared on the host by
# bench/s13/compare.py) and the peers (torch.matmul, SDPA with dropout).
for f in .gl/*.deb; do dpkg -x $f / >/dev/null; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
echo "# commit ${C:-?}; $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)"
t0=$(date +%s)
B=target/dev
echo "## issue 28 bits (fused-bits.sh)"
WGS="h 128" SHAPES="M=64,N=1000 M=17,N=8192 M=9,N=4096" timeout 70 bench/fused-bits.sh $B/phobosc 2>&1 | tail -2
echo "## issue 29 bits (attention-h200.sh, BITS_ONLY)"
BITS_ONLY=1 timeout 60 bench/attention-h200.sh $B/phobosc
echo "## attention forward by block size, fast (B*H=64, S=1024, D=64; median ms)"
ATT="--arg scale=0.125 --arg p=0.1 --arg key=2027"
for cfg in "BM=16 BN=32" "BM=32 BN=32" "BM=64 BN=32" "BM=32 BN=64" "BM=64 BN=64"; do
  set -- $cfg
  timeout 40 $B/phobosc bench bench/s20/attention_bm.ph --config $1 --config $2 --dim BH=64 --dim S=1024 --dim D=64 $ATT --precision fast --backend gpu --json 2>/dev/null \
    | python3 -c "import json,sys; j=json.load(sys.stdin); print('$cfg\t%.4f ms\twg %s' % (j['median_ms'], j.get('workgroup_size')))" || echo "$cfg failed"
done
echo "($(( $(date +%s) - t0 )) s)"
echo "## hand-written ceilings"
timeout 100 $B/phobos-bench-attention --s 1024 --d 64,128 2>&1 | tail -30
echo "($(( $(date +%s) - t0 )) s)"
echo "## peers (torch.matmul, SDPA with dropout)"
timeout 90 python3 bench/peers/attention.py 2>&1 | tail -20
timeout 40 $B/phobos-bench-gemm 2048 2>&1 | tail -8
echo "took $(( $(date +%s) - t0 )) s"
