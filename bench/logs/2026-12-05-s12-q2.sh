#!/bin/bash
# Session 12, second call: issue 28's spellings (tests/spellings/) before
# (f69eca2, target/base/phobosc) and after the plan (target/release/phobosc,
# with row-uniform values hoisted out of reductions too) at rows of 1024 and
# 4096 over 2^26 f32 elements, both modes, tuned at first launch; the fused
# Triton kernels and the CUDA copy ceiling of the same call; then the bits of
# every spelling, R and four shapes on the GPU against the CPU backend.
for f in .gl/*.deb; do dpkg -x $f / >/dev/null; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
echo "# commit ${C:-?}; $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)"
t0=$(date +%s)
timeout 120 python3 bench/peers/fused.py gpu --log2 26 --rows 1024,4096 --budget 100 --no-compile > $OUT/peers.txt 2>&1
echo "peers took $(( $(date +%s) - t0 )) s"; grep "Triton fused\|CUDA copy" $OUT/peers.txt | grep "^peers" | cut -f3-9
t0=$(date +%s)
ROWS="1024 4096" BITS=1 PHOBOS_COMMIT=${C:-?} timeout 400 bench/spellings-h200.sh new=target/release/phobosc base=target/base/phobosc > $OUT/spellings.txt 2>&1
echo "spellings took $(( $(date +%s) - t0 )) s"; cat $OUT/spellings.txt
