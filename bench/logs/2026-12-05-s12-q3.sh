#!/bin/bash
# Session 12, third call: the chunked examples (`for` loops over chunks of
# 256, issue 28's "within 25%") beside the whole-row examples, both modes,
# rows of 1024 and 4096, new binary only; bench/fused-bits.sh's bits of the
# examples (both twins, every R, five shapes, chunked) at the heuristic's
# workgroup size; then, where target/exp/ holds them, the Tandem fill table
# before and after issue 30's exp_f64 change.
for f in .gl/*.deb; do dpkg -x $f / >/dev/null; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
echo "# commit ${C:-?}; $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)"
t0=$(date +%s)
FILES="examples/softmax_dropout.ph examples/softmax_dropout_chunked.ph examples/layernorm_dropout.ph examples/layernorm_dropout_chunked.ph" \
  ROWS="1024 4096" BITS=0 PHOBOS_COMMIT=${C:-?} timeout 200 bench/spellings-h200.sh new=target/release/phobosc > $OUT/chunked.txt 2>&1
echo "chunked took $(( $(date +%s) - t0 )) s"; cat $OUT/chunked.txt
t0=$(date +%s)
WGS=h timeout 200 bench/fused-bits.sh target/release/phobosc > $OUT/fused-bits.txt 2>&1
echo "fused bits took $(( $(date +%s) - t0 )) s"; tail -5 $OUT/fused-bits.txt
if [ -x target/exp/before ] && [ -x target/exp/after ]; then
  for b in before after; do
    echo "## exp fills, $b"
    for t in exp_f64 exp_f32 f64 normal_f64; do
      s=$(date +%s.%N); timeout 60 target/exp/$b fill $t --backend gpu --key 1 --count 268435456 -o /dev/null --verbose 2>&1 | grep -i "gib\|kernel\|fill" | tail -3
    done
  done
fi
