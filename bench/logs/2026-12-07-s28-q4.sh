#!/bin/bash
# Session 28, fourth call: with the mask's chunks carried across
# iterations (phobosc-h, ad5cf03), which block sizes the attention forward
# wants now (bench/s27/attention_bm.ph: the example with BM and BN in
# [16, 32, 64]), B*H = 64, S = 1024, D = 64, fast, each configuration
# tuned over the workgroup sizes; the example tuned as it ships.
for f in .gl/*.deb; do dpkg -x $f / >/dev/null; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
mkdir -p target/dev && for f in target/devz/phobosc-h.gz; do gzip -dc $f > target/dev/$(basename $f .gz); chmod +x target/dev/$(basename $f .gz); done
B=$PWD/target/dev
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
echo "# $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)"
row() { # label, binary, precision, then bench arguments
  local label=$1 bin=$2 p=$3; shift 3
  timeout 100 $bin bench "$@" --backend gpu --precision $p --json 2>/dev/null | python3 -c "
import json,sys; j=json.load(sys.stdin); print('$label\t%.4f ms\tconfig %s wg %s' % (j['median_ms'], j['config'], j['workgroup_size']))" || echo "$label	failed"
}
A="--dim BH=64 --dim S=1024 --dim D=64 --arg scale=0.125 --arg p=0.1 --arg key=2028"
row "example tuned" $B/phobosc-h fast examples/attention_dropout.ph $A
for bm in 16 32 64; do for bn in 16 32 64; do
  row "BM=$bm BN=$bn" $B/phobosc-h fast bench/s27/attention_bm.ph $A --config BM=$bm --config BN=$bn
done; done
echo "took $(el) s"
