// Layer norm over rows of any length followed by dropout, fused: each block
// of R rows reads its rows in chunks of 256 columns, three times (the sum,
// the sum of squared deviations, and the output), with `var` accumulators
// and reductions; a row longer than a tile never needs a larger tile.
//
//   phobosc run examples/layernorm_dropout.ph --dim M=64 --dim N=1000
//
// The tail of a row whose length is not a multiple of 256 reads zeros past
// the end, which the sum ignores and the squared deviations mask out. The
// dropout counter is each element's flat index in the whole tensor, as in
// dropout_rows.ph, so the mask does not depend on R or on the chunking.
// tests/tests/layernorm.rs checks the output against a reference computed
// in f64 (within 4 ulp of the row's largest input, scaled as the output is,
// plus 8 ulp of the result) and the mask bit for bit.

// dims: M=20, N=300
// check no element is NaN: Y == Y
// check the kept fraction is near 0.9 (elements kept): Y != 0.0
@autotune(R in [4])
kernel layernorm_dropout(X: tensor<f32>[M, N], G: tensor<f32>[N], B: tensor<f32>[N], Y: tensor<f32>[M, N], seed: i32) {
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
