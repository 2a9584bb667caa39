#!/bin/bash
# Session 31, first call: session 30's q1, never run (no machine).
# phobosc-p: e68856a (e4ca9cf's code plus c23f58b's refactor: chunked
# loops written out (`plan::unroll`), their chunks kept by the row cache,
# accumulator updates folded with no barrier between them) and this
# session's fix (the loops' unread nodes dropped, so the first iteration's
# `e` is no longer put in workgroup memory: c1 at R=1 keeps 16 of 16
# chunks, was 15); phobosc-o (e68856a, without the fix) for c1 at rows of
# 4096 only; against phobosc-m (11cac79, before them all). Rows of 2^26 f32 elements, tuned,
# median of 21; p also with a row cache of 128 words a lane (p128); fixed
# configurations of c1; bits of p against the CPU backend; the peers;
# then every spelling of tests/spellings (bench/spellings-h200.sh, p only,
# its bits off); and session 29's unrun profile of
# attention_dropout_backward_kv (m). The WGSL guard (bench/s25) says o
# also changed whole-row kernels at one 16-byte leaf a lane (R=1 at 256
# invocations, rows of 1024): their rows are now kept in registers; timed
# against m here.
. bench/logs/device-env.sh
echo "## issue 28: p, p128, m; o for c1 at 4096 ($(el) s)"
for n in 4096 1024; do for p in fast exact; do
  D="--dim M=$((67108864 / n)) --dim N=$n --arg seed=7"
  if [ $n = 4096 ]; then K="c1 bench/s17/unseen.ph|c2 bench/s18/chunked.ph|softmax_dropout_chunked examples/softmax_dropout_chunked.ph|softmax_chunks tests/spellings/chunked/loops.ph|layernorm_chunks tests/spellings/chunked/loops.ph"
  else K="c1 bench/s17/unseen.ph|c2 bench/s18/chunked.ph|softmax_dropout_chunked examples/softmax_dropout_chunked.ph|layernorm_chunks tests/spellings/chunked/loops.ph"; fi
  IFS='|' read -ra KS <<< "$K"
  for k in "${KS[@]}"; do set -- $k
    [ $1 = c1 ] && [ $n = 4096 ] && row "N=$n $p $1 (o)" $B/phobosc-o $p $2 --kernel $1 $D
    row "N=$n $p $1 (p)" $B/phobosc-p $p $2 --kernel $1 $D
    PHOBOS_ROW_CACHE_WORDS=128 row "N=$n $p $1 (p128)" $B/phobosc-p $p $2 --kernel $1 $D
    row "N=$n $p $1 (m)" $B/phobosc-m $p $2 --kernel $1 $D
  done
  for k in "inv_inline tests/spellings/softmax.ph" "ln_inline tests/spellings/layernorm.ph"; do set -- $k
    row "N=$n $p $1 (p)" $B/phobosc-p $p $2 --kernel $1 $D
    PHOBOS_ROW_CACHE_WORDS=128 row "N=$n $p $1 (p128)" $B/phobosc-p $p $2 --kernel $1 $D
    row "N=$n $p $1 (m)" $B/phobosc-m $p $2 --kernel $1 $D
  done
done; done
echo "## bits: o (exact; also 128 words) against the CPU backend; o fast against m ($(el) s)"
W=$(mktemp -d)
for k in "c1 bench/s17/unseen.ph" "c2 bench/s18/chunked.ph" "softmax_dropout_chunked examples/softmax_dropout_chunked.ph" "layernorm_chunks tests/spellings/chunked/loops.ph"; do set -- $k
  A="--kernel $1 --dim M=2048 --dim N=4096 --arg seed=7 --precision exact"
  timeout 100 $B/phobosc-p run $2 $A --backend gpu --output Y=$W/go.npy >/dev/null 2>$W/e || head -3 $W/e
  PHOBOS_ROW_CACHE_WORDS=128 timeout 100 $B/phobosc-p run $2 $A --backend gpu --output Y=$W/g128.npy >/dev/null 2>$W/e || head -3 $W/e
  timeout 200 $B/phobosc-p run $2 $A --backend cpu --output Y=$W/c.npy >/dev/null 2>$W/e || head -3 $W/e
  echo "$1 exact: p vs cpu $(cmp -s $W/go.npy $W/c.npy && echo same || echo DIFFER); p128 vs cpu $(cmp -s $W/g128.npy $W/c.npy && echo same || echo DIFFER)"
  A="--kernel $1 --dim M=2048 --dim N=4096 --arg seed=7 --precision fast"
  timeout 100 $B/phobosc-p run $2 $A --backend gpu --output Y=$W/f.npy >/dev/null 2>$W/e || head -3 $W/e
  timeout 100 $B/phobosc-m run $2 $A --backend gpu --output Y=$W/fm.npy >/dev/null 2>$W/e || head -3 $W/e
  echo "$1 fast: p vs m $(cmp -s $W/f.npy $W/fm.npy && echo same || echo DIFFER)"
done
echo "## ceilings and Triton ($(el) s)"
timeout 60 python3 bench/peers/fused.py gpu --log2 26 --rows 1024,4096 --budget 35 --no-compile 2>&1 | grep "Triton fused\|CUDA copy" | grep "^peers" | cut -f3-9
echo "## whole rows of one 16-byte leaf a lane, now kept by the row cache: inv_inline, ln_inline, R=1 at 256 invocations, rows of 1024 ($(el) s)"
for p in fast exact; do for k in "inv_inline tests/spellings/softmax.ph" "ln_inline tests/spellings/layernorm.ph"; do set -- $k
  for v in p m; do PHOBOS_WORKGROUP_SIZE=256 row "R=1 wg 256 N=1024 $p $1 ($v)" $B/phobosc-$v $p $2 --kernel $1 --config R=1 --dim M=65536 --dim N=1024 --arg seed=7; done
done; done
echo "## c1 fast, rows of 4096, fixed configurations ($(el) s)"
for rw in "1 64" "4 128" "2 128" "1 256"; do set -- $rw
  for v in p o m; do
    PHOBOS_WORKGROUP_SIZE=$2 row "R=$1 wg $2 ($v)" $B/phobosc-$v fast bench/s17/unseen.ph --kernel c1 --config R=$1 --dim M=16384 --dim N=4096 --arg seed=7
  done
  PHOBOS_WORKGROUP_SIZE=$2 PHOBOS_ROW_CACHE_WORDS=128 row "R=$1 wg $2 (p128)" $B/phobosc-p fast bench/s17/unseen.ph --kernel c1 --config R=$1 --dim M=16384 --dim N=4096 --arg seed=7
done
echo "## every spelling (p) ($(el) s)"
PHOBOS_COMMIT=p BITS=0 timeout 200 bash bench/spellings-h200.sh p=$B/phobosc-p
echo "## attention_dropout_backward_kv, where its time goes (m; session 29's q3) ($(el) s)"
P=bench/s29/kv_parts.ph
A="--dim BH=64 --dim S=1024 --dim D=64 --arg scale=0.125 --arg p=0.1 --arg key=2028"
for kk in kv_full kv_no_mask; do row "$kk" $B/phobosc-m fast $P --kernel $kk $A; done
PHOBOS_ABLATE_STREAM=1 row "kv_full, stream ablated" $B/phobosc-m fast $P --kernel kv_full $A
echo "took $(el) s"
