#!/bin/bash
# Session 23, first call (issue 28).
# - The levels above whole subgroups in one barrier on the own-block path,
#   with slots alternating between two halves so a fold in a loop waits
#   once an iteration (target/dev/phobosc, 6695979 "new") against HEAD
#   before it (phobosc-base, 1b21e50): chunked loops and whole rows.
# - The f32 rounding of exact `/` read off Q's high word (79cf10a, in
#   base) against 42a83e7 (phobosc-42a83e7), never measured (s22-q3).
# - Fast-mode standing, fused bits of "new", fused Triton in the same call.
# Binaries travel gzipped (target/devz) to fit the carry limit.
for f in .gl/*.deb; do dpkg -x $f / >/dev/null; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
mkdir -p target/dev && for f in target/devz/*.gz; do gzip -dc $f > target/dev/$(basename $f .gz); chmod +x target/dev/$(basename $f .gz); done
echo "# commit ${C:-?}; $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)"
t0=$(date +%s)
B=target/dev
echo "## WGSL ceilings (phobos-bench-gpu 26)"
timeout 60 $B/phobos-bench-gpu 26 2>&1 | grep -i "device\|zero fill, true" | head -3
echo "## division bits (new): GPU against the CPU backend, 4M operands"
timeout 60 bench/s21/div-bits.sh $B/phobosc ""
echo "## chunked loops: new against base"
FILES="bench/s18/chunked.ph examples/softmax_dropout_chunked.ph examples/layernorm_dropout_chunked.ph" BITS=0 timeout 200 \
  bench/spellings-h200.sh new=$B/phobosc base=$B/phobosc-base 2>&1 | grep -v "^#\|^driver\|^binary"
echo "($(( $(date +%s) - t0 )) s)"
echo "## whole rows: new (exact, fast), base and 42a83e7 (exact)"
KERNELS="inv_inline inv_let_all div_triton div_inline ln_inline ln_triton" BITS=0 timeout 120 \
  bench/spellings-h200.sh new=$B/phobosc 2>&1 | grep -v "^#\|^driver\|^binary"
KERNELS="inv_inline div_triton ln_inline" PRECISIONS=exact BITS=0 timeout 80 \
  bench/spellings-h200.sh base=$B/phobosc-base s42a83e7=$B/phobosc-42a83e7 2>&1 | grep -v "^#\|^driver\|^binary"
echo "($(( $(date +%s) - t0 )) s)"
echo "## fused bits (new)"
WGS="h 1024" timeout 150 bench/fused-bits.sh $B/phobosc 2>&1 | tail -3
echo "($(( $(date +%s) - t0 )) s)"
left=$(( 560 - ($(date +%s) - t0) ))
[ $left -gt 40 ] && timeout $left python3 bench/peers/fused.py gpu --log2 26 --rows 1024,4096 --budget $((left - 20)) --no-compile 2>&1 | grep "Triton fused\|CUDA copy" | grep "^peers" | cut -f3-9
echo "took $(( $(date +%s) - t0 )) s"
