#!/bin/bash
# Session 18, second call (issue 28). Three binaries in one call: `base`
# (f5ea3be, the seventeenth session's end), `loops` (2b29d96: each loop's
# barriers planned, q1) and `new` (accumulator updates folded into their
# reductions, plan/folds.rs: item 0 of each row updates its element, no
# barrier between chunks). The chunked examples and the whole-row
# spellings they are measured against, tuned, both modes, rows of 1024 and
# 4096; the unseen chunked spellings in bench/s18/chunked.ph; bits of every
# kernel against the CPU backend (spellings-h200.sh's BITS, fused-bits.sh
# at four workgroup sizes); fused Triton and the CUDA copy.
for f in .gl/*.deb; do dpkg -x $f / >/dev/null; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
echo "# commit ${C:-?}; $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)"
t0=$(date +%s)
B=target/dev
FILES="examples/softmax_dropout_chunked.ph examples/layernorm_dropout_chunked.ph tests/spellings/softmax.ph tests/spellings/layernorm.ph bench/s18/chunked.ph" \
  KERNELS="softmax_dropout_chunked layernorm_dropout_chunked inv_inline div_triton ln_inline c1 c2 c3" BITS=0 \
  timeout 300 bench/spellings-h200.sh base=$B/base loops=$B/loops new=$B/phobosc 2>&1 | grep -v "^#\|^driver\|^binary"
echo "($(( $(date +%s) - t0 )) s)"
FILES="examples/softmax_dropout_chunked.ph examples/layernorm_dropout_chunked.ph bench/s18/chunked.ph" PRECISIONS=exact \
  KERNELS="softmax_dropout_chunked layernorm_dropout_chunked c1 c2 c3" BITS=1 LOG2=22 \
  timeout 120 bench/spellings-h200.sh new=$B/phobosc 2>&1 | grep -i "bits\|differ\|identical\|mismatch" | head
WGS="h 32 128 1024" timeout 150 bench/fused-bits.sh $B/phobosc 2>&1 | tail -3
left=$(( 540 - ($(date +%s) - t0) ))
[ $left -gt 40 ] && timeout $left python3 bench/peers/fused.py gpu --log2 26 --rows 1024,4096 --budget $((left - 20)) --no-compile 2>&1 | grep "Triton fused\|CUDA copy" | grep "^peers" | cut -f3-9
echo "took $(( $(date +%s) - t0 )) s"
