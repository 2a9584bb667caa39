// Attention with dropout, the forward pass in FlashAttention's form: each
// block of BM queries walks the keys in blocks of BN, keeping the running
// maximum `m` and sum `l` of its rows (the online softmax), and adds the
// dropped-out probabilities times V. O = dropout(softmax(Q K^T * scale)) V;
// L, the rows' log-sum-exp, is what the backward pass needs.
//
// The dropout mask is Tandem's: element (i, j) of head `bh` keeps its
// probability when `tandem_uniform(key, (bh * S + i) * S + j) >= p`, a
// function of its coordinates only, so the backward kernels regenerate it
// under their own tiling (examples/attention_dropout_backward.ph).
//
// D, the head dimension, is a dim: a launch fixes it from Q's shape (or
// `--dim D=...`), so `acc` has a constant size in the module it builds. At
// D = 64 every configuration fits WebGPU's 16 KiB of workgroup memory
// (`acc`, the score tiles, and `acc` staged while it is updated); D = 128
// needs a device with more (NVIDIA's Vulkan driver gives 48 KiB).
//
// BN sets the order in which the online softmax folds in the keys, so each
// BN gives its own rounding of O and L. Pass `--config BN=...` to compare
// backends or machines bit for bit (docs/language.md, `@autotune`).
//
//   phobosc run examples/attention_dropout.ph --dim BH=4 --dim S=256 --dim D=64 --arg scale=0.125 --arg p=0.1

// dims: BH=64, S=1024, D=64
@autotune(BM in [16, 32, 64], BN in [16, 32, 64])
@grid(cdiv(S, BM), BH)
kernel attention_dropout(Q: tensor<f16>[BH, S, D], K: tensor<f16>[BH, S, D],
                         V: tensor<f16>[BH, S, D], O: tensor<f16>[BH, S, D],
                         L: tensor<f32>[BH, S, 1], scale: f32, p: f32, key: u32) {
  let bh = ctx.block.y
  let i = ctx.block.x * BM
  var m: tile<f32>[BM, 1] = -_inf()
  var l: tile<f32>[BM, 1] = 0.0
  var acc: tile<f32>[BM, D] = 0.0
  for jb in 0 .. (S + BN - 1) / BN {
    let j = jb * BN
    var s: tile<f32>[BM, BN] = where(j + iota(1) < S, dot(Q[bh, i :+ BM, :], trans(K[bh, j :+ BN, :])) * scale, -_inf())
    let m_new = max(m, max(s, axis = 1))
    let alpha = exp(m - m_new)
    var e: tile<f32>[BM, BN] = where(j + iota(1) < S, exp(s - m_new), 0.0)
    l = l * alpha + sum(e, axis = 1)
    var d: tile<f32>[BM, BN] = tandem_dropout(e, p, key, (bh * S + i + iota(0)) * S + j + iota(1))
    acc = acc * alpha + dot(d, V[bh, j :+ BN, :])
    m = m_new
  }
  O[bh, i :+ BM, :] = acc / l
  L[bh, i :+ BM, :] = m + log(l)
}
