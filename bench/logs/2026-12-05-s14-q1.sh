#!/bin/bash
# Session 14, first call (issues 29 and 30), on the H200:
# 1. the GEMM ceilings through wgpu (phobos-bench-gemm: cooperative
#    matrices direct and staged, exact tiled, exact tiled contracted);
# 2. issue 29's bits on the device against the interpreter's
#    (bench/attention-h200.sh BITS_ONLY; compared after the call by
#    bench/s13/compare.py), and fast mode's outputs (tensor cores) for
#    bench/s14/fast_error.py, with the provenance notes of each;
# 3. the Tandem fills' exact-mode modules (PHOBOS_DUMP_SPIRV) and what the
#    driver made of them (phobos-bench-regs --dump), for issue 30;
# 4. the peers (torch.matmul f16, SDPA with dropout);
# 5. Phobos's matmul and attention speed: fast (cooperative), fast without
#    cooperative matrices, exact, exact without staging (PHOBOS_DOT_AHEAD=0).
for f in .gl/*.deb; do dpkg -x $f / >/dev/null; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
echo "# commit ${C:-?}; $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)"
t0=$(date +%s)
lap() { echo "($(( $(date +%s) - t0 )) s)"; }
P=target/release/phobosc
D=bench/s13/data
ATT="--arg scale=0.125 --arg p=0.1 --arg key=2027"
echo "## 1. GEMM ceilings"
timeout 150 target/release/phobos-bench-gemm 4096 2048 2>&1 | tail -12
lap
echo "## 2. bits (exact) and fast mode's outputs"
BITS_ONLY=1 timeout 100 bench/attention-h200.sh $P 2>&1 | tail -6
F=$OUT/fast; mkdir -p $F
for cfg in "BM=16 BN=16" "BM=32 BN=64"; do
  set -- $cfg
  timeout 30 $P run examples/matmul.ph --backend gpu --precision fast --config $1 --config $2 --input A=$D/A.npy --input B=$D/Bm.npy \
    --output C=$F/C.${1#BM=}x${2#BN=}.npy 2>&1 | grep -i "error\|lowering\|backend\|config" | head -6
done
timeout 60 $P run examples/attention_dropout.ph --backend gpu --precision fast --config BM=16 --config BN=32 $ATT \
  --input Q=$D/Q.npy --input K=$D/K.npy --input V=$D/V.npy --output O=$F/O.npy --output L=$F/L.npy 2>&1 | grep -i "error\|lowering\|statement" | head -8
ls $F | tr '\n' ' '; echo
lap
echo "## 3. fill modules"
S=$OUT/spv; mkdir -p $S
for t in u32 f32 normal_f32 exp_f32 exp_f64 normal_f64; do
  PHOBOS_DUMP_SPIRV=$S timeout 30 $P fill $t --backend gpu --count 1048576 --output /dev/null 2>&1 | tail -1
done
timeout 60 target/release/phobos-bench-regs --dump $OUT/ir $S/*.spv 2>&1 | tail -20
lap
echo "## 4. peers"
timeout 120 python3 bench/peers/attention.py 2>&1 | tail -20
lap
echo "## 5. speed"
row() { local label=$1; shift
  timeout 50 $P bench "$@" --backend gpu --json 2>/dev/null | python3 -c "
import json,sys; j=json.load(sys.stdin); print('phobos\t$label\t%s\t%.4f ms\tconfig %s' % (j['precision'], j['median_ms'], j['config']))" || echo "phobos	$label	failed or timed out"
}
MM="examples/matmul.ph --dim M=2048 --dim N=2048 --dim K=2048"
AF="examples/attention_dropout.ph --dim BH=64 --dim S=1024 $ATT"
row "matmul 2048^3 cooperative" $MM --precision fast
row "attention fwd BH=64 S=1024 D=64 cooperative" $AF --precision fast
row "attention bwd kv BH=64 S=1024 D=64 cooperative" examples/attention_dropout_backward.ph --kernel attention_dropout_backward_kv --dim BH=64 --dim S=1024 $ATT --precision fast
row "attention bwd q BH=64 S=1024 D=64 cooperative" examples/attention_dropout_backward.ph --kernel attention_dropout_backward_q --dim BH=64 --dim S=1024 $ATT --precision fast
row "matmul 2048^3 exact" $MM --precision exact
row "attention fwd exact" $AF --precision exact
lap
PHOBOS_COOPERATIVE=off row "matmul 2048^3 fast, no cooperative" $MM --precision fast
PHOBOS_COOPERATIVE=off row "attention fwd fast, no cooperative" $AF --precision fast
PHOBOS_DOT_AHEAD=0 row "matmul 2048^3 exact, per element" $MM --precision exact
PHOBOS_DOT_AHEAD=0 row "attention fwd exact, per element" $AF --precision exact
echo "took $(( $(date +%s) - t0 )) s"
