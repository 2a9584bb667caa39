#!/bin/bash
# Session 15, second call. Binaries in target/dev (release, this commit):
# 1. the bits that q1 could not bring back (8 files at most: everything is
#    tarred into one file now), and fast mode's outputs;
# 2. where the attention forward's time goes: bench/s15/attention_ablate.ph
#    (no mask, no product by V, scores only), the stream ablated, no
#    cooperative matrices, all at BM=16 BN=16, fast;
# 3. matmul after fast mode's unpack2x16float, by configuration, and the
#    GEMM ceilings at 2048;
# 4. issue 31: the Python package's call overhead (CPU and GPU) against the
#    Rust API, and a 2^28 fill against NumPy and torch on the CPU;
# 5. issue 30: the fill rows q1's output cut (u32, f32, f64, normal_f64).
for f in .gl/*.deb; do dpkg -x $f / >/dev/null; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
echo "# commit ${C:-?}; $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)"
t0=$(date +%s)
lap() { echo "($(( $(date +%s) - t0 )) s)"; }
B=target/dev
P=$B/phobosc
D=bench/s13/data
ATT="--arg scale=0.125 --arg p=0.1 --arg key=2027"
echo "## 1. bits (exact) and fast mode's outputs"
O=/tmp/o; mkdir -p $O
OUT=$O BITS_ONLY=1 timeout 100 bench/attention-h200.sh $P 2>&1 | tail -2
F=$O/fast; mkdir -p $F
for cfg in "BM=16 BN=16" "BM=32 BN=64"; do
  set -- $cfg
  timeout 30 $P run examples/matmul.ph --backend gpu --precision fast --config $1 --config $2 --input A=$D/A.npy --input B=$D/Bm.npy \
    --output C=$F/C.${1#BM=}x${2#BN=}.npy 2>&1 | grep -i "error" | head -4
done
timeout 40 $P run examples/attention_dropout.ph --backend gpu --precision fast --config BM=16 --config BN=32 $ATT \
  --input Q=$D/Q.npy --input K=$D/K.npy --input V=$D/V.npy --output O=$F/O.npy --output L=$F/L.npy 2>&1 | grep -i "error" | head -6
for k in let loop; do
  timeout 30 $P run bench/s15/matmul_spellings.ph --kernel matmul_$k --backend gpu --config BM=32 --config BN=64 --input A=$D/A.npy --input B=$D/Bm.npy \
    --output C=$O/bits/C$k.32x64.npy 2>&1 | grep -i "error" | head -3
  timeout 30 $P run bench/s15/matmul_spellings.ph --kernel matmul_$k --backend gpu --precision fast --config BM=32 --config BN=64 --input A=$D/A.npy --input B=$D/Bm.npy \
    --output C=$F/C$k.32x64.npy 2>&1 | grep -i "error" | head -3
done
tar czf $OUT/outputs.tgz -C $O bits fast; ls $O/bits $O/fast | tr '\n' ' '; echo
lap
row() { local label=$1; shift
  [ $(( $(date +%s) - t0 )) -gt 480 ] && { echo "phobos	$label	skipped (time)"; return; }
  timeout 40 $P bench "$@" --backend gpu --json 2>/dev/null | python3 -c "
import json,sys; j=json.load(sys.stdin); print('phobos\t$label\t%s\t%.4f ms\tconfig %s' % (j['precision'], j['median_ms'], j['config']))" || echo "phobos	$label	failed or timed out"
}
echo "## 2. attention forward, BH=64 S=1024 D=64, fast, BM=16 BN=16: where the time goes"
AF="--dim BH=64 --dim S=1024 $ATT --precision fast --config BM=16 --config BN=16"
row "example" examples/attention_dropout.ph $AF
row "no mask" bench/s15/attention_ablate.ph --kernel att_nodrop $AF
row "no product by V" bench/s15/attention_ablate.ph --kernel att_nopv $AF
row "scores and max only" bench/s15/attention_ablate.ph --kernel att_qk $AF
PHOBOS_ABLATE_STREAM=1 row "example, stream ablated" examples/attention_dropout.ph $AF
PHOBOS_COOPERATIVE=off row "example, no cooperative matrices" examples/attention_dropout.ph $AF
row "example BN=32" examples/attention_dropout.ph --dim BH=64 --dim S=1024 $ATT --precision fast --config BM=16 --config BN=32
lap
echo "## 3. matmul 2048^3 fast (unpack2x16float loads), by configuration; GEMM ceilings at 2048"
MM="examples/matmul.ph --dim M=2048 --dim N=2048 --dim K=2048 --precision fast"
row "matmul tuned" $MM
row "matmul BM=64 BN=64" $MM --config BM=64 --config BN=64
row "matmul BM=32 BN=64" $MM --config BM=32 --config BN=64
row "matmul Triton loop tuned" bench/s15/matmul_spellings.ph --kernel matmul_loop --dim M=2048 --dim N=2048 --dim K=2048 --precision fast
timeout 60 $B/phobos-bench-gemm 2048 2>&1 | grep "^|"
lap
echo "## 4. Python (issue 31)"
python3 -m pip install -q --no-deps --target /tmp/pyph target/wheels-release/*.whl 2>&1 | tail -2
nproc
timeout 60 $B/call_overhead cpu gpu interp 2>&1 | tail -4
PYTHONPATH=/tmp/pyph timeout 150 python3 python/bench/call.py --backends cpu,gpu,interp --log2 28 2>&1 | tail -16
lap
echo "## 5. fills (issue 30): the rows q1's output cut"
timeout 60 $B/phobos-bench-tandem-gpu 28 u32 f32 f64 normal_f64 exp_f32 2>&1 | grep "^|"
for spec in "bench/s14/fill_u32.ph --dim N=268435456" "bench/s15/fill_u32_rows.ph --dim M=1048576"; do
  timeout 40 $P bench $spec --arg key=1 --backend gpu --json 2>/dev/null | python3 -c "
import json,sys; j=json.load(sys.stdin); print('u32 fill as a Phobos kernel ($spec), 2^28: %.1f GiB/s, config %s; %s' % (1.0 / (j['median_ms'] / 1e3), j['config'], j.get('lowering')))" || echo "$spec failed"
done
timeout 60 python3 bench/peers/peers.py 28 u32 f32 f64 normal_f64 2>&1 | grep "^|"
echo "took $(( $(date +%s) - t0 )) s"
