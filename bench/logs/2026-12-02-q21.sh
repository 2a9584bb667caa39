#!/bin/bash
# Session 5, second call (issue 11): is a shader module's 3 ms the driver's
# once-per-process start (PHOBOS_BENCH_PREWARM builds a copy first)? What
# does exact division cost the driver's compile (the `_mul` twins), and
# dropout_rows's bandwidth (its `_mul` twin as the ablation)?
for f in .gl/*.deb; do dpkg -x $f / >/dev/null; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
T=target/release/phobos-bench-table
P=target/release/phobosc
d=$(mktemp -d)
for k in copy tandem_dropout; do for pre in "" 1; do
  PHOBOS_CACHE_DIR=$d/$k$pre timeout 30 $T --compile-child $k 16 28 >/dev/null
  echo "$k prewarm=${pre:-0} warm $(PHOBOS_BENCH_PREWARM=$pre PHOBOS_CACHE_DIR=$d/$k$pre timeout 30 $T --compile-child $k 16 28 | grep COMPILE)"
done; done
K=bench/logs/2026-12-01-night-kernels.ph
for k in dropout_rows_mul tandem_dropout_mul tandem_dropout tandem_noise fill_u32 fill_f32; do
  echo "== $k: $(__GL_SHADER_DISK_CACHE=0 PHOBOS_CACHE_DIR=off timeout 40 $P bench --backend gpu $K --kernel $k --arg seed=1 --config R=16 --dim M=1048576 --runs 21 2>&1 | grep -o 'median.*GiB/s\|compiled in.*' | tr '\n' ' ')"
done
echo "== dropout_rows: $(__GL_SHADER_DISK_CACHE=0 PHOBOS_CACHE_DIR=off timeout 40 $P bench --backend gpu examples/dropout_rows.ph --arg seed=1 --config R=16 --dim M=1048576 --runs 21 2>&1 | grep -o 'median.*GiB/s\|compiled in.*' | tr '\n' ' ')"
