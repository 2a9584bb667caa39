// Chunked loops as users write them (issue 28's "spellings you have not
// seen" of sessions 17 and 18, first measured as `bench/s17/unseen.ph`'s
// c1 and `bench/s18/chunked.ph`): softmax and layer norm over a row in
// chunks, with `var` accumulators the plan folds into each chunk's
// reduction, and the online softmax. `tests/tests/spellings.rs` runs each
// on every backend. In a directory of its own, so that the WebGPU module
// checks that read `tests/spellings/*.ph` (the browser's among them) do
// not take SwiftShader through their exact loops.

// A user's chunked loops (N a multiple of 256).
@autotune(R in [1, 2, 4])
kernel softmax_chunks(X: tensor<f32>[M, N], Y: tensor<f32>[M, N], seed: i32) {
  let r = ctx.block.x * R
  var m: tile<f32>[R, 1] = -_inf()
  for j in 0 .. N / 256 {
    m = max(m, max(X[r :+ R, j * 256 :+ 256], axis = 1))
  }
  var s: tile<f32>[R, 1] = 0.0
  for j in 0 .. N / 256 {
    let e = exp(X[r :+ R, j * 256 :+ 256] - m)
    s = s + sum(e, axis = 1)
  }
  for j in 0 .. N / 256 {
    let c = j * 256
    Y[r :+ R, c :+ 256] = dropout(exp(X[r :+ R, c :+ 256] - m) / s, 0.1, seed, (r + iota(0)) * N + c + iota(1))
  }
}

// Softmax over chunks of 512, the chunk's maximum a `let`, the reciprocal
// of the sum once per row.
@autotune(R in [1, 2, 4])
kernel softmax_chunks_inv(X: tensor<f32>[M, N], Y: tensor<f32>[M, N], seed: i32) {
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
kernel layernorm_chunks(X: tensor<f32>[M, N], Y: tensor<f32>[M, N], seed: i32) {
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
kernel softmax_online(X: tensor<f32>[M, N], Y: tensor<f32>[M, N], seed: i32) {
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
