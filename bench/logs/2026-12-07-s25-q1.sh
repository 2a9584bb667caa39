#!/bin/bash
# Session 25, first call: (1) values kept across loops, padded one word
# every 32 (phobosc-c, branch wip/chunk-cache 4693b28) against p (88d295a)
# on s17 c1 at rows of 1024, with c's bits; (2) the standing of issue 28
# (every spelling of tests/spellings, both modes, fused Triton in the same
# call), on whatever card came; (3) bits of p on this card.
for f in .gl/*.deb; do dpkg -x $f / >/dev/null; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
mkdir -p target/dev && for f in target/devz/*.gz; do gzip -dc $f > target/dev/$(basename $f .gz); chmod +x target/dev/$(basename $f .gz); done
B=$PWD/target/dev
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
echo "# commit c=4693b28 p=88d295a; $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)"
echo "## chunk cache, padded"
KERNELS="c1 c2" FILES="bench/s17/unseen.ph" ROWS=1024 BITS=0 timeout 90 bench/spellings-h200.sh c=$B/phobosc-c p=$B/phobosc-p 2>&1 | grep -v "^#\|^driver\|^binary"
d=$(mktemp -d)
for r in 1 2; do a=(--kernel c1 --config R=$r --dim M=64 --dim N=1024 --arg seed=7 --no-tune)
  $B/phobosc-c run bench/s17/unseen.ph "${a[@]}" --backend gpu --output Y=$d/g.npy >/dev/null 2>&1; $B/phobosc-c run bench/s17/unseen.ph "${a[@]}" --backend cpu --output Y=$d/c.npy >/dev/null 2>&1
  cmp -s $d/g.npy $d/c.npy && echo "R=$r bits identical" || echo "R=$r DIFFERENT"; done
echo "## WGSL ceilings ($(el) s)"
timeout 60 $B/phobos-bench-gpu 26 2>&1 | grep -i "device\|zero fill, true" | head -3
echo "## spellings ($(el) s)"
BITS=0 timeout 300 bench/spellings-h200.sh p=$B/phobosc-p 2>&1 | grep -v "^#\|^driver\|^binary"
echo "## peers ($(el) s)"
timeout 100 python3 bench/peers/fused.py gpu --log2 26 --rows 1024,4096 --budget 80 --no-compile 2>&1 | grep "Triton fused\|CUDA copy" | grep "^peers" | cut -f3-9
echo "## chunked at rows of 4096: R x workgroup size, untuned ($(el) s)"
for k in "c1 bench/s17/unseen.ph" "softmax_dropout_chunked examples/softmax_dropout_chunked.ph"; do set -- $k
 for pr in fast exact; do for r in 1 2 4; do for w in 64 128 256 512 1024; do
  j=$(PHOBOS_WORKGROUP_SIZE=$w timeout 30 $B/phobosc-p bench --backend gpu --precision $pr --json --runs 21 --dim M=16384 --dim N=4096 --arg seed=7 --kernel $1 --config R=$r $2 2>&1)
  echo "$1 $pr R=$r wg$w $(echo "$j" | grep -o '"median_gib_s": *[0-9.]*' | grep -o '[0-9.]*$' | cut -d. -f1)"
 done; done; done; done
echo "## c1 at rows of 4096, fewer workgroups a multiprocessor (PHOBOS_WORKGROUP_PAD bytes) ($(el) s)"
for pad in 24576 32768 45056; do for w in 64 128 256; do
  j=$(PHOBOS_WORKGROUP_PAD=$pad PHOBOS_WORKGROUP_SIZE=$w timeout 30 $B/phobosc-p bench --backend gpu --precision fast --json --runs 21 --dim M=16384 --dim N=4096 --arg seed=7 --kernel c1 --config R=1 bench/s17/unseen.ph 2>&1)
  echo "c1 fast R=1 wg$w pad$pad $(echo "$j" | grep -o '"median_gib_s": *[0-9.]*' | grep -o '[0-9.]*$' | cut -d. -f1)"
done; done
echo "## bits ($(el) s)"
WGS="h" timeout 60 bench/fused-bits.sh $B/phobosc-p 2>&1 | tail -3
echo "took $(el) s"
