#!/bin/bash
# Session 17, second call (issue 28), phobosc in target/dev (release, the
# commit in the header):
# 1. the spellings at this commit, both modes, rows of 1024 and 4096:
#    tests/spellings' reciprocal and division spellings and layer norm's,
#    and bench/s17/unseen.ph, spellings written this session without
#    tuning the compiler for them (a `var` divided in place, a user's
#    chunked loop, layer norm divided by its deviation);
# 2. bits: bench/fused-bits.sh (the fused examples, every R, five shapes,
#    the heuristic's workgroup size), then every unseen spelling, GPU
#    against the CPU backend, exact;
# 3. fused Triton and the CUDA copy, same call.
for f in .gl/*.deb; do dpkg -x $f / >/dev/null; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
echo "# commit ${C:-?}; $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)"
t0=$(date +%s)
lap() { echo "($(( $(date +%s) - t0 )) s)"; }
B=target/dev
S=bench/spellings-h200.sh
echo "## 1. spellings"
FILES="tests/spellings/softmax.ph tests/spellings/layernorm.ph bench/s17/unseen.ph" \
  KERNELS="inv_inline div_triton div_inline ln_inline ln_triton s1 s2 s5 s4 c1 l1" BITS=0 \
  timeout 260 $S new=$B/phobosc 2>&1 | grep -v "^#\|^driver\|^binary"
lap
echo "## 2. bits"
WGS=h timeout 120 bench/fused-bits.sh $B/phobosc 2>&1 | tail -4
d=$(mktemp -d); bad=0; count=0
for k in s1 s2 s5 s4 c1 l1; do
  for r in 1 2 4; do
    for mn in "M=17 N=1024" "M=9 N=4096"; do
      set -- $mn
      a=(--kernel "$k" --config R=$r --dim "$1" --dim "$2" --arg seed=7 --no-tune)
      timeout 60 $B/phobosc run bench/s17/unseen.ph "${a[@]}" --backend gpu --output Y=$d/g.npy >/dev/null 2>$d/err || { echo "$k R=$r $mn: gpu failed: $(tail -1 $d/err)"; bad=1; continue; }
      timeout 60 $B/phobosc run bench/s17/unseen.ph "${a[@]}" --backend cpu --output Y=$d/c.npy >/dev/null 2>$d/err || { echo "$k R=$r $mn: cpu failed: $(tail -1 $d/err)"; bad=1; continue; }
      count=$((count + 1))
      cmp -s $d/g.npy $d/c.npy || { echo "$k R=$r $mn: DIFFERENT"; bad=1; }
    done
  done
done
echo "unseen bits: compared $count; $([ $bad = 0 ] && echo 'all identical' || echo 'DIFFERENCES')"
lap
echo "## 3. fused Triton and the CUDA copy"
left=$(( 520 - ($(date +%s) - t0) ))
[ $left -gt 40 ] && timeout $left python3 bench/peers/fused.py gpu --log2 26 --rows 1024,4096 --budget $((left - 20)) --no-compile 2>&1 | grep "Triton fused\|CUDA copy" | grep "^peers" | cut -f3-9
echo "took $(( $(date +%s) - t0 )) s"
