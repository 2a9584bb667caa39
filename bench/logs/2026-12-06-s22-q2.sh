#!/bin/bash
# Session 22, third call (issue 28): the standing in fast mode (six
# spellings of tests/spellings/, HEAD) and the bound of
# exact mode's remaining cost (`PHOBOS_ABLATE_MATH=div|exp|all`: the
# driver's `/`, its `exp` and the like, or both; wrong bits) on the
# reciprocal and division spellings, with fused Triton in the same call.
# Also the f32 rounding read off Q's high word with fewer operations
# (target/dev/phobosc, 79cf10a) against 42a83e7 (target/dev/phobosc-42a83e7):
# its bits and a few exact spellings.
for f in .gl/*.deb; do dpkg -x $f / >/dev/null; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
echo "# commit ${C:-?}; $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)"
t0=$(date +%s)
B=target/dev
echo "## WGSL ceilings (phobos-bench-gpu 26)"
timeout 60 $B/phobos-bench-gpu 26 2>&1 | grep -i "device\|zero fill, true" | head -3
echo "## division bits (79cf10a): GPU against the CPU backend, 4M operands"
timeout 60 bench/s21/div-bits.sh $B/phobosc ""
echo "## exact, 79cf10a (round) against 42a83e7"
KERNELS="inv_inline div_triton ln_inline" PRECISIONS=exact BITS=0 timeout 120 \
  bench/spellings-h200.sh round=$B/phobosc s42a83e7=$B/phobosc-42a83e7 2>&1 | grep -v "^#\|^driver\|^binary"
echo "## fused bits (79cf10a)"
WGS="h 1024" timeout 150 bench/fused-bits.sh $B/phobosc 2>&1 | tail -3
echo "($(( $(date +%s) - t0 )) s)"
echo "## fast spellings"
KERNELS="inv_inline inv_let_all div_triton div_inline ln_inline ln_triton" PRECISIONS=fast BITS=0 timeout 100 \
  bench/spellings-h200.sh head=$B/phobosc 2>&1 | grep -v "^#\|^driver\|^binary"
echo "## exact, ablated (wrong bits): the bound of what exact math costs"
for a in div exp all; do
  printf '#!/bin/sh\nPHOBOS_ABLATE_MATH=%s exec "%s/phobosc" "$@"\n' $a "$PWD/$B" > /tmp/phobosc-$a; chmod +x /tmp/phobosc-$a
done
KERNELS="inv_inline div_triton" FILES=tests/spellings/softmax.ph PRECISIONS=exact BITS=0 timeout 120 \
  bench/spellings-h200.sh ablate-exp=/tmp/phobosc-exp ablate-all=/tmp/phobosc-all 2>&1 | grep -v "^#\|^driver\|^binary"
echo "($(( $(date +%s) - t0 )) s)"
left=$(( 260 - ($(date +%s) - t0) ))
[ $left -gt 40 ] && timeout $left python3 bench/peers/fused.py gpu --log2 26 --rows 1024,4096 --budget $((left - 20)) --no-compile 2>&1 | grep "Triton fused\|CUDA copy" | grep "^peers" | cut -f3-9
echo "took $(( $(date +%s) - t0 )) s"
