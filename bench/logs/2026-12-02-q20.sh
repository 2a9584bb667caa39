#!/bin/bash
# Session 5, first call (issue 11): where a warm start's pipeline time goes
# (BuildPhases, with a copy kernel as the driver's floor), the table, and
# workgroup sizes of the rows under their targets; the front-end fuzzer
# (issue 16) on the idle cores once the compile rows are done.
for f in .gl/*.deb; do dpkg -x $f / >/dev/null; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
echo "commit ${C:-?}; $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1); $(nproc) cores"
T=target/release/phobos-bench-table
P=target/release/phobosc
# Compile rows, alone on the machine: cold, warm (Phobos cache), warm (both).
d=$(mktemp -d)
for k in copy dropout_rows tandem_dropout tandem_noise; do
  for r in 16 64; do
    for run in cold warm both; do
      case $run in cold) drv=$d/$k$r/dc ;; warm) drv=$d/$k$r/de ;; both) drv=$d/$k$r/dc ;; esac
      echo "$k R=$r $run $(PHOBOS_CACHE_DIR=$d/$k$r/p XDG_CACHE_HOME=$drv/xdg __GL_SHADER_DISK_CACHE_PATH=$drv/nv \
        timeout 30 $T --compile-child $k $r 28 | grep COMPILE)"
    done
  done
done
echo "(COMPILE wall pipeline open parse submitted again | lower spirv module driver, ms)"
# From here on the fuzzer runs on the CPUs (nice 19); the GPU rows are timed by GPU timestamps.
mkdir -p $OUT/fuzz
(OUT=$OUT/fuzz nice -n 19 timeout 560 sh fuzz/device-run.sh -j 16 -t ${FUZZ_S:-480} -m jobs > $OUT/fuzz/run.txt 2>&1) &
timeout 150 $T 28 --no-ablations --no-compile 2>&1 | tee $OUT/table.txt | tail -30
b() { echo "== wg=${PHOBOS_WORKGROUP_SIZE:-heuristic} $*"; PHOBOS_CACHE_DIR=off timeout 40 $P bench --backend gpu "$@" --dim M=1048576 --runs 21 2>&1 | grep -o "median.*GiB/s\|workgroup.*" | tr '\n' ' '; echo; }
K=bench/logs/2026-12-01-night-kernels.ph
for w in 64 128 256 512; do PHOBOS_WORKGROUP_SIZE=$w b examples/dropout_rows.ph --arg seed=1 --config R=16; done
for w in 32 64 128 256; do PHOBOS_WORKGROUP_SIZE=$w b $K --kernel tandem_dropout --arg seed=1 --config R=16; done
for w in 32 64 128 256; do PHOBOS_WORKGROUP_SIZE=$w b $K --kernel fill_f32 --arg seed=1 --config R=16; done
timeout 60 $P tune examples/dropout_rows.ph --dim M=1048576 --backend gpu --fresh 2>&1 | tail -12
wait
cat $OUT/fuzz/summary.txt 2>/dev/null || tail -5 $OUT/fuzz/run.txt
