// Session 29: where attention_dropout_backward_kv's time goes. Each kernel
// is the example's `_kv` with one part taken out (the bits differ from the
// example's; only their times are compared, in bench/RESULTS.md).

// The example's kernel.
@autotune(BM in [16, 32], BN in [16])
@grid(cdiv(S, BN), BH)
kernel kv_full(Q: tensor<f16>[BH, S, D], K: tensor<f16>[BH, S, D],
                                     V: tensor<f16>[BH, S, D], O: tensor<f16>[BH, S, D],
                                     dO: tensor<f16>[BH, S, D], L: tensor<f32>[BH, S, 1],
                                     dK: tensor<f16>[BH, S, D], dV: tensor<f16>[BH, S, D],
                                     scale: f32, p: f32, key: u32) {
  let bh = ctx.block.y
  let j = ctx.block.x * BN
  var dk: tile<f32>[BN, D] = 0.0
  var dv: tile<f32>[BN, D] = 0.0
  for ib in 0 .. (S + BM - 1) / BM {
    let i = ib * BM
    // Transposed blocks: element (c, r) is query i + r against key j + c.
    var pt: tile<f32>[BN, BM] = where(i + iota(1) < S, exp(dot(K[bh, j :+ BN, :], trans(Q[bh, i :+ BM, :])) * scale - trans(L[bh, i :+ BM, :])), 0.0)
    var pd: tile<f32>[BN, BM] = tandem_dropout(pt, p, key, (bh * S + i + iota(1)) * S + j + iota(0))
    dv = dv + dot(pd, dO[bh, i :+ BM, :])
    var ds: tile<f32>[BN, BM] = pt * (tandem_dropout(dot(V[bh, j :+ BN, :], trans(dO[bh, i :+ BM, :])), p, key, (bh * S + i + iota(1)) * S + j + iota(0)) - trans(sum(dO[bh, i :+ BM, :] * O[bh, i :+ BM, :], axis = 1)))
    dk = dk + dot(ds, Q[bh, i :+ BM, :]) * scale
  }
  dK[bh, j :+ BN, :] = dk
  dV[bh, j :+ BN, :] = dv
}

// No mask: `pd` is `pt * p`, `ds` reads the product unmasked.
@autotune(BM in [16, 32], BN in [16])
@grid(cdiv(S, BN), BH)
kernel kv_no_mask(Q: tensor<f16>[BH, S, D], K: tensor<f16>[BH, S, D],
                                     V: tensor<f16>[BH, S, D], O: tensor<f16>[BH, S, D],
                                     dO: tensor<f16>[BH, S, D], L: tensor<f32>[BH, S, 1],
                                     dK: tensor<f16>[BH, S, D], dV: tensor<f16>[BH, S, D],
                                     scale: f32, p: f32, key: u32) {
  let bh = ctx.block.y
  let j = ctx.block.x * BN
  var dk: tile<f32>[BN, D] = 0.0
  var dv: tile<f32>[BN, D] = 0.0
  for ib in 0 .. (S + BM - 1) / BM {
    let i = ib * BM
    // Transposed blocks: element (c, r) is query i + r against key j + c.
    var pt: tile<f32>[BN, BM] = where(i + iota(1) < S, exp(dot(K[bh, j :+ BN, :], trans(Q[bh, i :+ BM, :])) * scale - trans(L[bh, i :+ BM, :])), 0.0)
    var pd: tile<f32>[BN, BM] = pt * p
    dv = dv + dot(pd, dO[bh, i :+ BM, :])
    var ds: tile<f32>[BN, BM] = pt * (dot(V[bh, j :+ BN, :], trans(dO[bh, i :+ BM, :])) - trans(sum(dO[bh, i :+ BM, :] * O[bh, i :+ BM, :], axis = 1)))
    dk = dk + dot(ds, Q[bh, i :+ BM, :]) * scale
  }
  dK[bh, j :+ BN, :] = dk
  dV[bh, j :+ BN, :] = dv
}

// Only dV: the scores, the mask once, `dot(pd, dO)`.
@autotune(BM in [16, 32], BN in [16])
@grid(cdiv(S, BN), BH)
kernel kv_dv_only(Q: tensor<f16>[BH, S, D], K: tensor<f16>[BH, S, D],
                                     V: tensor<f16>[BH, S, D], O: tensor<f16>[BH, S, D],
                                     dO: tensor<f16>[BH, S, D], L: tensor<f32>[BH, S, 1],
                                     dK: tensor<f16>[BH, S, D], dV: tensor<f16>[BH, S, D],
                                     scale: f32, p: f32, key: u32) {
  let bh = ctx.block.y
  let j = ctx.block.x * BN
  var dk: tile<f32>[BN, D] = 0.0
  var dv: tile<f32>[BN, D] = 0.0
  for ib in 0 .. (S + BM - 1) / BM {
    let i = ib * BM
    // Transposed blocks: element (c, r) is query i + r against key j + c.
    var pt: tile<f32>[BN, BM] = where(i + iota(1) < S, exp(dot(K[bh, j :+ BN, :], trans(Q[bh, i :+ BM, :])) * scale - trans(L[bh, i :+ BM, :])), 0.0)
    var pd: tile<f32>[BN, BM] = tandem_dropout(pt, p, key, (bh * S + i + iota(1)) * S + j + iota(0))
    dv = dv + dot(pd, dO[bh, i :+ BM, :])
  }
  dK[bh, j :+ BN, :] = dk
  dV[bh, j :+ BN, :] = dv
}
