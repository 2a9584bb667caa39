"""`phobos.fill` gives the bits of `phobosc fill`, and Tandem keys derive
as the reference crate does."""

import numpy as np
import pytest

import phobos
from conftest import run_cli

TYPES = [
    "u8", "u16", "u32", "u64", "f16", "f32", "f64", "bool", "below:10",
    "below:-5:10", "below:0x100000000", "normal_f32", "normal_f64", "exp_f32",
    "exp_f64", "choice:1,2,7",
]


def cli_fill(phobosc, tmp_path, ty, key, count, start=0, k=32, backend="cpu"):
    out = tmp_path / "fill.npy"
    run_cli(phobosc, "fill", ty, "--key", key, "--count", count, "--start", start,
            "--k", k, "--backend", backend, "--format", "npy", "-o", out)
    return np.load(out)


@pytest.mark.parametrize("ty", TYPES)
def test_fill_equals_the_cli(phobosc, tmp_path, ty):
    want = cli_fill(phobosc, tmp_path, ty, key=5, count=3001, start=12345)
    for backend in ("auto", "interp"):
        got = phobos.fill(ty, key=5, count=3001, start=12345, backend=backend)
        assert got.dtype == want.dtype and got.shape == want.shape
        assert got.tobytes() == want.tobytes(), backend


def test_fill_with_k_threads_and_a_key_object(phobosc, tmp_path):
    want = cli_fill(phobosc, tmp_path, "normal_f32", key=9, count=5000, k=4)
    got = phobos.fill("normal_f32", key=phobos.tandem.Key(9), count=5000, k=4, threads=1)
    assert got.tobytes() == want.tobytes()


def test_fill_on_the_gpu(gpu, phobosc, tmp_path):
    for ty in ("u32", "f32", "normal_f32"):
        want = cli_fill(phobosc, tmp_path, ty, key=2, count=10000, start=77)
        assert phobos.fill(ty, key=2, count=10000, start=77, backend="gpu").tobytes() == want.tobytes()


def test_keys_derive_as_the_reference_does():
    k = phobos.tandem.Key(42)
    assert k == phobos.tandem.Key(42) and hash(k) == hash(phobos.tandem.Key(42))
    assert k.sub(phobos.tandem.PURPOSE_USER + 1) != k.split(3)
    assert phobos.tandem.Key.from_words(k.words) == k
    # A stream of a derived key is the stream of that key's words.
    child = k.split(3)
    a = phobos.fill("u32", key=child, count=64)
    b = phobos.fill("u32", key=phobos.tandem.Key.from_words(child.words), count=64)
    assert a.tobytes() == b.tobytes()
    assert a.tobytes() != phobos.fill("u32", key=42, count=64).tobytes()


def test_the_stream_is_random_access():
    whole = phobos.fill("f64", key=1, count=1000)
    tail = phobos.fill("f64", key=1, count=500, start=500)
    assert whole[500:].tobytes() == tail.tobytes()


@pytest.mark.parametrize(
    "kwargs,error,words",
    [
        (dict(ty="f31", key=1, count=4), ValueError, "is not a fill type"),
        (dict(ty="below:0", key=1, count=4), ValueError, "at least 1"),
        (dict(ty="f32", key=1, count=4, k=3), ValueError, "power of two"),
        (dict(ty="f32", key=-1, count=4), TypeError, "key must be"),
        (dict(ty="f32", key=1, count=4, start=2**64 - 2), ValueError, r"2\^64 elements"),
        (dict(ty="f32", key=1, count=4, backend="tpu"), ValueError, "backend"),
        (dict(ty="f32", key=1, count=4, threads=0), ValueError, "thread"),
        (dict(ty="f32", key=1, count=2**62), MemoryError, "available memory"),
    ],
)
def test_bad_fills_are_refused(kwargs, error, words):
    with pytest.raises(error, match=words):
        phobos.fill(**kwargs)
