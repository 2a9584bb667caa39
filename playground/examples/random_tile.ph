// The tile figure of the random-numbers page: each element of a ROWS x COLS
// tile shaded by the value the standard library's uniform, randn or dropout
// gives its counter c, the element's flat index, under the seed. The page
// binds ROWS x COLS to 8 x 32 (12 x 16 on a narrow screen) and seed to 1, 2
// or 3; `phobosc run` takes them as --dim ROWS=8 --dim COLS=32 --arg seed=1.
// dims: ROWS=8 COLS=32
// check uniform lies in [0, 1): uniform >= 0.0 && uniform < 1.0
// check uniform is a multiple of 2^-23: f32(i32(uniform * 8388608.0)) == uniform * 8388608.0
// check dropout keeps or drops: dropout == 0.0 || dropout == 2.0
kernel random_tile(uniform: tensor<f32>[ROWS, COLS], randn: tensor<f32>[ROWS, COLS],
                   dropout: tensor<f32>[ROWS, COLS], seed: i32) {
  uniform[:, :] = uniform(seed, iota(0) * COLS + iota(1))
  randn[:, :] = randn(seed, iota(0) * COLS + iota(1))
  dropout[:, :] = dropout(1.0, 0.5, seed, iota(0) * COLS + iota(1))
}
