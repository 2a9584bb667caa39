"""The cost of a call from Python against the Rust API, and a fill of
2^LOG2 elements against NumPy's Generator.random and torch.rand on the CPU
(bench/RESULTS.md, "Python").

    python python/bench/call.py [--backends cpu,interp,gpu] [--log2 24]
    cargo run --release -p phobos-python --example call_overhead -- cpu interp gpu   # the Rust side
"""

import argparse
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
    ap = argparse.ArgumentParser()
    ap.add_argument("--backends", default="cpu,interp")
    ap.add_argument("--log2", type=int, default=24)
    args = ap.parse_args()
    k = phobos.compile(ROOT / "examples" / "dropout_rows.ph").dropout_rows
    x = np.arange(16 * 256, dtype=np.float32).reshape(16, 256)
    out = np.zeros_like(x)
    runs_of = {"cpu": 2000, "interp": 200, "gpu": 2000}
    for backend in args.backends.split(","):
        runs = runs_of[backend]
        med, low = timed(lambda: k(X=x, seed=1, backend=backend), runs)
        print(f"python {backend:<6} dropout_rows 16x256: median {med:.1f} us, fastest {low:.1f} us ({runs} calls)")
        med, low = timed(lambda: k(X=x, seed=1, backend=backend, out=out), runs)
        print(f"python {backend:<6} dropout_rows 16x256, out=: median {med:.1f} us, fastest {low:.1f} us ({runs} calls)")
    n = 1 << args.log2
    e = f"2^{args.log2}"
    rng = np.random.default_rng(1)
    rows = [
        (f"phobos.fill('f64', key=1, count={e})", lambda: phobos.fill("f64", key=1, count=n, backend="cpu")),
        (f"numpy Generator.random({e})", lambda: rng.random(n)),
        (f"phobos.fill('f32', key=1, count={e})", lambda: phobos.fill("f32", key=1, count=n, backend="cpu")),
        (f"numpy Generator.random({e}, float32)", lambda: rng.random(n, dtype=np.float32)),
        (f"phobos.fill('normal_f64', key=1, count={e})", lambda: phobos.fill("normal_f64", key=1, count=n, backend="cpu")),
        (f"numpy Generator.standard_normal({e})", lambda: rng.standard_normal(n)),
    ]
    if "gpu" in args.backends:
        rows += [
            (f"phobos.fill('f32', key=1, count={e}, backend='gpu') (into host memory)",
             lambda: phobos.fill("f32", key=1, count=n, backend="gpu")),
        ]
    try:
        import torch

        torch.manual_seed(1)
        rows += [
            (f"torch.rand({e}, float64)", lambda: torch.rand(n, dtype=torch.float64)),
            (f"torch.rand({e}, float32)", lambda: torch.rand(n, dtype=torch.float32)),
            (f"torch.randn({e}, float64)", lambda: torch.randn(n, dtype=torch.float64)),
        ]
        print(f"# torch {torch.__version__}, {torch.get_num_threads()} threads")
    except ImportError:
        print("# torch is not installed: no torch rows")
    for name, f in rows:
        med, low = timed(f, 9, warm=2)
        print(f"{name}: median {med / 1e3:.1f} ms, fastest {low / 1e3:.1f} ms")


if __name__ == "__main__":
    main()
