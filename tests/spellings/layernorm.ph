// Layer norm + dropout spelled the ways users write it (issue 28). Every
// kernel here computes exactly the bits of examples/layernorm_dropout.ph
// in exact mode (std's `rsqrt(v)` is `1.0 / sqrt(v)` there).
// tests/tests/spellings.rs checks them on every backend, and that the GPU
// plan keeps no tile of a row in workgroup memory; bench/ measures them.

// The example, as written.
@autotune(R in [1, 2, 4])
kernel ln_inline(X: tensor<f32>[M, N], G: tensor<f32>[N], B: tensor<f32>[N], Y: tensor<f32>[M, N], seed: i32) {
  let r = ctx.block.x * R
  let mean = sum(X[r :+ R, :], axis = 1) / f32(N)
  let rstd = 1.0 / sqrt(sum((X[r :+ R, :] - mean) * (X[r :+ R, :] - mean), axis = 1) / f32(N) + 0.00001)
  Y[r :+ R, :] = dropout((X[r :+ R, :] - mean) * rstd * G[:] + B[:], 0.1, seed, (r + iota(0)) * N + iota(1))
}

// The rows loaded into a `let` first.
@autotune(R in [1, 2, 4])
kernel ln_let_load(X: tensor<f32>[M, N], G: tensor<f32>[N], B: tensor<f32>[N], Y: tensor<f32>[M, N], seed: i32) {
  let r = ctx.block.x * R
  let x = X[r :+ R, :]
  let mean = sum(x, axis = 1) / f32(N)
  let rstd = 1.0 / sqrt(sum((x - mean) * (x - mean), axis = 1) / f32(N) + 0.00001)
  Y[r :+ R, :] = dropout((x - mean) * rstd * G[:] + B[:], 0.1, seed, (r + iota(0)) * N + iota(1))
}

// Triton's spelling: `let` tiles, the mean inside the deviation, `rsqrt`.
@autotune(R in [1, 2, 4])
kernel ln_triton(X: tensor<f32>[M, N], G: tensor<f32>[N], B: tensor<f32>[N], Y: tensor<f32>[M, N], seed: i32) {
  let r = ctx.block.x * R
  let x = X[r :+ R, :]
  let d = x - sum(x, axis = 1) / f32(N)
  let y = d * rsqrt(sum(d * d, axis = 1) / f32(N) + 0.00001)
  Y[r :+ R, :] = dropout(y * G[:] + B[:], 0.1, seed, (r + iota(0)) * N + iota(1))
}

// A mix: the deviation in a `let`, the scale written in the store.
@autotune(R in [1, 2, 4])
kernel ln_mixed(X: tensor<f32>[M, N], G: tensor<f32>[N], B: tensor<f32>[N], Y: tensor<f32>[M, N], seed: i32) {
  let r = ctx.block.x * R
  let d = X[r :+ R, :] - sum(X[r :+ R, :], axis = 1) / f32(N)
  Y[r :+ R, :] = dropout(d * (1.0 / sqrt(sum(d * d, axis = 1) / f32(N) + 0.00001)) * G[:] + B[:], 0.1, seed, (r + iota(0)) * N + iota(1))
}
