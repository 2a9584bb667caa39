#!/bin/bash
# Session 29, third call: phobosc-m (k, and fills that never resume a
# chunk, as the backward over keys' walking its queries, carry none)
# against phobosc-k and phobosc-i; then where attention_dropout_backward_kv's
# time goes, phobosc-m. bench/s29/kv_parts.ph: the
# example's kernel, without the mask, and with only dV; the stream's
# arithmetic ablated (PHOBOS_ABLATE_STREAM=1: the bits are wrong, the time
# is what the kernel costs without Tandem's steps); the forward and `_q`
# likewise. BH = 64, S = 1024, fast, tuned, median of 21.
for f in .gl/*.deb; do dpkg -x $f / >/dev/null; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
mkdir -p target/dev && for f in target/devz/*.gz; do gzip -dc $f > target/dev/$(basename $f .gz); chmod +x target/dev/$(basename $f .gz); done
B=$PWD/target/dev
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
echo "# $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)"
row() { # label, binary, precision, then bench arguments
  local label=$1 bin=$2 p=$3; shift 3
  timeout 200 $bin bench "$@" --backend gpu --precision $p --json 2>/dev/null | python3 -c "
import json,sys; j=json.load(sys.stdin); print('$label\t%.4f ms\tconfig %s wg %s' % (j['median_ms'], j['config'], j['workgroup_size']))" || echo "$label	failed"
}
P=bench/s29/kv_parts.ph; BW=examples/attention_dropout_backward.ph; E=examples/attention_dropout.ph
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
same() { cmp -s $1 $2 && echo same || echo DIFFER; }
echo "## values, m ($(el) s)"
timeout 120 $B/phobosc-m run $E --backend cpu --config BN=32 $ATT $IN --output O=$W/O.npy --output L=$W/L.npy >/dev/null 2>$W/err || head -3 $W/err
BIN="$IN --input O=$W/O.npy --input L=$W/L.npy --input dO=$W/DO.npy"
for cfg in "BM=16 BN=16" "BM=32 BN=16"; do set -- $cfg
  C="--config $1 --config $2"
  timeout 120 $B/phobosc-m run $BW --kernel attention_dropout_backward_kv --backend cpu $C $ATT $BIN --output dK=$W/dK_cpu.npy --output dV=$W/dV_cpu.npy >/dev/null 2>$W/err || head -3 $W/err
  for wg in 128 256; do
    PHOBOS_WORKGROUP_SIZE=$wg timeout 60 $B/phobosc-m run $BW --kernel attention_dropout_backward_kv --backend gpu $C $ATT $BIN --output dK=$W/dK_m.npy --output dV=$W/dV_m.npy >/dev/null 2>$W/err || head -3 $W/err
    echo "$cfg wg $wg exact m vs cpu: dK $(same $W/dK_m.npy $W/dK_cpu.npy) dV $(same $W/dV_m.npy $W/dV_cpu.npy)"
  done
done
echo "## m against k and i ($(el) s)"
for d in 64 128; do
  A="--dim BH=64 --dim S=1024 --dim D=$d --arg scale=0.125 --arg p=0.1 --arg key=2028"
  for v in m k i; do
    row "_kv D=$d tuned ($v)" $B/phobosc-$v fast $BW --kernel attention_dropout_backward_kv $A
    for cfg in "BM=32 BN=16 128" "BM=32 BN=16 256"; do set -- $cfg
      PHOBOS_WORKGROUP_SIZE=$3 row "_kv D=$d $1 wg $3 ($v)" $B/phobosc-$v fast $BW --kernel attention_dropout_backward_kv --config $1 --config $2 $A
    done
  done
done
A="--dim BH=64 --dim S=1024 --dim D=64 --arg scale=0.125 --arg p=0.1 --arg key=2028"
for v in m i; do row "_kv exact tuned ($v)" $B/phobosc-$v exact $BW --kernel attention_dropout_backward_kv $A; done
for d in 64; do
  A="--dim BH=64 --dim S=1024 --dim D=$d --arg scale=0.125 --arg p=0.1 --arg key=2028"
  echo "## D=$d ($(el) s)"
  for kk in kv_full kv_no_mask kv_dv_only; do
    row "$kk" $B/phobosc-m fast $P --kernel $kk $A
  done
  PHOBOS_ABLATE_STREAM=1 row "kv_full, stream ablated" $B/phobosc-m fast $P --kernel kv_full $A
  row "_q" $B/phobosc-m fast $BW --kernel attention_dropout_backward_q $A
  PHOBOS_ABLATE_STREAM=1 row "_q, stream ablated" $B/phobosc-m fast $BW --kernel attention_dropout_backward_q $A
  row "forward" $B/phobosc-m fast $E $A
  PHOBOS_ABLATE_STREAM=1 row "forward, stream ablated" $B/phobosc-m fast $E $A
done
echo "took $(el) s"
