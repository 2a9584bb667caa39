// Session 24: bench/s17/unseen.ph's c1 unrolled by hand at N = 1024 (4
// chunks of 256): what a plan that unrolls constant loops would emit.
@autotune(R in [1, 2, 4])
kernel c1u(X: tensor<f32>[M, N], Y: tensor<f32>[M, N], seed: i32) {
  let r = ctx.block.x * R
  var m: tile<f32>[R, 1] = -_inf()
  m = max(m, max(X[r :+ R, 0 :+ 256], axis = 1))
  m = max(m, max(X[r :+ R, 256 :+ 256], axis = 1))
  m = max(m, max(X[r :+ R, 512 :+ 256], axis = 1))
  m = max(m, max(X[r :+ R, 768 :+ 256], axis = 1))
  var s: tile<f32>[R, 1] = 0.0
  s = s + sum(exp(X[r :+ R, 0 :+ 256] - m), axis = 1)
  s = s + sum(exp(X[r :+ R, 256 :+ 256] - m), axis = 1)
  s = s + sum(exp(X[r :+ R, 512 :+ 256] - m), axis = 1)
  s = s + sum(exp(X[r :+ R, 768 :+ 256] - m), axis = 1)
  Y[r :+ R, 0 :+ 256] = dropout(exp(X[r :+ R, 0 :+ 256] - m) / s, 0.1, seed, (r + iota(0)) * N + 0 + iota(1))
  Y[r :+ R, 256 :+ 256] = dropout(exp(X[r :+ R, 256 :+ 256] - m) / s, 0.1, seed, (r + iota(0)) * N + 256 + iota(1))
  Y[r :+ R, 512 :+ 256] = dropout(exp(X[r :+ R, 512 :+ 256] - m) / s, 0.1, seed, (r + iota(0)) * N + 512 + iota(1))
  Y[r :+ R, 768 :+ 256] = dropout(exp(X[r :+ R, 768 :+ 256] - m) / s, 0.1, seed, (r + iota(0)) * N + 768 + iota(1))
}
