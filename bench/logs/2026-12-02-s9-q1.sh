#!/bin/bash
# Session 9, first call (issue 14): fast mode's driver math (`_native_exp`
# and the others), and where exact softmax's time goes.
# - the bits of the fused examples in exact mode against Cranelift (the
#   standard library's exp now sits under `_native_exp`, which exact mode
#   must lower to the same code as before);
# - the ablations of bench/logs/2026-12-02-s9-variants.ph, exact, tuned, at
#   rows of 1024 and 8192 (2^26 elements; GiB/s, median of 21);
# - bias_gelu_dropout (erf, so no native function) exact and fast;
# - bench/fused-h200.sh --no-compile --no-cpu: the comparison, both precisions.
start=$(date +%s)
for f in .gl/*.deb; do dpkg -x $f / >/dev/null; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
P=$PWD/target/release/phobosc
echo "# commit ${C:-?}; $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader); $(nproc) cores"
echo "== bits of the fused examples on the GPU against Cranelift (workgroups: heuristic)"
WGS='h' timeout 150 bench/fused-bits.sh $P 2>&1 | tee $OUT/bits.txt | tail -3
echo "== ablations of exact softmax (GiB/s median of 21; tuned)"
export PHOBOS_CACHE_DIR=$(mktemp -d)
V=bench/logs/2026-12-02-s9-variants.ph
for n in 1024 8192; do for k in sm_full sm_nodrop sm_muldrop sm_noexp sm_struct; do
  echo "$k N=$n: $(timeout 40 $P bench --backend gpu $V --kernel $k --dim M=$((67108864 / n)) --dim N=$n --arg seed=12345 --runs 21 2>&1 | grep -o 'median[^;]*' | tr '\n' ' ')"
done; done | tee $OUT/ablations.txt
echo "== bias_gelu_dropout, 2^26 elements (GiB/s median of 21)"
for pr in exact fast; do
  echo "$pr: $(timeout 40 $P bench --backend gpu examples/bias_gelu_dropout.ph --precision $pr --dim M=262144 --arg seed=12345 --runs 21 2>&1 | grep -o 'median[^;]*' | tr '\n' ' ')"
done | tee $OUT/gelu.txt
unset PHOBOS_CACHE_DIR
echo "== bench/fused-h200.sh --no-compile --no-cpu"
rest=$((start + ${CALL_S:-560} - 15 - $(date +%s)))
PHOBOS_COMMIT=${C:-?} timeout $rest bench/fused-h200.sh $P --no-compile --no-cpu 2>&1 > $OUT/fused.txt; sed -n '/^| op/,/^Targets/p' $OUT/fused.txt
echo "# done at $(( $(date +%s) - start )) s"
