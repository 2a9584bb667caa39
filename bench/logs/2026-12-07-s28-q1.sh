#!/bin/bash
# Session 28, first call. phobosc-f (50f5c41) plans a `let` of a product
# read by several statements as computed once and stores `acc = dot(p, V,
# acc)` from the tiles; phobosc-e is session 27's 9ec6272. Measures:
# (1) the attention forward as users spell it (tests/spellings/attention.ph:
#     `let` tiles, Triton's loop) against the example, both binaries, and
#     their bytes; (2) where the example's time goes now: workgroup sizes at
#     BN=32 and bench/s15/attention_ablate.ph's parts; (3) issue 28's L2
#     question: s17 c1 (chunked) against inv_inline (whole row) at rows of
#     4096 over 2048 rows (X 32 MiB, fits the 50 MB L2) and 16384 rows.
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
for nm in "QKV":
    np.save(f"{out}/{nm}.npy", rng.uniform(-1, 1, (4, 256, 64)).astype(np.float16))
PY
ATT="--arg scale=0.125 --arg p=0.1 --arg key=2028"
IN="--input Q=$W/Q.npy --input K=$W/K.npy --input V=$W/V.npy"
E=examples/attention_dropout.ph; SP=tests/spellings/attention.ph
echo "## values ($(el) s)"
timeout 120 $B/phobosc-f run $E --backend cpu --config BN=32 $ATT $IN --output O=$W/O_cpu.npy --output L=$W/L_cpu.npy >/dev/null 2>$W/err || head -3 $W/err
for p in exact fast; do
  timeout 60 $B/phobosc-f run $E --backend gpu --precision $p --config BN=32 $ATT $IN --output O=$W/O_ex_$p.npy --output L=$W/L_ex_$p.npy >/dev/null 2>$W/err || head -3 $W/err
  for k in att_let att_triton; do
    timeout 60 $B/phobosc-f run $SP --kernel $k --backend gpu --precision $p --config BN=32 $ATT $IN --output O=$W/O_${k}_$p.npy --output L=$W/L_${k}_$p.npy >/dev/null 2>$W/err || head -3 $W/err
  done
done
for o in O L; do
  echo "$o exact example vs cpu: $(cmp -s $W/${o}_ex_exact.npy $W/${o}_cpu.npy && echo same || echo DIFFER)"
  for k in att_let att_triton; do for p in exact fast; do
    echo "$o $p $k vs example: $(cmp -s $W/${o}_${k}_$p.npy $W/${o}_ex_$p.npy && echo same || echo DIFFER)"
  done; done
done
python3 - $W <<'PY'
import sys, numpy as np
w = sys.argv[1]
ref = np.load(f"{w}/O_cpu.npy").astype(np.float64)
for n in ["ex_fast", "att_let_fast", "att_triton_fast"]:
    o = np.load(f"{w}/O_{n}.npy").astype(np.float64)
    print(f"fast O {n}: max |O - exact| = {np.abs(o - ref).max():.3g} (max |O| {np.abs(ref).max():.3g})")
PY
echo "## speed (median of 21, tuned unless a config and wg are given; $(el) s)"
row() { # label, binary, precision, then bench arguments
  local label=$1 bin=$2 p=$3; shift 3
  timeout 200 $bin bench "$@" --backend gpu --precision $p --json 2>/dev/null | python3 -c "
import json,sys; j=json.load(sys.stdin); print('$label\t%.4f ms\t%.0f GiB/s\tconfig %s wg %s' % (j['median_ms'], j.get('median_gib_s', 0), j['config'], j['workgroup_size']))" || echo "$label	failed"
}
A="--dim BH=64 --dim S=1024 --dim D=64 $ATT"
for v in f e; do
  row "example fast ($v)" $B/phobosc-$v fast $E $A
  row "att_let fast ($v)" $B/phobosc-$v fast $SP --kernel att_let $A
  row "att_triton fast ($v)" $B/phobosc-$v fast $SP --kernel att_triton $A
done
row "example exact (f)" $B/phobosc-f exact $E $A
row "att_triton exact (f)" $B/phobosc-f exact $SP --kernel att_triton $A
echo "## the example's workgroup sizes at BN=32, fast ($(el) s)"
for wg in 32 64 128 256; do
  PHOBOS_WORKGROUP_SIZE=$wg row "example fast BN=32 wg=$wg" $B/phobosc-f fast $E $A --config BN=32
done
echo "## parts (bench/s15/attention_ablate.ph, D=64, fast, tuned; $(el) s)"
for k in att_nodrop att_nopv att_qk; do
  row "$k fast" $B/phobosc-f fast bench/s15/attention_ablate.ph --kernel $k --dim BH=64 --dim S=1024 $ATT
done
echo "## issue 28: chunked against whole row at rows of 4096 ($(el) s)"
for m in 2048 16384; do for p in fast exact; do
  for k in "c1 bench/s17/unseen.ph" "inv_inline tests/spellings/softmax.ph"; do set -- $k
    row "M=$m $p $1" $B/phobosc-f $p $2 --kernel $1 --dim M=$m --dim N=4096 --arg seed=7 --runs 51
  done
done; done
echo "## peers ($(el) s)"
timeout 120 python3 bench/peers/attention.py 2>&1 | grep "S=1024" | head -4
echo "took $(el) s"
