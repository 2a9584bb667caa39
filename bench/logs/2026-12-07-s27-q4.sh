#!/bin/bash
# Session 27, fourth call (q3 never ran: no machine): phobosc-d (373d01a) stores
# products from their tiles where the tiles do not split evenly over the
# subgroups too (attention's [16, 32] scores over 4 or 8 subgroups), sizes
# the slots by the subgroups that keep a tile, stages by rows only at 4
# draws an invocation or more, at most 16 rows a window, after the
# products' arrays; phobosc-e is d with the slots' barriers those of the
# subgroup (idle subgroups skip them); against q1's phobosc-a in the same
# call. Values (exact against Cranelift, fast d
# against a), then the attention forward and backward (B*H = 64, S =
# 1024), examples/dropout_backward_tandem.ph, and SDPA.
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
np.save(f"{out}/DY.npy", rng.standard_normal((4096, 256)).astype(np.float32))
PY
ATT="--arg scale=0.125 --arg p=0.1 --arg key=2027"
IN="--input Q=$W/Q.npy --input K=$W/K.npy --input V=$W/V.npy"
E=examples/attention_dropout.ph; BW=examples/attention_dropout_backward.ph; DB=examples/dropout_backward_tandem.ph
echo "## values ($(el) s)"
timeout 120 $B/phobosc-d run $E --backend cpu --config BN=32 $ATT $IN --output O=$W/O_cpu.npy --output L=$W/L_cpu.npy >/dev/null 2>$W/err || head -3 $W/err
for v in e d a; do for p in exact fast; do
  timeout 60 $B/phobosc-$v run $E --backend gpu --precision $p --config BN=32 $ATT $IN --output O=$W/O_${v}_$p.npy --output L=$W/L_${v}_$p.npy >/dev/null 2>$W/err || head -3 $W/err
done; done
for o in O L; do
  echo "attention $o exact d vs cpu: $(cmp -s $W/${o}_d_exact.npy $W/${o}_cpu.npy && echo same || echo DIFFER)"
  echo "attention $o fast d vs a: $(cmp -s $W/${o}_d_fast.npy $W/${o}_a_fast.npy && echo same || echo DIFFER)"
  echo "attention $o fast e vs d: $(cmp -s $W/${o}_e_fast.npy $W/${o}_d_fast.npy && echo same || echo DIFFER)"
done
timeout 60 $B/phobosc-d run $DB --backend cpu --arg key=7 --input DY=$W/DY.npy --output DX=$W/DX_cpu.npy >/dev/null 2>$W/err || head -3 $W/err
timeout 60 $B/phobosc-d run $DB --backend gpu --arg key=7 --input DY=$W/DY.npy --output DX=$W/DX_d.npy >/dev/null 2>$W/err || head -3 $W/err
echo "dropout_backward_tandem exact d vs cpu: $(cmp -s $W/DX_d.npy $W/DX_cpu.npy && echo same || echo DIFFER)"
echo "## speed (median of 21, tuned; $(el) s)"
row() { # label, binary, precision, then bench arguments
  local label=$1 bin=$2 p=$3; shift 3
  timeout 200 $bin bench "$@" --backend gpu --precision $p --json 2>/dev/null | python3 -c "
import json,sys; j=json.load(sys.stdin); print('$label\t%.4f ms\tconfig %s wg %s' % (j['median_ms'], j['config'], j['workgroup_size']))" || echo "$label	failed"
}
A="--dim BH=64 --dim S=1024 $ATT"
for d in 64 128; do for v in e d a; do row "attention forward D=$d fast ($v)" $B/phobosc-$v fast $E $A --dim D=$d; done; done
for v in d a; do row "attention forward D=64 exact ($v)" $B/phobosc-$v exact $E $A --dim D=64; done
for k in kv q; do for v in e d a; do row "attention backward _$k D=64 fast ($v)" $B/phobosc-$v fast $BW --kernel attention_dropout_backward_$k $A --dim D=64; done; done
for p in exact fast; do for v in d a; do row "dropout_backward_tandem M=262144 $p ($v)" $B/phobosc-$v $p $DB --dim M=262144 --arg key=7; done; done
echo "## peers ($(el) s)"
timeout 120 python3 bench/peers/attention.py 2>&1 | grep "S=1024" | head -4
echo "took $(el) s"
