#!/bin/bash
# Session 29, third call: where attention_dropout_backward_kv's time goes,
# phobosc-k (its mask staged by columns). bench/s29/kv_parts.ph: the
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
for d in 64 128; do
  A="--dim BH=64 --dim S=1024 --dim D=$d --arg scale=0.125 --arg p=0.1 --arg key=2028"
  echo "## D=$d ($(el) s)"
  for kk in kv_full kv_no_mask kv_dv_only; do
    row "$kk" $B/phobosc-k fast $P --kernel $kk $A
  done
  PHOBOS_ABLATE_STREAM=1 row "kv_full, stream ablated" $B/phobosc-k fast $P --kernel kv_full $A
  for cfg in "BM=16 BN=16 128" "BM=32 BN=16 256" "BM=32 BN=16 512"; do set -- $cfg
    PHOBOS_WORKGROUP_SIZE=$3 row "kv_full $1 wg $3" $B/phobosc-k fast $P --kernel kv_full --config $1 --config $2 $A
    PHOBOS_WORKGROUP_SIZE=$3 row "kv_no_mask $1 wg $3" $B/phobosc-k fast $P --kernel kv_no_mask --config $1 --config $2 $A
  done
  row "_q" $B/phobosc-k fast $BW --kernel attention_dropout_backward_q $A
  PHOBOS_ABLATE_STREAM=1 row "_q, stream ablated" $B/phobosc-k fast $BW --kernel attention_dropout_backward_q $A
  row "forward" $B/phobosc-k fast $E $A
  PHOBOS_ABLATE_STREAM=1 row "forward, stream ablated" $B/phobosc-k fast $E $A
done
echo "took $(el) s"
