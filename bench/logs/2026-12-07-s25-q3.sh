#!/bin/bash
# Session 25, third call (q2 cut to what the device time left allows):
# registers and spills of s17 c1 with and without the chunk cache; s17 c1
# against the whole-row inv_inline at rows of 4096 over 512 rows (X, 8
# MiB, fits the L2) and 16384 rows, tuned, fast.
for f in .gl/*.deb; do dpkg -x $f / >/dev/null; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
mkdir -p target/dev && for f in target/devz/*.gz; do gzip -dc $f > target/dev/$(basename $f .gz); chmod +x target/dev/$(basename $f .gz); done
B=$PWD/target/dev
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
echo "# commit n=${C:-?}; $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)"
echo "## registers: s17 c1, rows of 1024, R=1, main's lowering and wip/chunk-cache (wt), device options"
timeout 30 $B/phobos-bench-regs target/devz/spv/*.spv 2>&1 | tail -40
echo "## rows of 4096, fast: X in the L2 (M=512) or not (M=16384) ($(el) s)"
cache=$(mktemp -d)
for m in 512 16384; do for k in "c1 bench/s17/unseen.ph" "inv_inline tests/spellings/softmax.ph"; do set -- $k
  j=$(PHOBOS_CACHE_DIR=$cache timeout 40 $B/phobosc-n bench --backend gpu --precision fast --json --runs 51 --dim M=$m --dim N=4096 --arg seed=7 --kernel $1 $2 2>&1)
  echo "M=$m $1 $(echo "$j" | grep -o '"median_gib_s": *[0-9.]*' | grep -o '[0-9.]*$' | cut -d. -f1) GiB/s $(echo "$j" | grep -o '"median_ms": *[0-9.]*' | grep -o '[0-9.]*$') ms $(echo "$j" | tr -d '\n ' | grep -o '"config":{[^}]*}') wg$(echo "$j" | grep -o '"workgroup_size": *[0-9]*' | grep -o '[0-9]*$')"
done; done
echo "took $(el) s"
