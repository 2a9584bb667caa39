#!/bin/bash
# Session 24, second call: values kept across loops over the same chunks
# (phobosc-c: plan/chunks.rs, lower/chunks.rs, uncommitted on 88d295a)
# against phobosc-p (88d295a's code: abcc866 with the measurement knob
# PHOBOS_WORKGROUP_PAD) on the chunked loops, tuned, both modes; their bits
# on the GPU against the CPU; p with fewer workgroups a multiprocessor
# (PHOBOS_WORKGROUP_PAD=16384) at rows of 4096; fused Triton.
for f in .gl/*.deb; do dpkg -x $f / >/dev/null; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
mkdir -p target/dev && for f in target/devz/*.gz; do gzip -dc $f > target/dev/$(basename $f .gz); chmod +x target/dev/$(basename $f .gz); done
echo "# commit ${C:-?}; $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)"
t0=$(date +%s)
el() { echo $(( $(date +%s) - t0 )); }
B=target/dev
q() { grep -v "^#\|^driver\|^binary"; }
echo "## WGSL ceilings (phobos-bench-gpu 26)"
timeout 40 $B/phobos-bench-gpu 26 2>&1 | grep -i "device\|zero fill, true" | head -3
echo "## bits of c on the chunked loops, GPU against CPU ($(el) s)"
d=$(mktemp -d); n=0; bad=0
for fk in bench/s17/unseen.ph:c1 bench/s18/chunked.ph:c1 bench/s18/chunked.ph:c2 bench/s18/chunked.ph:c3; do f=${fk%%:*}; k=${fk#*:}
  for mn in "M=64 N=1024" "M=17 N=4096" "M=300 N=512" "M=9 N=2048"; do set -- $mn; for r in 1 2; do
    a=(--kernel $k --config R=$r --dim $1 --dim $2 --arg seed=7 --no-tune)
    timeout 20 $B/phobosc-c run $f "${a[@]}" --backend gpu --output Y=$d/g.npy >/dev/null 2>$d/e || { echo "$fk $mn R=$r gpu failed: $(tail -1 $d/e)"; bad=1; continue; }
    timeout 20 $B/phobosc-c run $f "${a[@]}" --backend cpu --output Y=$d/c.npy >/dev/null 2>&1
    n=$((n+1)); cmp -s $d/g.npy $d/c.npy || { echo "$fk $mn R=$r DIFFERENT"; bad=1; }
  done; done; done
echo "bits: $n compared, $([ $bad = 0 ] && echo all identical || echo DIFFERENCES)"
echo "## chunked: c against p ($(el) s)"
KERNELS="c1" FILES="bench/s17/unseen.ph" BITS=0 timeout 100 bench/spellings-h200.sh c=$B/phobosc-c p=$B/phobosc-p 2>&1 | q
KERNELS="c1 c2 c3" FILES="bench/s18/chunked.ph" BITS=0 timeout 200 bench/spellings-h200.sh c=$B/phobosc-c p=$B/phobosc-p 2>&1 | q
FILES="examples/softmax_dropout_chunked.ph examples/layernorm_dropout_chunked.ph" BITS=0 timeout 120 bench/spellings-h200.sh c=$B/phobosc-c p=$B/phobosc-p 2>&1 | q
echo "## p padded to 16384 bytes, rows of 4096 ($(el) s)"
PHOBOS_WORKGROUP_PAD=16384 KERNELS="c1 c2" FILES="bench/s18/chunked.ph" ROWS=4096 BITS=0 timeout 60 bench/spellings-h200.sh p16384=$B/phobosc-p 2>&1 | q
left=$(( 580 - $(el) ))
echo "## peers ($(el) s, $left left)"
[ $left -gt 40 ] && timeout $left python3 bench/peers/fused.py gpu --log2 26 --rows 1024,4096 --budget $((left - 20)) --no-compile 2>&1 | grep "Triton fused\|CUDA copy" | grep "^peers" | cut -f3-9
echo "took $(el) s"
