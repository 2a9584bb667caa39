#!/bin/bash
# TestU01 batteries on a Tandem stream, one process per test (SPEC.md section 11.4).
#
#   stdlib/tandem/evidence/run-testu01.sh TESTU01_CHECKOUT NAME STREAM small|crush|big [TESTS]
#
# TESTU01_CHECKOUT  a checkout of TestU01 1.2.3 (github umontreal-simul/TestU01-2009),
#                   copied and built here under a temporary directory, never
#                   copied into this repository
# NAME              the log is written to stdlib/tandem/evidence/NAME.txt
# STREAM            u32:KEY, u32:KEY:K, interleave8:KEY, f32words:KEY, f32packed:KEY or
#                   hash32:SEED (common.sh, stream)
# small|crush|big   SmallCrush (10 tests), Crush (96) or BigCrush (106)
# TESTS             which of the battery's tests to run, e.g. 1-10,12 (default:
#                   all). Each test runs as its own process through
#                   bbattery_Repeat*, on the stream regenerated from element 0
#                   (the words a test reads are those it would read first in a
#                   fresh run of the battery, not those after the earlier tests)
#
# Environment: JOBS (tests run at once, default 1), TIMEOUT_S (seconds per test;
# a test cut short is "incomplete"), DEADLINE_S (seconds for the whole run: then
# the tests still running are stopped and, with those not started, reported as
# incomplete; the log keeps the tests that finished), PHOBOSC, EVIDENCE_BUILD
# (keep the build).
# Prints one verdict line (verdict.py) and appends it to the log. Exit status:
# 0 pass, 1 FAIL, 3 incomplete, 2 the run could not start.
set -uo pipefail
. "$(dirname "$0")/common.sh"

if [ "${1-}" = --worker ]; then
  # one test, called through xargs below; everything else comes in the environment
  i=$2
  log=$work/test-$i.txt
  t0=$(date +%s)
  if [ "$timeout_s" -gt 0 ]; then
    (stream "$stream_spec") | timeout "$timeout_s" "$build/testu01-stdin" "$gen_name" "$battery" "$i" >"$log" 2>&1
  else
    (stream "$stream_spec") | "$build/testu01-stdin" "$gen_name" "$battery" "$i" >"$log" 2>&1
  fi
  status=${PIPESTATUS[1]}
  {
    echo "## test $i: $(($(date +%s) - t0)) s wall"
    if [ "$timeout_s" -gt 0 ] && [ "$status" -eq 124 ]; then
      echo "## exit: $status (timeout)"
    else
      echo "## exit: $status"
    fi
  } >>"$log"
  exit 0
fi

[ $# -ge 4 ] && [ $# -le 5 ] || die "usage: $0 TESTU01_CHECKOUT NAME STREAM small|crush|big [TESTS]"
checkout=$1 name=$2 stream_spec=$3 battery=$4 tests_arg=${5:-all}
[ -d "$checkout" ] || die "no such directory: $checkout"
[ -f "$checkout/configure" ] && [ -f "$checkout/testu01/bbattery.c" ] && [ -f "$checkout/testu01/unif01.tex" ] ||
  die "$checkout is not a TestU01 checkout (no configure, testu01/bbattery.c, testu01/unif01.tex)"
[[ "$name" =~ ^[A-Za-z0-9._-]+$ ]] || die "NAME may hold only letters, digits, '.', '_' and '-'"
check_stream_spec "$stream_spec"
case "$battery" in small) ntests=10 ;; crush) ntests=96 ;; big) ntests=106 ;; *) die "the battery must be small, crush or big, not '$battery'" ;; esac
jobs=${JOBS:-1} timeout_s=${TIMEOUT_S:-0} deadline_s=${DEADLINE_S:-0}
[[ "$jobs" =~ ^[1-9][0-9]*$ ]] || die "JOBS must be a positive number"
[[ "$timeout_s" =~ ^[0-9]+$ ]] || die "TIMEOUT_S must be a number of seconds"
[[ "$deadline_s" =~ ^[0-9]+$ ]] || die "DEADLINE_S must be a number of seconds"
tests=()
if [ "$tests_arg" = all ]; then
  tests=($(seq 1 "$ntests"))
else
  IFS=, read -ra parts <<<"$tests_arg"
  for p in "${parts[@]}"; do
    if [[ "$p" =~ ^([0-9]+)-([0-9]+)$ ]]; then
      tests+=($(seq "${BASH_REMATCH[1]}" "${BASH_REMATCH[2]}"))
    elif [[ "$p" =~ ^[0-9]+$ ]]; then
      tests+=("$p")
    else
      die "TESTS must look like 1-10,12, not '$tests_arg'"
    fi
  done
  for t in "${tests[@]}"; do
    [ "$t" -ge 1 ] && [ "$t" -le "$ntests" ] || die "test $t is not in 1..$ntests"
  done
fi
[ ${#tests[@]} -gt 0 ] || die "no tests selected"
check_phobosc

make_work_dir
build_streams
if [ ! -x "$build/testu01-stdin" ]; then
  if [ ! -f "$build/testu01/lib/libtestu01.a" ]; then
    echo "building TestU01 from $checkout in $build (a few minutes) ..." >&2
    rm -rf "$build/testu01-src"
    # TestU01's makefiles run ${top_srcdir}/tcode, so it builds only in its own tree: build a copy
    cp -r "$checkout" "$build/testu01-src" && rm -rf "$build/testu01-src/.git" || die "cannot copy $checkout"
    (
      cd "$build/testu01-src" &&
        ./configure --prefix="$build/testu01" --disable-shared &&
        make -j"$(nproc)" &&
        make install
    ) >"$build/testu01.log" 2>&1 || die "TestU01 does not build from $checkout (log: $build/testu01.log): $(grep -m5 -i 'error' "$build/testu01.log" || tail -5 "$build/testu01.log")"
  fi
  gcc -O2 -std=c99 -Wall -I"$build/testu01/include" -o "$build/testu01-stdin" "$evidence_dir/testu01-stdin.c" \
    -L"$build/testu01/lib" -ltestu01 -lprobdist -lmylib -lm >"$build/driver.log" 2>&1 ||
    die "testu01-stdin.c does not build against $build/testu01: $(tail -5 "$build/driver.log")"
fi

gen_name=$name
out=$evidence_dir/$name.txt
{
  log_header "testu01-stdin $gen_name $battery TEST (bbattery_Repeat* with rep[TEST] = 1), one process per test, $jobs at once${TIMEOUT_S:+, timeout $timeout_s s per test}${DEADLINE_S:+, deadline $deadline_s s for the run}"
  echo "## TestU01: $checkout, commit $(checkout_commit "$checkout")"
  echo "## reproduce: JOBS=$jobs${TIMEOUT_S:+ TIMEOUT_S=$timeout_s}${DEADLINE_S:+ DEADLINE_S=$deadline_s} stdlib/tandem/evidence/run-testu01.sh TESTU01_CHECKOUT $name $stream_spec $battery $tests_arg"
  echo "## tests: ${tests[*]}"
} >"$out"
t0=$(date +%s)
export phobosc build work stream_spec battery gen_name timeout_s
if [ "$deadline_s" -gt 0 ]; then
  # timeout signals its whole process group: xargs, the workers and their streams
  printf '%s\n' "${tests[@]}" | timeout "$deadline_s" xargs -P "$jobs" -I{} "$0" --worker {}
  [ $? -eq 124 ] && deadline_hit=1
else
  printf '%s\n' "${tests[@]}" | xargs -P "$jobs" -I{} "$0" --worker {}
fi
for t in "${tests[@]}"; do
  echo
  echo "### test $t"
  cat "$work/test-$t.txt" 2>/dev/null || echo "## (no output: the test did not run)"
done >>"$out"
{
  echo
  echo "## finished: $(date -u +%Y-%m-%dT%H:%M:%SZ), $(($(date +%s) - t0)) s wall for ${#tests[@]} test(s)"
  [ -n "${deadline_hit-}" ] && echo "## deadline of $deadline_s s reached: the tests then running were stopped, later ones never started"
} >>"$out"
verdict=$(python3 "$evidence_dir/verdict.py" testu01 "$out") || die "verdict.py failed on $out"
echo "## verdict: $verdict" >>"$out"
echo "$name: $verdict"
case "$verdict" in pass*) exit 0 ;; FAIL*) exit 1 ;; *) exit 3 ;; esac
