#!/bin/bash
# Session 20, first call (issue 28): the end state at the commit in the
# header, in one call: the true copy ceiling (hand-written WGSL of
# PERFORMANCE.md's shape, bench/src/ceiling.rs), every spelling of
# tests/spellings/ and the unseen spellings (bench/s17/unseen.ph,
# bench/s18/chunked.ph), the chunked examples and bench/s20/cached.ph (the
# chunked example with its rows kept in workgroup memory, by hand), tuned, both modes, rows
# of 1024 and 4096; exact softmax with exact `exp` swapped for the driver's
# (PHOBOS_ABLATE_MATH=exp|div, wrong bits: what each costs); the new
# binary on the chunked spellings; fused Triton and the CUDA copy of the same call.
for f in .gl/*.deb; do dpkg -x $f / >/dev/null; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
echo "# commit ${C:-?}; $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)"
t0=$(date +%s)
B=target/dev
echo "## WGSL ceilings (phobos-bench-gpu 26)"
timeout 60 $B/phobos-bench-gpu 26 2>&1 | grep -i "device\|ceiling\|copy\|zero" | head -8
FILES="tests/spellings/softmax.ph tests/spellings/layernorm.ph bench/s17/unseen.ph bench/s18/chunked.ph examples/softmax_dropout_chunked.ph examples/layernorm_dropout_chunked.ph bench/s20/cached.ph" BITS=0 \
  timeout 240 bench/spellings-h200.sh new=$B/phobosc 2>&1 | grep -v "^#\|^driver\|^binary"
echo "($(( $(date +%s) - t0 )) s)"
echo "## exact softmax and layer norm, exact \`exp\`, \`/\` or both swapped for the driver's (wrong bits)"
for a in exp div; do
  PHOBOS_ABLATE_MATH=$a FILES="tests/spellings/softmax.ph tests/spellings/layernorm.ph" KERNELS="inv_inline div_triton" PRECISIONS=exact BITS=0 \
    timeout 45 bench/spellings-h200.sh ablate_$a=$B/phobosc 2>&1 | grep -v "^#\|^driver\|^binary"
done
echo "## new binary (phobosc-new: exp's k from the sum's bits; chunks that sibling loops repeat kept in workgroup memory, plan/keep.rs) against the binary above"
FILES="tests/spellings/softmax.ph" KERNELS="inv_inline div_triton" BITS=0 \
  timeout 50 bench/spellings-h200.sh base=$B/phobosc new=$B/phobosc-new 2>&1 | grep -v "^#\|^driver\|^binary"
FILES="examples/softmax_dropout_chunked.ph examples/layernorm_dropout_chunked.ph bench/s18/chunked.ph bench/s20/cached.ph" BITS=0 \
  timeout 120 bench/spellings-h200.sh new=$B/phobosc-new 2>&1 | grep -v "^#\|^driver\|^binary"
left=$(( 560 - ($(date +%s) - t0) ))
[ $left -gt 40 ] && timeout $left python3 bench/peers/fused.py gpu --log2 26 --rows 1024,4096 --budget $((left - 20)) --no-compile 2>&1 | grep "Triton fused\|CUDA copy" | grep "^peers" | cut -f3-9
echo "took $(( $(date +%s) - t0 )) s"
