#!/usr/bin/env bash
# The bits of the GPU's cooperative reductions (compiler/gpu/src/lower/
# coop_reduce.rs) against Cranelift's (which the tests hold to the
# interpreter's), on a device whose subgroups CI's lavapipe (8 lanes) does
# not have: NVIDIA's 32. Each example and fixture with reductions runs on
# the GPU with subgroup shuffles (the default where every subgroup is one
# width), on the GPU with PHOBOS_SUBGROUPS=off (workgroup memory only), and
# on the CPU, at row lengths that are and are not powers of two, and every
# output must be byte-identical. Prints one line a case and `all equal` or
# the cases that differ (exit 1).
#
#   bench/reduce-bits.sh [PHOBOSC]
#
# PHOBOSC defaults to target/release/phobosc. On the device, set up the
# Vulkan loader first (bench/fused-h200.sh's header says how).

set -u
phobosc=${1:-target/release/phobosc}
cd "$(dirname "$0")/.." || exit 1
out=$(mktemp -d /tmp/phobos-reduce-bits.XXXXXX)
export PHOBOS_CACHE_DIR=off
bad=0

# file kernel dims outputs scalar-args
cases=(
    "examples/softmax_dropout.ph softmax_dropout M=64,N=1000 Y seed=7"
    "examples/softmax_dropout.ph softmax_dropout M=64,N=8192 Y seed=7"
    "examples/softmax_dropout.ph softmax_dropout M=37,N=1 Y seed=7"
    "examples/layernorm_dropout.ph layernorm_dropout M=64,N=1024 Y seed=7"
    "examples/layernorm_dropout.ph layernorm_dropout M=33,N=300 Y seed=7"
    "tests/fixtures/ok/reduce.ph rows M=37 Mx,Mn,S,A,D,I -"
)
for c in "${cases[@]}"; do
    read -r file kernel dims outs scalars <<<"$c"
    dim_args=()
    for d in ${dims//,/ }; do dim_args+=(--dim "$d"); done
    if [ "$scalars" != - ]; then
        for a in ${scalars//,/ }; do dim_args+=(--arg "$a"); done
    fi
    tag=$(basename "$file" .ph)-${dims//[=,]/_}
    for mode in gpu gpu-nosub cpu; do
        backend=${mode%-nosub}
        o_args=()
        for o in ${outs//,/ }; do o_args+=(--output "$o=$out/$tag-$mode-$o.npy"); done
        if [ "$mode" = gpu-nosub ]; then
            PHOBOS_SUBGROUPS=off "$phobosc" run "$file" --kernel "$kernel" "${dim_args[@]}" \
                --backend "$backend" --no-tune "${o_args[@]}" >"$out/$tag-$mode.log" 2>&1
        else
            "$phobosc" run "$file" --kernel "$kernel" "${dim_args[@]}" \
                --backend "$backend" --no-tune "${o_args[@]}" >"$out/$tag-$mode.log" 2>&1
        fi || { echo "$tag $mode: failed"; cat "$out/$tag-$mode.log"; bad=1; }
    done
    grep -h "lowering" "$out/$tag-gpu.log" | head -2
    for o in ${outs//,/ }; do
        for mode in gpu gpu-nosub; do
            if cmp -s "$out/$tag-$mode-$o.npy" "$out/$tag-cpu-$o.npy"; then
                echo "$tag $o: $mode equals cpu"
            else
                echo "$tag $o: $mode DIFFERS from cpu"
                bad=1
            fi
        done
    done
done
if [ $bad -eq 0 ]; then echo "all equal"; else echo "some differ (outputs in $out)"; fi
exit $bad
