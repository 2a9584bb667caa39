#!/bin/bash
# Session 15, first call (issues 28, 29 and 30): session 14's q1, never run
# (the device refused), plus the product spelled as users write it
# (bench/s15/matmul_spellings.ph: `let` operands, Triton's loop over K).
# Binaries in target/dev:
# 1. the GEMM ceilings through wgpu (phobos-bench-gemm 4096);
# 2. issue 29's exact bits against the interpreter's (compared after the
#    call by bench/s13/compare.py) and fast mode's outputs (tensor cores;
#    bench/s14/fast_error.py), with the provenance of each;
# 3. issue 30: the Tandem fills before (base-tandem-gpu, commit f662663)
#    and after the helper's division and logarithm (phobos-bench-tandem-gpu),
#    the u32 fill as a Phobos kernel (bench/s14/fill_u32.ph), and cuRAND
#    (bench/peers/peers.py), all at 2^28;
# 4. the peers of issue 29 (torch.matmul f16, SDPA with dropout);
# 5. Phobos's matmul and attention speed; rows are skipped past 450 s; the order is by priority.
for f in .gl/*.deb; do dpkg -x $f / >/dev/null; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
echo "# commit ${C:-?}; $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)"
t0=$(date +%s)
lap() { echo "($(( $(date +%s) - t0 )) s)"; }
B=target/dev
P=$B/phobosc
D=bench/s13/data
ATT="--arg scale=0.125 --arg p=0.1 --arg key=2027"
echo "## 1. GEMM ceilings"
timeout 80 $B/phobos-bench-gemm 4096 2>&1 | tail -8
lap
echo "## 2. bits (exact) and fast mode's outputs"
BITS_ONLY=1 timeout 100 bench/attention-h200.sh $P 2>&1 | tail -6
F=$OUT/fast; mkdir -p $F
for cfg in "BM=16 BN=16" "BM=32 BN=64"; do
  set -- $cfg
  timeout 30 $P run examples/matmul.ph --backend gpu --precision fast --config $1 --config $2 --input A=$D/A.npy --input B=$D/Bm.npy \
    --output C=$F/C.${1#BM=}x${2#BN=}.npy 2>&1 | grep -i "error\|lowering\|backend" | head -4
done
timeout 40 $P run examples/attention_dropout.ph --backend gpu --precision fast --config BM=16 --config BN=32 $ATT \
  --input Q=$D/Q.npy --input K=$D/K.npy --input V=$D/V.npy --output O=$F/O.npy --output L=$F/L.npy 2>&1 | grep -i "error\|lowering\|statement" | head -6
ls $F | tr '\n' ' '; echo
for k in let loop; do
  timeout 30 $P run bench/s15/matmul_spellings.ph --kernel matmul_$k --backend gpu --config BM=32 --config BN=64 --input A=$D/A.npy --input B=$D/Bm.npy \
    --output C=$OUT/bits/C$k.32x64.npy 2>&1 | grep -i "error" | head -3
  timeout 30 $P run bench/s15/matmul_spellings.ph --kernel matmul_$k --backend gpu --precision fast --config BM=32 --config BN=64 --input A=$D/A.npy --input B=$D/Bm.npy \
    --output C=$F/C$k.32x64.npy 2>&1 | grep -i "error\|lowering" | head -3
done
lap
echo "## 5. speed"
row() { local label=$1; shift
  [ $(( $(date +%s) - t0 )) -gt 500 ] && { echo "phobos	$label	skipped (time)"; return; }
  timeout 35 $P bench "$@" --backend gpu --json 2>/dev/null | python3 -c "
import json,sys; j=json.load(sys.stdin); print('phobos\t$label\t%s\t%.4f ms\tconfig %s' % (j['precision'], j['median_ms'], j['config']))" || echo "phobos	$label	failed or timed out"
}
MM="examples/matmul.ph --dim M=2048 --dim N=2048 --dim K=2048"
AF="examples/attention_dropout.ph --dim BH=64 --dim S=1024 $ATT"
row "matmul 2048^3 cooperative" $MM --precision fast
row "attention fwd BH=64 S=1024 D=64 cooperative" $AF --precision fast
row "matmul 2048^3 exact" $MM --precision exact
lap
echo "## 4. peers"
timeout 70 python3 bench/peers/attention.py 2>&1 | tail -16
lap
echo "## 3. fills, before (base) and after"
timeout 60 $B/base-tandem-gpu 28 exp_f64 exp_f32 normal_f32 u32 2>&1 | tail -8
timeout 60 $B/phobos-bench-tandem-gpu 28 exp_f64 exp_f32 normal_f32 u32 2>&1 | tail -8
timeout 40 $P bench bench/s14/fill_u32.ph --dim N=268435456 --arg key=1 --backend gpu --json 2>/dev/null | python3 -c "
import json,sys; j=json.load(sys.stdin); print('u32 fill as a Phobos kernel (bench/s14/fill_u32.ph), 2^28: %.1f GiB/s, config %s' % (1.0 / (j['median_ms'] / 1e3), j['config']))" || echo "fill_u32.ph failed"
timeout 60 python3 bench/peers/peers.py 28 exp_f64 exp_f32 normal_f32 u32 f32 f64 2>&1 | tail -14
lap
echo "## 5b. more speed"
SP="bench/s15/matmul_spellings.ph --dim M=2048 --dim N=2048 --dim K=2048"
row "matmul 2048^3 let operands, fast" $SP --kernel matmul_let --precision fast
row "matmul 2048^3 Triton loop, fast" $SP --kernel matmul_loop --precision fast
row "matmul 2048^3 let operands, exact" $SP --kernel matmul_let --precision exact
row "matmul 2048^3 Triton loop, exact" $SP --kernel matmul_loop --precision exact
PHOBOS_COOPERATIVE=off row "matmul 2048^3 fast, no cooperative" $MM --precision fast
row "attention bwd kv BH=64 S=1024 D=64 cooperative" examples/attention_dropout_backward.ph --kernel attention_dropout_backward_kv --dim BH=64 --dim S=1024 $ATT --precision fast
row "attention bwd q BH=64 S=1024 D=64 cooperative" examples/attention_dropout_backward.ph --kernel attention_dropout_backward_q --dim BH=64 --dim S=1024 $ATT --precision fast
row "attention fwd exact" $AF --precision exact
PHOBOS_DOT_AHEAD=0 row "matmul 2048^3 exact, per element" $MM --precision exact
echo "took $(( $(date +%s) - t0 )) s"
