#!/bin/bash
# Session 8, third call (issue 14): the bits of the final commit on the H200
# against Cranelift: the fused examples (bench/fused-bits.sh), the
# cooperative reductions with and without subgroups (bench/reduce-bits.sh),
# and the fused examples again with reductions compiled for 16-lane
# subgroups (PHOBOS_SUBGROUPS=16), which the H200 does not have, so every
# block takes the workgroup-memory path and fills its kept rows beside it.
start=$(date +%s)
for f in .gl/*.deb; do dpkg -x $f / >/dev/null; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
P=$PWD/target/release/phobosc
echo "# commit ${C:-?}; $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)"
echo "== fused-bits (workgroups: heuristic, 64, 128)"
WGS='h 64 128' timeout 170 bench/fused-bits.sh $P 2>&1 | tee $OUT/bits.txt | tail -3
echo "== reduce-bits"
timeout 120 bench/reduce-bits.sh $P 2>&1 | tee $OUT/reduce-bits.txt | tail -3
echo "== fused-bits with PHOBOS_SUBGROUPS=16"
PHOBOS_SUBGROUPS=16 WGS='h' timeout 100 bench/fused-bits.sh $P 2>&1 | tee $OUT/bits-sub16.txt | tail -3
echo "== the examples, exact, tuned (a check against q2's figures)"
d=$(mktemp -d)
for k in softmax_dropout layernorm_dropout; do for n in 1024 8192; do
  echo "$k N=$n: $(PHOBOS_CACHE_DIR=$d/c timeout 25 $P bench --backend gpu examples/$k.ph --dim M=$((67108864 / n)) --dim N=$n --arg seed=12345 --runs 21 2>&1 | grep -o '\[R=[^;]*\|median[^;]*' | tr '\n' ' ')"
done; done | tee $OUT/examples.txt
echo "# done at $(( $(date +%s) - start )) s"
