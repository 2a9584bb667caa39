#!/bin/bash
# Session 12, first call: issue 28's spellings (tests/spellings/) before
# (f69eca2, target/base/phobosc) and after the plan (target/release/phobosc)
# at rows of 1024 over 2^26 f32 elements, both modes, tuned at first launch;
# the fused Triton kernels and the CUDA copy ceiling of the same call.
for f in .gl/*.deb; do dpkg -x $f / >/dev/null; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
echo "# commit ${C:-?}; $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)"
t0=$(date +%s)
ROWS="1024" BITS=0 PHOBOS_COMMIT=${C:-?} timeout 300 bench/spellings-h200.sh new=target/release/phobosc base=target/base/phobosc > $OUT/spellings-1024.txt 2>&1
echo "spellings took $(( $(date +%s) - t0 )) s"; cat $OUT/spellings-1024.txt
t0=$(date +%s)
timeout 200 python3 bench/peers/fused.py gpu --log2 26 --rows 1024,4096 --budget 150 --no-compile > $OUT/peers.txt 2>&1
echo "peers took $(( $(date +%s) - t0 )) s"; grep -v "^#" $OUT/peers.txt | tail -30
