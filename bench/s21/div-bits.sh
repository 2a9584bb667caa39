#!/bin/bash
# Exact `/` on the GPU against the CPU backend on edge and random operands
# (bench/s21/div-inputs.py), for each environment given:
#   bench/s21/div-bits.sh PHOBOSC [ENV=VALUE ...]
# e.g. PHOBOS_DIV_CHECK=f32 (the f32-checked division) or "" (the default).
P=$1; shift
d=$(mktemp -d)
python3 "$(dirname "$0")/div-inputs.py" $d ${DIV_N:-4194304}
n=$(python3 -c "import os;print((os.path.getsize('$d/X.npy')-128)//4)")
$P run bench/s21/div.ph --backend cpu --dim N=$n --input X=$d/X.npy --input Z=$d/Z.npy --output Q=$d/cpu.npy >/dev/null || exit 1
for e in "$@"; do
  env $e $P run bench/s21/div.ph --backend gpu --dim N=$n --input X=$d/X.npy --input Z=$d/Z.npy --output Q=$d/gpu.npy >/dev/null 2>$d/err \
    || { echo "div bits [$e]: gpu run failed: $(tail -1 $d/err)"; continue; }
  cmp -s $d/gpu.npy $d/cpu.npy && echo "div bits [$e]: $n identical" || echo "div bits [$e]: DIFFERENT ($(cmp -l $d/gpu.npy $d/cpu.npy | wc -l) bytes)"
done
rm -rf $d
