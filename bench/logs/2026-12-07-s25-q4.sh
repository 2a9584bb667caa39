#!/bin/bash
# Session 25, fourth call (the H200 of the third, still warm; the commands
# as run, one line each in the device tool): every spelling of
# tests/spellings in both modes with HEAD's binary (phobosc-n, d2720d1),
# fused Triton and the CUDA copy in the same call; then the bits of the
# fused examples (bench/fused-bits.sh) in two runs of its shapes.
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json; B=$PWD/target/dev
echo "# $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader) n=d2720d1"
echo "## spellings"; BITS=0 timeout 100 bench/spellings-h200.sh n=$B/phobosc-n 2>&1 | grep -v "^#\|^driver\|^binary"
echo "## peers"; timeout 50 python3 bench/peers/fused.py gpu --log2 26 --rows 1024,4096 --budget 35 --no-compile 2>&1 | grep "Triton fused\|CUDA copy" | grep "^peers" | cut -f3-9
echo "## bits"; WGS="h" timeout 25 bench/fused-bits.sh $B/phobosc-n 2>&1 | tail -2   # timed out, printed nothing
SHAPES="M=64,N=1000 M=9,N=4096" WGS="h" timeout 40 bench/fused-bits.sh $B/phobosc-n 2>&1 | tail -4
SHAPES="M=17,N=8192 M=300,N=256 M=3,N=1" WGS="h" timeout 30 bench/fused-bits.sh $B/phobosc-n 2>&1 | tail -3
