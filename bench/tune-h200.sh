#!/usr/bin/env bash
# Issue 12's figures for bench/RESULTS.md: tuning cost, the cache's warm
# lookup, tuned against heuristic on every example, and the launch path of
# the 3 GiB `dropout_rows`. Prints every figure; writes nothing but
# temporary files (removed at exit).
#
#   bench/tune-h200.sh PHOBOSC_BINARY
#
# Run from the repository root (it reads examples/). Environment:
#   TUNE_M=65536      M of the tuning figures (a) and (b)
#   BIG_M=3145728     M of the launch-path figure (d): 2 x 3 GiB of f32
#   EXAMPLE_SCALE=1   divides the examples' dims in (c)
#   SCRATCH=/tmp      where the output .npy files go (BIG_M * 1 KiB each)
# On lavapipe (to test the script): TUNE_M=1024 BIG_M=16384 EXAMPLE_SCALE=16
# with WGPU_BACKEND=vulkan NODEVICE_SELECT=1. bench/launch-h200.sh measures
# (d) alone, with the run's phases (`phobosc run --verbose`).
set -euo pipefail
if [ $# -ne 1 ] || [ ! -x "$1" ]; then
    echo "usage: $0 PHOBOSC_BINARY (run from the repository root)" >&2
    exit 2
fi
exec python3 - "$(realpath "$1")" <<'PY'
import json, os, shutil, subprocess, sys, tempfile, threading, time

phobosc = sys.argv[1]
tune_m = int(os.environ.get("TUNE_M", 65536))
big_m = int(os.environ.get("BIG_M", 3145728))
scale = int(os.environ.get("EXAMPLE_SCALE", 1))
scratch = tempfile.mkdtemp(prefix="phobos-tune-h200-", dir=os.environ.get("SCRATCH", "/tmp"))


def run(args, env=None):
    """Runs phobosc; returns (stdout, wall seconds)."""
    started = time.perf_counter()
    p = subprocess.Popen([phobosc] + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         env={**os.environ, **(env or {})}, text=True)
    out, err = p.communicate()
    wall = time.perf_counter() - started
    if p.returncode != 0:
        sys.exit(f"phobosc {' '.join(args)} failed ({p.returncode}):\n{err}")
    return out, wall


def peak_run(args, env=None):
    """Runs phobosc; returns (stdout, wall seconds, its peak RSS in bytes:
    ru_maxrss from wait4, which is this child's own, where /usr/bin/time
    may be missing)."""
    started = time.perf_counter()
    p = subprocess.Popen([phobosc] + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         env={**os.environ, **(env or {})})
    # Read the pipes on threads so that wait4 returns this child's rusage.
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
    p.returncode = os.waitstatus_to_exitcode(status)
    if p.returncode != 0:
        sys.exit(f"phobosc {' '.join(args)} failed ({p.returncode}):\n{bufs['err'].decode()}")
    return bufs["out"].decode(), wall, usage.ru_maxrss * 1024


def gib(b):
    return f"{b / 2**30:.2f} GiB"


try:
    out, wall = run(["--version"])
    print(f"# Issue 12 figures: {out.strip()}")
    print(f"# {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; TUNE_M={tune_m} BIG_M={big_m} EXAMPLE_SCALE={scale}")

    # (a) A cold tune: a fresh cache (tuning decisions and compiled pipelines).
    cache = os.path.join(scratch, "cache")
    env = {"PHOBOS_CACHE_DIR": cache}
    ex = "examples/dropout_rows.ph"
    out, wall = run(["tune", ex, "--dim", f"M={tune_m}", "--backend", "gpu", "--json"], env)
    t = json.loads(out)
    timed = [x for x in t["trials"] if "median_ms" in x]
    print(f"\n## (a) cold tune of dropout_rows, M={tune_m}")
    print(f"device: {t['device']}")
    print(f"configurations timed: {len(timed)} of {len(t['trials'])} (target >= 4)")
    print(f"process wall time: {wall * 1e3:.0f} ms; the tune itself (provenance tuning.ms): "
          f"{t['tuning']['ms']:.0f} ms (target < 1000 ms)")
    print(f"chosen: {t['chosen']}; margin over the heuristic: {t['margin_over_heuristic']}")

    # (b) A second process launches the same kernel: the cache serves it.
    out, wall = run(["run", ex, "--dim", f"M={tune_m}", "--backend", "gpu", "--json"], env)
    p = json.loads(out)["provenance"]
    print(f"\n## (b) warm lookup in a second process")
    print(f"tuning: source {p['tuning']['source']}, cache {p['tuning']['cache']}, "
          f"lookup {p['tuning']['ms']:.3f} ms (target < 5 ms); config {p['config']}, "
          f"workgroup {p['workgroup_size']}; process wall {wall * 1e3:.0f} ms")
    if p["tuning"]["cache"] != "hit":
        print("NOT A CACHE HIT")

    # (c) Tuned against the heuristic's choice, every example that runs on the GPU.
    dims = {
        "bias_gelu_dropout.ph": {"M": 65536},
        "dropout_rows.ph": {"M": 65536},
        "layernorm_dropout.ph": {"M": 4096, "N": 4096},
        "random_tile.ph": {},
        "softmax_dropout.ph": {"M": 4096, "N": 4096},
        "dropout_backward.ph": {"M": 65536},
    }
    # Each example's Tandem twin takes its dims.
    dims.update({k.replace(".ph", "_tandem.ph"): v for k, v in list(dims.items())})
    print(f"\n## (c) tuned vs heuristic (phobosc tune --fresh, GPU timestamps, medians)")
    print("| example | dims | configurations | heuristic | ms | tuned | ms | tuned faster by |")
    print("|---|---|---|---|---|---|---|---|")
    for name in sorted(f for f in os.listdir("examples") if f.endswith(".ph")):
        d = {k: max(1, v // scale) for k, v in dims.get(name, {}).items()}
        args = ["tune", f"examples/{name}", "--backend", "gpu", "--json", "--fresh"]
        for k, v in d.items():
            args += ["--dim", f"{k}={v}"]
        started = time.perf_counter()
        p = subprocess.run([phobosc] + args, capture_output=True, text=True,
                           env={**os.environ, **env})
        if p.returncode != 0:
            print(f"| {name} | {d} | does not tune on the GPU: {p.stderr.strip().splitlines()[-1:]} |")
            continue
        t = json.loads(p.stdout)
        ms = {json.dumps(x["config"], sort_keys=True) + str(x["workgroup_size"]): x.get("median_ms")
              for x in t["trials"]}
        key = lambda c: json.dumps(c["config"], sort_keys=True) + str(c["workgroup_size"])
        h, c = ms.get(key(t["heuristic"])), ms.get(key(t["chosen"]))
        n = sum(1 for x in t["trials"] if "median_ms" in x)
        desc = lambda c: ", ".join([f"{k}={v}" for k, v in c["config"].items()] + [f"wg {c['workgroup_size']}"])
        margin = t["margin_over_heuristic"]
        print(f"| {name} | {' '.join(f'{k}={v}' for k, v in d.items()) or '-'} | {n} | {desc(t['heuristic'])} | "
              f"{h:.4f} | {desc(t['chosen'])} | {c:.4f} | "
              f"{'-' if margin is None else f'{100 * margin:.1f}%'} |")

    # (d) The launch path at scale: generated input, the kernel, its check
    # lines, the output saved. Against writing a file of the same size.
    # --no-tune: the launch path, not a tune at first launch of this bucket.
    tensors = 2 * big_m * 256 * 4
    out_file = os.path.join(scratch, "Y.npy")
    big = ["--dim", f"M={big_m}", "--backend", "gpu", "--no-tune", "--output", f"Y={out_file}"]
    print(f"\n## (d) phobosc run dropout_rows M={big_m} --no-tune: X and Y are {gib(tensors)} together")
    # The process's fixed cost (binary, driver, device), for scale.
    _, _, rss_base = peak_run(["run", ex, "--dim", "M=16", "--backend", "gpu", "--no-tune"], env)
    text, wall, rss = peak_run(["run", ex] + big, env)
    size = os.path.getsize(out_file)
    print(f"with checks and --output: wall {wall:.2f} s, peak RSS {gib(rss)} = "
          f"{rss / tensors:.2f} x the tensors' bytes (target <= 2.5), output {gib(size)}; "
          f"a run at M=16 peaks at {gib(rss_base)}, so the tensors' part is "
          f"{(rss - rss_base) / tensors:.2f} x")
    for line in text.splitlines():
        if line.startswith("check") or "ran on the interpreter" in line or line.startswith("tuning"):
            print("  " + line.strip())
    os.remove(out_file)
    # The same run without check lines (a copy of the file without them).
    bare = os.path.join(scratch, "dropout_rows_nochecks.ph")
    with open(ex) as f, open(bare, "w") as g:
        g.write("".join(l for l in f if not l.startswith("// check")))
    _, wall_bare, rss_bare = peak_run(["run", bare] + big, env)
    os.remove(out_file)
    print(f"without checks, same output: wall {wall_bare:.2f} s, peak RSS {gib(rss_bare)}")
    # Writing the output file alone: the same bytes from memory to a file
    # in the same directory, no fsync (phobosc does not sync either).
    buf = bytearray(min(size, 64 << 20))
    started = time.perf_counter()
    with open(out_file, "wb") as f:
        left = size
        while left:
            n = min(left, len(buf))
            f.write(memoryview(buf)[:n])
            left -= n
    write_alone = time.perf_counter() - started
    os.remove(out_file)
    print(f"writing {gib(size)} alone (python, 64 MiB writes from memory, no fsync): {write_alone:.2f} s")
    print(f"ratio, run with checks / write alone: {wall / write_alone:.2f} (target <= 3)")
finally:
    shutil.rmtree(scratch, ignore_errors=True)
PY
