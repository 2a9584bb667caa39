// softmax_dropout.ph over rows in chunks of 256 columns, with `for` loops and
// `var` accumulators: the row is read in passes of one chunk at a time, so
// a row of any length needs no tile larger than [R, 256] (where a whole row
// would not fit the device's workgroup memory, for instance). The mask is
// softmax_dropout.ph's; its sums add chunk by chunk, so a value may differ from
// that kernel's in the last bits.
//
//   phobosc run examples/softmax_dropout_chunked.ph --dim M=64 --dim N=1000
//
// tests/tests/softmax.rs checks it against the same float64 reference.

// check kept fraction: Y != 0.0
// check every value is a probability over 1 - p: Y >= 0.0 && Y <= 1.0 / (1.0 - 0.1)
@autotune(R in [4])
kernel softmax_dropout_chunked(X: tensor<f32>[M, N], Y: tensor<f32>[M, N], seed: i32) {
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
