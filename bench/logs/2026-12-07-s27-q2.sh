#!/bin/bash
# Session 27, second call: Tandem words staged by rows (phobosc-b:
# attention's mask `(bh * S + i + iota(0)) * S + j + iota(1)` runs along
# each row of its [BM, BN] tile, the rows S apart; each row's words are
# stepped into workgroup memory instead of every draw seeding its own
# chunk) against q1's binary (phobosc-a) and session 26's (phobosc-i), in
# one call: values (exact mode against Cranelift, fast a against b), then
# the attention forward at B*H = 64, S = 1024 (BM = 16, the example's
# space), Triton's loop over K, and SDPA.
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
out = sys.argv[1]; rng = np.random.default_rng(27)
for nm in "QKV":
    np.save(f"{out}/{nm}.npy", rng.uniform(-1, 1, (4, 256, 64)).astype(np.float16))
PY
ATT="--arg scale=0.125 --arg p=0.1 --arg key=2027"
IN="--input Q=$W/Q.npy --input K=$W/K.npy --input V=$W/V.npy"
E=examples/attention_dropout.ph
echo "## values ($(el) s)"
timeout 120 $B/phobosc-b run $E --backend cpu --config BM=16 --config BN=32 $ATT $IN --output O=$W/O_cpu.npy --output L=$W/L_cpu.npy >/dev/null 2>$W/err || head -3 $W/err
for v in a b; do
  for p in exact fast; do
    timeout 60 $B/phobosc-$v run $E --backend gpu --precision $p --config BM=16 --config BN=32 $ATT $IN \
      --output O=$W/O_${v}_$p.npy --output L=$W/L_${v}_$p.npy >/dev/null 2>$W/err || head -3 $W/err
  done
done
for o in O L; do
  echo "$o exact b vs cpu: $(cmp -s $W/${o}_b_exact.npy $W/${o}_cpu.npy && echo same || echo DIFFER)"
  echo "$o exact a vs cpu: $(cmp -s $W/${o}_a_exact.npy $W/${o}_cpu.npy && echo same || echo DIFFER)"
  echo "$o fast b vs a: $(cmp -s $W/${o}_b_fast.npy $W/${o}_a_fast.npy && echo same || echo DIFFER)"
done
echo "## speed, fast (median of 21, tuned; $(el) s)"
row() { # label, binary, then bench arguments
  local label=$1 bin=$2; shift 2
  timeout 200 $bin bench "$@" --backend gpu --precision fast --json 2>/dev/null | python3 -c "
import json,sys; j=json.load(sys.stdin); print('$label\t%.4f ms\tconfig %s wg %s' % (j['median_ms'], j['config'], j['workgroup_size']))" || echo "$label	failed"
}
for d in 64 128; do
  A="--dim BH=64 --dim S=1024 --dim D=$d $ATT"
  for v in b a i; do row "attention example D=$d ($v)" $B/phobosc-$v $E $A; done
done
for bn in 16 64; do row "attention BM=16 BN=$bn D=64 (b)" $B/phobosc-b bench/s27/attention_bm.ph --dim BH=64 --dim S=1024 --dim D=64 $ATT --config BM=16 --config BN=$bn; done
echo "## exact ($(el) s)"
timeout 200 $B/phobosc-b bench $E --dim BH=64 --dim S=1024 --dim D=64 $ATT --backend gpu --json 2>/dev/null | python3 -c "
import json,sys; j=json.load(sys.stdin); print('attention example D=64 exact (b)\t%.4f ms\tconfig %s wg %s' % (j['median_ms'], j['config'], j['workgroup_size']))" || echo "exact b failed"
timeout 200 $B/phobosc-a bench $E --dim BH=64 --dim S=1024 --dim D=64 $ATT --backend gpu --json 2>/dev/null | python3 -c "
import json,sys; j=json.load(sys.stdin); print('attention example D=64 exact (a)\t%.4f ms\tconfig %s wg %s' % (j['median_ms'], j['config'], j['workgroup_size']))" || echo "exact a failed"
echo "## Triton's loop ($(el) s)"
for v in b i; do row "matmul_loop 2048^3 ($v)" $B/phobosc-$v bench/s15/matmul_spellings.ph --kernel matmul_loop --dim M=2048 --dim N=2048 --dim K=2048; done
echo "## peers ($(el) s)"
timeout 120 python3 bench/peers/attention.py 2>&1 | grep "S=1024" | head -4
echo "took $(el) s"
