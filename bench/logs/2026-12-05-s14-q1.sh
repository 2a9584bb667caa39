#!/bin/bash
# Session 14, first call (issue 29 and 30):
# 1. the GEMM ceilings through wgpu (phobos-bench-gemm: cooperative
#    matrices direct and staged, exact tiled, exact tiled contracted);
# 2. the Tandem fills' exact-mode modules (PHOBOS_DUMP_SPIRV) and what the
#    driver made of them (phobos-bench-regs --dump), for issue 30;
# 3. issue 29's bits on the device against the interpreter's
#    (bench/attention-h200.sh BITS_ONLY; compared after by
#    bench/s13/compare.py);
# 4. the peers (torch.matmul f16, SDPA with dropout);
# 5. Phobos's matmul and attention speed (fast, then exact).
for f in .gl/*.deb; do dpkg -x $f / >/dev/null; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
echo "# commit ${C:-?}; $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)"
t0=$(date +%s)
echo "## 1. GEMM ceilings"
timeout 150 target/release/phobos-bench-gemm 4096 2048 2>&1 | tail -12
echo "($(( $(date +%s) - t0 )) s)"
echo "## 2. fill modules"
S=$OUT/spv; mkdir -p $S
for t in u32 f32 normal_f32 exp_f32 exp_f64 normal_f64; do
  PHOBOS_DUMP_SPIRV=$S timeout 30 target/release/phobosc fill $t --backend gpu --count 1048576 --output /dev/null 2>&1 | tail -2
done
ls $S
timeout 60 target/release/phobos-bench-regs --dump $OUT/ir $S/*.spv 2>&1 | tail -30
echo "($(( $(date +%s) - t0 )) s)"
echo "## 3. bits"
BITS_ONLY=1 timeout 120 bench/attention-h200.sh target/release/phobosc 2>&1 | tail -8
echo "($(( $(date +%s) - t0 )) s)"
echo "## 4. peers"
timeout 120 python3 bench/peers/attention.py 2>&1 | tail -20
echo "($(( $(date +%s) - t0 )) s)"
echo "## 5. speed"
P=target/release/phobosc
ATT="--arg scale=0.125 --arg p=0.1 --arg key=2027"
row() { local label=$1; shift
  timeout 60 $P bench "$@" --backend gpu --json 2>/dev/null | python3 -c "
import json,sys; j=json.load(sys.stdin); print('phobos\t$label\t%s\t%.4f ms\tconfig %s' % (j['precision'], j['median_ms'], j['config']))" || echo "phobos	$label	failed or timed out"
}
for prec in fast exact; do
  row "matmul 2048^3" examples/matmul.ph --dim M=2048 --dim N=2048 --dim K=2048 --precision $prec
  row "attention forward BH=64 S=1024 D=64" examples/attention_dropout.ph --dim BH=64 --dim S=1024 $ATT --precision $prec
done
row "attention backward kv BH=64 S=1024 D=64" examples/attention_dropout_backward.ph --kernel attention_dropout_backward_kv --dim BH=64 --dim S=1024 $ATT --precision fast
row "attention backward q BH=64 S=1024 D=64" examples/attention_dropout_backward.ph --kernel attention_dropout_backward_q --dim BH=64 --dim S=1024 $ATT --precision fast
echo "took $(( $(date +%s) - t0 )) s"
