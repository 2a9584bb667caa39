// The backward pass of examples/attention_dropout.ph: dQ, dK and dV from dO,
// with the dropout mask regenerated, not stored. The two kernels tile
// differently from the forward and from each other: `..._kv` gives each
// block BN keys and walks the queries, `..._q` gives each block BM queries
// and walks the keys. Element (i, j)'s mask is a function of (bh, i, j)
// alone, so all three kernels draw the same one.
//
// With P = exp(Q K^T * scale - L) (L from the forward), the mask's
// Pd = dropout(P), and Delta = rowsum(dO * O):
//   dV = Pd^T dO,  dP = dropout(dO V^T),  dS = P * (dP - Delta),
//   dQ = dS K * scale,  dK = dS^T Q * scale.
//
// D, the head dimension, is a dim, as in the forward.
//
//   phobosc run examples/attention_dropout_backward.ph --kernel attention_dropout_backward_kv --dim BH=4 --dim S=256 --dim D=64 --arg scale=0.125 --arg p=0.1

// dims: BH=2, S=40, D=64
@autotune(BM in [16, 32], BN in [16])
@grid(cdiv(S, BN), BH)
kernel attention_dropout_backward_kv(Q: tensor<f16>[BH, S, D], K: tensor<f16>[BH, S, D],
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

@autotune(BM in [16], BN in [16, 32])
@grid(cdiv(S, BM), BH)
kernel attention_dropout_backward_q(Q: tensor<f16>[BH, S, D], K: tensor<f16>[BH, S, D],
                                    V: tensor<f16>[BH, S, D], O: tensor<f16>[BH, S, D],
                                    dO: tensor<f16>[BH, S, D], L: tensor<f32>[BH, S, 1],
                                    dQ: tensor<f16>[BH, S, D], scale: f32, p: f32, key: u32) {
  let bh = ctx.block.y
  let i = ctx.block.x * BM
  var dq: tile<f32>[BM, D] = 0.0
  for jb in 0 .. (S + BN - 1) / BN {
    let j = jb * BN
    var pm: tile<f32>[BM, BN] = where(j + iota(1) < S, exp(dot(Q[bh, i :+ BM, :], trans(K[bh, j :+ BN, :])) * scale - L[bh, i :+ BM, :]), 0.0)
    var ds: tile<f32>[BM, BN] = pm * (tandem_dropout(dot(dO[bh, i :+ BM, :], trans(V[bh, j :+ BN, :])), p, key, (bh * S + i + iota(0)) * S + j + iota(1)) - sum(dO[bh, i :+ BM, :] * O[bh, i :+ BM, :], axis = 1))
    dq = dq + dot(ds, K[bh, j :+ BN, :]) * scale
  }
  dQ[bh, i :+ BM, :] = dq
}
