// The seed's kernel: dropout over rows of 256, one block of R rows each.
// The counter is each element's flat index in the whole tensor, so no two
// elements of a launch draw the same number.
//
//   phobosc run examples/dropout_rows.ph --dim M=1000
//
// The checks below run after the kernel and report for how many elements
// they hold: about 90% of the elements are kept, and every kept one is
// exactly x / (1 - p).

// check kept fraction: Y != 0.0
// check every kept value equals x / (1 - p): Y == 0.0 || Y == X / (1.0 - 0.1)
@autotune(R in [16])
kernel dropout_rows(X: tensor<f32>[M, 256], Y: tensor<f32>[M, 256], seed: i32) {
  let r = ctx.block.x * R
  Y[r :+ R, :] = dropout(X[r :+ R, :], 0.1, seed, (r + iota(0)) * 256 + iota(1))
}
