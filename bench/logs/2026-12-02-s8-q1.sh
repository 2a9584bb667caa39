#!/bin/bash
# Session 8, first call (issues 14 and 15).
# - issue 15 in the background: PractRand stdin32 on `fill u32 --key 1`,
#   multithreaded, for the call's length (its rate on the H200's host: can
#   a 30-minute lease reach 1 TB?), and the 17 unfinished BigCrush tests of
#   the seed's hash32 contrast at nice 19, cut by the call's end;
# - issue 14: bits of the fused examples on the H200 against Cranelift, with
#   the row cache at its default budget (64 words) and at 256; the row
#   cache against itself (PHOBOS_ROW_CACHE_WORDS 0, 64, 128: the examples,
#   exact, tuned at first launch in separate caches, GiB/s median of 21
#   over 2^26 elements); then bench/fused-h200.sh --no-compile --no-cpu (GPU
#   exact and fast beside PyTorch and Triton fused, the CUDA copy ceiling).
start=$(date +%s)
for f in .gl/*.deb; do dpkg -x $f / >/dev/null; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
P=$PWD/target/release/phobosc
echo "# commit ${C:-?}; $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader); $(nproc) cores; $(grep -m1 'model name' /proc/cpuinfo)"
E=stdlib/tandem/evidence
left=$((start + ${CALL_S:-560} - $(date +%s)))
(EVIDENCE_COMMIT=${C:-?} EVIDENCE_BUILD=$PWD/.gl/evb PRACTRAND_ARGS=-multithreaded FILL_THREADS=4 \
  $E/run-practrand.sh $PWD/.gl/PractRand practrand-u32-key1-h200-rate u32:1 1TB $((left - 15)) > $OUT/pr-run.txt 2>&1; \
  cp $E/practrand-u32-key1-h200-rate.txt $OUT/) &
(EVIDENCE_COMMIT=${C:-?} EVIDENCE_BUILD=$PWD/.gl/evb JOBS=${BIG_JOBS:-10} DEADLINE_S=$((left - 15)) nice -n 19 \
  $E/run-testu01.sh $PWD/.gl/TestU01-2009 testu01-bigcrush-hash32-seed1-rest2 hash32:1 big 80,81,88,89,94-106 > $OUT/big-run.txt 2>&1; \
  cp $E/testu01-bigcrush-hash32-seed1-rest2.txt $OUT/) &
echo "== issue 14: bits of the fused examples on the GPU against Cranelift (row cache default, then 256 words)"
WGS='h 64 1024' timeout 120 bench/fused-bits.sh $P 2>&1 | tee $OUT/bits.txt | tail -3
PHOBOS_ROW_CACHE_WORDS=256 WGS='h' SHAPES="M=17,N=8192 M=9,N=4096 M=64,N=2048" timeout 40 bench/fused-bits.sh $P 2>&1 | tee $OUT/bits-256.txt | tail -3
echo "== issue 14: the row cache against itself (exact; tuned; GiB/s median of 21)"
d=$(mktemp -d)
for k in softmax_dropout layernorm_dropout; do for n in 1024 4096 8192; do for w in 0 64 128; do
  echo "$k N=$n words=$w: $(PHOBOS_ROW_CACHE_WORDS=$w PHOBOS_CACHE_DIR=$d/c$w timeout 25 $P bench --backend gpu examples/$k.ph --dim M=$((67108864 / n)) --dim N=$n --arg seed=12345 --runs 21 2>&1 | grep -o '\[R=[^;]*\|median[^;]*' | tr '\n' ' ')"
done; done; done | tee $OUT/rowcache.txt
echo "== issue 14: bench/fused-h200.sh --no-compile --no-cpu"
rest=$((start + ${CALL_S:-560} - 10 - $(date +%s)))
PHOBOS_COMMIT=${C:-?} timeout $rest bench/fused-h200.sh $P --no-compile --no-cpu 2>&1 > $OUT/fused.txt; sed -n '/^## Merged/,/^| side/p' $OUT/fused.txt
wait
grep "length=" $OUT/practrand-u32-key1-h200-rate.txt | tail -4; tail -2 $OUT/big-run.txt
echo "# done at $(( $(date +%s) - start )) s"
