#!/bin/bash
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
P=target/release/phobosc
export PHOBOS_CACHE_DIR=off
b() { printf "%-70s" "$*"; $P bench --backend gpu "$@" --dim M=1048576 --runs 21 2>&1 | grep -o "workgroup [0-9]*\|median [0-9.]* ms, [0-9.]* GiB/s" | tr '\n' ' '; echo; }
for R in 16 64; do b .gl/exp.ph --kernel fill_f32 --arg seed=1 --config R=$R; done
b .gl/exp.ph --kernel fill_u32 --arg seed=1 --config R=16
for R in 16 64; do b .gl/td.ph --kernel tandem_dropout --arg seed=1 --config R=$R; done
for R in 16 64; do
  $P run .gl/exp.ph --kernel fill_f32 --dim M=4099 --arg seed=3 --config R=$R --backend gpu --output Y=/tmp/g.npy >/dev/null 2>&1
  $P run .gl/exp.ph --kernel fill_f32 --dim M=4099 --arg seed=3 --config R=$R --backend cpu --output Y=/tmp/c.npy >/dev/null 2>&1
  cmp -s /tmp/g.npy /tmp/c.npy && echo "bits fill_f32 R=$R: H200 == cpu" || echo "BITS DIFFER R=$R"
done
