#!/bin/bash
# batch 1 of 2026-12-01 late: Phobos-kernel fills, small-int conversions, stream ablation, table
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
P=target/release/phobosc
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
b() { echo "== $*"; $P bench --backend gpu "$@" --dim M=1048576 --runs 21 2>&1 | grep -v "^ *$" | tail -2; }
export PHOBOS_CACHE_DIR=off
for R in 16 64; do
 for k in fill_u32 fill_f32 fill_normal fill_exp; do
  b .gl/exp.ph --kernel $k --arg seed=1 --config R=$R
  PHOBOS_CONVERT=native b .gl/exp.ph --kernel $k --arg seed=1 --config R=$R
 done
done
for k in tandem_dropout tandem_noise; do
  b .gl/td.ph --kernel $k --arg seed=1 --config R=16
  PHOBOS_CONVERT=native b .gl/td.ph --kernel $k --arg seed=1 --config R=16
done
echo "### stream ablated (wrong bits)"
for k in fill_u32 fill_f32 fill_normal; do PHOBOS_ABLATE_STREAM=1 b .gl/exp.ph --kernel $k --arg seed=1 --config R=16; done
for k in tandem_dropout tandem_noise; do PHOBOS_ABLATE_STREAM=1 b .gl/td.ph --kernel $k --arg seed=1 --config R=16; done
b .gl/copy.ph --config R=16
b examples/dropout_rows.ph --arg seed=1 --config R=16
echo "### workgroup sweep, fills R=16"
for w in 32 128 256; do PHOBOS_WORKGROUP_SIZE=$w b .gl/exp.ph --kernel fill_u32 --arg seed=1 --config R=16; PHOBOS_WORKGROUP_SIZE=$w b .gl/exp.ph --kernel fill_normal --arg seed=1 --config R=16; done
unset PHOBOS_CACHE_DIR
echo "### table"
PHOBOS_COMMIT=${COMMIT:-x} bench/table.sh target/release/phobos-bench-table 28 --no-ablations 2>&1 | tail -60
