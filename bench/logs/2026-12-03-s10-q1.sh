#!/bin/bash
# Session 10, first call (issue 14): the H200 after the GPU lowering's
# builder refactor (941b2bb; WGSL of the non-subgroup paths checked
# identical here, the subgroup paths only run there).
# - bits: the fused examples at the heuristic, 512 and 1024 workgroups, the
#   cooperative reductions with and without subgroups, and every example's
#   documented run (all outputs), GPU exact against Cranelift;
# - bench/fused-h200.sh --no-compile --no-cpu (tuned; both precisions).
start=$(date +%s)
for f in .gl/*.deb; do dpkg -x $f / >/dev/null; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
P=$PWD/target/release/phobosc
echo "# commit ${C:-?}; $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader); $(nproc) cores"
echo "== every example's documented run, every output, GPU exact against Cranelift"
d=$(mktemp -d)
grep -h "^//   phobosc run" examples/*.ph | sed 's|^//   phobosc run ||' | while read -r line; do
  names=$($P run $line --backend cpu --json 2>/dev/null </dev/null | python3 -c "import json,sys; print(' '.join(json.load(sys.stdin)['outputs']))")
  [ -z "$names" ] && { echo "$line: cpu run failed"; continue; }
  for b in gpu cpu; do outs=(); for o in $names; do outs+=(--output $o=$d/$b-$o.npy); done
    $P run $line --backend $b "${outs[@]}" >/dev/null 2>$d/err </dev/null || echo "$line: $b failed: $(tail -1 $d/err)"; done
  for o in $names; do cmp -s $d/gpu-$o.npy $d/cpu-$o.npy && echo "$line $o: identical" || echo "$line $o: DIFFERENT"; done
done | tee $OUT/examples-bits.txt | grep -c identical
grep DIFF $OUT/examples-bits.txt
echo "== bits of the fused examples (workgroups: heuristic, 512, 1024)"
WGS='h 512 1024' timeout 300 bench/fused-bits.sh $P 2>&1 | tee $OUT/bits.txt | tail -3
echo "== bench/reduce-bits.sh"
timeout 120 bench/reduce-bits.sh $P 2>&1 | tee $OUT/reduce-bits.txt | tail -2
echo "== bench/fused-h200.sh --no-compile --no-cpu"
rest=$((start + ${CALL_S:-570} - 15 - $(date +%s)))
PHOBOS_COMMIT=${C:-?} timeout $rest bench/fused-h200.sh $P --no-compile --no-cpu 2>&1 > $OUT/fused.txt; sed -n '/^| op/,/^Targets/p' $OUT/fused.txt | tail -12
echo "# done at $(( $(date +%s) - start )) s"
