#!/bin/bash
# Session 24, fourth call: why values kept across loops (phobosc-c,
# plan/chunks.rs, uncommitted on 88d295a) ran slower in the second call.
# Variants on bench/s17 c1, tuned (and c-opaque on bench/s18 c2, whose p
# the second call measured): p (88d295a),
# c-nocache (specialised, nothing kept: PHOBOS_CHUNK_CACHE=0), c-opaque
# (the cache, each loop's end hidden from the driver so that it cannot
# unroll: PHOBOS_OPAQUE_LOOPS=1), c-opaque-nocache (both); then c-opaque's
# bits. (The second call measured c itself.)
for f in .gl/*.deb; do dpkg -x $f / >/dev/null; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
mkdir -p target/dev && for f in target/devz/*.gz; do gzip -dc $f > target/dev/$(basename $f .gz); chmod +x target/dev/$(basename $f .gz); done
B=$PWD/target/dev
printf '#!/bin/sh\nPHOBOS_CHUNK_CACHE=0 exec %s/phobosc-c "$@"\n' $B > $B/c-nocache
printf '#!/bin/sh\nPHOBOS_OPAQUE_LOOPS=1 exec %s/phobosc-c "$@"\n' $B > $B/c-opaque
printf '#!/bin/sh\nPHOBOS_OPAQUE_LOOPS=1 PHOBOS_CHUNK_CACHE=0 exec %s/phobosc-c "$@"\n' $B > $B/c-opaque-nocache
chmod +x $B/c-*
echo "# commit ${C:-?}; $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)"
t0=$(date +%s)
el() { echo $(( $(date +%s) - t0 )); }
q() { grep -v "^#\|^driver\|^binary"; }
echo "## s17 c1 ($(el) s)"
KERNELS="c1" FILES="bench/s17/unseen.ph" BITS=0 timeout 130 bench/spellings-h200.sh p=$B/phobosc-p c-nocache=$B/c-nocache c-opaque=$B/c-opaque c-opaque-nocache=$B/c-opaque-nocache 2>&1 | q
echo "## s18 c2 ($(el) s)"
KERNELS="c2" FILES="bench/s18/chunked.ph" BITS=0 timeout 70 bench/spellings-h200.sh c-opaque=$B/c-opaque 2>&1 | q
echo "## bits of c-opaque ($(el) s)"
d=$(mktemp -d); n=0; bad=0
for fk in bench/s17/unseen.ph:c1 bench/s18/chunked.ph:c2 bench/s18/chunked.ph:c3; do f=${fk%%:*}; k=${fk#*:}
  for mn in "M=64 N=1024" "M=17 N=4096"; do set -- $mn; for r in 1; do
    a=(--kernel $k --config R=$r --dim $1 --dim $2 --arg seed=7 --no-tune)
    timeout 20 $B/c-opaque run $f "${a[@]}" --backend gpu --output Y=$d/g.npy >/dev/null 2>$d/e || { echo "$fk $mn R=$r gpu failed: $(tail -1 $d/e)"; bad=1; continue; }
    timeout 20 $B/phobosc-c run $f "${a[@]}" --backend cpu --output Y=$d/c.npy >/dev/null 2>&1
    n=$((n+1)); cmp -s $d/g.npy $d/c.npy || { echo "$fk $mn R=$r DIFFERENT"; bad=1; }
  done; done; done
echo "bits: $n compared, $([ $bad = 0 ] && echo all identical || echo DIFFERENCES)"
echo "took $(el) s"
