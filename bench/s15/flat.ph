// Elementwise kernels over a flat tensor, `tensor<f32>[N]`, as users
// write them (one axis, its length a dim): a scale, the seed's dropout and
// Tandem dropout. Their 16-byte loads and stores need the launch's N to be
// a multiple of 4 (`phobos_gpu::specialize`, fifteenth session); timed
// before and after in bench/logs/2026-12-06-s15-q3.sh.
//
//   phobosc bench bench/s15/flat.ph --kernel flat_scale --dim N=268435456 --backend gpu

@autotune(T in [1024, 4096])
kernel flat_scale(X: tensor<f32>[N], Y: tensor<f32>[N]) {
  let i = ctx.block.x * T
  Y[i :+ T] = X[i :+ T] * 2.0 + 1.0
}

@autotune(T in [1024, 4096])
kernel flat_dropout(X: tensor<f32>[N], Y: tensor<f32>[N], seed: i32) {
  let i = ctx.block.x * T
  Y[i :+ T] = dropout(X[i :+ T], 0.1, seed, i + iota(0))
}

@autotune(T in [1024, 4096])
kernel flat_tandem_dropout(X: tensor<f32>[N], Y: tensor<f32>[N], key: u32) {
  let i = ctx.block.x * T
  Y[i :+ T] = tandem_dropout(X[i :+ T], 0.1, key, i + iota(0))
}
