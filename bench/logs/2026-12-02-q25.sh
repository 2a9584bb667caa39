#!/bin/bash
# Session 6, first call. Issue 11: e30bdd8's division change (zero test off the
# f64-checked fast path), compile and bandwidth, twice; and what bounds the cold
# compile of the Tandem kernels: each kernel compiled cold in exact and in fast
# mode (the driver's own log/cos/sqrt/division), by `phobosc run --verbose`.
# Issue 16: the front-end fuzzer on the idle cores once the compile rows are done.
for f in .gl/*.deb; do dpkg -x $f / >/dev/null; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
T=target/release/phobos-bench-table; P=target/release/phobosc; d=$(mktemp -d)
echo "# $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)"
for k in copy dropout_rows tandem_dropout tandem_noise; do for run in cold warm; do
  echo "$k R=16 $run $(PHOBOS_CACHE_DIR=$d/$k/p XDG_CACHE_HOME=$d/$k/xdg __GL_SHADER_DISK_CACHE_PATH=$d/$k/nv timeout 30 $T --compile-child $k 16 28 | grep COMPILE)"
done; done
K=bench/logs/2026-12-01-night-kernels.ph
for i in 1 2 3; do for k in tandem_dropout tandem_dropout_mul tandem_noise; do for p in exact fast; do
  c=$d/run-$i-$k-$p
  echo "run cold $k $p #$i: $(PHOBOS_CACHE_DIR=$c/p XDG_CACHE_HOME=$c/xdg __GL_SHADER_DISK_CACHE_PATH=$c/nv timeout 30 $P run $K --kernel $k --config R=16 --dim M=4096 --arg seed=1 --backend gpu --precision $p --no-tune --verbose 2>&1 >/dev/null | grep -E 'compile|total' | tr -s ' ' | tr '\n' ';')"
done; done; done
mkdir -p $OUT/fuzz
(OUT=$OUT/fuzz nice -n 19 timeout 520 sh fuzz/device-run.sh -j 16 -t 470 -m jobs > $OUT/fuzz/run.txt 2>&1) &
b() { echo "== $*: $(PHOBOS_CACHE_DIR=off timeout 40 $P bench --backend gpu "$@" --dim M=1048576 --runs 21 2>&1 | grep -o 'median.*GiB/s' )"; }
for i in 1 2; do
b examples/dropout_rows.ph --arg seed=1 --config R=16
b $K --kernel tandem_dropout --arg seed=1 --config R=16
b $K --kernel dropout_rows_mul --arg seed=1 --config R=16
b $K --kernel tandem_noise --arg seed=1 --config R=16
done
wait
cat $OUT/fuzz/run.txt
