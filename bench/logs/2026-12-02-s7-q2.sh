#!/bin/bash
# Session 7, second call (issue 14 and 15):
# - issue 15 in the background from the start (nice 19, 13 jobs):  
#   BigCrush tests 1-53 on the seed's hash32 stream (the contrast), cut by the call's end;
# - issue 14: the fused examples' bits on the H200 (subgroups of 32: the
#   segmented reductions of coop_warp.rs) against Cranelift, then
#   bench/fused-h200.sh (Phobos exact and fast, PyTorch eager, Triton fused,
#   the CUDA copy ceiling), GPU only.
start=$(date +%s)
for f in .gl/*.deb; do dpkg -x $f / >/dev/null; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
P=$PWD/target/release/phobosc
echo "# commit ${C:-?}; $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader); $(nproc) cores"
E=stdlib/tandem/evidence
left=$((start + ${CALL_S:-560} - $(date +%s)))
(EVIDENCE_COMMIT=${C:-?} EVIDENCE_BUILD=$PWD/.gl/evb JOBS=${BIG_JOBS:-13} DEADLINE_S=$left nice -n 19 \
  $E/run-testu01.sh $PWD/.gl/TestU01-2009 testu01-bigcrush-hash32-seed1 hash32:1 big ${BIG_TESTS:-1-53} > $OUT/bigcrush-run.txt 2>&1; \
  cp $E/testu01-bigcrush-hash32-seed1.txt $OUT/ 2>/dev/null) &
echo "== issue 14: bits of the fused examples on the GPU against Cranelift"
WGS='h 64 1024' timeout 200 bench/fused-bits.sh $P 2>&1 | tee $OUT/bits.txt | tail -12
echo "== issue 14: bench/fused-h200.sh --no-compile --no-cpu"
PHOBOS_COMMIT=${C:-?} timeout 240 bench/fused-h200.sh $P --no-compile --no-cpu 2>&1 | tee $OUT/fused.txt | tail -45
wait
cat $OUT/bigcrush-run.txt | tail -5; grep "^## verdict\|^## finished" $OUT/testu01-bigcrush-hash32-seed1.txt
echo "# done at $(( $(date +%s) - start )) s"
