#!/bin/bash
# Session 8, second call (issues 14 and 15).
# - issue 14 first, alone on the CPU: bench/fused-h200.sh --no-gpu (Cranelift
#   on every core against NumPy's unfused version; 2^22 elements, rows of
#   1024 and 8192, exact);
# - issue 15 in the background from then (nice 19): the 17 unfinished
#   BigCrush tests of the seed's hash32 contrast, and Crush on the 32-bit
#   words of `fill f32` (its 24 random bits shifted up), cut by the call's end;
# - issue 14: bits of the fused examples on the H200 against Cranelift at
#   the commit above (sum's butterfly without selects where the leaves
#   cover the row); whole rows at R = 1 in workgroups of 256, 512 and 1024
#   (PHOBOS_WORKGROUP_SIZE); then bench/fused-h200.sh --no-compile --no-cpu.
start=$(date +%s)
for f in .gl/*.deb; do dpkg -x $f / >/dev/null; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
P=$PWD/target/release/phobosc
echo "# commit ${C:-?}; $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader); $(nproc) cores"
echo "== issue 14: CPU (Cranelift, every core) against NumPy"
PHOBOS_COMMIT=${C:-?} timeout 170 bench/fused-h200.sh $P --no-gpu --cpu-log2 22 --rows 1024,8192 --precision exact > $OUT/fused-cpu.txt 2>&1
sed -n '/^## Merged/,$p' $OUT/fused-cpu.txt | grep -v "^- CUDA" | head -30
E=stdlib/tandem/evidence
left=$((start + ${CALL_S:-560} - $(date +%s)))
(EVIDENCE_COMMIT=${C:-?} EVIDENCE_BUILD=$PWD/.gl/evb JOBS=8 DEADLINE_S=$((left - 20)) nice -n 19 \
  $E/run-testu01.sh $PWD/.gl/TestU01-2009 testu01-bigcrush-hash32-seed1-rest2 hash32:1 big 80,81,88,89,94-106 > $OUT/big-run.txt 2>&1; \
  cp $E/testu01-bigcrush-hash32-seed1-rest2.txt $OUT/) &
sleep 3
(EVIDENCE_COMMIT=${C:-?} EVIDENCE_BUILD=$PWD/.gl/evb JOBS=7 DEADLINE_S=$((left - 25)) nice -n 19 \
  $E/run-testu01.sh $PWD/.gl/TestU01-2009 testu01-crush-f32words-key1 f32words:1 crush > $OUT/crush-run.txt 2>&1; \
  cp $E/testu01-crush-f32words-key1.txt $OUT/) &
echo "== issue 14: bits of the fused examples on the GPU against Cranelift"
WGS='h 64 1024' timeout 120 bench/fused-bits.sh $P 2>&1 | tee $OUT/bits.txt | tail -3
echo "== issue 14: whole rows at R = 1 in workgroups of 512 and 1024 (beyond the tuner's 32 to 256; exact; GiB/s median of 21)"
for k in softmax_dropout layernorm_dropout; do for n in 4096 8192; do for w in 256 512 1024; do
  echo "$k N=$n wg=$w: $(PHOBOS_WORKGROUP_SIZE=$w timeout 20 $P bench --backend gpu examples/$k.ph --config R=1 --dim M=$((67108864 / n)) --dim N=$n --arg seed=12345 --runs 21 2>&1 | grep -o 'median[^;]*' | tr '\n' ' ')"
done; done; done | tee $OUT/wg.txt
echo "== issue 14: bench/fused-h200.sh --no-compile --no-cpu"
rest=$((start + ${CALL_S:-560} - 15 - $(date +%s)))
PHOBOS_COMMIT=${C:-?} timeout $rest bench/fused-h200.sh $P --no-compile --no-cpu 2>&1 > $OUT/fused.txt; sed -n '/^| op/,/^Targets/p' $OUT/fused.txt
wait
tail -2 $OUT/big-run.txt $OUT/crush-run.txt
echo "# done at $(( $(date +%s) - start )) s"
