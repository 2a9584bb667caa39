#!/bin/bash
# Session 6, last call, at the session's final commit:
# - issue 12: the 3 GiB launch path (bench/launch-h200.sh), on a quiet machine;
# - issue 11: compile rows (fresh processes; cold, warm, a second kernel), then
#   the one table with its peers (bench/table.sh --no-compile --no-ablations) and the
#   ablations that bound each unmet target (stream ablated, fast mode);
# - bits: every example on the GPU against Cranelift at four workgroup sizes,
#   through `phobosc run --output` (the streamed read-back);
# - in the background at nice 19 from the table on (GPU rows are timed by GPU
#   timestamps): issue 15, more of BigCrush on `fill u32 --key 1`, 3 tests at
#   once; issue 16, the front-end fuzzer on 12 workers.
start=$(date +%s)
for f in .gl/*.deb; do dpkg -x $f / >/dev/null; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
T=target/release/phobos-bench-table; P=target/release/phobosc; K=bench/logs/2026-12-01-night-kernels.ph
echo "# commit ${C:-?}; $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader); $(nproc) cores"
echo "== issue 12: bench/launch-h200.sh"
timeout 200 bench/launch-h200.sh $P 2>&1 | tee $OUT/launch.txt
echo "== issue 11: compile to the first dispatch (COMPILE wall pipeline open parse submitted again lower spirv layouts module driver, ms)"
d=$(mktemp -d)
for k in copy dropout_rows tandem_dropout tandem_noise; do
  for run in cold warm warm; do
    echo "$k R=16 $run $(PHOBOS_CACHE_DIR=$d/$k/p XDG_CACHE_HOME=$d/$k/xdg __GL_SHADER_DISK_CACHE_PATH=$d/$k/nv timeout 30 $T --compile-child $k 16 28 | grep COMPILE)"
  done
  echo "$k R=16 second-kernel $(PHOBOS_BENCH_PREWARM=1 PHOBOS_CACHE_DIR=$d/$k/p XDG_CACHE_HOME=$d/$k/xdg __GL_SHADER_DISK_CACHE_PATH=$d/$k/nv timeout 30 $T --compile-child $k 16 28 | grep COMPILE)"
done
E=stdlib/tandem/evidence
left=$((start + ${CALL_S:-560} - $(date +%s)))
(EVIDENCE_COMMIT=${C:-?} EVIDENCE_BUILD=$PWD/.gl/evb JOBS=${BIG_JOBS:-3} DEADLINE_S=$left nice -n 19 \
  $E/run-testu01.sh $PWD/.gl/TestU01-2009 testu01-bigcrush-u32-key1-rest u32:1 big 21,39,43-52,54-106 > $OUT/bigcrush-run.txt 2>&1; \
  cp $E/testu01-bigcrush-u32-key1-rest.txt $OUT/ 2>/dev/null) &
mkdir -p $OUT/fuzz
(OUT=$OUT/fuzz nice -n 19 timeout $((left + 20)) sh fuzz/device-run.sh -j ${FUZZ_JOBS:-12} -t $((left - 30)) -m jobs > $OUT/fuzz/run.txt 2>&1) &
echo "== issue 11: the table (bench/table.sh 28 --no-compile --no-ablations); BigCrush runs beside it, deadline $left s"
PHOBOS_COMMIT=${C:-?} timeout 240 bench/table.sh $T 28 --no-compile --no-ablations 2>&1 | tee $OUT/table.txt | tail -30
echo "== issue 11: ablations, R=16, 2^28 elements, GiB/s"
b() { PHOBOS_CACHE_DIR=off timeout 40 $P bench --backend gpu $K --config R=16 --dim M=1048576 --arg seed=1 --runs 21 "$@" 2>&1 | grep -o 'median[^;]*'; }
for kern in fill_f32 fill_normal tandem_dropout tandem_noise; do
  echo "$kern exact: $(b --kernel $kern) | stream ablated: $(PHOBOS_ABLATE_STREAM=1 b --kernel $kern) | fast: $(b --kernel $kern --precision fast)"
done
echo "dropout_rows_mul exact: $(b --kernel dropout_rows_mul)"
echo "dropout_rows exact / fast: $(PHOBOS_CACHE_DIR=off timeout 40 $P bench --backend gpu examples/dropout_rows.ph --config R=16 --dim M=1048576 --arg seed=1 --runs 21 2>&1 | grep -o 'median[^;]*') / $(PHOBOS_CACHE_DIR=off timeout 40 $P bench --backend gpu examples/dropout_rows.ph --config R=16 --dim M=1048576 --arg seed=1 --runs 21 --precision fast 2>&1 | grep -o 'median[^;]*')"
echo "== bits: every example, GPU against Cranelift, through phobosc run --output"
timeout 150 bench/logs/2026-12-02-bits-s5.sh $P 2>&1 | tee $OUT/bits.txt | grep -v identical; echo "identical: $(grep -c identical $OUT/bits.txt)"
wait
cat $OUT/fuzz/summary.txt; cat $OUT/bigcrush-run.txt; grep "^## verdict\|^## finished" $OUT/testu01-bigcrush-u32-key1-rest.txt
echo "# done at $(( $(date +%s) - start )) s"
