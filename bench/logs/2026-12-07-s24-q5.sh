#!/bin/bash
# Session 24, fifth call: values kept across loops with one word of
# padding every 32 (phobosc-c, branch wip/chunk-cache) against p
# (88d295a): s17 c1 at rows of 1024, tuned; c's bits.
for f in .gl/*.deb; do dpkg -x $f / >/dev/null; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
mkdir -p target/dev && for f in target/devz/*.gz; do gzip -dc $f > target/dev/$(basename $f .gz); chmod +x target/dev/$(basename $f .gz); done
B=$PWD/target/dev
echo "# commit ${C:-?}; $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)"
KERNELS="c1" FILES="bench/s17/unseen.ph" ROWS=1024 BITS=0 timeout 60 bench/spellings-h200.sh c=$B/phobosc-c p=$B/phobosc-p 2>&1 | grep -v "^#\|^driver\|^binary"
d=$(mktemp -d)
for r in 1 2; do a=(--kernel c1 --config R=$r --dim M=64 --dim N=1024 --arg seed=7 --no-tune)
  $B/phobosc-c run bench/s17/unseen.ph "${a[@]}" --backend gpu --output Y=$d/g.npy >/dev/null 2>&1; $B/phobosc-c run bench/s17/unseen.ph "${a[@]}" --backend cpu --output Y=$d/c.npy >/dev/null 2>&1
  cmp -s $d/g.npy $d/c.npy && echo "R=$r bits identical" || echo "R=$r DIFFERENT"; done
