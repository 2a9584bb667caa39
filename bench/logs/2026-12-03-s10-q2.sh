#!/bin/bash
# Session 10, second call (issue 14): exact `exp` takes k as f32 by an
# integer-to-float conversion (d8edba4) instead of (t + c) - c, which
# SwiftShader reassociated in the browser. Same bits by construction; this
# checks them and what the conversion costs.
# - bits: std math and random functions on 2^22 arbitrary f32 patterns, and
#   the fused examples (heuristic workgroups), GPU exact against Cranelift;
# - exact softmax (N = 1024, 8192) and bias_gelu_dropout, tuned.
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
echo "== bits of the fused examples on the GPU against Cranelift (workgroups: heuristic)"
WGS='h' timeout 100 bench/fused-bits.sh $P 2>&1 | tee $OUT/bits.txt | tail -2
echo "== exact softmax and bias_gelu (GiB/s median of 21; tuned)"
export PHOBOS_CACHE_DIR=$(mktemp -d)
for n in 1024 8192; do
  echo "softmax_dropout N=$n: $(timeout 40 $P bench --backend gpu examples/softmax_dropout.ph --dim M=$((67108864 / n)) --dim N=$n --arg seed=12345 --runs 21 2>&1 | grep -o '\[R=[^]]*\]\|median[^;]*' | tr '\n' ' ')"
done | tee $OUT/softmax.txt
echo "bias_gelu_dropout: $(timeout 40 $P bench --backend gpu examples/bias_gelu_dropout.ph --dim M=262144 --arg seed=12345 --runs 21 2>&1 | grep -o 'median[^;]*' | tr '\n' ' ')" | tee -a $OUT/softmax.txt
echo "# done at $(( $(date +%s) - start )) s"
