#!/bin/bash
# Session 21, first call (issue 28): exact division checked in f32 with
# Dekker's product (exact::div_split, PHOBOS_DIV_CHECK=f32, the wrapper
# target/dev/phobosc-f32) against the f64 check (the default) in one call:
# the copy ceiling; exact softmax and layer norm spellings at rows of 1024
# and 4096 with both checks and with the driver's `/` (PHOBOS_ABLATE_MATH=div,
# wrong bits: the bound); the seed's dropout_rows; the bits of the division
# on edge and random operands and of the fused examples with the f32 check;
# fused Triton with the rest of the time.
for f in .gl/*.deb; do dpkg -x $f / >/dev/null; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
echo "# commit ${C:-?}; $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)"
t0=$(date +%s)
B=target/dev
echo "## WGSL ceilings (phobos-bench-gpu 26)"
timeout 60 $B/phobos-bench-gpu 26 2>&1 | grep -i "device\|ceiling\|copy\|zero" | head -8
echo "## division bits: GPU against the CPU backend, 4M operands"
timeout 60 bench/s21/div-bits.sh $B/phobosc "PHOBOS_DIV_CHECK=f64" "PHOBOS_DIV_CHECK=f32"
echo "## exact spellings: f64 check (base), f32 check (f32), driver's / (ablate_div)"
PRECISIONS=exact BITS=0 timeout 200 bench/spellings-h200.sh base=$B/phobosc f32=$B/phobosc-f32 2>&1 | grep -v "^#\|^driver\|^binary"
PHOBOS_ABLATE_MATH=div FILES="tests/spellings/softmax.ph tests/spellings/layernorm.ph" KERNELS="inv_inline div_triton layernorm_triton" PRECISIONS=exact BITS=0 \
  timeout 45 bench/spellings-h200.sh ablate_div=$B/phobosc 2>&1 | grep -v "^#\|^driver\|^binary"
echo "($(( $(date +%s) - t0 )) s)"
echo "## dropout_rows exact, 2^26 (base, f32)"
for b in phobosc phobosc-f32; do
  c=$(mktemp -d); PHOBOS_CACHE_DIR=$c timeout 40 $B/$b bench examples/dropout_rows.ph --backend gpu --precision exact --runs 21 --dim M=262144 --arg seed=7 --json 2>/dev/null | python3 -c "import json,sys; s=sys.stdin.read(); j=json.loads(s[s.index('{'):]); print('$b', 'median %.0f GiB/s' % j['median_gib_s'], j.get('config'))"
done
echo "## fused bits with the f32 check"
PHOBOS_DIV_CHECK=f32 WGS="h 1024" timeout 150 bench/fused-bits.sh $B/phobosc 2>&1 | tail -4
left=$(( 560 - ($(date +%s) - t0) ))
[ $left -gt 40 ] && timeout $left python3 bench/peers/fused.py gpu --log2 26 --rows 1024,4096 --budget $((left - 20)) --no-compile 2>&1 | grep "Triton fused\|CUDA copy" | grep "^peers" | cut -f3-9
echo "took $(( $(date +%s) - t0 )) s"
