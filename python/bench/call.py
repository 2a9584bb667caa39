"""The cost of a call from Python against the Rust API, and a 2^24-element
fill against NumPy's Generator.random (bench/RESULTS.md, "Python").

    python python/bench/call.py        # with the wheel installed (release)
    cargo run --release -p phobos-python --example call_overhead   # the Rust side
"""

import pathlib
import statistics
import time

import numpy as np

import phobos

ROOT = pathlib.Path(__file__).resolve().parents[2]


def timed(f, runs, warm=20):
    for _ in range(warm):
        f()
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        f()
        times.append((time.perf_counter() - t) * 1e6)
    return statistics.median(times), min(times)


def main():
    k = phobos.compile(ROOT / "examples" / "dropout_rows.ph").dropout_rows
    x = np.arange(16 * 256, dtype=np.float32).reshape(16, 256)
    out = np.zeros_like(x)
    for backend, runs in (("cpu", 2000), ("interp", 200)):
        med, low = timed(lambda: k(X=x, seed=1, backend=backend), runs)
        print(f"python {backend:<6} dropout_rows 16x256: median {med:.1f} us, fastest {low:.1f} us ({runs} calls)")
        med, low = timed(lambda: k(X=x, seed=1, backend=backend, out=out), runs)
        print(f"python {backend:<6} dropout_rows 16x256, out=: median {med:.1f} us, fastest {low:.1f} us ({runs} calls)")
    n = 1 << 24
    rng = np.random.default_rng(1)
    rows = [
        ("phobos.fill('f64', key=1, count=2^24)", lambda: phobos.fill("f64", key=1, count=n)),
        ("numpy Generator.random(2^24)", lambda: rng.random(n)),
        ("phobos.fill('f32', key=1, count=2^24)", lambda: phobos.fill("f32", key=1, count=n)),
        ("numpy Generator.random(2^24, float32)", lambda: rng.random(n, dtype=np.float32)),
        ("phobos.fill('normal_f64', key=1, count=2^24)", lambda: phobos.fill("normal_f64", key=1, count=n)),
        ("numpy Generator.standard_normal(2^24)", lambda: rng.standard_normal(n)),
    ]
    for name, f in rows:
        med, low = timed(f, 9, warm=2)
        print(f"{name}: median {med / 1e3:.1f} ms, fastest {low / 1e3:.1f} ms")


if __name__ == "__main__":
    main()
