#!/bin/bash
# Session 12, fourth call: issue 30's exp_f64 on the H200 beside cuRAND and
# PyTorch (bench/tandem-table.sh), before (f69eca2) and after c9c9af9, in
# one call; f64 and normal_f64 rows for reference.
echo "# commit ${C:-?}; $(date -u +%FT%TZ)"
for b in target/exp/before target/release/phobos-bench-tandem-gpu; do
  echo "## $b"; timeout 200 bench/tandem-table.sh $b 28 exp_f64 f64 normal_f64 2>&1 | grep "^|\|ceiling\|driver\|device" | head -30
done
