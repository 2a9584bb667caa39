#!/bin/bash
# Session 20, third call (issue 29): the backward's bits (dK, dV, dQ, tarred
# into one file: a call returns at most 8), then matmul and the attention
# kernels tuned, as bench/attention-h200.sh times them (median ms), in the
# time left.
for f in .gl/*.deb; do dpkg -x $f / >/dev/null; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
echo "# commit ${C:-?}; $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)"
t0=$(date +%s)
P=target/dev/phobosc
BITS_ONLY=1 OUT=/tmp/q3 timeout 60 bench/attention-h200.sh $P >/dev/null 2>&1
tar -C /tmp/q3/bits -cf $OUT/backward-bits.tar dK.npy dV.npy dQ.npy && echo "backward bits tarred"
ATT="--arg scale=0.125 --arg p=0.1 --arg key=2027"
row() { local label=$1; shift
  timeout 60 $P bench "$@" --backend gpu --json 2>/dev/null | python3 -c "
import json,sys; j=json.load(sys.stdin); print('phobos\t$label\t%s\t%.4f ms\tconfig %s wg %s' % (j['precision'], j['median_ms'], j['config'], j.get('workgroup_size')))" || echo "phobos	$label	failed"; }
row "matmul 2048^3" examples/matmul.ph --dim M=2048 --dim N=2048 --dim K=2048 --precision fast
row "matmul 2048^3" examples/matmul.ph --dim M=2048 --dim N=2048 --dim K=2048 --precision exact
row "attention forward D=64" examples/attention_dropout.ph --dim BH=64 --dim S=1024 --dim D=64 $ATT --precision fast
row "attention forward D=128" examples/attention_dropout.ph --dim BH=64 --dim S=1024 --dim D=128 $ATT --precision fast
row "attention backward kv D=64" examples/attention_dropout_backward.ph --kernel attention_dropout_backward_kv --dim BH=64 --dim S=1024 --dim D=64 $ATT --precision fast
row "attention backward q D=64" examples/attention_dropout_backward.ph --kernel attention_dropout_backward_q --dim BH=64 --dim S=1024 --dim D=64 $ATT --precision fast
echo "took $(( $(date +%s) - t0 )) s"
