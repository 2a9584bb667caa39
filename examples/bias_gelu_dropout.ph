// Bias, GELU and dropout fused: Y = dropout(gelu(X + B)) over rows of 256,
// one block of R rows each, with GELU in its exact (erf) form,
// gelu(v) = v/2 * (1 + erf(v / sqrt(2))). `erf` is std/math.ph's, so the
// result has the same bits on every backend; the mask is the one
// dropout_rows.ph draws for the same seed and counters.
//
//   phobosc run examples/bias_gelu_dropout.ph --dim M=1000
//
// tests/tests/gelu.rs compares it with a float64 reference over v = x + b in
// [-8.5, 8.5): for v >= 0 within 1.35 * 2^-23 relative; below 0, where
// 1 + erf(v / sqrt 2) cancels, within 2^-23 * |v| / 2 / (1 - p) absolute.

// check kept fraction: Y != 0.0
// check gelu is above its minimum: Y >= -0.17 / (1.0 - 0.1)
@autotune(R in [16])
kernel bias_gelu_dropout(X: tensor<f32>[M, 256], B: tensor<f32>[256], Y: tensor<f32>[M, 256], seed: i32) {
  let r = ctx.block.x * R
  Y[r :+ R, :] = dropout(gelu(X[r :+ R, :] + B), 0.1, seed, (r + iota(0)) * 256 + iota(1))
}

fn gelu(v) = 0.5 * v * (1.0 + erf(v * 0.70710677))
