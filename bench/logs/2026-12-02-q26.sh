#!/bin/bash
# Session 6, second call. Issue 11: exact division's zero-dividend test on the
# f64-checked fast path (7af4a2a, the binary .gl/variant/phobos-bench-table-zero-fast)
# against in its slow path (e30bdd8, HEAD): cold compile three times each, then the
# table's bandwidth rows of both; the driver warm-up at device open (3fcd12c) on and
# off (PHOBOS_WARMUP=off), warm starts. Issue 15: TestU01 BigCrush on `phobosc fill u32
# --key 1`, 15 tests at once, in the background from the bandwidth rows on (GPU rows
# are timed by GPU timestamps).
for f in .gl/*.deb; do dpkg -x $f / >/dev/null; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
echo "# commit ${C:-?}; $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader); $(nproc) cores; gcc: $(command -v gcc || echo none); git: $(git rev-parse --short HEAD 2>&1 | head -1)"
T=target/release/phobos-bench-table; V=.gl/variant/phobos-bench-table-zero-fast; d=$(mktemp -d)
cc() { PHOBOS_CACHE_DIR=$d/$1/p XDG_CACHE_HOME=$d/$1/xdg __GL_SHADER_DISK_CACHE_PATH=$d/$1/nv timeout 30 "${@:2}" | grep COMPILE; }
echo "(COMPILE wall pipeline open parse submitted again lower spirv module driver, ms)"
for i in 1 2 3; do for k in dropout_rows tandem_dropout; do
  echo "$k cold head(e30bdd8) #$i $(cc h-$k-$i $T --compile-child $k 16 28)"
  echo "$k cold zero-fast(7af4a2a) #$i $(cc v-$k-$i $V --compile-child $k 16 28)"
done; done
for k in copy dropout_rows tandem_dropout tandem_noise; do
  echo "$k cold (fills the caches) $(cc w-$k $T --compile-child $k 16 28)"
  for i in 1 2 3; do for w in on off; do
    echo "$k warm warm-up=$w #$i $(PHOBOS_WARMUP=$w cc w-$k $T --compile-child $k 16 28)"
  done; done
done
E=stdlib/tandem/evidence
(EVIDENCE_COMMIT=${C:-?} EVIDENCE_BUILD=$PWD/.gl/evb JOBS=15 DEADLINE_S=${BIG_S:-430} nice -n 10 \
  $E/run-testu01.sh $PWD/.gl/TestU01-2009 testu01-bigcrush-u32-key1 u32:1 big > $OUT/bigcrush-run.txt 2>&1; \
  cp $E/testu01-bigcrush-u32-key1.txt $OUT/ 2>/dev/null) &
echo "== table rows, head (e30bdd8)"
timeout 150 $T 28 --no-ablations --no-compile 2>&1 | grep -E "dropout|copy|ceiling" | head -12
echo "== table rows, zero-fast (7af4a2a)"
timeout 150 $V 28 --no-ablations --no-compile 2>&1 | grep -E "dropout|copy|ceiling" | head -12
wait
cat $OUT/bigcrush-run.txt; tail -5 $OUT/testu01-bigcrush-u32-key1.txt
