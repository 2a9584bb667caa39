#!/bin/bash
# Session 18, fourth call (issue 28): what the subgroup-layout check at the
# top of every reduction kernel costs (two barriers, and a fallback path
# whose per-lane array the driver puts in local memory). The whole-row
# spellings, untuned, at each workgroup size, with and without
# PHOBOS_SUBGROUP_LAYOUT=known (measurement knob: no check, no fallback),
# rows of 4096 and 1024; registers of both; bits with the knob.
for f in .gl/*.deb; do dpkg -x $f / >/dev/null; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
echo "# commit ${C:-?}; $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)"
t0=$(date +%s)
B=target/dev
row() { # label file kernel precision R wg N [env...]
  local label=$1 f=$2 k=$3 p=$4 r=$5 w=$6 n=$7; shift 7
  j=$(env "$@" PHOBOS_WORKGROUP_SIZE=$w PHOBOS_CACHE_DIR=off timeout 60 $B/phobosc bench --backend gpu --precision $p --json --runs 21 --no-tune \
      --config R=$r --dim M=$(( (1 << 26) / n )) --dim N=$n --arg seed=7 --kernel $k $f 2>/dev/null)
  python3 -c "
import json,sys
try:
  j=json.loads(sys.argv[1][sys.argv[1].index('{'):]); print('$label\t$k\t$p\tN=$n\tR=$r\twg$w\t%.0f\t%.0f' % (j['median_gib_s'], j['fastest_gib_s']))
except Exception as e: print('$label\t$k\t$p\tN=$n\tR=$r\twg$w\tn/a\t' + str(e)[:50])" "$j"
}
for p in fast exact; do
  for k in "tests/spellings/softmax.ph inv_inline" "tests/spellings/softmax.ph div_triton" "tests/spellings/layernorm.ph ln_inline"; do
    set -- $k
    for rw in "1 128 4096" "1 256 4096" "1 512 4096" "1 128 1024" "2 256 1024" "4 512 1024"; do
      set -- $k $rw
      row check $1 $2 $p $3 $4 $5
      row known $1 $2 $p $3 $4 $5 PHOBOS_SUBGROUP_LAYOUT=known
    done
  done
done
echo "($(( $(date +%s) - t0 )) s)"
D=$(mktemp -d)
for w in 128 256 512; do
  row regs tests/spellings/softmax.ph inv_inline fast 1 $w 4096 PHOBOS_SUBGROUP_LAYOUT=known PHOBOS_DUMP_SPIRV=$D
done >/dev/null
$B/phobos-bench-regs $D/*.spv 2>&1 | grep -o "wg[0-9]*\..*Register Count = [0-9]*\|Local Memory Size = [0-9]*" | paste - - 
PHOBOS_SUBGROUP_LAYOUT=known WGS="h 128 512" SHAPES="M=64,N=1000 M=9,N=4096 M=17,N=8192" timeout 120 bench/fused-bits.sh $B/phobosc 2>&1 | tail -2
echo "took $(( $(date +%s) - t0 )) s"
