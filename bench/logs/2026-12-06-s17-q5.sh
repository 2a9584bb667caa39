#!/bin/bash
# Session 17, fifth call (issue 28), phobosc in target/dev (release, the
# commit in the header): the launch heuristic now gives reductions about 8
# elements an invocation, up to the device's limit (was 4, capped at 256).
# 1. untuned launches (--no-tune: the heuristic's R and workgroup size) of
#    the spellings and the chunked examples, new heuristic against the old
#    (PHOBOS_WORKGROUP_SIZE=256, what the old one gave each of them), both
#    modes, rows of 1024 and 4096;
# 2. the register hypothesis of q4: rows of 4096 at 16 and 32 elements a
#    lane with the row cache off.
for f in .gl/*.deb; do dpkg -x $f / >/dev/null; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
echo "# commit ${C:-?}; $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)"
t0=$(date +%s)
B=target/dev
row() { # label file kernel precision N [config] [env...]
  local label=$1 f=$2 k=$3 p=$4 n=$5 cfg=$6; shift 6
  j=$(env "$@" PHOBOS_CACHE_DIR=off timeout 60 $B/phobosc bench --backend gpu --precision $p --json --runs 21 $cfg \
      --dim M=$(( (1 << 26) / n )) --dim N=$n --arg seed=7 --kernel $k $f 2>/dev/null)
  python3 -c "
import json,sys
try:
  j=json.loads(sys.argv[1][sys.argv[1].index('{'):]); print('$label\t$k\t$n\t$p\t%s wg%s\t%.0f\t%.0f' % (','.join('%s=%s' % kv for kv in sorted(j.get('config', {}).items())), j.get('workgroup_size'), j['median_gib_s'], j['fastest_gib_s']))
except Exception as e: print('$label\t$k\t$n\t$p\tn/a\t' + str(e)[:50])" "$j"
}
echo "## 1. untuned: new heuristic, then the old (256)"
for p in fast exact; do
  for n in 1024 4096; do
    for spec in "tests/spellings/softmax.ph inv_inline" "tests/spellings/softmax.ph div_triton" "tests/spellings/layernorm.ph ln_inline" \
                "examples/softmax_dropout_chunked.ph softmax_dropout_chunked" "examples/layernorm_dropout_chunked.ph layernorm_dropout_chunked"; do
      set -- $spec
      row new $1 $2 $p $n --no-tune
      row old $1 $2 $p $n --no-tune PHOBOS_WORKGROUP_SIZE=256
    done
  done
done
echo "## 2. rows of 4096, row cache off, 16 and 32 a lane"
for p in fast exact; do
  for w in 256 128; do
    row cache0 tests/spellings/softmax.ph inv_inline $p 4096 "--config R=1" PHOBOS_WORKGROUP_SIZE=$w PHOBOS_ROW_CACHE_WORDS=0
    row cache64 tests/spellings/softmax.ph inv_inline $p 4096 "--config R=1" PHOBOS_WORKGROUP_SIZE=$w
  done
done
echo "took $(( $(date +%s) - t0 )) s"
