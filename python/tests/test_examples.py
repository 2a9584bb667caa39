"""Every example's kernel called from Python gives the bits `phobosc run`
gives on the same inputs, on the interpreter and the CPU backend, and on
the GPU where an adapter is present."""

import numpy as np
import pytest

import phobos
from conftest import EXAMPLES, run_cli

# Extents that are not multiples of the tiles, so that masking is exercised.
DIMS = {"M": 37, "N": 300, "K": 24, "BH": 2, "S": 40, "D": 64}
SEED = 3
# Scalars by name where the seed would not do (attention's scale and
# dropout probability).
SCALARS = {"scale": 0.125, "p": 0.1}


def cases():
    for path in sorted(EXAMPLES.glob("*.ph")):
        for name in phobos.compile(path).kernels:
            yield pytest.param(path, name, id=f"{path.stem}:{name}")


def inputs(kernel):
    """Arrays for the tensors the kernel reads, and its scalars."""
    rng = np.random.default_rng(7)
    args = {}
    for p in kernel.params:
        if p["kind"] == "scalar":
            args[p["name"]] = SCALARS.get(p["name"], SEED)
        elif p["read"]:
            shape = [DIMS[d] if d in DIMS else int(d) for d in p["shape"].strip("[]").split(", ")]
            args[p["name"]] = (rng.standard_normal(shape) * 2).astype(p["dtype"])
    return args


def cli_outputs(phobosc, tmp_path, path, kernel, args, backend):
    flags = ["run", path, "--kernel", kernel.name, "--backend", backend, "--no-tune"]
    outputs = [p["name"] for p in kernel.params if p["kind"] == "tensor" and p["written"]]
    for name, value in args.items():
        if isinstance(value, np.ndarray):
            np.save(tmp_path / f"{name}.npy", value)
            flags += ["--input", f"{name}={tmp_path / f'{name}.npy'}"]
        else:
            flags += ["--arg", f"{name}={value}"]
    for name in outputs:
        flags += ["--output", f"{name}={tmp_path / f'out_{name}.npy'}"]
    run_cli(phobosc, *flags)
    return {name: np.load(tmp_path / f"out_{name}.npy") for name in outputs}


def same_bits(a, b):
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


@pytest.mark.parametrize("path,name", list(cases()))
def test_bits_equal_the_cli(phobosc, tmp_path, path, name):
    kernel = getattr(phobos.compile(path), name)
    args = inputs(kernel)
    want = cli_outputs(phobosc, tmp_path, path, kernel, args, "cpu")
    for backend in ("cpu", "interp"):
        run = kernel.run(**args, backend=backend, tune=False)
        assert run.provenance["backend"] == backend
        assert run.outputs.keys() == want.keys()
        for out, expected in want.items():
            assert same_bits(run.outputs[out], expected), f"{out} on {backend}"


@pytest.mark.parametrize("path,name", list(cases()))
def test_bits_on_the_gpu_equal_the_cli(gpu, phobosc, tmp_path, path, name):
    kernel = getattr(phobos.compile(path), name)
    args = inputs(kernel)
    # Every backend gives the same bits, so the CLI's CPU run is the answer.
    want = cli_outputs(phobosc, tmp_path, path, kernel, args, "cpu")
    run = kernel.run(**args, backend="gpu", tune=False)
    assert run.provenance["backend"] == "gpu"
    # The plan of the module that ran, as `phobosc run --explain` prints it.
    assert run.provenance["plan"].startswith(f"kernel {name} ")
    for out, expected in want.items():
        assert same_bits(run.outputs[out], expected), out


def test_softmax_dropout_from_numpy_as_the_readme_says(phobosc, tmp_path):
    """The issue's done-when: softmax_dropout on a NumPy array, the CLI's bits."""
    path = EXAMPLES / "softmax_dropout.ph"
    mod = phobos.compile(path)
    x = np.random.default_rng(0).random((100, 1000), dtype=np.float32)
    y = mod.softmax_dropout(X=x, seed=3)
    want = cli_outputs(phobosc, tmp_path, path, mod.softmax_dropout, {"X": x, "seed": 3}, "auto")
    assert same_bits(y, want["Y"])
