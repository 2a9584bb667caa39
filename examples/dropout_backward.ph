// The backward pass of dropout_rows.ph: dX = dY * mask / (1 - p), with the
// mask regenerated from the forward's seed and counters instead of stored.
// The forward runs blocks of 16 whole rows; this runs blocks of 4 rows by
// 64 columns on a two-dimensional grid, so no block sees the elements it
// saw. The counter of an element is still its flat index in the whole
// tensor, and the draw depends on nothing else, so the mask is the
// forward's bit for bit.
//
//   phobosc run examples/dropout_backward.ph --dim M=1000
//
// dropout_backward_tandem.ph is the same for dropout_rows_tandem.ph.
// tests/tests/dropout_backward.rs runs the forward and the backward kernels
// of both draws on every backend and compares their masks bit for bit.

// check kept fraction: DX != 0.0
// check every kept gradient equals dy / (1 - p): DX == 0.0 || DX == DY / (1.0 - 0.1)
@autotune(R in [4], C in [64])
kernel dropout_backward(DY: tensor<f32>[M, 256], DX: tensor<f32>[M, 256], seed: i32) {
  let r = ctx.block.y * R
  let c = ctx.block.x * C
  DX[r :+ R, c :+ C] = dropout(DY[r :+ R, c :+ C], 0.1, seed, (r + iota(0)) * 256 + c + iota(1))
}

