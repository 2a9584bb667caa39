#!/bin/bash
# Session 31, fourth call (never ran: no device time left). phobosc-r
# (1747f26, built from it: chunked loops written out in
# fast mode only, up to 8 iterations a loop; a chunk's start named by a
# `let` of the loop variable substituted, so the chunked example's chunks
# are kept too) against phobosc-m (11cac79, loops kept), tuned, median of
# 21, rows of 2^26 f32 elements, at rows of 1024 and 2048, fast; with the
# whole-row spellings for the ratio; then the example's exact bits
# against the CPU backend, and its fast output r against m.
. bench/logs/device-env.sh
for n in 1024 2048; do
  D="--dim M=$((67108864 / n)) --dim N=$n --arg seed=7"
  for k in "softmax_dropout_chunked examples/softmax_dropout_chunked.ph" "c1 bench/s17/unseen.ph" "c2 bench/s18/chunked.ph" "softmax_chunks tests/spellings/chunked/loops.ph" "layernorm_chunks tests/spellings/chunked/loops.ph" "inv_inline tests/spellings/softmax.ph" "ln_inline tests/spellings/layernorm.ph"; do set -- $k
    for v in r m; do row "N=$n fast $1 ($v)" $B/phobosc-$v fast $2 --kernel $1 $D; done
  done
done
echo "## bits ($(el) s)"
W=$(mktemp -d)
A="--kernel softmax_dropout_chunked --dim M=4096 --dim N=1024 --arg seed=7"
timeout 100 $B/phobosc-r run examples/softmax_dropout_chunked.ph $A --precision exact --backend gpu --output Y=$W/g.npy >/dev/null 2>$W/e || head -3 $W/e
timeout 100 $B/phobosc-r run examples/softmax_dropout_chunked.ph $A --precision exact --backend cpu --output Y=$W/c.npy >/dev/null 2>$W/e || head -3 $W/e
echo "exact: r gpu vs cpu $(cmp -s $W/g.npy $W/c.npy && echo same || echo DIFFER)"
timeout 100 $B/phobosc-r run examples/softmax_dropout_chunked.ph $A --precision fast --backend gpu --output Y=$W/f.npy >/dev/null 2>$W/e || head -3 $W/e
timeout 100 $B/phobosc-m run examples/softmax_dropout_chunked.ph $A --precision fast --backend gpu --output Y=$W/fm.npy >/dev/null 2>$W/e || head -3 $W/e
python3 -c "
import numpy as np; a=np.load('$W/f.npy'); b=np.load('$W/fm.npy'); c=np.load('$W/c.npy')
print('fast r vs m: same zeros', bool(((a==0)==(b==0)).all()), 'max |r-m|/max|y|', float(abs(a-b).max()/abs(c).max()), 'max |r-exact|/max|y|', float(abs(a-c).max()/abs(c).max()))"
echo "took $(el) s"
