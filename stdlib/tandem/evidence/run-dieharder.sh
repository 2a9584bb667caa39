#!/bin/bash
# Runs `dieharder -a -Y 1` (Debian's dieharder) on `phobosc fill` output and
# writes its full report, with a header naming the command, the commit and
# the times, to stdlib/tandem/evidence/NAME.txt (SPEC.md section 11.3).
#
#   cargo build --release -p phobosc
#   stdlib/tandem/evidence/run-dieharder.sh NAME u32 --key 1 [--backend gpu] [--k K]
#
# The arguments after NAME are `phobosc fill`'s. No --count: the stream runs
# until dieharder closes the pipe. About 50 minutes of one core; both ends run
# at nice 19 so that the battery yields to other work.
set -euo pipefail
cd "$(dirname "$0")/../../.."
name=$1
shift
out=stdlib/tandem/evidence/$name.txt
phobosc=${PHOBOSC:-target/release/phobosc}
{
  echo "# command: phobosc fill $* | dieharder -g 200 -a -Y 1"
  echo "# phobosc: commit $(git rev-parse --short HEAD) (release build), dieharder $(dpkg-query -W -f='${Version}' dieharder)"
  echo "# env: WGPU_BACKEND=${WGPU_BACKEND-} NODEVICE_SELECT=${NODEVICE_SELECT-}"
  echo "# started: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
} >"$out"
t0=$(date +%s)
nice -n 19 "$phobosc" fill "$@" | nice -n 19 dieharder -g 200 -a -Y 1 >>"$out" 2>&1
echo "# finished: $(date -u +%Y-%m-%dT%H:%M:%SZ), $(($(date +%s) - t0)) s wall" >>"$out"
