// Session 20: examples/attention_dropout.ph with larger query and key blocks
// (BM and BN up to 64), to measure what block sizes the example leaves out.
// dims: BH=2, S=40, D=64

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
