#!/bin/bash
# Session 21, second call (issue 28): exact division through a checked f64
# reciprocal (exact::div_recip, PHOBOS_DIV_CHECK=recip) against the f64 check of
# the native quotient (PHOBOS_DIV_CHECK=f64; wrappers in /tmp name each) in one
# call: the copy ceiling; the division's bits on edge and random operands;
# exact softmax and layer norm spellings and the unseen and chunked ones at
# rows of 1024 and 4096; the seed's dropout_rows; the fused examples' bits;
# fused Triton with the rest of the time. Issue 29: whether the wrong O of
# the hand-written `O regs` attention forms comes from their rescale.
for f in .gl/*.deb; do dpkg -x $f / >/dev/null; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
echo "# commit ${C:-?}; $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)"
t0=$(date +%s)
B=target/dev
# Each check named explicitly, whatever the binary's default.
for v in recip f64; do printf '#!/bin/sh\nPHOBOS_DIV_CHECK=%s exec "%s/phobosc" "$@"\n' $v "$PWD/$B" > /tmp/phobosc-$v; chmod +x /tmp/phobosc-$v; done
echo "## WGSL ceilings (phobos-bench-gpu 26)"
timeout 60 $B/phobos-bench-gpu 26 2>&1 | grep -i "device\|zero fill, true" | head -3
echo "## division bits: GPU against the CPU backend, 4M operands"
timeout 60 bench/s21/div-bits.sh $B/phobosc "PHOBOS_DIV_CHECK=recip" "PHOBOS_DIV_CHECK=f64"
echo "## exact spellings: recip (new default), f64 (the old default)"
PRECISIONS=exact BITS=0 timeout 200 bench/spellings-h200.sh recip=/tmp/phobosc-recip f64=/tmp/phobosc-f64 2>&1 | grep -v "^#\|^driver\|^binary"
FILES="bench/s17/unseen.ph" PRECISIONS=exact BITS=0 \
  timeout 120 bench/spellings-h200.sh recip=/tmp/phobosc-recip 2>&1 | grep -v "^#\|^driver\|^binary"
echo "($(( $(date +%s) - t0 )) s)"
echo "## dropout_rows exact, 2^26 (recip, f64)"
for b in phobosc-recip phobosc-f64; do
  c=$(mktemp -d); PHOBOS_CACHE_DIR=$c timeout 40 /tmp/$b bench examples/dropout_rows.ph --backend gpu --precision exact --runs 21 --dim M=262144 --arg seed=7 --json 2>/dev/null | python3 -c "import json,sys; s=sys.stdin.read(); j=json.loads(s[s.index('{'):]); print('$b', 'median %.0f GiB/s' % j['median_gib_s'], j.get('config'))"
done
echo "## fused bits (recip)"
PHOBOS_DIV_CHECK=recip WGS="h 1024" timeout 150 bench/fused-bits.sh $B/phobosc 2>&1 | tail -4
echo "## issue 29: the hand-written O-regs attention forms, with and without their rescale (PHOBOS_ATTN_NO_RESCALE=1), S=1024, D=64"
timeout 40 $B/phobos-bench-attention --s 1024 --d 64 --only regs 2>&1 | tail -6
PHOBOS_ATTN_NO_RESCALE=1 timeout 40 $B/phobos-bench-attention --s 1024 --d 64 --only regs 2>&1 | tail -6
left=$(( 250 - ($(date +%s) - t0) ))
[ $left -gt 40 ] && timeout $left python3 bench/peers/fused.py gpu --log2 26 --rows 1024,4096 --budget $((left - 20)) --no-compile 2>&1 | grep "Triton fused\|CUDA copy" | grep "^peers" | cut -f3-9
echo "took $(( $(date +%s) - t0 )) s"
