#!/bin/bash
# Session 7, third call (issues 14 and 15), at the examples' new shapes
# (softmax: exp once into a tile, one reciprocal a row; layer norm: the rows
# read once into a tile):
# - issue 15 in the background (nice 19, 13 jobs): the rest of BigCrush on
#   the seed's hash32 stream (the contrast), cut by the call's end;
# - issue 14: bits of the fused examples on the H200 against Cranelift;
#   bench/fused-h200.sh --no-compile (GPU exact and fast against PyTorch
#   and Triton fused, the CUDA copy ceiling; CPU against NumPy); then the
#   variants of bench/logs/2026-12-02-s7-fused-variants.ph, tuned at first
#   launch as fused.py tunes the examples.
start=$(date +%s)
for f in .gl/*.deb; do dpkg -x $f / >/dev/null; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
P=$PWD/target/release/phobosc
echo "# commit ${C:-?}; $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader); $(nproc) cores"
E=stdlib/tandem/evidence
left=$((start + ${CALL_S:-500} - $(date +%s)))
(EVIDENCE_COMMIT=${C:-?} EVIDENCE_BUILD=$PWD/.gl/evb JOBS=${BIG_JOBS:-13} DEADLINE_S=$left nice -n 19 \
  $E/run-testu01.sh $PWD/.gl/TestU01-2009 testu01-bigcrush-hash32-seed1-rest hash32:1 big ${BIG_TESTS:-39,43-47,49-50,52,54-106} > $OUT/bigcrush-run.txt 2>&1; \
  cp $E/testu01-bigcrush-hash32-seed1-rest.txt $OUT/ 2>/dev/null) &
echo "== issue 14: bits of the fused examples on the GPU against Cranelift"
WGS='h 64 1024' timeout 150 bench/fused-bits.sh $P 2>&1 | tee $OUT/bits.txt | tail -6
echo "== issue 14: bench/fused-h200.sh --no-compile"
PHOBOS_COMMIT=${C:-?} timeout 260 bench/fused-h200.sh $P --no-compile 2>&1 > $OUT/fused.txt; sed -n '/^## Merged/,/^| side/p' $OUT/fused.txt
echo "== issue 14: variants (tuned at first launch; GiB/s median of 21)"
V=bench/logs/2026-12-02-s7-fused-variants.ph; d=$(mktemp -d)
for k in softmax_recip layernorm_reread softmax_tile layernorm_tile; do for n in 1024 2048 4096 8192; do for pr in exact fast; do
  echo "$k N=$n $pr: $(PHOBOS_CACHE_DIR=$d/c timeout 30 $P bench --backend gpu $V --kernel $k --dim M=$((67108864 / n)) --dim N=$n --arg seed=12345 --runs 21 --precision $pr 2>&1 | grep -o '\[R=[^;]*\|median[^;]*' | tr '\n' ' ')"
done; done; done | tee $OUT/variants.txt
wait
tail -3 $OUT/bigcrush-run.txt; grep "^## verdict\|^## finished" $OUT/testu01-bigcrush-hash32-seed1-rest.txt
echo "# done at $(( $(date +%s) - start )) s"
