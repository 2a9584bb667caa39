#!/bin/bash
# Session 17, sixth call (issues 28 and 29), phobosc in target/dev (the
# commit in the header). The launch heuristic now lets a kernel ask for
# more than 256 invocations on a device that allows them; `dot` asks for
# one per 8 elements of its product, so a 64 x 64 block gets 512 where it
# got 256. Before keeping that, matmul 2048^3 by workgroup size (untuned
# R, given BM and BN), both modes, and the tuner's own choice.
for f in .gl/*.deb; do dpkg -x $f / >/dev/null; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
echo "# commit ${C:-?}; $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)"
t0=$(date +%s)
B=target/dev
MM="examples/matmul.ph --dim M=2048 --dim N=2048 --dim K=2048"
row() { local label=$1; shift
  [ $(( $(date +%s) - t0 )) -gt 300 ] && { echo "$label	skipped (time)"; return; }
  PHOBOS_CACHE_DIR=off timeout 60 $B/phobosc bench "$@" --backend gpu --json --runs 11 2>/dev/null | python3 -c "
import json,sys; j=json.load(sys.stdin); print('$label\t%s\t%.4f ms\t%.1f TFLOP/s\tconfig %s wg%s' % (j['precision'], j['median_ms'], 2*2048**3/j['median_ms']/1e9, j['config'], j.get('workgroup_size')))" || echo "$label	failed or timed out"
}
for p in fast exact; do
  for c in "BM=64 BN=64" "BM=32 BN=64"; do
    set -- $c
    for w in 64 128 256 512 1024; do
      PHOBOS_WORKGROUP_SIZE=$w row "matmul $c wg$w" $MM --precision $p --config $1 --config $2
    done
    row "matmul $c heuristic" $MM --precision $p --config $1 --config $2 --no-tune
  done
  row "matmul tuned" $MM --precision $p
done
echo "took $(( $(date +%s) - t0 )) s"
