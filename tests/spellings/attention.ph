// The attention forward of examples/attention_dropout.ph spelled as users
// of other tile languages write it (issues 28 and 29). tests/tests/
// spellings.rs runs both on every backend; compiler/gpu/tests/dot.rs checks
// that the GPU plans them as the example (each product computed once,
// stored from the subgroups' tiles); bench/ times them against the
// example.
//
// att_triton: Triton's tutorial loop: `let` tiles for the scores and the
// probabilities, the rescale of `acc` as its own statement, and the
// product added through dot's accumulator argument, which starts each sum
// from `acc * alpha` (the example adds it to the finished sum): the same
// L, another rounding of O.
// att_let: the example's maths with `let` tiles in place of its `var`s,
// the example's bits.
// `iota` may appear only in a tile with positions (a `var` or a store), so
// both hold their offsets in `var` tiles, as Triton's `offs_n` and its
// counters are tensors.

// dims: BH=2, S=40, D=64
@autotune(BM in [16], BN in [16, 32])
@grid(cdiv(S, BM), BH)
kernel att_triton(Q: tensor<f16>[BH, S, D], K: tensor<f16>[BH, S, D],
                  V: tensor<f16>[BH, S, D], O: tensor<f16>[BH, S, D],
                  L: tensor<f32>[BH, S, 1], scale: f32, p: f32, key: u32) {
  let bh = ctx.block.y
  let i = ctx.block.x * BM
  var m_i: tile<f32>[BM, 1] = -_inf()
  var l_i: tile<f32>[BM, 1] = 0.0
  var acc: tile<f32>[BM, D] = 0.0
  for jb in 0 .. (S + BN - 1) / BN {
    let j = jb * BN
    var cols: tile<i32>[1, BN] = j + iota(1)
    var ctr: tile<i32>[BM, BN] = (bh * S + i + iota(0)) * S + j + iota(1)
    let qk = dot(Q[bh, i :+ BM, :], trans(K[bh, j :+ BN, :]))
    let qk_s = where(cols < S, qk * scale, -_inf())
    let m_ij = max(m_i, max(qk_s, axis = 1))
    let pr = where(cols < S, exp(qk_s - m_ij), 0.0)
    let alpha = exp(m_i - m_ij)
    l_i = l_i * alpha + sum(pr, axis = 1)
    acc = acc * alpha
    let kept = tandem_dropout(pr, p, key, ctr)
    acc = dot(kept, V[bh, j :+ BN, :], acc)
    m_i = m_ij
  }
  O[bh, i :+ BM, :] = acc / l_i
  L[bh, i :+ BM, :] = m_i + log(l_i)
}

// dims: BH=2, S=40, D=64
@autotune(BM in [16], BN in [16, 32])
@grid(cdiv(S, BM), BH)
kernel att_let(Q: tensor<f16>[BH, S, D], K: tensor<f16>[BH, S, D],
               V: tensor<f16>[BH, S, D], O: tensor<f16>[BH, S, D],
               L: tensor<f32>[BH, S, 1], scale: f32, p: f32, key: u32) {
  let bh = ctx.block.y
  let i = ctx.block.x * BM
  var m: tile<f32>[BM, 1] = -_inf()
  var l: tile<f32>[BM, 1] = 0.0
  var acc: tile<f32>[BM, D] = 0.0
  for jb in 0 .. (S + BN - 1) / BN {
    let j = jb * BN
    var cols: tile<i32>[1, BN] = j + iota(1)
    var ctr: tile<i32>[BM, BN] = (bh * S + i + iota(0)) * S + j + iota(1)
    let s = where(cols < S, dot(Q[bh, i :+ BM, :], trans(K[bh, j :+ BN, :])) * scale, -_inf())
    let m_new = max(m, max(s, axis = 1))
    let alpha = exp(m - m_new)
    let e = where(cols < S, exp(s - m_new), 0.0)
    l = l * alpha + sum(e, axis = 1)
    let d = tandem_dropout(e, p, key, ctr)
    acc = acc * alpha + dot(d, V[bh, j :+ BN, :])
    m = m_new
  }
  O[bh, i :+ BM, :] = acc / l
  L[bh, i :+ BM, :] = m + log(l)
}
