@autotune(R in [16, 64])
kernel tandem_dropout(X: tensor<f32>[M, 256], Y: tensor<f32>[M, 256], seed: u32) {
  let r = ctx.block.x * R
  Y[r :+ R, :] = where(tandem_uniform(seed, (r + iota(0)) * 256 + iota(1)) >= 0.1, X[r :+ R, :] / 0.9, 0.0)
}
@autotune(R in [16, 64])
kernel tandem_dropout_mul(X: tensor<f32>[M, 256], Y: tensor<f32>[M, 256], seed: u32) {
  let r = ctx.block.x * R
  Y[r :+ R, :] = where(tandem_uniform(seed, (r + iota(0)) * 256 + iota(1)) >= 0.1, X[r :+ R, :] * 1.1111112, 0.0)
}
@autotune(R in [16, 64])
kernel tandem_noise(X: tensor<f32>[M, 256], Y: tensor<f32>[M, 256], seed: u32) {
  let r = ctx.block.x * R
  Y[r :+ R, :] = X[r :+ R, :] + 0.5 * tandem_normal(seed, (r + iota(0)) * 256 + iota(1))
}
@autotune(R in [16, 64])
kernel dropout_rows_mul(X: tensor<f32>[M, 256], Y: tensor<f32>[M, 256], seed: i32) {
  let r = ctx.block.x * R
  Y[r :+ R, :] = where(uniform(seed, (r + iota(0)) * 256 + iota(1)) >= 0.1, X[r :+ R, :] * 1.1111112, 0.0)
}
@autotune(R in [16, 64])
kernel fill_u32(Y: tensor<u32>[M, 256], seed: u32) {
  let r = ctx.block.x * R
  Y[r :+ R, :] = tandem_u32(seed, (r + iota(0)) * 256 + iota(1))
}
@autotune(R in [16, 64])
kernel fill_f32(Y: tensor<f32>[M, 256], seed: u32) {
  let r = ctx.block.x * R
  Y[r :+ R, :] = tandem_uniform(seed, (r + iota(0)) * 256 + iota(1))
}
@autotune(R in [16, 64])
kernel fill_normal(Y: tensor<f32>[M, 256], seed: u32) {
  let r = ctx.block.x * R
  Y[r :+ R, :] = tandem_normal(seed, (r + iota(0)) * 256 + iota(1))
}
@autotune(R in [16, 64])
kernel fill_exp(Y: tensor<f32>[M, 256], seed: u32) {
  let r = ctx.block.x * R
  Y[r :+ R, :] = tandem_exponential(seed, (r + iota(0)) * 256 + iota(1))
}
