#!/bin/bash
# PractRand's RNG_test stdin32 on a Tandem stream (SPEC.md section 11.4).
#
#   stdlib/tandem/evidence/run-practrand.sh PRACTRAND_CHECKOUT NAME STREAM TLMAX [TIMEOUT_S]
#
# PRACTRAND_CHECKOUT  a checkout of PractRand 0.94 (github MartyMacGyver/PractRand),
#                     built here under a temporary directory, never copied into
#                     this repository
# NAME                the log is written to stdlib/tandem/evidence/NAME.txt
# STREAM              u32:KEY, u32:KEY:K, interleave8:KEY, f32words:KEY, f32packed:KEY or
#                     hash32:SEED (common.sh, stream)
# TLMAX               a power of two with KB, MB, GB or TB (binary units, as
#                     PractRand reads them): RNG_test's -tlmax
# TIMEOUT_S           stop the battery after this many seconds (the verdict is
#                     then "incomplete")
#
# Environment: PHOBOSC (default target/release/phobosc), PRACTRAND_ARGS (more
# RNG_test options, e.g. -multithreaded), EVIDENCE_BUILD (keep the build there).
# Prints one verdict line (verdict.py) and appends it to the log. Exit status:
# 0 pass, 1 FAIL, 3 incomplete, 2 the run could not start.
set -uo pipefail
. "$(dirname "$0")/common.sh"

[ $# -ge 4 ] && [ $# -le 5 ] || die "usage: $0 PRACTRAND_CHECKOUT NAME STREAM TLMAX [TIMEOUT_S]"
checkout=$1 name=$2 stream_spec=$3 tlmax=$4 timeout_s=${5:-0}
[ -d "$checkout" ] || die "no such directory: $checkout"
[ -f "$checkout/tools/RNG_test.cpp" ] && [ -d "$checkout/src/RNGs" ] && [ -f "$checkout/include/PractRand.h" ] ||
  die "$checkout is not a PractRand checkout (no tools/RNG_test.cpp, src/RNGs, include/PractRand.h)"
[[ "$name" =~ ^[A-Za-z0-9._-]+$ ]] || die "NAME may hold only letters, digits, '.', '_' and '-'"
check_stream_spec "$stream_spec"
[[ "$timeout_s" =~ ^[0-9]+$ ]] || die "TIMEOUT_S must be a number of seconds"
[[ "$tlmax" =~ ^([0-9]+)(KB|MB|GB|TB)$ ]] || die "TLMAX must look like 4GB (KB, MB, GB or TB)"
n=${BASH_REMATCH[1]}
case ${BASH_REMATCH[2]} in KB) shift_=10 ;; MB) shift_=20 ;; GB) shift_=30 ;; TB) shift_=40 ;; esac
[ "$n" -gt 0 ] && [ $((n & (n - 1))) -eq 0 ] || die "TLMAX must be a power of two (PractRand reports only those)"
target=$((n << shift_))
check_phobosc

make_work_dir
build_streams
if [ ! -x "$build/RNG_test" ]; then
  echo "building PractRand from $checkout in $build ..." >&2
  mkdir -p "$build/practrand"
  (
    cd "$build/practrand" &&
      g++ -c "$checkout"/src/*.cpp "$checkout"/src/RNGs/*.cpp "$checkout"/src/RNGs/other/*.cpp \
        -O3 -I"$checkout/include" -pthread -std=gnu++11 &&
      ar rcs libPractRand.a ./*.o &&
      g++ -o "$build/RNG_test" "$checkout/tools/RNG_test.cpp" libPractRand.a -O3 -I"$checkout/include" -pthread -std=gnu++11
  ) >"$build/practrand.log" 2>&1 || die "PractRand does not build from $checkout (log: $build/practrand.log): $(grep -m5 -i 'error' "$build/practrand.log" || tail -5 "$build/practrand.log")"
fi

args=(stdin32 -tlmin 1MB -tlmax "$tlmax" ${PRACTRAND_ARGS:-})
out=$evidence_dir/$name.txt
{
  log_header "RNG_test ${args[*]}${5:+ (timeout ${timeout_s} s)}"
  echo "## PractRand: $checkout, commit $(checkout_commit "$checkout")"
  echo "## reproduce: stdlib/tandem/evidence/run-practrand.sh PRACTRAND_CHECKOUT $name $stream_spec $tlmax${5:+ $timeout_s}"
  echo
} >"$out"
t0=$(date +%s)
if [ "$timeout_s" -gt 0 ]; then
  (stream "$stream_spec") | timeout "$timeout_s" "$build/RNG_test" "${args[@]}" >>"$out" 2>&1
else
  (stream "$stream_spec") | "$build/RNG_test" "${args[@]}" >>"$out" 2>&1
fi
status=${PIPESTATUS[1]}
{
  echo
  echo "## finished: $(date -u +%Y-%m-%dT%H:%M:%SZ), $(($(date +%s) - t0)) s wall"
  if [ "$timeout_s" -gt 0 ] && [ "$status" -eq 124 ]; then
    echo "## exit: $status (timeout)"
  else
    echo "## exit: $status"
  fi
} >>"$out"
verdict=$(python3 "$evidence_dir/verdict.py" practrand "$out" "$target") || die "verdict.py failed on $out"
echo "## verdict: $verdict" >>"$out"
echo "$name: $verdict"
case "$verdict" in pass*) exit 0 ;; FAIL*) exit 1 ;; *) exit 3 ;; esac
