// bias_gelu_dropout.ph with its dropout on the Tandem stream: element i is
// dropped exactly where element i of `phobosc fill f32 --key KEY` is below p
// (std/tandem.ph's `tandem_dropout`); everything else is bias_gelu_dropout.ph's.
//
//   phobosc run examples/bias_gelu_dropout_tandem.ph --dim M=1000
//
// tests/tests/gelu.rs checks the mask against the reference crate's fill,
// and every element both kernels keep for the same bits as theirs.

// check kept fraction: Y != 0.0
// check gelu is above its minimum: Y >= -0.17 / (1.0 - 0.1)
@autotune(R in [16])
kernel bias_gelu_dropout_tandem(X: tensor<f32>[M, 256], B: tensor<f32>[256], Y: tensor<f32>[M, 256], key: u32) {
  let r = ctx.block.x * R
  Y[r :+ R, :] = tandem_dropout(gelu(X[r :+ R, :] + B), 0.1, key, (r + iota(0)) * 256 + iota(1))
}

// As in bias_gelu_dropout.ph: GELU in its exact (erf) form.
fn gelu(v) = 0.5 * v * (1.0 + erf(v * 0.70710677))
