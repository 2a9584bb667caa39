#!/bin/bash
# Session 27, first call: the attention forward with its products stored
# from the subgroups' tiles into its `var` tiles (no array of either whole
# result), V proven inside at every block (only `d` staged), so that 32
# and 64 query rows a block fit: values first (BM changes no bit at one
# BN; fast mode against Cranelift's exact outputs), then every (BM, BN)
# of bench/s27/attention_bm.ph at B*H = 64, S = 1024, with SDPA in the
# same call, and session 26's binary (phobosc-i, a89d1ca); then Triton's
# loop over K (eecfefa, unmeasured so far) against it.
for f in .gl/*.deb; do dpkg -x $f / >/dev/null; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
mkdir -p target/dev && for f in target/devz/*.gz; do gzip -dc $f > target/dev/$(basename $f .gz); chmod +x target/dev/$(basename $f .gz); done
B=$PWD/target/dev; P=$B/phobosc-a
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
echo "# $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)"
W=$(mktemp -d); mkdir -p $W/fast $W/ref
python3 - $W <<'PY'
import sys
import numpy as np
out = sys.argv[1]; rng = np.random.default_rng(27)
for nm in "QKV":
    np.save(f"{out}/{nm}.npy", rng.uniform(-1, 1, (4, 256, 64)).astype(np.float16))
PY
ATT="--arg scale=0.125 --arg p=0.1 --arg key=2027"
IN="--input Q=$W/Q.npy --input K=$W/K.npy --input V=$W/V.npy"
F=bench/s27/attention_bm.ph
echo "## values ($(el) s)"
for bn in 32 64; do
  timeout 120 $P run $F --backend cpu --config BM=16 --config BN=$bn $ATT $IN --output O=$W/ref/O_$bn.npy --output L=$W/ref/L_$bn.npy >/dev/null 2>$W/err || head -3 $W/err
  for bm in 16 32 64; do
    timeout 30 $P run $F --backend gpu --precision fast --config BM=$bm --config BN=$bn $ATT $IN \
      --output O=$W/O_${bm}_$bn.npy --output L=$W/L_${bm}_$bn.npy >/dev/null 2>$W/err || head -3 $W/err
  done
  for bm in 32 64; do for o in O L; do echo "$o BN=$bn BM=$bm vs BM=16: $(cmp -s $W/${o}_${bm}_$bn.npy $W/${o}_16_$bn.npy && echo same || echo DIFFER)"; done; done
  cp $W/O_64_$bn.npy $W/fast/O_$bn.npy; cp $W/L_64_$bn.npy $W/fast/L_$bn.npy
done
python3 bench/s14/fast_error.py $W/fast $W/ref
echo "## speed, fast (median of 21, tuned; $(el) s)"
row() { # label, binary, then bench arguments
  local label=$1 bin=$2; shift 2
  timeout 200 $bin bench "$@" --backend gpu --precision fast --json 2>/dev/null | python3 -c "
import json,sys; j=json.load(sys.stdin); print('$label\t%.4f ms\tconfig %s wg %s' % (j['median_ms'], j['config'], j['workgroup_size']))" || echo "$label	failed"
}
for d in 64 128; do
  A="--dim BH=64 --dim S=1024 --dim D=$d $ATT"
  row "attention example (BM=16 only) D=$d" $P examples/attention_dropout.ph $A
  row "attention example D=$d, session 26 binary (i)" $B/phobosc-i examples/attention_dropout.ph $A
  for bm in 16 32 64; do for bn in 16 32 64; do
    row "attention BM=$bm BN=$bn D=$d" $P $F $A --config BM=$bm --config BN=$bn
  done; done
  row "attention tuned over all D=$d" $P $F $A
done
row "matmul_loop 2048^3 (i, before eecfefa)" $B/phobosc-i bench/s15/matmul_spellings.ph --kernel matmul_loop --dim M=2048 --dim N=2048 --dim K=2048
row "matmul_loop 2048^3" $P bench/s15/matmul_spellings.ph --kernel matmul_loop --dim M=2048 --dim N=2048 --dim K=2048
row "matmul.ph 2048^3" $P examples/matmul.ph --dim M=2048 --dim N=2048 --dim K=2048
echo "## peers ($(el) s)"
timeout 120 python3 bench/peers/attention.py 2>&1 | grep "matmul\|S=1024" | head -8
echo "took $(el) s"
