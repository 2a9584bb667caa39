"""Runs examples/softmax_dropout.ph on a NumPy array from Python.

    pip install ./python && python python/examples/softmax_dropout.py

The result has the bits `phobosc run examples/softmax_dropout.ph --input
X=x.npy --arg seed=3` gives for the same array (python/tests checks it).
"""

import pathlib

import numpy as np

import phobos

root = pathlib.Path(__file__).resolve().parents[2]
mod = phobos.compile(root / "examples" / "softmax_dropout.ph")
x = np.random.default_rng(0).random((100, 1000), dtype=np.float32)
run = mod.softmax_dropout.run(X=x, seed=3)
y = run.outputs["Y"]
p = run.provenance
print(f"softmax_dropout on {p['backend']} ({p['device']}), dims {p['dims']}, config {p['config']}")
print(f"Y[0, :4] = {y[0, :4]}; rows sum to {y.sum(axis=1)[:3]} ... (dropout keeps about {np.mean(y > 0):.3f})")
