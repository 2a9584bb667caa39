// Issue 30's "one fill path": `phobosc fill u32` written as a Phobos
// kernel, to time beside the hand-built fill module
// (phobos-bench-tandem-gpu's u32 row) in the same call. Element i is
// word i of the stream of key `key`, as `phobosc fill u32 --key KEY` writes.
//
//   phobosc bench bench/s14/fill_u32.ph --dim N=268435456 --arg key=1 --backend gpu

@autotune(T in [1024, 2048, 4096, 8192])
kernel fill_u32(Y: tensor<u32>[N], key: u32) {
  let i = ctx.block.x * T
  Y[i :+ T] = tandem_u32(key, i + iota(0))
}
