#!/bin/bash
# Session 16, sixth call (issue 32 on one GPU): what the split costs when
# each device's kernel is timed alone (phobosc bench --devices reports
# `kernels`, the slowest device's median, beside the whole split launch's
# wall clock), against one device, dropout_rows over 2^26 and 2^28 f32.
for f in .gl/*.deb; do dpkg -x $f / >/dev/null; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
echo "# commit ${C:-?}; $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)"
P=target/dev/phobosc
for m in 262144 1048576; do
  for d in "--backend gpu" "--devices gpu0" "--devices 0,0" "--devices gpu0:3,cpu:1"; do
    timeout 60 $P bench examples/dropout_rows.ph --dim M=$m $d --json --runs 11 2>/dev/null | python3 -c "
import json,sys; j=json.load(sys.stdin); k=j.get('kernels')
print('M=$m $d: launch %.3f ms' % j['median_ms'] + ('' if not k else '; kernels alone %.3f ms (%.0f GiB/s): %s' % (k['median_ms'], k['median_gib_s'], ', '.join('%s %s %.3f ms' % (x['device'], x['blocks'], x['median_ms']) for x in k['devices']))))" || echo "M=$m $d: failed"
  done
done
for d in "--backend gpu" "--devices 0,0"; do
  /usr/bin/time -f "%e s wall" timeout 60 $P fill normal_f32 --key 1 --count 268435456 $d -o /tmp/n.bin --verbose 2>&1 | tail -4
done
