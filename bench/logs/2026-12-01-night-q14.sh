#!/bin/bash
# batch 2: windowed stepped draws vs registers, window sizes, workgroup sizes
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
P=target/release/phobosc
export PHOBOS_CACHE_DIR=off
b() { printf "%-70s" "$*"; $P bench --backend gpu "$@" --dim M=1048576 --runs 21 2>&1 | grep -o "workgroup [0-9]*\|median [0-9.]* ms, [0-9.]* GiB/s" | tr '\n' ' '; echo; }
for R in 16 64; do
 for k in tandem_dropout tandem_noise; do
  b .gl/td.ph --kernel $k --arg seed=1 --config R=$R
  PHOBOS_STEPPED=registers b .gl/td.ph --kernel $k --arg seed=1 --config R=$R
 done
 for k in fill_u32 fill_f32 fill_normal fill_exp; do
  b .gl/exp.ph --kernel $k --arg seed=1 --config R=$R
  PHOBOS_STEPPED=registers b .gl/exp.ph --kernel $k --arg seed=1 --config R=$R
 done
done
echo "### window steps (R=16 / R=64)"
for s in 4 16 32; do for R in 16 64; do
  PHOBOS_WINDOW_STEPS=$s b .gl/td.ph --kernel tandem_dropout --arg seed=1 --config R=$R
  PHOBOS_WINDOW_STEPS=$s b .gl/exp.ph --kernel fill_u32 --arg seed=1 --config R=$R
done; done
echo "### workgroup sizes"
for w in 32 64 128 256; do
  PHOBOS_WORKGROUP_SIZE=$w b .gl/td.ph --kernel tandem_dropout --arg seed=1 --config R=16
  PHOBOS_WORKGROUP_SIZE=$w b .gl/exp.ph --kernel fill_u32 --arg seed=1 --config R=16
  PHOBOS_WORKGROUP_SIZE=$w b .gl/td.ph --kernel tandem_noise --arg seed=1 --config R=16
done
for w in 128 256; do
  PHOBOS_WORKGROUP_SIZE=$w b .gl/td.ph --kernel tandem_dropout --arg seed=1 --config R=64
  PHOBOS_WORKGROUP_SIZE=$w b .gl/exp.ph --kernel fill_u32 --arg seed=1 --config R=64
done
echo "### conversions"
for k in fill_normal fill_exp; do PHOBOS_CONVERT=native b .gl/exp.ph --kernel $k --arg seed=1 --config R=16; done
PHOBOS_CONVERT=native b .gl/td.ph --kernel tandem_noise --arg seed=1 --config R=16
PHOBOS_ABLATE_STREAM=1 b .gl/td.ph --kernel tandem_dropout --arg seed=1 --config R=16
PHOBOS_ABLATE_STREAM=1 b .gl/exp.ph --kernel fill_u32 --arg seed=1 --config R=16
b .gl/copy.ph --config R=16
b examples/dropout_rows.ph --arg seed=1 --config R=16
for k in tandem_dropout tandem_noise; do for R in 16 64; do
  $P run .gl/td.ph --kernel $k --dim M=4099 --arg seed=3 --config R=$R --backend gpu --output Y=/tmp/g.npy --json >/dev/null
  $P run .gl/td.ph --kernel $k --dim M=4099 --arg seed=3 --config R=$R --backend cpu --output Y=/tmp/c.npy --json >/dev/null
  cmp /tmp/g.npy /tmp/c.npy && echo "bits $k R=$R: H200 == cpu"
done; done
