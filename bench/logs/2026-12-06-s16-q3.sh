#!/bin/bash
# Session 16, third call (issue 30), for the H200: q2 ran on an H100. The
# fill kernels exchange blocks in subgroups only for the maps bound by their
# stores (u32, f32, f64, f16) and K >= 8, as q2 measured; the maps bound by
# their arithmetic keep the direct loop. In one call:
# 1. every fill row (2^28), then u32/f32/f64/f16 with PHOBOS_SUBGROUPS=off
#    (the direct loop, as before);
# 2. the three short rows with the hardware's log and sqrt, and with each
#    alone (PHOBOS_ABLATE_MAP=1|log|sqrt; wrong bits);
# 3. cuRAND and PyTorch, the same rows;
# 4. the u32 fill as a Phobos kernel.
for f in .gl/*.deb; do dpkg -x $f / >/dev/null; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
echo "# commit ${C:-?}; $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)"
t0=$(date +%s)
lap() { echo "($(( $(date +%s) - t0 )) s)"; }
B=target/dev
ROWS="u32 f32 f64 f16 normal_f32 exp_f32 exp_f64"
echo "## 1. fills"
timeout 90 $B/phobos-bench-tandem-gpu 28 $ROWS 2>&1 | grep "^|"
lap
echo "## 1b. PHOBOS_SUBGROUPS=off (the direct loop, as before)"
PHOBOS_SUBGROUPS=off timeout 60 $B/phobos-bench-tandem-gpu 28 u32 f32 f64 f16 2>&1 | grep "^|"
lap
echo "## 2. PHOBOS_ABLATE_MAP=1, =log, =sqrt (wrong bits)"
PHOBOS_ABLATE_MAP=1 timeout 40 $B/phobos-bench-tandem-gpu 28 normal_f32 exp_f32 exp_f64 2>&1 | grep "^|"
PHOBOS_ABLATE_MAP=log timeout 20 $B/phobos-bench-tandem-gpu 28 normal_f32 2>&1 | grep "^| normal"
PHOBOS_ABLATE_MAP=sqrt timeout 20 $B/phobos-bench-tandem-gpu 28 normal_f32 2>&1 | grep "^| normal"
lap
echo "## 3. peers"
timeout 100 python3 bench/peers/peers.py 28 $ROWS 2>&1 | grep "^|"
lap
echo "## 4. the u32 fill as a Phobos kernel"
timeout 40 $B/phobosc bench bench/s15/fill_u32_rows.ph --dim M=1048576 --arg key=1 --backend gpu --json 2>/dev/null | python3 -c "
import json,sys; j=json.load(sys.stdin); print('u32 fill as a Phobos kernel over rows of 256, 2^28: %.1f GiB/s, config %s, workgroup %s' % (1.0 / (j['median_ms'] / 1e3), j['config'], j.get('workgroup_size')))"
echo "took $(( $(date +%s) - t0 )) s"
