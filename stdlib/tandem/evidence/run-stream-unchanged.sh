#!/bin/bash
# Is `phobosc fill u32` the same stream today as at an older commit? Compares
# the first BYTES bytes of each key (SPEC.md section 11.4: the PractRand logs
# made at an older commit hold for today's stream only if it is). "Today" is
# NEW_COMMIT (default HEAD, read once at the start).
#
#   stdlib/tandem/evidence/run-stream-unchanged.sh OLD_COMMIT NAME [BYTES]
#
# OLD_COMMIT  the older commit, in this repository's history
# NAME        the log is written to stdlib/tandem/evidence/NAME.txt
# BYTES       bytes of each key (default 1073741824, 1 GiB; a multiple of 4)
#
# For each key (KEYS, default "1 2"), the same bytes from up to five makers:
#   phobosc (NEW)         $PHOBOSC fill u32 --key KEY --count BYTES/4 --threads 1:
#                         a release build of NEW_COMMIT, made by the caller
#                         (set EVIDENCE_COMMIT if it is not this work tree's)
#   phobosc (OLD)         $PHOBOSC_OLD, the same command: a release build of
#                         OLD_COMMIT, made by the caller (compared only if set)
#   crate bulk (NEW)      crate-u32.rs over stdlib/tandem of NEW_COMMIT: Bulk, as
#                         the CLI's CPU fill calls it
#   crate bulk (OLD)      the same over stdlib/tandem of OLD_COMMIT
#   crate reference (OLD) Tandem::fill_u32 of OLD_COMMIT, element by element
# Both crates come from `git archive`, so the work tree does not enter them.
# Each stream is compared with the first (cmp) and its sha256 printed.
#
# Environment: PHOBOSC (default target/release/phobosc), PHOBOSC_OLD,
# NEW_COMMIT, KEYS, EVIDENCE_COMMIT (common.sh), EVIDENCE_BUILD (keep the
# builds there). The crate builds and the makers run under `nice -n 19`.
# Exit status: 0 all the same, 1 a difference, 2 the run could not start.
set -uo pipefail
. "$(dirname "$0")/common.sh"

[ $# -ge 2 ] && [ $# -le 3 ] || die "usage: $0 OLD_COMMIT NAME [BYTES]"
old=$1 name=$2 bytes=${3:-1073741824}
keys=${KEYS:-1 2}
[[ "$name" =~ ^[A-Za-z0-9._-]+$ ]] || die "NAME may hold only letters, digits, '.', '_' and '-'"
[[ "$bytes" =~ ^[1-9][0-9]*$ ]] && [ $((bytes % 4)) -eq 0 ] || die "BYTES must be a positive multiple of 4"
[[ "$keys" =~ ^[0-9]+( [0-9]+)*$ ]] || die "KEYS must be decimal keys separated by spaces"
old_full=$(git -C "$repo_root" rev-parse --verify --quiet "$old^{commit}") || die "$old is not a commit of $repo_root"
new=${NEW_COMMIT:-HEAD}
new_full=$(git -C "$repo_root" rev-parse --verify --quiet "$new^{commit}") || die "NEW_COMMIT $new is not a commit of $repo_root"
old_short=$(git -C "$repo_root" rev-parse --short=7 "$old_full")
new_short=$(git -C "$repo_root" rev-parse --short=7 "$new_full")
command -v cargo >/dev/null || die "no cargo"
check_phobosc
if [ -n "${PHOBOSC_OLD:-}" ]; then
  [ -x "$PHOBOSC_OLD" ] || die "PHOBOSC_OLD=$PHOBOSC_OLD is not an executable"
fi

make_work_dir
# Both trees, without touching this repository's work tree or worktrees.
for t in old new; do
  c=${t}_full
  mkdir -p "$work/$t" && git -C "$repo_root" archive "${!c}" | tar -x -C "$work/$t" ||
    die "git archive ${!c} failed"
done

# crate-u32.rs over the stdlib/tandem of a tree ($1: the tree, $2: a name).
build_crate_u32() {
  local dir=$build/crate-u32-$2
  mkdir -p "$dir" || die "cannot make $dir"
  cat >"$dir/Cargo.toml" <<EOF
[package]
name = "crate-u32"
version = "0.0.0"
edition = "2021"
publish = false

[[bin]]
name = "crate-u32"
path = "$evidence_dir/crate-u32.rs"

[dependencies]
phobos-tandem = { path = "$1/stdlib/tandem" }

[workspace]
EOF
  (cd "$dir" && CARGO_TARGET_DIR="$dir/target" nice -n 19 cargo build --release --offline -q) >"$dir/build.log" 2>&1 ||
    die "crate-u32.rs does not build against $1/stdlib/tandem: $(tail -5 "$dir/build.log")"
  [ "$("$dir/target/release/crate-u32" bulk 42 8 | od -An -tx4 | tr -s ' ')" = " 7ece108d 874adb91" ] ||
    die "crate-u32 over $1 does not give section 10's words for key 42"
  echo "$dir/target/release/crate-u32"
}
crate_new=$(build_crate_u32 "$work/new" new) || exit 2
crate_old=$(build_crate_u32 "$work/old" old) || exit 2

out=$evidence_dir/$name.txt
count=$((bytes / 4))
{
  echo "## check: the first $bytes bytes of phobosc fill u32 --key KEY (K = 32), keys $keys, at commit $old_short and at $new_short"
  echo "## phobos: commit $(phobos_commit), $("$phobosc" --version 2>/dev/null), binary $phobosc sha256 $(sha256sum "$phobosc" | cut -c1-16)"
  echo "## new: commit $new_full, its crate from git archive"
  if [ -n "${PHOBOSC_OLD:-}" ]; then
    echo "## old: commit $old_full, $("$PHOBOSC_OLD" --version 2>/dev/null), binary $PHOBOSC_OLD sha256 $(sha256sum "$PHOBOSC_OLD" | cut -c1-16); its crate from git archive"
  else
    echo "## old: commit $old_full, its crate from git archive (no PHOBOSC_OLD: the old CLI is not run)"
  fi
  echo "## machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'), load $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "## started: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "## reproduce: ${NEW_COMMIT:+NEW_COMMIT=$new_short }${PHOBOSC_OLD:+PHOBOSC_OLD=OLD_PHOBOSC }stdlib/tandem/evidence/run-stream-unchanged.sh $old $name${3:+ $bytes}"
  echo
  echo "What changed in the generator and the fill between the two commits"
  echo "(git diff --stat $old_short $new_short -- stdlib/tandem/src compiler/cli/src/fill.rs):"
  git -C "$repo_root" diff --stat "$old_full" "$new_full" -- stdlib/tandem/src compiler/cli/src/fill.rs | sed 's/^/  /'
  echo
} >"$out"

t0=$(date +%s)
differ=0
for key in $keys; do
  makers=("phobosc ($new_short)|$phobosc fill u32 --key $key --count $count --threads 1")
  [ -n "${PHOBOSC_OLD:-}" ] && makers+=("phobosc ($old_short)|$PHOBOSC_OLD fill u32 --key $key --count $count --threads 1")
  makers+=(
    "crate bulk ($new_short)|$crate_new bulk $key $bytes"
    "crate bulk ($old_short)|$crate_old bulk $key $bytes"
    "crate reference ($old_short)|$crate_old reference $key $bytes"
  )
  echo "key $key:" >>"$out"
  first=
  for m in "${makers[@]}"; do
    label=${m%%|*} cmd=${m#*|}
    f=$work/key$key.$(echo "$label" | tr -c 'A-Za-z0-9\n' '_')
    # shellcheck disable=SC2086 # cmd is the maker's words
    nice -n 19 $cmd >"$f" || die "$label failed: $cmd"
    [ "$(stat -c %s "$f")" -eq "$bytes" ] || die "$label wrote $(stat -c %s "$f") bytes, not $bytes"
    sum=$(sha256sum "$f" | cut -d' ' -f1)
    if [ -z "$first" ]; then
      first=$f first_label=$label
      printf '  %-26s sha256 %s  (%s)\n' "$label" "$sum" "${cmd//$work\//}" >>"$out"
    elif c=$(cmp "$first" "$f" 2>&1); then
      printf '  %-26s sha256 %s  cmp with %s: identical\n' "$label" "$sum" "$first_label" >>"$out"
    else
      differ=1
      printf '  %-26s sha256 %s  cmp with %s: DIFFER: %s\n' "$label" "$sum" "$first_label" "${c//$work\//}" >>"$out"
    fi
  done
  rm -f "$work"/key"$key".*
done
{
  echo
  echo "## finished: $(date -u +%Y-%m-%dT%H:%M:%SZ), $(($(date +%s) - t0)) s wall"
  if [ "$differ" -eq 0 ]; then
    echo "## verdict: same: every maker's first $bytes bytes of keys $keys are identical"
  else
    echo "## verdict: DIFFERENT (see above)"
  fi
} >>"$out"
tail -1 "$out"
exit "$differ"
