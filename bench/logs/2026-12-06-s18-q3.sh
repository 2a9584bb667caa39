#!/bin/bash
# Session 18, third call (issue 28). `base` is f5ea3be (the seventeenth
# session's end), `folds` is 6e45ae4 (q2's `new`), `new` also unrolls loops
# of a constant trip count by 4 or 2 on native devices (plan/loops.rs; a
# launch now specialises a kernel whose loop bounds read a dim). The
# chunked examples and unseen chunked spellings, tuned, both modes, rows of
# 1024 and 4096; two whole-row spellings as the control. Bits of every
# chunked kernel against the CPU backend at every R, four shapes, and at
# four workgroup sizes.
for f in .gl/*.deb; do dpkg -x $f / >/dev/null; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
echo "# commit ${C:-?}; $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)"
t0=$(date +%s)
B=target/dev
FILES="examples/softmax_dropout_chunked.ph examples/layernorm_dropout_chunked.ph bench/s18/chunked.ph tests/spellings/softmax.ph tests/spellings/layernorm.ph" \
  KERNELS="softmax_dropout_chunked layernorm_dropout_chunked c1 c2 c3 inv_inline ln_inline" BITS=0 \
  timeout 300 bench/spellings-h200.sh base=$B/base folds=$B/folds new=$B/phobosc 2>&1 | grep -v "^#\|^driver\|^binary"
echo "($(( $(date +%s) - t0 )) s)"
FILES="bench/s18/chunked.ph" PRECISIONS=exact KERNELS="c1 c2 c3" BITS=1 LOG2=22 \
  timeout 100 bench/spellings-h200.sh new=$B/phobosc 2>&1 | grep -i "bits\|differ\|failed" | head
d=$(mktemp -d); n=0; bad=0
for w in "" 32 128 512; do
  for f in softmax layernorm; do
    for mn in "M=17 N=1000" "M=9 N=4096" "M=33 N=300" "M=5 N=8192"; do
      set -- $mn
      a=(examples/${f}_dropout_chunked.ph --dim $1 --dim $2 --arg seed=7 --no-tune)
      PHOBOS_WORKGROUP_SIZE=$w $B/phobosc run "${a[@]}" --backend gpu --output Y=$d/g.npy >/dev/null 2>$d/err || { echo "$f $mn wg$w: gpu failed $(tail -1 $d/err)"; bad=1; continue; }
      $B/phobosc run "${a[@]}" --backend cpu --output Y=$d/c.npy >/dev/null 2>$d/err || { echo "$f $mn: cpu failed"; bad=1; continue; }
      n=$((n+1)); cmp -s $d/g.npy $d/c.npy || { echo "$f $mn wg$w: DIFFERENT"; bad=1; }
    done
  done
done
echo "chunked examples: compared $n; $([ $bad = 0 ] && echo 'all identical' || echo DIFFERENCES)"
echo "took $(( $(date +%s) - t0 )) s"
