#!/bin/bash
# Session 13, first call: issue 29 on the device (bench/attention-h200.sh):
# the bits of f16/bf16 tensors, `dot` and attention with dropout against the
# interpreter's (bench/s13/reference.sh, compared here after the call by
# bench/s13/compare.py), then matmul and attention speed, fast and exact,
# beside torch.matmul and SDPA with dropout.
for f in .gl/*.deb; do dpkg -x $f / >/dev/null; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
echo "# commit ${C:-?}; $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)"
t0=$(date +%s)
bench/attention-h200.sh target/release/phobosc
echo "took $(( $(date +%s) - t0 )) s"
