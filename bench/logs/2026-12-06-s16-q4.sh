#!/bin/bash
# Session 16, fourth call (issue 32, one GPU): launches and fills split
# across two devices of one adapter (--devices 0,0) and across the GPU and
# the CPU (--devices 0,cpu), checked byte for byte against one device (the
# CPU backend, which has the interpreter's bits), on a real GPU; then what a
# split on one GPU costs against no split (phobosc bench).
for f in .gl/*.deb; do dpkg -x $f / >/dev/null; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
echo "# commit ${C:-?}; $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)"
t0=$(date +%s)
P=target/dev/phobosc; O=/tmp/s; mkdir -p $O
same=0; diff=0
run() { # NAME OUTS ARGS...: OUTS is a comma-separated list of output names
  local name=$1 outs=$2; shift 2
  for where in "--backend cpu" "--devices 0,0" "--devices 0,cpu" "--devices gpu0:3,cpu:1"; do
    local tag=$(echo $where | tr -c 'a-z0-9' _)
    local args=(); for o in ${outs//,/ }; do args+=(--output $o=$O/$name.$o.$tag.npy); done
    timeout 60 $P run "$@" $where "${args[@]}" > $O/$name.$tag.txt 2>&1 || { echo "$name $where: failed: $(grep -i error $O/$name.$tag.txt | head -2)"; diff=$((diff+1)); continue; }
    [ "$where" = "--backend cpu" ] && continue
    for o in ${outs//,/ }; do
      if cmp -s $O/$name.$o.__backend_cpu_.npy $O/$name.$o.$tag.npy; then same=$((same+1)); else diff=$((diff+1)); echo "DIFFERENT: $name $o $where"; fi
    done
    grep "^device" $O/$name.$tag.txt | sed "s/^/  $name $where: /" | cut -c1-200
  done
}
run dropout_rows Y examples/dropout_rows.ph --dim M=100000
run dropout_rows_tandem Y examples/dropout_rows_tandem.ph --dim M=100000 --arg key=7
run softmax_dropout Y examples/softmax_dropout.ph --dim M=4096 --dim N=1024
run layernorm_dropout Y examples/layernorm_dropout.ph --dim M=4096 --dim N=1000
run bias_gelu_dropout_tandem Y examples/bias_gelu_dropout_tandem.ph --dim M=50000 --arg key=3
run matmul C examples/matmul.ph --dim M=512 --dim N=256 --dim K=128
run attention_dropout O,L examples/attention_dropout.ph --dim BH=4 --dim S=256 --arg scale=0.125 --arg p=0.1 --arg key=2027
echo "launches: $same outputs identical to the CPU backend, $diff different or failed ($(( $(date +%s) - t0 )) s)"
for t in normal_f32 u32 exp_f64; do
  timeout 60 $P fill $t --key 1 --count 50000001 --backend cpu -o $O/f.$t.cpu 2>/dev/null
  for d in 0,0 0,cpu; do
    timeout 60 $P fill $t --key 1 --count 50000001 --devices $d -o $O/f.$t.$d --verbose 2>$O/f.$t.$d.err
    cmp -s $O/f.$t.cpu $O/f.$t.$d && echo "fill $t --devices $d: identical to the CPU fill" || echo "fill $t --devices $d: DIFFERENT $(tail -2 $O/f.$t.$d.err)"
  done
done
echo "## a split on one GPU against none (dropout_rows, 2^26 elements)"
for d in "--backend gpu" "--devices gpu0" "--devices 0,0"; do
  timeout 60 $P bench examples/dropout_rows.ph --dim M=262144 $d --json --runs 11 2>/dev/null | python3 -c "
import json,sys; j=json.load(sys.stdin); print('$d: median %.4f ms, %.0f GiB/s' % (j['median_ms'], j.get('median_gib_s', 0)))" || echo "$d: failed"
done
echo "took $(( $(date +%s) - t0 )) s"
