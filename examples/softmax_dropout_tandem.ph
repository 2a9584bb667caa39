// softmax_dropout.ph with its dropout on the Tandem stream: element i is
// dropped exactly where element i of `phobosc fill f32 --key KEY` is below p
// (std/tandem.ph's `tandem_dropout`); everything else is softmax_dropout.ph's.
//
//   phobosc run examples/softmax_dropout_tandem.ph --dim M=100 --dim N=1000
//
// tests/tests/softmax.rs checks the mask against the reference crate's
// fill, and every element both kernels keep for the same bits as theirs.

// check kept fraction: Y != 0.0
// check every value is a probability over 1 - p: Y >= 0.0 && Y <= 1.0 / (1.0 - 0.1)
@autotune(R in [4])
kernel softmax_dropout_tandem(X: tensor<f32>[M, N], Y: tensor<f32>[M, N], key: u32) {
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
    Y[r :+ R, c :+ 256] = tandem_dropout(exp(X[r :+ R, c :+ 256] - m) / s, 0.1, key, (r + iota(0)) * N + c + iota(1))
  }
}
