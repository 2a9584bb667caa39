#!/bin/bash
# Session 30, first call. phobosc-n (bd4cb0a: chunked loops of constant
# trip count written out, `plan::unroll`, so that the row cache keeps their
# chunks in registers) against phobosc-m (11cac79, before it), issue 28's
# chunked loops and the whole-row spellings, rows of 2^26 f32 elements,
# tuned, median of 21; n also with a row cache of 128 words a lane
# (PHOBOS_ROW_CACHE_WORDS=128; the default is 64); fixed configurations of
# c1 (n only for c1, at rows of 1024 only the first three kernels); phobosc-o (n, and accumulator updates folded outside loops, by
# their row's owner with no barrier between two folds of one accumulator);
# the bits of n and o against the CPU backend; then session 29's unrun q3's
# profile of attention_dropout_backward_kv (m); then the peers.
. bench/logs/device-env.sh
echo "## issue 28: o, o with 128 words (o128), m; n for c1 ($(el) s)"
for n in 4096 1024; do for p in fast exact; do
  D="--dim M=$((67108864 / n)) --dim N=$n --arg seed=7"
  if [ $n = 4096 ]; then K="c1 bench/s17/unseen.ph|c2 bench/s18/chunked.ph|softmax_dropout_chunked examples/softmax_dropout_chunked.ph|softmax_chunks tests/spellings/chunked/loops.ph|layernorm_chunks tests/spellings/chunked/loops.ph"
  else K="c1 bench/s17/unseen.ph|c2 bench/s18/chunked.ph|softmax_dropout_chunked examples/softmax_dropout_chunked.ph"; fi
  IFS='|' read -ra KS <<< "$K"
  for k in "${KS[@]}"; do set -- $k
    [ $1 = c1 ] && row "N=$n $p $1 (n)" $B/phobosc-n $p $2 --kernel $1 $D
    row "N=$n $p $1 (o)" $B/phobosc-o $p $2 --kernel $1 $D
    PHOBOS_ROW_CACHE_WORDS=128 row "N=$n $p $1 (o128)" $B/phobosc-o $p $2 --kernel $1 $D
    row "N=$n $p $1 (m)" $B/phobosc-m $p $2 --kernel $1 $D
  done
  for k in "inv_inline tests/spellings/softmax.ph" "ln_inline tests/spellings/layernorm.ph"; do set -- $k
    row "N=$n $p $1 (o)" $B/phobosc-o $p $2 --kernel $1 $D
    PHOBOS_ROW_CACHE_WORDS=128 row "N=$n $p $1 (o128)" $B/phobosc-o $p $2 --kernel $1 $D
  done
done; done
echo "## c1 fast, rows of 4096, fixed configurations ($(el) s)"
for rw in "1 64" "4 128"; do set -- $rw
  for v in o m; do
    PHOBOS_WORKGROUP_SIZE=$2 row "R=$1 wg $2 ($v)" $B/phobosc-$v fast bench/s17/unseen.ph --kernel c1 --config R=$1 --dim M=16384 --dim N=4096 --arg seed=7
  done
  PHOBOS_WORKGROUP_SIZE=$2 PHOBOS_ROW_CACHE_WORDS=128 row "R=$1 wg $2 (o128)" $B/phobosc-o fast bench/s17/unseen.ph --kernel c1 --config R=$1 --dim M=16384 --dim N=4096 --arg seed=7
done
echo "## bits: o (exact, and with 128 words) against the CPU backend ($(el) s)"
W=$(mktemp -d)
for k in "c1 bench/s17/unseen.ph" "c2 bench/s18/chunked.ph" "softmax_dropout_chunked examples/softmax_dropout_chunked.ph" "layernorm_chunks tests/spellings/chunked/loops.ph"; do set -- $k
  A="--kernel $1 --dim M=2048 --dim N=4096 --arg seed=7 --precision exact"
  timeout 100 $B/phobosc-o run $2 $A --backend gpu --output Y=$W/go.npy >/dev/null 2>$W/e || head -3 $W/e
  PHOBOS_ROW_CACHE_WORDS=128 timeout 100 $B/phobosc-o run $2 $A --backend gpu --output Y=$W/g128.npy >/dev/null 2>$W/e || head -3 $W/e
  timeout 200 $B/phobosc-n run $2 $A --backend cpu --output Y=$W/c.npy >/dev/null 2>$W/e || head -3 $W/e
  echo "$1 exact: o vs cpu $(cmp -s $W/go.npy $W/c.npy && echo same || echo DIFFER); o128 vs cpu $(cmp -s $W/g128.npy $W/c.npy && echo same || echo DIFFER)"
  A="--kernel $1 --dim M=2048 --dim N=4096 --arg seed=7 --precision fast"
  timeout 100 $B/phobosc-o run $2 $A --backend gpu --output Y=$W/f.npy >/dev/null 2>$W/e || head -3 $W/e
  timeout 100 $B/phobosc-m run $2 $A --backend gpu --output Y=$W/fm.npy >/dev/null 2>$W/e || head -3 $W/e
  echo "$1 fast: o vs m $(cmp -s $W/f.npy $W/fm.npy && echo same || echo DIFFER)"
done
echo "## ceilings and Triton ($(el) s)"
timeout 60 python3 bench/peers/fused.py gpu --log2 26 --rows 1024,4096 --budget 35 --no-compile 2>&1 | grep "Triton fused\|CUDA copy" | grep "^peers" | cut -f3-9
echo "## attention_dropout_backward_kv, where its time goes (m; session 29's q3) ($(el) s)"
P=bench/s29/kv_parts.ph; BW=examples/attention_dropout_backward.ph; E=examples/attention_dropout.ph
A="--dim BH=64 --dim S=1024 --dim D=64 --arg scale=0.125 --arg p=0.1 --arg key=2028"
for kk in kv_full kv_no_mask; do row "$kk" $B/phobosc-m fast $P --kernel $kk $A; done
PHOBOS_ABLATE_STREAM=1 row "kv_full, stream ablated" $B/phobosc-m fast $P --kernel kv_full $A
echo "took $(el) s"
