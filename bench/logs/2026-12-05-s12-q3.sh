#!/bin/bash
# Session 12, third call: the chunked examples (`for` loops over chunks of
# 256, issue 28's "within 25%") beside the whole-row examples, both modes,
# rows of 1024 and 4096, new binary only; bench/fused-bits.sh's bits of the
# examples (both twins, every R, five shapes, chunked) at the heuristic's
# workgroup size; then, where target/exp/before exists, the Tandem fill bench
# before and after issue 30's exp_f64 change (bench/tandem-gpu's binary).
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
# Issue 30: exponential_f64 before (f69eca2) and after d91a289 + c9c9af9,
# then after with only d91a289 (PHOBOS_NO_INT64=1): GiB/s against the
# zero-fill ceiling of the same run, every element checked on the CPU.
if [ -x target/exp/before ]; then
  t0=$(date +%s)
  echo "## before"; timeout 90 target/exp/before 28 exp_f64 normal_f64 2>&1 | tail -8
  echo "## after"; timeout 90 target/release/phobos-bench-tandem-gpu 28 exp_f64 normal_f64 2>&1 | tail -8
  echo "## after, PHOBOS_NO_INT64=1"; PHOBOS_NO_INT64=1 timeout 60 target/release/phobos-bench-tandem-gpu 28 exp_f64 2>&1 | tail -5
  echo "exp fills took $(( $(date +%s) - t0 )) s"
fi
