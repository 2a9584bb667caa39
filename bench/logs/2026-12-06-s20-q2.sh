#!/bin/bash
# Session 20, second call (issue 29): bench/attention-h200.sh (the bits of
# 16-bit tensors, `dot` and attention with dropout to $OUT/bits, compared on
# the host with bench/s13/compare.py; then matmul at 2048^3 and attention at
# B*H = 64, S = 1024, D = 64 and 128 beside torch.matmul and SDPA), and the
# hand-written ceilings through wgpu of the same call: phobos-bench-gemm
# (cooperative matrices, GEMM) and phobos-bench-attention (a hand-written
# FlashAttention-2 forward in WGSL with cooperative matrices) when present.
for f in .gl/*.deb; do dpkg -x $f / >/dev/null; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
echo "# commit ${C:-?}; $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)"
t0=$(date +%s)
B=target/dev
timeout 420 bench/attention-h200.sh $B/phobosc
echo "($(( $(date +%s) - t0 )) s)"
echo "## hand-written ceilings"
timeout 60 $B/phobos-bench-gemm 2048 2>&1 | tail -8
[ -x $B/phobos-bench-attention ] && timeout 90 $B/phobos-bench-attention 2>&1 | tail -30
echo "took $(( $(date +%s) - t0 )) s"
