#!/usr/bin/env python3
"""Issue 14's comparison: softmax + dropout and layer norm + dropout over rows
of N = 1024 .. 8192, Phobos against PyTorch (eager, `torch.compile`) and a
fused Triton kernel written for the comparison on the GPU, and against
NumPy's unfused version on the CPU. `bench/fused-h200.sh` runs every mode
below in one call and prints the merged tables.

    python3 bench/peers/fused.py gpu    [--log2 L] [--rows N,..] [--tsv PATH] [--no-compile] [--budget S]
    python3 bench/peers/fused.py numpy  [--log2 L] [--rows N,..] [--tsv PATH] [--runs K]
    python3 bench/peers/fused.py phobos PHOBOSC --backend gpu|cpu [--log2 L] [--rows N,..]
                                        [--tsv PATH] [--runs K] [--precision exact,fast] [--threads T]
    python3 bench/peers/fused.py report TSV [TSV ...]

Every row has M * N = 2^L elements (L: 26 on the GPU, 24 on the CPU by
default), M = 2^L / N rows of N (default rows 1024, 2048, 4096, 8192); the
dropout keeps with probability 0.9, the layer norm has weight and bias
(eps 1e-5). GiB/s count the bytes a fused kernel must move: X read and Y
written (plus the N-element weight and bias), whatever the implementation
moves besides.

`gpu`: PyTorch eager (`torch.softmax` then `F.dropout`; `F.layer_norm`
then `F.dropout`), the same functions through `torch.compile(dynamic=False)`
(its compile error, or the budget it would exceed, printed instead), and
the fused Triton kernels below (one program per row, the row in one block
of `next_power_of_2(N)`, Philox dropout through `tl.rand(seed, offsets)` as
Triton's tutorial writes it, the best of num_warps 4, 8, 16). Timed as
`peers.py`: half a second of warm-up, then the median (and fastest) of 21
CUDA-event timings. Ceiling: the fastest CUDA copy of the same bytes in
this run (`peers.Peers.measure_ceilings`: `copy_()`, cudaMemcpyAsync
through CuPy, a Triton copy kernel), measured again at the end. Each
output is checked against PyTorch eager without dropout: the kept fraction
and the largest error of a kept value.

`numpy`: NumPy's unfused version (softmax, or layer norm, then a mask from
`np.random.default_rng(seed).random(dtype=float32)`), float32, one warm-up
call then the median of K wall-clock calls (default 7).

`phobos`: `phobosc bench --json` on examples/softmax_dropout.ph and
examples/layernorm_dropout.ph at the same M, N (seed 12345), in each
precision asked for (GPU default exact and fast; CPU exact). On the GPU
each is tuned at first launch as `phobosc run` launches it (no `--config`:
every `@autotune` configuration and workgroup size; the tuning cache in a
fresh `PHOBOS_CACHE_DIR` unless one is set) and, where the file lists more
than one configuration, each also fixed through `--config` (the
heuristic's workgroup size). The CPU has no lowering choice: a single
configuration is run fixed. The table shows the best of a row's runs.

`report`: the merged tables of TSVs the modes wrote: each figure as GiB/s
and as a share of the CUDA copy ceiling of the GPU run, Phobos / Triton,
and Phobos CPU / NumPy. The Phobos side is judged against the CUDA ceiling
too: neither `phobosc bench` nor `phobos-bench-table` prints wgpu's true
copy ceiling alone (the table measures it only inside its whole run).

A missing module or a call that fails prints why, and the rest still runs.
"""

import gc
import itertools
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import peers as house  # noqa: E402  the timing method, libraries and ceilings

P = 0.1
EPS = 1e-5
# Triton specialises integer arguments equal to 1: any other seed stays a
# runtime value, as a user's would be.
SEED = 12345
ROWS = (1024, 2048, 4096, 8192)
OPS = ("softmax_dropout", "layernorm_dropout")
WARPS = (4, 8, 16)
TSV_FIELDS = ("side", "backend", "op", "N", "M", "impl", "config", "median_gib", "fastest_gib", "bytes", "note")
REPO = os.path.dirname(os.path.dirname(HERE))

try:
    import triton
    import triton.language as tl

    TRITON_WHY = None
except Exception as e:  # ImportError, or a broken install
    triton = tl = None
    TRITON_WHY = "Triton unavailable: %s" % house.short(e)

if triton is not None:

    @triton.jit
    def softmax_dropout_kernel(x_ptr, y_ptr, n_cols, p, seed, BLOCK: tl.constexpr):
        row = tl.program_id(0)
        cols = tl.arange(0, BLOCK)
        mask = cols < n_cols
        offs = row * n_cols + cols
        x = tl.load(x_ptr + offs, mask=mask, other=-float("inf"))
        e = tl.exp(x - tl.max(x, axis=0))
        s = e / tl.sum(e, axis=0)
        keep = tl.rand(seed, offs) > p
        tl.store(y_ptr + offs, tl.where(keep, s / (1 - p), 0.0), mask=mask)

    @triton.jit
    def layernorm_dropout_kernel(x_ptr, w_ptr, b_ptr, y_ptr, n_cols, eps, p, seed, BLOCK: tl.constexpr):
        row = tl.program_id(0)
        cols = tl.arange(0, BLOCK)
        mask = cols < n_cols
        offs = row * n_cols + cols
        x = tl.load(x_ptr + offs, mask=mask, other=0.0)
        mean = tl.sum(x, axis=0) / n_cols
        d = tl.where(mask, x - mean, 0.0)
        rstd = 1 / tl.sqrt(tl.sum(d * d, axis=0) / n_cols + eps)
        w = tl.load(w_ptr + cols, mask=mask)
        b = tl.load(b_ptr + cols, mask=mask)
        keep = tl.rand(seed, offs) > p
        tl.store(y_ptr + offs, tl.where(keep, (d * rstd * w + b) / (1 - p), 0.0), mask=mask)


# --------------------------------------------------------------- arguments


def parse(argv, flags, options):
    """(positionals, {name: value}): `flags` take no value, `options` one."""
    pos, got = [], {}
    it = iter(argv)
    for a in it:
        if a in flags:
            got[a] = True
        elif a in options:
            v = next(it, None)
            if v is None:
                raise SystemExit("%s needs a value" % a)
            got[a] = v
        elif a.startswith("--"):
            raise SystemExit("unknown option %s (known: %s)" % (a, ", ".join(sorted(flags + options))))
        else:
            pos.append(a)
    return pos, got


def shape(got, default_log2):
    """[(N, M)] with M * N = 2^log2."""
    log2 = int(got.get("--log2", default_log2))
    rows = [int(v) for v in got["--rows"].split(",")] if "--rows" in got else list(ROWS)
    if not 10 <= log2 <= 30:
        raise SystemExit("--log2 %d: expected 10 to 30 (Philox offsets are 32-bit)" % log2)
    out = []
    for n in rows:
        if n < 1 or (1 << log2) % n:
            raise SystemExit("--rows %d: a row length must divide 2^%d" % (n, log2))
        out.append((n, (1 << log2) // n))
    return log2, out


class Tsv:
    """Rows as TSV_FIELDS, written and flushed as they come (a run cut short
    keeps what it measured), and kept for this mode's own table."""

    def __init__(self, path):
        self.rows = []
        self.f = open(path, "w") if path else None
        if self.f:
            self.f.write("\t".join(TSV_FIELDS) + "\n")
            self.f.flush()

    def add(self, **row):
        row = {k: row.get(k, "") for k in TSV_FIELDS}
        for k in ("median_gib", "fastest_gib"):
            if isinstance(row[k], float):
                row[k] = "%.2f" % row[k]
            elif row[k] in ("", None):
                row[k] = "n/a"
        row["note"] = str(row["note"]).replace("\t", " ").replace("\n", " ")
        self.rows.append(row)
        if self.f:
            self.f.write("\t".join(str(row[k]) for k in TSV_FIELDS) + "\n")
            self.f.flush()

    def dump(self):
        print("\t".join(TSV_FIELDS))
        for r in self.rows:
            print("\t".join(str(r[k]) for k in TSV_FIELDS))


def progress(msg):
    print("[%s] %s" % (time.strftime("%H:%M:%S"), msg), flush=True)


def fnum(v, digits=None):
    """A figure with `digits` decimals (default: none from 100 up, else 2)."""
    try:
        v = float(v)
    except (TypeError, ValueError):
        return "n/a"
    return "%.*f" % (digits if digits is not None else (0 if abs(v) >= 100 else 2), v)


# --------------------------------------------------------------------- GPU


def gpu_main(argv):
    _, got = parse(argv, ["--no-compile"], ["--log2", "--rows", "--tsv", "--budget"])
    log2, shapes = shape(got, 26)
    budget = float(got.get("--budget", 240))
    begun = time.perf_counter()
    out = Tsv(got.get("--tsv"))
    torch, why = house.load_torch()
    if torch is None:
        print("PyTorch: n/a (%s); no GPU peers and no CUDA ceiling" % why)
        out.add(side="peers", backend="cuda", op="copy", impl="CUDA copy ceiling", note=why)
        return
    th = house.Torch(torch)
    try:  # one graph per row length and op: more than dynamo's default recompiles
        import torch._dynamo

        for k in ("cache_size_limit", "recompile_limit"):
            if hasattr(torch._dynamo.config, k):
                setattr(torch._dynamo.config, k, max(getattr(torch._dynamo.config, k), 64))
    except Exception as e:
        print("(torch._dynamo config: %s)" % house.short(e))
    cupy, curand, cupy_why = house.load_cupy()
    cr = None
    if cupy is not None:
        try:
            cr = house.Curand(cupy, curand)
        except Exception as e:
            cupy_why = "cuRAND unavailable: %s" % house.short(e)
    tk, tk_why = house.load_triton()
    versions = ["PyTorch %s (CUDA %s) on %s" % (torch.__version__, torch.version.cuda, torch.cuda.get_device_name())]
    versions.append("CuPy %s" % cupy.__version__ if cr is not None else "CuPy: n/a (%s)" % cupy_why)
    versions.append("Triton %s" % triton.__version__ if triton is not None else "Triton: n/a (%s)" % TRITON_WHY)
    print("Peers: " + "; ".join(versions))
    print(
        "2^%d f32 elements per row set; median (fastest) of %d CUDA-event timings after %.1f s of warm-up; "
        "GiB/s of X read + Y written (+ weight and bias); ceiling: the fastest CUDA copy of the same bytes "
        "in this run; dropout p = %g, seed %d\n" % (log2, house.RUNS, house.WARM_UP_S, P, SEED),
        flush=True,
    )
    elems = 1 << log2
    nbytes = 4 * elems
    ceil = house.Peers(elems, cr, th, tk if triton is not None else None)
    progress("CUDA ceilings of %d bytes (copy counts %d)" % (nbytes, 2 * nbytes))
    ceil.measure_ceilings(nbytes)
    copy = ceil.ceilings.get(("copy", nbytes))
    for kind, label, b, text in ceil.candidates:
        out.add(side="peers", backend="cuda", op=kind, N="", M="", impl="ceiling candidate", config=label,
                median_gib=text.split(" ")[0] if not text.startswith("n/a") else "n/a",
                bytes=b if kind == "zero" else 2 * b, note=text)
    if copy is None:
        print("no CUDA copy ceiling: every candidate failed")
    else:
        out.add(side="peers", backend="cuda", op="copy", impl="CUDA copy ceiling", config=copy[2],
                median_gib=copy[0], fastest_gib=copy[1], bytes=2 * nbytes, note="start of run")
        progress("copy ceiling %s GiB/s (%s)" % (fnum(copy[0]), copy[2]))

    compiled = {}
    for n, m in shapes:
        for op in OPS:
            try:
                gpu_rows(torch, th, out, op, n, m, compiled, "--no-compile" not in got, budget, begun)
            except Exception as e:
                progress("%s N=%d: failed: %s" % (op, n, house.short(e)))
                out.add(side="peers", backend="cuda", op=op, N=n, M=m, impl="all", note="n/a (%s)" % house.short(e))
            gc.collect()
            th.release()
    progress("the copy again (drift): copy_()")
    try:
        x = torch.empty(nbytes, dtype=torch.uint8, device="cuda").fill_(1)
        y = torch.empty_like(x)
        t = th._time(lambda: y.copy_(x))
        out.add(side="peers", backend="cuda", op="copy", impl="CUDA copy, end of run", config="copy_() (PyTorch)",
                median_gib=house.gib(2 * nbytes, t[0]), fastest_gib=house.gib(2 * nbytes, t[1]), bytes=2 * nbytes)
    except Exception as e:
        progress("the copy again: n/a (%s)" % house.short(e))
    print()
    report(out.rows)
    if not got.get("--tsv"):
        print()
        out.dump()
    print("\nGPU peers in %.0f s" % (time.perf_counter() - begun))


def gpu_rows(torch, th, out, op, n, m, compiled, with_compile, budget, begun):
    F = torch.nn.functional
    g = torch.Generator(device="cuda").manual_seed(SEED)
    x = torch.randn(m, n, device="cuda", generator=g)
    w = torch.rand(n, device="cuda", generator=g) + 0.5
    b = 0.1 * torch.randn(n, device="cuda", generator=g)
    y = torch.empty_like(x)
    nbytes = 2 * x.numel() * 4 + (2 * n * 4 if op == "layernorm_dropout" else 0)
    eager = torch_fns(torch)[op]
    args = (x,) if op == "softmax_dropout" else (x, w, b)
    if op == "softmax_dropout":
        ref = torch.softmax(x, dim=-1)
    else:
        ref = F.layer_norm(x, (n,), w, b, EPS)
    ref = ref / (1 - P)

    def row(impl, timed, config="", note=""):
        try:
            t, label, got = timed()
        except Exception as e:
            progress("%s N=%d %s: n/a (%s)" % (op, n, impl, house.short(e)))
            out.add(side="peers", backend="cuda", op=op, N=n, M=m, impl=impl, config=config, bytes=nbytes,
                    note="n/a (%s)" % house.short(e))
            return
        kept, err = check(torch, got, ref)
        full = "; ".join(s for s in (note, "kept %.4f, largest error of a kept value %.1e of max abs ref" % (kept, err)) if s)
        if abs(kept - (1 - P)) > 0.01 or err > 1e-4:
            full = "CHECK FAILED: " + full
        out.add(side="peers", backend="cuda", op=op, N=n, M=m, impl=impl, config=label or config,
                median_gib=house.gib(nbytes, t[0]), fastest_gib=house.gib(nbytes, t[1]), bytes=nbytes, note=full)
        progress("%s N=%d %s %s: %s GiB/s" % (op, n, impl, label or config, fnum(house.gib(nbytes, t[0]))))

    def time_eager():
        eager(*args)
        torch.cuda.synchronize()
        return th._time(lambda: eager(*args)), "", eager(*args)

    row("PyTorch eager", time_eager, config="torch.softmax + F.dropout" if op == "softmax_dropout" else "F.layer_norm + F.dropout")

    def time_compiled():
        if not with_compile:
            raise RuntimeError("skipped (--no-compile)")
        spent = time.perf_counter() - begun
        if spent > budget:
            raise RuntimeError("skipped: %.0f s spent, over the budget of %.0f s" % (spent, budget))
        if op + " failed" in compiled:
            raise RuntimeError("as for the first row length: %s" % compiled[op + " failed"])
        fn = compiled.get(op)
        if fn is None:
            # One specialised graph per row length, as a user's fixed shapes get.
            fn = compiled[op] = torch.compile(eager, dynamic=False)
        t0 = time.perf_counter()
        try:
            first = fn(*args)
        except Exception as e:
            compiled[op + " failed"] = house.short(e)
            raise
        torch.cuda.synchronize()
        ms = (time.perf_counter() - t0) * 1e3
        del first
        return th._time(lambda: fn(*args)), "dynamic=False, compile + first call %.0f ms" % ms, fn(*args)

    row("torch.compile", time_compiled)

    def time_triton():
        if triton is None:
            raise RuntimeError(TRITON_WHY)
        block = triton.next_power_of_2(n)
        if op == "softmax_dropout":

            def launch(warps):
                softmax_dropout_kernel[(m,)](x, y, n, P, SEED, BLOCK=block, num_warps=warps)

        else:

            def launch(warps):
                layernorm_dropout_kernel[(m,)](x, w, b, y, n, EPS, P, SEED, BLOCK=block, num_warps=warps)

        best, errors = None, []
        for warps in WARPS:
            try:
                launch(warps)  # compiles: outside the half second of warm-up
                torch.cuda.synchronize()
                t = th._time(lambda: launch(warps))
            except Exception as e:
                errors.append("num_warps %d: %s" % (warps, house.short(e)))
                continue
            if best is None or t[0] < best[0][0]:
                best = (t, warps)
        if best is None:
            raise RuntimeError("; ".join(errors))
        launch(best[1])
        torch.cuda.synchronize()
        return best[0], "BLOCK %d, num_warps %d (best of %s)" % (block, best[1], "/".join(map(str, WARPS))), y

    row("Triton fused", time_triton)


def torch_fns(torch):
    """The unfused PyTorch functions, eager and the input of torch.compile."""
    F = torch.nn.functional

    def softmax_dropout(x):
        return F.dropout(torch.softmax(x, dim=-1), P, True)

    def layernorm_dropout(x, w, b):
        return F.dropout(F.layer_norm(x, x.shape[-1:], w, b, EPS), P, True)

    return {"softmax_dropout": softmax_dropout, "layernorm_dropout": layernorm_dropout}


def check(torch, got, ref):
    """(kept fraction, largest abs(got - ref) over kept elements / max abs(ref))."""
    kept = got != 0
    frac = kept.float().mean().item()
    err = ((got - ref).abs() * kept).max().item() / max(ref.abs().max().item(), 1e-30)
    return frac, err


# ------------------------------------------------------------------- NumPy


def numpy_main(argv):
    _, got = parse(argv, [], ["--log2", "--rows", "--tsv", "--runs"])
    log2, shapes = shape(got, 24)
    runs = int(got.get("--runs", 7))
    out = Tsv(got.get("--tsv"))
    try:
        import numpy as np
    except Exception as e:
        print("NumPy: n/a (%s)" % house.short(e))
        out.add(side="numpy", backend="cpu", op="all", impl="NumPy unfused", note="n/a (%s)" % house.short(e))
        return
    print("NumPy %s: 2^%d f32 elements, one warm-up call then the median (fastest) of %d wall-clock calls; "
          "GiB/s of X read + Y written (+ weight and bias)\n" % (np.__version__, log2, runs), flush=True)
    for n, m in shapes:
        rng = np.random.default_rng(SEED)
        x = rng.standard_normal((m, n), dtype=np.float32)
        w = (rng.random(n, dtype=np.float32) + 0.5).astype(np.float32)
        b = (0.1 * rng.standard_normal(n, dtype=np.float32)).astype(np.float32)
        for op in OPS:
            nbytes = 2 * x.nbytes + (2 * n * 4 if op == "layernorm_dropout" else 0)
            fn = (lambda: numpy_softmax_dropout(np, x, rng)) if op == "softmax_dropout" else (lambda: numpy_layernorm_dropout(np, x, w, b, rng))
            try:
                y = fn()
                t = sorted(timed_wall(fn) for _ in range(runs))
                kept = float(np.count_nonzero(y)) / y.size
                out.add(side="numpy", backend="cpu", op=op, N=n, M=m, impl="NumPy unfused", config="1 thread",
                        median_gib=house.gib(nbytes, t[len(t) // 2]), fastest_gib=house.gib(nbytes, t[0]),
                        bytes=nbytes, note="kept %.4f" % kept)
                progress("numpy %s N=%d: %.1f GiB/s" % (op, n, house.gib(nbytes, t[len(t) // 2])))
            except Exception as e:
                out.add(side="numpy", backend="cpu", op=op, N=n, M=m, impl="NumPy unfused", bytes=nbytes,
                        note="n/a (%s)" % house.short(e))
                progress("numpy %s N=%d: n/a (%s)" % (op, n, house.short(e)))
    if not got.get("--tsv"):
        print()
        out.dump()


def timed_wall(fn):
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def numpy_softmax_dropout(np, x, rng):
    e = np.exp(x - x.max(axis=1, keepdims=True))
    s = e / e.sum(axis=1, keepdims=True)
    keep = rng.random(x.shape, dtype=np.float32) >= P
    return np.where(keep, s / np.float32(1 - P), np.float32(0))


def numpy_layernorm_dropout(np, x, w, b, rng):
    mean = x.mean(axis=1, keepdims=True)
    d = x - mean
    var = (d * d).mean(axis=1, keepdims=True)
    y = d / np.sqrt(var + np.float32(EPS)) * w + b
    keep = rng.random(x.shape, dtype=np.float32) >= P
    return np.where(keep, y / np.float32(1 - P), np.float32(0))


# ------------------------------------------------------------------ Phobos


def autotune_configs(path):
    """Every configuration of the file's @autotune lines as `NAME=V` lists."""
    with open(path) as f:
        src = f.read()
    params = []
    for inner in re.findall(r"^\s*@autotune\(([^)]*)\)", src, re.MULTILINE):
        for name, values in re.findall(r"(\w+)\s+in\s+\[([^\]]*)\]", inner):
            params.append([("%s=%s" % (name, v.strip())) for v in values.split(",") if v.strip()])
    return [list(c) for c in itertools.product(*params)] if params else []


def phobos_main(argv):
    pos, got = parse(argv, [], ["--backend", "--log2", "--rows", "--tsv", "--runs", "--precision", "--threads", "--timeout"])
    if len(pos) != 1:
        raise SystemExit("phobos mode: give the phobosc binary, e.g. `fused.py phobos target/release/phobosc --backend gpu`")
    phobosc = pos[0]
    devices = set()
    backend = got.get("--backend", "gpu")
    if backend not in ("gpu", "cpu"):
        raise SystemExit("--backend %s: expected gpu or cpu" % backend)
    log2, shapes = shape(got, 26 if backend == "gpu" else 24)
    runs = got.get("--runs", "21")
    precisions = got.get("--precision", "exact,fast" if backend == "gpu" else "exact").split(",")
    timeout = float(got.get("--timeout", 180))
    out = Tsv(got.get("--tsv"))
    env = dict(os.environ)
    if "PHOBOS_CACHE_DIR" not in env:
        # A fresh tuning cache: tuned rows tune now, on this device.
        env["PHOBOS_CACHE_DIR"] = tempfile.mkdtemp(prefix="phobos-fused-cache.")
    print("Phobos %s: %s, 2^%d f32 elements, median (fastest) of %s launches after a warm-up; GiB/s of the bytes "
          "the kernel reads and writes (X, Y, and G, B); PHOBOS_CACHE_DIR=%s\n"
          % (backend, phobosc, log2, runs, env["PHOBOS_CACHE_DIR"]), flush=True)
    for op in OPS:
        path = os.path.join(REPO, "examples", op + ".ph")
        try:
            configs = autotune_configs(path)
        except OSError as e:
            out.add(side="phobos", backend=backend, op=op, impl="Phobos", note="n/a (%s)" % house.short(e))
            progress("%s: n/a (%s)" % (op, house.short(e)))
            continue
        # Tuned at first launch, as `phobosc run` launches it (on the GPU over
        # the workgroup sizes too), and, where there are several, each
        # @autotune configuration fixed (the heuristic's workgroup size). The
        # CPU has no lowering choice: one configuration is run fixed.
        if len(configs) > 1:
            choices = configs + [None]
        elif backend == "gpu" or not configs:
            choices = [None]
        else:
            choices = configs
        for n, m in shapes:
            for precision in precisions:
                for cfg in choices:
                    cmd = [phobosc, "bench", "--backend", backend, "--precision", precision, "--json", "--runs", runs,
                           "--dim", "M=%d" % m, "--dim", "N=%d" % n, "--arg", "seed=%d" % SEED]
                    if "--threads" in got:
                        cmd += ["--threads", got["--threads"]]
                    for c in cfg or []:
                        cmd += ["--config", c]
                    cmd.append(path)
                    phobos_row(out, cmd, env, timeout, backend, op, n, m, precision, cfg, devices)


def phobos_row(out, cmd, env, timeout, backend, op, n, m, precision, cfg, devices):
    what = "fixed " + ",".join(cfg) if cfg is not None else "tuned"
    impl = "Phobos %s" % precision
    t0 = time.perf_counter()
    try:
        r = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout)
        if r.returncode != 0:
            tail = [ln for ln in (r.stderr + r.stdout).splitlines() if ln.strip()]
            raise RuntimeError("exit %d: %s" % (r.returncode, " / ".join(tail[-3:]) or "no output"))
        j = json.loads(r.stdout[r.stdout.index("{"):])
    except subprocess.TimeoutExpired:
        note = "n/a (no result in %.0f s)" % timeout
        j = None
    except Exception as e:
        note = "n/a (%s)" % house.short(e)
        j = None
    secs = time.perf_counter() - t0
    if j is None:
        out.add(side="phobos", backend=backend, op=op, N=n, M=m, impl=impl, config=what, note=note)
        progress("phobos %s %s N=%d %s %s: %s (%.1f s)" % (backend, op, n, precision, what, note, secs))
        return
    config = ",".join("%s=%s" % kv for kv in sorted(j.get("config", {}).items()))
    if backend == "gpu":
        config += ", workgroup %s" % j.get("workgroup_size")
    device = j.get("device", "?")
    if device not in devices:
        devices.add(device)
        out.add(side="phobos", backend=backend, op="device", impl="Phobos device", note=device)
        progress("Phobos %s device: %s" % (backend, device))
    tuning = (j.get("tuning") or {}).get("source", "?")
    if tuning != ("fixed" if cfg is not None else "tuned"):
        what += " (tuning: %s)" % tuning
    on = "%s threads" % j.get("threads") if backend == "cpu" else "workgroup %s" % j.get("workgroup_size")
    note = "%s; %s; wall %.1f s" % (what, on, secs)
    out.add(side="phobos", backend=backend, op=op, N=n, M=m, impl=impl, config=config,
            median_gib=float(j["median_gib_s"]), fastest_gib=float(j["fastest_gib_s"]), bytes=j["bytes"], note=note)
    progress("phobos %s %s N=%d %s %s [%s]: %.1f GiB/s (%.1f s)" % (backend, op, n, precision, what, config, j["median_gib_s"], secs))


# ------------------------------------------------------------------ report


def read_tsv(paths):
    rows = []
    for p in paths:
        try:
            with open(p) as f:
                lines = [ln.rstrip("\n").split("\t") for ln in f if ln.strip()]
        except OSError as e:
            print("(%s: %s)" % (p, house.short(e)))
            continue
        for cells in lines[1:]:
            rows.append(dict(zip(TSV_FIELDS, cells + [""] * (len(TSV_FIELDS) - len(cells)))))
    return rows


def value(r):
    try:
        return float(r["median_gib"])
    except (TypeError, ValueError, KeyError):
        return None


def best(rows, **match):
    """The row with the highest median among those matching, or None."""
    cands = [r for r in rows if all(str(r[k]) == str(v) for k, v in match.items())]
    ok = [r for r in cands if value(r) is not None]
    if ok:
        return max(ok, key=value)
    return cands[0] if cands else None


def report(rows):
    """Merged markdown tables of whatever rows are present."""
    for r in rows:
        if r["impl"] == "Phobos device":
            print("- Phobos %s device: %s" % (r["backend"], r["note"]))
        if r["impl"] == "ceiling candidate":
            print("- CUDA %s candidate, %s bytes moved: %s" % (r["op"], r["bytes"], r["config"] + ": " + r["note"]))
    ceils = [r for r in rows if r["op"] == "copy" and r["impl"] == "CUDA copy ceiling" and value(r) is not None]
    ceil = value(ceils[0]) if ceils else None
    for r in [r for r in rows if r["op"] == "copy" and r["impl"].startswith("CUDA copy")]:
        if value(r) is None:
            print("- %s: n/a (%s)" % (r["impl"], r["note"]))
            continue
        print("- %s (%s), %s bytes moved: %s GiB/s (fastest %s)%s"
              % (r["impl"], r["config"], r["bytes"], fnum(r["median_gib"]), fnum(r["fastest_gib"]),
                 ", " + r["note"] if r["note"] else ""))
    if ceils:
        print("- Shares below are of the first (start of run). The Phobos side is judged against this CUDA "
              "ceiling too: neither `phobosc bench` nor `phobos-bench-table` prints wgpu's true copy ceiling "
              "on its own (bench/RESULTS.md's issue-11 run found the two within 0.2%: 3975 and 3970 GiB/s).")

    def pct(r):
        v = None if r is None else value(r)
        return "n/a" if v is None else fnum(v) if ceil is None else "%s (%.0f%%)" % (fnum(v), 100 * v / ceil)

    gpu = [r for r in rows if r["backend"] in ("gpu", "cuda") and r["op"] in OPS]
    if gpu:
        precisions = sorted({r["impl"] for r in gpu if r["side"] == "phobos"})
        head = ["op", "N", "M"] + [p + " (best config)" for p in precisions]
        head += ["PyTorch eager", "torch.compile", "Triton fused"] + [p + " / Triton" for p in precisions]
        print("\n| %s |" % " | ".join(head))
        print("|%s" % ("---|" * len(head)))
        for op in OPS:
            for n in sorted({int(r["N"]) for r in gpu if r["op"] == op and r["N"]}):
                ours = [best(gpu, side="phobos", op=op, N=n, impl=p) for p in precisions]
                tr = best(gpu, side="peers", op=op, N=n, impl="Triton fused")
                vt = None if tr is None else value(tr)
                ratios = ["n/a" if r is None or value(r) is None or not vt else "%.2f" % (value(r) / vt) for r in ours]
                m = next((r["M"] for r in gpu if r["op"] == op and str(r["N"]) == str(n)), "")
                cells = [op, str(n), str(m)] + [pct(r) for r in ours]
                cells += [pct(best(gpu, side="peers", op=op, N=n, impl=i)) for i in ("PyTorch eager", "torch.compile")]
                cells += [pct(tr)] + ratios
                print("| %s |" % " | ".join(cells))
        print("\nTargets: Phobos >= 85% of the copy ceiling and >= 1.1x the Triton kernel, rows 1024 to 8192.")
        print("\n| side | op | N | impl | config | GiB/s median (fastest) | note |")
        print("|---|---|---|---|---|---|---|")
        for r in gpu:
            print("| %s | %s | %s | %s | %s | %s (%s) | %s |" % (r["side"], r["op"], r["N"], r["impl"], r["config"],
                                                                fnum(r["median_gib"]), fnum(r["fastest_gib"]), r["note"]))
    cpu = [r for r in rows if r["backend"] == "cpu" and r["op"] in OPS]
    if cpu:
        print("\n| op | N | M | Phobos CPU (Cranelift) GiB/s | threads | NumPy unfused GiB/s | Phobos / NumPy (target >= 2) |")
        print("|---|---|---|---|---|---|---|")
        for op in OPS:
            for n in sorted({int(r["N"]) for r in cpu if r["op"] == op and r["N"]}):
                ph = best(cpu, side="phobos", op=op, N=n)
                npy = best(cpu, side="numpy", op=op, N=n)
                vp, vn = value(ph or {}), value(npy or {})
                threads = "" if ph is None or ph["note"].count("; ") < 1 else ph["note"].split("; ")[1]
                m = (ph or npy or {}).get("M", "")
                ratio = "n/a" if vp is None or not vn else "%.2f" % (vp / vn)
                print("| %s | %d | %s | %s | %s | %s | %s |" % (op, n, str(m), fnum(vp) if vp is not None else (ph or {}).get("note", "n/a"),
                                                                threads, fnum(vn) if vn is not None else (npy or {}).get("note", "n/a"), ratio))
    bad = [r for r in rows if r["note"].startswith("CHECK FAILED")]
    for r in bad:
        print("CHECK FAILED: %s %s N=%s %s" % (r["impl"], r["op"], r["N"], r["note"]))


def report_main(argv):
    rows = read_tsv(argv)
    report(rows)
    print("\n## All figures (TSV)\n")
    print("\t".join(TSV_FIELDS))
    for r in rows:
        print("\t".join(r[k] for k in TSV_FIELDS))


if __name__ == "__main__":
    modes = {"gpu": gpu_main, "numpy": numpy_main, "phobos": phobos_main, "report": report_main}
    if len(sys.argv) < 2 or sys.argv[1] not in modes:
        print(__doc__)
        sys.exit(2)
    try:
        modes[sys.argv[1]](sys.argv[2:])
    except SystemExit:
        raise
    except Exception:
        traceback.print_exc()
        sys.exit(1)
