// examples/attention_dropout.ph with parts taken out, to find where the
// forward's time goes on the H200 (bench/logs/2026-12-06-s15-q2.sh): the
// same loop without the Tandem mask (att_nodrop), without the product by
// V (att_nopv), and with only the scores and their running maximum
// (att_qk). Timed with the example, same dims and configuration.

// dims: BH=2, S=40
@autotune(BM in [16], BN in [16, 32])
@grid(cdiv(S, BM), BH)
kernel att_nodrop(Q: tensor<f16>[BH, S, 64], K: tensor<f16>[BH, S, 64],
                  V: tensor<f16>[BH, S, 64], O: tensor<f16>[BH, S, 64],
                  L: tensor<f32>[BH, S, 1], scale: f32, p: f32, key: u32) {
  let bh = ctx.block.y
  let i = ctx.block.x * BM
  var m: tile<f32>[BM, 1] = -_inf()
  var l: tile<f32>[BM, 1] = 0.0
  var acc: tile<f32>[BM, 64] = 0.0
  for jb in 0 .. (S + BN - 1) / BN {
    let j = jb * BN
    var s: tile<f32>[BM, BN] = where(j + iota(1) < S, dot(Q[bh, i :+ BM, :], trans(K[bh, j :+ BN, :])) * scale, -_inf())
    let m_new = max(m, max(s, axis = 1))
    let alpha = exp(m - m_new)
    var e: tile<f32>[BM, BN] = where(j + iota(1) < S, exp(s - m_new), 0.0)
    l = l * alpha + sum(e, axis = 1)
    acc = acc * alpha + dot(e, V[bh, j :+ BN, :])
    m = m_new
  }
  O[bh, i :+ BM, :] = acc / l
  L[bh, i :+ BM, :] = m + log(l)
}

// dims: BH=2, S=40
@autotune(BM in [16], BN in [16, 32])
@grid(cdiv(S, BM), BH)
kernel att_nopv(Q: tensor<f16>[BH, S, 64], K: tensor<f16>[BH, S, 64],
                V: tensor<f16>[BH, S, 64], O: tensor<f16>[BH, S, 64],
                L: tensor<f32>[BH, S, 1], scale: f32, p: f32, key: u32) {
  let bh = ctx.block.y
  let i = ctx.block.x * BM
  var m: tile<f32>[BM, 1] = -_inf()
  var l: tile<f32>[BM, 1] = 0.0
  var acc: tile<f32>[BM, 64] = 0.0
  for jb in 0 .. (S + BN - 1) / BN {
    let j = jb * BN
    var s: tile<f32>[BM, BN] = where(j + iota(1) < S, dot(Q[bh, i :+ BM, :], trans(K[bh, j :+ BN, :])) * scale, -_inf())
    let m_new = max(m, max(s, axis = 1))
    let alpha = exp(m - m_new)
    var e: tile<f32>[BM, BN] = where(j + iota(1) < S, exp(s - m_new), 0.0)
    l = l * alpha + sum(e, axis = 1)
    var d: tile<f32>[BM, BN] = tandem_dropout(e, p, key, (bh * S + i + iota(0)) * S + j + iota(1))
    acc = acc * alpha + sum(d, axis = 1)
    m = m_new
  }
  O[bh, i :+ BM, :] = acc / l
  L[bh, i :+ BM, :] = m + log(l)
}

// dims: BH=2, S=40
@autotune(BM in [16], BN in [16, 32])
@grid(cdiv(S, BM), BH)
kernel att_qk(Q: tensor<f16>[BH, S, 64], K: tensor<f16>[BH, S, 64],
              V: tensor<f16>[BH, S, 64], O: tensor<f16>[BH, S, 64],
              L: tensor<f32>[BH, S, 1], scale: f32, p: f32, key: u32) {
  let bh = ctx.block.y
  let i = ctx.block.x * BM
  var m: tile<f32>[BM, 1] = -_inf()
  for jb in 0 .. (S + BN - 1) / BN {
    let j = jb * BN
    var s: tile<f32>[BM, BN] = where(j + iota(1) < S, dot(Q[bh, i :+ BM, :], trans(K[bh, j :+ BN, :])) * scale, -_inf())
    m = max(m, max(s, axis = 1))
  }
  L[bh, i :+ BM, :] = m
}
