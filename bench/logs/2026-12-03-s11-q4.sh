#!/bin/bash
# Session 11, fourth call (issue 14), after q3:
# - the staged rows are limited to one group of eight chunks (1024 words);
# - a kernel specialised to its dims (every kernel with a reduction over a
#   dim) now has each dim's value as a constant, so the Tandem twins' counters
#   `(r + iota(0)) * N + iota(1)` are seen to run along tiles of R > 1 rows
#   (q3: at R = 2 and 4 every word went by the direct path, 2.5 ms);
# - bits: bench/fused-bits.sh, GPU exact against Cranelift, both twins,
#   every R, heuristic workgroups and 512, rows of 1000 to 8192 (the dims'
#   constants touch every reduction kernel, the hash twins too);
# - speed: both twins, exact and fast, tuned, rows of 1024 to 8192.
start=$(date +%s)
for f in .gl/*.deb; do dpkg -x $f / >/dev/null; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json WGPU_BACKEND=vulkan
P=$PWD/target/release/phobosc
echo "# commit ${C:-?}; $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader); $(nproc) cores"
export PHOBOS_CACHE_DIR=$(mktemp -d)
b() { [ $(date +%s) -gt $((start + ${CALL_S:-400})) ] && { echo skipped; return; }; timeout 40 $P bench --backend gpu "$@" --runs 21 2>&1 | grep -o 'median[^;]*\|R=[0-9]*, workgroup [0-9]*\|error.*' | tr '\n' ' '; }
echo "== bits"
WGS='h 512' SHAPES="M=64,N=1000 M=33,N=1024 M=12,N=2048 M=9,N=4096 M=17,N=8192" timeout 200 bench/fused-bits.sh $P 2>&1 | tee $OUT/bits.txt | tail -8
echo "# at $(( $(date +%s) - start )) s"
echo "== speed (GiB/s median of 21; tuned)"
for op in softmax layernorm; do for pr in exact fast; do for n in 1024 2048 4096 8192; do
  echo "${op}_tandem $pr N=$n: $(b examples/${op}_dropout_tandem.ph --precision $pr --dim M=$((67108864 / n)) --dim N=$n --arg key=12345)"
  echo "${op} (hash) $pr N=$n: $(b examples/${op}_dropout.ph --precision $pr --dim M=$((67108864 / n)) --dim N=$n --arg seed=12345)"
done; done; done | tee $OUT/speed.txt
echo "# done at $(( $(date +%s) - start )) s"
