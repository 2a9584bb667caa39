#!/bin/bash
# Session 22, third call (issue 28): the standing in fast mode (every
# spelling of tests/spellings/ and the unseen ones, HEAD) and the bound of
# exact mode's remaining cost (`PHOBOS_ABLATE_MATH=div|exp|all`: the
# driver's `/`, its `exp` and the like, or both; wrong bits) on the
# reciprocal and division spellings, with fused Triton in the same call.
for f in .gl/*.deb; do dpkg -x $f / >/dev/null; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
echo "# commit ${C:-?}; $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)"
t0=$(date +%s)
B=target/dev
echo "## WGSL ceilings (phobos-bench-gpu 26)"
timeout 60 $B/phobos-bench-gpu 26 2>&1 | grep -i "device\|zero fill, true" | head -3
echo "## fast spellings"
PRECISIONS=fast BITS=0 timeout 150 bench/spellings-h200.sh head=$B/phobosc 2>&1 | grep -v "^#\|^driver\|^binary"
FILES="bench/s17/unseen.ph" PRECISIONS=fast BITS=0 timeout 80 bench/spellings-h200.sh head=$B/phobosc 2>&1 | grep -v "^#\|^driver\|^binary"
echo "## exact, ablated (wrong bits): the bound of what exact math costs"
for a in div exp all; do
  printf '#!/bin/sh\nPHOBOS_ABLATE_MATH=%s exec "%s/phobosc" "$@"\n' $a "$PWD/$B" > /tmp/phobosc-$a; chmod +x /tmp/phobosc-$a
done
KERNELS="inv_inline div_triton" FILES=tests/spellings/softmax.ph PRECISIONS=exact BITS=0 timeout 120 \
  bench/spellings-h200.sh ablate-div=/tmp/phobosc-div ablate-exp=/tmp/phobosc-exp ablate-all=/tmp/phobosc-all 2>&1 | grep -v "^#\|^driver\|^binary"
echo "($(( $(date +%s) - t0 )) s)"
left=$(( 420 - ($(date +%s) - t0) ))
[ $left -gt 40 ] && timeout $left python3 bench/peers/fused.py gpu --log2 26 --rows 1024,4096 --budget $((left - 20)) --no-compile 2>&1 | grep "Triton fused\|CUDA copy" | grep "^peers" | cut -f3-9
echo "took $(( $(date +%s) - t0 )) s"
