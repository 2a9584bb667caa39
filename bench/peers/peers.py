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
"""

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
        main(sys.argv[1:])
    except Exception:
        traceback.print_exc()
        sys.exit(1)
