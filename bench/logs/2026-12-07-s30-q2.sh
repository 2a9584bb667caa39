#!/bin/bash
# Session 30, second call (the first never got a machine): q1's core, cut
# to the device time left. phobosc-o (e4ca9cf: chunked loops written out,
# `plan::unroll`, their chunks kept in registers, their accumulator updates
# folded with no barrier between them) against phobosc-m (11cac79, before
# it) at rows of 4096, both modes, tuned, median of 21, with the whole-row
# spellings; the exact bits of o against the CPU backend; c1 and c2 at rows
# of 1024, fast; then the peers.
. bench/logs/device-env.sh
echo "## issue 28, rows of 4096: o, m ($(el) s)"
D="--dim M=16384 --dim N=4096 --arg seed=7"
for p in fast exact; do
  for k in "c1 bench/s17/unseen.ph" "c2 bench/s18/chunked.ph" "softmax_dropout_chunked examples/softmax_dropout_chunked.ph" "layernorm_chunks tests/spellings/chunked/loops.ph"; do set -- $k
    row "N=4096 $p $1 (o)" $B/phobosc-o $p $2 --kernel $1 $D
    row "N=4096 $p $1 (m)" $B/phobosc-m $p $2 --kernel $1 $D
  done
  for k in "inv_inline tests/spellings/softmax.ph" "ln_inline tests/spellings/layernorm.ph"; do set -- $k
    row "N=4096 $p $1 (o)" $B/phobosc-o $p $2 --kernel $1 $D
  done
done
echo "## bits ($(el) s)"
W=$(mktemp -d)
for k in "c1 bench/s17/unseen.ph" "layernorm_chunks tests/spellings/chunked/loops.ph"; do set -- $k
  A="--kernel $1 --dim M=2048 --dim N=4096 --arg seed=7 --precision exact"
  timeout 100 $B/phobosc-o run $2 $A --backend gpu --output Y=$W/go.npy >/dev/null 2>$W/e || head -3 $W/e
  timeout 200 $B/phobosc-o run $2 $A --backend cpu --output Y=$W/c.npy >/dev/null 2>$W/e || head -3 $W/e
  echo "$1 exact: o vs cpu $(cmp -s $W/go.npy $W/c.npy && echo same || echo DIFFER)"
done
echo "## rows of 1024, fast ($(el) s)"
D="--dim M=65536 --dim N=1024 --arg seed=7"
for k in "c1 bench/s17/unseen.ph" "c2 bench/s18/chunked.ph"; do set -- $k
  row "N=1024 fast $1 (o)" $B/phobosc-o fast $2 --kernel $1 $D
  row "N=1024 fast $1 (m)" $B/phobosc-m fast $2 --kernel $1 $D
done
row "N=1024 fast inv_inline (o)" $B/phobosc-o fast tests/spellings/softmax.ph --kernel inv_inline $D
echo "## ceilings and Triton ($(el) s)"
timeout 60 python3 bench/peers/fused.py gpu --log2 26 --rows 1024,4096 --budget 35 --no-compile 2>&1 | grep "Triton fused\|CUDA copy" | grep "^peers" | cut -f3-9
echo "took $(el) s"
