#!/bin/bash
# Session 24, third call (right after the second, same machine if warm):
# every spelling of tests/spellings in both modes (phobosc-p), the
# standing of whole rows after the transposing butterfly; fused Triton.
for f in .gl/*.deb; do dpkg -x $f / >/dev/null; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
mkdir -p target/dev && for f in target/devz/*.gz; do gzip -dc $f > target/dev/$(basename $f .gz); chmod +x target/dev/$(basename $f .gz); done
echo "# commit ${C:-?}; $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)"
t0=$(date +%s)
el() { echo $(( $(date +%s) - t0 )); }
B=target/dev
echo "## WGSL ceilings (phobos-bench-gpu 26)"
timeout 60 $B/phobos-bench-gpu 26 2>&1 | grep -i "device\|zero fill, true" | head -3
echo "## spellings ($(el) s)"
BITS=0 timeout 420 bench/spellings-h200.sh p=$B/phobosc-p 2>&1 | grep -v "^#\|^driver\|^binary"
left=$(( 570 - $(el) ))
echo "## peers ($(el) s, $left left)"
[ $left -gt 40 ] && timeout $left python3 bench/peers/fused.py gpu --log2 26 --rows 1024,4096 --budget $((left - 20)) --no-compile 2>&1 | grep "Triton fused\|CUDA copy" | grep "^peers" | cut -f3-9
echo "took $(el) s"
