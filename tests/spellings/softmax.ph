// Softmax + dropout spelled the ways users write it (issue 28). Kernels
// named `inv_*` compute exactly the bits of examples/softmax_dropout.ph
// (one reciprocal a row, then a product); `div_*` divide each element by
// the row's sum, as Triton's tutorial does, and agree with each other.
// tests/tests/spellings.rs checks both groups on every backend, and that
// the GPU plan keeps no tile of a row in workgroup memory; bench/ measures
// them against each other and against Triton on the H200.

// The example, as written.
@autotune(R in [1, 2, 4])
kernel inv_inline(X: tensor<f32>[M, N], Y: tensor<f32>[M, N], seed: i32) {
  let r = ctx.block.x * R
  let m = max(X[r :+ R, :], axis = 1)
  let inv = 1.0 / sum(exp(X[r :+ R, :] - m), axis = 1)
  Y[r :+ R, :] = dropout(exp(X[r :+ R, :] - m) * inv, 0.1, seed, (r + iota(0)) * N + iota(1))
}

// The rows loaded into a `let` first.
@autotune(R in [1, 2, 4])
kernel inv_let_load(X: tensor<f32>[M, N], Y: tensor<f32>[M, N], seed: i32) {
  let r = ctx.block.x * R
  let x = X[r :+ R, :]
  let m = max(x, axis = 1)
  let inv = 1.0 / sum(exp(x - m), axis = 1)
  Y[r :+ R, :] = dropout(exp(x - m) * inv, 0.1, seed, (r + iota(0)) * N + iota(1))
}

// Every step its own `let`.
@autotune(R in [1, 2, 4])
kernel inv_let_all(X: tensor<f32>[M, N], Y: tensor<f32>[M, N], seed: i32) {
  let r = ctx.block.x * R
  let x = X[r :+ R, :]
  let e = exp(x - max(x, axis = 1))
  let s = sum(e, axis = 1)
  let y = e * (1.0 / s)
  Y[r :+ R, :] = dropout(y, 0.1, seed, (r + iota(0)) * N + iota(1))
}

// A mix: the reciprocal written inside the store.
@autotune(R in [1, 2, 4])
kernel inv_mixed(X: tensor<f32>[M, N], Y: tensor<f32>[M, N], seed: i32) {
  let r = ctx.block.x * R
  let e = exp(X[r :+ R, :] - max(X[r :+ R, :], axis = 1))
  Y[r :+ R, :] = dropout(e * (1.0 / sum(e, axis = 1)), 0.1, seed, (r + iota(0)) * N + iota(1))
}

// Triton's spelling: `let` tiles and `e / sum(e)`.
@autotune(R in [1, 2, 4])
kernel div_triton(X: tensor<f32>[M, N], Y: tensor<f32>[M, N], seed: i32) {
  let r = ctx.block.x * R
  let x = X[r :+ R, :]
  let e = exp(x - max(x, axis = 1))
  Y[r :+ R, :] = dropout(e / sum(e, axis = 1), 0.1, seed, (r + iota(0)) * N + iota(1))
}

// The same division with the sum in a `let` and no tile.
@autotune(R in [1, 2, 4])
kernel div_inline(X: tensor<f32>[M, N], Y: tensor<f32>[M, N], seed: i32) {
  let r = ctx.block.x * R
  let m = max(X[r :+ R, :], axis = 1)
  let s = sum(exp(X[r :+ R, :] - m), axis = 1)
  Y[r :+ R, :] = dropout(exp(X[r :+ R, :] - m) / s, 0.1, seed, (r + iota(0)) * N + iota(1))
}

// `var` tiles: one never assigned again, one divided in place (each whole
// assignment names a new value, as a shadowing `let` does).
@autotune(R in [1, 2, 4])
kernel div_var(X: tensor<f32>[M, N], Y: tensor<f32>[M, N], seed: i32) {
  let r = ctx.block.x * R
  var x: tile<f32>[R, N] = X[r :+ R, :]
  var e: tile<f32>[R, N] = exp(x - max(x, axis = 1))
  e = e / sum(e, axis = 1)
  Y[r :+ R, :] = dropout(e, 0.1, seed, (r + iota(0)) * N + iota(1))
}
