#!/bin/bash
# Session 9, fourth call (issue 14): `uniform` without an integer-to-float
# conversion (1 + m 2^-23 from the bits, minus 1: the same bits).
# - bits: the standard library's functions on 2^22 arbitrary f32 bit patterns
#   (every special class) on the GPU against Cranelift; the fused examples;
# - exact softmax (the ablation's sm_full, tuned), bias_gelu_dropout exact;
# - bench/fused-h200.sh --no-compile --no-cpu --precision exact.
start=$(date +%s)
for f in .gl/*.deb; do dpkg -x $f / >/dev/null; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
P=$PWD/target/release/phobosc
echo "# commit ${C:-?}; $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader); $(nproc) cores"
echo "== bits: std math on 2^22 arbitrary f32 patterns, GPU exact against Cranelift"
d=$(mktemp -d)
python3 -c "
import numpy as np
r = np.random.default_rng(9)
b = r.integers(0, 2**32, 2**22 - 4096, dtype=np.uint64).astype(np.uint32)
near = (r.standard_normal(4096) * 40).astype(np.float32).view(np.uint32)
np.save('$d/x.npy', np.concatenate([b, near]).view(np.float32))"
M=bench/logs/2026-12-02-s9-math.ph
outs() { for o in E T F L C R; do echo --output $o=$d/$1-$o.npy; done; }
$P run $M --kernel math_bits --backend gpu --input X=$d/x.npy $(outs g) > /dev/null 2>$d/err || tail -2 $d/err
$P run $M --kernel math_bits --backend cpu --input X=$d/x.npy $(outs c) > /dev/null 2>$d/err || tail -2 $d/err
for o in E T F L C R; do cmp -s $d/g-$o.npy $d/c-$o.npy && echo "$o: identical" || echo "$o: DIFFERENT"; done | tee $OUT/math-bits.txt
echo "== bits: uniform, randn, dropout over 2^22 counters (seeds 1 and -7), GPU exact against Cranelift"
for s in 1 -7; do
  $P run $M --kernel random_bits --backend gpu --arg seed=$s --input X=$d/x.npy --output U=$d/gu.npy --output G=$d/gg.npy --output D=$d/gd.npy > /dev/null 2>$d/err || tail -2 $d/err
  $P run $M --kernel random_bits --backend cpu --arg seed=$s --input X=$d/x.npy --output U=$d/cu.npy --output G=$d/cg.npy --output D=$d/cd.npy > /dev/null 2>$d/err || tail -2 $d/err
  for o in u g d; do cmp -s $d/g$o.npy $d/c$o.npy && echo "seed $s $o: identical" || echo "seed $s $o: DIFFERENT"; done
done | tee -a $OUT/math-bits.txt
echo "== bits of the fused examples on the GPU against Cranelift (workgroups: heuristic)"
WGS='h' timeout 150 bench/fused-bits.sh $P 2>&1 | tee $OUT/bits.txt | tail -3
echo "== exact softmax and bias_gelu (GiB/s median of 21; tuned)"
export PHOBOS_CACHE_DIR=$(mktemp -d)
V=bench/logs/2026-12-02-s9-variants.ph
for n in 1024 8192; do for k in sm_full sm_noexp; do
  echo "$k N=$n: $(timeout 60 $P bench --backend gpu $V --kernel $k --dim M=$((67108864 / n)) --dim N=$n --arg seed=12345 --runs 21 2>&1 | grep -o 'median[^;]*' | tr '\n' ' ')"
done; done | tee $OUT/softmax.txt
echo "dropout_rows exact (M=1048576, tuned): $(timeout 40 $P bench --backend gpu examples/dropout_rows.ph --dim M=1048576 --arg seed=12345 --runs 21 2>&1 | grep -o 'median[^;]*' | tr '\n' ' ')" | tee -a $OUT/gelu.txt
echo "bias_gelu_dropout exact: $(timeout 40 $P bench --backend gpu examples/bias_gelu_dropout.ph --dim M=262144 --arg seed=12345 --runs 21 2>&1 | grep -o 'median[^;]*' | tr '\n' ' ')" | tee $OUT/gelu.txt
unset PHOBOS_CACHE_DIR
echo "== bench/fused-h200.sh --no-compile --no-cpu --precision exact"
rest=$((start + ${CALL_S:-560} - 15 - $(date +%s)))
PHOBOS_COMMIT=${C:-?} timeout $rest bench/fused-h200.sh $P --no-compile --no-cpu --precision exact 2>&1 > $OUT/fused.txt; sed -n '/^| op/,/^Targets/p' $OUT/fused.txt | tail -12
echo "# done at $(( $(date +%s) - start )) s"
