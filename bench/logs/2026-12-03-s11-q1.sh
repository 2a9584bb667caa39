#!/bin/bash
# Session 11, first call (issue 14):
# - the differential suite's three kernels that lavapipe got wrong in the
#   tenth session's release run over seeds 10000..50000 (18145, 38491,
#   41989: its signed-zero and x * 0.0 folds, carried through later
#   operations), and 10,000 more seeds (30000..40000), strict, on the H200
#   against the interpreter; the release test binary is carried;
# - where fast mode's time goes: the ablations of
#   bench/logs/2026-12-02-s9-variants.ph in --precision fast, tuned, at rows
#   of 1024, 4096 and 8192 (2^26 elements; GiB/s, median of 21), and the
#   example with the row cache off (PHOBOS_ROW_CACHE_WORDS=0);
# - the Tandem variant of softmax + dropout, both precisions, same rows.
start=$(date +%s)
for f in .gl/*.deb; do dpkg -x $f / >/dev/null; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json WGPU_BACKEND=vulkan
P=$PWD/target/release/phobosc
T=$(ls -t target/release/deps/differential-* | grep -v '\.d$' | head -1)
echo "# commit ${C:-?}; $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader); $(nproc) cores; $T"
echo "== differential: the three lavapipe folds"
for s in 18145 38491 41989; do
  echo "seed $s: $(PHOBOS_REQUIRE_GPU=1 PHOBOS_DIFF_SEED=$s $T gpu_matches_interpreter 2>&1 | grep -E 'test result|problem|panicked' -A1 | tr '\n' ' ')"
done
echo "== differential: seeds 30000..40000"
PHOBOS_REQUIRE_GPU=1 PHOBOS_DIFF_FIRST=30000 PHOBOS_DIFF_KERNELS=10000 timeout 170 $T gpu_matches_interpreter 2>&1 | grep -E "kernels|test result|problem|panicked" | head
echo "# at $(( $(date +%s) - start )) s"
export PHOBOS_CACHE_DIR=$(mktemp -d)
V=bench/logs/2026-12-02-s9-variants.ph
b() { timeout 40 $P bench --backend gpu "$@" --runs 21 2>&1 | grep -o 'median[^;]*\|error.*' | tr '\n' ' '; }
echo "== fast-mode ablations (GiB/s median of 21; tuned)"
for n in 1024 4096 8192; do for k in sm_full sm_nodrop sm_muldrop sm_noexp sm_struct; do
  echo "$k fast N=$n: $(b $V --precision fast --kernel $k --dim M=$((67108864 / n)) --dim N=$n --arg seed=12345)"
done; done | tee $OUT/ablations-fast.txt
echo "== the example, fast, row cache off (PHOBOS_ROW_CACHE_WORDS=0)"
for n in 1024 4096 8192; do
  echo "softmax_dropout fast N=$n cache 0: $(PHOBOS_ROW_CACHE_WORDS=0 b examples/softmax_dropout.ph --precision fast --dim M=$((67108864 / n)) --dim N=$n --arg seed=12345)"
done | tee $OUT/rowcache-off.txt
echo "== softmax_dropout_tandem"
for pr in exact fast; do for n in 1024 4096 8192; do
  echo "tandem $pr N=$n: $(b examples/softmax_dropout_tandem.ph --precision $pr --dim M=$((67108864 / n)) --dim N=$n --arg key=12345)"
done; done | tee $OUT/tandem.txt
echo "# done at $(( $(date +%s) - start )) s"
