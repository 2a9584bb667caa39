#!/bin/bash
# Session 24, second call: phobosc-p (abcc866 with the measurement knob
# PHOBOS_WORKGROUP_PAD): the chunked loops at rows of 4096 with fewer
# workgroups a multiprocessor (a reduction scratch array padded to PAD
# bytes), tuned; the chunked loops' standing; fused Triton.
for f in .gl/*.deb; do dpkg -x $f / >/dev/null; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
mkdir -p target/dev && for f in target/devz/*.gz; do gzip -dc $f > target/dev/$(basename $f .gz); chmod +x target/dev/$(basename $f .gz); done
echo "# commit ${C:-?}; $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)"
t0=$(date +%s)
el() { echo $(( $(date +%s) - t0 )); }
B=target/dev
q() { grep -v "^#\|^driver\|^binary"; }
echo "## WGSL ceilings (phobos-bench-gpu 26)"
timeout 60 $B/phobos-bench-gpu 26 2>&1 | grep -i "device\|zero fill, true" | head -3
echo "## chunked at rows of 4096, padded ($(el) s)"
for pad in 12288 16384 24576; do
  echo "PAD=$pad"
  PHOBOS_WORKGROUP_PAD=$pad KERNELS="c1" FILES="bench/s17/unseen.ph" ROWS=4096 BITS=0 timeout 60 bench/spellings-h200.sh p$pad=$B/phobosc-p 2>&1 | q
  PHOBOS_WORKGROUP_PAD=$pad KERNELS="c1 c2" FILES="bench/s18/chunked.ph" ROWS=4096 BITS=0 timeout 100 bench/spellings-h200.sh p$pad=$B/phobosc-p 2>&1 | q
done
echo "## chunked standing, no pad ($(el) s)"
KERNELS="c1" FILES="bench/s17/unseen.ph" BITS=0 timeout 60 bench/spellings-h200.sh p=$B/phobosc-p 2>&1 | q
KERNELS="c1 c2 c3" FILES="bench/s18/chunked.ph" BITS=0 timeout 150 bench/spellings-h200.sh p=$B/phobosc-p 2>&1 | q
FILES="examples/softmax_dropout_chunked.ph examples/layernorm_dropout_chunked.ph" BITS=0 timeout 100 bench/spellings-h200.sh p=$B/phobosc-p 2>&1 | q
left=$(( 570 - $(el) ))
echo "## peers ($(el) s, $left left)"
[ $left -gt 40 ] && timeout $left python3 bench/peers/fused.py gpu --log2 26 --rows 1024,4096 --budget $((left - 20)) --no-compile 2>&1 | grep "Triton fused\|CUDA copy" | grep "^peers" | cut -f3-9
echo "took $(el) s"
