#!/bin/bash
# Session 29, first call. phobosc-j (loads issued one iteration ahead in
# loops of reductions, plan/ahead.rs) with and without its knob
# (PHOBOS_LOADS_AHEAD=0), issue 28's chunked loops and the whole-row
# spellings, rows of 2^26 f32 elements, tuned, median of 21; fixed
# configurations of c1; the bits against the CPU backend; then session 28's
# unrun q5 (phobosc-i, staging by rows at 2 draws an invocation in loops,
# against phobosc-h) and the peers.
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
echo "## issue 28: ahead (j) against not (j0) ($(el) s)"
for n in 4096 1024; do for p in fast exact; do
  for k in "c1 bench/s17/unseen.ph" "c2 bench/s18/chunked.ph" "softmax_dropout_chunked examples/softmax_dropout_chunked.ph" "softmax_chunks tests/spellings/chunked/loops.ph" "layernorm_chunks tests/spellings/chunked/loops.ph"; do set -- $k
    row "N=$n $p $1 (j)" $B/phobosc-j $p $2 --kernel $1 --dim M=$((67108864 / n)) --dim N=$n --arg seed=7
    PHOBOS_LOADS_AHEAD=0 row "N=$n $p $1 (j0)" $B/phobosc-j $p $2 --kernel $1 --dim M=$((67108864 / n)) --dim N=$n --arg seed=7
  done
  for k in "inv_inline tests/spellings/softmax.ph" "ln_inline tests/spellings/layernorm.ph"; do set -- $k
    row "N=$n $p $1 (j)" $B/phobosc-j $p $2 --kernel $1 --dim M=$((67108864 / n)) --dim N=$n --arg seed=7
  done
done; done
echo "## c1 fast, rows of 4096, fixed configurations ($(el) s)"
for rw in "1 64" "1 128" "1 256" "2 128" "2 256" "4 128" "4 256"; do set -- $rw
  PHOBOS_WORKGROUP_SIZE=$2 row "R=$1 wg $2 (j)" $B/phobosc-j fast bench/s17/unseen.ph --kernel c1 --config R=$1 --dim M=16384 --dim N=4096 --arg seed=7
  PHOBOS_WORKGROUP_SIZE=$2 PHOBOS_LOADS_AHEAD=0 row "R=$1 wg $2 (j0)" $B/phobosc-j fast bench/s17/unseen.ph --kernel c1 --config R=$1 --dim M=16384 --dim N=4096 --arg seed=7
done
echo "## bits: c1 and the chunked example, exact, GPU (ahead, not) against the CPU backend ($(el) s)"
W=$(mktemp -d)
for k in "c1 bench/s17/unseen.ph" "softmax_dropout_chunked examples/softmax_dropout_chunked.ph" "layernorm_chunks tests/spellings/chunked/loops.ph"; do set -- $k
  for p in exact fast; do
    A="--kernel $1 --dim M=2048 --dim N=4096 --arg seed=7 --precision $p"
    timeout 100 $B/phobosc-j run $2 $A --backend gpu --output Y=$W/g.npy >/dev/null 2>$W/e || head -3 $W/e
    PHOBOS_LOADS_AHEAD=0 timeout 100 $B/phobosc-j run $2 $A --backend gpu --output Y=$W/g0.npy >/dev/null 2>$W/e || head -3 $W/e
    echo "$1 $p: ahead vs not $(cmp -s $W/g.npy $W/g0.npy && echo same || echo DIFFER)"
    if [ $p = exact ]; then
      timeout 200 $B/phobosc-j run $2 $A --backend cpu --output Y=$W/c.npy >/dev/null 2>$W/e || head -3 $W/e
      echo "$1 exact: gpu vs cpu $(cmp -s $W/g.npy $W/c.npy && echo same || echo DIFFER)"
    fi
  done
done
echo "## session 28's q5: attention, i against h ($(el) s)"
A="--dim BH=64 --dim S=1024 --dim D=64 --arg scale=0.125 --arg p=0.1 --arg key=2028"
for v in i h; do
  timeout 60 $B/phobosc-$v run examples/attention_dropout.ph --backend gpu --precision fast --config BN=16 $A --output O=$W/O_$v.npy >/dev/null 2>$W/err || head -3 $W/err
done
echo "BN=16 heuristic wg, O i vs h: $(cmp -s $W/O_i.npy $W/O_h.npy && echo same || echo DIFFER)"
for v in i h; do
  row "attention tuned ($v)" $B/phobosc-$v fast examples/attention_dropout.ph $A
  for bn in 16 32 64; do row "attention BM=16 BN=$bn --config ($v)" $B/phobosc-$v fast bench/s27/attention_bm.ph $A --config BM=16 --config BN=$bn; done
  row "backward _kv tuned ($v)" $B/phobosc-$v fast examples/attention_dropout_backward.ph --kernel attention_dropout_backward_kv $A
  row "backward _q tuned ($v)" $B/phobosc-$v fast examples/attention_dropout_backward.ph --kernel attention_dropout_backward_q $A
done
echo "## ceilings and Triton ($(el) s)"
timeout 60 python3 bench/peers/fused.py gpu --log2 26 --rows 1024,4096 --budget 35 --no-compile 2>&1 | grep "Triton fused\|CUDA copy" | grep "^peers" | cut -f3-9
echo "took $(el) s"
