// layernorm_dropout.ph with its dropout on the Tandem stream: element i is
// dropped exactly where element i of `phobosc fill f32 --key KEY` is below p
// (std/tandem.ph's `tandem_dropout`); everything else is layernorm_dropout.ph's,
// both kernels.
//
//   phobosc run examples/layernorm_dropout_tandem.ph --dim M=64 --dim N=1000
//
// tests/tests/layernorm.rs checks the mask against the reference crate's
// fill, and every element both kernels keep for the same bits as theirs.

// dims: M=20, N=300
// check no element is NaN: Y == Y
// check the kept fraction is near 0.9 (elements kept): Y != 0.0
@autotune(R in [1, 2, 4])
kernel layernorm_dropout_tandem(X: tensor<f32>[M, N], G: tensor<f32>[N], B: tensor<f32>[N], Y: tensor<f32>[M, N], key: u32) {
  let r = ctx.block.x * R
  let mean = sum(X[r :+ R, :], axis = 1) / f32(N)
  let rstd = 1.0 / sqrt(sum((X[r :+ R, :] - mean) * (X[r :+ R, :] - mean), axis = 1) / f32(N) + 0.00001)
  Y[r :+ R, :] = tandem_dropout((X[r :+ R, :] - mean) * rstd * G[:] + B[:], 0.1, key, (r + iota(0)) * N + iota(1))
}
