#!/bin/bash
# Session 16, fifth call: q4's attention rows again with the configuration
# fixed (BM=16 BN=32). q4 let each run choose BN (the CPU backend's tuner
# and the GPU's may pick differently), and BN changes the online softmax's
# rounding, so its outputs differed for that reason or for a real one.
for f in .gl/*.deb; do dpkg -x $f / >/dev/null; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
echo "# commit ${C:-?}; $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)"
P=target/dev/phobosc; O=/tmp/s; mkdir -p $O
A="examples/attention_dropout.ph --dim BH=4 --dim S=256 --arg scale=0.125 --arg p=0.1 --arg key=2027 --config BM=16 --config BN=32"
for where in "--backend cpu" "--backend gpu" "--devices 0,0" "--devices 0,cpu" "--devices gpu0:3,cpu:1"; do
  tag=$(echo $where | tr -c 'a-z0-9' _)
  timeout 60 $P run $A $where --output O=$O/O.$tag.npy --output L=$O/L.$tag.npy > $O/$tag.txt 2>&1 || echo "$where failed: $(grep -i error $O/$tag.txt | head -2)"
  for o in O L; do cmp -s $O/$o.__backend_cpu_.npy $O/$o.$tag.npy && echo "$o $where: identical to the CPU backend" || echo "$o $where: DIFFERENT"; done
done
grep -h "config\|^device" $O/*.txt | sort | uniq -c | head
