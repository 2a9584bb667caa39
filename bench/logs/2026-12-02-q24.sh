#!/bin/bash
# Session 5, a check of the division change at 4cbce2e (the zero quotient on the
# f64-checked fast path cost dropout_rows 1.7%): the zero test moved into the slow path.
for f in .gl/*.deb; do dpkg -x $f / >/dev/null; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
T=target/release/phobos-bench-table; P=target/release/phobosc; d=$(mktemp -d)
for k in dropout_rows tandem_dropout; do for run in cold warm; do
  echo "$k R=16 $run $(PHOBOS_CACHE_DIR=$d/$k/p XDG_CACHE_HOME=$d/$k/xdg __GL_SHADER_DISK_CACHE_PATH=$d/$k/nv timeout 30 $T --compile-child $k 16 28 | grep COMPILE)"
done; done
b() { echo "== $*: $(PHOBOS_CACHE_DIR=off timeout 40 $P bench --backend gpu "$@" --dim M=1048576 --runs 21 2>&1 | grep -o 'median.*GiB/s' )"; }
for i in 1 2; do
b examples/dropout_rows.ph --arg seed=1 --config R=16
b bench/logs/2026-12-01-night-kernels.ph --kernel tandem_dropout --arg seed=1 --config R=16
b bench/logs/2026-12-01-night-kernels.ph --kernel dropout_rows_mul --arg seed=1 --config R=16
done
