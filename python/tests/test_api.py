"""The Python API: arguments, `out=`, other array types, errors that name
the parameter, compile errors with the CLI's text, and kernels running in
two threads at once with the GIL released."""

import subprocess
import threading
import time

import numpy as np
import pytest

import phobos
from conftest import EXAMPLES

TWICE = """
kernel twice(X: tensor<f32>[N], Y: tensor<f32>[N], s: f32) {
  Y = X * s
}
"""


@pytest.fixture(scope="module")
def dropout():
    return phobos.compile(EXAMPLES / "dropout_rows.ph").dropout_rows


@pytest.fixture(scope="module")
def twice():
    return phobos.compile(TWICE).twice


def test_a_call_returns_the_stored_array(twice):
    x = np.arange(10, dtype=np.float32)
    y = twice(X=x, s=2.5)
    assert y.dtype == np.float32 and y.shape == (10,)
    assert np.array_equal(y, x * np.float32(2.5))


def test_a_kernel_storing_several_tensors_returns_a_tuple():
    tile = phobos.compile(EXAMPLES / "random_tile.ph").random_tile
    u, n, d = tile(seed=1)
    assert u.shape == n.shape == d.shape == (8, 32)
    run = tile.run(seed=1)
    assert list(run.outputs) == ["uniform", "randn", "dropout"]
    assert run.outputs["uniform"].tobytes() == u.tobytes()


def test_out_writes_into_the_array_given(twice):
    x = np.arange(6, dtype=np.float32)
    out = np.zeros(6, np.float32)
    y = twice(X=x, s=3.0, out=out)
    assert y is out and np.array_equal(out, x * 3)
    # A strided view is written element by element.
    big = np.zeros(12, np.float32)
    twice(X=x, s=1.0, Y=big[::2])
    assert np.array_equal(big[::2], x) and not big[1::2].any()


def test_dims_override_and_provenance(dropout):
    run = dropout.run(X=np.ones((5, 256), np.float32), seed=1, backend="interp")
    p = run.provenance
    assert p["backend"] == "interp" and p["dims"] == {"M": 5}
    assert p["config"] == {"R": 16} and p["precision"] == "exact"
    assert set(p) >= {"device", "tuning", "grid", "lowering", "compile_ms"}
    with pytest.raises(ValueError, match="dimension `M` is 6 from dims= but 5"):
        dropout(X=np.ones((5, 256), np.float32), seed=1, dims={"M": 6})
    k = phobos.compile("kernel ones(Y: tensor<f32>[N]) {\n  Y = 1.0 + f32(iota(0)) * 0.0\n}").ones
    assert k(dims={"N": 4}).tolist() == [1.0] * 4
    with pytest.raises(ValueError, match=r"dimension `N` of `ones` is not bound: pass dims="):
        k()
    # An output too large for the host is refused by name, not allocated.
    with pytest.raises(MemoryError, match=r"`Y` with shape \[4611686018427387904\]"):
        k(dims={"N": 2**62})


def test_config_and_tuning(dropout):
    x = np.ones((40, 256), np.float32)
    a = dropout.run(X=x, seed=2, config={"R": 16}, backend="cpu")
    assert a.provenance["tuning"]["source"] == "fixed"
    b = dropout.run(X=x, seed=2, backend="cpu")
    assert a.outputs["Y"].tobytes() == b.outputs["Y"].tobytes()
    with pytest.raises(ValueError, match="config"):
        dropout(X=x, seed=2, config={"R": 7})


def test_dlpack_and_array_like_inputs(twice):
    x = np.arange(8, dtype=np.float32)

    class OnlyDlpack:
        def __init__(self, a):
            self.a = a

        def __dlpack__(self, **kw):
            return self.a.__dlpack__(**kw)

        def __dlpack_device__(self):
            return self.a.__dlpack_device__()

    class OnlyArray:
        def __array__(self, dtype=None, copy=None):
            return x

    assert np.array_equal(twice(X=OnlyDlpack(x), s=2.0), x * 2)
    assert np.array_equal(twice(X=OnlyArray(), s=2.0), x * 2)


def test_a_device_array_is_refused_with_what_to_do(twice):
    class OnCuda:
        def __dlpack__(self, **kw):
            raise AssertionError("not read")

        def __dlpack_device__(self):
            return (2, 0)

    with pytest.raises(TypeError, match=r"`X`.*not on the CPU.*t\.cpu\(\)"):
        twice(X=OnCuda(), s=1.0)


def test_torch_cpu_tensors():
    torch = pytest.importorskip("torch", reason="torch is not installed")
    k = phobos.compile(TWICE).twice
    x = torch.arange(5, dtype=torch.float32)
    y = torch.zeros(5)
    k(X=x, s=2.0, Y=y)
    assert y.tolist() == [0.0, 2.0, 4.0, 6.0, 8.0]
    if torch.cuda.is_available():
        with pytest.raises(TypeError, match=r"t\.cpu\(\)"):
            k(X=x.cuda(), s=1.0)


@pytest.mark.parametrize(
    "kwargs,error,words",
    [
        (dict(X=np.ones(3, np.float64), s=1.0), TypeError, r"`X` must hold f32 \(numpy float32\), but the array given has dtype float64"),
        (dict(X=np.ones((3, 1), np.float32), s=1.0), ValueError, r"`X` is declared \[N\], with 1 axes"),
        (dict(X=np.ones(3, np.float32), Y=np.ones(4, np.float32), s=1.0), ValueError, "dimension `N` is 3 from `X` but 4"),
        (dict(X=np.ones(3, np.float32)), TypeError, r"twice\(\) missing required argument: 's'"),
        (dict(s=1.0), TypeError, r"missing required argument: 'X'"),
        (dict(X=np.ones(3, np.float32), s=1.0, Z=1), TypeError, "unexpected keyword argument 'Z'; its parameters are X, Y, s"),
        (dict(X=[1.0, 2.0], s=1.0), TypeError, "`X` is a tensor parameter"),
        (dict(X=np.ones(3, np.float32), s="1"), TypeError, "`s` is a scalar f32"),
        (dict(X=np.ones(3, np.float32), s=1.0, backend="tpu"), ValueError, "backend must be"),
        (dict(X=np.ones(3, np.float32), s=1.0, precision="loose"), ValueError, "precision must be"),
    ],
)
def test_bad_arguments_name_the_parameter(twice, kwargs, error, words):
    with pytest.raises(error, match=words):
        twice(**kwargs)


def test_bad_scalars_and_read_only_outputs(dropout):
    x = np.ones((2, 256), np.float32)
    with pytest.raises(TypeError, match="`seed` is a scalar i32"):
        dropout(X=x, seed=1.5)
    with pytest.raises(TypeError, match="`seed` is a scalar i32"):
        dropout(X=x, seed=True)
    with pytest.raises(ValueError, match="`seed`: `2147483648` is not a valid i32"):
        dropout(X=x, seed=2**31)
    frozen = np.zeros((2, 256), np.float32)
    frozen.flags.writeable = False
    with pytest.raises(ValueError, match="`Y`: the kernel writes it"):
        dropout(X=x, seed=1, Y=frozen)
    assert dropout(X=x, seed=np.int32(1)).shape == (2, 256)


def test_compile_errors_carry_the_cli_text(phobosc, tmp_path):
    bad = tmp_path / "bad.ph"
    bad.write_text("kernel k(X: tensor<f32>[N], Y: tensor<f32>[N]) {\n  Y = X + undefined_name\n}\n")
    cli = subprocess.run([phobosc, "check", bad], capture_output=True, text=True)
    assert cli.returncode == 1
    with pytest.raises(phobos.CompileError) as e:
        phobos.compile(bad)
    assert str(e.value) == cli.stderr
    assert e.value.rendered == cli.stderr
    d = e.value.diagnostics[0]
    assert d["code"].startswith("E") and d["file"] == str(bad) and d["line"] == 2
    assert "undefined_name" in d["message"] or "undefined_name" in str(d["labels"])


def test_module_attributes_and_lowering(dropout):
    mod = phobos.compile(EXAMPLES / "dropout_rows.ph")
    assert mod.kernels["dropout_rows"].name == "dropout_rows"
    with pytest.raises(AttributeError, match="its kernels are dropout_rows"):
        mod.dropout_row
    assert "@compute" in dropout.wgsl()
    assert dropout.spirv()[:4] == b"\x03\x02\x23\x07"
    assert isinstance(dropout.plan(), str)
    assert dropout.configs == [{"R": 16}]


def test_two_threads_run_kernels_at_once(dropout):
    """Both threads finish with the single-threaded bits, and the GIL is
    released during a run: the main thread keeps running meanwhile."""
    x = np.random.default_rng(1).random((64, 256), dtype=np.float32)
    want = {b: dropout(X=x, seed=5, backend=b).tobytes() for b in ("cpu", "interp")}
    results, errors = [], []

    def work(backend):
        try:
            for _ in range(3):
                results.append(dropout(X=x, seed=5, backend=backend).tobytes() == want[backend])
        except Exception as e:  # reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(b,)) for b in ("cpu", "interp")]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not errors and len(results) == 6 and all(results)

    # One long interpreted run in a thread; the main thread counts how
    # often it gets to run meanwhile. Held, the GIL would stop it.
    big = np.ones((512, 256), np.float32)
    started = threading.Event()

    def long_run():
        started.set()
        dropout(X=big, seed=1, backend="interp")

    t = threading.Thread(target=long_run)
    t.start()
    started.wait()
    ticks, t0 = 0, time.perf_counter()
    while t.is_alive():
        time.sleep(0.001)
        ticks += 1
    elapsed = time.perf_counter() - t0
    t.join()
    assert elapsed < 0.05 or ticks >= 10, f"{ticks} ticks in {elapsed:.3f} s"
