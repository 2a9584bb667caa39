#!/bin/bash
# Session 11, third call (issue 14): what bounds the Tandem twins after q2.
# - PHOBOS_ABLATE_STREAM=1 (a step of two operations, wrong bits: measurement
#   only): if the twins then run as fast as the hash twins, the chunks'
#   chains of 40 dependent steps bound them;
# - PHOBOS_ROW_WORDS_MAX: the staged rows off (0) and on up to 8192
#   positions, both twins, both precisions, tuned, rows of 1024 to 8192, to
#   check the default (2048: on for rows of 1024 and 2048, off above);
# - what the driver made of them: PHOBOS_DUMP_SPIRV writes the SPIR-V each
#   pipeline was built from, and phobos-bench-regs (carried) prints the
#   driver's registers and shared memory per pipeline: the hash and Tandem
#   twins at rows of 1024, fast, R = 1, workgroup 128, staged and stepped;
# - fixed configurations (R, workgroup) of softmax_dropout_tandem fast at
#   rows of 1024, to see how the time moves with the rows a multiprocessor
#   holds.
start=$(date +%s)
for f in .gl/*.deb; do dpkg -x $f / >/dev/null; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json WGPU_BACKEND=vulkan
P=$PWD/target/release/phobosc
echo "# commit ${C:-?}; $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader); $(nproc) cores"
export PHOBOS_CACHE_DIR=$(mktemp -d)
b() { timeout 40 $P bench --backend gpu "$@" --runs 21 2>&1 | grep -o 'median[^;]*\|R=[0-9]*, workgroup [0-9]*\|error.*' | tr '\n' ' '; }
S=examples/softmax_dropout_tandem.ph
echo "== registers (fast, R=1, workgroup 128, N=1024)"
D=$OUT/spv; mkdir -p $D/hash $D/staged $D/stepped
one() { PHOBOS_WORKGROUP_SIZE=128 timeout 40 $P bench --backend gpu "$@" --precision fast --config R=1 --dim M=65536 --dim N=1024 --runs 3 >/dev/null 2>&1; }
PHOBOS_DUMP_SPIRV=$D/hash one examples/softmax_dropout.ph --arg seed=1
PHOBOS_DUMP_SPIRV=$D/staged one $S --arg key=1
PHOBOS_DUMP_SPIRV=$D/stepped PHOBOS_ROW_WORDS_MAX=0 one $S --arg key=1
for v in hash staged stepped; do echo "-- $v"; timeout 60 target/release/phobos-bench-regs --dump $D/$v $D/$v/*.spv 2>&1 | head -20; done
echo "# at $(( $(date +%s) - start )) s"
echo "== stream ablated (tuned)"
for pr in fast exact; do for n in 1024 8192; do
  echo "softmax_tandem $pr N=$n ablated: $(PHOBOS_ABLATE_STREAM=1 b $S --precision $pr --dim M=$((67108864 / n)) --dim N=$n --arg key=12345)"
done; done | tee $OUT/ablated.txt
echo "== PHOBOS_ROW_WORDS_MAX (tuned; a tuning cache for each limit)"
mkdir -p $PHOBOS_CACHE_DIR/0 $PHOBOS_CACHE_DIR/8192
for op in softmax layernorm; do for pr in exact fast; do for n in 1024 2048 4096 8192; do for lim in 0 8192; do
  echo "${op}_tandem $pr N=$n limit $lim: $(PHOBOS_CACHE_DIR=$PHOBOS_CACHE_DIR/$lim PHOBOS_ROW_WORDS_MAX=$lim b examples/${op}_dropout_tandem.ph --precision $pr --dim M=$((67108864 / n)) --dim N=$n --arg key=12345)"
done; done; done; done | tee $OUT/limit.txt
echo "# at $(( $(date +%s) - start )) s"
echo "== fixed configurations, fast, N=1024"
for R in 1 2 4; do for w in 64 128 256 512; do
  echo "R=$R wg=$w: $(PHOBOS_WORKGROUP_SIZE=$w b $S --precision fast --config R=$R --no-tune --dim M=65536 --dim N=1024 --arg key=12345)"
done; done | tee $OUT/configs.txt
echo "# done at $(( $(date +%s) - start )) s"
