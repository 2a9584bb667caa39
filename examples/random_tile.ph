// The figure of the random-numbers page: uniform, randn and dropout over an
// 8 x 32 tile, each element's counter its flat index.
//
//   phobosc run examples/random_tile.ph --arg seed=1
//
// prints the three tiles and the caption `uniform: 256 counters, mean 0.513`.
// A fresh draw takes a fresh seed: randn reads the uniforms at 2c and 2c + 1,
// which is why it gets seed + 1 here.

// check uniform lies in [0, 1): uniform >= 0.0 && uniform < 1.0
// check uniform is a multiple of 2^-23: f32(i32(uniform * 8388608.0)) == uniform * 8388608.0
// check dropout keeps or drops: dropout == 0.0 || dropout == 2.0
kernel random_tile(uniform: tensor<f32>[8, 32], randn: tensor<f32>[8, 32], dropout: tensor<f32>[8, 32], seed: i32) {
  var c: tile<i32>[8, 32] = iota(0) * 32 + iota(1)
  uniform[:, :] = uniform(seed, c)
  randn[:, :] = randn(seed + 1, c)
  dropout[:, :] = dropout(1.0, 0.5, seed + 2, c)
}
