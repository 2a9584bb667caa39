#!/bin/bash
# Session 15, third call (trimmed to the device time left: cuRAND is q2's, same day and card): flat tensors
# (`tensor<f32>[N]`, N a dim) before (target/dev/phobosc-before, commit
# ac6982b) and after their 16-byte loads and stores where the launch's N is
# a multiple of 4 (target/dev/phobosc); issue 30's short rows with the
# SPEC's exact maps and with the hardware's log and sqrt
# (PHOBOS_ABLATE_MAP=1, wrong bits), beside cuRAND; the workgroup size
# tuning picks for matmul.
for f in .gl/*.deb; do dpkg -x $f / >/dev/null; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
echo "# commit ${C:-?}; $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)"
t0=$(date +%s)
B=target/dev
row() { local p=$1 label=$2 gib=$3; shift 3
  [ $(( $(date +%s) - t0 )) -gt 75 ] && { echo "$p	$label	skipped (time)"; return; }
  timeout 30 $B/$p bench "$@" --backend gpu --json --runs 11 2>/dev/null | python3 -c "
import json,sys; j=json.load(sys.stdin); ms=j['median_ms']; print('%s\t%s\t%s\t%.4f ms\t%.0f GiB/s\tconfig %s, workgroup %s' % ('$p', '$label', j['precision'], ms, $gib / (ms / 1e3), j['config'], j.get('workgroup_size')))" || echo "$p	$label	failed"
}
timeout 25 $B/phobos-bench-tandem-gpu 28 normal_f32 exp_f32 exp_f64 2>&1 | grep "^| \(normal_f32\|exp_f32\|exp_f64\) |"
echo "## the same, PHOBOS_ABLATE_MAP=1 (the hardware's log and sqrt; the bits are wrong, so the CPU check fails)"
PHOBOS_ABLATE_MAP=1 timeout 25 $B/phobos-bench-tandem-gpu 28 normal_f32 exp_f32 exp_f64 2>&1 | grep "^| \(normal_f32\|exp_f32\|exp_f64\) |"
for p in phobosc-before phobosc; do
  row $p "fill u32 flat (bench/s14/fill_u32.ph)" 1 bench/s14/fill_u32.ph --dim N=268435456 --arg key=1 --config T=4096
  row $p "flat scale 2^28 f32" 2 bench/s15/flat.ph --kernel flat_scale --dim N=268435456 --config T=4096
done
row phobosc "flat scale 2^28-1 f32 (N % 4 != 0)" 2 bench/s15/flat.ph --kernel flat_scale --dim N=268435455 --config T=4096
echo "took $(( $(date +%s) - t0 )) s"
