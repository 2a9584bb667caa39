#!/bin/bash
# Session 24, first call: s23-q3 (the transposing butterfly, phobosc-t at
# 8b66b32, against 6695979, "new"), then short loops of constant bounds
# written out by the plan (phobosc-u, plan/unroll.rs, uncommitted build on
# 8b66b32's successor abcc866) against t on the chunked loops, and the
# same loops unrolled by hand (bench/s24/c1u.ph).
for f in .gl/*.deb; do dpkg -x $f / >/dev/null; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
mkdir -p target/dev && for f in target/devz/phobosc*.gz; do gzip -dc $f > target/dev/$(basename $f .gz); chmod +x target/dev/$(basename $f .gz); done
echo "# commit ${C:-?}; $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)"
t0=$(date +%s)
el() { echo $(( $(date +%s) - t0 )); }
B=target/dev
q() { grep -v "^#\|^driver\|^binary"; }
echo "## reductions' bits (t): subgroups of 32, workgroup memory, CPU"
timeout 60 bench/reduce-bits.sh $B/phobosc-t 2>&1 | grep -v "equals cpu"
echo "## whole rows: t against new ($(el) s)"
KERNELS="inv_inline div_triton ln_inline" PRECISIONS=exact BITS=0 timeout 100 \
  bench/spellings-h200.sh t=$B/phobosc-t new=$B/phobosc 2>&1 | q
echo "## fused bits (t) ($(el) s)"
WGS="h" timeout 50 bench/fused-bits.sh $B/phobosc-t 2>&1 | tail -3
echo "## chunked: u against t ($(el) s)"
KERNELS="c1" FILES="bench/s17/unseen.ph" BITS=0 timeout 120 bench/spellings-h200.sh u=$B/phobosc-u t=$B/phobosc-t 2>&1 | q
KERNELS="c1 c2" FILES="bench/s18/chunked.ph" BITS=0 timeout 200 bench/spellings-h200.sh u=$B/phobosc-u t=$B/phobosc-t 2>&1 | q
echo "## c1u by hand, rows of 1024 ($(el) s)"
KERNELS="c1u" FILES="bench/s24/c1u.ph" ROWS=1024 BITS=0 timeout 40 bench/spellings-h200.sh t=$B/phobosc-t 2>&1 | q
echo "## bits of u on the chunked loops, GPU against CPU ($(el) s)"
d=$(mktemp -d); n=0; bad=0
for fk in bench/s17/unseen.ph:c1 bench/s18/chunked.ph:c1 bench/s18/chunked.ph:c2 bench/s18/chunked.ph:c3; do f=${fk%%:*}; k=${fk#*:}
  for mn in "M=64 N=1024" "M=17 N=4096" "M=300 N=512" "M=9 N=2048"; do set -- $mn; for r in 1 2; do
    a=(--kernel $k --config R=$r --dim $1 --dim $2 --arg seed=7 --no-tune)
    timeout 20 $B/phobosc-u run $f "${a[@]}" --backend gpu --output Y=$d/g.npy >/dev/null 2>$d/e || { echo "$fk $mn R=$r gpu failed: $(tail -1 $d/e)"; bad=1; continue; }
    timeout 20 $B/phobosc-u run $f "${a[@]}" --backend cpu --output Y=$d/c.npy >/dev/null 2>&1
    n=$((n+1)); cmp -s $d/g.npy $d/c.npy || { echo "$fk $mn R=$r DIFFERENT"; bad=1; }
  done; done; done
echo "bits: $n compared, $([ $bad = 0 ] && echo all identical || echo DIFFERENCES)"
echo "took $(el) s"
