#!/bin/bash
# Session 5, last call: issue 11's compile rows after the division's
# fallback change, issue 12's 3 GiB launch path, issue 14's fused kernels
# against PyTorch and Triton, the bits of every example against Cranelift,
# the table; the front-end fuzzer (issue 16) on the CPUs from the fused
# comparison on (nice 19; the GPU rows are timed by GPU timestamps).
for f in .gl/*.deb; do dpkg -x $f / >/dev/null; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
echo "commit ${C:-?}; $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1); $(nproc) cores"
T=target/release/phobos-bench-table
P=target/release/phobosc
d=$(mktemp -d)
for k in copy dropout_rows tandem_dropout tandem_noise; do
  for run in cold warm; do
    echo "$k R=16 $run $(PHOBOS_CACHE_DIR=$d/$k/p XDG_CACHE_HOME=$d/$k/xdg __GL_SHADER_DISK_CACHE_PATH=$d/$k/nv \
      timeout 30 $T --compile-child $k 16 28 | grep COMPILE)"
  done
  echo "$k R=16 second-kernel $(PHOBOS_BENCH_PREWARM=1 PHOBOS_CACHE_DIR=$d/$k/p XDG_CACHE_HOME=$d/$k/xdg __GL_SHADER_DISK_CACHE_PATH=$d/$k/nv \
      timeout 30 $T --compile-child $k 16 28 | grep COMPILE)"
done
echo "(COMPILE wall pipeline open parse submitted again | lower spirv module driver, ms)"
echo "== issue 14: bench/reduce-bits.sh"
timeout 120 bench/reduce-bits.sh $P 2>&1 | tee $OUT/reduce-bits.txt | tail -8
echo "== issue 12: bench/launch-h200.sh"
timeout 240 bench/launch-h200.sh $P 2>&1 | tee $OUT/launch.txt
mkdir -p $OUT/fuzz
(OUT=$OUT/fuzz nice -n 19 timeout 560 sh fuzz/device-run.sh -j 16 -t ${FUZZ_S:-400} -m jobs > $OUT/fuzz/run.txt 2>&1) &
echo "== issue 14: bench/fused-h200.sh"
PHOBOS_COMMIT=${C:-?} timeout 300 bench/fused-h200.sh $P --no-compile --no-cpu --precision exact ${FUSED_ARGS:-} 2>&1 | tee $OUT/fused.txt | tail -60
echo "== bits"
timeout 200 bench/logs/2026-12-02-bits-s5.sh $P 2>&1 | tee $OUT/bits.txt | grep -v identical
echo "== table"
timeout 150 $T 28 --no-ablations --no-compile 2>&1 | tee $OUT/table.txt | tail -22
wait
cat $OUT/fuzz/summary.txt
