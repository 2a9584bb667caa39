#!/bin/bash
# Session 28, second call. phobosc-g (69ec817) carries Tandem chunk states
# across loop iterations (staged by rows and staged windows) and fills a
# row's exact blocks; phobosc-h (ad5cf03) also reads a reduction's block of
# whole groups of 4 with one 16-byte load; phobosc-f (50f5c41) is q1's. Values: exact O and L
# and the backward's dK, dV, dQ against Cranelift; fast g against f (same
# bytes: the carry never changes a bit). Then the attention forward (the
# example and tests/spellings/attention.ph), the backward kernels, and
# examples/dropout_backward_tandem.ph, both binaries; SDPA.
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
out = sys.argv[1]; rng = np.random.default_rng(28)
for nm in ["Q", "K", "V", "DO"]:
    np.save(f"{out}/{nm}.npy", rng.uniform(-1, 1, (4, 256, 64)).astype(np.float16))
np.save(f"{out}/DY.npy", rng.standard_normal((4096, 256)).astype(np.float32))
PY
ATT="--arg scale=0.125 --arg p=0.1 --arg key=2028"
IN="--input Q=$W/Q.npy --input K=$W/K.npy --input V=$W/V.npy"
E=examples/attention_dropout.ph; SP=tests/spellings/attention.ph; BW=examples/attention_dropout_backward.ph; DB=examples/dropout_backward_tandem.ph
same() { cmp -s $1 $2 && echo same || echo DIFFER; }
echo "## values ($(el) s)"
timeout 120 $B/phobosc-g run $E --backend cpu --config BN=32 $ATT $IN --output O=$W/O_cpu.npy --output L=$W/L_cpu.npy >/dev/null 2>$W/err || head -3 $W/err
for v in h g f; do for p in exact fast; do
  timeout 60 $B/phobosc-$v run $E --backend gpu --precision $p --config BN=32 $ATT $IN --output O=$W/O_${v}_$p.npy --output L=$W/L_${v}_$p.npy >/dev/null 2>$W/err || head -3 $W/err
done; done
timeout 120 $B/phobosc-g run $SP --kernel att_triton --backend cpu --config BN=32 $ATT $IN --output O=$W/Ot_cpu.npy --output L=$W/Lt_cpu.npy >/dev/null 2>$W/err || head -3 $W/err
timeout 60 $B/phobosc-g run $SP --kernel att_triton --backend gpu --config BN=32 $ATT $IN --output O=$W/Ot_g.npy --output L=$W/Lt_g.npy >/dev/null 2>$W/err || head -3 $W/err
echo "att_triton exact O g vs cpu: $(same $W/Ot_g.npy $W/Ot_cpu.npy); L: $(same $W/Lt_g.npy $W/Lt_cpu.npy); O vs the example's: $(same $W/Ot_cpu.npy $W/O_cpu.npy)"
for o in O L; do
  echo "forward $o exact g vs cpu: $(same $W/${o}_g_exact.npy $W/${o}_cpu.npy); h: $(same $W/${o}_h_exact.npy $W/${o}_cpu.npy); fast g vs f: $(same $W/${o}_g_fast.npy $W/${o}_f_fast.npy); h vs f: $(same $W/${o}_h_fast.npy $W/${o}_f_fast.npy)"
done
# The backward kernels on the forward's O and L (Cranelift's).
BIN="$IN --input O=$W/O_cpu.npy --input L=$W/L_cpu.npy --input dO=$W/DO.npy"
for kk in kv q; do
  outs=$([ $kk = kv ] && echo "dK dV" || echo "dQ")
  cfg=$([ $kk = kv ] && echo "--config BM=16 --config BN=16" || echo "--config BM=16 --config BN=32")
  o_cpu=""; o_g=""; o_gf=""; o_ff=""
  for x in $outs; do o_cpu="$o_cpu --output $x=$W/${x}_cpu.npy"; o_g="$o_g --output $x=$W/${x}_g.npy"; o_gf="$o_gf --output $x=$W/${x}_gf.npy"; o_ff="$o_ff --output $x=$W/${x}_ff.npy"; done
  timeout 120 $B/phobosc-g run $BW --kernel attention_dropout_backward_$kk --backend cpu $cfg $ATT $BIN $o_cpu >/dev/null 2>$W/err || head -3 $W/err
  timeout 60 $B/phobosc-g run $BW --kernel attention_dropout_backward_$kk --backend gpu $cfg $ATT $BIN $o_g >/dev/null 2>$W/err || head -3 $W/err
  timeout 60 $B/phobosc-g run $BW --kernel attention_dropout_backward_$kk --backend gpu --precision fast $cfg $ATT $BIN $o_gf >/dev/null 2>$W/err || head -3 $W/err
  timeout 60 $B/phobosc-f run $BW --kernel attention_dropout_backward_$kk --backend gpu --precision fast $cfg $ATT $BIN $o_ff >/dev/null 2>$W/err || head -3 $W/err
  for x in $outs; do echo "backward $x exact g vs cpu: $(same $W/${x}_g.npy $W/${x}_cpu.npy); fast g vs f: $(same $W/${x}_gf.npy $W/${x}_ff.npy)"; done
done
timeout 60 $B/phobosc-g run $DB --backend cpu --arg key=7 --input DY=$W/DY.npy --output DX=$W/DX_cpu.npy >/dev/null 2>$W/err || head -3 $W/err
timeout 60 $B/phobosc-g run $DB --backend gpu --arg key=7 --input DY=$W/DY.npy --output DX=$W/DX_g.npy >/dev/null 2>$W/err || head -3 $W/err
echo "dropout_backward_tandem exact g vs cpu: $(same $W/DX_g.npy $W/DX_cpu.npy)"
echo "## speed (median of 21, tuned; $(el) s)"
row() { # label, binary, precision, then bench arguments
  local label=$1 bin=$2 p=$3; shift 3
  timeout 200 $bin bench "$@" --backend gpu --precision $p --json 2>/dev/null | python3 -c "
import json,sys; j=json.load(sys.stdin); print('$label\t%.4f ms\t%.0f GiB/s\tconfig %s wg %s' % (j['median_ms'], j.get('median_gib_s', 0), j['config'], j['workgroup_size']))" || echo "$label	failed"
}
A="--dim BH=64 --dim S=1024 $ATT"
row "forward example D=64 fast (f)" $B/phobosc-f fast $E $A --dim D=64
row "backward _kv D=64 fast (f)" $B/phobosc-f fast $BW --kernel attention_dropout_backward_kv $A --dim D=64
for v in h g; do
  for d in 64 128; do row "forward example D=$d fast ($v)" $B/phobosc-$v fast $E $A --dim D=$d; done
  row "forward att_let D=64 fast ($v)" $B/phobosc-$v fast $SP --kernel att_let $A --dim D=64
  row "forward att_triton D=64 fast ($v)" $B/phobosc-$v fast $SP --kernel att_triton $A --dim D=64
  row "forward example D=64 exact ($v)" $B/phobosc-$v exact $E $A --dim D=64
  for kk in kv q; do row "backward _$kk D=64 fast ($v)" $B/phobosc-$v fast $BW --kernel attention_dropout_backward_$kk $A --dim D=64; done
  for p in exact fast; do row "dropout_backward_tandem M=262144 $p ($v)" $B/phobosc-$v $p $DB --dim M=262144 --arg key=7; done
done
echo "## peers ($(el) s)"
timeout 120 python3 bench/peers/attention.py 2>&1 | grep "S=1024" | head -4
echo "took $(el) s"
