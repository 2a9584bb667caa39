#!/bin/bash
# Session 22, first call (issue 28): exact `/` by a divisor the same at
# every element of a statement (softmax's row sum, dropout's 1 - p) with
# the divisor's share computed once before the statement's loop
# (`plan::divisors`, `Lower::share_divisors`; target/dev/phobosc, HEAD) against the same
# check per element (target/dev/phobosc-prev, 4cd15af, the reciprocal
# check's default) in one call: the ceiling; the division's bits; exact
# softmax and layer norm spellings and the unseen and chunked ones at rows
# of 1024 and 4096; the seed's dropout_rows; the fused outputs' bits; fused
# Triton with the rest of the time.
for f in .gl/*.deb; do dpkg -x $f / >/dev/null; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
echo "# commit ${C:-?}; $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)"
t0=$(date +%s)
B=target/dev
echo "## WGSL ceilings (phobos-bench-gpu 26)"
timeout 60 $B/phobos-bench-gpu 26 2>&1 | grep -i "device\|zero fill, true" | head -3
echo "## division bits: GPU against the CPU backend, 4M operands"
timeout 60 bench/s21/div-bits.sh $B/phobosc "PHOBOS_DIV_CHECK=recip"
echo "## exact spellings: shared (HEAD), prev (4cd15af)"
PRECISIONS=exact BITS=0 timeout 200 bench/spellings-h200.sh shared=$B/phobosc prev=$B/phobosc-prev 2>&1 | grep -v "^#\|^driver\|^binary"
FILES="bench/s17/unseen.ph" PRECISIONS=exact BITS=0 \
  timeout 120 bench/spellings-h200.sh shared=$B/phobosc 2>&1 | grep -v "^#\|^driver\|^binary"
echo "($(( $(date +%s) - t0 )) s)"
echo "## dropout_rows exact, 2^26 (shared, prev)"
for b in phobosc phobosc-prev; do
  c=$(mktemp -d); PHOBOS_CACHE_DIR=$c timeout 40 $B/$b bench examples/dropout_rows.ph --backend gpu --precision exact --runs 21 --dim M=262144 --arg seed=7 --json 2>/dev/null | python3 -c "import json,sys; s=sys.stdin.read(); j=json.loads(s[s.index('{'):]); print('$b', 'median %.0f GiB/s' % j['median_gib_s'], j.get('config'))"
done
echo "## fused bits (shared)"
WGS="h 1024" timeout 150 bench/fused-bits.sh $B/phobosc 2>&1 | tail -4
left=$(( 560 - ($(date +%s) - t0) ))
[ $left -gt 40 ] && timeout $left python3 bench/peers/fused.py gpu --log2 26 --rows 1024,4096 --budget $((left - 20)) --no-compile 2>&1 | grep "Triton fused\|CUDA copy" | grep "^peers" | cut -f3-9
echo "took $(( $(date +%s) - t0 )) s"
