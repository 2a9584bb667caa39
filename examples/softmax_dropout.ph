// Softmax over each row, then dropout, fused. One block takes R whole rows:
// the row's maximum is a reduction over the row, exp(x - max) is computed
// once into a tile `e`, the sum of `e` (the language's fixed pairwise tree)
// gives one reciprocal a row, and each element is written once. On the GPU
// the rows of `e` live in workgroup memory and both reductions are computed
// by the whole workgroup, reading the row in coalesced segments
// (compiler/gpu/src/lower/coop_warp.rs), so X is read from memory once and
// Y written once. `exp` is std/math.ph's, so the result has the same bits
// on every backend; the mask is the one dropout_rows.ph draws for the same
// seed and counters.
//
//   phobosc run examples/softmax_dropout.ph --dim M=100 --dim N=1000
//
// tests/tests/softmax.rs compares both kernels of this file with a float64
// reference for rows of 256, 1000 and 8192: every kept value within
// (ceil(log2 n) + 6) * 2^-24 relative of exp(x - max) / sum / (1 - p).

// check kept fraction: Y != 0.0
// check every value is a probability over 1 - p: Y >= 0.0 && Y <= 1.0 / (1.0 - 0.1)
@autotune(R in [1, 2, 4])
kernel softmax_dropout(X: tensor<f32>[M, N], Y: tensor<f32>[M, N], seed: i32) {
  let r = ctx.block.x * R
  let m = max(X[r :+ R, :], axis = 1)
  let e = exp(X[r :+ R, :] - m)
  let inv = 1.0 / sum(e, axis = 1)
  Y[r :+ R, :] = dropout(e * inv, 0.1, seed, (r + iota(0)) * N + iota(1))
}
