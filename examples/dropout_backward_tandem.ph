// The backward pass of dropout_rows_tandem.ph, as dropout_backward.ph is
// dropout_rows.ph's: blocks of 4 rows by 64 columns regenerate the mask of
// the forward's blocks of 16 whole rows from the same key and counters,
// which is the mask of `phobosc fill f32 --key KEY`, bit for bit.
//
//   phobosc run examples/dropout_backward_tandem.ph --dim M=1000 --arg key=7
//
// tests/tests/dropout_backward.rs compares the masks.

// check kept fraction: DX != 0.0
// check every kept gradient equals dy / (1 - p): DX == 0.0 || DX == DY / (1.0 - 0.1)
@autotune(R in [4], C in [64])
kernel dropout_backward_tandem(DY: tensor<f32>[M, 256], DX: tensor<f32>[M, 256], key: u32) {
  let r = ctx.block.y * R
  let c = ctx.block.x * C
  DX[r :+ R, c :+ C] = tandem_dropout(DY[r :+ R, c :+ C], 0.1, key, (r + iota(0)) * 256 + c + iota(1))
}
