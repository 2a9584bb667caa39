#!/bin/bash
# Session 17, fourth call (issue 28): why rows of 4096 run slower than rows
# of 1024 in every spelling and mode (fast softmax 2390 against 2642 GiB/s
# in q2; the tuner picks R=1 and 512 invocations). The example's spelling
# (inv_inline) and layer norm's (ln_inline) at rows of 4096, untuned, at
# each R and workgroup size, both modes; then the row cache off
# (PHOBOS_ROW_CACHE_WORDS=0) and larger (=128) at the tuner's choice.
for f in .gl/*.deb; do dpkg -x $f / >/dev/null; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
echo "# commit ${C:-?}; $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)"
t0=$(date +%s)
B=target/dev
row() { # label file kernel precision R wg [env...]
  local label=$1 f=$2 k=$3 p=$4 r=$5 w=$6; shift 6
  j=$(env "$@" PHOBOS_WORKGROUP_SIZE=$w PHOBOS_CACHE_DIR=off timeout 60 $B/phobosc bench --backend gpu --precision $p --json --runs 21 --no-tune \
      --config R=$r --dim M=$(( (1 << 26) / 4096 / 1 )) --dim N=4096 --arg seed=7 --kernel $k $f 2>/dev/null)
  python3 -c "
import json,sys
try:
  j=json.loads(sys.argv[1][sys.argv[1].index('{'):]); print('$label\t$k\t$p\tR=$r\twg$w\t%.0f\t%.0f' % (j['median_gib_s'], j['fastest_gib_s']))
except Exception as e: print('$label\t$k\t$p\tR=$r\twg$w\tn/a\t' + str(e)[:50])" "$j"
}
for p in fast exact; do
  for spec in "tests/spellings/softmax.ph inv_inline" "tests/spellings/layernorm.ph ln_inline"; do
    set -- $spec; f=$1; k=$2
    for rw in "1 128" "1 256" "1 512" "1 1024" "2 256" "2 512" "2 1024" "4 512" "4 1024"; do
      set -- $rw; row sweep $f $k $p $1 $2
    done
    row cache0 $f $k $p 1 512 PHOBOS_ROW_CACHE_WORDS=0
    row cache128 $f $k $p 1 256 PHOBOS_ROW_CACHE_WORDS=128
    row cache128 $f $k $p 1 128 PHOBOS_ROW_CACHE_WORDS=128
  done
done
echo "took $(( $(date +%s) - t0 )) s"
