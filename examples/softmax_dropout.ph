// Softmax over rows of any length, then dropout, fused: three passes over
// each row in chunks of 256 (the row's maximum, the sum of exp(x - max),
// then the output), so rows longer than a tile need no more memory than a
// chunk. `exp` is std/math.ph's and `sum` adds in the language's fixed
// pairwise tree, so the result has the same bits on every backend; the mask
// is the one dropout_rows.ph draws for the same seed and counters.
//
//   phobosc run examples/softmax_dropout.ph --dim M=100 --dim N=1000
//
// tests/tests/softmax.rs compares it with a float64 reference for rows of
// 256, 1000 and 8192: every kept value within (ceil(log2 n) + 6) * 2^-24
// relative of exp(x - max) / sum / (1 - p).

// check kept fraction: Y != 0.0
// check every value is a probability over 1 - p: Y >= 0.0 && Y <= 1.0 / (1.0 - 0.1)
@autotune(R in [4])
kernel softmax_dropout(X: tensor<f32>[M, N], Y: tensor<f32>[M, N], seed: i32) {
  let r = ctx.block.x * R
  var m: tile<f32>[R, 1] = -_inf()
  for j in 0 .. (N + 255) / 256 {
    let c = j * 256
    var t: tile<f32>[R, 256] = where(c + iota(1) < N, X[r :+ R, c :+ 256], -_inf())
    m = max(m, max(t, axis = 1))
  }
  var s: tile<f32>[R, 1] = 0.0
  for j in 0 .. (N + 255) / 256 {
    let c = j * 256
    var e: tile<f32>[R, 256] = where(c + iota(1) < N, exp(X[r :+ R, c :+ 256] - m), 0.0)
    s = s + sum(e, axis = 1)
  }
  for j in 0 .. (N + 255) / 256 {
    let c = j * 256
    Y[r :+ R, c :+ 256] = dropout(exp(X[r :+ R, c :+ 256] - m) / s, 0.1, seed, (r + iota(0)) * N + c + iota(1))
  }
}
