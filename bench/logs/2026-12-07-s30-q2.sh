#!/bin/bash
# Session 30, second call (the first never got a machine; this is its
# core, cut to the device time left). phobosc-n (bd4cb0a: chunked loops of constant
# trip count written out, `plan::unroll`, so that the row cache keeps their
# chunks in registers) against phobosc-m (11cac79, before it), issue 28's
# chunked loops and the whole-row spellings, rows of 2^26 f32 elements,
# tuned, median of 21; n also with a row cache of 128 words a lane
# (PHOBOS_ROW_CACHE_WORDS=128; the default is 64); fixed configurations of
# c1 (n only for c1, at rows of 1024 only the first three kernels); phobosc-o (n, and accumulator updates folded outside loops, by
# their row's owner with no barrier between two folds of one accumulator);
# the bits of n and o against the CPU backend; then session 29's unrun q3's
# profile of attention_dropout_backward_kv (m); then the peers.
for f in .gl/*.deb; do dpkg -x $f / >/dev/null; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
mkdir -p target/dev && for f in target/devz/*.gz; do gzip -dc $f > target/dev/$(basename $f .gz); chmod +x target/dev/$(basename $f .gz); done
B=$PWD/target/dev
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
echo "# $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)"
row() { # label, binary, precision, then bench arguments
  local label=$1 bin=$2 p=$3; shift 3
  timeout 200 $bin bench "$@" --backend gpu --precision $p --json 2>/dev/null | python3 -c "
import json,sys; j=json.load(sys.stdin); print('$label\t%.4f ms\t%.0f GiB/s\tconfig %s wg %s' % (j['median_ms'], j.get('median_gib_s', 0), j['config'], j['workgroup_size']))" || echo "$label	failed"
}
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
