#!/bin/sh
# Runs the prebuilt front_end fuzz target (fuzz/carry/front_end and
# fuzz/carry/corpus.tar.gz, made by fuzz/device-pack.sh) on a machine with
# cores to spare and no Rust toolchain, and prints the inputs it executed.
#
#   fuzz/device-run.sh [-j WORKERS] [-t SECONDS] [-n RUNS] [-m fork|jobs]
#
# -j: parallel workers (default: the number of cores); -t: wall-clock limit
# of the fuzzing (default 540 s); -n: stop after about this many inputs in
# all (default: no limit but -t); -m: libFuzzer's fork mode (default: one
# supervisor runs short jobs on WORKERS processes, keeps going after a
# crash, timeout or out-of-memory, and merges new inputs into one corpus)
# or its -jobs/-workers mode (each worker one long process, which stops at
# its first finding; -n is then split evenly between them).
#
# Writes to $OUT (default ./fuzz-out): the logs, crash, timeout and
# out-of-memory inputs (artifacts/), the corpus the run grew
# (corpus.tar.gz), and summary.txt. Exit status 0 when it ran, whether or not
# it found anything; read summary.txt for findings.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
workers=$(nproc)
seconds=540
runs=
mode=fork
while getopts j:t:n:m: opt; do
    case $opt in
    j) workers=$OPTARG ;;
    t) seconds=$OPTARG ;;
    n) runs=$OPTARG ;;
    m) mode=$OPTARG ;;
    *) echo "usage: $0 [-j WORKERS] [-t SECONDS] [-n RUNS] [-m fork|jobs]" >&2; exit 2 ;;
    esac
done
out=${OUT:-$PWD/fuzz-out}
bin=$here/carry/front_end
tarball=$here/carry/corpus.tar.gz
for f in "$bin" "$tarball"; do
    [ -f "$f" ] || { echo "$f is missing: run fuzz/device-pack.sh where Rust is" >&2; exit 2; }
done
if ! "$bin" -help=1 > /dev/null 2>&1; then
    # No C++ runtime here, or an older one: the one packed with the binary.
    export LD_LIBRARY_PATH="$here/carry/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    "$bin" -help=1 > /dev/null || { echo "$bin does not start here" >&2; exit 2; }
fi
mkdir -p "$out/artifacts"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
tar -C "$work" -xzf "$tarball"
seeds=$(ls "$work/corpus" | wc -l)

# -timeout is wall-clock time per input: 10 s, since a loaded machine makes
# shorter limits report inputs that take milliseconds alone.
common="-rss_limit_mb=2048 -timeout=10 -max_total_time=$seconds -print_final_stats=1 -artifact_prefix=$out/artifacts/"
start=$(date +%s)
cd "$work"
case $mode in
fork)
    # shellcheck disable=SC2086
    "$bin" -fork="$workers" -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1 \
        ${runs:+-runs=$runs} $common corpus > "$out/fuzz.log" 2>&1 || true
    # The supervisor's lines read `#EXECUTED: cov: ... crash: C ...`.
    total=$(grep -E '^#[0-9]+:' "$out/fuzz.log" | tail -1 | sed -E 's/^#([0-9]+):.*/\1/')
    ;;
jobs)
    per=${runs:+$((runs / workers))}
    # shellcheck disable=SC2086
    "$bin" -jobs="$workers" -workers="$workers" ${per:+-runs=$per} $common corpus \
        > "$out/fuzz.log" 2>&1 || true
    cp fuzz-*.log "$out/" 2>/dev/null || true
    total=$(cat fuzz-*.log | sed -nE 's/^stat::number_of_executed_units: *([0-9]+)/\1/p' |
        awk '{ s += $1 } END { print s + 0 }')
    ;;
*)
    echo "unknown mode $mode (fork or jobs)" >&2
    exit 2
    ;;
esac
elapsed=$(($(date +%s) - start))
tar -czf "$out/corpus.tar.gz" corpus
findings=$(ls "$out/artifacts" | wc -l)
{
    echo "mode:      $mode, $workers workers, limit ${seconds} s${runs:+, $runs runs}"
    echo "binary:    $(sha256sum "$bin" | cut -c1-16) $(stat -c %s "$bin") bytes"
    echo "corpus:    $seeds inputs in, $(ls corpus | wc -l) out"
    echo "elapsed:   $elapsed s"
    echo "executed:  ${total:-0} inputs"
    echo "exec/s:    $(( ${total:-0} / (elapsed > 0 ? elapsed : 1) ))"
    echo "findings:  $findings file(s) in artifacts/"
    ls "$out/artifacts"
} | tee "$out/summary.txt"
