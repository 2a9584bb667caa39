#!/bin/bash
# Session 17, first call (issue 28), binaries in target/dev (release):
# phobosc at the commit in the header, base-phobosc at 3636613 (the
# sixteenth session's end; the lowering is unchanged since s16's q2).
# 1. softmax + dropout: the reciprocal spelling and the two division
#    spellings, both modes, both binaries. New: stores keep their groups
#    of 4 (and their kept rows) where an element computes two exact
#    divisions (GpuOptions::heavy_groups).
# 2. what exact mode's arithmetic costs those kernels: the new binary with
#    PHOBOS_ABLATE_MATH=div (the driver's `/`), =exp (the driver's exp),
#    =all (both); wrong bits, measurement only.
# 3. the chunked examples (`for` over chunks of 256), both binaries, both
#    modes, beside the whole-row examples (new binary). New: a `var` tile
#    never assigned after its declaration is planned as a `let` (inline,
#    no workgroup memory, no barrier per chunk).
# 4. bits: every changed kernel on the GPU against the CPU backend, exact.
# 5. fused Triton and the CUDA copy, same call.
for f in .gl/*.deb; do dpkg -x $f / >/dev/null; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
echo "# commit ${C:-?}; $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)"
t0=$(date +%s)
lap() { echo "($(( $(date +%s) - t0 )) s)"; }
B=target/dev
S=bench/spellings-h200.sh
echo "## 1. softmax spellings, new and base"
FILES=tests/spellings/softmax.ph KERNELS="inv_inline div_triton div_inline" BITS=0 PHOBOS_COMMIT=${C:-?} \
  timeout 150 $S new=$B/phobosc base=$B/base-phobosc 2>&1 | grep -v "^#\|^driver\|^binary"
lap
echo "## 2. exact mode's arithmetic ablated (new binary; wrong bits)"
for a in div exp all; do
  PHOBOS_ABLATE_MATH=$a FILES=tests/spellings/softmax.ph KERNELS="inv_inline div_triton" PRECISIONS=exact BITS=0 \
    timeout 60 $S ablate_$a=$B/phobosc 2>&1 | grep -v "^#\|^driver\|^binary"
done
lap
echo "## 3. chunked examples, new and base; whole-row examples, new"
FILES="examples/softmax_dropout_chunked.ph examples/layernorm_dropout_chunked.ph" BITS=0 \
  timeout 120 $S new=$B/phobosc base=$B/base-phobosc 2>&1 | grep -v "^#\|^driver\|^binary"
FILES="examples/softmax_dropout.ph examples/layernorm_dropout.ph" BITS=0 \
  timeout 60 $S new=$B/phobosc 2>&1 | grep -v "^#\|^driver\|^binary"
lap
echo "## 4. bits, exact, GPU against CPU (new binary)"
d=$(mktemp -d); bad=0; count=0
for spec in "tests/spellings/softmax.ph div_triton 1 2 4" "tests/spellings/softmax.ph div_inline 1 2 4" \
            "examples/softmax_dropout_chunked.ph softmax_dropout_chunked 4" "examples/layernorm_dropout_chunked.ph layernorm_dropout_chunked 4"; do
  set -- $spec; f=$1; k=$2; shift 2
  for r in "$@"; do
    for mn in "M=64 N=1000" "M=17 N=8192" "M=300 N=256" "M=9 N=4096"; do
      set -- $mn
      a=(--kernel "$k" --config R=$r --dim "$1" --dim "$2" --arg seed=7 --no-tune)
      timeout 60 $B/phobosc run "$f" "${a[@]}" --backend gpu --output Y=$d/g.npy >/dev/null 2>$d/err || { echo "$k R=$r $mn: gpu failed: $(tail -1 $d/err)"; bad=1; continue; }
      timeout 60 $B/phobosc run "$f" "${a[@]}" --backend cpu --output Y=$d/c.npy >/dev/null 2>$d/err || { echo "$k R=$r $mn: cpu failed: $(tail -1 $d/err)"; bad=1; continue; }
      count=$((count + 1))
      cmp -s $d/g.npy $d/c.npy || { echo "$k R=$r $mn: DIFFERENT"; bad=1; }
    done
  done
done
echo "bits: compared $count; $([ $bad = 0 ] && echo 'all identical' || echo 'DIFFERENCES')"
lap
echo "## 5. fused Triton and the CUDA copy"
left=$(( 540 - ($(date +%s) - t0) ))
[ $left -gt 40 ] && timeout $left python3 bench/peers/fused.py gpu --log2 26 --rows 1024,4096 --budget $((left - 20)) --no-compile 2>&1 | grep "Triton fused\|CUDA copy" | grep "^peers" | cut -f3-9
echo "took $(( $(date +%s) - t0 )) s"
