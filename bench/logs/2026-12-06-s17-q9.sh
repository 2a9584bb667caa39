#!/bin/bash
# Session 17, last call (issue 28): the session's end state in one call,
# phobosc in target/dev at the commit in the header: the spellings tuned,
# both modes, rows of 1024 and 4096 (the examples' reciprocal, the
# division spellings, a `var` divided in place, layer norm and its division
# spelling, the chunked examples); bits (fused-bits.sh at the heuristic's
# size); fused Triton and the CUDA copy.
for f in .gl/*.deb; do dpkg -x $f / >/dev/null; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
echo "# commit ${C:-?}; $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)"
t0=$(date +%s)
B=target/dev
FILES="tests/spellings/softmax.ph tests/spellings/layernorm.ph bench/s17/unseen.ph examples/softmax_dropout_chunked.ph examples/layernorm_dropout_chunked.ph" \
  KERNELS="inv_inline div_triton div_var ln_inline s4 l1 softmax_dropout_chunked layernorm_dropout_chunked" BITS=0 \
  timeout 250 bench/spellings-h200.sh new=$B/phobosc 2>&1 | grep -v "^#\|^driver\|^binary"
echo "($(( $(date +%s) - t0 )) s)"
WGS=h timeout 100 bench/fused-bits.sh $B/phobosc 2>&1 | tail -2
left=$(( 480 - ($(date +%s) - t0) ))
[ $left -gt 40 ] && timeout $left python3 bench/peers/fused.py gpu --log2 26 --rows 1024,4096 --budget $((left - 20)) --no-compile 2>&1 | grep "Triton fused\|CUDA copy" | grep "^peers" | cut -f3-9
echo "took $(( $(date +%s) - t0 )) s"
