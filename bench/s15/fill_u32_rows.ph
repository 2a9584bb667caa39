// bench/s14/fill_u32.ph spelled over rows of 256, as the third session's
// 95%-of-ceiling measurement was (ARCHITECTURE.md, "Hand-built Tandem
// fills"): element (r, c) is word r * 256 + c of the stream of `key`.
//
//   phobosc bench bench/s15/fill_u32_rows.ph --dim M=1048576 --arg key=1 --backend gpu

@autotune(R in [4, 16, 64])
kernel fill_u32_rows(Y: tensor<u32>[M, 256], key: u32) {
  let r = ctx.block.x * R
  Y[r :+ R, :] = tandem_u32(key, (r + iota(0)) * 256 + iota(1))
}
