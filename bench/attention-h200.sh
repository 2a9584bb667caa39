#!/bin/bash
# Issue 29 on the device, in one call: the bits of 16-bit tensors, `dot` and
# attention with dropout against the interpreter's (outputs to $OUT/bits,
# compared on the host by bench/s13/compare.py), then the speed of
# examples/matmul.ph and the attention kernels, fast and exact, beside
# torch.matmul and SDPA with dropout (bench/peers/attention.py).
#   bench/attention-h200.sh PHOBOSC   (inputs in bench/s13/data, from bench/s13/inputs.py)
set -u
P=${1:-target/release/phobosc}
D=bench/s13/data
B=$OUT/bits; mkdir -p $B
ATT="--arg scale=0.125 --arg p=0.1 --arg key=2027"
echo "## bits (exact)"
$P run bench/s13/halves.ph --backend gpu --config R=3 --input X=$D/X.npy --input B=$D/B.npy \
  --output Y=$B/Y.npy --output Z=$B/Z.npy --output W=$B/W.npy 2>&1 | grep -i "device\|error" | head -3
for cfg in "BM=16 BN=16" "BM=32 BN=64"; do
  set -- $cfg
  $P run examples/matmul.ph --backend gpu --config $1 --config $2 --input A=$D/A.npy --input B=$D/Bm.npy \
    --output C=$B/C.${1#BM=}x${2#BN=}.npy 2>&1 | grep -i "error" | head -3
done
$P run examples/attention_dropout.ph --backend gpu --config BM=16 --config BN=32 $ATT \
  --input Q=$D/Q.npy --input K=$D/K.npy --input V=$D/V.npy --output O=$B/O.npy --output L=$B/L.npy 2>&1 | grep -i error | head -3
$P run examples/attention_dropout_backward.ph --kernel attention_dropout_backward_kv --backend gpu --config BM=32 --config BN=16 $ATT \
  --input Q=$D/Q.npy --input K=$D/K.npy --input V=$D/V.npy --input O=$D/O.npy --input dO=$D/dO.npy --input L=$D/L.npy \
  --output dK=$B/dK.npy --output dV=$B/dV.npy 2>&1 | grep -i error | head -3
$P run examples/attention_dropout_backward.ph --kernel attention_dropout_backward_q --backend gpu --config BM=16 --config BN=16 $ATT \
  --input Q=$D/Q.npy --input K=$D/K.npy --input V=$D/V.npy --input O=$D/O.npy --input dO=$D/dO.npy --input L=$D/L.npy \
  --output dQ=$B/dQ.npy 2>&1 | grep -i error | head -3
ls $B | tr '\n' ' '; echo
[ -n "${BITS_ONLY:-}" ] && exit 0
echo "## speed (median of 21; bench --json's median_ms)"
row() { # label, then phobosc bench arguments
  local label=$1; shift
  timeout 240 $P bench "$@" --backend gpu --json 2>/dev/null | python3 -c "
import json,sys; j=json.load(sys.stdin); print('phobos\t$label\t%s\t%.4f ms\tconfig %s' % (j['precision'], j['median_ms'], j['config']))" || echo "phobos	$label	failed"
}
for prec in fast exact; do
  row "matmul 2048^3" examples/matmul.ph --dim M=2048 --dim N=2048 --dim K=2048 --precision $prec
  row "attention forward B*H=64 S=1024 D=64" examples/attention_dropout.ph --dim BH=64 --dim S=1024 --dim D=64 $ATT --precision $prec
done
# The head dimension is a dim of the examples: the D = 128 too.
for d in 64 128; do
  [ $d = 128 ] && row "attention forward B*H=64 S=1024 D=128" examples/attention_dropout.ph --dim BH=64 --dim S=1024 --dim D=128 $ATT --precision fast
  row "attention backward kv B*H=64 S=1024 D=$d" examples/attention_dropout_backward.ph --kernel attention_dropout_backward_kv --dim BH=64 --dim S=1024 --dim D=$d $ATT --precision fast
  row "attention backward q B*H=64 S=1024 D=$d" examples/attention_dropout_backward.ph --kernel attention_dropout_backward_q --dim BH=64 --dim S=1024 --dim D=$d $ATT --precision fast
done
echo "## hand-written ceilings through wgpu (phobos-bench-attention, phobos-bench-gemm, beside PHOBOSC)"
BIN_DIR=$(dirname "$P")
[ -x "$BIN_DIR/phobos-bench-attention" ] && timeout 100 "$BIN_DIR/phobos-bench-attention" --s 1024 --d 64,128 2>&1 | tail -20
[ -x "$BIN_DIR/phobos-bench-gemm" ] && timeout 50 "$BIN_DIR/phobos-bench-gemm" 2048 2>&1 | tail -6
echo "## peers"
timeout 300 python3 bench/peers/attention.py 2>&1 | tail -20
