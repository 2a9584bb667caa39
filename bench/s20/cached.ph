// Session 20: does keeping a chunked kernel's chunks in workgroup memory
// (one read of X instead of three) bring the chunked loops near the
// whole-row kernels? Hand-written here, before the plan does it: the
// chunked example (examples/softmax_dropout_chunked.ph) with the row kept
// in a `var` tile over the whole row, written by the first loop and read
// by the others (k1), and with exp(X - m) kept instead for the store
// (k2, exact mode computes `exp` once per element). Same bits as the
// example: the same values, computed once. The row is N wide, so a launch
// fixes N (one pipeline per N).

// The row's chunks kept by the first loop, read by the other two.
@autotune(R in [1, 2])
kernel k1(X: tensor<f32>[M, N], Y: tensor<f32>[M, N], seed: i32) {
  let r = ctx.block.x * R
  var xc: tile<f32>[R, N] = 0.0
  var m: tile<f32>[R, 1] = -_inf()
  for j in 0 .. (N + 255) / 256 {
    let c = j * 256
    xc[:, c :+ 256] = X[r :+ R, c :+ 256]
    var t: tile<f32>[R, 256] = where(c + iota(1) < N, X[r :+ R, c :+ 256], -_inf())
    m = max(m, max(t, axis = 1))
  }
  var s: tile<f32>[R, 1] = 0.0
  for j in 0 .. (N + 255) / 256 {
    let c = j * 256
    var e: tile<f32>[R, 256] = where(c + iota(1) < N, exp(xc[:, c :+ 256] - m), 0.0)
    s = s + sum(e, axis = 1)
  }
  for j in 0 .. (N + 255) / 256 {
    let c = j * 256
    Y[r :+ R, c :+ 256] = dropout(exp(xc[:, c :+ 256] - m) / s, 0.1, seed, (r + iota(0)) * N + c + iota(1))
  }
}

// The same, keeping exp(X - m) from the second loop for the third.
@autotune(R in [1, 2])
kernel k2(X: tensor<f32>[M, N], Y: tensor<f32>[M, N], seed: i32) {
  let r = ctx.block.x * R
  var xc: tile<f32>[R, N] = 0.0
  var m: tile<f32>[R, 1] = -_inf()
  for j in 0 .. (N + 255) / 256 {
    let c = j * 256
    xc[:, c :+ 256] = X[r :+ R, c :+ 256]
    var t: tile<f32>[R, 256] = where(c + iota(1) < N, X[r :+ R, c :+ 256], -_inf())
    m = max(m, max(t, axis = 1))
  }
  var s: tile<f32>[R, 1] = 0.0
  for j in 0 .. (N + 255) / 256 {
    let c = j * 256
    xc[:, c :+ 256] = exp(xc[:, c :+ 256] - m)
    var e: tile<f32>[R, 256] = where(c + iota(1) < N, xc[:, c :+ 256], 0.0)
    s = s + sum(e, axis = 1)
  }
  for j in 0 .. (N + 255) / 256 {
    let c = j * 256
    Y[r :+ R, c :+ 256] = dropout(xc[:, c :+ 256] / s, 0.1, seed, (r + iota(0)) * N + c + iota(1))
  }
}
