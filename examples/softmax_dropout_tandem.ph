// softmax_dropout.ph with its dropout on the Tandem stream: element i is
// dropped exactly where element i of `phobosc fill f32 --key KEY` is below p
// (std/tandem.ph's `tandem_dropout`); everything else is softmax_dropout.ph's,
// both kernels.
//
//   phobosc run examples/softmax_dropout_tandem.ph --dim M=100 --dim N=1000
//
// tests/tests/softmax.rs checks the mask against the reference crate's
// fill, and every element both kernels keep for the same bits as theirs.

// check kept fraction: Y != 0.0
// check every value is a probability over 1 - p: Y >= 0.0 && Y <= 1.0 / (1.0 - 0.1)
@autotune(R in [1, 2, 4])
kernel softmax_dropout_tandem(X: tensor<f32>[M, N], Y: tensor<f32>[M, N], key: u32) {
  let r = ctx.block.x * R
  let m = max(X[r :+ R, :], axis = 1)
  let inv = 1.0 / sum(exp(X[r :+ R, :] - m), axis = 1)
  Y[r :+ R, :] = tandem_dropout(exp(X[r :+ R, :] - m) * inv, 0.1, key, (r + iota(0)) * N + iota(1))
}
