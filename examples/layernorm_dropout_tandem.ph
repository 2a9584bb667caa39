// layernorm_dropout.ph with its dropout on the Tandem stream: element i is
// dropped exactly where element i of `phobosc fill f32 --key KEY` is below p
// (std/tandem.ph's `tandem_dropout`); everything else is layernorm_dropout.ph's.
//
//   phobosc run examples/layernorm_dropout_tandem.ph --dim M=64 --dim N=1000
//
// tests/tests/layernorm.rs checks the mask against the reference crate's
// fill, and every element both kernels keep for the same bits as theirs.

// dims: M=20, N=300
// check no element is NaN: Y == Y
// check the kept fraction is near 0.9 (elements kept): Y != 0.0
@autotune(R in [4])
kernel layernorm_dropout_tandem(X: tensor<f32>[M, N], G: tensor<f32>[N], B: tensor<f32>[N], Y: tensor<f32>[M, N], key: u32) {
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
    Y[r :+ R, c :+ 256] = tandem_dropout((X[r :+ R, c :+ 256] - mean) * rstd * G[c :+ 256] + B[c :+ 256], 0.1, key, (r + iota(0)) * N + c + iota(1))
  }
}
