#!/bin/bash
# Session 5: the bits of every example on the device's GPU against the CPU
# backend (Cranelift, bit-exact with the interpreter), at shapes that span
# many workgroups and rows not a multiple of a chunk, in every workgroup
# size the tuner may pick (the reductions' lowering depends on it).
#   bench/logs/2026-12-02-bits-s5.sh PHOBOSC
P=${1:-target/release/phobosc}
d=$(mktemp -d)
bad=0
same() { # name, outputs, then the args of both runs
  local name=$1 outs=$2; shift 2
  local og=() oc=()
  for o in $outs; do og+=(--output "$o=$d/$name-gpu-$o.npy"); oc+=(--output "$o=$d/$name-cpu-$o.npy"); done
  $P run "$@" --no-tune --backend gpu "${og[@]}" >/dev/null 2>"$d/err" || { echo "$name: gpu run failed: $(tail -1 $d/err)"; bad=1; return; }
  $P run "$@" --no-tune --backend cpu "${oc[@]}" >/dev/null 2>"$d/err" || { echo "$name: cpu run failed: $(tail -1 $d/err)"; bad=1; return; }
  for o in $outs; do
    if cmp -s "$d/$name-gpu-$o.npy" "$d/$name-cpu-$o.npy"; then echo "$name $o: identical"; else echo "$name $o: DIFFERENT"; bad=1; fi
  done
}
for w in "" 32 128 1024; do
  export PHOBOS_WORKGROUP_SIZE=$w
  for t in "" _tandem; do
    s=seed; [ -n "$t" ] && s=key
    for mn in "M=64 N=1000" "M=17 N=8192" "M=4096 N=256" "M=3 N=1"; do
      dims=(); for x in $mn; do dims+=(--dim $x); done
      same "softmax$t-wg${w:-h}-${mn// /-}" Y examples/softmax_dropout$t.ph "${dims[@]}" --arg $s=7
      same "layernorm$t-wg${w:-h}-${mn// /-}" Y examples/layernorm_dropout$t.ph "${dims[@]}" --arg $s=7
    done
    same "bias_gelu$t-wg${w:-h}" Y examples/bias_gelu_dropout$t.ph --dim M=1000 --arg $s=7
    same "backward$t-wg${w:-h}" DX examples/dropout_backward$t.ph --dim M=1000 --arg $s=7
    same "dropout_rows$t-wg${w:-h}" Y examples/dropout_rows$t.ph --dim M=1000 --arg $s=7
  done
done
unset PHOBOS_WORKGROUP_SIZE
for seed in 1 2 3; do same "random_tile-seed$seed" "uniform randn dropout" examples/random_tile.ph --arg seed=$seed; done
rm -rf "$d"
[ $bad = 0 ] && echo "bits: all identical" || echo "bits: DIFFERENCES"
