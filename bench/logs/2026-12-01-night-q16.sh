#!/bin/bash
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
P=target/release/phobosc
export PHOBOS_CACHE_DIR=off
b() { printf "%-78s" "$*"; $P bench --backend gpu "$@" --dim M=1048576 --runs 21 2>&1 | grep -o "workgroup [0-9]*\|median [0-9.]* ms, [0-9.]* GiB/s\|compiled in [0-9.]* ms" | tr '\n' ' '; echo; }
for R in 16 64; do for k in tandem_dropout tandem_noise; do
  b .gl/td.ph --kernel $k --arg seed=1 --config R=$R
  PHOBOS_SHUFFLE_FETCH=0 b .gl/td.ph --kernel $k --arg seed=1 --config R=$R
  PHOBOS_SUBGROUPS=off b .gl/td.ph --kernel $k --arg seed=1 --config R=$R
done; done
PHOBOS_SHUFFLE_FETCH=0 PHOBOS_WORKGROUP_SIZE=32 b .gl/td.ph --kernel tandem_dropout --arg seed=1 --config R=16
b .gl/exp.ph --kernel fill_u32 --arg seed=1 --config R=16
b .gl/exp.ph --kernel fill_f32 --arg seed=1 --config R=16
for k in tandem_dropout tandem_noise; do for R in 16 64; do
  PHOBOS_SHUFFLE_FETCH=0 $P run .gl/td.ph --kernel $k --dim M=4099 --arg seed=3 --config R=$R --backend gpu --output Y=/tmp/g.npy >/dev/null 2>&1
  $P run .gl/td.ph --kernel $k --dim M=4099 --arg seed=3 --config R=$R --backend cpu --output Y=/tmp/c.npy >/dev/null 2>&1
  cmp -s /tmp/g.npy /tmp/c.npy && echo "bits $k R=$R: H200 == cpu" || echo "BITS DIFFER $k R=$R"
done; done
