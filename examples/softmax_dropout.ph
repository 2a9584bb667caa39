// Softmax over each row, then dropout, fused. One block takes R whole rows:
// the row's maximum and the sum of exp(x - max) are reductions over the
// row (`max`, and `sum` in the language's fixed pairwise tree), the sum
// gives one reciprocal a row, and each element is written once. On the GPU
// both reductions are computed by the whole workgroup, reading the row in
// coalesced segments (compiler/gpu/src/lower/coop_warp.rs), so X comes
// from memory once (its later reads hit the caches) and Y is written once.
// `exp` is std/math.ph's, so the result has the same bits on every
// backend; the mask is the one dropout_rows.ph draws for the same seed and
// counters. Rows of any length run; softmax_dropout_chunked.ph shows the
// same with `for` loops over chunks of 256.
//
//   phobosc run examples/softmax_dropout.ph --dim M=100 --dim N=1000
//
// tests/tests/softmax.rs compares it with a float64 reference for rows of
// 256, 1000 and 8192: every kept value within
// (ceil(log2 n) + 6) * 2^-24 relative of exp(x - max) / sum / (1 - p).

// check kept fraction: Y != 0.0
// check every value is a probability over 1 - p: Y >= 0.0 && Y <= 1.0 / (1.0 - 0.1)
@autotune(R in [1, 2, 4])
kernel softmax_dropout(X: tensor<f32>[M, N], Y: tensor<f32>[M, N], seed: i32) {
  let r = ctx.block.x * R
  let m = max(X[r :+ R, :], axis = 1)
  let inv = 1.0 / sum(exp(X[r :+ R, :] - m), axis = 1)
  Y[r :+ R, :] = dropout(exp(X[r :+ R, :] - m) * inv, 0.1, seed, (r + iota(0)) * N + iota(1))
}
