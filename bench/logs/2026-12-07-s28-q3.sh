#!/bin/bash
# Session 28, third call: issue 28's chunked loops and whole-row spellings,
# phobosc-h (ad5cf03: a reduction's block of whole groups of 4 read with
# one 16-byte load) against phobosc-f (50f5c41), rows of 2^26 f32
# elements, tuned, median of 21; the CUDA copy and Triton in the same call.
for f in .gl/*.deb; do dpkg -x $f / >/dev/null; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
mkdir -p target/dev && for f in target/devz/*.gz; do gzip -dc $f > target/dev/$(basename $f .gz); chmod +x target/dev/$(basename $f .gz); done
B=$PWD/target/dev
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
echo "# $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)"
row() { # label, binary, precision, then bench arguments
  local label=$1 bin=$2 p=$3; shift 3
  timeout 200 $bin bench "$@" --backend gpu --precision $p --json 2>/dev/null | python3 -c "
import json,sys; j=json.load(sys.stdin); print('$label\t%.4f ms\t%.0f GiB/s\tconfig %s wg %s' % (j['median_ms'], j.get('median_gib_s', 0), j['config'], j['workgroup_size']))" || echo "$label	failed"
}
echo "## issue 28: chunked loops and whole rows, f against h ($(el) s)"
for n in 1024 4096; do for p in fast exact; do for v in h f; do
  for k in "c1 bench/s17/unseen.ph" "c2 bench/s18/chunked.ph" "softmax_dropout_chunked examples/softmax_dropout_chunked.ph" "inv_inline tests/spellings/softmax.ph" "div_triton tests/spellings/softmax.ph" "ln_inline tests/spellings/layernorm.ph"; do set -- $k
    row "N=$n $p $1 ($v)" $B/phobosc-$v $p $2 --kernel $1 --dim M=$((67108864 / n)) --dim N=$n --arg seed=7
  done
done; done; done
echo "## ceilings and Triton ($(el) s)"
timeout 50 python3 bench/peers/fused.py gpu --log2 26 --rows 1024,4096 --budget 35 --no-compile 2>&1 | grep "Triton fused\|CUDA copy" | grep "^peers" | cut -f3-9
echo "took $(el) s"
