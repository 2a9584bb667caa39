# Shared by run-practrand.sh and run-testu01.sh (SPEC.md section 11.4).
# Sourced, not run. Every failure here says what went wrong and exits 2, so a
# run that could not start never leaves a log that looks like a result.

die() {
  echo "$(basename "$0"): $*" >&2
  exit 2
}

evidence_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo_root=$(cd "$evidence_dir/../../.." && pwd)
phobosc=${PHOBOSC:-$repo_root/target/release/phobosc}
# Threads of a `u32` stream's fill (the words are the same at any count; a
# battery faster than one thread's fill needs more).
fill_threads=${FILL_THREADS:-1}
[[ "$fill_threads" =~ ^[1-9][0-9]*$ ]] || die "FILL_THREADS must be a positive number"

check_phobosc() {
  [ -x "$phobosc" ] || die "no phobosc at $phobosc: run 'cargo build --release -p phobosc' or set PHOBOSC"
  local words
  words=$("$phobosc" fill u32 --key 42 --count 2 | od -An -tx4 | tr -s ' ')
  # SPEC.md section 10: u32[0..8] of Key::from_seed(42), K = 32
  [ "$words" = " 7ece108d 874adb91" ] || die "$phobosc fill u32 --key 42 gives '$words', not section 10's 7ece108d 874adb91"
}

# A temporary directory for the build and the FIFOs, removed on exit.
# EVIDENCE_BUILD=DIR keeps the build in DIR instead, for reuse across runs.
make_work_dir() {
  work=$(mktemp -d "${TMPDIR:-/tmp}/tandem-evidence.XXXXXX") || die "cannot make a temporary directory"
  trap 'rm -rf "$work"' EXIT
  build=${EVIDENCE_BUILD:-$work/build}
  mkdir -p "$build" || die "cannot make $build"
}

# Builds the stream helper into $build/streams and checks it.
# A machine without gcc reuses the helper of a kept build (EVIDENCE_BUILD),
# if its self-test passes. The new binary is moved into place, so a run
# sharing the kept build and executing the old one is not disturbed ("Text
# file busy").
build_streams() {
  if command -v gcc >/dev/null || [ ! -x "$build/streams" ]; then
    gcc -O2 -std=c99 -Wall -o "$build/streams.$$" "$evidence_dir/streams.c" >"$build/streams.$$.log" 2>&1 ||
      die "streams.c does not build: $(grep -m5 -i 'error' "$build/streams.$$.log" || tail -5 "$build/streams.$$.log")"
    mv -f "$build/streams.$$" "$build/streams" && rm -f "$build/streams.$$.log"
  fi
  "$build/streams" selftest || die "the stream helper's self-test failed"
}

# The commit of a checkout, or "unknown (not a git checkout)".
# A copy without its history (carried to another machine) may name its
# commit in a file `.commit`; a directory inside another repository's work
# tree is not taken for that repository's checkout.
checkout_commit() {
  local top
  top=$(git -C "$1" rev-parse --show-toplevel 2>/dev/null)
  if [ -n "$top" ] && [ "$(cd "$top" && pwd -P)" = "$(cd "$1" && pwd -P)" ]; then
    git -C "$1" rev-parse HEAD
  elif [ -f "$1/.commit" ]; then
    echo "$(head -c 40 "$1/.commit") (a copy; its .commit)"
  else
    echo "unknown (not a git checkout)"
  fi
}

# stream SPEC: writes the stream's 32-bit words to stdout until the reader
# closes the pipe. Each call regenerates the stream from element 0.
#   u32:KEY        phobosc fill u32 --key KEY
#   u32:KEY:K      the same with --k K
#   interleave8:KEY  keys KEY .. KEY+7 (fill u32 each), one word of each in turn
#   f32words:KEY   phobosc fill f32 --key KEY, each element as u * 2^32 (its
#                  24 random bits shifted up: the low 8 bits of every word
#                  are zero, so tests that read them fail by construction)
#   f32packed:KEY  the same 24 bits of each element packed, 4 elements to 3
#                  words, most significant bit first
#   hash32:SEED    the seed's hash32(c ^ hash32(SEED)), c = 0, 1, ...
stream() {
  local spec=$1 kind key k
  IFS=: read -r kind key k <<<"$spec"
  case "$kind" in
    u32)
      if [ -n "$k" ]; then
        exec "$phobosc" fill u32 --key "$key" --k "$k" --threads "$fill_threads"
      else
        exec "$phobosc" fill u32 --key "$key" --threads "$fill_threads"
      fi
      ;;
    f32words | f32packed)
      "$phobosc" fill f32 --key "$key" --threads 1 | "$build/streams" "$kind"
      ;;
    interleave8)
      local d i fifos=()
      d=$(mktemp -d "$work/fifo.XXXXXX")
      for i in 0 1 2 3 4 5 6 7; do
        mkfifo "$d/$i"
        "$phobosc" fill u32 --key $((key + i)) --threads 1 >"$d/$i" &
        fifos+=("$d/$i")
      done
      "$build/streams" interleave "${fifos[@]}"
      ;;
    hash32)
      exec "$build/streams" hash32 "$key"
      ;;
    *) die "unknown stream '$spec' (u32:KEY, u32:KEY:K, interleave8:KEY, f32words:KEY, f32packed:KEY, hash32:SEED)" ;;
  esac
}

# The shell command a stream spec stands for, for the logs.
stream_command() {
  local kind key k
  IFS=: read -r kind key k <<<"$1"
  case "$kind" in
    u32) echo "phobosc fill u32 --key $key${k:+ --k $k} --threads $fill_threads" ;;
    f32words | f32packed) echo "phobosc fill f32 --key $key --threads 1 | streams $kind" ;;
    interleave8) echo "streams interleave <(phobosc fill u32 --key $key) .. <(phobosc fill u32 --key $((key + 7))) (FIFOs, --threads 1 each)" ;;
    hash32) echo "streams hash32 $key" ;;
    *) die "unknown stream '$1' (u32:KEY, u32:KEY:K, interleave8:KEY, f32words:KEY, f32packed:KEY, hash32:SEED)" ;;
  esac
}

check_stream_spec() {
  local kind key k
  IFS=: read -r kind key k <<<"$1"
  stream_command "$1" >/dev/null
  [[ "$key" =~ ^(0x[0-9a-fA-F]+|[0-9]+)$ ]] || die "stream '$1': the key must be a number"
  if [ -n "$k" ]; then
    [ "$kind" = u32 ] || die "stream '$1': only u32 takes a K"
    [[ "$k" =~ ^[0-9]+$ ]] || die "stream '$1': K must be a number"
  fi
}

# The repository's commit, and whether the generator's sources differ from
# it. Where there is no git history (a copy of the tree on another machine),
# EVIDENCE_COMMIT names the commit the copy was made from.
phobos_commit() {
  if [ -n "${EVIDENCE_COMMIT:-}" ]; then
    echo "$EVIDENCE_COMMIT (EVIDENCE_COMMIT: a copy of the tree at that commit)"
  elif git -C "$repo_root" rev-parse --short HEAD 2>/dev/null; then
    git -C "$repo_root" diff --quiet HEAD -- stdlib/tandem/src compiler/cli/src 2>/dev/null ||
      echo ' (with local changes to stdlib/tandem/src or compiler/cli/src)'
  else
    echo "unknown (no git history here; set EVIDENCE_COMMIT)"
  fi | tr -d '\n'
}

log_header() {
  # $1: the battery's command line
  echo "## battery: $1"
  echo "## stream: $stream_spec = $(stream_command "$stream_spec")"
  echo "## phobos: commit $(phobos_commit), $("$phobosc" --version 2>/dev/null), binary $phobosc sha256 $(sha256sum "$phobosc" | cut -c1-16)"
  echo "## machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'), load $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "## started: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
}
