#!/bin/bash
# Session 22, last call (what the device time left allows): the f32
# rounding of exact `/` read off Q's high word with fewer operations
# (target/dev/phobosc, 79cf10a) against 42a83e7 (target/dev/phobosc-42a83e7):
# its bits (4M division operands, the fused outputs) and three exact
# spellings at rows of 1024 and 4096.
for f in .gl/*.deb; do dpkg -x $f / >/dev/null; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
echo "# commit ${C:-?}; $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)"
t0=$(date +%s)
B=target/dev
echo "## division bits (79cf10a): GPU against the CPU backend, 4M operands"
timeout 60 bench/s21/div-bits.sh $B/phobosc ""
echo "## exact, 79cf10a (round) against 42a83e7"
KERNELS="inv_inline div_triton ln_inline" PRECISIONS=exact BITS=0 timeout 100 \
  bench/spellings-h200.sh round=$B/phobosc s42a83e7=$B/phobosc-42a83e7 2>&1 | grep -v "^#\|^driver\|^binary"
echo "## fused bits (79cf10a)"
WGS="h 1024" timeout 100 bench/fused-bits.sh $B/phobosc 2>&1 | tail -3
echo "took $(( $(date +%s) - t0 )) s"
