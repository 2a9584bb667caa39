// dropout_rows.ph on the Tandem stream: element i of Y is dropped exactly
// where element i of `phobosc fill f32 --key KEY` is below p, so the mask is
// the fill's, bit for bit on every backend (std/tandem.ph's
// `tandem_dropout`). The counter is each element's flat index, as there.
//
//   phobosc run examples/dropout_rows_tandem.ph --dim M=1000 --arg key=7
//
// tests/tests/dropout_backward.rs checks the mask against the reference
// crate's fill and against dropout_backward_tandem.ph's.

// check kept fraction: Y != 0.0
// check every kept value equals x / (1 - p): Y == 0.0 || Y == X / (1.0 - 0.1)
@autotune(R in [16])
kernel dropout_rows_tandem(X: tensor<f32>[M, 256], Y: tensor<f32>[M, 256], key: u32) {
  let r = ctx.block.x * R
  Y[r :+ R, :] = tandem_dropout(X[r :+ R, :], 0.1, key, (r + iota(0)) * 256 + iota(1))
}
