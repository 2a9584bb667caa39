// Session 7: the fused kernels' variants measured beside the examples
// (bench/logs/2026-12-02-s7-q3.sh). Same masks; values within the
// examples' tests' bounds.

// Softmax with exp computed once into a workgroup tile, and one reciprocal
// a row (the division of dropout stays).
@autotune(R in [1, 2, 4])
kernel softmax_tile(X: tensor<f32>[M, N], Y: tensor<f32>[M, N], seed: i32) {
  let r = ctx.block.x * R
  let m = max(X[r :+ R, :], axis = 1)
  let e = exp(X[r :+ R, :] - m)
  let inv = 1.0 / sum(e, axis = 1)
  Y[r :+ R, :] = dropout(e * inv, 0.1, seed, (r + iota(0)) * N + iota(1))
}

// Softmax with exp computed twice (no tile) and one reciprocal a row.
@autotune(R in [1, 2, 4])
kernel softmax_recip(X: tensor<f32>[M, N], Y: tensor<f32>[M, N], seed: i32) {
  let r = ctx.block.x * R
  let m = max(X[r :+ R, :], axis = 1)
  let inv = 1.0 / sum(exp(X[r :+ R, :] - m), axis = 1)
  Y[r :+ R, :] = dropout(exp(X[r :+ R, :] - m) * inv, 0.1, seed, (r + iota(0)) * N + iota(1))
}

// Layer norm with the rows read once into a workgroup tile.
@autotune(R in [1, 2, 4])
kernel layernorm_tile(X: tensor<f32>[M, N], G: tensor<f32>[N], B: tensor<f32>[N], Y: tensor<f32>[M, N], seed: i32) {
  let r = ctx.block.x * R
  let x = X[r :+ R, :]
  let mean = sum(x, axis = 1) / f32(N)
  let rstd = 1.0 / sqrt(sum((x - mean) * (x - mean), axis = 1) / f32(N) + 0.00001)
  Y[r :+ R, :] = dropout((x - mean) * rstd * G[:] + B[:], 0.1, seed, (r + iota(0)) * N + iota(1))
}

// Layer norm reading X from memory each pass (the fifth session's shape).
@autotune(R in [1, 2, 4])
kernel layernorm_reread(X: tensor<f32>[M, N], G: tensor<f32>[N], B: tensor<f32>[N], Y: tensor<f32>[M, N], seed: i32) {
  let r = ctx.block.x * R
  let mean = sum(X[r :+ R, :], axis = 1) / f32(N)
  let rstd = 1.0 / sqrt(sum((X[r :+ R, :] - mean) * (X[r :+ R, :] - mean), axis = 1) / f32(N) + 0.00001)
  Y[r :+ R, :] = dropout((X[r :+ R, :] - mean) * rstd * G[:] + B[:], 0.1, seed, (r + iota(0)) * N + iota(1))
}
