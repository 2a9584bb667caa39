"""`devices=` (issue 32): a call or a fill split across several devices
gives the bits of one; each device's blocks and time are in the
provenance; a bad device list and a kernel whose blocks write overlapping
rows are refused before anything runs. Devices opened on one adapter
stand for several GPUs (lavapipe in CI)."""

import os

import numpy as np
import pytest

import phobos
from conftest import EXAMPLES

OVERLAP = """
@grid(cdiv(M, 2))
kernel overlap(X: tensor<f32>[M], Y: tensor<f32>[M]) {
  let r = ctx.block.x * 2
  Y[r :+ 4] = X[r :+ 4] + 1.0
}
"""


@pytest.fixture(scope="module")
def has_gpu():
    """Whether a GPU adapter is here: the CPU splits run either way."""
    try:
        phobos.fill("u32", key=1, count=4, backend="gpu")
        return True
    except RuntimeError as e:
        assert os.environ.get("PHOBOS_REQUIRE_GPU") != "1", f"no GPU adapter: {e}"
        return False


@pytest.fixture(scope="module")
def dropout():
    return phobos.compile(EXAMPLES / "dropout_rows.ph").dropout_rows


def splits(gpu):
    out = ["cpu,cpu", ["cpu:1", "cpu:2", "cpu"]]
    if gpu:
        out += ["gpu0,gpu0", ["gpu0", "cpu:3"]]
    return out


def test_a_split_call_gives_the_interpreters_bits(dropout, has_gpu):
    x = np.linspace(-3, 3, 100 * 256, dtype=np.float32).reshape(100, 256)
    want = dropout(X=x, seed=7, backend="interp")
    for devices in splits(has_gpu):
        got = dropout(X=x, seed=7, devices=devices)
        assert got.tobytes() == want.tobytes(), devices


def test_the_provenance_lists_each_device(dropout):
    x = np.ones((256, 256), np.float32)
    run = dropout.run(X=x, seed=1, devices="cpu:1,cpu:3", config={"R": 16})
    split = run.provenance["split"]
    assert split["axis"] == "x"
    assert [d["blocks"] for d in split["devices"]] == [[0, 4], [4, 16]]
    assert all(d["device"] == "cpu" and d["ms"] >= 0 for d in split["devices"])
    assert dropout.run(X=x, seed=1).provenance["split"] is None


def test_bad_devices_and_overlapping_writes_are_refused(dropout):
    x = np.ones((16, 256), np.float32)
    with pytest.raises(ValueError, match="there is no adapter 42"):
        dropout(X=x, seed=1, devices="cpu,gpu42")
    with pytest.raises(ValueError, match="is not a device"):
        dropout(X=x, seed=1, devices=["tpu0"])
    overlap = phobos.compile(OVERLAP).overlap
    with pytest.raises(ValueError, match="overlapping"):
        overlap(X=np.ones(16, np.float32), devices="cpu,cpu")


def test_a_split_fill_is_the_single_device_fill(has_gpu):
    for ty in ["u32", "normal_f32", "bool"]:
        want = phobos.fill(ty, 5, 10_007, start=3)
        for devices in splits(has_gpu):
            got = phobos.fill(ty, 5, 10_007, start=3, devices=devices)
            assert got.tobytes() == want.tobytes(), (ty, devices)
