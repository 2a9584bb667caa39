#!/bin/bash
# Session 16, second call (issue 30, then issue 28), binaries in target/dev
# (release, commit in the header):
# 1. every Tandem fill row whose map changed: the fill kernels now exchange
#    blocks in subgroups of 32 before storing them (tandem/shuffle.rs); the
#    same binary with PHOBOS_SUBGROUPS=off is the direct loop as before;
#    then the three short rows with the hardware's log and sqrt
#    (PHOBOS_ABLATE_MAP=1, wrong bits: the bound of the maps' arithmetic),
#    each alone, and workgroups of 32 and 128 invocations;
# 2. cuRAND and PyTorch, the same rows, same call;
# 3. the u32 fill as a Phobos kernel over rows of 256 and over a flat index;
# 4. issue 28's spellings (tests/spellings/) at rows of 1024 and 4096, both
#    modes, beside fused Triton and the CUDA copy, while time is left.
for f in .gl/*.deb; do dpkg -x $f / >/dev/null; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
echo "# commit ${C:-?}; $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)"
t0=$(date +%s)
lap() { echo "($(( $(date +%s) - t0 )) s)"; }
B=target/dev
ROWS="u32 f32 f64 f16 normal_f32 exp_f32 exp_f64"
echo "## 1. fills, exchanged in subgroups (new)"
timeout 90 $B/phobos-bench-tandem-gpu 28 $ROWS 2>&1 | grep "^|"
lap
echo "## 1b. the same binary, PHOBOS_SUBGROUPS=off (the direct loop, as before)"
PHOBOS_SUBGROUPS=off timeout 90 $B/phobos-bench-tandem-gpu 28 $ROWS 2>&1 | grep "^|"
lap
echo "## 1c. PHOBOS_ABLATE_MAP=1 (the hardware's log and sqrt; wrong bits)"
PHOBOS_ABLATE_MAP=1 timeout 40 $B/phobos-bench-tandem-gpu 28 normal_f32 exp_f32 exp_f64 2>&1 | grep "^|"
lap
echo "## 1d. the logarithm alone (=log), the square root alone (=sqrt)"
PHOBOS_ABLATE_MAP=log timeout 40 $B/phobos-bench-tandem-gpu 28 normal_f32 exp_f32 exp_f64 2>&1 | grep "^|"
PHOBOS_ABLATE_MAP=sqrt timeout 20 $B/phobos-bench-tandem-gpu 28 normal_f32 2>&1 | grep "^|"
echo "## 1e. workgroups of 32 and of 128 invocations (PHOBOS_FILL_WORKGROUP_SIZE; same bits)"
for w in 32 128; do PHOBOS_FILL_WORKGROUP_SIZE=$w timeout 40 $B/phobos-bench-tandem-gpu 28 normal_f32 exp_f32 exp_f64 2>&1 | grep "^|" | sed "s/^/wg $w /"; done
lap
echo "## 2. peers"
timeout 100 python3 bench/peers/peers.py 28 $ROWS 2>&1 | grep "^|"
lap
echo "## 3. the u32 fill as a Phobos kernel"
for spec in "bench/s15/fill_u32_rows.ph --dim M=1048576" "bench/s14/fill_u32.ph --dim N=268435456"; do
  timeout 40 $B/phobosc bench $spec --arg key=1 --backend gpu --json 2>/dev/null | python3 -c "
import json,sys; j=json.load(sys.stdin); print('u32 fill as a Phobos kernel ($spec), 2^28: %.1f GiB/s, config %s, workgroup %s' % (1.0 / (j['median_ms'] / 1e3), j['config'], j.get('workgroup_size')))" || echo "$spec failed"
done
lap
echo "## 4. issue 28: spellings, then fused Triton and the CUDA copy"
ROWS="1024 4096" BITS=0 PHOBOS_COMMIT=${C:-?} timeout 260 bench/spellings-h200.sh new=$B/phobosc 2>&1
lap
left=$(( 520 - ($(date +%s) - t0) ))
[ $left -gt 40 ] && timeout $left python3 bench/peers/fused.py gpu --log2 26 --rows 1024,4096 --budget $((left - 20)) --no-compile 2>&1 | grep "Triton fused\|CUDA copy" | grep "^peers" | cut -f3-9
echo "took $(( $(date +%s) - t0 )) s"
