#!/bin/bash
# Session 28, fifth call: phobosc-i (staging by rows at 2 draws an
# invocation inside loops, in_loop from the open loops) against phobosc-h,
# the attention forward at fixed configurations with the launch
# heuristic's workgroup size (what `--config` gives) and tuned; values.
for f in .gl/*.deb; do dpkg -x $f / >/dev/null; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
mkdir -p target/dev && for f in target/devz/*.gz; do gzip -dc $f > target/dev/$(basename $f .gz); chmod +x target/dev/$(basename $f .gz); done
B=$PWD/target/dev
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
echo "# $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)"
row() { # label, binary, precision, then bench arguments
  local label=$1 bin=$2 p=$3; shift 3
  timeout 100 $bin bench "$@" --backend gpu --precision $p --json 2>/dev/null | python3 -c "
import json,sys; j=json.load(sys.stdin); print('$label\t%.4f ms\tconfig %s wg %s' % (j['median_ms'], j['config'], j['workgroup_size']))" || echo "$label	failed"
}
A="--dim BH=64 --dim S=1024 --dim D=64 --arg scale=0.125 --arg p=0.1 --arg key=2028"
W=$(mktemp -d)
for v in i h; do
  timeout 60 $B/phobosc-$v run examples/attention_dropout.ph --backend gpu --precision fast --config BN=16 $A --output O=$W/O_$v.npy >/dev/null 2>$W/err || head -3 $W/err
done
echo "BN=16 heuristic wg, O i vs h: $(cmp -s $W/O_i.npy $W/O_h.npy && echo same || echo DIFFER)"
for v in i h; do
  row "example tuned ($v)" $B/phobosc-$v fast examples/attention_dropout.ph $A
  for bn in 16 32 64; do row "BM=16 BN=$bn, --config ($v)" $B/phobosc-$v fast bench/s27/attention_bm.ph $A --config BM=16 --config BN=$bn; done
  row "backward _kv tuned ($v)" $B/phobosc-$v fast examples/attention_dropout_backward.ph --kernel attention_dropout_backward_kv $A
  row "backward _q tuned ($v)" $B/phobosc-$v fast examples/attention_dropout_backward.ph --kernel attention_dropout_backward_q $A
done
echo "took $(el) s"
