#!/bin/bash
# Session 5, third call (issue 11): exact division's and square root's slow
# paths out of line (`cold_*` functions, DontInline in exact mode's SPIR-V):
# cold and warm compile rows, the driver's compile of each kernel, and the
# table's rows (each output checked against its reference) at this commit.
for f in .gl/*.deb; do dpkg -x $f / >/dev/null; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
echo "commit ${C:-?}; $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1)"
T=target/release/phobos-bench-table
P=target/release/phobosc
d=$(mktemp -d)
for pass in 1 2; do
for k in copy dropout_rows tandem_dropout tandem_noise; do
  for r in 16 64; do
    for run in cold warm both; do
      case $run in cold) drv=$d/$pass$k$r/dc ;; warm) drv=$d/$pass$k$r/de ;; both) drv=$d/$pass$k$r/dc ;; esac
      echo "$k R=$r $run $(PHOBOS_CACHE_DIR=$d/$pass$k$r/p XDG_CACHE_HOME=$drv/xdg __GL_SHADER_DISK_CACHE_PATH=$drv/nv \
        timeout 30 $T --compile-child $k $r 28 | grep COMPILE)"
    done
  done
done
done
echo "(COMPILE wall pipeline open parse submitted again | lower spirv module driver, ms)"
K=bench/logs/2026-12-01-night-kernels.ph
for k in dropout_rows_mul tandem_dropout_mul tandem_dropout tandem_noise fill_normal fill_u32; do
  echo "== $k: $(__GL_SHADER_DISK_CACHE=0 PHOBOS_CACHE_DIR=off timeout 40 $P bench --backend gpu $K --kernel $k --arg seed=1 --config R=16 --dim M=1048576 --runs 21 2>&1 | grep -o 'median.*GiB/s\|compiled in.*' | tr '\n' ' ')"
done
echo "== dropout_rows: $(__GL_SHADER_DISK_CACHE=0 PHOBOS_CACHE_DIR=off timeout 40 $P bench --backend gpu examples/dropout_rows.ph --arg seed=1 --config R=16 --dim M=1048576 --runs 21 2>&1 | grep -o 'median.*GiB/s\|compiled in.*' | tr '\n' ' ')"
mkdir -p $OUT/fuzz
(OUT=$OUT/fuzz nice -n 19 timeout 300 sh fuzz/device-run.sh -j 16 -t ${FUZZ_S:-150} -m jobs > $OUT/fuzz/run.txt 2>&1) &
timeout 150 $T 28 --no-ablations --no-compile 2>&1 | tee $OUT/table.txt | tail -24
wait
cat $OUT/fuzz/summary.txt
