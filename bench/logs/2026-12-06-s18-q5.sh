#!/bin/bash
# Session 18, last call (issue 28): the end state at the commit in the
# header, in one call: every spelling of tests/spellings/ and the unseen
# spellings of the seventeenth and eighteenth sessions (bench/s17/unseen.ph,
# bench/s18/chunked.ph), and the chunked examples, tuned, both modes, rows
# of 1024 and 4096; bits (fused-bits.sh at the heuristic's size and 128);
# fused Triton and the CUDA copy of the same call.
for f in .gl/*.deb; do dpkg -x $f / >/dev/null; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
echo "# commit ${C:-?}; $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)"
t0=$(date +%s)
B=target/dev
FILES="tests/spellings/softmax.ph tests/spellings/layernorm.ph bench/s17/unseen.ph bench/s18/chunked.ph examples/softmax_dropout_chunked.ph examples/layernorm_dropout_chunked.ph" BITS=0 \
  timeout 270 bench/spellings-h200.sh new=$B/phobosc 2>&1 | grep -v "^#\|^driver\|^binary"
echo "($(( $(date +%s) - t0 )) s)"
WGS="h 128" SHAPES="M=64,N=1000 M=17,N=8192 M=9,N=4096" timeout 60 bench/fused-bits.sh $B/phobosc 2>&1 | tail -2
left=$(( 400 - ($(date +%s) - t0) ))
[ $left -gt 40 ] && timeout $left python3 bench/peers/fused.py gpu --log2 26 --rows 1024,4096 --budget $((left - 20)) --no-compile 2>&1 | grep "Triton fused\|CUDA copy" | grep "^peers" | cut -f3-9
echo "took $(( $(date +%s) - t0 )) s"
