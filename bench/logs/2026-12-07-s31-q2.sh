#!/bin/bash
# Session 31, second call (the machine of q1, warm): s17 c1 at R=1 and 64
# invocations, p (chunked loops written out) against m (loops kept), at
# rows of 1024, 2048 and 4096 (4, 8 and 16 iterations a loop), both modes:
# how the cost of writing loops out grows with their trip count.
. bench/logs/device-env.sh >/dev/null
for n in 1024 2048 4096; do for p in exact fast; do for v in p m; do
  PHOBOS_WORKGROUP_SIZE=64 row "c1 R=1 wg64 N=$n $p ($v)" $B/phobosc-$v $p bench/s17/unseen.ph --kernel c1 --config R=1 --dim M=$((67108864 / n)) --dim N=$n --arg seed=7
done; done; done
echo took $(el)
