#!/bin/bash
# Session 25, second call: (1) whether the chunked loops' re-reads at rows
# of 4096 come from memory: s17 c1 and the whole-row inv_inline at rows of
# 4096 over 512 and 1024 rows (X, 8 and 16 MiB, fit the L2) and over 16384 rows, tuned,
# fast and exact; (2) the bits of HEAD's binary (phobosc-n: the plan's
# reductions, upfront memory and row cache, the same WGSL) on this card;
# (3) registers and spills of s17 c1 with and without the chunk cache.
for f in .gl/*.deb; do dpkg -x $f / >/dev/null; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
mkdir -p target/dev && for f in target/devz/*.gz; do gzip -dc $f > target/dev/$(basename $f .gz); chmod +x target/dev/$(basename $f .gz); done
B=$PWD/target/dev
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
echo "# commit n=${C:-?}; $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)"
echo "## registers: s17 c1 at rows of 1024, R=1, main (88d295a's lowering) and wip/chunk-cache (wt), device options ($(el) s)"
timeout 60 $B/phobos-bench-regs target/devz/spv/*.spv 2>&1 | tail -40
echo "## rows of 4096: X in the L2 (M=1024) or not (M=16384)"
cache=$(mktemp -d)
for m in 512 1024 16384; do for k in "c1 bench/s17/unseen.ph" "inv_inline tests/spellings/softmax.ph"; do set -- $k
 for pr in fast exact; do
  j=$(PHOBOS_CACHE_DIR=$cache timeout 60 $B/phobosc-n bench --backend gpu --precision $pr --json --runs 51 --dim M=$m --dim N=4096 --arg seed=7 --kernel $1 $2 2>&1)
  echo "M=$m $1 $pr $(echo "$j" | grep -o '"median_gib_s": *[0-9.]*' | grep -o '[0-9.]*$' | cut -d. -f1) $(echo "$j" | grep -o '"median_ms": *[0-9.]*' | grep -o '[0-9.]*$') ms $(echo "$j" | tr -d '\n ' | grep -o '"config":{[^}]*}') wg$(echo "$j" | grep -o '"workgroup_size": *[0-9]*' | grep -o '[0-9]*$')"
 done; done; done
echo "## bits of n ($(el) s)"
WGS="h" timeout 70 bench/fused-bits.sh $B/phobosc-n 2>&1 | tail -3
echo "took $(el) s"
