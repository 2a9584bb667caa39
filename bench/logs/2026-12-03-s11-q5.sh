#!/bin/bash
# Session 11, fifth call: the CUDA copy ceiling of this session's device (the
# earlier calls' percentages used the tenth session's 3872 GiB/s), with
# bench/fused-h200.sh's peers and the hash twins at rows of 1024 and 8192.
for f in .gl/*.deb; do dpkg -x $f / >/dev/null; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
echo "# commit ${C:-?}; $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)"
PHOBOS_COMMIT=${C:-?} timeout 170 bench/fused-h200.sh target/release/phobosc --no-compile --no-cpu --rows 1024,8192 > $OUT/fused.txt 2>&1
grep -i "ceiling\|copy" $OUT/fused.txt | head -5; sed -n '/^| op/,/^Targets/p' $OUT/fused.txt
