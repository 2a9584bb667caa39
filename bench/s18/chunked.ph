// Chunked loops the eighteenth session wrote without tuning the compiler
// for them (issue 28's "spellings you have not seen"), beside the chunked
// examples. c1 and c2 keep an accumulator the plan folds into each chunk's
// reduction (`let` of the chunk's maximum, then the update; a mean and a
// variance over chunks of 256); c3 is the online softmax, whose
// accumulators are read by several statements, so it keeps its barriers.

// Softmax over chunks of 512, the chunk's maximum a `let`, the reciprocal
// of the sum once per row.
@autotune(R in [1, 2, 4])
kernel c1(X: tensor<f32>[M, N], Y: tensor<f32>[M, N], seed: i32) {
  let r = ctx.block.x * R
  var m: tile<f32>[R, 1] = -_inf()
  for j in 0 .. (N + 511) / 512 {
    var x: tile<f32>[R, 512] = where(j * 512 + iota(1) < N, X[r :+ R, j * 512 :+ 512], -_inf())
    let cm = max(x, axis = 1)
    m = max(m, cm)
  }
  var s: tile<f32>[R, 1] = 0.0
  for j in 0 .. (N + 511) / 512 {
    let c = j * 512
    var e: tile<f32>[R, 512] = where(c + iota(1) < N, exp(X[r :+ R, c :+ 512] - m), 0.0)
    s = s + sum(e, axis = 1)
  }
  let inv = 1.0 / s
  for j in 0 .. (N + 511) / 512 {
    let c = j * 512
    Y[r :+ R, c :+ 512] = dropout(exp(X[r :+ R, c :+ 512] - m) * inv, 0.1, seed, (r + iota(0)) * N + c + iota(1))
  }
}

// Layer norm over chunks of 256, no scale or shift, `rsqrt`.
@autotune(R in [1, 2, 4])
kernel c2(X: tensor<f32>[M, N], Y: tensor<f32>[M, N], seed: i32) {
  let r = ctx.block.x * R
  var s: tile<f32>[R, 1] = 0.0
  for j in 0 .. (N + 255) / 256 {
    var x: tile<f32>[R, 256] = where(j * 256 + iota(1) < N, X[r :+ R, j * 256 :+ 256], 0.0)
    s = s + sum(x, axis = 1)
  }
  let mean = s / f32(N)
  var q: tile<f32>[R, 1] = 0.0
  for j in 0 .. (N + 255) / 256 {
    var d: tile<f32>[R, 256] = where(j * 256 + iota(1) < N, X[r :+ R, j * 256 :+ 256] - mean, 0.0)
    q = q + sum(d * d, axis = 1)
  }
  let rstd = rsqrt(q / f32(N) + 0.00001)
  for j in 0 .. (N + 255) / 256 {
    let c = j * 256
    Y[r :+ R, c :+ 256] = dropout((X[r :+ R, c :+ 256] - mean) * rstd, 0.1, seed, (r + iota(0)) * N + c + iota(1))
  }
}

// The online softmax: one pass keeps the running maximum and the sum
// rescaled to it, then a pass stores.
@autotune(R in [1, 2, 4])
kernel c3(X: tensor<f32>[M, N], Y: tensor<f32>[M, N], seed: i32) {
  let r = ctx.block.x * R
  var m: tile<f32>[R, 1] = -_inf()
  var s: tile<f32>[R, 1] = 0.0
  for j in 0 .. (N + 255) / 256 {
    var x: tile<f32>[R, 256] = where(j * 256 + iota(1) < N, X[r :+ R, j * 256 :+ 256], -_inf())
    let mn = max(m, max(x, axis = 1))
    s = s * exp(m - mn) + sum(exp(x - mn), axis = 1)
    m = mn
  }
  for j in 0 .. (N + 255) / 256 {
    let c = j * 256
    Y[r :+ R, c :+ 256] = dropout(exp(X[r :+ R, c :+ 256] - m) / s, 0.1, seed, (r + iota(0)) * N + c + iota(1))
  }
}
