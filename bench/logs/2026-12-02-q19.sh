#!/bin/bash
# Session 4, last call: issue 12's figures, the bits of this session's lowering changes, the compile rows.
for f in .gl/*.deb; do dpkg -x $f / >/dev/null; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
echo "commit ${C:-?}; $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1)"
timeout 320 bench/tune-h200.sh target/release/phobosc 2>&1 | tee $OUT/tune-h200.txt
PYTHON=python3 timeout 60 bench/logs/2026-12-02-bits.sh target/release/phobosc 2>&1 | tee $OUT/bits.txt
timeout 100 target/release/phobos-bench-table 28 --no-ablations 2>&1 | tee $OUT/table-phobos.txt | grep -A12 "^Compile to"
