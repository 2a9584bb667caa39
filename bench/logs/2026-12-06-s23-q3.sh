#!/bin/bash
# Session 23, last call (the device time left after the failed starts of
# s23-q2, which never ran): the transposing butterfly (phobosc-t, 8b66b32 or
# any later build of it, "t") against 6695979 ("new"): the reductions' bits with 32-lane
# subgroups, three whole-row spellings in exact mode, the fused bits.
for f in .gl/*.deb; do dpkg -x $f / >/dev/null; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
mkdir -p target/dev && for f in target/devz/phobosc*.gz; do gzip -dc $f > target/dev/$(basename $f .gz); chmod +x target/dev/$(basename $f .gz); done
echo "# commit ${C:-?}; $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)"
t0=$(date +%s)
B=target/dev
echo "## reductions' bits (t): subgroups of 32, workgroup memory, CPU"
timeout 60 bench/reduce-bits.sh $B/phobosc-t 2>&1 | grep -v "equals cpu"
echo "($(( $(date +%s) - t0 )) s)"
echo "## whole rows: t against new"
KERNELS="inv_inline div_triton ln_inline" PRECISIONS=exact BITS=0 timeout 70 \
  bench/spellings-h200.sh t=$B/phobosc-t new=$B/phobosc 2>&1 | grep -v "^#\|^driver\|^binary"
echo "($(( $(date +%s) - t0 )) s)"
echo "## fused bits (t)"
WGS="h" timeout 50 bench/fused-bits.sh $B/phobosc-t 2>&1 | tail -3
echo "took $(( $(date +%s) - t0 )) s"
