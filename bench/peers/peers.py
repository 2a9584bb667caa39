#!/usr/bin/env python3
"""The peers' side of `phobos-bench-tandem-gpu` (issue 5): cuRAND
Philox4x32-10 through CuPy's host-API bindings and PyTorch's in-place
random fills, row by row with the same names and element counts as the
Rust benchmark, each against its own library's zero fill over the same
bytes measured in the same run (cudaMemsetAsync through CuPy for cuRAND,
`zero_()` of a byte tensor for PyTorch).

    python3 bench/peers/peers.py [LOG2_N] [FILTER ...]

LOG2_N (default 28): 2^LOG2_N elements of each type unless the row names
a length. A FILTER keeps the rows whose name contains it (any of several).

Method, as the Rust side: half a second of back-to-back calls (each
synchronised) as warm-up, then 21 calls each between two CUDA events, one
synchronisation at the end; the median (and fastest) of the 21 as GiB/s of
the bytes the call writes. Like the seed's table, a call that does not
produce the row's output is marked "nearest": cuRAND has no 8-, 16- or
64-bit integer output for Philox (`curandGenerate` writes the same bytes as
32-bit words), nor half floats, bools, bounded integers, exponentials or
choice; a normal row's start draw is a generator offset in cuRAND (set
before every call, so every call writes the same numbers). PyTorch has no
offsets, and some of its integer types lack `random_`, so those rows take
the nearest call that runs (the first of a row's candidates in `rows()` that runs).
A missing library or a call that fails prints "n/a" and the run goes on.

    python3 bench/peers/peers.py --table [LOG2_N] [--no-compile] [--phobos TSV]

The peers' side of issue 11's one table (`bench/table.sh` runs both sides):
cuRAND, PyTorch and Triton kernels written for the comparison
(`triton_kernels.py`: `tl.rand` / `tl.randn` / `tl.randint` fills, dropout
on `tl.rand` as Triton's tutorial writes it, noise on `tl.randn`, each at
the best of a few BLOCK sizes) for the rows u32, f32, f64, normal_f32,
normal_f64, exp_f32, dropout (also PyTorch's `F.dropout`) and noise (also
PyTorch's unfused `randn` + `add`), timed as above, each against the
fastest CUDA zero fill (cudaMemsetAsync, `zero_()`, a Triton kernel) or
copy (cudaMemcpyAsync, `copy_()`, a Triton kernel) of the same bytes in
this run; dropout and noise count x and y (8 bytes per element). Also the
Triton dropout kernel's compile and first launch, cold (an empty
TRITON_CACHE_DIR) and warm from that cache, each in a fresh process. With
`--phobos TSV` (from `phobos-bench-table --tsv`), last the one table:
Phobos beside each peer, each as GiB/s and as a share of its own run's
ceiling.
"""

import os
import sys
import time
import traceback

RUNS = 21
WARM_UP_S = 0.5
GIB = float(1 << 30)
SEED = 1


def gib(nbytes, secs):
    return nbytes / secs / GIB


# ---------------------------------------------------------------- libraries


def load_cupy():
    try:
        import cupy

        try:
            from cupy.cuda import curand
        except ImportError:
            from cupy_backends.cuda.libs import curand
        if cupy.cuda.runtime.getDeviceCount() < 1:
            return None, None, "CuPy sees no CUDA device"
        return cupy, curand, None
    except Exception as e:  # ImportError, CUDA driver errors
        return None, None, "CuPy unavailable: %s" % short(e)


def load_torch():
    try:
        import torch

        if not torch.cuda.is_available():
            return None, "PyTorch sees no CUDA device"
        return torch, None
    except Exception as e:
        return None, "PyTorch unavailable: %s" % short(e)


def short(e):
    s = ("%s: %s" % (type(e).__name__, e)).replace("\n", " ").replace("|", "/")
    return s if len(s) <= 90 else s[:87] + "..."


# --------------------------------------------------------------------- rows

# cuRAND calls: name -> bytes per value it writes.
CURAND_VALUE_BYTES = {
    "curandGenerate": 4,
    "curandGenerateUniform": 4,
    "curandGenerateUniformDouble": 8,
    "curandGenerateNormal": 4,
    "curandGenerateNormalDouble": 8,
}


def raw(dtype, nearest=False):
    """`torch.empty(..., dtype).random_()`."""
    return ("%s random_()" % dtype, dtype, lambda t: t.random_(), nearest)


def below(dtype, lo, hi, nearest=False):
    label = "%s random_(%s, %s)" % (dtype, fmt_int(lo), fmt_int(hi))
    return (label, dtype, lambda t: t.random_(lo, hi), nearest)


def method(dtype, name, nearest=False, *args):
    label = "%s %s(%s)" % (dtype, name, ", ".join(str(a) for a in args))
    return (label, dtype, lambda t: getattr(t, name)(*args), nearest)


def fmt_int(v):
    for base in (63, 64, 40, 32, 31):
        for sign, adj in ((1, 0), (1, -1), (1, -2), (1, 1), (1, 6), (-1, 0), (-1, 6), (-1, -1)):
            if v == sign * (1 << base) + adj:
                s = "2^%d" % base if sign > 0 else "-2^%d" % base
                return s + ("" if adj == 0 else "%+d" % adj)
    return str(v)


def rows(n):
    """(name, row element bytes, count, start, cuRAND (call, nearest),
    PyTorch candidates [(label, dtype, op, nearest)]): the Rust rows."""
    r = []

    def add(name, size, curand, torch, count=n, start=0):
        r.append((name, size, count, start, curand, torch))

    gen, uni, unid = "curandGenerate", "curandGenerateUniform", "curandGenerateUniformDouble"
    norm, normd = "curandGenerateNormal", "curandGenerateNormalDouble"
    for suffix in ("", ", K=4"):
        add("u32" + suffix, 4, (gen, False), [raw("uint32"), raw("int32", True)])
        add("u64" + suffix, 8, (gen, True), [raw("uint64"), raw("int64", True)])
        add("f32" + suffix, 4, (uni, False), [method("float32", "uniform_")])
        add("f64" + suffix, 8, (unid, False), [method("float64", "uniform_")])
    add("u16", 2, (gen, True), [raw("uint16"), raw("int16", True)])
    add("f16", 2, (gen, True), [method("float16", "uniform_")])
    add("u8", 1, (gen, True), [raw("uint8")])
    add(
        "bool",
        1,
        (gen, True),
        [method("bool", "bernoulli_", False, 0.5), raw("bool"), below("uint8", 0, 2, True)],
    )
    add("below_u32(1000)", 4, (gen, True), [below("int32", 0, 1000)])
    add("below_u64(1000)", 8, (gen, True), [below("int64", 0, 1000)])
    add(
        "below_u32(2^32-2)",
        4,
        (gen, True),
        [below("uint32", 0, (1 << 32) - 2), raw("int32", True)],
    )
    add(
        "below_u64(2^64-2)",
        8,
        (gen, True),
        [below("uint64", 0, (1 << 64) - 2), raw("int64", True)],
    )
    add("below_i32(-10, 21)", 4, (gen, True), [below("int32", -10, 11)])
    add(
        "below_i64_u32(-2^40, 6)",
        8,
        (gen, True),
        [below("int64", -(1 << 40), -(1 << 40) + 6)],
    )
    add(
        "below_i64(-2^63, 2^64-1)",
        8,
        (gen, True),
        [below("int64", -(1 << 63), (1 << 63) - 1), raw("int64", True)],
    )
    add(
        "below_u32(2^31+1)",
        4,
        (gen, True),
        [below("uint32", 0, (1 << 31) + 1), below("int64", 0, (1 << 31) + 1, True)],
    )
    add(
        "below_u64(2^63+1)",
        8,
        (gen, True),
        [below("uint64", 0, (1 << 63) + 1), raw("int64", True)],
    )
    nd = [method("float64", "normal_")]
    add("normal_f64", 8, (normd, False), nd)
    add("normal_f64, start 1 (odd draw)", 8, (normd, False), nd, start=1)
    add("normal_f64, start 3 (draw 3)", 8, (normd, False), nd, start=3)
    for log2 in (24, 20):
        for start in (0, 1):
            add(
                "normal_f64, 2^%d, start %d" % (log2, start),
                8,
                (normd, False),
                nd,
                count=1 << log2,
                start=start,
            )
    add("normal_f32", 4, (norm, False), [method("float32", "normal_")])
    add("exp_f64", 8, (unid, True), [method("float64", "exponential_")])
    add("exp_f32", 4, (uni, True), [method("float32", "exponential_")])
    multinomial = ("int64 multinomial(1000 weights, replacement)", "int64", "multinomial", False)
    add("choice(1000 weights)", 4, (gen, True), [multinomial])
    return r


# ------------------------------------------------------------------- timing


def time_calls(call, sync, event, elapsed_ms):
    """Median and fastest seconds of RUNS calls after WARM_UP_S of warm-up."""
    t0 = time.perf_counter()
    while True:
        call()
        sync()
        if time.perf_counter() - t0 >= WARM_UP_S:
            break
    events = [(event(), event()) for _ in range(RUNS)]
    for start, end in events:
        start.record()
        call()
        end.record()
    sync()
    t = sorted(elapsed_ms(s, e) / 1e3 for s, e in events)
    return t[len(t) // 2], t[0]


class Curand:
    def __init__(self, cupy, curand):
        self.cupy, self.curand = cupy, curand
        philox = getattr(curand, "CURAND_RNG_PSEUDO_PHILOX4_32_10", 161)
        self.gen = curand.createGenerator(philox)
        curand.setPseudoRandomGeneratorSeed(self.gen, SEED)
        self.ceilings = {}

    def time(self, call, nbytes, count, offset):
        cp, cr = self.cupy, self.curand
        buf = cp.empty(nbytes, dtype=cp.uint8)
        ptr = buf.data.ptr
        fn = {
            "curandGenerate": lambda: cr.generate(self.gen, ptr, nbytes // 4),
            "curandGenerateUniform": lambda: cr.generateUniform(self.gen, ptr, count),
            "curandGenerateUniformDouble": lambda: cr.generateUniformDouble(self.gen, ptr, count),
            "curandGenerateNormal": lambda: cr.generateNormal(self.gen, ptr, count, 0.0, 1.0),
            "curandGenerateNormalDouble": lambda: cr.generateNormalDouble(self.gen, ptr, count, 0.0, 1.0),
        }[call]

        def once():
            # Host state only for Philox: every call writes the same numbers.
            cr.setGeneratorOffset(self.gen, offset)
            fn()

        try:
            return self._time(once)
        finally:
            del buf

    def ceiling(self, nbytes):
        if nbytes not in self.ceilings:
            cp = self.cupy
            buf = cp.empty(nbytes, dtype=cp.uint8)
            ptr = buf.data.ptr
            self.ceilings[nbytes] = self._time(lambda: cp.cuda.runtime.memsetAsync(ptr, 0, nbytes, 0))
            del buf
        return self.ceilings[nbytes]

    def _time(self, call):
        cp = self.cupy
        return time_calls(
            call,
            cp.cuda.runtime.deviceSynchronize,
            lambda: cp.cuda.Event(),
            lambda s, e: cp.cuda.get_elapsed_time(s, e),
        )

    def release(self):
        self.cupy.get_default_memory_pool().free_all_blocks()


class Torch:
    def __init__(self, torch):
        self.torch = torch
        torch.manual_seed(SEED)
        self.weights = torch.arange(1, 1001, dtype=torch.float64, device="cuda")
        self.ceilings = {}

    def time(self, candidates, count):
        """The first candidate that runs: (label, nearest, bytes, (med, fast))
        or raises with the last error."""
        torch = self.torch
        last = None
        for label, dtype, op, nearest in candidates:
            dt = getattr(torch, dtype, None)
            if dt is None:
                last = "torch.%s missing" % dtype
                continue
            try:
                t = torch.empty(count, dtype=dt, device="cuda")
                if op == "multinomial":
                    w = self.weights

                    def call(t=t, w=w):
                        torch.multinomial(w, count, replacement=True, out=t)

                else:

                    def call(t=t, op=op):
                        op(t)

                call()
                torch.cuda.synchronize()
            except Exception as e:
                last = "%s: %s" % (label, short(e))
                continue
            nbytes = t.numel() * t.element_size()
            return label, nearest, nbytes, self._time(call)
        raise RuntimeError(last or "no candidate")

    def ceiling(self, nbytes):
        if nbytes not in self.ceilings:
            buf = self.torch.empty(nbytes, dtype=self.torch.uint8, device="cuda")
            self.ceilings[nbytes] = self._time(lambda: buf.zero_())
            del buf
        return self.ceilings[nbytes]

    def _time(self, call):
        torch = self.torch
        return time_calls(
            call,
            torch.cuda.synchronize,
            lambda: torch.cuda.Event(enable_timing=True),
            lambda s, e: s.elapsed_time(e),
        )

    def release(self):
        self.torch.cuda.empty_cache()


# -------------------------------------------------- the table (issue 11)

# Elements of f32 kernels and 32-bit fills; f64 fills write twice the bytes.
TABLE_FILLS = [
    # (row, bytes per element, cuRAND call, PyTorch candidates, Triton kernel)
    ("u32", 4, "curandGenerate", [raw("uint32"), raw("int32", True)], "randint_fill"),
    ("f32", 4, "curandGenerateUniform", [method("float32", "uniform_")], "rand_fill"),
    ("f64", 8, "curandGenerateUniformDouble", [method("float64", "uniform_")], None),
    ("normal_f32", 4, "curandGenerateNormal", [method("float32", "normal_")], "randn_fill"),
    ("normal_f64", 8, "curandGenerateNormalDouble", [method("float64", "normal_")], None),
    ("exp_f32", 4, None, [method("float32", "exponential_")], None),
]
# The Rust side's kernel rows and which peer kernels they compare with.
TABLE_KERNELS = [
    ("dropout_rows exact R=16", "dropout"),
    ("dropout_rows exact R=64", "dropout"),
    ("tandem dropout R=16", "dropout"),
    ("tandem dropout R=64", "dropout"),
    ("tandem noise R=16", "noise"),
    ("tandem noise R=64", "noise"),
    # The fills written as Phobos kernels (phobos-bench-table's FILL_KERNELS),
    # beside the same fills' peers.
    ("u32 as a Phobos kernel R=16", "u32"),
    ("u32 as a Phobos kernel R=64", "u32"),
    ("f32 as a Phobos kernel R=16", "f32"),
    ("f32 as a Phobos kernel R=64", "f32"),
    ("normal_f32 as a Phobos kernel R=16", "normal_f32"),
    ("normal_f32 as a Phobos kernel R=64", "normal_f32"),
]
TRITON_BLOCKS = (512, 1024, 2048, 4096)
DROPOUT_P = 0.1
# Triton specialises integer arguments equal to 1; any other seed keeps the
# kernels' seed a runtime value, as a user's would be.
TRITON_SEED = 12345


def load_triton():
    """The module of Triton kernels, or None and why."""
    try:
        import triton_kernels

        return triton_kernels, None
    except Exception as e:
        return None, "Triton unavailable: %s" % short(e)


class Peers:
    """Every peer measurement of the table: {(row kind, peer): (GiB/s median,
    GiB/s fastest, label)}, and the CUDA ceilings they are judged against."""

    def __init__(self, n, cr, th, tk):
        self.n, self.cr, self.th, self.tk = n, cr, th, tk
        self.cells = {}
        self.ceilings = {}  # (kind, bytes) -> (GiB/s, GiB/s fastest, label)
        self.candidates = []  # (what, bytes, GiB/s, GiB/s fastest)

    def _candidate(self, kind, nbytes, moved, label, timed):
        """Times one ceiling candidate and keeps the fastest per kind."""
        try:
            t = timed()
        except Exception as e:
            self.candidates.append((kind, label, nbytes, "n/a (%s)" % short(e)))
            return
        g, f = gib(moved, t[0]), gib(moved, t[1])
        self.candidates.append((kind, label, nbytes, "%.0f (%.0f)" % (g, f)))
        best = self.ceilings.get((kind, nbytes))
        if best is None or g > best[0]:
            self.ceilings[(kind, nbytes)] = (g, f, label)

    def measure_ceilings(self, nbytes):
        """The CUDA zero fill of `nbytes` and, for 32-bit elements, the copy of
        `nbytes` in and out, by every library present: the fastest is the
        ceiling."""
        if self.cr is not None:
            cp = self.cr.cupy
            buf = cp.empty(nbytes, dtype=cp.uint8)
            self._candidate(
                "zero", nbytes, nbytes, "cudaMemsetAsync (CuPy)",
                lambda: self.cr._time(lambda: cp.cuda.runtime.memsetAsync(buf.data.ptr, 0, nbytes, 0)),
            )
            del buf
            self.cr.release()
        if self.th is None:
            return
        torch = self.th.torch
        y = torch.empty(nbytes, dtype=torch.uint8, device="cuda")
        self._candidate("zero", nbytes, nbytes, "uint8 zero_() (PyTorch)", lambda: self.th._time(lambda: y.zero_()))
        if self.tk is not None:
            y32 = y.view(torch.int32)
            self._candidate(
                "zero", nbytes, nbytes, "Triton zero kernel",
                lambda: self.best_triton(self.tk.zero, lambda k, b: k[(triton_grid(y32.numel(), b),)](y32, y32.numel(), BLOCK=b))[:2],
            )
        if nbytes == 4 * self.n:
            x = torch.empty(nbytes, dtype=torch.uint8, device="cuda")
            x.fill_(1)
            self._candidate("copy", nbytes, 2 * nbytes, "copy_() (PyTorch, cudaMemcpyAsync)", lambda: self.th._time(lambda: y.copy_(x)))
            if self.cr is not None:
                cp = self.cr.cupy
                d2d = getattr(cp.cuda.runtime, "memcpyDeviceToDevice", 3)
                self._candidate(
                    "copy", nbytes, 2 * nbytes, "cudaMemcpyAsync device to device (CuPy)",
                    lambda: self.cr._time(lambda: cp.cuda.runtime.memcpyAsync(y.data_ptr(), x.data_ptr(), nbytes, d2d, 0)),
                )
            if self.tk is not None:
                x32, y32 = x.view(torch.int32), y.view(torch.int32)
                self._candidate(
                    "copy", nbytes, 2 * nbytes, "Triton copy kernel",
                    lambda: self.best_triton(self.tk.copy, lambda k, b: k[(triton_grid(y32.numel(), b),)](x32, y32, y32.numel(), BLOCK=b))[:2],
                )
            del x
        del y
        self.th.release()

    def best_triton(self, kernel, launch):
        """(median, fastest, BLOCK) of the BLOCK in TRITON_BLOCKS whose median is
        lowest; `launch(kernel, BLOCK)` launches once."""
        best = None
        for b in TRITON_BLOCKS:
            t = self.th._time(lambda b=b: launch(kernel, b))
            if best is None or t[0] < best[0]:
                best = (t[0], t[1], b)
        return best

    def put(self, key, peer, nbytes, label, timed):
        try:
            t = timed()
            self.cells[(key, peer)] = (gib(nbytes, t[0]), gib(nbytes, t[1]), label(t))
        except Exception as e:
            self.cells[(key, peer)] = (None, None, "%s: n/a (%s)" % (label(None), short(e)))

    def fills(self):
        n = self.n
        for row, size, call, candidates, triton_name in TABLE_FILLS:
            nbytes = n * size
            if self.cr is not None and call is not None:
                self.put(row, "cuRAND", nbytes, lambda t, c=call: c, lambda c=call, b=nbytes: self.cr.time(c, b, n, 0))
                self.cr.release()
            if self.th is not None:
                found = {}

                def torch_fill(c=candidates):
                    label, nearest, tbytes, t = self.th.time(c, n)
                    found["label"] = label + (", nearest" if nearest else "")
                    if tbytes != nbytes:
                        raise RuntimeError("%s writes %d bytes, not %d" % (label, tbytes, nbytes))
                    return t

                self.put(row, "PyTorch", nbytes, lambda t, f=found, c=candidates: f.get("label", c[0][0]), torch_fill)
                self.th.release()
            if self.th is not None and self.tk is not None and triton_name is not None:
                torch = self.th.torch
                dtype = torch.int32 if row == "u32" else torch.float32
                y = torch.empty(n, dtype=dtype, device="cuda")
                kernel = getattr(self.tk, triton_name)
                self.put(
                    row, "Triton", nbytes,
                    lambda t, k=triton_name: "%s, BLOCK %s" % (k, t[2] if t else "?"),
                    lambda k=kernel: self.best_triton(k, lambda k, b: k[(triton_grid(n, b),)](y, n, TRITON_SEED, BLOCK=b)),
                )
                four = {"rand_fill": "rand4x_fill", "randn_fill": "randn4x_fill"}.get(triton_name)
                if four is not None:
                    k4 = getattr(self.tk, four)
                    self.put(
                        row, "Triton 4x", nbytes,
                        lambda t, k=four: "%s, BLOCK %s" % (k, t[2] if t else "?"),
                        lambda: self.best_triton(k4, lambda k, b: k[(triton_grid(n, 4 * b),)](y, n, TRITON_SEED, BLOCK=b)),
                    )
                del y
                self.th.release()

    def kernels(self):
        """Dropout and noise, counting x and y: 8 bytes per element."""
        if self.th is None:
            return
        torch, n = self.th.torch, self.n
        nbytes = 8 * n
        x = torch.rand(n, device="cuda").add_(1.0)
        y = torch.empty_like(x)
        tmp = torch.empty_like(x)
        F = torch.nn.functional
        self.put(
            "dropout", "PyTorch", nbytes, lambda t: "F.dropout(p=0.1) (also writes a mask)",
            lambda: self.th._time(lambda: F.dropout(x, DROPOUT_P, True)),
        )

        def unfused():
            torch.randn(n, out=tmp, device="cuda")
            torch.add(x, tmp, alpha=0.5, out=y)

        self.put("noise", "PyTorch", nbytes, lambda t: "randn + add, unfused (also writes and reads the draws)", lambda: self.th._time(unfused))
        if self.tk is not None:
            tk = self.tk
            self.put(
                "dropout", "Triton", nbytes, lambda t: "tl.rand dropout, BLOCK %s" % (t[2] if t else "?"),
                lambda: self.best_triton(tk.dropout, lambda k, b: k[(triton_grid(n, b),)](x, y, n, DROPOUT_P, TRITON_SEED, BLOCK=b)),
            )
            self.put(
                "noise", "Triton", nbytes, lambda t: "x + 0.5 * tl.randn, BLOCK %s" % (t[2] if t else "?"),
                lambda: self.best_triton(tk.noise, lambda k, b: k[(triton_grid(n, b),)](x, y, n, TRITON_SEED, BLOCK=b)),
            )
        del x, y, tmp
        self.th.release()


def triton_grid(n, per_program):
    return (n + per_program - 1) // per_program


def triton_compile(runs):
    """Cold and warm compile + first launch of the Triton dropout kernel, each in
    a fresh process: cold with an empty TRITON_CACHE_DIR, warm from the
    directory the cold run filled. Milliseconds or 'n/a (why)'."""
    import subprocess
    import tempfile

    out = []
    with tempfile.TemporaryDirectory(prefix="phobos-triton-cache-") as d:
        env = dict(os.environ, TRITON_CACHE_DIR=d)
        for _ in range(runs):
            try:
                p = subprocess.run(
                    [sys.executable, os.path.abspath(__file__), "--triton-compile-child"],
                    env=env, capture_output=True, text=True, timeout=600,
                )
                line = [l for l in p.stdout.splitlines() if l.startswith("COMPILE\t")]
                if p.returncode != 0 or not line:
                    why = (p.stderr.strip().splitlines() or ["no output"])[-1]
                    out.append("n/a (%s)" % short(RuntimeError(why)))
                else:
                    out.append(float(line[-1].split("\t")[1]))
            except Exception as e:
                out.append("n/a (%s)" % short(e))
    return out


def triton_compile_child():
    """In a fresh process: initialise CUDA and Triton's runtime with a small
    kernel of another signature, then time the dropout kernel's compile and
    first launch to its completion."""
    import torch

    tk, why = load_triton()
    if tk is None:
        raise RuntimeError(why)
    n = 1 << 20
    x = torch.ones(n, device="cuda")
    y = torch.empty_like(x)
    z = torch.empty(n, dtype=torch.int32, device="cuda")
    tk.zero[(triton_grid(n, 1024),)](z, n, BLOCK=1024)
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    tk.dropout[(triton_grid(n, 1024),)](x, y, n, DROPOUT_P, TRITON_SEED, BLOCK=1024)
    torch.cuda.synchronize()
    print("COMPILE\t%.2f" % ((time.perf_counter() - t0) * 1e3))


def read_phobos(path):
    """The Rust side's TSV (`phobos-bench-table --tsv`): rows, ceilings,
    compiles, device; or None."""
    if not path:
        return None
    try:
        lines = open(path).read().splitlines()
    except OSError as e:
        print("(no Phobos figures: %s)" % short(e))
        return None
    out = {"rows": {}, "ceilings": [], "compiles": {}, "device": "?"}
    for l in lines:
        f = l.split("\t")
        if f[0] == "row" and len(f) >= 8:
            out["rows"][f[1]] = dict(gib=float(f[3]), fast=float(f[4]), ceiling=f[5], ceil_gib=float(f[6]), check=f[7])
        elif f[0] == "ceiling" and len(f) >= 5:
            out["ceilings"].append((f[1], float(f[2]), float(f[3]), float(f[4])))
        elif f[0] == "compile" and len(f) >= 5:
            out["compiles"][f[1]] = f[2:5]
        elif f[0] == "device":
            out["device"] = f[1]
        elif f[0] == "elements":
            out["elements"] = int(f[1])
    return out


def num(v, digits=0):
    return "n/a" if v is None else "%.*f" % (digits, v)


def table_main(argv):
    begun = time.perf_counter()
    log2, phobos_path, compile_runs = 28, None, 2
    it = iter(argv)
    for a in it:
        if a == "--phobos":
            phobos_path = next(it, None)
        elif a == "--no-compile":
            compile_runs = 0
        elif a.isdigit():
            log2 = int(a)
    n = 1 << log2
    cupy, curand, cupy_why = load_cupy()
    torch, torch_why = load_torch()
    cr = th = tk = None
    if cupy is not None:
        try:
            cr = Curand(cupy, curand)
        except Exception as e:
            cupy_why = "cuRAND unavailable: %s" % short(e)
    if torch is not None:
        try:
            th = Torch(torch)
        except Exception as e:
            torch_why = "PyTorch CUDA unavailable: %s" % short(e)
    triton_why = "needs PyTorch"
    if th is not None:
        tk, triton_why = load_triton()
    versions = []
    for name, mod, why in (("cuRAND", cr, cupy_why), ("PyTorch", th, torch_why), ("Triton", tk, triton_why)):
        if mod is None:
            print("%s: n/a (%s)" % (name, why))
    if cr is not None:
        versions.append("CuPy %s, cuRAND %s" % (cupy.__version__, curand.getVersion()))
    if th is not None:
        versions.append("PyTorch %s (CUDA %s) on %s" % (torch.__version__, torch.version.cuda, torch.cuda.get_device_name()))
    if tk is not None:
        import triton

        versions.append("Triton %s" % triton.__version__)
    print("Peers: %s" % ("; ".join(versions) or "none"))
    print(
        "2^%d elements; median (fastest) of %d CUDA-event timings after %.1f s of warm-up; fills count "
        "bytes written, dropout and noise x and y; ceilings: the fastest CUDA zero fill / copy of the "
        "same bytes in this run; Triton: the best of BLOCK %s\n" % (log2, RUNS, WARM_UP_S, list(TRITON_BLOCKS))
    )
    peers = Peers(n, cr, th, tk)
    for nbytes in sorted({n * size for _, size, _, _, _ in TABLE_FILLS}):
        peers.measure_ceilings(nbytes)
    peers.fills()
    peers.kernels()
    compiles = triton_compile(compile_runs) if (tk is not None and compile_runs) else []

    print("| CUDA ceiling candidate | bytes | GiB/s median (fastest) |")
    print("|---|---|---|")
    for kind, label, nbytes, cell_text in peers.candidates:
        print("| %s: %s | %d | %s |" % (kind, label, nbytes, cell_text))
    print()
    print("| peer | row | call | GiB/s median (fastest) | % of CUDA ceiling |")
    print("|---|---|---|---|---|")
    kinds = [r[0] for r in TABLE_FILLS] + ["dropout", "noise"]
    for key in kinds:
        for peer in ("cuRAND", "PyTorch", "Triton", "Triton 4x"):
            c = peers.cells.get((key, peer))
            if c is None:
                continue
            ceil = peer_ceiling(peers, key, n)
            pct = "" if c[0] is None or ceil is None else "%.1f%% of %.0f" % (100.0 * c[0] / ceil, ceil)
            print("| %s | %s | %s | %s (%s) | %s |" % (peer, key, c[2], num(c[0]), num(c[1]), pct))
    if compiles:
        print("\nTriton dropout kernel, compile + first launch to completion, fresh processes: cold %s ms, warm from its cache %s ms"
              % tuple(num(c, 1) if isinstance(c, float) else c for c in (compiles + ["n/a", "n/a"])[:2]))

    ph = read_phobos(phobos_path)
    if ph is not None:
        print_merged(ph, peers, n, compiles)
    print("\npeers in %.0f s" % (time.perf_counter() - begun))


def peer_ceiling(peers, key, n):
    """The CUDA ceiling of a row kind: the zero fill of its bytes, the copy of
    the f32 elements for dropout and noise."""
    if key in ("dropout", "noise"):
        c = peers.ceilings.get(("copy", 4 * n))
    else:
        size = dict((r[0], r[1]) for r in TABLE_FILLS)[key]
        c = peers.ceilings.get(("zero", size * n))
    return None if c is None else c[0]


def print_merged(ph, peers, n, compiles):
    """The one table: Phobos beside every peer, each as GiB/s and as a share of
    its own run's true ceiling."""
    print("\n## One table: Phobos (%s) and its peers, 2^%d elements\n" % (ph["device"], n.bit_length() - 1))
    if ph.get("elements", n) != n:
        print("WARNING: the Phobos side ran %d elements, the peers %d\n" % (ph["elements"], n))
    for name, g, f, again in ph["ceilings"]:
        kind, nbytes = name.split(" ")
        what = "copy of %s bytes (in + out counted)" % nbytes if kind == "copy" else "zero fill of %s bytes" % nbytes
        print("- Phobos ceiling, %s: %.0f GiB/s (fastest %.0f; measured again at the end %.0f)" % (what, g, f, again))
    for (kind, nbytes), (g, f, label) in sorted(peers.ceilings.items()):
        what = "copy of %d bytes (in + out counted)" % nbytes if kind == "copy" else "zero fill of %d bytes" % nbytes
        print("- CUDA ceiling, %s: %.0f GiB/s (fastest %.0f), %s" % (what, g, f, label))
    print()
    available = {"cuRAND": peers.cr is not None, "PyTorch": peers.th is not None, "Triton": peers.tk is not None}
    print(
        "| row | Phobos GiB/s | % of ceiling | cuRAND | % | PyTorch | % | Triton | % | "
        "Phobos / best peer (Triton 4x included) |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    kinds = [(r[0], r[0]) for r in TABLE_FILLS] + [(row, kind) for row, kind in TABLE_KERNELS]
    for row, kind in kinds:
        p = ph["rows"].get(row)
        cells = []
        best = None
        ceil = peer_ceiling(peers, kind, n)
        for peer in ("cuRAND", "PyTorch", "Triton"):
            c = peers.cells.get((kind, peer))
            if c is None or c[0] is None:
                # n/a: the library is missing or the call failed; a dash:
                # the library has no such call.
                cells += ["—" if c is None and available[peer] else "n/a", ""]
                continue
            cells += [num(c[0]), "" if ceil is None else "%.0f%%" % (100.0 * c[0] / ceil)]
            best = c[0] if best is None else max(best, c[0])
        four = peers.cells.get((kind, "Triton 4x"))
        if four is not None and four[0] is not None:
            best = four[0] if best is None else max(best, four[0])
        if p is None:
            ours = ["n/a", ""]
        else:
            ours = [num(p["gib"]), "%.0f%%" % (100.0 * p["gib"] / p["ceil_gib"])]
        ratio = "" if p is None or best is None else "%.2f" % (p["gib"] / best)
        print("| %s | %s | %s | %s |" % (row, " | ".join(ours), " | ".join(cells), ratio))
    notes = []
    for (kind, peer), c in sorted(peers.cells.items()):
        if peer != "Triton 4x":
            notes.append("%s %s: %s" % (peer, kind, c[2]))
    if notes:
        print("\nPeer calls: " + "; ".join(notes) + ".")
    four = [(k, c) for (k, p), c in sorted(peers.cells.items()) if p == "Triton 4x" and c[0] is not None]
    if four:
        print("Extra: Triton with all four Philox words per call: " + "; ".join(
            "%s %.0f GiB/s (%s)" % (k, c[0], c[2]) for k, c in four) + ".")
    bad = [r for r, p in ph["rows"].items() if not p["check"].startswith("all ")]
    print("Phobos outputs: " + ("every row equal to its reference" if not bad else "DIFFER in " + ", ".join(bad)) + ".")
    if ph["compiles"]:
        print("\n| compile to first dispatch, ms | cold | warm (Phobos cache) | warm (both caches) |")
        print("|---|---|---|---|")
        for name, (cold, warm, both) in ph["compiles"].items():
            print("| Phobos %s | %s | %s | %s |" % (name.replace("compile ", ""), cold, warm, both))
        if compiles:
            c = [num(v, 1) if isinstance(v, float) else v for v in (compiles + ["n/a", "n/a"])[:2]]
            print("| Triton dropout (tl.rand), BLOCK 1024 | %s | %s (Triton cache) | |" % (c[0], c[1]))


# --------------------------------------------------------------------- main


def cell(nbytes, t, ceil):
    """'GiB/s median (fastest)' and '% of ceiling (ceiling GiB/s)'."""
    g = gib(nbytes, t[0])
    z = gib(nbytes, ceil[0])
    return "%.0f (%.0f)" % (g, gib(nbytes, t[1])), "%.1f%% of %.0f" % (100.0 * g / z, z)


def pow2(v):
    return "2^%d" % (v.bit_length() - 1) if v > 0 and v & (v - 1) == 0 else str(v)


def main(argv):
    begun = time.perf_counter()
    log2, filters = 28, []
    for a in argv:
        if a.isdigit() and int(a) < 40:
            log2 = int(a)
        else:
            filters.append(a)
    selected = [r for r in rows(1 << log2) if not filters or any(f in r[0] for f in filters)]

    cupy, curand, cupy_why = load_cupy()
    torch, torch_why = load_torch()
    cr = th = None
    if cupy is not None:
        try:
            cr = Curand(cupy, curand)
            props = cupy.cuda.runtime.getDeviceProperties(cupy.cuda.Device().id)
            name = props["name"]
            name = name.decode() if isinstance(name, bytes) else name
            print(
                "CuPy %s, cuRAND %s, device %s"
                % (cupy.__version__, curand.getVersion(), name)
            )
        except Exception as e:
            cr, cupy_why = None, "cuRAND unavailable: %s" % short(e)
    if cr is None:
        print("cuRAND: n/a (%s)" % cupy_why)
    if torch is not None:
        try:
            th = Torch(torch)
            print(
                "PyTorch %s (CUDA %s), device %s"
                % (torch.__version__, torch.version.cuda, torch.cuda.get_device_name())
            )
        except Exception as e:
            th, torch_why = None, "PyTorch CUDA unavailable: %s" % short(e)
    if th is None:
        print("PyTorch: n/a (%s)" % torch_why)
    print(
        "Peers: 2^%d elements of each type unless named; median (fastest) of %d CUDA-event "
        "timings after %.1f s of warm-up; GiB/s of the bytes each call writes; ceiling: "
        "cudaMemsetAsync (cuRAND) or uint8 zero_() (PyTorch) over the same bytes in this run\n"
        % (log2, RUNS, WARM_UP_S)
    )
    print(
        "| row | elements | cuRAND Philox4x32-10 call | GiB/s median (fastest) | % of memset | "
        "PyTorch call | GiB/s median (fastest) | % of zero_() |"
    )
    print("|---|---|---|---|---|---|---|---|")
    done = {}
    for name, size, count, start, (call, nearest), candidates in selected:
        elems = pow2(count) + ("" if start == 0 else " from %d" % start)
        cols = []
        # cuRAND
        label = call + (", offset %d" % start if start != 0 else "")
        label += ", nearest" if nearest else ""
        nbytes = count * size
        if call != "curandGenerate":
            nbytes = count * CURAND_VALUE_BYTES[call]
        if cr is None:
            cols += [label, "n/a", ""]
        else:
            key = ("curand", call, nbytes, count, start)
            try:
                if key not in done:
                    t = cr.time(call, nbytes, count, start if "Normal" in call else 0)
                    done[key] = cell(nbytes, t, cr.ceiling(nbytes))
                cols += [label] + list(done[key])
            except Exception as e:
                cols += [label, "n/a (%s)" % short(e), ""]
            finally:
                cr.release()
        # PyTorch
        if th is None:
            cols += ["—", "n/a", ""]
        else:
            key = ("torch", tuple(c[0] for c in candidates), count)
            try:
                if key not in done:
                    tlabel, tnear, tbytes, t = th.time(candidates, count)
                    done[key] = (tlabel, tnear, tbytes, cell(tbytes, t, th.ceiling(tbytes)))
                tlabel, tnear, tbytes, figures = done[key]
                if tnear or start != 0:
                    tlabel += ", nearest" + (" (no offset)" if start != 0 else "")
                if tbytes != count * size:
                    tlabel += " (%d-byte elements)" % (tbytes // count)
                cols += [tlabel] + list(figures)
            except Exception as e:
                cols += [candidates[0][0], "n/a (%s)" % short(e), ""]
            finally:
                th.release()
        print("| %s | %s | %s |" % (name, elems, " | ".join(cols)))
        sys.stdout.flush()
    print("\n%d rows in %.0f s" % (len(selected), time.perf_counter() - begun))


if __name__ == "__main__":
    try:
        if sys.argv[1:2] == ["--triton-compile-child"]:
            triton_compile_child()
        elif "--table" in sys.argv[1:]:
            table_main([a for a in sys.argv[1:] if a != "--table"])
        else:
            main(sys.argv[1:])
    except Exception:
        traceback.print_exc()
        sys.exit(1)
