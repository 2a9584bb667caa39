#!/bin/bash
# batch 3: subgroup-shuffled stepped draws: bits on the H200, speed against the plain stepped loop, then the table
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
P=target/release/phobosc
export PHOBOS_CACHE_DIR=off
$P run .gl/td.ph --kernel tandem_dropout --dim M=1024 --arg seed=3 --config R=16 --backend gpu --json 2>&1 | grep -A3 '"lowering"'
for spec in "td.ph tandem_dropout" "td.ph tandem_noise" "exp.ph fill_u32" "exp.ph fill_f32" "exp.ph fill_normal" "exp.ph fill_exp"; do set -- $spec
 for R in 16 64; do for M in 4099 1024 333; do
  $P run .gl/$1 --kernel $2 --dim M=$M --arg seed=7 --config R=$R --backend gpu --output Y=/tmp/g.npy >/dev/null 2>&1
  $P run .gl/$1 --kernel $2 --dim M=$M --arg seed=7 --config R=$R --backend cpu --output Y=/tmp/c.npy >/dev/null 2>&1
  cmp -s /tmp/g.npy /tmp/c.npy && echo "bits $2 R=$R M=$M: H200 == cpu" || echo "BITS DIFFER $2 R=$R M=$M"
 done; done
done
b() { printf "%-78s" "$*"; $P bench --backend gpu "$@" --dim M=1048576 --runs 21 2>&1 | grep -o "workgroup [0-9]*\|median [0-9.]* ms, [0-9.]* GiB/s" | tr '\n' ' '; echo; }
for R in 16 64; do
 for k in tandem_dropout tandem_noise; do
  b .gl/td.ph --kernel $k --arg seed=1 --config R=$R
  PHOBOS_SUBGROUPS=off b .gl/td.ph --kernel $k --arg seed=1 --config R=$R
 done
 for k in fill_u32 fill_f32 fill_normal fill_exp; do
  b .gl/exp.ph --kernel $k --arg seed=1 --config R=$R
  PHOBOS_SUBGROUPS=off b .gl/exp.ph --kernel $k --arg seed=1 --config R=$R
 done
done
echo "### workgroups, R=16"
for w in 32 64; do for k in tandem_dropout tandem_noise; do PHOBOS_WORKGROUP_SIZE=$w b .gl/td.ph --kernel $k --arg seed=1 --config R=16; done; PHOBOS_WORKGROUP_SIZE=$w b .gl/exp.ph --kernel fill_u32 --arg seed=1 --config R=16; done
echo "### stream ablated, shuffled (wrong bits)"
PHOBOS_ABLATE_STREAM=1 b .gl/td.ph --kernel tandem_dropout --arg seed=1 --config R=16
PHOBOS_ABLATE_STREAM=1 b .gl/exp.ph --kernel fill_u32 --arg seed=1 --config R=16
b .gl/copy.ph --config R=16
unset PHOBOS_CACHE_DIR
echo "### table"
PHOBOS_COMMIT=${COMMIT:-x} bench/table.sh target/release/phobos-bench-table 28 --no-ablations 2>&1 | tail -42
