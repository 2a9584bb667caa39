"""16-bit tensors from Python: f16 as NumPy's float16, bf16 as its bits
(uint16) or ml_dtypes' bfloat16 where installed, and examples/matmul.ph on
float16 matrices, equal to the CLI's result."""

import numpy as np
import pytest

import phobos
from conftest import EXAMPLES

ROUND = """
kernel round(X: tensor<f32>[N], H: tensor<f16>[N], B: tensor<bf16>[N], F: tensor<f32>[N]) {
  H = X
  B = X
  F = f16(X) - bf16(X)
}
"""


def test_stores_round_to_float16_and_bfloat16_bits():
    k = phobos.compile(ROUND).round
    x = np.array([1.00048828125, 1.0009, 1.01, 65520.0, -3.0e-8, np.nan], np.float32)
    h, b, f = k(X=x, backend="cpu")
    assert h.dtype == np.float16
    # NumPy's own float16 conversion rounds to nearest even too; a NaN is
    # stored as the canonical quiet NaN.
    with np.errstate(over="ignore"):  # 65520 rounds to infinity, as it should
        want16 = x[:5].astype(np.float16)
    assert np.array_equal(h[:5].view(np.uint16), want16.view(np.uint16))
    assert h.view(np.uint16)[5] == 0x7E00
    bits = b.view(np.uint16) if b.dtype != np.uint16 else b
    want = (x.view(np.uint32) + 0x7FFF + ((x.view(np.uint32) >> 16) & 1)) >> 16
    assert np.array_equal(bits[:5], want[:5].astype(np.uint16))
    assert np.isnan(f[5]) and f[0] == 1.0 - 1.0


def test_a_wrong_dtype_names_the_parameter():
    k = phobos.compile(ROUND).round
    with pytest.raises(TypeError, match=r"`H` must hold f16 \(numpy float16\)"):
        k(X=np.ones(3, np.float32), H=np.zeros(3, np.float32))


def test_matmul_on_float16_matrices_matches_float64(phobosc, tmp_path):
    mm = phobos.compile(EXAMPLES / "matmul.ph").matmul
    rng = np.random.default_rng(3)
    a = rng.uniform(-1, 1, (48, 40)).astype(np.float16)
    b = rng.uniform(-1, 1, (40, 33)).astype(np.float16)
    c = mm(A=a, B=b, backend="cpu", config={"BM": 16, "BN": 16})
    assert c.dtype == np.float16 and c.shape == (48, 33)
    want = a.astype(np.float64) @ b.astype(np.float64)
    assert np.allclose(c.astype(np.float64), want, rtol=2e-3, atol=2e-3)
    # The interpreter's bits, as the CLI gives them.
    c2 = mm(A=a, B=b, backend="interp", config={"BM": 16, "BN": 16})
    assert c.tobytes() == c2.tobytes()
