#!/bin/bash
# The interpreter's outputs for bench/attention-h200.sh's bit comparisons,
# and the O and L the backward runs take: bench/s13/reference.sh PHOBOSC REF
set -eu
P=$1; R=$2; D=bench/s13/data; mkdir -p $R
ATT="--arg scale=0.125 --arg p=0.1 --arg key=2027"
$P run bench/s13/halves.ph --backend interp --config R=3 --input X=$D/X.npy --input B=$D/B.npy \
  --output Y=$R/Y.npy --output Z=$R/Z.npy --output W=$R/W.npy > /dev/null
for cfg in "BM=16 BN=16" "BM=32 BN=64"; do
  set -- $cfg
  $P run examples/matmul.ph --backend interp --config $1 --config $2 --input A=$D/A.npy --input B=$D/Bm.npy \
    --output C=$R/C.${1#BM=}x${2#BN=}.npy > /dev/null
done
$P run examples/attention_dropout.ph --backend interp --config BM=16 --config BN=32 $ATT \
  --input Q=$D/Q.npy --input K=$D/K.npy --input V=$D/V.npy --output O=$R/O.npy --output L=$R/L.npy > /dev/null
cp $R/O.npy $R/L.npy $D/
$P run examples/attention_dropout_backward.ph --kernel attention_dropout_backward_kv --backend interp --config BM=32 --config BN=16 $ATT \
  --input Q=$D/Q.npy --input K=$D/K.npy --input V=$D/V.npy --input O=$D/O.npy --input dO=$D/dO.npy --input L=$D/L.npy \
  --output dK=$R/dK.npy --output dV=$R/dV.npy > /dev/null
$P run examples/attention_dropout_backward.ph --kernel attention_dropout_backward_q --backend interp --config BM=16 --config BN=16 $ATT \
  --input Q=$D/Q.npy --input K=$D/K.npy --input V=$D/V.npy --input O=$D/O.npy --input dO=$D/dO.npy --input L=$D/L.npy \
  --output dQ=$R/dQ.npy > /dev/null
ls $R
