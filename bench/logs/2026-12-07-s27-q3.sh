#!/bin/bash
# Session 27, third call: staging by rows only where a statement gives each
# invocation 4 draws or more (`rows::rows_pay`), and for counters through
# `u32(..)` too (phobosc-c), against q1's binary (phobosc-a, no staging by
# rows): values (exact mode against Cranelift), then the attention forward
# (B*H = 64, S = 1024) and examples/dropout_backward_tandem.ph (blocks of 4
# x 64 of a [2^18, 256] matrix, now staged by rows) in both modes.
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
    np.save(f"{out}/{nm}.npy", rng.uniform(-1, 1, (4, 256, 128)).astype(np.float16))
np.save(f"{out}/DY.npy", rng.standard_normal((4096, 256)).astype(np.float32))
PY
ATT="--arg scale=0.125 --arg p=0.1 --arg key=2027"
IN="--input Q=$W/Q.npy --input K=$W/K.npy --input V=$W/V.npy"
E=examples/attention_dropout.ph; DB=examples/dropout_backward_tandem.ph
echo "## values ($(el) s)"
timeout 120 $B/phobosc-c run $E --backend cpu --config BN=32 $ATT $IN --output O=$W/O_cpu.npy --output L=$W/L_cpu.npy >/dev/null 2>$W/err || head -3 $W/err
timeout 60 $B/phobosc-c run $E --backend gpu --config BN=32 $ATT $IN --output O=$W/O_c.npy --output L=$W/L_c.npy 2>&1 | grep -i "tandem\|draw" | head -3
for o in O L; do echo "attention D=128 $o exact c vs cpu: $(cmp -s $W/${o}_c.npy $W/${o}_cpu.npy && echo same || echo DIFFER)"; done
timeout 60 $B/phobosc-c run $DB --backend cpu --arg key=7 --input DY=$W/DY.npy --output DX=$W/DX_cpu.npy >/dev/null 2>$W/err || head -3 $W/err
timeout 60 $B/phobosc-c run $DB --backend gpu --arg key=7 --input DY=$W/DY.npy --output DX=$W/DX_c.npy >/dev/null 2>$W/err || head -3 $W/err
echo "dropout_backward_tandem exact c vs cpu: $(cmp -s $W/DX_c.npy $W/DX_cpu.npy && echo same || echo DIFFER)"
echo "## speed (median of 21, tuned; $(el) s)"
row() { # label, binary, precision, then bench arguments
  local label=$1 bin=$2 p=$3; shift 3
  timeout 200 $bin bench "$@" --backend gpu --precision $p --json 2>/dev/null | python3 -c "
import json,sys; j=json.load(sys.stdin); print('$label\t%.4f ms\tconfig %s wg %s' % (j['median_ms'], j['config'], j['workgroup_size']))" || echo "$label	failed"
}
for p in exact fast; do
  for v in c a; do row "dropout_backward_tandem M=262144 $p ($v)" $B/phobosc-$v $p $DB --dim M=262144 --arg key=7; done
done
for d in 64 128; do for v in c a; do row "attention example D=$d fast ($v)" $B/phobosc-$v fast $E --dim BH=64 --dim S=1024 --dim D=$d $ATT; done; done
for v in c a; do row "attention example D=64 exact ($v)" $B/phobosc-$v exact $E --dim BH=64 --dim S=1024 --dim D=64 $ATT; done
echo "took $(el) s"
