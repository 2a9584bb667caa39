#!/bin/bash
# Session 31, third call (the same machine, warm): the chunked spellings
# and the whole-row softmax at rows of 2048 (8 iterations a loop), tuned,
# p against m, both modes.
. bench/logs/device-env.sh >/dev/null
D="--dim M=32768 --dim N=2048 --arg seed=7"
for p in fast exact; do
  for k in "c1 bench/s17/unseen.ph" "c2 bench/s18/chunked.ph" "softmax_chunks tests/spellings/chunked/loops.ph" "layernorm_chunks tests/spellings/chunked/loops.ph" "inv_inline tests/spellings/softmax.ph"; do set -- $k
    for v in p m; do row "N=2048 $p $1 ($v)" $B/phobosc-$v $p $2 --kernel $1 $D; done
  done
done
echo took $(el)
