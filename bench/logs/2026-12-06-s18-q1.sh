#!/bin/bash
# Session 18, first call (issue 28). `base` is the seventeenth session's
# end binary (f5ea3be); `new` plans each loop's barriers (plan/loops.rs): no
# storage barrier where no tensor conflicts, none between iterations where
# the body reads nothing it writes. The chunked examples and three
# whole-row spellings, tuned, both modes, rows of 1024 and 4096. Then the
# registers the driver gives the whole-row softmax at 4, 8, 16 and 32
# elements a lane (phobos-bench-regs on PHOBOS_DUMP_SPIRV), and the row
# cache at 16 and 8 words where a lane has 16 elements. Bits: fused-bits.sh.
for f in .gl/*.deb; do dpkg -x $f / >/dev/null; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
echo "# commit ${C:-?}; $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)"
t0=$(date +%s)
B=target/dev
FILES="tests/spellings/softmax.ph tests/spellings/layernorm.ph examples/softmax_dropout_chunked.ph examples/layernorm_dropout_chunked.ph" \
  KERNELS="softmax_dropout_chunked layernorm_dropout_chunked inv_inline div_triton ln_inline" BITS=0 \
  timeout 260 bench/spellings-h200.sh base=$B/base new=$B/phobosc 2>&1 | grep -v "^#\|^driver\|^binary"
echo "($(( $(date +%s) - t0 )) s)"
row() { # label file kernel precision R wg N [env...]
  local label=$1 f=$2 k=$3 p=$4 r=$5 w=$6 n=$7; shift 7
  j=$(env "$@" PHOBOS_WORKGROUP_SIZE=$w PHOBOS_CACHE_DIR=off timeout 60 $B/phobosc bench --backend gpu --precision $p --json --runs 21 --no-tune \
      --config R=$r --dim M=$(( (1 << 26) / n )) --dim N=$n --arg seed=7 --kernel $k $f 2>/dev/null)
  python3 -c "
import json,sys
try:
  j=json.loads(sys.argv[1][sys.argv[1].index('{'):]); print('$label\t$k\t$p\tN=$n\tR=$r\twg$w\t%.0f\t%.0f' % (j['median_gib_s'], j['fastest_gib_s']))
except Exception as e: print('$label\t$k\t$p\tN=$n\tR=$r\twg$w\tn/a\t' + str(e)[:50])" "$j"
}
D=$(mktemp -d)
for p in fast exact; do
  for w in 128 256 512 1024; do row regs tests/spellings/softmax.ph inv_inline $p 1 $w 4096 PHOBOS_DUMP_SPIRV=$D/$p-4096; done
  row regs tests/spellings/softmax.ph inv_inline $p 1 128 1024 PHOBOS_DUMP_SPIRV=$D/$p-1024
  row regs tests/spellings/layernorm.ph ln_inline $p 1 256 4096 PHOBOS_DUMP_SPIRV=$D/$p-ln4096
  row regs tests/spellings/layernorm.ph ln_inline $p 1 512 4096 PHOBOS_DUMP_SPIRV=$D/$p-ln4096
done
for d in $D/*; do echo "== $(basename $d)"; $B/phobos-bench-regs $d/*.spv 2>&1 | grep -v "^$" | head -40; done
for c in 16 8 32; do
  row cache$c tests/spellings/softmax.ph inv_inline fast 1 256 4096 PHOBOS_ROW_CACHE_WORDS=$c
  row cache$c tests/spellings/softmax.ph inv_inline fast 1 512 4096 PHOBOS_ROW_CACHE_WORDS=$c
done
echo "($(( $(date +%s) - t0 )) s)"
WGS=h timeout 100 bench/fused-bits.sh $B/phobosc 2>&1 | tail -2
echo "took $(( $(date +%s) - t0 )) s"
