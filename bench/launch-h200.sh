#!/usr/bin/env bash
# Issue 12's launch-path target: `phobosc run` of the 3 GiB `dropout_rows`
# with its check lines, input generated, output saved, against writing the
# output file alone (target <= 3x), and its peak RSS against the tensors'
# bytes (target <= 2.5x). Prints the run's wall time, its phases
# (`phobosc run --verbose`), the write alone, and peak RSS; the same run
# without check lines, and with --json (the host copy of the output), for
# comparison. Writes nothing but temporary files
# (removed at exit).
#
#   bench/launch-h200.sh PHOBOSC_BINARY
#
# Run from the repository root (it reads examples/). Environment:
#   BIG_M=3145728   M: 2 x 3 GiB of f32
#   BACKEND=gpu     the backend of the run
#   SCRATCH=/tmp    where the output .npy goes (BIG_M * 1 KiB)
# On lavapipe (to test the script): BIG_M=65536, with WGPU_BACKEND=vulkan
# NODEVICE_SELECT=1.
set -euo pipefail
if [ $# -ne 1 ] || [ ! -x "$1" ]; then
    echo "usage: $0 PHOBOSC_BINARY (run from the repository root)" >&2
    exit 2
fi
exec python3 - "$(realpath "$1")" <<'PY'
import os, shutil, subprocess, sys, tempfile, threading, time

phobosc = sys.argv[1]
big_m = int(os.environ.get("BIG_M", 3145728))
backend = os.environ.get("BACKEND", "gpu")
scratch = tempfile.mkdtemp(prefix="phobos-launch-h200-", dir=os.environ.get("SCRATCH", "/tmp"))
env = {**os.environ, "PHOBOS_CACHE_DIR": os.path.join(scratch, "cache")}


def peak_run(args):
    """Runs phobosc; returns (stdout, stderr, wall seconds, its peak RSS in
    bytes: ru_maxrss from wait4, this child's own)."""
    started = time.perf_counter()
    p = subprocess.Popen([phobosc] + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    bufs = {}
    def drain(name, f):
        bufs[name] = f.read()
    ts = [threading.Thread(target=drain, args=(n, f)) for n, f in (("out", p.stdout), ("err", p.stderr))]
    for t in ts:
        t.start()
    _, status, usage = os.wait4(p.pid, 0)
    wall = time.perf_counter() - started
    for t in ts:
        t.join()
    code = os.waitstatus_to_exitcode(status)
    if code != 0:
        sys.exit(f"phobosc {' '.join(args)} failed ({code}):\n{bufs['err'].decode()}")
    return bufs["out"].decode(), bufs["err"].decode(), wall, usage.ru_maxrss * 1024


def gib(b):
    return f"{b / 2**30:.2f} GiB"


def write_alone(size, path):
    """Seconds to write `size` bytes from memory to `path` (64 MiB writes,
    no fsync: phobosc does not sync either)."""
    buf = bytearray(min(size, 64 << 20))
    started = time.perf_counter()
    with open(path, "wb") as f:
        left = size
        while left:
            n = min(left, len(buf))
            f.write(memoryview(buf)[:n])
            left -= n
    spent = time.perf_counter() - started
    os.remove(path)
    return spent


try:
    ex = "examples/dropout_rows.ph"
    version = subprocess.run([phobosc, "--version"], capture_output=True, text=True).stdout.strip()
    tensors = 2 * big_m * 256 * 4
    out_file = os.path.join(scratch, "Y.npy")
    big = ["--dim", f"M={big_m}", "--backend", backend, "--no-tune", "--output", f"Y={out_file}", "--verbose"]
    print(f"# {version}; {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}")
    print(f"# phobosc run {ex} {' '.join(big)}")
    print(f"# X and Y are {gib(tensors)} together")
    # The process's fixed cost (binary, driver, device), for scale.
    _, _, _, rss_base = peak_run(["run", ex, "--dim", "M=16", "--backend", backend, "--no-tune"])
    text, err, wall, rss = peak_run(["run", ex] + big)
    size = os.path.getsize(out_file)
    os.remove(out_file)
    print(f"\nwith checks and --output: wall {wall:.2f} s, output {gib(size)}")
    for line in text.splitlines():
        if line.startswith(("check", "backend", "workgroup")) or "ran on the interpreter" in line:
            print("  " + line.strip())
    print("phases (phobosc run --verbose, stderr):")
    for line in err.splitlines():
        if line.startswith("time"):
            print("  " + line)
    print(f"peak RSS {gib(rss)} = {rss / tensors:.2f} x the tensors' bytes (target <= 2.5); "
          f"a run at M=16 peaks at {gib(rss_base)}, so the tensors' part is "
          f"{(rss - rss_base) / tensors:.2f} x")
    # The same run without check lines (a copy of the file without them).
    bare = os.path.join(scratch, "dropout_rows_nochecks.ph")
    with open(ex) as f, open(bare, "w") as g:
        g.write("".join(l for l in f if not l.startswith("// check")))
    _, err_bare, wall_bare, rss_bare = peak_run(["run", bare] + big)
    os.remove(out_file)
    print(f"\nwithout checks, same output: wall {wall_bare:.2f} s, peak RSS {gib(rss_bare)}")
    for line in err_bare.splitlines():
        if line.startswith("time"):
            print("  " + line)
    # The same run with --json: the output is also copied into the host
    # tensor (for its statistics), on several threads while the file is
    # written, instead of written from the device beside the checks.
    _, err_json, wall_json, rss_json = peak_run(["run", ex] + big + ["--json"])
    os.remove(out_file)
    print(f"\nwith checks, --output and --json: wall {wall_json:.2f} s, peak RSS {gib(rss_json)}")
    for line in err_json.splitlines():
        if line.startswith("time"):
            print("  " + line)
    # The fastest of three, so that the dirty pages of the runs above
    # being written back do not count against the write alone.
    tries = [write_alone(size, out_file) for _ in range(3)]
    alone = min(tries)
    print(f"\nwriting {gib(size)} alone (python, 64 MiB writes from memory, no fsync; "
          f"fastest of {', '.join(f'{t:.2f}' for t in tries)} s): {alone:.2f} s")
    print(f"ratio, run with checks / write alone: {wall / alone:.2f} (target <= 3)")
    print(f"ratio, run without checks / write alone: {wall_bare / alone:.2f}")
finally:
    shutil.rmtree(scratch, ignore_errors=True)
PY
