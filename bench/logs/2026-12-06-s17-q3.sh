#!/bin/bash
# Session 17, third call (issue 28), phobosc in target/dev (release, the
# commit in the header):
# 1. the spellings a `var` changes: tests/spellings' div_var (a `var`
#    divided in place, now split into versions by the plan) and
#    bench/s17/unseen.ph's s4, beside div_triton (same bits), both modes;
# 2. bits: bench/fused-bits.sh at workgroups of 32 and 1024 (the fused
#    examples and the chunked kernels), div_var and s4 at R = 1, 2, 4, and
#    every example with attention's BN fixed, GPU against the CPU backend,
#    exact.
for f in .gl/*.deb; do dpkg -x $f / >/dev/null; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
echo "# commit ${C:-?}; $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)"
t0=$(date +%s)
lap() { echo "($(( $(date +%s) - t0 )) s)"; }
B=target/dev
S=bench/spellings-h200.sh
echo "## 1. spellings"
FILES="tests/spellings/softmax.ph bench/s17/unseen.ph" KERNELS="div_triton div_var s4" BITS=0 \
  timeout 120 $S new=$B/phobosc 2>&1 | grep -v "^#\|^driver\|^binary"
lap
echo "## 2. bits"
WGS="32 1024" timeout 200 bench/fused-bits.sh $B/phobosc 2>&1 | tail -4
d=$(mktemp -d); bad=0; count=0
same() { local name=$1; shift
  timeout 60 $B/phobosc run "$@" --no-tune --backend gpu --output $out=$d/g.npy >/dev/null 2>$d/err || { echo "$name: gpu failed: $(tail -1 $d/err)"; bad=1; return; }
  timeout 60 $B/phobosc run "$@" --no-tune --backend cpu --output $out=$d/c.npy >/dev/null 2>$d/err || { echo "$name: cpu failed: $(tail -1 $d/err)"; bad=1; return; }
  count=$((count + 1)); cmp -s $d/g.npy $d/c.npy || { echo "$name: DIFFERENT"; bad=1; }
}
out=Y
for spec in "tests/spellings/softmax.ph div_var" "bench/s17/unseen.ph s4"; do
  set -- $spec
  for r in 1 2 4; do for mn in "M=17 N=1024" "M=9 N=4096" "M=64 N=1000"; do
    set -- $spec; f=$1; k=$2; set -- $mn
    same "$k R=$r $mn" $f --kernel $k --config R=$r --dim $1 --dim $2 --arg seed=7
  done; done
done
out=O same "attention_dropout BN=32" examples/attention_dropout.ph --config BN=32 --dim BH=2 --dim S=96 --arg scale=0.125 --arg p=0.1
out=C same "matmul" examples/matmul.ph --dim M=64 --dim N=96 --dim K=80
out=uniform same "random_tile" examples/random_tile.ph --arg seed=7
echo "other bits: compared $count; $([ $bad = 0 ] && echo 'all identical' || echo 'DIFFERENCES')"
echo "took $(( $(date +%s) - t0 )) s"
