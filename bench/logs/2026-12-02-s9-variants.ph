// Session 9's ablations of examples/softmax_dropout.ph, exact mode: where the
// time of a whole-row softmax with dropout goes. Each kernel drops one piece;
// none is a replacement for the example (their outputs differ).

// The example, text for text.
@autotune(R in [1, 2, 4])
kernel sm_full(X: tensor<f32>[M, N], Y: tensor<f32>[M, N], seed: i32) {
  let r = ctx.block.x * R
  let m = max(X[r :+ R, :], axis = 1)
  let inv = 1.0 / sum(exp(X[r :+ R, :] - m), axis = 1)
  Y[r :+ R, :] = dropout(exp(X[r :+ R, :] - m) * inv, 0.1, seed, (r + iota(0)) * N + iota(1))
}

// Without dropout: softmax alone.
@autotune(R in [1, 2, 4])
kernel sm_nodrop(X: tensor<f32>[M, N], Y: tensor<f32>[M, N], seed: i32) {
  let r = ctx.block.x * R
  let m = max(X[r :+ R, :], axis = 1)
  let inv = 1.0 / sum(exp(X[r :+ R, :] - m), axis = 1)
  Y[r :+ R, :] = exp(X[r :+ R, :] - m) * inv
}

// Dropout's scale as a multiply instead of the exact division by 0.9.
@autotune(R in [1, 2, 4])
kernel sm_muldrop(X: tensor<f32>[M, N], Y: tensor<f32>[M, N], seed: i32) {
  let r = ctx.block.x * R
  let m = max(X[r :+ R, :], axis = 1)
  let inv = 1.0 / sum(exp(X[r :+ R, :] - m), axis = 1)
  Y[r :+ R, :] = where(uniform(seed, (r + iota(0)) * N + iota(1)) >= 0.1, exp(X[r :+ R, :] - m) * inv * 1.1111112, 0.0)
}

// Without exp: the reductions, the scale and dropout.
@autotune(R in [1, 2, 4])
kernel sm_noexp(X: tensor<f32>[M, N], Y: tensor<f32>[M, N], seed: i32) {
  let r = ctx.block.x * R
  let m = max(X[r :+ R, :], axis = 1)
  let inv = 1.0 / sum(X[r :+ R, :] - m, axis = 1)
  Y[r :+ R, :] = dropout((X[r :+ R, :] - m) * inv, 0.1, seed, (r + iota(0)) * N + iota(1))
}

// The structure alone: both reductions and the scale, no exp, no dropout.
@autotune(R in [1, 2, 4])
kernel sm_struct(X: tensor<f32>[M, N], Y: tensor<f32>[M, N], seed: i32) {
  let r = ctx.block.x * R
  let m = max(X[r :+ R, :], axis = 1)
  let inv = 1.0 / sum(X[r :+ R, :] - m, axis = 1)
  Y[r :+ R, :] = (X[r :+ R, :] - m) * inv
}
