#!/bin/bash
# Session 4: bits of the lowering changes on the device's GPU against the CPU
# backend (Cranelift, bit-exact with the interpreter): random_tile.ph and the
# fixture randn_rows.ph (stores element by element now), dropout_rows.ph on
# an all-zero X and on generated X (zero dividends on the common path).
#   bench/logs/2026-12-02-bits.sh PHOBOSC
P=${1:-target/release/phobosc}
d=$(mktemp -d)
${PYTHON:-python3} -c "
import numpy as np
np.save('$d/zeros.npy', np.zeros((4096, 256), np.float32))
x = np.random.default_rng(7).standard_normal((4096, 256)).astype(np.float32)
x[::3] = 0.0; x[1::7] = -0.0
np.save('$d/mixed.npy', x)
"
bad=0
same() { # name, then the args of both runs
  local name=$1; shift
  local outs_gpu=() outs_cpu=()
  for o in $OUTS; do outs_gpu+=(--output "$o=$d/$name-gpu-$o.npy"); outs_cpu+=(--output "$o=$d/$name-cpu-$o.npy"); done
  $P run "$@" --backend gpu "${outs_gpu[@]}" >/dev/null 2>"$d/err" || { echo "$name: gpu run failed: $(tail -1 $d/err)"; bad=1; return; }
  $P run "$@" --backend cpu "${outs_cpu[@]}" >/dev/null 2>"$d/err" || { echo "$name: cpu run failed: $(tail -1 $d/err)"; bad=1; return; }
  for o in $OUTS; do
    if cmp -s "$d/$name-gpu-$o.npy" "$d/$name-cpu-$o.npy"; then echo "$name $o: identical ($(stat -c %s $d/$name-gpu-$o.npy) bytes)"; else echo "$name $o: DIFFERENT"; bad=1; fi
  done
}
for seed in 1 2 3; do OUTS="uniform randn dropout" same "random_tile-seed$seed" examples/random_tile.ph --arg seed=$seed; done
OUTS="Y" same randn_rows tests/fixtures/ok/randn_rows.ph --arg seed=5
for R in 16; do
  OUTS="Y" same "dropout_rows-zeros-R$R" examples/dropout_rows.ph --dim M=4096 --config R=$R --arg seed=9 --input X=$d/zeros.npy
  OUTS="Y" same "dropout_rows-mixed-R$R" examples/dropout_rows.ph --dim M=4096 --config R=$R --arg seed=9 --input X=$d/mixed.npy
done
rm -rf "$d"
[ $bad = 0 ] && echo "bits: all identical" || echo "bits: DIFFERENCES"
