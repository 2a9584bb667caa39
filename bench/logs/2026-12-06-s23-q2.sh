#!/bin/bash
# Session 23, second call (issue 28): a lane's segments reduced by one
# transposing butterfly (target/dev/phobosc-t, 0e2be2e or later: the build
# in target/devz is 8b66b32, "t") against the
# first call's binary (phobosc, 6695979 "new"): the reductions' bits with
# 32-lane subgroups (bench/reduce-bits.sh) and the fused outputs' bits;
# whole-row spellings in both modes; then, as time allows, c1 at each
# workgroup size, the chunked loops, fused Triton.
for f in .gl/*.deb; do dpkg -x $f / >/dev/null; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
mkdir -p target/dev && for f in target/devz/*.gz; do gzip -dc $f > target/dev/$(basename $f .gz); chmod +x target/dev/$(basename $f .gz); done
echo "# commit ${C:-?}; $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)"
t0=$(date +%s)
el() { echo $(( $(date +%s) - t0 )); }
B=target/dev
echo "## WGSL ceilings (phobos-bench-gpu 26)"
timeout 60 $B/phobos-bench-gpu 26 2>&1 | grep -i "device\|zero fill, true" | head -3
echo "## reductions' bits (t): subgroups of 32, workgroup memory, CPU"
timeout 120 bench/reduce-bits.sh $B/phobosc-t 2>&1 | grep -v "equals cpu"
echo "## whole rows: t against new"
KERNELS="inv_inline div_triton ln_inline" BITS=0 timeout 150 \
  bench/spellings-h200.sh t=$B/phobosc-t new=$B/phobosc 2>&1 | grep -v "^#\|^driver\|^binary"
echo "($(el) s)"
echo "## fused bits (t)"
WGS="h 1024" timeout 150 bench/fused-bits.sh $B/phobosc-t 2>&1 | tail -3
echo "($(el) s)"
if [ "$(el)" -lt 200 ]; then
  echo "## c1 at rows of 4096, R = 1, each workgroup size (t, untuned): the landscape"
  for w in 64 128 256 512 1024; do for p in exact fast; do
    PHOBOS_WORKGROUP_SIZE=$w PHOBOS_CACHE_DIR=off timeout 30 $B/phobosc-t bench bench/s18/chunked.ph --kernel c1 --config R=1 --no-tune --backend gpu --precision $p --json --runs 21 \
      --dim M=16384 --dim N=4096 --arg seed=7 2>/dev/null | python3 -c "import json,sys; s=sys.stdin.read(); j=json.loads(s[s.index('{'):]); print('c1 R=1 wg$w $p', '%.0f' % j['median_gib_s'], j.get('workgroup_size'))"
  done; done
  echo "($(el) s)"
fi
if [ "$(el)" -lt 220 ]; then
  echo "## chunked (t)"
  KERNELS="c1 c2" FILES="bench/s18/chunked.ph" BITS=0 timeout 60 \
    bench/spellings-h200.sh t=$B/phobosc-t 2>&1 | grep -v "^#\|^driver\|^binary"
  echo "($(el) s)"
fi
left=$(( 280 - $(el) ))
[ $left -gt 40 ] && timeout $left python3 bench/peers/fused.py gpu --log2 26 --rows 1024,4096 --budget $((left - 20)) --no-compile 2>&1 | grep "Triton fused\|CUDA copy" | grep "^peers" | cut -f3-9
echo "took $(el) s"
