#!/bin/bash
# Session 4, call 1: the table at HEAD (with the second-launch column), then ablations.
for f in .gl/*.deb; do dpkg -x $f / >/dev/null; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
C=${C:-?}
PHOBOS_COMMIT=$C timeout 330 bench/table.sh target/release/phobos-bench-table 28 --no-ablations 2>&1 | tee $OUT/table.txt
P=target/release/phobosc; K=bench/logs/2026-12-01-night-kernels.ph
export PHOBOS_CACHE_DIR=off
b() { $P bench --backend gpu $K --config R=16 --dim M=1048576 --arg seed=1 --runs 21 "$@" 2>&1 | grep -o 'median[^;]*'; }
{
for kern in fill_u32 fill_f32 tandem_dropout; do
  echo "== $kern R=16 exact: $(b --kernel $kern)"
  echo "== $kern R=16 exact, stream ablated: $(PHOBOS_ABLATE_STREAM=1 b --kernel $kern)"
done
echo "== fill_normal R=16 exact: $(b --kernel fill_normal)"
echo "== fill_normal R=16 fast: $(b --kernel fill_normal --precision fast)"
echo "== fill_normal R=16 exact, stream ablated: $(PHOBOS_ABLATE_STREAM=1 b --kernel fill_normal)"
echo "== fill_f32 R=16 fast: $(b --kernel fill_f32 --precision fast)"
} 2>&1 | tee $OUT/ablations.txt
