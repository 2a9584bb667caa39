#!/bin/bash
# Session 29, second call. phobosc-k: Tandem words whose counters run down
# the columns of a tile (a transposed block: the backward `_kv`'s mask,
# `(bh * S + i + iota(1)) * S + j + iota(0)`) staged by columns, and a
# later statement of the same iteration that draws the same words reads
# them without filling again; phobosc-k1: the same, staging inside loops
# at 1 draw an invocation (k: 2); phobosc-i: 2fe59d6, the base. Values:
# exact dK, dV against Cranelift; fast k against i. Then speed, tuned and
# at fixed workgroup sizes; SDPA.
for f in .gl/*.deb; do dpkg -x $f / >/dev/null; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
mkdir -p target/dev && for f in target/devz/*.gz; do gzip -dc $f > target/dev/$(basename $f .gz); chmod +x target/dev/$(basename $f .gz); done
B=$PWD/target/dev
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
echo "# $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)"
W=$(mktemp -d)
python3 - $W <<'PY'
import sys
import numpy as np
out = sys.argv[1]; rng = np.random.default_rng(29)
for nm in ["Q", "K", "V", "DO"]:
    np.save(f"{out}/{nm}.npy", rng.uniform(-1, 1, (4, 256, 64)).astype(np.float16))
PY
ATT="--arg scale=0.125 --arg p=0.1 --arg key=2029"
IN="--input Q=$W/Q.npy --input K=$W/K.npy --input V=$W/V.npy"
E=examples/attention_dropout.ph; BW=examples/attention_dropout_backward.ph
same() { cmp -s $1 $2 && echo same || echo DIFFER; }
echo "## values ($(el) s)"
timeout 120 $B/phobosc-k run $E --backend cpu --config BN=32 $ATT $IN --output O=$W/O.npy --output L=$W/L.npy >/dev/null 2>$W/err || head -3 $W/err
BIN="$IN --input O=$W/O.npy --input L=$W/L.npy --input dO=$W/DO.npy"
for cfg in "BM=16 BN=16" "BM=32 BN=16"; do set -- $cfg
  C="--config $1 --config $2"
  timeout 120 $B/phobosc-k run $BW --kernel attention_dropout_backward_kv --backend cpu $C $ATT $BIN --output dK=$W/dK_cpu.npy --output dV=$W/dV_cpu.npy >/dev/null 2>$W/err || head -3 $W/err
  for wg in 128 256 512; do
    for v in k k1; do
      PHOBOS_WORKGROUP_SIZE=$wg timeout 60 $B/phobosc-$v run $BW --kernel attention_dropout_backward_kv --backend gpu $C $ATT $BIN --output dK=$W/dK_$v.npy --output dV=$W/dV_$v.npy >/dev/null 2>$W/err || head -3 $W/err
      echo "$cfg wg $wg exact $v vs cpu: dK $(same $W/dK_$v.npy $W/dK_cpu.npy) dV $(same $W/dV_$v.npy $W/dV_cpu.npy)"
    done
    for v in k i; do
      PHOBOS_WORKGROUP_SIZE=$wg timeout 60 $B/phobosc-$v run $BW --kernel attention_dropout_backward_kv --backend gpu --precision fast $C $ATT $BIN --output dK=$W/dKf_$v.npy --output dV=$W/dVf_$v.npy >/dev/null 2>$W/err || head -3 $W/err
    done
    echo "$cfg wg $wg fast k vs i: dK $(same $W/dKf_k.npy $W/dKf_i.npy) dV $(same $W/dVf_k.npy $W/dVf_i.npy)"
  done
done
echo "## speed (median of 21; $(el) s)"
row() { # label, binary, precision, then bench arguments
  local label=$1 bin=$2 p=$3; shift 3
  timeout 200 $bin bench "$@" --backend gpu --precision $p --json 2>/dev/null | python3 -c "
import json,sys; j=json.load(sys.stdin); print('$label\t%.4f ms\tconfig %s wg %s' % (j['median_ms'], j['config'], j['workgroup_size']))" || echo "$label	failed"
}
A="--dim BH=64 --dim S=1024 --dim D=64 --arg scale=0.125 --arg p=0.1 --arg key=2028"
for v in k k1 i; do
  row "_kv tuned ($v)" $B/phobosc-$v fast $BW --kernel attention_dropout_backward_kv $A
  for cfg in "BM=16 BN=16" "BM=32 BN=16"; do set -- $cfg
    for wg in 128 256 512; do
      PHOBOS_WORKGROUP_SIZE=$wg row "_kv $cfg wg $wg ($v)" $B/phobosc-$v fast $BW --kernel attention_dropout_backward_kv --config $1 --config $2 $A
    done
  done
done
for v in k i; do
  row "_kv tuned, exact ($v)" $B/phobosc-$v exact $BW --kernel attention_dropout_backward_kv $A
  row "_q tuned ($v)" $B/phobosc-$v fast $BW --kernel attention_dropout_backward_q $A
  row "forward tuned ($v)" $B/phobosc-$v fast $E $A
done
A128="--dim BH=64 --dim S=1024 --dim D=128 --arg scale=0.088 --arg p=0.1 --arg key=2028"
for v in k i; do
  row "_kv D=128 tuned ($v)" $B/phobosc-$v fast $BW --kernel attention_dropout_backward_kv $A128
  row "_q D=128 tuned ($v)" $B/phobosc-$v fast $BW --kernel attention_dropout_backward_q $A128
done
echo "## peers ($(el) s)"
timeout 120 python3 bench/peers/attention.py 2>&1 | grep "S=1024" | head -4
echo "took $(el) s"
