#!/bin/bash
# Session 26, fifth call (d845130, phobosc-h): what the staged fallback's code
# costs the direct products where every block is inside
# (PHOBOS_ABLATE_FALLBACK=1, square sizes only), and f16 against f32
# outputs, in one call; fast, tuned, median of 21.
for f in .gl/*.deb; do dpkg -x $f / >/dev/null; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
mkdir -p target/dev && for f in target/devz/*.gz; do gzip -dc $f > target/dev/$(basename $f .gz); chmod +x target/dev/$(basename $f .gz); done
B=$PWD/target/dev; P=$B/phobosc-h
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
echo "# $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)"
row() { # label, then bench arguments
  local label=$1; shift
  timeout 100 $P bench "$@" --backend gpu --precision fast --json 2>/dev/null | python3 -c "
import json,sys; j=json.load(sys.stdin); print('$label\t%.4f ms\tconfig %s wg %s' % (j['median_ms'], j['config'], j['workgroup_size']))" || echo "$label	failed"
}
for n in 2048 4096; do
  MM="--dim M=$n --dim N=$n --dim K=$n"
  for k in mm_f16 mm_f32; do
    row "$k $n^3" bench/s26/matmul_tiles.ph --kernel $k $MM
    PHOBOS_ABLATE_FALLBACK=1 row "$k $n^3, no fallback" bench/s26/matmul_tiles.ph --kernel $k $MM
  done
done
row "matmul_loop 2048^3" bench/s15/matmul_spellings.ph --kernel matmul_loop --dim M=2048 --dim N=2048 --dim K=2048
PHOBOS_ABLATE_FALLBACK=1 row "matmul_loop 2048^3, no fallback" bench/s15/matmul_spellings.ph --kernel matmul_loop --dim M=2048 --dim N=2048 --dim K=2048
timeout 60 $B/phobos-bench-gemm 2048 4096 2>&1 | grep -i "coop direct" | head -4
echo "took $(el) s"
