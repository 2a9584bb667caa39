#!/bin/bash
# The bits of the fused examples (softmax and layer norm with dropout, both
# twins, every R, the chunked kernels) on the GPU against the CPU backend
# (Cranelift, bit-exact with the interpreter) at each workgroup size in WGS
# and each shape in SHAPES.   bench/fused-bits.sh [PHOBOSC]
P=${1:-target/release/phobosc}
d=$(mktemp -d); bad=0; n=0
same() { local name=$1; shift
  $P run "$@" --no-tune --backend gpu --output Y=$d/g.npy >/dev/null 2>$d/err || { echo "$name: gpu run failed: $(tail -1 $d/err)"; bad=1; return; }
  $P run "$@" --no-tune --backend cpu --output Y=$d/c.npy >/dev/null 2>$d/err || { echo "$name: cpu run failed: $(tail -1 $d/err)"; bad=1; return; }
  n=$((n+1)); cmp -s $d/g.npy $d/c.npy || { echo "$name: DIFFERENT"; bad=1; }
}
for w in ${WGS:-h 32 128 1024}; do [ "$w" = h ] && w=; export PHOBOS_WORKGROUP_SIZE=$w
 for t in "" _tandem; do s=seed; [ -n "$t" ] && s=key
  for R in 1 2 4; do
  for mn in ${SHAPES:-"M=64,N=1000" "M=17,N=8192" "M=300,N=256" "M=3,N=1" "M=9,N=4096"}; do
   dims=(); for x in ${mn//,/ }; do dims+=(--dim $x); done
   for op in softmax layernorm; do same "$op$t R=$R wg${w:-h} $mn" examples/${op}_dropout$t.ph "${dims[@]}" --arg $s=7 --config R=$R; done
  done; done
  for op in softmax layernorm; do [ -z "$t" ] && same "${op} chunked wg${w:-h}" examples/${op}_dropout_chunked.ph --dim M=17 --dim N=1000 --arg $s=7; done
 done
done
rm -rf $d; echo "compared $n"; [ $bad = 0 ] && echo "bits: all identical" || echo "bits: DIFFERENCES"
