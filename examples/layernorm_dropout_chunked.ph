// layernorm_dropout.ph over rows in chunks of 256 columns, with `for` loops and
// `var` accumulators: the row is read in passes of one chunk at a time, so
// a row of any length needs no tile larger than [R, 256] (where a whole row
// would not fit the device's workgroup memory, for instance). The mask is
// layernorm_dropout.ph's; its sums add chunk by chunk, so a value may differ from
// that kernel's in the last bits.
//
//   phobosc run examples/layernorm_dropout_chunked.ph --dim M=64 --dim N=1000
//
// tests/tests/layernorm.rs checks it against the same float64 reference.

// dims: M=20, N=300
// check no element is NaN: Y == Y
// check the kept fraction is near 0.9 (elements kept): Y != 0.0
@autotune(R in [4])
kernel layernorm_dropout_chunked(X: tensor<f32>[M, N], G: tensor<f32>[N], B: tensor<f32>[N], Y: tensor<f32>[M, N], seed: i32) {
  let r = ctx.block.x * R
  var s: tile<f32>[R, 1] = 0.0
  for j in 0 .. (N + 255) / 256 {
    s = s + sum(X[r :+ R, j * 256 :+ 256], axis = 1)
  }
  let mean = s / f32(N)
  var q: tile<f32>[R, 1] = 0.0
  for j in 0 .. (N + 255) / 256 {
    var d: tile<f32>[R, 256] = where(j * 256 + iota(1) < N, X[r :+ R, j * 256 :+ 256] - mean, 0.0)
    q = q + sum(d * d, axis = 1)
  }
  let rstd = 1.0 / sqrt(q / f32(N) + 0.00001)
  for j in 0 .. (N + 255) / 256 {
    let c = j * 256
    Y[r :+ R, c :+ 256] = dropout((X[r :+ R, c :+ 256] - mean) * rstd * G[c :+ 256] + B[c :+ 256], 0.1, seed, (r + iota(0)) * N + c + iota(1))
  }
}
