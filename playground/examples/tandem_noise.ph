// Tandem noise: Y = X + 0.5 * tandem_normal(seed, i) for i each element's
// flat index. Draw i is element i of `phobosc fill normal_f32 --key SEED`,
// bit for bit, so the noise is the fill plus the add (std/tandem.ph).
// dims: M=64
// check the noise is small: Y - X > -4.0 && Y - X < 4.0
@autotune(R in [16, 64])
kernel tandem_noise(X: tensor<f32>[M, 256], Y: tensor<f32>[M, 256], seed: u32) {
  let r = ctx.block.x * R
  Y[r :+ R, :] = X[r :+ R, :] + 0.5 * tandem_normal(seed, (r + iota(0)) * 256 + iota(1))
}
