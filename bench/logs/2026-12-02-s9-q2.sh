#!/bin/bash
# Session 9, second call (issue 14): workgroups of 512 and 1024 invocations
# (phobos_gpu::MAX_WORKGROUP_SIZE is now 1024; the tuner tries 512 and 1024
# where the device allows them).
# - bits of the fused examples at workgroups of 512 and 1024 against Cranelift;
# - long rows (4096, 8192) at R = 1 and 2 in workgroups of 256, 512 and 1024,
#   fixed configurations (2^26 elements; GiB/s median of 21): exact softmax and
#   the structure-only ablation, fast softmax, exact and fast layer norm;
# - bench/fused-h200.sh --no-compile --no-cpu, tuned over the new sizes.
start=$(date +%s)
for f in .gl/*.deb; do dpkg -x $f / >/dev/null; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
P=$PWD/target/release/phobosc
echo "# commit ${C:-?}; $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader); $(nproc) cores"
echo "== bits of the fused examples on the GPU against Cranelift (workgroups 512, 1024)"
WGS='512 1024' timeout 200 bench/fused-bits.sh $P 2>&1 | tee $OUT/bits.txt | tail -3
echo "== long rows by workgroup size (fixed R; GiB/s median of 21)"
V=bench/logs/2026-12-02-s9-variants.ph
b() { timeout 30 $P bench --backend gpu "$@" --arg seed=12345 --runs 21 2>&1 | grep -o 'median[^;]*' | tr '\n' ' '; }
for n in 4096 8192; do for R in 1 2; do for w in 256 512 1024; do
  d="--dim M=$((67108864 / n)) --dim N=$n --config R=$R"
  echo "N=$n R=$R wg=$w | sm exact $(PHOBOS_WORKGROUP_SIZE=$w b $V --kernel sm_full $d) | sm_struct $(PHOBOS_WORKGROUP_SIZE=$w b $V --kernel sm_struct $d) | sm fast $(PHOBOS_WORKGROUP_SIZE=$w b examples/softmax_dropout.ph --precision fast $d) | ln exact $(PHOBOS_WORKGROUP_SIZE=$w b examples/layernorm_dropout.ph $d) | ln fast $(PHOBOS_WORKGROUP_SIZE=$w b examples/layernorm_dropout.ph --precision fast $d)"
done; done; done | tee $OUT/wg.txt
echo "== bench/fused-h200.sh --no-compile --no-cpu (tuned over 32 to 1024)"
rest=$((start + ${CALL_S:-560} - 15 - $(date +%s)))
PHOBOS_COMMIT=${C:-?} timeout $rest bench/fused-h200.sh $P --no-compile --no-cpu 2>&1 > $OUT/fused.txt; sed -n '/^| op/,/^Targets/p' $OUT/fused.txt | tail -12
echo "# done at $(( $(date +%s) - start )) s"
