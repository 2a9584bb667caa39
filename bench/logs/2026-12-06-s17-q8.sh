#!/bin/bash
# Session 17, eighth call (issue 28): the warp path now loads every
# segment's leaves before the butterflies (coop_warp.rs). phobosc at the
# commit in the header against base-phobosc (6d139fd), same call:
# 1. rows of 4096 by elements a lane (R = 1; 32, 16 and 8 a lane) and rows
#    of 1024 at 8 a lane, untuned, both modes;
# 2. the spellings tuned, rows of 1024 and 4096, both modes;
# 3. bits: bench/fused-bits.sh at the heuristic's size and at 128.
for f in .gl/*.deb; do dpkg -x $f / >/dev/null; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
echo "# commit ${C:-?}; $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)"
t0=$(date +%s)
B=target/dev
row() { # label bin file kernel precision N wg
  local label=$1 bin=$2 f=$3 k=$4 p=$5 n=$6 w=$7
  j=$(PHOBOS_WORKGROUP_SIZE=$w PHOBOS_CACHE_DIR=off timeout 60 $bin bench --backend gpu --precision $p --json --runs 21 --config R=1 \
      --dim M=$(( (1 << 26) / n )) --dim N=$n --arg seed=7 --kernel $k $f 2>/dev/null)
  python3 -c "
import json,sys
try:
  j=json.loads(sys.argv[1][sys.argv[1].index('{'):]); print('$label\t$k\t$n\t$p\twg$w\t%.0f\t%.0f' % (j['median_gib_s'], j['fastest_gib_s']))
except Exception as e: print('$label\t$k\t$n\t$p\twg$w\tn/a\t' + str(e)[:50])" "$j"
}
echo "## 1. by elements a lane"
for p in fast exact; do
  for spec in "tests/spellings/softmax.ph inv_inline" "tests/spellings/layernorm.ph ln_inline"; do
    set -- $spec
    for nw in "4096 128" "4096 256" "4096 512" "1024 128"; do
      set -- $spec $nw
      row new $B/phobosc $1 $2 $p $3 $4
      row base $B/base-phobosc $1 $2 $p $3 $4
    done
  done
done
echo "($(( $(date +%s) - t0 )) s)"
echo "## 2. tuned"
FILES="tests/spellings/softmax.ph tests/spellings/layernorm.ph" KERNELS="inv_inline div_triton ln_inline" BITS=0 \
  timeout 200 bench/spellings-h200.sh new=$B/phobosc base=$B/base-phobosc 2>&1 | grep -v "^#\|^driver\|^binary"
echo "($(( $(date +%s) - t0 )) s)"
echo "## 3. bits"
WGS="h 128" timeout 150 bench/fused-bits.sh $B/phobosc 2>&1 | tail -3
echo "took $(( $(date +%s) - t0 )) s"
