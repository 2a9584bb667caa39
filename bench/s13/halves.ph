// tests/tests/half.rs's kernel: every f16 and bf16 pattern loaded, rounded
// by stores and by f16(x)/bf16(x); bench/attention-h200.sh runs it on the
// device and bench/s13/compare.py compares with the interpreter.
@autotune(R in [1, 3])
kernel halves(X: tensor<f16>[M, N], B: tensor<bf16>[M, N], Y: tensor<f16>[M, N],
              Z: tensor<f32>[M, N], W: tensor<bf16>[M, N]) {
  let r = ctx.block.x * R
  let x = X[r :+ R, :]
  Y[r :+ R, :] = x * 3.0 + B[r :+ R, :]
  Z[r :+ R, :] = f16(x * 1.1) + bf16(B[r :+ R, :] / 3.0) + f16(r + iota(0))
  W[r :+ R, :] = x * B[r :+ R, :]
}
